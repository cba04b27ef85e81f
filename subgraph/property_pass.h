//===- subgraph/property_pass.h - A property's regions: the policy -*- C++ -*-===//
//
// The region-forming policy of the partitioner (internal to
// subgraph_partition): which nodes a property's selector is offered as
// seeds, how a region grows from a seed, what happens when the region
// would close a cycle (exclude and retry) or when Filter keeps only part
// of it (split into convex parts, or reject), when a region is too small
// or rejected by its property, and the reason every node left out gets.
// Cycle safety is the quotient DAG's (quotient_dag.h); turning the
// accepted regions into fused nodes is the surgery's (region_surgery.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "subgraph/partition/pattern_selector.h"
#include "subgraph/partition/subgraph_property.h"
#include "subgraph/partition/subgraph_selector.h"
#include "subgraph/partition_run.h"
#include "subgraph/quotient_dag.h"
#include "subgraph/region_surgery.h"
#include "subgraph/seed_index.h"

namespace subgraph::partition::detail {

/// One property's part of a backend's traversal (backend_pass.h): its
/// selector, the regions it forms from the seeds it is offered, and their
/// surgery.
///
/// Methodology, per seed offered:
///  1. Select the seed (nodes already in a region, fused nodes and nodes
///     of other graphs are never offered).
///  2. Grow the region breadth-first from the seed through SelectInput and
///     SelectOutput over available neighbours. Each member's edges are
///     scanned once per attempt: O(region + its edges). A plain
///     PatternSelector's region is its match, taken without growing, and
///     its Filter (which keeps the whole match) is not asked.
///  3. Check the region for cycles against the quotient DAG, i.e. against
///     the graph and every region committed so far, by any property: a
///     path that leaves the region and re-enters it only visits groups
///     ranked inside the region's rank window, so the search from its
///     escaping edges is bounded by that window, and a region whose
///     escaping edges all leave the window (such as a single-consumer
///     chain) needs no search.
///  4. If members are re-entered, exclude them (the re-entered side, or
///     the re-entering side when the seed itself is re-entered), Reset the
///     selector and retry from step 2. Each retry excludes at least one
///     node, and what remains after removing the re-entered members is
///     convex, so one retry almost always suffices.
///  5. Pass the convex region to Filter. If Filter keeps everything the
///     region stands; otherwise the kept set is split into connected
///     components and each component, while not convex, into its convex
///     parts by the same re-entry search (or rejected, per FilterSplit).
///     Each part is checked after the previous ones were committed, since
///     parts that are convex one by one can still form a cycle together.
///  6. For each part of at least minRegionSize nodes, extract its body and
///     ask CreateSubgraphNode. On acceptance contract the part into one
///     group, restoring the rank order with a Pearce-Kelly reorder
///     confined to the window (QuotientDag::contract).
/// After the traversal, the connection hooks run and each region is
/// replaced by its fused node, reusing the escaping values so that names,
/// graph inputs and graph outputs are unchanged (RegionSurgery).
/// Contracting only convex sets keeps the quotient DAG acyclic, so the
/// fused graph is too.
///
/// Cost: O(sum over regions of (edges of the region + groups and edges
/// visited in its rank window) x retries) plus one Select per seed
/// offered. Neural-network graphs have bounded width, the depth-first
/// ranks keep producer-consumer chains adjacent, and retries are rare, so
/// windows and retries are O(1); see docs/partitioning.md for the argument
/// and the measured scaling.
class PropertyPass final : private PartitionState {
 public:
  /// The part of `property`, a property of backend `backend` (index
  /// `backendIndex` in priority order), in a traversal of `run.graph`.
  PropertyPass(RunState& run, PassScratch& tables, const std::string& backend, size_t backendIndex,
               SubgraphProperty& property);

  /// PrePartition and the selector; before the traversal.
  Status start();
  /// Offers `seed`, an available node of the traversal, to Select, and
  /// forms, checks and commits its region if selected.
  Status offer(Node* seed) { return formRegionFrom(seed); }
  /// After the traversal: the selector's SelectionStatus, then the
  /// connection hooks of every region (before the graph changes).
  Status connect();
  /// Replaces the committed regions by their fused nodes, in region order.
  std::vector<FusedRegion> materialize();
  /// PostPartition with this property's fused regions.
  Status postPartition(const std::vector<FusedRegion>& fused);
  /// True if this part committed no region.
  bool empty() const { return surgery_.empty(); }
  /// True if the property fuses without bodies: its surgery moves the
  /// members into bodies, for which the body builder must know the graph
  /// as it is then (RegionBodyBuilder::reset).
  bool lateBodies() const { return lateBodies_; }
  /// The ops the property's seeds may have (empty: any).
  std::vector<std::string> seedOpTypes() const { return property_.SeedOpTypes(); }
  /// Lets a pattern's selector know if a required node (not the anchor)
  /// has op types no node of `order` has, so that it turns every anchor
  /// down without a search (PatternSelector::assumeMissing).
  void checkRequiredOps(SeedIndex& seeds, const std::vector<Node*>& order);
  /// backend/property, as reasons name the property.
  const std::string& label() const { return label_; }
  /// An error of this property, naming it.
  Status fail(const std::string& message) const { return propertyError(label_, message); }

 private:
  bool available(const Node& node) const override {
    return node.graph() == &graph_ && isAvailable(run_, tables_, node);
  }
  void prepareRegionTables();

  Status formRegionFrom(Node* seed);
  /// notSelectedPrefix_ followed by `reason`.
  std::string notSelected(const std::string& reason) const;
  void grow(Node* seed);
  void takeMatch();
  void excludeForCycle(Node* seed, std::vector<Reentry> reentered);
  std::string cycleReason(const Reentry& r) const;
  Status filterAndCommit();
  Status markKept(const std::vector<const Node*>& kept);
  std::vector<Node*> dropFiltered();
  void commitUnsplit(const std::vector<Node*>& kept);
  void commitConvexParts(std::vector<Node*> kept);
  std::vector<std::vector<Node*>> connectedComponents(const std::vector<Node*>& nodes);
  void commit(std::span<Node* const> part);

  RunState& run_;
  Graph& graph_;
  PassScratch& tables_;
  QuotientDag& dag_;
  std::vector<int>& taken_;           // pending region id by node id, or -1
  std::vector<uint32_t>& excluded_;   // == seedMark: excluded for this seed
  std::vector<uint32_t>& candidate_;  // == candidateMark: in the grown region
  std::vector<uint32_t>& scratch_;    // == scratchMark: Filter result, components
  size_t backendIndex_;
  SubgraphProperty& property_;
  const PropertyOptions options_;
  const std::string label_;
  // The property accepts every region as defaultFusedNode() would, so no
  // body is built before surgery, which then moves the members into it.
  const bool lateBodies_;

  std::unique_ptr<SubgraphSelectorV2> selector_;
  // The selector when it is a PatternSelector, which then defers the
  // reasons that name a node (noteDeferred).
  PatternSelector* pattern_ = nullptr;
  // The selector is a PatternSelector itself, not a subclass that may
  // grow or filter otherwise: its region is its match (takeMatch()).
  bool exactPattern_ = false;
  // "not selected by B/P: ", before every reason a seed is turned down for.
  const std::string notSelectedPrefix_;
  std::vector<Node*> region_;
  RegionInfo info_;                      // reused for every CreateSubgraphNode call
  std::vector<const Node*> candidates_;  // what Filter is offered
  RegionSurgery surgery_;                // the accepted regions, and their surgery
};

}  // namespace subgraph::partition::detail
