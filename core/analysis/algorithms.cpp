//===- core/analysis/algorithms.cpp - Graph algorithms on the IR ----------===//
//
// Runs Boost.Graph's depth-first search and topological sort directly on the
// IR view (no adjacency_list copy) and converts their results into nodes and
// messages.
//
//===----------------------------------------------------------------------===//
#include "subgraph/analysis/algorithms.h"

#include <algorithm>
#include <iterator>

#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/topological_sort.hpp>

#include "subgraph/analysis/graph_traits.h"

namespace subgraph {
namespace {

// Records the DFS tree (each node's parent) and the first back edge. A back
// edge u -> v means v is an ancestor of u still on the DFS stack, so the
// tree path v ~> u plus the edge u -> v is a cycle. The tree parent of a
// node is set once, when it is discovered, so the path can be read after the
// search has finished.
class CycleRecorder : public boost::default_dfs_visitor {
 public:
  CycleRecorder(std::vector<Node*>* parent, IrEdge* backEdge, bool* found)
      : parent_(parent), backEdge_(backEdge), found_(found) {}

  void tree_edge(const IrEdge& edge, const Graph&) const {
    (*parent_)[edge.target->id()] = edge.source;
  }
  void back_edge(const IrEdge& edge, const Graph&) const {
    if (*found_) return;
    *backEdge_ = edge;
    *found_ = true;
  }

 private:
  // Boost copies visitors by value, so results live behind pointers.
  std::vector<Node*>* parent_;
  IrEdge* backEdge_;
  bool* found_;
};

std::string describeNode(const Node& node) {
  return node.qualifiedOpType() + " node '" + node.displayName() + "'";
}

// Calls `f(reader)` for each out-edge of `node` as graph_traits.h defines
// them: every use of each output that names `node` as its producer.
template <typename F>
void forEachReader(const Node& node, F f) {
  for (Value* out : node.outputs())
    if (out && out->producer() == &node)
      for (const Use& use : out->uses()) f(use.user);
}

// True if Kahn's algorithm removes every node, i.e. no edge of the graph
// (as findCycle's search sees them) closes a cycle. False also for a
// graph with an edge to a node of another graph (one being split), which
// the search then walks as it always did.
bool isAcyclic(const Graph& graph) {
  std::vector<uint32_t> pending(graph.nodeIdBound(), 0);
  bool foreign = false;
  for (Node* n : graph.nodes())
    forEachReader(*n, [&](Node* r) {
      if (r->graph() == &graph)
        ++pending[r->id()];
      else
        foreign = true;
    });
  if (foreign) return false;
  std::vector<Node*> ready;
  for (Node* n : graph.nodes())
    if (pending[n->id()] == 0) ready.push_back(n);
  size_t removed = 0;
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    ++removed;
    forEachReader(*n, [&](Node* r) {
      if (--pending[r->id()] == 0) ready.push_back(r);
    });
  }
  return removed == graph.numNodes();
}

}  // namespace

std::vector<Node*> findCycle(const Graph& graph) {
  // Nearly every graph asked is acyclic, and peeling it in Kahn's order
  // proves that in one pass over plain counters. The depth-first search,
  // with its colour map, tree and stack of edge iterators, runs only to
  // name the cycle that the count has shown to exist.
  if (isAcyclic(graph)) return {};
  std::vector<Node*> parent(graph.nodeIdBound(), nullptr);
  IrEdge backEdge;
  bool found = false;
  boost::depth_first_search(graph, boost::visitor(CycleRecorder(&parent, &backEdge, &found)));
  if (!found) return {};
  // Walk the tree from the edge's source up to its target (the ancestor),
  // then reverse so that each node feeds the next.
  std::vector<Node*> cycle;
  for (Node* n = backEdge.source; n != backEdge.target; n = parent[n->id()]) cycle.push_back(n);
  cycle.push_back(backEdge.target);
  std::reverse(cycle.begin(), cycle.end());
  return cycle;
}

StatusOr<std::vector<Node*>> topologicalSortBoost(const Graph& graph) {
  std::vector<Node*> reversed;
  reversed.reserve(graph.numNodes());
  try {
    boost::topological_sort(graph, std::back_inserter(reversed));
  } catch (const boost::not_a_dag&) {
    return Status::invalid("graph '" + graph.name() +
                           "' has a cycle: " + describeCycle(findCycle(graph)));
  }
  std::reverse(reversed.begin(), reversed.end());
  return reversed;
}

std::string describeCycle(const std::vector<Node*>& cycle) {
  std::string text;
  for (Node* n : cycle) text += describeNode(*n) + " -> ";
  if (!cycle.empty()) text += describeNode(*cycle.front());
  return text;
}

}  // namespace subgraph
