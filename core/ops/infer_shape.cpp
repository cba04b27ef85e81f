//===- core/ops/infer_shape.cpp - Inference and checks for shape ops ------===//
//
// Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Expand and Tile only move
// or replicate elements, so their output shapes follow from the input shape
// and (for Reshape, Expand and Tile) a shape-like input. That input may be
// constant or a tracked shape value, which is how Reshape keeps a symbolic
// batch dim when the exporter computed the target from Shape(x). Squeeze
// and Unsqueeze pass shape values through, since exporters build reshape
// targets from them.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <map>

#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

// Resolves Reshape's -1 from the element counts of input and target. Equal
// symbols on both sides cancel, so [N, 3, 4] -> [N, -1] gives 12 and
// [N, 12] -> [-1, 3, 4] gives N.
Dim inferMinusOne(const Shape& in, const Shape& target, size_t minusOne) {
  int64_t inStatic = 1, outStatic = 1;
  std::map<std::string, int> symbols;  // count in input minus count in target
  for (const Dim& d : in) {
    if (d.isStatic()) {
      std::optional<int64_t> p = checkedMul(inStatic, d.size());
      if (!p) return Dim::unknown();
      inStatic = *p;
    } else if (d.isSymbolic()) {
      ++symbols[d.symbolName()];
    } else {
      return Dim::unknown();
    }
  }
  for (size_t i = 0; i < target.size(); ++i) {
    if (i == minusOne) continue;
    const Dim& d = target[i];
    if (d.isStatic()) {
      std::optional<int64_t> p = checkedMul(outStatic, d.size());
      if (!p) return Dim::unknown();
      outStatic = *p;
    } else if (d.isSymbolic()) {
      --symbols[d.symbolName()];
    } else {
      return Dim::unknown();
    }
  }
  std::vector<std::string> left;
  for (const auto& [name, count] : symbols) {
    if (count < 0) return Dim::unknown();
    for (int i = 0; i < count; ++i) left.push_back(name);
  }
  if (outStatic == 0 || inStatic % outStatic != 0) return Dim::unknown();
  const int64_t ratio = inStatic / outStatic;
  if (left.empty()) return Dim(ratio);
  if (left.size() == 1 && ratio == 1) return Dim::symbol(left[0]);
  return Dim::unknown();
}

const Shape* shapeOf(const Value* v) { return v && v->type().shape ? &*v->type().shape : nullptr; }

// The length of a 1-D shape-like input when its own shape says so.
std::optional<int64_t> staticLength(const InferenceContext& ctx, size_t i) {
  const Shape* s = inputShape(ctx, i);
  if (s && s->size() == 1 && (*s)[0].isStatic()) return (*s)[0].size();
  return std::nullopt;
}

}  // namespace

