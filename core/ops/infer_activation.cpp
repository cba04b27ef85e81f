//===- core/ops/infer_activation.cpp - Inference for activations ----------===//
//
// Activations keep their input's type. The rules here only check what could
// make the op ill-formed: PRelu's slope must broadcast to X without growing
// it, Clip's bounds must be scalars, Softmax's axis must exist.
//
//===----------------------------------------------------------------------===//
#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {

Status inferPRelu(InferenceContext& ctx) {
  const Shape* x = inputShape(ctx, 0);
  const Shape* slope = inputShape(ctx, 1);
  if (x && slope) {
    // Unidirectional: broadcasting slope to X must give exactly X's shape.
    std::optional<Shape> b = broadcastShapes(*x, *slope);
    bool grows = !b || b->size() != x->size();
    for (size_t i = 0; b && !grows && i < x->size(); ++i)
      grows = (*x)[i].isStatic() && (*b)[i] != (*x)[i];
    if (grows)
      return ctx.fail("slope of shape " + shapeToString(*slope) +
                      " does not broadcast to X of shape " + shapeToString(*x));
  }
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

Status inferClip(InferenceContext& ctx) {
  for (size_t i = 1; i < 3; ++i) {
    const Shape* bound = inputShape(ctx, i);
    if (!bound) continue;
    // ONNX requires scalars; exporters sometimes write [1], which is harmless.
    std::optional<int64_t> n = staticElementCount(*bound);
    if (n && *n != 1)
      return ctx.fail(std::string(i == 1 ? "min" : "max") + " must be a scalar, got shape " +
                      shapeToString(*bound));
  }
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

Status verifyClip(const Node& node) {
  for (size_t i = 1; i < 3; ++i) {
    const char* name = i == 1 ? "min" : "max";
    if (node.input(i) && node.hasAttr(name))
      return nodeError(node,
                       std::string("'") + name + "' is given both as an input and as an attribute");
  }
  return Status::ok();
}

Status inferSoftmax(InferenceContext& ctx) {
  if (const Shape* x = inputShape(ctx, 0)) {
    StatusOr<int64_t> axis =
        normalizeAxis(ctx, ctx.node().getInt("axis", -1), static_cast<int64_t>(x->size()), "axis");
    if (!axis.isOk()) return axis.status();
  }
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

Status verifyGelu(const Node& node) {
  const std::string approximate = node.getString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return nodeError(node, "approximate '" + approximate + "' is not one of none, tanh");
  return Status::ok();
}

}  // namespace subgraph::ops
