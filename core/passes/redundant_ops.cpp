//===- core/passes/redundant_ops.cpp - Ops that move nothing -------------===//
//
// With the input shapes fixed, HuggingFace's attention-mask helpers fold to
// a chain of data movement on the mask: Cast to bool, Flatten, a Gather of
// every element in order, two Reshapes, an And with an all-true constant
// and an Expand (DistilBERT, RoBERTa). Each is a copy of the mask, and each
// a step a backend must take or leave. The pass removes the copies that
// move nothing, so what is left is what computes. See redundant_ops.h.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/redundant_ops.h"

#include <optional>
#include <set>
#include <vector>

#include "idiom_match.h"
#include "pass_util.h"
#include "subgraph/ir/captures.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/ir/shape_inference.h"

namespace subgraph {
namespace {

using namespace passes_detail;

std::optional<std::vector<int64_t>> staticDims(const Value* v) {
  if (!v || !v->type().hasRank()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const Dim& d : *v->type().shape) {
    if (!d.isStatic()) return std::nullopt;
    dims.push_back(d.size());
  }
  return dims;
}

bool isOp(const Node* n, std::string_view op) {
  return n && n->domain().empty() && n->opType() == op && n->numOutputs() == 1;
}

bool isReshapeLike(const Node* n) {
  return isOp(n, "Reshape") || isOp(n, "Flatten") || isOp(n, "Squeeze") || isOp(n, "Unsqueeze");
}

Value* dimsConstant(Graph& graph, const std::vector<int64_t>& dims, const std::string& hint) {
  return graph.addInitializer(
      graph.uniqueValueName(hint + "_shape"),
      Tensor::fromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(dims.size())}, dims));
}

// Replaces `n` by `op`(inputs) writing n's output.
void replaceWith(Graph& graph, Node* n, std::string_view op, std::vector<Value*> inputs) {
  Value* out = n->output(0);
  std::string name = n->name();
  graph.removeNode(n, /*keepOutputs=*/true);
  graph.addNode(OpRegistry::global().intern("", op), std::move(inputs), {out}, {}, name);
}

// Removes `n`, its readers reading `to` instead; false when n's output is a
// graph output or a nested graph reads it by name.
bool bypass(Graph& graph, Node* n, Value* to, const std::set<std::string>& captured) {
  Value* out = n->output(0);
  if (out->isGraphOutput() || captured.count(out->name()) || to->type().dtype != out->type().dtype)
    return false;
  graph.replaceAllUsesWith(out, to);
  graph.removeNode(n);
  return true;
}

// Gather(x, 0..n-1 along an axis of n): x itself, reshaped.
bool identityGather(Graph& graph, Node* n) {
  if (!isOp(n, "Gather") || n->numInputs() != 2 || !n->input(1) || !n->input(1)->isInitializer())
    return false;
  std::optional<std::vector<int64_t>> x = staticDims(n->input(0));
  std::optional<std::vector<int64_t>> y = staticDims(n->output(0));
  if (!x || !y || x->empty()) return false;
  int64_t axis = intAttr(*n, "axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(x->size());
  if (axis < 0 || axis >= static_cast<int64_t>(x->size())) return false;
  std::vector<int64_t> idx = n->input(1)->initializer()->toInt64Vector();
  if (static_cast<int64_t>(idx.size()) != (*x)[static_cast<size_t>(axis)]) return false;
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] != static_cast<int64_t>(i)) return false;
  replaceWith(graph, n, "Reshape", {n->input(0), dimsConstant(graph, *y, n->output(0)->name())});
  return true;
}

// A reshape of a reshape read by nothing else: one reshape; a reshape to
// the input's own dims: nothing.
bool chainedReshape(Graph& graph, Node* n, const std::set<std::string>& captured) {
  if (!isReshapeLike(n)) return false;
  std::optional<std::vector<int64_t>> y = staticDims(n->output(0));
  if (!y) return false;
  Value* x = n->input(0);
  Node* inner = x ? x->producer() : nullptr;
  if (isReshapeLike(inner) && usedExactly(x, 1, captured)) {
    Value* source = inner->input(0);
    replaceWith(graph, n, "Reshape", {source, dimsConstant(graph, *y, n->output(0)->name())});
    graph.removeNode(inner);
    return true;
  }
  return staticDims(x) == y && bypass(graph, n, x, captured);
}

// True when constant `c` is all `value` (bool).
bool allBool(const Value* c, bool value) {
  if (!c || !c->isInitializer() || c->initializer()->dtype() != DataType::kBool) return false;
  const Tensor& t = *c->initializer();
  for (int64_t i = 0; i < t.numElements(); ++i)
    if ((t.elementAsDouble(i) != 0.0) != value) return false;
  return true;
}

// And(x, all true), Or(x, all false): x, expanded to the result's dims.
bool neutralLogic(Graph& graph, Node* n, const std::set<std::string>& captured) {
  const bool isAnd = isOp(n, "And");
  if ((!isAnd && !isOp(n, "Or")) || n->numInputs() != 2) return false;
  for (int i = 0; i < 2; ++i) {
    if (!allBool(n->input(i), isAnd)) continue;
    Value* x = n->input(1 - i);
    std::optional<std::vector<int64_t>> y = staticDims(n->output(0));
    if (!y) return false;
    if (staticDims(x) == y) return bypass(graph, n, x, captured);
    replaceWith(graph, n, "Expand", {x, dimsConstant(graph, *y, n->output(0)->name())});
    return true;
  }
  return false;
}

// Expand(Expand(x)) with the inner one read by nothing else: one Expand.
bool chainedExpand(Graph& graph, Node* n, const std::set<std::string>& captured) {
  if (!isOp(n, "Expand") || n->numInputs() != 2) return false;
  Value* x = n->input(0);
  Node* inner = x ? x->producer() : nullptr;
  std::optional<std::vector<int64_t>> y = staticDims(n->output(0));
  if (!isOp(inner, "Expand") || !usedExactly(x, 1, captured) || !y) return false;
  Value* source = inner->input(0);
  replaceWith(graph, n, "Expand", {source, dimsConstant(graph, *y, n->output(0)->name())});
  graph.removeNode(inner);
  return true;
}

class RedundantOpsPass final : public Pass {
 public:
  std::string_view name() const override { return "redundant-ops"; }
  std::string_view description() const override {
    return "Removes ops that compute their input or a reshape of it: Gathers of every element "
           "in order, Reshapes of Reshapes, And/Or with a neutral constant, Expand of Expand.";
  }
  std::string lastRunSummary() const override { return summary_; }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    if (!hasCompleteTypes(graph)) (void)inferShapes(graph);
    std::set<std::string> captured = capturedNames(graph);
    OpCounter counter;
    std::vector<Node*> nodes(graph.nodes().begin(), graph.nodes().end());
    std::set<Node*> gone;
    for (Node* n : nodes) {
      if (gone.count(n)) continue;
      std::string op = n->opType();
      Node* inner = n->numInputs() > 0 && n->input(0) ? n->input(0)->producer() : nullptr;
      bool changed = identityGather(graph, n) || chainedReshape(graph, n, captured) ||
                     neutralLogic(graph, n, captured) || chainedExpand(graph, n, captured);
      if (!changed) continue;
      counter.add(op);
      gone.insert(n);
      if (inner) gone.insert(inner);  // a chained step may have removed it
    }
    if (counter.total() == 0) return false;
    summary_ = "simplified " + counter.describe();
    return true;
  }

 private:
  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createRedundantOpsPass() { return std::make_unique<RedundantOpsPass>(); }

}  // namespace subgraph
