//===- core/ops/infer_reduce.cpp - Inference and checks for reductions ----===//
//
// Reduced axes come from the `axes` input (ReduceSum 13, the others 18) or
// attribute (before that). No axes means every axis, or nothing at all with
// noop_with_empty_axes. A reduced dim becomes 1 with keepdims and is dropped
// without; axes that are an input but not constant leave the dims unknown
// (and the rank too when keepdims is 0).
//
//===----------------------------------------------------------------------===//
#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {

Status inferReduce(InferenceContext& ctx) {
  const Node& node = ctx.node();
  const bool keepDims = node.getInt("keepdims", 1) != 0;
  const bool noopWhenEmpty = node.getInt("noop_with_empty_axes", 0) != 0;
  TensorType out(ctx.inputType(0).dtype);
  const Shape* x = inputShape(ctx, 0);
  IntListArg axes = intListArg(ctx, 1, "axes");
  if (!x) {
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  const int64_t rank = static_cast<int64_t>(x->size());
  if (axes.state == IntListArg::State::kUnknown) {
    if (keepDims) out.shape = unknownShape(x->size());
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  if (axes.values.empty()) {
    if (noopWhenEmpty) {
      ctx.setOutputType(0, ctx.inputType(0));
      return Status::ok();
    }
    for (int64_t i = 0; i < rank; ++i) axes.values.push_back(i);
  }
  StatusOr<std::vector<int64_t>> normalized = normalizeAxes(ctx, axes.values, rank, "axes");
  if (!normalized.isOk()) return normalized.status();
  std::vector<bool> reduced(x->size(), false);
  for (int64_t a : normalized.value()) reduced[a] = true;
  Shape shape;
  for (size_t i = 0; i < x->size(); ++i) {
    if (!reduced[i])
      shape.push_back((*x)[i]);
    else if (keepDims)
      shape.push_back(Dim(1));
  }
  out.shape = std::move(shape);
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyReduce(const Node& node) {
  if (node.input(1) && node.hasAttr("axes"))
    return nodeError(node, "'axes' is given both as an input and as an attribute");
  for (const char* flag : {"keepdims", "noop_with_empty_axes"}) {
    int64_t v = node.getInt(flag, 0);
    if (v != 0 && v != 1)
      return nodeError(node, std::string(flag) + " " + std::to_string(v) + " must be 0 or 1");
  }
  return Status::ok();
}

Status inferArgReduce(InferenceContext& ctx) {
  TensorType out(DataType::kInt64);
  if (const Shape* x = inputShape(ctx, 0)) {
    StatusOr<int64_t> axis =
        normalizeAxis(ctx, ctx.node().getInt("axis", 0), static_cast<int64_t>(x->size()), "axis");
    if (!axis.isOk()) return axis.status();
    Shape shape = *x;
    if (ctx.node().getInt("keepdims", 1) != 0)
      shape[axis.value()] = Dim(1);
    else
      shape.erase(shape.begin() + axis.value());
    out.shape = std::move(shape);
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

}  // namespace subgraph::ops
