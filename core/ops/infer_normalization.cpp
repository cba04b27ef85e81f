//===- core/ops/infer_normalization.cpp - Inference for normalizations ----===//
//
// BatchNormalization keeps X's type and checks that its four per-channel
// operands are [C]; its training-mode outputs are [C] too.
// LayerNormalization keeps X's type; its optional Mean and InvStdDev keep
// the leading dims and have 1 for every normalized dim, in the stash type.
//
//===----------------------------------------------------------------------===//
#include <array>

#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

const char* const kBatchNormOperands[] = {"X", "scale", "B", "input_mean", "input_var"};

// Checks scale, B, mean and var against the channel dim; used by both the
// InferFn and the VerifyFn.
Status checkBatchNormOperands(const Node& node, const Shape* x,
                              const std::array<const Shape*, 4>& params) {
  if (x && x->size() < 2)
    return nodeError(node, "X must have rank >= 2 ([N, C, ...]), got " + shapeToString(*x));
  const Dim channels = x ? (*x)[1] : Dim();
  for (size_t i = 0; i < params.size(); ++i) {
    const Shape* p = params[i];
    if (!p) continue;
    if (p->size() != 1)
      return nodeError(node, std::string(kBatchNormOperands[i + 1]) + " must be 1-D ([C]), got " +
                                 shapeToString(*p));
    if (channels.isStatic() && (*p)[0].isStatic() && (*p)[0] != channels)
      return nodeError(node, std::string(kBatchNormOperands[i + 1]) + " " + shapeToString(*p) +
                                 " does not match the " + channels.toString() + " channels of X");
  }
  return Status::ok();
}

const Shape* shapeOf(const Value* v) { return v && v->type().shape ? &*v->type().shape : nullptr; }

}  // namespace

Status inferBatchNormalization(InferenceContext& ctx) {
  const Shape* x = inputShape(ctx, 0);
  SUBGRAPH_RETURN_IF_ERROR(checkBatchNormOperands(
      ctx.node(), x,
      {inputShape(ctx, 1), inputShape(ctx, 2), inputShape(ctx, 3), inputShape(ctx, 4)}));
  ctx.setOutputType(0, ctx.inputType(0));
  for (size_t i = 1; i < ctx.numOutputs(); ++i) {
    // running_mean and running_var: [C] in the statistics' type.
    TensorType stat(ctx.inputType(2 + i).dtype);
    if (x) stat.shape = Shape{(*x)[1]};
    ctx.setOutputType(i, std::move(stat));
  }
  return Status::ok();
}

Status verifyBatchNormalization(const Node& node) {
  const int64_t training = node.getInt("training_mode", 0);
  if (training != 0 && training != 1)
    return nodeError(node, "training_mode " + std::to_string(training) + " must be 0 or 1");
  return checkBatchNormOperands(node, shapeOf(node.input(0)),
                                {shapeOf(node.input(1)), shapeOf(node.input(2)),
                                 shapeOf(node.input(3)), shapeOf(node.input(4))});
}

Status inferLayerNormalization(InferenceContext& ctx) {
  const Node& node = ctx.node();
  const Shape* x = inputShape(ctx, 0);
  ctx.setOutputType(0, ctx.inputType(0));
  const int64_t stash = node.getInt("stash_type", 1);
  if (stash != static_cast<int64_t>(DataType::kFloat32) &&
      stash != static_cast<int64_t>(DataType::kBFloat16))
    return ctx.fail("stash_type " + std::to_string(stash) + " must be 1 (f32) or 16 (bf16)");
  TensorType stats(static_cast<DataType>(stash));
  if (x) {
    const int64_t rank = static_cast<int64_t>(x->size());
    StatusOr<int64_t> axis = normalizeAxis(ctx, node.getInt("axis", -1), rank, "axis");
    if (!axis.isOk()) return axis.status();
    // Scale (and B) broadcast to the normalized dims X[axis:].
    const Shape normalized(x->begin() + axis.value(), x->end());
    for (size_t i = 1; i < 3; ++i) {
      const Shape* p = inputShape(ctx, i);
      if (!p) continue;
      std::optional<Shape> b = broadcastShapes(normalized, *p);
      if (!b || b->size() != normalized.size())
        return ctx.fail(std::string(i == 1 ? "Scale " : "B ") + shapeToString(*p) +
                        " does not broadcast to the normalized dims " + shapeToString(normalized));
    }
    Shape shape(x->begin(), x->begin() + axis.value());
    shape.resize(x->size(), Dim(1));
    stats.shape = std::move(shape);
  }
  for (size_t i = 1; i < ctx.numOutputs(); ++i) ctx.setOutputType(i, stats);
  return Status::ok();
}

Status inferInstanceNormalization(InferenceContext& ctx) {
  const Shape* x = inputShape(ctx, 0);
  if (x && x->size() < 3)
    return ctx.fail("input must have rank >= 3 ([N, C, spatial...]), got " + shapeToString(*x));
  for (size_t i = 1; i < 3; ++i) {
    const Shape* p = inputShape(ctx, i);
    if (!p) continue;
    const char* name = i == 1 ? "scale" : "B";
    if (p->size() != 1)
      return ctx.fail(std::string(name) + " must be 1-D ([C]), got " + shapeToString(*p));
    if (x && (*x)[1].isStatic() && (*p)[0].isStatic() && (*p)[0] != (*x)[1])
      return ctx.fail(std::string(name) + " " + shapeToString(*p) + " does not match the " +
                      (*x)[1].toString() + " channels of the input");
  }
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

}  // namespace subgraph::ops
