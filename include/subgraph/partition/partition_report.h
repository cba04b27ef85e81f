//===- subgraph/partition/partition_report.h - What was fused, and why not -*- C++ -*-===//
//
// The partitioner's account of one run: every region with its nodes and
// boundary values, and every node left out of all regions with the reason
// for the decision that left it out. It prints as JSON (for tools and the
// `--report` file) and as a summary table (for people).
//
// JSON layout:
//   { "regions": [{"id", "backend", "property", "fused_node",
//                  "nodes": [names], "inputs": [names], "outputs": [names]}],
//     "nodes_total", "nodes_in_regions",
//     "rejected": [{"node", "op", "kind", "reason"}],
//     "contested": [{"node", "backend", "claimed_by", "region"}],
//     "skipped": [strings], "backends": [names], "partition_ms" }
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "subgraph/ir/node.h"

namespace subgraph::partition {

/// One fused region.
struct RegionReport {
  /// Region id, in creation order.
  int id = 0;
  /// Owning backend and property.
  std::string backend;
  std::string property;
  /// Name of the fused node that replaced the region.
  std::string fusedNode;
  /// Names of the region's nodes (Node::displayName), in topological order.
  std::vector<std::string> nodes;
  /// Ids of the same nodes in the graph as it was before partitioning; they
  /// index a pre-partition clone, e.g. to draw the regions as clusters.
  std::vector<NodeId> nodeIds;
  /// Names of the fused node's inputs and outputs, in order.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

/// A node left out of every region, and why.
struct RejectedNode {
  /// nodeId of a node that a PostPartition hook removed.
  static constexpr NodeId kNoId = ~NodeId{0};
  /// Node::displayName of the node.
  std::string node;
  /// Its id in the graph before (and, as it was not fused, after)
  /// partitioning; kNoId if a hook removed it.
  NodeId nodeId = kNoId;
  /// Its qualified op type.
  std::string op;
  /// The kind of decision, for tools: "no-selector", "already-fused",
  /// "cycle", "filter", "min-size", "rejected" or "removed".
  std::string kind;
  /// The reason of the decision that left it out, e.g. "dropped by Filter
  /// of convbn/conv_bn: pattern incomplete".
  std::string reason;
};

/// A node that a lower-priority backend would have seeded a region at, but
/// that a higher-priority backend claimed first.
struct ContestedNode {
  /// Node::displayName of the node.
  std::string node;
  /// The lower-priority backend that selected it.
  std::string backend;
  /// The backend whose region holds it, and that region's id.
  std::string claimedBy;
  int region = 0;
};

/// The outcome of one partitionGraph() call.
struct PartitionReport {
  /// Active backends, in priority order.
  std::vector<std::string> backends;
  /// Fused regions, by id.
  std::vector<RegionReport> regions;
  /// Nodes in the graph before partitioning.
  size_t nodesTotal = 0;
  /// Of those, nodes that ended up in a region.
  size_t nodesInRegions = 0;
  /// Every node in no region, in topological order of the input graph.
  std::vector<RejectedNode> rejected;
  /// Nodes claimed by a higher-priority backend that a lower one wanted.
  std::vector<ContestedNode> contested;
  /// Properties that did not run, as "backend/property: why" (e.g. an
  /// inference-only property when partitioning for training).
  std::vector<std::string> skipped;
  /// Wall time of partitioning, in milliseconds.
  double partitionMs = 0.0;
};

/// The report as JSON text (layout in the file comment).
std::string reportToJson(const PartitionReport& report, int indent = 2);
/// A human-readable summary: totals, a per-backend/property table, and the
/// most common reasons for nodes left out.
void printReportSummary(const PartitionReport& report, std::ostream& os);

}  // namespace subgraph::partition
