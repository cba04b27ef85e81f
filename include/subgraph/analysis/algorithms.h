//===- subgraph/analysis/algorithms.h - Graph algorithms on the IR -*- C++ -*-===//
//
// Small wrappers that run Boost.Graph algorithms on the IR view of
// graph_traits.h and turn their results into IR terms (nodes, Status
// messages). The verifier uses findCycle() to name the nodes of a cycle;
// topologicalSortBoost() is an independent check on Graph::topologicalOrder.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// One cycle of `graph`, as nodes n0, n1, ..., nk where each node reads an
/// output of the previous one and n0 reads an output of nk (a node that
/// reads its own output is a cycle of one). Empty if the graph is acyclic.
/// Deterministic: the depth-first search visits nodes and edges in id and
/// use order. O(nodes + edges).
std::vector<Node*> findCycle(const Graph& graph);

/// Nodes in a topological order computed by boost::topological_sort (a
/// depth-first order, so it generally differs from Graph::topologicalOrder),
/// or an error naming the nodes of a cycle.
StatusOr<std::vector<Node*>> topologicalSortBoost(const Graph& graph);

/// "Relu node 'a' -> Add node 'b' -> Relu node 'a'": a cycle from
/// findCycle() in words, closing on its first node.
std::string describeCycle(const std::vector<Node*>& cycle);

}  // namespace subgraph
