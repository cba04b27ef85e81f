//===- core/ops/infer_control_flow.cpp - Inference for If and Loop --------===//
//
// If and Loop outputs come from their subgraphs. Subgraph attributes are
// shared and immutable, so inference runs on a copy of the body whose
// inputs get the types the node feeds them (Loop: iteration count i64[],
// condition bool[], then the carried values); types the body declares are
// kept where they are more precise. If's outputs get what both branches
// agree on (a dim they disagree on is unknown). A Loop's carried values get
// what the initial value and the body agree on, and each scan output gets
// the body's per-iteration type behind a leading iteration dim, which is M
// when M is constant and there is no loop condition input.
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

// Output types of `body` when its inputs have `inputTypes`, inferred on a
// copy. Errors inside the body name the node and the attribute.
StatusOr<std::vector<TensorType>> inferBody(const InferenceContext& ctx, const Graph& body,
                                            const char* attr,
                                            const std::vector<TensorType>& inputTypes) {
  std::unique_ptr<Graph> copy = body.clone();
  for (size_t i = 0; i < copy->inputs().size() && i < inputTypes.size(); ++i) {
    Value* in = copy->inputs()[i];
    if (std::optional<TensorType> merged = mergeTypes(in->type(), inputTypes[i]))
      in->setType(std::move(*merged));
  }
  Status s = inferShapes(*copy);
  if (!s.isOk()) return ctx.fail(std::string(attr) + ": " + s.message());
  std::vector<TensorType> out;
  for (const Value* v : copy->outputs()) out.push_back(v ? v->type() : TensorType());
  return out;
}

}  // namespace

Status inferIf(InferenceContext& ctx) {
  SUBGRAPH_RETURN_IF_ERROR(verifyIf(ctx.node()));
  std::shared_ptr<Graph> thenBranch = graphAttr(ctx.node(), "then_branch");
  std::shared_ptr<Graph> elseBranch = graphAttr(ctx.node(), "else_branch");
  if (!thenBranch || !elseBranch) return Status::ok();
  StatusOr<std::vector<TensorType>> thenTypes = inferBody(ctx, *thenBranch, "then_branch", {});
  if (!thenTypes.isOk()) return thenTypes.status();
  StatusOr<std::vector<TensorType>> elseTypes = inferBody(ctx, *elseBranch, "else_branch", {});
  if (!elseTypes.isOk()) return elseTypes.status();
  for (size_t i = 0; i < ctx.numOutputs(); ++i)
    ctx.setOutputType(i, joinTypes(thenTypes.value()[i], elseTypes.value()[i]));
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
  std::vector<TensorType> bodyInputs = {TensorType(DataType::kInt64, Shape{}),
                                        TensorType(DataType::kBool, Shape{})};
  for (size_t i = 0; i < carried; ++i) bodyInputs.push_back(ctx.inputType(2 + i));
  StatusOr<std::vector<TensorType>> bodyOutputs = inferBody(ctx, *body, "body", bodyInputs);
  if (!bodyOutputs.isOk()) return bodyOutputs.status();
  // Without a condition input the loop runs exactly M times.
  Dim iterations;
  if (!ctx.hasInput(1))
    if (std::optional<std::vector<int64_t>> m = constantInts(ctx, 0); m && m->size() == 1)
      iterations = Dim(std::max<int64_t>(0, (*m)[0]));
  for (size_t i = 0; i < ctx.numOutputs(); ++i) {
    const TensorType& perIteration = bodyOutputs.value()[1 + i];
    if (i < carried) {
      ctx.setOutputType(i, joinTypes(ctx.inputType(2 + i), perIteration));
    } else {
      TensorType scan(perIteration.dtype);
      if (perIteration.shape) {
        Shape shape = {iterations};
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
