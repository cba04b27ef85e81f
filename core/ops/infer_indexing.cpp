//===- core/ops/infer_indexing.cpp - Inference and checks for indexing ops ===//
//
// Concat, Split, Slice, Gather, Pad and Resize. Their sizes come from
// integer lists that ONNX passes as attributes in old opsets and as inputs
// in new ones (see intListArg); when such an input is not constant, the
// affected dims are unknown but the rank usually is not. Slice clamps like
// numpy. Concat, Slice and Gather also carry shape values, because
// exporters assemble reshape targets from pieces of Shape(x).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <limits>

#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

const Shape* shapeOf(const Value* v) { return v && v->type().shape ? &*v->type().shape : nullptr; }

// The one dim two inputs must share: static wins, then a symbol (the first
// one when both are symbols, since they are equal at run time); conflicting
// statics are reported by returning nullopt.
std::optional<Dim> unifyDims(const Dim& a, const Dim& b) {
  if (a.isStatic() && b.isStatic()) return a == b ? std::optional<Dim>(a) : std::nullopt;
  if (a.isStatic()) return a;
  if (b.isStatic()) return b;
  return a.isUnknown() ? b : a;
}

// A constant input that is present but holds no elements (the "" scales of
// opset 11 Resize written as an empty tensor) counts as absent.
bool isEmptyConstant(const InferenceContext& ctx, size_t i) {
  const Tensor* t = ctx.constantInput(i);
  return t && t->numElements() == 0;
}

}  // namespace

//===--- Concat -----------------------------------------------------------===//

Status inferConcat(InferenceContext& ctx) {
  DataType dtype = DataType::kUndefined;
  const Shape* first = nullptr;
  bool allRanked = true;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (dtype == DataType::kUndefined) dtype = ctx.inputType(i).dtype;
    const Shape* s = inputShape(ctx, i);
    if (!s)
      allRanked = false;
    else if (!first)
      first = s;
    else if (s->size() != first->size())
      return ctx.fail("input " + std::to_string(i) + " has rank " + std::to_string(s->size()) +
                      " but input 0 has rank " + std::to_string(first->size()));
  }
  TensorType out(dtype);
  if (first) {
    const int64_t rank = static_cast<int64_t>(first->size());
    StatusOr<int64_t> axisOr = normalizeAxis(ctx, ctx.node().getInt("axis", 0), rank, "axis");
    if (!axisOr.isOk()) return axisOr.status();
    const size_t axis = static_cast<size_t>(axisOr.value());
    Shape shape = *first;
    int64_t total = 0;
    bool totalKnown = allRanked;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      const Shape* s = inputShape(ctx, i);
      if (!s) continue;
      for (size_t d = 0; d < s->size(); ++d) {
        if (d == axis) continue;
        std::optional<Dim> u = unifyDims(shape[d], (*s)[d]);
        if (!u)
          return ctx.fail("input " + std::to_string(i) + " " + shapeToString(*s) +
                          " differs from input 0 " + shapeToString(*first) + " in dim " +
                          std::to_string(d));
        shape[d] = *u;
      }
      if ((*s)[axis].isStatic() && (CheckedInt(total) + (*s)[axis].size()).ok())
        total += (*s)[axis].size();
      else
        totalKnown = false;
    }
    shape[axis] = totalKnown ? Dim(total) : Dim::unknown();
    if (ctx.numInputs() == 1) shape[axis] = (*first)[axis];
    out.shape = std::move(shape);
  }
  ctx.setOutputType(0, std::move(out));
  ShapeValue joined;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    std::optional<ShapeValue> sv = ctx.shapeValueInput(i);
    const Shape* s = inputShape(ctx, i);
    if (!sv || !s || s->size() != 1) return Status::ok();
    joined.insert(joined.end(), sv->begin(), sv->end());
  }
  if (ctx.numInputs() > 0) ctx.setOutputShapeValue(0, std::move(joined));
  return Status::ok();
}

