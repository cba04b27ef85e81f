//===- testing/testkit/partition_oracle.h - What a partitioning must keep -*- C++ -*-===//
//
// The brute-force oracle of partitioning, shared by the partitioner's
// property test, its fuzzer, `subgraph check-plugin` and the installed
// subgraph::testing library. It knows nothing of the partitioner's ranks
// or windows; it checks the result against the input graph:
//  * the fused graph verifies and is acyclic, and so is the quotient of the
//    input graph by the regions (acyclic across regions);
//  * every region is weakly connected and convex in the input graph;
//  * every node is in at most one region, and the report accounts for each
//    node exactly once (in a region, or left out with a reason);
//  * inlining every fused node's body gives back the input graph exactly:
//    the same nodes, reading and defining the same value names;
//  * graph inputs and outputs, their order and names, are unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/partition/partition_report.h"

namespace subgraph::testkit {

/// Reachability between the nodes of one acyclic graph, as bit sets over
/// node ids (any size: one word per 64 ids).
class Reachability {
 public:
  /// Builds it for `graph`; a graph with a cycle gets an empty relation.
  explicit Reachability(const Graph& graph);
  /// Builds it from explicit successor sets (tests of the oracle itself):
  /// `succ[i]` lists the direct successors of node i; acyclic.
  explicit Reachability(const std::vector<std::vector<NodeId>>& succ);
  /// True if a path of at least one edge leads from `from` to `to`.
  bool reaches(NodeId from, NodeId to) const;
  /// Node id bound.
  size_t size() const { return n_; }

 private:
  size_t n_ = 0, words_ = 0;
  std::vector<uint64_t> bits_;  // n_ rows of words_ words
};

/// True if no node outside `region` is both reachable from it and reaches
/// it, i.e. contracting it into one node creates no cycle.
bool isConvex(const Reachability& reach, std::span<const NodeId> region);

/// What the oracle checks; all on by default.
struct OracleOptions {
  /// Compare the inlined fused graph with the input graph (off when a
  /// plugin's post-partition transforms rewrite the graph).
  bool checkInlining = true;
  /// Require a reason for every node left out.
  bool checkReasons = true;
};

/// Checks partitioning `original` into `partitioned` with `report`; returns
/// "" or one line saying what is wrong.
std::string checkPartition(const Graph& original, const Graph& partitioned,
                           const partition::PartitionReport& report,
                           const OracleOptions& options = {});

/// The regions of `report` that are not convex in `original`, as "region N
/// (a, b) is not convex: it reaches c, which reaches it"; "" if all are.
std::string nonConvexRegion(const Graph& original, const partition::PartitionReport& report);

}  // namespace subgraph::testkit
