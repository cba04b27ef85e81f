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

#include <algorithm>
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
    if (nothingToRemove(graph)) return false;
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
  // True when no node and no value can be dead, which a scan of the node
  // and value tables in id order proves without the liveness search, whose
  // pointer chasing costs a cache miss per node on a large graph. A set of
  // dead nodes always holds one whose outputs nothing reads and that is no
  // graph output (the set's last in topological order), so if every node
  // has an output that is read or returned, no node is dead; a value
  // without a producer is then kept if it is read or returned.
  static bool nothingToRemove(const Graph& graph) {
    auto kept = [](const Value* v) { return v->hasUses() || v->isGraphOutput(); };
    for (const Node* node : graph.nodes())
      if (std::none_of(node->outputs().begin(), node->outputs().end(), kept)) return false;
    for (const Value* v : graph.values())
      if (!v->producer() && !v->isGraphInput() && !kept(v)) return false;
    return true;
  }

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
