//===- subgraph/partitioner.cpp - The partition pass ----------------------===//
//
// Runs one traversal per active backend, in priority order, then proves
// the result acyclic, builds the report and partitions the graphs that
// control-flow nodes hold. This file is the orchestration only; the parts
// live beside it:
//  * backend_pass.h: a backend's traversal, offering each node to the
//    properties it can seed;
//  * property_pass.h: a property's regions, the policy (growth, retries,
//    Filter, rejection, reasons);
//  * region_surgery.h: the accepted regions turned into fused nodes;
//  * quotient_dag.h and rank_proof.h: cycle safety, and the final proof of
//    it from the ranks;
//  * report_builder.h: the PartitionReport;
//  * partition_run.h: the state the passes of one run share.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/partitioner.h"

#include <chrono>
#include <cstdint>

#include "subgraph/backend_pass.h"
#include "subgraph/ir/captures.h"
#include "subgraph/partition_run.h"
#include "subgraph/rank_proof.h"
#include "subgraph/report_builder.h"

namespace subgraph::partition {
namespace {

using detail::PassScratch;
using detail::RunState;

// The properties of backend `b` that partitioning runs, in registration
// order: not the inference-only ones when partitioning for training.
StatusOr<std::vector<SubgraphProperty*>> activeProperties(RunState& run,
                                                          const SubgraphBackend& backend,
                                                          const PartitionOptions& options) {
  std::vector<SubgraphProperty*> active;
  for (const auto& property : backend.properties) {
    if (!property)
      return Status::invalid("subgraph backend '" + backend.name + "' has a null property");
    if (options.forTraining && property->options().inferenceOnly) {
      run.report.skipped.push_back(backend.name + "/" + property->name() +
                                   ": inference-only, and the graph is partitioned for training");
      continue;
    }
    active.push_back(property.get());
  }
  return active;
}

// How many of `properties` (at least one) share the next traversal: a run
// of properties without hooks, or a property with hooks alone, whose
// hooks must see the graph as the properties before it fused it.
size_t segmentSize(std::span<SubgraphProperty* const> properties, Traversal traversal) {
  if (traversal == Traversal::kPerProperty || properties.front()->HasPartitionHooks()) return 1;
  size_t size = 1;
  while (size < properties.size() && !properties[size]->HasPartitionHooks()) ++size;
  return size;
}

// Runs the traversals of every backend (backend_pass.h), highest priority
// first: one per run of properties without hooks, one per property with
// hooks, or one per property where the options ask for the older order.
Status runPasses(RunState& run, PassScratch& tables, std::span<SubgraphBackend> backends,
                 const PartitionOptions& options) {
  for (size_t b = 0; b < backends.size(); ++b) {
    run.report.backends.push_back(backends[b].name);
    StatusOr<std::vector<SubgraphProperty*>> active = activeProperties(run, backends[b], options);
    if (!active) return active.status();
    std::span<SubgraphProperty* const> all(active.value());
    for (size_t first = 0, size = 0; first < all.size(); first += size) {
      size = segmentSize(all.subspan(first), options.traversal);
      detail::BackendPass pass(run, tables, backends[b].name, b, all.subspan(first, size));
      Status passed = pass.run();
      if (!passed.isOk()) {
        if (options.failedBackend) *options.failedBackend = backends[b].name;
        return passed;
      }
    }
  }
  return Status::ok();
}

// Contracting only convex sets keeps the result acyclic; check it anyway,
// cheaply through the ranks (the last pass's new edges where it added
// nothing else, else every edge), and with a full sort where they cannot
// tell.
Status checkAcyclic(Graph& graph, PassScratch& tables, const RunState& run) {
  const std::span<const uint32_t> fusedRanks = run.fusedRank;
  bool ordered = tables.dagIsCurrent;
  if (!ordered && tables.onlyFusedEdgesAdded) {
    ordered = detail::fusedEdgesFollowRanks(graph, tables.lastFused, tables.dag, fusedRanks);
#ifndef NDEBUG
    // Debug builds (the sanitizer preset) also read every edge, which
    // checks the quotient DAG's rank invariant itself on every test graph.
    if (ordered && !detail::ranksOrderEveryEdge(graph, tables.dag, fusedRanks))
      return Status(StatusCode::kInternal,
                    "partitioner bug: the ranks order the fused edges but not the graph");
#endif
  } else if (!ordered) {
    ordered = detail::ranksOrderEveryEdge(graph, tables.dag, fusedRanks);
  }
  if (!ordered) {
    Status acyclic = tables.dag.init(graph);
    if (!acyclic)
      return Status(StatusCode::kInternal,
                    "partitioned graph is not acyclic: " + acyclic.message());
  }
  return Status::ok();
}

StatusOr<PartitionReport> partitionScoped(Graph& graph, std::span<SubgraphBackend> backends,
                                          const PartitionOptions& options, int firstRegionId,
                                          std::vector<const Graph*>& enclosing);

// Partitions the graphs held by the nodes `controlFlow` of `graph` (If
// branches, Loop and Scan bodies) for the same backends, with the same
// guarantees, so a network wrapped in an If on a runtime input (as speech
// models are) is fused like any other. A nested graph is shared by every
// clone of its owner (Graph::clone() shares attributes), so it is
// partitioned as a copy that then replaces it on this node alone. A node
// that a region took meanwhile keeps its graphs as they were.
Status partitionNestedGraphs(Graph& graph, const std::vector<NodeId>& controlFlow,
                             std::span<SubgraphBackend> backends, const PartitionOptions& options,
                             int& nextRegionId, PartitionReport& report,
                             std::vector<const Graph*>& enclosing) {
  enclosing.push_back(&graph);
  for (NodeId id : controlFlow) {
    Node* node = graph.node(id);
    if (!node || !node->domain().empty()) continue;
    std::vector<Attribute> attrs(node->attributes().begin(), node->attributes().end());
    for (const Attribute& attr : attrs) {
      if (attr.kind() != AttrKind::kGraph || !attr.asGraph()) continue;
      std::shared_ptr<Graph> copy = attr.asGraph()->clone();
      adoptCapturedConstants(*copy, enclosing);
      StatusOr<PartitionReport> nested =
          partitionScoped(*copy, backends, options, nextRegionId, enclosing);
      if (!nested.isOk()) {
        enclosing.pop_back();
        return Status(nested.status().code(),
                      node->displayName() + "." + attr.name() + ": " + nested.status().message());
      }
      nextRegionId += static_cast<int>(nested->regions.size());
      detail::mergeNestedReport(std::move(nested).value(), *node, attr.name(), report);
      node->setAttr(attr.name(), std::move(copy));
    }
  }
  enclosing.pop_back();
  return Status::ok();
}

// Partitions `graph`, then the graphs its control-flow nodes hold, with
// region ids from `firstRegionId` on so that fused-node names stay unique
// across the nesting.
StatusOr<PartitionReport> partitionScoped(Graph& graph, std::span<SubgraphBackend> backends,
                                          const PartitionOptions& options, int firstRegionId,
                                          std::vector<const Graph*>& enclosing) {
  const auto start = std::chrono::steady_clock::now();
  RunState run(graph);
  run.nextRegionId = run.firstRegionId = firstRegionId;
  PassScratch tables(graph);
  // One look at every node's attributes finds the control flow: the nodes
  // whose nested graphs read values of this graph by name, and whose
  // graphs are partitioned after it.
  std::vector<NodeId> controlFlow;
  for (const Node* n : graph.nodes())
    if (holdsNestedGraph(*n)) controlFlow.push_back(n->id());
  for (NodeId id : controlFlow) tables.captured.merge(capturedNames(*graph.node(id)));
  Status valid = tables.dag.init(graph);
  if (!valid) return Status::invalid("cannot partition: " + valid.message());
  tables.dagIsCurrent = true;
  tables.seeds.invalidate();
  const std::vector<NodeId> inputOrder = tables.dag.orderIds();
  run.report.phases.rankMs += detail::millisSince(start);

  std::vector<uint64_t> wanted;
  if (options.reportContested && backends.size() > 1)
    wanted = detail::lowerPriorityWishes(run, backends, options);
  SUBGRAPH_RETURN_IF_ERROR(runPasses(run, tables, backends, options));
  auto phase = std::chrono::steady_clock::now();
  SUBGRAPH_RETURN_IF_ERROR(checkAcyclic(graph, tables, run));
  run.report.phases.proofMs += detail::millisSince(phase);

  phase = std::chrono::steady_clock::now();
  run.report.nodesTotal = inputOrder.size();
  detail::fillReport(run, inputOrder, wanted, backends);
  run.report.phases.reportMs += detail::millisSince(phase);
  SUBGRAPH_RETURN_IF_ERROR(partitionNestedGraphs(graph, controlFlow, backends, options,
                                                 run.nextRegionId, run.report, enclosing));
  run.report.partitionMs = detail::millisSince(start);
  return std::move(run.report);
}

}  // namespace

StatusOr<PartitionReport> partitionGraph(Graph& graph, std::span<SubgraphBackend> backends,
                                         const PartitionOptions& options) {
  std::vector<const Graph*> enclosing;
  return partitionScoped(graph, backends, options, 0, enclosing);
}

StatusOr<PartitionReport> partitionGraph(Graph& graph, const std::vector<std::string>& backendNames,
                                         const PartitionOptions& options) {
  auto backends = instantiateBackends(backendNames);
  if (!backends) return backends.status();
  return partitionGraph(graph, std::span<SubgraphBackend>(backends.value()), options);
}

}  // namespace subgraph::partition
