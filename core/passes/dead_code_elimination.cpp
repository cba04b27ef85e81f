//===- core/passes/dead_code_elimination.cpp - Dead-code elimination ------===//
//
// Mark and sweep. Marking walks backwards from the graph outputs through
// producers and their inputs (plus the outer-scope names that live bodies
// capture); each node and value is visited once, so the pass is linear in the
// graph. Sweeping detaches every dead node first and deletes the values
// second, which needs no particular order between dead nodes and so also
// handles dead cycles.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/dead_code_elimination.h"

#include <string>
#include <vector>

#include "pass_util.h"
#include "subgraph/ir/captures.h"

namespace subgraph {
namespace {

class DeadCodeEliminationPass final : public Pass {
 public:
  explicit DeadCodeEliminationPass(const DeadCodeEliminationOptions& options) : options_(options) {}

  std::string_view name() const override { return "dce"; }
  std::string_view description() const override {
    return "Removes nodes, initializers and dangling values that no graph output depends on.";
  }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    std::vector<char> live = markLiveValues(graph);
    passes_detail::OpCounter removedNodes;
    std::vector<Node*> dead;
    for (Node* node : graph.nodes()) {
      bool anyLive = false;
      for (Value* out : node->outputs()) anyLive = anyLive || live[out->id()];
      if (!anyLive) dead.push_back(node);
    }
    std::vector<Value*> orphans;
    for (Node* node : dead) {
      removedNodes.add(node->qualifiedOpType());
      for (Value* out : node->outputs())
        if (out->producer() == node) orphans.push_back(out);
      graph.removeNode(node, /*keepOutputs=*/true);
    }
    for (Value* v : orphans) removeIfUnreferenced(graph, v);

    // Values without a producer that nothing live reads: unused constants
    // and values an importer created but never connected.
    size_t removedInitializers = 0, removedDangling = 0;
    std::vector<Value*> candidates;
    for (Value* v : graph.values())
      if (!live[v->id()] && !v->producer() && !v->isGraphInput()) candidates.push_back(v);
    for (Value* v : candidates) {
      bool constant = v->isInitializer();
      if (constant && !options_.removeUnusedInitializers) continue;
      if (removeIfUnreferenced(graph, v)) ++(constant ? removedInitializers : removedDangling);
    }

    bool changed = removedNodes.total() + removedInitializers + removedDangling > 0;
    if (changed) {
      summary_ = "removed";
      auto append = [this, first = true](const std::string& part) mutable {
        summary_ += (first ? " " : ", ") + part;
        first = false;
      };
      if (removedNodes.total()) append(removedNodes.describe());
      if (removedInitializers) append(std::to_string(removedInitializers) + " initializers");
      if (removedDangling) append(std::to_string(removedDangling) + " dangling values");
    }
    return changed;
  }

  std::string lastRunSummary() const override { return summary_; }

 private:
  // Live values by id: the graph outputs and, transitively, every input of a
  // node that computes a live value, plus captures of live bodies.
  std::vector<char> markLiveValues(const Graph& graph) {
    std::vector<char> liveValue(graph.valueIdBound(), 0);
    std::vector<char> liveNode(graph.nodeIdBound(), 0);
    std::vector<Value*> work;
    auto mark = [&](Value* v) {
      if (v && !liveValue[v->id()]) {
        liveValue[v->id()] = 1;
        work.push_back(v);
      }
    };
    for (Value* out : graph.outputs()) mark(out);
    while (!work.empty()) {
      Value* v = work.back();
      work.pop_back();
      Node* producer = v->producer();
      if (!producer || liveNode[producer->id()]) continue;
      liveNode[producer->id()] = 1;
      for (Value* in : producer->inputs()) mark(in);
      for (const std::string& name : capturedNames(*producer)) mark(graph.findValue(name));
    }
    return liveValue;
  }

  // Deletes a value nobody refers to any more; returns whether it did.
  static bool removeIfUnreferenced(Graph& graph, Value* v) {
    if (v->producer() || v->hasUses() || v->isGraphInput() || v->isGraphOutput()) return false;
    graph.removeValue(v);
    return true;
  }

  DeadCodeEliminationOptions options_;
  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createDeadCodeEliminationPass(const DeadCodeEliminationOptions& options) {
  return std::make_unique<DeadCodeEliminationPass>(options);
}

}  // namespace subgraph
