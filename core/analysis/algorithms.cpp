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

}  // namespace

std::vector<Node*> findCycle(const Graph& graph) {
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
