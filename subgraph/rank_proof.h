//===- subgraph/rank_proof.h - Acyclicity from the quotient DAG's ranks -*- C++ -*-===//
//
// The partitioner's final check that the partitioned graph is acyclic
// (internal to subgraph_partition), proved from the ranks the last pass's
// quotient DAG (quotient_dag.h) already holds instead of by a fresh
// topological sort. Each node takes the rank of its group, a fused node
// that pass made the rank of its region's group; when every edge runs from
// a lower rank to a higher one the ranks are a topological numbering, so
// the graph is acyclic. Contracting only convex sets should guarantee it;
// the check is there to catch a partitioner bug or a hook that rewired the
// graph, and costs a read per edge, or only the fused nodes' edges where
// those are all the pass added. A false answer proves nothing: the caller
// then sorts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>

#include "subgraph/ir/graph.h"
#include "subgraph/quotient_dag.h"

namespace subgraph::partition::detail {

/// True when every edge of `graph` runs from a lower rank to a higher one,
/// ranking each node as `dag` (the last pass's quotient DAG) did: nodes
/// that DAG ranked by their group, the fused nodes that pass made by
/// `fusedRanks`, their region's group rank by node id (kNoRank or past
/// its end for any other node). Distinct nodes are distinct groups with
/// distinct ranks, so this proves what a topological sort would, reading
/// each edge once and building nothing. False proves nothing (a
/// PostPartition hook may have added nodes the DAG never ranked, or
/// rewired edges).
bool ranksOrderEveryEdge(const Graph& graph, const QuotientDag& dag,
                         std::span<const uint32_t> fusedRanks);

/// True when every edge the last pass created runs from a lower rank to a
/// higher one: the inputs of its fused nodes `fused` and the readers of
/// their outputs, ranked as in ranksOrderEveryEdge(). It proves the graph
/// acyclic as that would, provided no other edge was added since `dag`'s
/// ranks were computed: an edge the pass did not create joins two groups
/// of the quotient DAG, whose ranks it keeps in topological order through
/// every contraction. It then reads the fused nodes' edges instead of
/// every edge of a graph that may have a million nodes.
bool fusedEdgesFollowRanks(const Graph& graph, std::span<const Node* const> fused,
                           const QuotientDag& dag, std::span<const uint32_t> fusedRanks);

}  // namespace subgraph::partition::detail