Status verifyConcat(const Node& node) {
  const Shape* first = nullptr;
  for (size_t i = 0; i < node.numInputs(); ++i) {
    const Shape* s = shapeOf(node.input(i));
    if (!s) continue;
    if (first && s->size() != first->size())
      return nodeError(node, "inputs have different ranks (" + std::to_string(first->size()) +
                                 " and " + std::to_string(s->size()) + ")");
    first = s;
  }
  if (first) {
    const int64_t rank = static_cast<int64_t>(first->size());
    const int64_t axis = node.getInt("axis", 0);
    if (axis < -rank || axis >= rank)
      return nodeError(node, "axis " + std::to_string(axis) + " is out of range for rank " +
                                 std::to_string(rank));
  }
  return Status::ok();
}

//===--- Split ------------------------------------------------------------===//

Status inferSplit(InferenceContext& ctx) {
  const Node& node = ctx.node();
  const size_t parts = ctx.numOutputs();
  const Shape* in = inputShape(ctx, 0);
  const DataType dtype = ctx.inputType(0).dtype;
  IntListArg split = intListArg(ctx, 1, "split");
  const Attribute* numOutputs = node.attr("num_outputs");
  if (numOutputs && numOutputs->kind() == AttrKind::kInt &&
      numOutputs->asInt() != static_cast<int64_t>(parts))
    return ctx.fail("num_outputs is " + std::to_string(numOutputs->asInt()) + " but the node has " +
                    std::to_string(parts) + " outputs");
  if (split.state == IntListArg::State::kKnown && split.values.size() != parts)
    return ctx.fail("split " + intsToString(split.values) + " has " +
                    std::to_string(split.values.size()) + " entries but the node has " +
                    std::to_string(parts) + " outputs");
  if (!in) {
    for (size_t i = 0; i < parts; ++i) ctx.setOutputType(i, TensorType(dtype));
    return Status::ok();
  }
  StatusOr<int64_t> axisOr =
      normalizeAxis(ctx, node.getInt("axis", 0), static_cast<int64_t>(in->size()), "axis");
  if (!axisOr.isOk()) return axisOr.status();
  const size_t axis = static_cast<size_t>(axisOr.value());
  const Dim& dim = (*in)[axis];
  std::vector<Dim> sizes(parts, Dim::unknown());
  if (split.state == IntListArg::State::kKnown) {
    int64_t sum = 0;
    for (size_t i = 0; i < parts; ++i) {
      if (split.values[i] < 0)
        return ctx.fail("split " + intsToString(split.values) + " has a negative entry");
      const CheckedInt next = CheckedInt(sum) + split.values[i];
      if (!next.ok()) return ctx.fail("split " + intsToString(split.values) + " overflows");
      sum = next.value();
      sizes[i] = Dim(split.values[i]);
    }
    if (dim.isStatic() && sum != dim.size())
      return ctx.fail("split " + intsToString(split.values) + " sums to " + std::to_string(sum) +
                      " but axis " + std::to_string(axis) + " has size " +
                      std::to_string(dim.size()));
  } else if (split.state == IntListArg::State::kAbsent && dim.isStatic()) {
    const int64_t n = static_cast<int64_t>(parts);
    if (!numOutputs && dim.size() % n != 0)
      return ctx.fail("axis " + std::to_string(axis) + " of size " + std::to_string(dim.size()) +
                      " does not split evenly into " + std::to_string(n) + " parts");
    // Opset 18 num_outputs: ceil-sized parts, the last one smaller.
    const int64_t chunk = dim.size() == 0 ? 0 : (dim.size() - 1) / n + 1;
    for (int64_t i = 0; i < n; ++i)
      sizes[i] =
          Dim(std::max<int64_t>(0, std::min(chunk, dim.size() - std::min(chunk * i, dim.size()))));
  } else if (parts == 1) {
    sizes[0] = dim;
  }
  for (size_t i = 0; i < parts; ++i) {
    Shape shape = *in;
    shape[axis] = sizes[i];
    ctx.setOutputType(i, TensorType(dtype, std::move(shape)));
  }
  return Status::ok();
}

