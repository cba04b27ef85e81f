//===- core/ops/infer_linalg.cpp - Inference and checks for matrix products ===//
//
// MatMul follows numpy.matmul: a 1-D A is treated as [1, K] and a 1-D B as
// [K, 1], with the added dim dropped from the result; the batch dims
// broadcast. Gemm multiplies two 2-D matrices, optionally transposed, and
// C must broadcast to [M, N] without growing it. The contracted dims must
// agree whenever both are static.
//
//===----------------------------------------------------------------------===//
#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

bool conflicts(const Dim& a, const Dim& b) { return a.isStatic() && b.isStatic() && a != b; }

const Shape* shapeOf(const Value* v) { return v && v->type().shape ? &*v->type().shape : nullptr; }

}  // namespace

Status inferMatMul(InferenceContext& ctx) {
  const Shape* a = inputShape(ctx, 0);
  const Shape* b = inputShape(ctx, 1);
  DataType dtype = ctx.inputType(0).dtype;
  if (dtype == DataType::kUndefined) dtype = ctx.inputType(1).dtype;
  TensorType out(dtype);
  if (!a || !b) {
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  if (a->empty() || b->empty()) return ctx.fail("MatMul operands must not be scalars");
  Shape sa = *a, sb = *b;
  const bool aVector = sa.size() == 1, bVector = sb.size() == 1;
  if (aVector) sa.insert(sa.begin(), Dim(1));
  if (bVector) sb.push_back(Dim(1));
  const Dim& ka = sa.back();
  const Dim& kb = sb[sb.size() - 2];
  if (conflicts(ka, kb))
    return ctx.fail("inner dims differ: A " + shapeToString(*a) + " and B " + shapeToString(*b));
  std::optional<Shape> batch =
      broadcastShapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2));
  if (!batch)
    return ctx.fail("batch dims of A " + shapeToString(*a) + " and B " + shapeToString(*b) +
                    " do not broadcast");
  Shape shape = std::move(*batch);
  if (!aVector) shape.push_back(sa[sa.size() - 2]);
  if (!bVector) shape.push_back(sb.back());
  out.shape = std::move(shape);
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferGemm(InferenceContext& ctx) {
  const Node& node = ctx.node();
  SUBGRAPH_RETURN_IF_ERROR(verifyGemm(node));
  const Shape* a = inputShape(ctx, 0);
  const Shape* b = inputShape(ctx, 1);
  const bool transA = node.getInt("transA", 0) != 0;
  const bool transB = node.getInt("transB", 0) != 0;
  const Dim m = a ? (*a)[transA ? 1 : 0] : Dim();
  const Dim n = b ? (*b)[transB ? 0 : 1] : Dim();
  TensorType out(ctx.inputType(0).dtype, Shape{m, n});
  if (const Shape* c = inputShape(ctx, 2)) {
    std::optional<Shape> bc = broadcastShapes(*out.shape, *c);
    if (!bc || bc->size() != 2 || conflicts((*bc)[0], m) || conflicts((*bc)[1], n))
      return ctx.fail("C " + shapeToString(*c) +
                      " does not broadcast to [M, N] = " + shapeToString(*out.shape));
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyGemm(const Node& node) {
  for (const char* flag : {"transA", "transB"}) {
    int64_t v = node.getInt(flag, 0);
    if (v != 0 && v != 1)
      return nodeError(node, std::string(flag) + " " + std::to_string(v) + " must be 0 or 1");
  }
  const Shape* a = shapeOf(node.input(0));
  const Shape* b = shapeOf(node.input(1));
  if (a && a->size() != 2) return nodeError(node, "A must be 2-D, got " + shapeToString(*a));
  if (b && b->size() != 2) return nodeError(node, "B must be 2-D, got " + shapeToString(*b));
  if (const Shape* c = shapeOf(node.input(2)); c && c->size() > 2)
    return nodeError(node, "C must have rank <= 2, got " + shapeToString(*c));
  if (a && b) {
    const Dim& ka = (*a)[node.getInt("transA", 0) ? 0 : 1];
    const Dim& kb = (*b)[node.getInt("transB", 0) ? 1 : 0];
    if (conflicts(ka, kb))
      return nodeError(node, "inner dims differ: A " + shapeToString(*a) + " and B " +
                                 shapeToString(*b) + " (transA " +
                                 std::to_string(node.getInt("transA", 0)) + ", transB " +
                                 std::to_string(node.getInt("transB", 0)) + ")");
  }
  return Status::ok();
}

}  // namespace subgraph::ops