Status inferReshape(InferenceContext& ctx) {
  const Node& node = ctx.node();
  TensorType out(ctx.inputType(0).dtype);
  const Shape* in = inputShape(ctx, 0);
  std::optional<ShapeValue> target = ctx.shapeValueInput(1);
  if (!target) {
    if (std::optional<int64_t> n = staticLength(ctx, 1)) out.shape = unknownShape(*n);
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  const bool allowZero = node.getInt("allowzero", 0) != 0;
  Shape shape;
  std::optional<size_t> minusOne;
  for (size_t i = 0; i < target->size(); ++i) {
    const ShapeElement& e = (*target)[i];
    if (!e.isKnown()) {
      shape.push_back(e.toDim());
    } else if (e.value() == -1) {
      if (minusOne) return ctx.fail("shape has more than one -1");
      minusOne = i;
      shape.push_back(Dim::unknown());
    } else if (e.value() < -1) {
      return ctx.fail("shape entry " + std::to_string(e.value()) + " is invalid");
    } else if (e.value() == 0 && !allowZero) {
      if (in && i >= in->size())
        return ctx.fail("shape entry " + std::to_string(i) + " is 0 (copy) but the input " +
                        shapeToString(*in) + " has no such dim");
      shape.push_back(in ? (*in)[i] : Dim::unknown());
    } else {
      shape.push_back(Dim(e.value()));
    }
  }
  if (in) {
    if (minusOne) {
      shape[*minusOne] = inferMinusOne(*in, shape, *minusOne);
    } else {
      std::optional<int64_t> a = staticElementCount(*in), b = staticElementCount(shape);
      if (a && b && *a != *b)
        return ctx.fail("cannot reshape " + shapeToString(*in) + " (" + std::to_string(*a) +
                        " elements) to " + shapeToString(shape) + " (" + std::to_string(*b) +
                        " elements)");
    }
    if (minusOne && shape[*minusOne].isUnknown() && isStaticShape(*in)) {
      // Static input but no integral -1: the shape cannot match.
      std::optional<int64_t> a = staticElementCount(*in);
      Shape rest = shape;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(*minusOne));
      std::optional<int64_t> b = staticElementCount(rest);
      if (a && b && (*b == 0 || *a % *b != 0))
        return ctx.fail("cannot reshape " + shapeToString(*in) + " (" + std::to_string(*a) +
                        " elements) to " + shapeToString(shape));
    }
  }
  out.shape = std::move(shape);
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyReshape(const Node& node) {
  if (const Shape* s = shapeOf(node.input(1)); s && s->size() != 1)
    return nodeError(node, "shape must be 1-D, got " + shapeToString(*s));
  const Tensor* t = node.input(1) ? node.input(1)->initializer() : nullptr;
  if (!t || !isInteger(t->dtype())) return Status::ok();
  std::vector<int64_t> target = t->toInt64Vector();
  if (std::count(target.begin(), target.end(), -1) > 1)
    return nodeError(node, "shape " + intsToString(target) + " has more than one -1");
  if (node.getInt("allowzero", 0) != 0 && std::count(target.begin(), target.end(), 0) > 0 &&
      std::count(target.begin(), target.end(), -1) > 0)
    return nodeError(
        node, "shape " + intsToString(target) + " mixes 0 and -1, which allowzero makes ambiguous");
  return Status::ok();
}

Status inferFlatten(InferenceContext& ctx) {
  TensorType out(ctx.inputType(0).dtype);
  if (const Shape* in = inputShape(ctx, 0)) {
    const int64_t rank = static_cast<int64_t>(in->size());
    StatusOr<int64_t> axis = normalizeAxis(ctx, ctx.node().getInt("axis", 1), rank, "axis",
                                           /*inclusive=*/true);
    if (!axis.isOk()) return axis.status();
    std::span<const Dim> dims(*in);
    out.shape = Shape{dimProduct(dims.first(axis.value())), dimProduct(dims.subspan(axis.value()))};
  } else {
    out.shape = unknownShape(2);
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferTranspose(InferenceContext& ctx) {
  SUBGRAPH_RETURN_IF_ERROR(verifyTranspose(ctx.node()));
  TensorType out(ctx.inputType(0).dtype);
  if (const Shape* in = inputShape(ctx, 0)) {
    std::vector<int64_t> perm = ctx.node().getInts("perm");
    if (perm.empty())
      for (size_t i = in->size(); i > 0; --i) perm.push_back(static_cast<int64_t>(i - 1));
    Shape shape;
    for (int64_t p : perm) shape.push_back((*in)[p]);
    out.shape = std::move(shape);
  } else if (const Attribute* perm = ctx.node().attr("perm")) {
    out.shape = unknownShape(perm->asInts().size());
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyTranspose(const Node& node) {
  const Attribute* attr = node.attr("perm");
  if (!attr || attr->kind() != AttrKind::kInts) return Status::ok();
  const std::vector<int64_t>& perm = attr->asInts();
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p])
      return nodeError(node, "perm " + intsToString(perm) + " is not a permutation of 0.." +
                                 std::to_string(static_cast<int64_t>(perm.size()) - 1));
    seen[p] = true;
  }
  if (const Shape* in = shapeOf(node.input(0)); in && in->size() != perm.size())
    return nodeError(node, "perm " + intsToString(perm) + " has " + std::to_string(perm.size()) +
                               " entries but the input has rank " + std::to_string(in->size()));
  return Status::ok();
}

Status inferSqueeze(InferenceContext& ctx) {
  TensorType out(ctx.inputType(0).dtype);
  const Shape* in = inputShape(ctx, 0);
  IntListArg axes = intListArg(ctx, 1, "axes");
  if (in && axes.state != IntListArg::State::kUnknown) {
    const int64_t rank = static_cast<int64_t>(in->size());
    std::vector<bool> drop(in->size(), false);
    if (axes.state == IntListArg::State::kAbsent) {
      // Every size-1 dim goes; a dim that is not static might be 1 or not.
      bool known = true;
      for (size_t i = 0; i < in->size(); ++i) {
        drop[i] = (*in)[i] == Dim(1);
        known = known && (*in)[i].isStatic();
      }
      if (known) {
        Shape shape;
        for (size_t i = 0; i < in->size(); ++i)
          if (!drop[i]) shape.push_back((*in)[i]);
        out.shape = std::move(shape);
      }
    } else {
      StatusOr<std::vector<int64_t>> norm = normalizeAxes(ctx, axes.values, rank, "axes");
      if (!norm.isOk()) return norm.status();
      for (int64_t a : norm.value()) {
        if ((*in)[a].isStatic() && (*in)[a].size() != 1)
          return ctx.fail("cannot squeeze axis " + std::to_string(a) + " of size " +
                          std::to_string((*in)[a].size()) + " in " + shapeToString(*in));
        drop[a] = true;
      }
      Shape shape;
      for (size_t i = 0; i < in->size(); ++i)
        if (!drop[i]) shape.push_back((*in)[i]);
      out.shape = std::move(shape);
    }
  }
  ctx.setOutputType(0, std::move(out));
  if (std::optional<ShapeValue> sv = ctx.shapeValueInput(0); sv && sv->size() == 1)
    ctx.setOutputShapeValue(0, *sv);
  return Status::ok();
}

Status verifySqueeze(const Node& node) {
  if (node.input(1) && node.hasAttr("axes"))
    return nodeError(node, "'axes' is given both as an input and as an attribute");
  return Status::ok();
}

Status inferUnsqueeze(InferenceContext& ctx) {
  TensorType out(ctx.inputType(0).dtype);
  const Shape* in = inputShape(ctx, 0);
  IntListArg axes = intListArg(ctx, 1, "axes");
  if (axes.state == IntListArg::State::kAbsent)
    return ctx.fail("axes are missing (give the 'axes' input or attribute)");
  if (in && axes.state == IntListArg::State::kKnown) {
    const int64_t outRank = static_cast<int64_t>(in->size() + axes.values.size());
    StatusOr<std::vector<int64_t>> norm = normalizeAxes(ctx, axes.values, outRank, "axes");
    if (!norm.isOk()) return norm.status();
    Shape shape;
    auto next = in->begin();
    for (int64_t i = 0; i < outRank; ++i) {
      bool inserted = std::find(norm.value().begin(), norm.value().end(), i) != norm.value().end();
      shape.push_back(inserted ? Dim(1) : *next++);
    }
    out.shape = std::move(shape);
  } else if (axes.state == IntListArg::State::kUnknown && in) {
    if (std::optional<int64_t> n = staticLength(ctx, 1))
      out.shape = unknownShape(in->size() + static_cast<size_t>(*n));
  }
  ctx.setOutputType(0, std::move(out));
  if (std::optional<ShapeValue> sv = ctx.shapeValueInput(0); sv && in && in->empty())
    ctx.setOutputShapeValue(0, *sv);  // scalar -> [1]: same single element
  return Status::ok();
}

Status verifyUnsqueeze(const Node& node) {
  if (node.input(1) && node.hasAttr("axes"))
    return nodeError(node, "'axes' is given both as an input and as an attribute");
  if (!node.input(1) && !node.hasAttr("axes"))
    return nodeError(node, "axes are missing (give the 'axes' input or attribute)");
  return Status::ok();
}

Status inferExpand(InferenceContext& ctx) {
  TensorType out(ctx.inputType(0).dtype);
  const Shape* in = inputShape(ctx, 0);
  std::optional<ShapeValue> target = ctx.shapeValueInput(1);
  Shape targetShape;
  if (target) {
    for (const ShapeElement& e : *target) {
      if (e.isKnown() && e.value() < 0)
        return ctx.fail("shape entry " + std::to_string(e.value()) + " is negative");
      targetShape.push_back(e.toDim());
    }
  } else if (std::optional<int64_t> n = staticLength(ctx, 1)) {
    targetShape = unknownShape(static_cast<size_t>(*n));
  } else {
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  if (in) {
    std::optional<Shape> b = broadcastShapes(*in, targetShape);
    if (!b)
      return ctx.fail("cannot expand " + shapeToString(*in) + " to " + shapeToString(targetShape));
    out.shape = std::move(*b);
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferTile(InferenceContext& ctx) {
  TensorType out(ctx.inputType(0).dtype);
  const Shape* in = inputShape(ctx, 0);
  if (in) {
    std::optional<std::vector<int64_t>> repeats = constantInts(ctx, 1);
    if (repeats) {
      if (repeats->size() != in->size())
        return ctx.fail("repeats " + intsToString(*repeats) + " has " +
                        std::to_string(repeats->size()) + " entries but the input has rank " +
                        std::to_string(in->size()));
      Shape shape;
      for (size_t i = 0; i < in->size(); ++i) {
        const int64_t r = (*repeats)[i];
        if (r < 0) return ctx.fail("repeats " + intsToString(*repeats) + " has a negative entry");
        const Dim& d = (*in)[i];
        std::optional<int64_t> product = d.isStatic() ? checkedMul(d.size(), r) : std::nullopt;
        shape.push_back(r == 1 ? d : product ? Dim(*product) : r == 0 ? Dim(0) : Dim());
      }
      out.shape = std::move(shape);
    } else {
      out.shape = unknownShape(in->size());
    }
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

namespace {

// DepthToSpace and SpaceToDepth: rank-4 input and a positive blocksize.
StatusOr<int64_t> readBlocksize(const InferenceContext& ctx, const Shape* in) {
  const int64_t b = ctx.node().getInt("blocksize", 0);
  // b * b must not overflow; real block sizes are tiny.
  if (b < 1 || b > (int64_t{1} << 20))
    return ctx.fail("blocksize " + std::to_string(b) + " must be in [1, 2^20]");
  if (in && in->size() != 4)
    return ctx.fail("input must be 4-D ([N, C, H, W]), got " + shapeToString(*in));
  return b;
}

Dim scaleDim(const Dim& d, int64_t factor) {
  if (factor == 1) return d;
  const CheckedInt scaled = CheckedInt(d.isStatic() ? d.size() : 0) * factor;
  return d.isStatic() && scaled.ok() ? Dim(scaled.value()) : Dim::unknown();
}

}  // namespace

Status inferDepthToSpace(InferenceContext& ctx) {
  const Shape* in = inputShape(ctx, 0);
  StatusOr<int64_t> b = readBlocksize(ctx, in);
  if (!b.isOk()) return b.status();
  const std::string mode = ctx.node().getString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return ctx.fail("mode '" + mode + "' is not DCR or CRD");
  TensorType out(ctx.inputType(0).dtype);
  if (in) {
    const int64_t bb = b.value() * b.value();
    const Dim& c = (*in)[1];
    if (c.isStatic() && c.size() % bb != 0)
      return ctx.fail(std::to_string(c.size()) +
                      " channels do not divide by blocksize^2 = " + std::to_string(bb));
    out.shape = Shape{(*in)[0], c.isStatic() ? Dim(c.size() / bb) : (bb == 1 ? c : Dim()),
                      scaleDim((*in)[2], b.value()), scaleDim((*in)[3], b.value())};
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferSpaceToDepth(InferenceContext& ctx) {
  const Shape* in = inputShape(ctx, 0);
  StatusOr<int64_t> b = readBlocksize(ctx, in);
  if (!b.isOk()) return b.status();
  TensorType out(ctx.inputType(0).dtype);
  if (in) {
    Shape shape = {(*in)[0], scaleDim((*in)[1], b.value() * b.value())};
    for (size_t i = 2; i < 4; ++i) {
      const Dim& d = (*in)[i];
      if (d.isStatic() && d.size() % b.value() != 0)
        return ctx.fail("spatial dim " + std::to_string(d.size()) +
                        " does not divide by blocksize " + std::to_string(b.value()));
      shape.push_back(d.isStatic() ? Dim(d.size() / b.value()) : (b.value() == 1 ? d : Dim()));
    }
    out.shape = std::move(shape);
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferEyeLike(InferenceContext& ctx) {
  TensorType out = ctx.inputType(0);
  if (out.shape && out.shape->size() != 2)
    return ctx.fail("input must be 2-D, got " + shapeToString(*out.shape));
  if (const Attribute* dtype = ctx.node().attr("dtype"); dtype && dtype->kind() == AttrKind::kInt) {
    const int64_t code = dtype->asInt();
    if (code <= 0 || code > 255 || dataTypeName(static_cast<DataType>(code)) == "undef")
      return ctx.fail("dtype " + std::to_string(code) + " is not a supported element type");
    out.dtype = static_cast<DataType>(code);
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

}  // namespace subgraph::ops