Status verifySplit(const Node& node) {
  if (node.input(1) && node.hasAttr("split"))
    return nodeError(node, "'split' is given both as an input and as an attribute");
  if (node.hasAttr("num_outputs") && (node.input(1) || node.hasAttr("split")))
    return nodeError(node, "num_outputs and split are mutually exclusive");
  return Status::ok();
}

//===--- Slice ------------------------------------------------------------===//

namespace {

// The numpy-clamped slice of an axis of size n: first index and count.
// Computed without overflow for any int64 start, end and (non-zero) step.
struct SliceRange {
  int64_t first = 0;
  int64_t count = 0;
};

SliceRange clampSlice(int64_t n, int64_t start, int64_t end, int64_t step) {
  if (n == 0) return {};
  if (start < 0) start += n;
  if (end < 0) end += n;
  // |step| as unsigned, valid even for INT64_MIN.
  const uint64_t stride =
      step > 0 ? static_cast<uint64_t>(step) : static_cast<uint64_t>(-(step + 1)) + 1;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, 0, n);
    if (end <= start) return {start, 0};
    return {start, static_cast<int64_t>((static_cast<uint64_t>(end - start) - 1) / stride + 1)};
  }
  start = std::clamp<int64_t>(start, 0, n - 1);
  end = std::clamp<int64_t>(end, -1, n - 1);
  if (start <= end) return {start, 0};
  return {start, static_cast<int64_t>((static_cast<uint64_t>(start - end) - 1) / stride + 1)};
}

// Elements of one sliced axis; nullopt when the dim is not static and the
// slice is not the whole axis.
std::optional<Dim> slicedDim(const Dim& dim, int64_t start, int64_t end, int64_t step) {
  if (!dim.isStatic()) {
    // [0:INT_MAX:1] (what exporters write for "to the end") keeps the dim.
    if (step == 1 && start == 0 && end >= std::numeric_limits<int32_t>::max()) return dim;
    return std::nullopt;
  }
  return Dim(clampSlice(dim.size(), start, end, step).count);
}

// Indices of the elements a 1-D slice keeps, for shape values.
std::vector<int64_t> sliceIndices(int64_t n, int64_t start, int64_t end, int64_t step) {
  const SliceRange r = clampSlice(n, start, end, step);
  std::vector<int64_t> out;
  // Within the count, first + i * step stays inside [0, n).
  for (int64_t i = 0; i < r.count; ++i) out.push_back(r.first + i * step);
  return out;
}

}  // namespace

