//===- core/ops/infer_control_flow.cpp - Inference for If and Loop --------===//
//
// subgraph does not look inside control flow; it only reads the types the
// branch and body graphs declare for their outputs. If's outputs get what
// both branches agree on (a dim the branches disagree on is unknown). A
// Loop's carried values keep what the initial value and the body agree on,
// and each scan output gets the body's per-iteration type with an unknown
// leading iteration dim. Anything undeclared stays unknown.
//
//===----------------------------------------------------------------------===//
#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

// The most precise type both `a` and `b` are instances of.
TensorType joinTypes(const TensorType& a, const TensorType& b) {
  TensorType out(a.dtype == b.dtype ? a.dtype : DataType::kUndefined);
  if (a.shape && b.shape && a.shape->size() == b.shape->size()) {
    Shape shape;
    for (size_t i = 0; i < a.shape->size(); ++i)
      shape.push_back((*a.shape)[i] == (*b.shape)[i] ? (*a.shape)[i] : Dim::unknown());
    out.shape = std::move(shape);
  }
  return out;
}

std::shared_ptr<Graph> graphAttr(const Node& node, const char* name) {
  const Attribute* a = node.attr(name);
  const auto* g = a ? std::get_if<std::shared_ptr<Graph>>(&a->value()) : nullptr;
  return g ? *g : nullptr;
}

const TensorType& outputType(const Graph& g, size_t i) {
  static const TensorType kUnknown;
  const Value* v = g.outputs()[i];
  return v ? v->type() : kUnknown;
}

}  // namespace

Status inferIf(InferenceContext& ctx) {
  SUBGRAPH_RETURN_IF_ERROR(verifyIf(ctx.node()));
  std::shared_ptr<Graph> thenBranch = graphAttr(ctx.node(), "then_branch");
  std::shared_ptr<Graph> elseBranch = graphAttr(ctx.node(), "else_branch");
  if (!thenBranch || !elseBranch) return Status::ok();
  for (size_t i = 0; i < ctx.numOutputs(); ++i)
    ctx.setOutputType(i, joinTypes(outputType(*thenBranch, i), outputType(*elseBranch, i)));
  return Status::ok();
}

Status verifyIf(const Node& node) {
  for (const char* name : {"then_branch", "else_branch"}) {
    std::shared_ptr<Graph> branch = graphAttr(node, name);
    if (branch && branch->outputs().size() != node.numOutputs())
      return nodeError(
          node, std::string(name) + " returns " + std::to_string(branch->outputs().size()) +
                    " values but the node has " + std::to_string(node.numOutputs()) + " outputs");
  }
  return Status::ok();
}

Status inferLoop(InferenceContext& ctx) {
  SUBGRAPH_RETURN_IF_ERROR(verifyLoop(ctx.node()));
  std::shared_ptr<Graph> body = graphAttr(ctx.node(), "body");
  if (!body) return Status::ok();
  const size_t carried = ctx.numInputs() > 2 ? ctx.numInputs() - 2 : 0;
  for (size_t i = 0; i < ctx.numOutputs(); ++i) {
    const TensorType& perIteration = outputType(*body, 1 + i);
    if (i < carried) {
      ctx.setOutputType(i, joinTypes(ctx.inputType(2 + i), perIteration));
    } else {
      TensorType scan(perIteration.dtype);
      if (perIteration.shape) {
        Shape shape = {Dim::unknown()};
        shape.insert(shape.end(), perIteration.shape->begin(), perIteration.shape->end());
        scan.shape = std::move(shape);
      }
      ctx.setOutputType(i, std::move(scan));
    }
  }
  return Status::ok();
}

Status verifyLoop(const Node& node) {
  std::shared_ptr<Graph> body = graphAttr(node, "body");
  if (!body) return Status::ok();
  const size_t carried = node.numInputs() > 2 ? node.numInputs() - 2 : 0;
  if (body->inputs().size() != 2 + carried)
    return nodeError(node, "body takes " + std::to_string(body->inputs().size()) +
                               " inputs, expected 2 + " + std::to_string(carried) +
                               " loop-carried values");
  if (body->outputs().size() != 1 + node.numOutputs())
    return nodeError(node, "body returns " + std::to_string(body->outputs().size()) +
                               " values, expected 1 + " + std::to_string(node.numOutputs()));
  if (node.numOutputs() < carried)
    return nodeError(node, "has " + std::to_string(node.numOutputs()) + " outputs but " +
                               std::to_string(carried) + " loop-carried values");
  return Status::ok();
}

}  // namespace subgraph::ops
