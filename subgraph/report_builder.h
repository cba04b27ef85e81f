//===- subgraph/report_builder.h - The partition report of one run -*- C++ -*-===//
//
// Builds the PartitionReport of a partitionGraph() call (internal to
// subgraph_partition) from what the passes left in the RunState: the
// regions the surgery reported, a reason for every node of the input graph
// in no region, the nodes a lower-priority backend wanted but a higher one
// took (contested), and the reports of the nested graphs under their
// scope. The report is the largest thing a run builds besides the fused
// graph, so it is written compactly and in one pass over the input order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "subgraph/partition/partition_report.h"
#include "subgraph/partition/partitioner.h"
#include "subgraph/partition_run.h"

namespace subgraph::partition::detail {

/// For every node of the input graph that no pass has taken yet, a bit per
/// backend index (1 to 63) saying that a property of that lower-priority
/// backend would seed a region at it: the nodes fillReport() lists as
/// contested when a higher-priority backend takes them. Asked before the
/// first pass, since the passes fuse what it asks about.
std::vector<uint64_t> lowerPriorityWishes(const RunState& run, std::span<SubgraphBackend> backends,
                                          const PartitionOptions& options);

/// Completes `run.report` after the last pass: counts the nodes in regions,
/// lists the contested ones (`wanted`, from lowerPriorityWishes(), or empty)
/// and gives every other node of `inputOrder` (the input graph's node ids
/// in topological order) its reason. Moves the reason texts out of
/// `run.reasons`.
void fillReport(RunState& run, const std::vector<NodeId>& inputOrder,
                const std::vector<uint64_t>& wanted, std::span<SubgraphBackend> backends);

/// Adds `nested`, the report of a graph held in attribute `attr` of
/// `owner`, to `report`: its regions and left-out nodes under their scope
/// (`owner.attr`, joined by '/' deeper down), and its counts.
void mergeNestedReport(PartitionReport&& nested, const Node& owner, const std::string& attr,
                       PartitionReport& report);

}  // namespace subgraph::partition::detail
