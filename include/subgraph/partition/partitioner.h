//===- subgraph/partition/partitioner.h - The partition pass -*- C++ -*-===//
//
// Carves fused regions out of a graph for a list of backends and replaces
// each region with one fused node. Backends propose regions through their
// properties' selectors; only this pass decides, and it guarantees:
//  * the partitioned graph is acyclic, including across regions;
//  * every region is connected and convex (no path leaves it and returns);
//  * each node is in at most one region;
//  * graph inputs and outputs, their order and their names are unchanged,
//    and every value keeps its name;
//  * a fused node reads each outer value once and defines each escaping
//    value once (duplicates are merged);
//  * the same graph and backends give the same regions;
//  * the cost is near-linear in nodes plus edges (docs/partitioning.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <span>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/partition/backend_registry.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/support/status.h"

namespace subgraph::partition {

/// When the graph changes between the properties of one backend.
enum class Traversal {
  /// One ranking and one surgery per backend (the default): each property,
  /// in registration order, walks the nodes it can seed, and the regions
  /// of all of them become fused nodes at the end.
  kPerBackend,
  /// One ranking, walk and surgery per property, each over the graph the
  /// previous one fused: the older and slower order. The regions differ
  /// from kPerBackend's only for a selector that tells a fused neighbour
  /// from a neighbour taken by an earlier region of the same backend.
  kPerProperty,
};

/// Options of one partitioning run.
struct PartitionOptions {
  /// When the graph changes between the properties of one backend.
  Traversal traversal = Traversal::kPerBackend;
  /// The graph is partitioned for training: properties with
  /// PropertyOptions::inferenceOnly are skipped.
  bool forTraining = false;
  /// Before partitioning, ask every lower-priority backend which nodes it
  /// would seed, to report nodes a higher-priority backend claimed from it
  /// (PartitionReport::contested). Costs one Select call per node and
  /// property of those backends.
  bool reportContested = true;
  /// Where a property's pass fails, the name of its backend is stored
  /// here (when not null), so a caller can fall back without it
  /// (plugins::BackendSelection::partitionWithFallback). Left unchanged by
  /// failures that are no backend's, such as a cycle in the input.
  std::string* failedBackend = nullptr;
};

/// Partitions `graph` in place for `backends`, highest priority first, and
/// each backend's properties in registration order: each property is
/// offered the nodes it can seed that no earlier property or backend took
/// (PartitionOptions::traversal says when the graph changes); fused nodes
/// are never offered to selectors, so a node is claimed by at most one
/// region. On error (a cycle in the input,
/// a selector or hook breaking its contract) the graph may be partly
/// partitioned but stays valid and acyclic, and the message names the
/// property and node involved.
StatusOr<PartitionReport> partitionGraph(Graph& graph, std::span<SubgraphBackend> backends,
                                         const PartitionOptions& options = {});

/// Like above, with backends instantiated by name from the global registry
/// (see instantiateBackends).
StatusOr<PartitionReport> partitionGraph(Graph& graph, const std::vector<std::string>& backendNames,
                                         const PartitionOptions& options = {});

}  // namespace subgraph::partition
