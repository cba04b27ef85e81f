//===- subgraph/region_surgery.h - Committed regions into fused nodes -*- C++ -*-===//
//
// The graph surgery of one property's pass (internal to subgraph_partition).
// The pass's policy (property_pass.h) decides which regions stand and hands
// each accepted one over; this keeps them pending while the pass goes on,
// and once every seed was visited turns them into fused nodes: it runs the
// connection hooks for all of them before the graph changes, reports each
// region, removes (or, for a property that fuses without bodies, moves into
// the body) its members, drops the values only regions read, and adds each
// fused node on the region's outer values. The escaping values are reused
// as the fused nodes' outputs, so value names, graph inputs and graph
// outputs are unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "subgraph/partition/subgraph_property.h"
#include "subgraph/partition_run.h"
#include "subgraph/region_body.h"

namespace subgraph::partition::detail {

/// The regions one pass accepted, and their replacement by fused nodes.
class RegionSurgery {
 public:
  /// Surgery for the pass of `property` of `backend` (`label` is
  /// "backend/property", `options` the property's). `lateBodies`: the
  /// property FusesWithoutBody(), so no body exists before surgery, which
  /// then moves the members into it.
  RegionSurgery(RunState& run, PassScratch& tables, const std::string& backend,
                const SubgraphProperty& property, const PropertyOptions& options,
                const std::string& label, bool lateBodies);

  /// The name of region `regionId`'s body graph, the default fused-node
  /// name (fused_name.h).
  std::string bodyName(int regionId) const;
  /// Copies `part` (in rank order) into the body of region `regionId`, for
  /// CreateSubgraphNode to judge; the constants it inlines are listed for
  /// the surgery until discardBody() or add().
  RegionBody buildBody(std::span<Node* const> part, int regionId);
  /// Forgets the constants the last buildBody() listed: its region was
  /// rejected and its body is dropped.
  void discardBody();
  /// Takes region `regionId`, whose members `part` (in rank order) were
  /// just contracted in the quotient DAG, with its body and fused node
  /// (both empty where the bodies come late), and marks its members taken
  /// by it (PassScratch::taken holds the region id).
  void add(int regionId, std::span<Node* const> part, RegionBody body, FusedNode fused);

  /// True if no region was added (or, after materializeAll(), is left).
  bool empty() const { return pending_.empty(); }

  /// Runs the connection hooks of every region and checks what they gave,
  /// before anything changes the graph, so a hook that breaks its contract
  /// fails the pass with the graph as the pass found it. Fills in the
  /// default fused-node op and name.
  Status connectAll();
  /// Reports every region, replaces its members by its fused node and
  /// returns the fused nodes, in region order.
  std::vector<FusedRegion> materializeAll();

 private:
  // A region accepted by its property and awaiting surgery. Kept small,
  // with its members in the pass-wide members_ list rather than a vector
  // of its own: a pass may hold hundreds of thousands of these.
  struct PendingRegion {
    int id = 0;
    uint32_t rank = 0;       // of its group, read before the members go
    size_t firstMember = 0;  // members are members_[firstMember, +numMembers)
    size_t numMembers = 0;
    RegionBody body;
    FusedNode fused;
  };
  std::span<Node* const> membersOf(const PendingRegion& region) const {
    return std::span<Node* const>(members_).subspan(region.firstMember, region.numMembers);
  }
  Status fail(const std::string& message) const { return propertyError(label_, message); }

  // connectAll()'s checks of what the hooks gave the region at `index`.
  Status checkInputs(const PendingRegion& region, const std::string& which) const;
  Status checkOutputs(const PendingRegion& region, const std::string& which);

  // materializeAll()'s steps, in order.
  std::vector<Value*> reportAndRemoveMembers();
  void reportMembers(PendingRegion& region);
  void moveIntoBody(PendingRegion& region);
  void listInternal(const PendingRegion& region, std::vector<Value*>& internal) const;
  void reportConnections(const PendingRegion& region);
  void removeDeadValues(std::vector<Value*> internal);
  std::vector<FusedRegion> addFusedNodes();
  // Drops the entries of inlined_ from `from` on that an earlier region
  // already listed.
  void keepNewInlined(size_t from);

  RunState& run_;
  Graph& graph_;
  PassScratch& tables_;
  RegionBodyBuilder& bodies_;
  const std::string& backend_;
  const SubgraphProperty& property_;
  const PropertyOptions& options_;
  const std::string& label_;
  const bool lateBodies_;
  // Tells this surgery's marks in PassScratch::inlinedBy and readByFused
  // from those of the surgeries before it.
  const uint32_t serial_;
  // For defaultFusedNode() of late bodies: the backend and property, and
  // the id of the region at hand.
  RegionInfo info_;

  // A deque: growing it never moves (or transiently doubles) the regions.
  std::deque<PendingRegion> pending_;
  std::vector<Node*> members_;    // members of the pending regions, in order
  std::vector<Value*> inlined_;   // outer constants the bodies inlined
  size_t inlinedMark_ = 0;        // inlined_'s size before the last buildBody()
  std::vector<Value*> escaping_;  // connectAll's copy of a region's outputs
  std::vector<Value*> touched_;   // outer values whose uses name moved nodes
  std::string variant_;           // the region being reported's variant
};

}  // namespace subgraph::partition::detail
