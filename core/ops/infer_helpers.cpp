//===- core/ops/infer_helpers.cpp - Shared pieces of per-op inference -----===//
//
// See infer_helpers.h.
//
//===----------------------------------------------------------------------===//
#include "infer_helpers.h"

#include <algorithm>

namespace subgraph::ops {

std::string nodeLabel(const Node& node) {
  return node.qualifiedOpType() + " node '" + node.displayName() + "'";
}

Status nodeError(const Node& node, const std::string& message) {
  return Status::invalid(nodeLabel(node) + ": " + message);
}

StatusOr<int64_t> normalizeAxis(const InferenceContext& ctx, int64_t axis, int64_t rank,
                                std::string_view what, bool inclusive) {
  const int64_t last = inclusive ? rank : rank - 1;
  if (axis < -rank || axis > last)
    return ctx.fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                    std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

StatusOr<std::vector<int64_t>> normalizeAxes(const InferenceContext& ctx,
                                             const std::vector<int64_t>& axes, int64_t rank,
                                             std::string_view what, bool inclusive) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    StatusOr<int64_t> n = normalizeAxis(ctx, a, rank, what, inclusive);
    if (!n.isOk()) return n.status();
    if (std::find(out.begin(), out.end(), n.value()) != out.end())
      return ctx.fail(std::string(what) + " " + intsToString(axes) + " repeats an axis");
    out.push_back(n.value());
  }
  return out;
}

std::optional<std::vector<int64_t>> constantInts(const InferenceContext& ctx, size_t i) {
  if (const Tensor* t = ctx.constantInput(i))
    if (isInteger(t->dtype())) return t->toInt64Vector();
  std::optional<ShapeValue> sv = ctx.shapeValueInput(i);
  if (!sv) return std::nullopt;
  std::vector<int64_t> out;
  for (const ShapeElement& e : *sv) {
    if (!e.isKnown()) return std::nullopt;
    out.push_back(e.value());
  }
  return out;
}

IntListArg intListArg(const InferenceContext& ctx, size_t input, std::string_view attr) {
  IntListArg arg;
  if (ctx.hasInput(input)) {
    std::optional<std::vector<int64_t>> values = constantInts(ctx, input);
    arg.state = values ? IntListArg::State::kKnown : IntListArg::State::kUnknown;
    if (values) arg.values = std::move(*values);
    return arg;
  }
  if (const Attribute* a = ctx.node().attr(attr)) {
    if (const auto* v = std::get_if<std::vector<int64_t>>(&a->value())) {
      arg.state = IntListArg::State::kKnown;
      arg.values = *v;
    }
  }
  return arg;
}

std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

Dim dimProduct(std::span<const Dim> dims) {
  int64_t product = 1;
  const Dim* nonStatic = nullptr;
  for (const Dim& d : dims) {
    if (d.isStatic()) {
      std::optional<int64_t> p = checkedMul(product, d.size());
      if (!p) return Dim::unknown();
      product = *p;
    } else {
      if (nonStatic) return Dim::unknown();
      nonStatic = &d;
    }
  }
  if (product == 0) return Dim(0);  // zero times anything
  if (nonStatic) return product == 1 ? *nonStatic : Dim::unknown();
  return Dim(product);
}

const Shape* inputShape(const InferenceContext& ctx, size_t i) {
  const TensorType& t = ctx.inputType(i);
  return t.shape ? &*t.shape : nullptr;
}

Shape unknownShape(size_t rank) { return Shape(rank); }

std::string intsToString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace subgraph::ops