Status inferSlice(InferenceContext& ctx) {
  TensorType out(ctx.inputType(0).dtype);
  const Shape* in = inputShape(ctx, 0);
  IntListArg starts = intListArg(ctx, 1, "starts");
  IntListArg ends = intListArg(ctx, 2, "ends");
  IntListArg axes = intListArg(ctx, 3, "axes");
  IntListArg steps = intListArg(ctx, 4, "steps");
  if (starts.state == IntListArg::State::kAbsent || ends.state == IntListArg::State::kAbsent)
    return ctx.fail("starts and ends are required (as inputs or attributes)");
  if (!in) {
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  const int64_t rank = static_cast<int64_t>(in->size());
  using State = IntListArg::State;
  if (starts.state == State::kUnknown || ends.state == State::kUnknown ||
      axes.state == State::kUnknown || steps.state == State::kUnknown) {
    Shape shape = *in;
    if (axes.state == State::kKnown) {
      StatusOr<std::vector<int64_t>> norm = normalizeAxes(ctx, axes.values, rank, "axes");
      if (!norm.isOk()) return norm.status();
      for (int64_t a : norm.value()) shape[a] = Dim::unknown();
    } else {
      shape = unknownShape(in->size());
    }
    out.shape = std::move(shape);
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  const size_t n = starts.values.size();
  if (ends.values.size() != n)
    return ctx.fail("starts " + intsToString(starts.values) + " and ends " +
                    intsToString(ends.values) + " differ in length");
  if (axes.state == State::kAbsent)
    for (size_t i = 0; i < n; ++i) axes.values.push_back(static_cast<int64_t>(i));
  if (steps.state == State::kAbsent) steps.values.assign(n, 1);
  if (axes.values.size() != n || steps.values.size() != n)
    return ctx.fail("starts, ends, axes and steps must have the same length");
  StatusOr<std::vector<int64_t>> norm = normalizeAxes(ctx, axes.values, rank, "axes");
  if (!norm.isOk()) return norm.status();
  Shape shape = *in;
  for (size_t i = 0; i < n; ++i) {
    if (steps.values[i] == 0) return ctx.fail("steps must not contain 0");
    std::optional<Dim> d =
        slicedDim((*in)[norm.value()[i]], starts.values[i], ends.values[i], steps.values[i]);
    shape[norm.value()[i]] = d ? *d : Dim::unknown();
  }
  out.shape = std::move(shape);
  ctx.setOutputType(0, std::move(out));
  std::optional<ShapeValue> sv = ctx.shapeValueInput(0);
  if (sv && rank == 1 && n == 1) {
    ShapeValue sliced;
    for (int64_t i : sliceIndices(static_cast<int64_t>(sv->size()), starts.values[0],
                                  ends.values[0], steps.values[0]))
      sliced.push_back((*sv)[i]);
    ctx.setOutputShapeValue(0, std::move(sliced));
  }
  return Status::ok();
}

Status verifySlice(const Node& node) {
  const bool inputForm = node.input(1) || node.input(2);
  const bool attrForm = node.hasAttr("starts") || node.hasAttr("ends");
  if (inputForm && attrForm)
    return nodeError(node, "starts/ends are given both as inputs and as attributes");
  if (inputForm && (!node.input(1) || !node.input(2)))
    return nodeError(node, "the starts and ends inputs must be given together");
  if (!inputForm && (!node.hasAttr("starts") || !node.hasAttr("ends")))
    return nodeError(node, "starts and ends are required (as inputs or attributes)");
  if (attrForm && node.hasAttr("axes") && node.input(3))
    return nodeError(node, "'axes' is given both as an input and as an attribute");
  return Status::ok();
}

//===--- Gather -----------------------------------------------------------===//

Status inferGather(InferenceContext& ctx) {
  TensorType out(ctx.inputType(0).dtype);
  const Shape* data = inputShape(ctx, 0);
  const Shape* indices = inputShape(ctx, 1);
  if (data && data->empty()) return ctx.fail("data must have rank >= 1");
  if (!data || !indices) {
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  const int64_t rank = static_cast<int64_t>(data->size());
  StatusOr<int64_t> axisOr = normalizeAxis(ctx, ctx.node().getInt("axis", 0), rank, "axis");
  if (!axisOr.isOk()) return axisOr.status();
  const size_t axis = static_cast<size_t>(axisOr.value());
  const Dim& axisDim = (*data)[axis];
  std::optional<std::vector<int64_t>> idx = constantInts(ctx, 1);
  if (idx && axisDim.isStatic())
    for (int64_t i : *idx)
      if (i < -axisDim.size() || i >= axisDim.size())
        return ctx.fail("index " + std::to_string(i) + " is out of range for axis " +
                        std::to_string(axis) + " of size " + std::to_string(axisDim.size()));
  Shape shape(data->begin(), data->begin() + static_cast<std::ptrdiff_t>(axis));
  shape.insert(shape.end(), indices->begin(), indices->end());
  shape.insert(shape.end(), data->begin() + static_cast<std::ptrdiff_t>(axis) + 1, data->end());
  out.shape = std::move(shape);
  ctx.setOutputType(0, std::move(out));
  std::optional<ShapeValue> sv = ctx.shapeValueInput(0);
  if (sv && rank == 1 && idx && indices->size() <= 1) {
    ShapeValue picked;
    const int64_t n = static_cast<int64_t>(sv->size());
    for (int64_t i : *idx) {
      if (i < -n || i >= n) return Status::ok();
      picked.push_back((*sv)[i < 0 ? i + n : i]);
    }
    ctx.setOutputShapeValue(0, std::move(picked));
  }
  return Status::ok();
}

Status verifyGather(const Node& node) {
  const Shape* data = shapeOf(node.input(0));
  if (!data) return Status::ok();
  const int64_t rank = static_cast<int64_t>(data->size());
  const int64_t axis = node.getInt("axis", 0);
  if (rank == 0) return nodeError(node, "data must have rank >= 1");
  if (axis < -rank || axis >= rank)
    return nodeError(
        node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return Status::ok();
}

//===--- Pad --------------------------------------------------------------===//

Status inferPad(InferenceContext& ctx) {
  TensorType out(ctx.inputType(0).dtype);
  const Shape* in = inputShape(ctx, 0);
  IntListArg pads = intListArg(ctx, 1, "pads");
  if (pads.state == IntListArg::State::kAbsent)
    return ctx.fail("pads are required (as an input or attribute)");
  if (!in) {
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  const int64_t rank = static_cast<int64_t>(in->size());
  std::vector<int64_t> axes;
  if (ctx.hasInput(3)) {
    std::optional<std::vector<int64_t>> a = constantInts(ctx, 3);
    if (!a) {
      out.shape = unknownShape(in->size());
      ctx.setOutputType(0, std::move(out));
      return Status::ok();
    }
    StatusOr<std::vector<int64_t>> norm = normalizeAxes(ctx, *a, rank, "axes");
    if (!norm.isOk()) return norm.status();
    axes = norm.value();
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.state == IntListArg::State::kUnknown) {
    Shape shape = *in;
    for (int64_t a : axes) shape[a] = Dim::unknown();
    out.shape = std::move(shape);
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  if (pads.values.size() != 2 * axes.size())
    return ctx.fail("pads " + intsToString(pads.values) + " has " +
                    std::to_string(pads.values.size()) + " entries, expected " +
                    std::to_string(2 * axes.size()));
  Shape shape = *in;
  for (size_t i = 0; i < axes.size(); ++i) {
    const CheckedInt total = CheckedInt(pads.values[i]) + pads.values[i + axes.size()];
    Dim& d = shape[axes[i]];
    if (total.ok() && total.value() == 0) continue;
    if (!d.isStatic()) {
      d = Dim::unknown();
      continue;
    }
    const CheckedInt size = CheckedInt(d.size()) + total;
    if (!size.ok()) return ctx.fail("pads " + intsToString(pads.values) + " overflow");
    if (size.value() < 0)
      return ctx.fail("pads " + intsToString(pads.values) + " crop axis " +
                      std::to_string(axes[i]) + " of size " + std::to_string(d.size()) +
                      " below zero");
    d = Dim(size.value());
  }
  out.shape = std::move(shape);
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyPad(const Node& node) {
  const std::string mode = node.getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return nodeError(node, "mode '" + mode + "' is not one of constant, reflect, edge, wrap");
  if (node.input(1) && node.hasAttr("pads"))
    return nodeError(node, "'pads' is given both as an input and as an attribute");
  if (!node.input(1) && !node.hasAttr("pads"))
    return nodeError(node, "pads are required (as an input or attribute)");
  const Shape* in = shapeOf(node.input(0));
  if (const Attribute* pads = node.attr("pads");
      pads && in && pads->kind() == AttrKind::kInts && pads->asInts().size() != 2 * in->size())
    return nodeError(node, "pads " + intsToString(pads->asInts()) + " has " +
                               std::to_string(pads->asInts().size()) + " entries, expected " +
                               std::to_string(2 * in->size()));
  return Status::ok();
}

//===--- Resize -----------------------------------------------------------===//

Status inferResize(InferenceContext& ctx) {
  const Node& node = ctx.node();
  TensorType out(ctx.inputType(0).dtype);
  const Shape* in = inputShape(ctx, 0);
  // Opset 10 Resize took (X, scales); later ones take (X, roi, scales, sizes).
  const bool opset10 = ctx.numInputs() == 2;
  const size_t scalesInput = opset10 ? 1 : 2;
  const bool hasScales = ctx.hasInput(scalesInput) && !isEmptyConstant(ctx, scalesInput);
  const bool hasSizes = !opset10 && ctx.hasInput(3) && !isEmptyConstant(ctx, 3);
  if (hasScales == hasSizes)
    return ctx.fail(hasScales ? "give either scales or sizes, not both"
                              : "one of scales and sizes is required");
  if (!in) {
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  const int64_t rank = static_cast<int64_t>(in->size());
  std::vector<int64_t> axes;
  if (const Attribute* a = node.attr("axes"); a && a->kind() == AttrKind::kInts) {
    StatusOr<std::vector<int64_t>> norm = normalizeAxes(ctx, a->asInts(), rank, "axes");
    if (!norm.isOk()) return norm.status();
    axes = norm.value();
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  Shape shape = *in;
  const Tensor* scales = hasScales ? ctx.constantInput(scalesInput) : nullptr;
  std::optional<std::vector<int64_t>> sizes = hasSizes ? constantInts(ctx, 3) : std::nullopt;
  if ((hasScales && !scales) || (hasSizes && !sizes)) {
    for (int64_t a : axes) shape[a] = Dim::unknown();
    out.shape = std::move(shape);
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  const size_t count = scales ? static_cast<size_t>(scales->numElements()) : sizes->size();
  if (count != axes.size())
    return ctx.fail(std::string(scales ? "scales" : "sizes") + " has " + std::to_string(count) +
                    " entries, expected " + std::to_string(axes.size()));
  if (scales) {
    for (size_t i = 0; i < axes.size(); ++i) {
      const double s = scales->elementAsDouble(static_cast<int64_t>(i));
      if (!(s > 0) || !std::isfinite(s)) return ctx.fail("scales must be positive and finite");
      Dim& d = shape[axes[i]];
      if (s == 1.0) continue;
      const double scaled = std::floor(static_cast<double>(d.size()) * s);
      if (d.isStatic() && scaled > 1e15) return ctx.fail("scales make a dim too large");
      d = d.isStatic() ? Dim(static_cast<int64_t>(scaled)) : Dim::unknown();
    }
  } else {
    const std::string policy = node.getString("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        if ((*sizes)[i] < 0) return ctx.fail("sizes must not be negative");
        shape[axes[i]] = Dim((*sizes)[i]);
      }
    } else {
      // One common scale, the smallest (not_larger) or largest
      // (not_smaller) of sizes / dims; needs every resized dim static.
      std::optional<double> scale;
      for (size_t i = 0; i < axes.size(); ++i) {
        const Dim& d = (*in)[axes[i]];
        if (!d.isStatic() || d.size() == 0) {
          scale.reset();
          break;
        }
        const double r = static_cast<double>((*sizes)[i]) / static_cast<double>(d.size());
        scale = !scale ? r : policy == "not_larger" ? std::min(*scale, r) : std::max(*scale, r);
      }
      for (int64_t a : axes)
        shape[a] = scale ? Dim(static_cast<int64_t>(
                               std::round(static_cast<double>((*in)[a].size()) * *scale)))
                         : Dim::unknown();
    }
  }
  out.shape = std::move(shape);
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyResize(const Node& node) {
  auto oneOf = [&](const char* name, const char* fallback,
                   std::initializer_list<const char*> allowed) -> Status {
    const std::string v = node.getString(name, fallback);
    for (const char* a : allowed)
      if (v == a) return Status::ok();
    std::string list;
    for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    return nodeError(node, std::string(name) + " '" + v + "' is not one of " + list);
  };
  SUBGRAPH_RETURN_IF_ERROR(oneOf("mode", "nearest", {"nearest", "linear", "cubic"}));
  SUBGRAPH_RETURN_IF_ERROR(oneOf("coordinate_transformation_mode", "half_pixel",
                                 {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                  "align_corners", "asymmetric", "tf_crop_and_resize",
                                  // Opsets 11-12; the reference kernel runs it.
                                  "tf_half_pixel_for_nn"}));
  SUBGRAPH_RETURN_IF_ERROR(oneOf("nearest_mode", "round_prefer_floor",
                                 {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}));
  SUBGRAPH_RETURN_IF_ERROR(
      oneOf("keep_aspect_ratio_policy", "stretch", {"stretch", "not_larger", "not_smaller"}));
  return Status::ok();
}

//===--- GatherElements, GatherND, TopK, OneHot, NonZero ------------------===//

Status inferGatherElements(InferenceContext& ctx) {
  const Shape* data = inputShape(ctx, 0);
  const Shape* indices = inputShape(ctx, 1);
  if (data && indices && data->size() != indices->size())
    return ctx.fail("indices " + shapeToString(*indices) + " must have the rank of data " +
                    shapeToString(*data));
  if (data) {
    StatusOr<int64_t> axis = normalizeAxis(ctx, ctx.node().getInt("axis", 0),
                                           static_cast<int64_t>(data->size()), "axis");
    if (!axis.isOk()) return axis.status();
  }
  TensorType out(ctx.inputType(0).dtype);
  if (indices) out.shape = *indices;
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferGatherND(InferenceContext& ctx) {
  const Shape* data = inputShape(ctx, 0);
  const Shape* indices = inputShape(ctx, 1);
  TensorType out(ctx.inputType(0).dtype);
  const int64_t batch = ctx.node().getInt("batch_dims", 0);
  if (data && indices) {
    if (indices->empty()) return ctx.fail("indices must have rank >= 1");
    const int64_t r = static_cast<int64_t>(data->size());
    const int64_t q = static_cast<int64_t>(indices->size());
    if (batch < 0 || batch >= std::min(r, q))
      return ctx.fail("batch_dims " + std::to_string(batch) + " must be in [0, " +
                      std::to_string(std::min(r, q)) + ")");
    const Dim& last = indices->back();
    if (last.isStatic()) {
      const int64_t m = last.size();
      if (m < 1 || m > r || batch + m > r)
        return ctx.fail("indices address " + std::to_string(m) + " dims of data " +
                        shapeToString(*data) + " after " + std::to_string(batch) + " batch dims");
      Shape shape(indices->begin(), indices->end() - 1);
      shape.insert(shape.end(), data->begin() + batch + m, data->end());
      out.shape = std::move(shape);
    }
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferTopK(InferenceContext& ctx) {
  const Shape* x = inputShape(ctx, 0);
  TensorType values(ctx.inputType(0).dtype);
  if (x) {
    StatusOr<int64_t> axis =
        normalizeAxis(ctx, ctx.node().getInt("axis", -1), static_cast<int64_t>(x->size()), "axis");
    if (!axis.isOk()) return axis.status();
    Shape shape = *x;
    shape[axis.value()] = Dim::unknown();
    if (std::optional<std::vector<int64_t>> k = constantInts(ctx, 1)) {
      if (k->size() != 1) return ctx.fail("K must hold one element, got " + intsToString(*k));
      const Dim& d = (*x)[axis.value()];
      if ((*k)[0] < 0 || (d.isStatic() && (*k)[0] > d.size()))
        return ctx.fail("K " + std::to_string((*k)[0]) + " is out of range for axis " +
                        std::to_string(axis.value()) + " of size " + d.toString());
      shape[axis.value()] = Dim((*k)[0]);
    }
    values.shape = std::move(shape);
  }
  TensorType indices = values;
  indices.dtype = DataType::kInt64;
  ctx.setOutputType(0, std::move(values));
  if (ctx.numOutputs() > 1) ctx.setOutputType(1, std::move(indices));
  return Status::ok();
}

Status inferOneHot(InferenceContext& ctx) {
  const Shape* indices = inputShape(ctx, 0);
  TensorType out(ctx.inputType(2).dtype);
  if (indices) {
    const int64_t rank = static_cast<int64_t>(indices->size()) + 1;
    StatusOr<int64_t> axis = normalizeAxis(ctx, ctx.node().getInt("axis", -1), rank, "axis");
    if (!axis.isOk()) return axis.status();
    Dim depth;
    if (const Tensor* t = ctx.constantInput(1); t && t->numElements() == 1) {
      const double v = t->elementAsDouble(0);
      if (!(v >= 1) || v > 1e15) return ctx.fail("depth must be a positive count");
      depth = Dim(static_cast<int64_t>(v));
    }
    Shape shape = *indices;
    shape.insert(shape.begin() + axis.value(), depth);
    out.shape = std::move(shape);
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferNonZero(InferenceContext& ctx) {
  Shape shape = unknownShape(2);
  if (const Shape* x = inputShape(ctx, 0)) shape[0] = Dim(static_cast<int64_t>(x->size()));
  // The count is data-dependent, but known for constant data.
  if (const Tensor* t = ctx.constantInput(0); t && t->dtype() != DataType::kString) {
    int64_t count = 0;
    for (int64_t i = 0; i < t->numElements(); ++i) count += t->elementAsDouble(i) != 0 ? 1 : 0;
    shape[1] = Dim(count);
  }
  ctx.setOutputType(0, TensorType(DataType::kInt64, std::move(shape)));
  return Status::ok();
}

//===--- Compress, Unique -------------------------------------------------===//

Status inferCompress(InferenceContext& ctx) {
  TensorType out(ctx.inputType(0).dtype);
  // The kept count is known when the condition is constant.
  Dim kept;
  if (const Tensor* cond = ctx.constantInput(1)) {
    int64_t count = 0;
    for (int64_t i = 0; i < cond->numElements(); ++i) count += cond->elementAsDouble(i) != 0;
    kept = Dim(count);
  }
  const Shape* in = inputShape(ctx, 0);
  const Attribute* axisAttr = ctx.node().attr("axis");
  if (axisAttr && axisAttr->kind() == AttrKind::kInt) {
    if (in) {
      StatusOr<int64_t> axis =
          normalizeAxis(ctx, axisAttr->asInt(), static_cast<int64_t>(in->size()), "axis");
      if (!axis.isOk()) return axis.status();
      Shape shape = *in;
      shape[axis.value()] = kept;
      out.shape = std::move(shape);
    }
  } else {
    out.shape = Shape{kept};
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferUnique(InferenceContext& ctx) {
  const Shape* in = inputShape(ctx, 0);
  TensorType y(ctx.inputType(0).dtype);
  Dim inverseLength;
  const Attribute* axisAttr = ctx.node().attr("axis");
  if (axisAttr && axisAttr->kind() == AttrKind::kInt) {
    if (in) {
      StatusOr<int64_t> axis =
          normalizeAxis(ctx, axisAttr->asInt(), static_cast<int64_t>(in->size()), "axis");
      if (!axis.isOk()) return axis.status();
      inverseLength = (*in)[axis.value()];
      Shape shape = *in;
      shape[axis.value()] = Dim::unknown();
      y.shape = std::move(shape);
    }
  } else {
    y.shape = unknownShape(1);
    if (in) inverseLength = dimProduct(*in);
  }
  ctx.setOutputType(0, std::move(y));
  for (size_t i = 1; i < ctx.numOutputs(); ++i)
    ctx.setOutputType(i, TensorType(DataType::kInt64, Shape{i == 2 ? inverseLength : Dim()}));
  return Status::ok();
}

}  // namespace subgraph::ops
