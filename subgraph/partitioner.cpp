//===- subgraph/partitioner.cpp - The partition pass ----------------------===//
//
// Runs every property of every active backend as one pass over the graph,
// carving convex regions with the property's selector and replacing each
// with one fused node. The cycle safety and the near-linear cost come from
// the ranked quotient DAG (quotient_dag.h); this file is the policy around
// it: seeds, growth, retries, Filter, rejection, reasons and graph surgery.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/partitioner.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <set>
#include <string_view>
#include <unordered_map>

#include "subgraph/ir/captures.h"
#include "subgraph/quotient_dag.h"
#include "subgraph/region_body.h"
#include "subgraph/seed_index.h"

namespace subgraph::partition {
namespace {

using detail::QuotientDag;
using detail::Reentry;
using detail::RegionBody;
using detail::RegionBodyBuilder;
using detail::SeedIndex;

// Why a node of the input graph is in no region, weakest first: a later
// pass may replace a reason by a stronger one, never by a weaker one.
enum class ReasonKind : uint8_t {
  kNone,
  kNoSelector,
  kAlreadyFused,
  kCycle,
  kFilter,
  kMinSize,
  kRejected,
};
constexpr size_t kReasonKinds = static_cast<size_t>(ReasonKind::kRejected) + 1;

const char* reasonKindName(ReasonKind kind) {
  switch (kind) {
    case ReasonKind::kNone:
    case ReasonKind::kNoSelector: return "no-selector";
    case ReasonKind::kAlreadyFused: return "already-fused";
    case ReasonKind::kCycle: return "cycle";
    case ReasonKind::kFilter: return "filter";
    case ReasonKind::kMinSize: return "min-size";
    case ReasonKind::kRejected: return "rejected";
  }
  return "no-selector";
}

// Reasons of the nodes of the input graph: a kind per node, and a text for
// the few that have one (a selector that says nothing leaves it empty), so
// a large graph pays five bytes per node rather than a string per node.
// The texts sit in one list, found through an index per node rather than
// a hash map: at 10^6 nodes, with a text for one node in thirteen (the
// residual benchmark), each map lookup and insertion was a cache miss in
// a chained bucket. A text equal to the one noted just before is shared
// (a rejected region notes the same text for each member, one after the
// other); other repeats are stored again, and a replaced text stays in
// the list until the run ends.
class NodeReasons {
 public:
  /// What textIndex() returns for a node without a text.
  static constexpr uint32_t kNoText = UINT32_MAX;

  explicit NodeReasons(size_t nodes) : kinds_(nodes, ReasonKind::kNone), textOf_(nodes, kNoText) {}
  ReasonKind kind(NodeId id) const { return kinds_[id]; }
  /// Index of the node's text in texts(), or kNoText.
  uint32_t textIndex(NodeId id) const { return textOf_[id]; }
  bool hasText(NodeId id) const { return textOf_[id] != kNoText; }
  std::vector<std::string>& texts() { return texts_; }
  void set(NodeId id, ReasonKind kind, std::string text) {
    kinds_[id] = kind;
    if (text.empty()) {
      textOf_[id] = kNoText;
      return;
    }
    if (texts_.empty() || texts_.back() != text) texts_.push_back(std::move(text));
    textOf_[id] = static_cast<uint32_t>(texts_.size() - 1);
  }

 private:
  std::vector<ReasonKind> kinds_;
  std::vector<uint32_t> textOf_;  // index into texts_, or kNoText
  std::vector<std::string> texts_;
};

bool isFusedOp(const Node& node) { return node.domain().starts_with("subgraph."); }

// State shared by all passes of one partitionGraph() call. Tables indexed by
// input-graph node id cover the nodes that can end up in regions; fused
// nodes made by a pass get ids past inputBound.
struct RunState {
  explicit RunState(Graph& g) : graph(g), inputBound(g.nodeIdBound()), reasons(inputBound) {
    regionOf.assign(inputBound, -1);
    // `fused` covers only the fused nodes this run makes (markFused). Those
    // already in the input are recognized by their op where it matters
    // (isFused(), fillReport) rather than by a pass over every node here:
    // on a large graph each node's first touch is a cache miss.
  }

  void note(const Node& node, ReasonKind kind, std::string text) {
    if (node.id() >= inputBound) return;
    const NodeId id = node.id();
    if (kind == ReasonKind::kNoSelector) {
      if (reasons.kind(id) > ReasonKind::kNoSelector) return;
      if (text.empty() && reasons.hasText(id)) return;
    }
    reasons.set(id, kind, std::move(text));
  }

  // Made by this run, or already fused in the input.
  bool isFused(const Node& node) const {
    return (node.id() < fused.size() && fused[node.id()]) || isFusedOp(node);
  }
  // `rank`: the rank of the region's group in the pass's quotient DAG.
  void markFused(const Node& node, int region, uint32_t rank) {
    if (fused.size() <= node.id()) {
      fused.resize(node.id() + 1, 0);
      fusedRegion.resize(node.id() + 1, -1);
      fusedRank.resize(node.id() + 1, QuotientDag::kNoRank);
    }
    fused[node.id()] = 1;
    fusedRegion[node.id()] = region;
    fusedRank[node.id()] = rank;
  }
  // The rank markFused() recorded for a fused node, or kNoRank.
  uint32_t rankOfFused(const Node& node) const {
    return node.id() < fusedRank.size() ? fusedRank[node.id()] : QuotientDag::kNoRank;
  }
  // Region id of a fused node made in this run, or -1.
  int regionOfFused(const Node& node) const {
    return node.id() < fusedRegion.size() ? fusedRegion[node.id()] : -1;
  }

  Graph& graph;
  NodeId inputBound;
  NodeReasons reasons;
  std::vector<int> regionOf;
  std::vector<uint8_t> fused;
  std::vector<int> fusedRegion;
  std::vector<uint32_t> fusedRank;
  std::vector<size_t> regionBackend;  // by region id: index of its backend
  PartitionReport report;
  int nextRegionId = 0;
};

// Id-indexed working tables shared by every pass of one run, reused:
// allocating them per pass would, after a pass has freed thousands of
// nodes, make the allocator consolidate all those chunks each time. They
// are sized for the input graph, not for the fused nodes the passes add:
// the heap peaks at the end of a pass, when the region bodies exist and
// the members they replace are not yet freed, so room reserved then for
// later passes would add to the peak, while growing a table afterwards,
// once the members are gone, does not.
struct PassScratch {
  explicit PassScratch(const Graph& graph) {
    size_t nodes = graph.nodeIdBound() + 64;
    size_t values = graph.valueIdBound() + 64;
    dag.reserve(nodes);
    bodies.reserve(nodes, values);
    for (auto* table : {&excluded, &candidate, &scratch}) table->reserve(nodes);
    taken.reserve(nodes);
    inlined.reserve(values);
  }

  QuotientDag dag;
  bool dagIsCurrent = false;  // dag was initialized on the graph as it is now
  SeedIndex seeds;            // over dag's order; invalidated with every init
  RegionBodyBuilder bodies;
  std::vector<int> taken;
  std::vector<uint32_t> excluded;
  std::vector<uint32_t> candidate;
  std::vector<uint32_t> scratch;
  std::vector<uint8_t> inlined;  // by value id: 1 constant already listed, 2 read by a fused node
  // Names that nested graphs (If, Loop, Scan bodies) read from the graph.
  // Fusing keeps outer names, so the set taken before the first pass holds
  // for every pass.
  std::set<std::string> captured;
  // The fused nodes the last pass made, and whether the edges they hold
  // are the only ones added to the graph since the quotient DAG's ranks
  // were computed (no hook added an edge or a node).
  std::vector<const Node*> lastFused;
  bool onlyFusedEdgesAdded = false;
};

/// One property's pass over the graph.
///
/// Methodology:
///  1. Rank the nodes by a deterministic, locality-preserving topological
///     order and make each node its own group of the quotient DAG
///     (QuotientDag::init). O(V + E).
///  2. Offer every available node, in rank order, to Select as a seed;
///     nodes already in a region, fused nodes and nodes of other graphs
///     are never offered. One Select per node: O(V).
///  3. Grow the region breadth-first from the seed through SelectInput and
///     SelectOutput over available neighbours. Each member's edges are
///     scanned once per attempt: O(region + its edges).
///  4. Check the region for cycles against the quotient DAG, i.e. against
///     the graph and every region committed so far: a path that leaves
///     the region and re-enters it only visits groups ranked inside the
///     region's rank window, so the search from its escaping edges is
///     bounded by that window, and a region whose escaping edges all leave
///     the window (such as a single-consumer chain) needs no search.
///  5. If members are re-entered, exclude them (the re-entered side, or
///     the re-entering side when the seed itself is re-entered), Reset the
///     selector and retry from step 3. Each retry excludes at least one
///     node, and what remains after removing the re-entered members is
///     convex, so one retry almost always suffices.
///  6. Pass the convex region to Filter. If Filter keeps everything the
///     region stands; otherwise the kept set is split into connected
///     components and each component, while not convex, into its convex
///     parts by the same re-entry search (or rejected, per FilterSplit).
///     Each part is checked after the previous ones were committed, since
///     parts that are convex one by one can still form a cycle together.
///  7. For each part of at least minRegionSize nodes, extract its body and
///     ask CreateSubgraphNode. On acceptance contract the part into one
///     group, restoring the rank order with a Pearce-Kelly reorder
///     confined to the window (QuotientDag::contract).
///  8. After all seeds, run the connection hooks, then replace each region
///     by its fused node, reusing the escaping values so that names, graph
///     inputs and graph outputs are unchanged. Contracting only convex
///     sets keeps the quotient DAG acyclic, so the fused graph is too.
///
/// Cost: O((V + E) + sum over regions of (edges of the region + groups and
/// edges visited in its rank window) x retries). Neural-network graphs have
/// bounded width, the depth-first ranks keep producer-consumer chains
/// adjacent, and retries are rare, so windows and retries are O(1) and the
/// pass is linear in practice; see docs/partitioning.md for the argument
/// and the measured scaling.
class PropertyPass final : private PartitionState {
 public:
  PropertyPass(RunState& run, PassScratch& tables, const std::string& backend, size_t backendIndex,
               SubgraphProperty& property)
      : run_(run),
        graph_(run.graph),
        tables_(tables),
        dag_(tables.dag),
        bodies_(tables.bodies),
        taken_(tables.taken),
        excluded_(tables.excluded),
        candidate_(tables.candidate),
        scratch_(tables.scratch),
        backend_(backend),
        backendIndex_(backendIndex),
        property_(property),
        options_(property.options()),
        label_(backend + "/" + property.name()),
        lateBodies_(property.FusesWithoutBody()) {
    info_.backend = backend;
    info_.property = property.name();
  }

  Status run();

 private:
  // A region accepted by its property and awaiting graph surgery. Kept
  // small, with its members in the pass-wide members_ list rather than a
  // vector of its own: a pass may hold hundreds of thousands of these.
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

  bool available(const Node& node) const override {
    if (node.graph() != &graph_ || run_.isFused(node)) return false;
    // Before the first selected seed nothing is taken or excluded, and the
    // tables saying so are not filled yet.
    return !regionTables_ || (taken_[node.id()] < 0 && excluded_[node.id()] != seedMark_);
  }
  void prepareRegionTables();
  Status fail(const std::string& message) const {
    return Status::invalid("subgraph property " + label_ + ": " + message);
  }

  Status formRegionFrom(Node* seed);
  void grow(Node* seed);
  void excludeForCycle(Node* seed, std::vector<Reentry> reentered);
  std::string cycleReason(const Reentry& r) const;
  Status filterAndCommit();
  void commitConvexParts(std::vector<Node*> kept);
  std::vector<std::vector<Node*>> connectedComponents(const std::vector<Node*>& nodes);
  void commit(std::span<Node* const> part);
  std::string bodyName(int regionId) const;
  // Drops the entries of inlined_ from `from` on that an earlier region
  // already listed.
  void keepNewInlined(size_t from);
  Status connectAll();
  std::vector<FusedRegion> materializeAll();

  RunState& run_;
  Graph& graph_;
  PassScratch& tables_;
  QuotientDag& dag_;
  RegionBodyBuilder& bodies_;
  std::vector<int>& taken_;           // pending region index by node id, or -1
  std::vector<uint32_t>& excluded_;   // == seedMark_: excluded for this seed
  std::vector<uint32_t>& candidate_;  // == candidateMark_: in the grown region
  std::vector<uint32_t>& scratch_;    // == scratchMark_: Filter result, components
  const std::string& backend_;
  size_t backendIndex_;
  SubgraphProperty& property_;
  const PropertyOptions options_;
  const std::string label_;
  // The property accepts every region as defaultFusedNode() would, so no
  // body is built before surgery, which then moves the members into it.
  const bool lateBodies_;

  std::unique_ptr<SubgraphSelectorV2> selector_;
  // The id-indexed tables of taking, growing and extracting regions (taken_,
  // excluded_, candidate_, scratch_, the inlined marks and the body
  // builder's) are filled at the first seed the selector takes, not when
  // the pass starts: a pass that selects nothing, as for a backend that
  // matches none of the model, never writes them (20 bytes a node and 15
  // a value: 35 MB of a 10^6-node graph, written only to be dropped).
  bool regionTables_ = false;
  uint32_t seedMark_ = 1;  // excluded_ starts at 0: nothing excluded
  uint32_t candidateMark_ = 0;
  uint32_t scratchMark_ = 0;
  std::vector<Node*> region_;
  // A deque: growing it never moves (or transiently doubles) the regions.
  std::deque<PendingRegion> pending_;
  std::vector<Node*> members_;           // members of the pending regions, in order
  std::vector<Value*> inlined_;          // outer constants the bodies inlined
  RegionInfo info_;                      // reused for every CreateSubgraphNode call
  std::vector<Value*> escaping_;         // connectAll's copy of a region's outputs
  std::vector<const Node*> candidates_;  // what Filter is offered
  std::vector<Value*> touched_;          // outer values whose uses name moved nodes
};

// Starts the loads that offering the seed `r` positions ahead will wait
// for, one step of a pointer chase per distance: its node object 16 ahead,
// the node's operand lists 8 ahead (their addresses are in the node, which
// has arrived by then), its first input and output values 4 ahead, and the
// output's use list 2 ahead. Select, the pattern match and the region's
// growth read exactly these. The rank order is nearly allocation order,
// but every node is four separate heap blocks, and on a graph larger than
// the cache the seed loop otherwise waits for each in turn. Prefetching
// the node alone (8 ahead, tried twice before) did not help; the chase
// did: residual 30% at 10^6 nodes, 489 -> 455 ms (medians of 8
// alternations, 6 of 8 faster). It has no effect on what is computed.
void prefetchSeedsAhead(const std::vector<Node*>& order, size_t r) {
  const size_t n = order.size();
  if (r + 16 < n) {
    const char* node = reinterpret_cast<const char*>(order[r + 16]);
    __builtin_prefetch(node);
    __builtin_prefetch(node + 64);
  }
  if (r + 8 < n) {
    __builtin_prefetch(order[r + 8]->outputs().data());
    __builtin_prefetch(order[r + 8]->inputs().data());
  }
  if (r + 4 < n) {
    const Node* node = order[r + 4];
    if (!node->outputs().empty()) {
      const char* out = reinterpret_cast<const char*>(node->outputs()[0]);
      __builtin_prefetch(out);
      __builtin_prefetch(out + 64);
    }
    if (!node->inputs().empty() && node->inputs()[0]) __builtin_prefetch(node->inputs()[0]);
  }
  if (r + 2 < n && !order[r + 2]->outputs().empty())
    __builtin_prefetch(order[r + 2]->outputs()[0]->uses().data());
}

Status PropertyPass::run() {
  Status pre = property_.PrePartition(graph_);
  if (!pre) return fail("PrePartition failed: " + pre.message());
  selector_ = property_.CreateSubgraphSelectorV2();
  if (!selector_)
    return fail(
        "creates no selector (override CreateSubgraphSelector or CreateSubgraphSelectorV2)");
  if (!tables_.dagIsCurrent) {
    Status init = dag_.init(graph_);
    if (!init) return fail(init.message());
    tables_.seeds.invalidate();
  }
  // Whatever happens next may change the graph.
  tables_.dagIsCurrent = false;
  const uint64_t edgesBefore = graph_.edgesAdded();
  const size_t nodesBefore = graph_.numNodes();

  const NodeId bound = graph_.nodeIdBound();
  // Contraction never changes the order, so the loop may read it in place.
  const std::vector<Node*>& order = dag_.order();
  const std::vector<std::string> seedOps = property_.SeedOpTypes();
  if (seedOps.empty()) {
    for (size_t r = 0; r < order.size(); ++r) {
      prefetchSeedsAhead(order, r);
      Node* seed = order[r];
      if (!available(*seed)) continue;
      SUBGRAPH_RETURN_IF_ERROR(formRegionFrom(seed));
    }
  } else {
    // Only the nodes that can seed it, in the same order (seed_index.h).
    for (uint32_t r : tables_.seeds.positions(order, seedOps)) {
      Node* seed = order[r];
      if (!available(*seed)) continue;
      SUBGRAPH_RETURN_IF_ERROR(formRegionFrom(seed));
    }
  }
  Status selection = property_.SelectionStatus();
  if (!selection) return fail("selection failed: " + selection.message());

  SUBGRAPH_RETURN_IF_ERROR(connectAll());
  std::vector<FusedRegion> fused = materializeAll();
  // The surgery adds exactly the fused nodes' edges (an input use each and
  // a producer per output); everything else it does removes edges.
  uint64_t fusedEdges = 0;
  tables_.lastFused.clear();
  for (const FusedRegion& region : fused) {
    tables_.lastFused.push_back(region.node);
    for (const Value* in : region.node->inputs()) fusedEdges += in != nullptr;
    fusedEdges += region.node->numOutputs();
  }
  const uint64_t edgesFused = graph_.edgesAdded();
  const NodeId boundFused = graph_.nodeIdBound();
  const size_t nodesFused = graph_.numNodes();
  Status post = property_.PostPartition(graph_, fused);
  if (!post) return fail("PostPartition failed: " + post.message());
  tables_.onlyFusedEdgesAdded =
      edgesFused - edgesBefore == fusedEdges && graph_.edgesAdded() == edgesFused &&
      graph_.nodeIdBound() == boundFused && graph_.numNodes() == nodesFused;
  // A pass that fused nothing, and whose hook added no edge and added or
  // removed no node (ids are never reused), leaves the graph as init()
  // ranked it: the next pass and the final acyclicity check can trust the
  // ranks instead of reading every edge again. A model that no property of
  // a backend applies to is the common case.
  // Every contracted region is pending, so no pending region means no
  // contraction.
  if (pending_.empty() && graph_.edgesAdded() == edgesBefore && graph_.nodeIdBound() == bound &&
      graph_.numNodes() == nodesBefore)
    tables_.dagIsCurrent = true;
  return Status::ok();
}

void PropertyPass::prepareRegionTables() {
  // The seed loop does not change the graph, so its bounds are those of
  // the pass's start.
  const NodeId bound = graph_.nodeIdBound();
  taken_.assign(bound, -1);
  excluded_.assign(bound, 0);
  candidate_.assign(bound, 0);
  scratch_.assign(bound, 0);
  tables_.inlined.assign(graph_.valueIdBound(), 0);
  bodies_.reset(graph_, tables_.captured);
  regionTables_ = true;
}

Status PropertyPass::formRegionFrom(Node* seed) {
  ++seedMark_;
  for (bool retry = false;; retry = true) {
    selector_->Reset();
    Decision select = selector_->Select(NodeView(*seed, *this));
    if (!select) {
      if (!retry) {
        run_.note(*seed, ReasonKind::kNoSelector,
                  select.reason().empty() ? std::string()
                                          : "not selected by " + label_ + ": " + select.reason());
      } else {
        run_.note(*seed, ReasonKind::kCycle,
                  "its region was cut to avoid a cycle, after which " + label_ +
                      " no longer selected it" +
                      (select.reason().empty() ? "" : ": " + select.reason()));
      }
      return Status::ok();
    }
    if (!regionTables_) prepareRegionTables();
    grow(seed);
    std::sort(region_.begin(), region_.end(),
              [&](const Node* a, const Node* b) { return dag_.rank(*a) < dag_.rank(*b); });
    std::vector<Reentry> reentered = dag_.findReentries(region_, QuotientDag::Direction::kForward);
    if (reentered.empty()) return filterAndCommit();
    excludeForCycle(seed, std::move(reentered));
  }
}

void PropertyPass::grow(Node* seed) {
  ++candidateMark_;
  region_.clear();
  region_.push_back(seed);
  candidate_[seed->id()] = candidateMark_;
  auto offer = [&](Node* n, Node* other, bool isProducer) {
    if (candidate_[other->id()] == candidateMark_ || !available(*other)) return;
    NodeView nodeView(*n, *this), otherView(*other, *this);
    Decision d = isProducer ? selector_->SelectInput(nodeView, otherView)
                            : selector_->SelectOutput(nodeView, otherView);
    if (!d) return;
    candidate_[other->id()] = candidateMark_;
    region_.push_back(other);
  };
  for (size_t i = 0; i < region_.size(); ++i) {
    Node* n = region_[i];
    for (Value* in : n->inputs())
      if (in && in->producer()) offer(n, in->producer(), true);
    for (Value* out : n->outputs()) {
      if (out->producer() != n) continue;
      for (const Use& use : out->uses()) offer(n, use.user, false);
    }
  }
}

std::string PropertyPass::cycleReason(const Reentry& r) const {
  const Node& via = *r.via;
  int region = run_.regionOfFused(via);
  if (region < 0 && via.id() < taken_.size() && taken_[via.id()] >= 0)
    region = pending_[static_cast<size_t>(taken_[via.id()])].id;
  std::string where = via.qualifiedOpType() + " '" + via.displayName() + "'";
  if (region >= 0)
    return "would form a cycle with region " + std::to_string(region) + " through node " + where +
           " (" + label_ + ")";
  return "would form a cycle through node " + where + " outside the region (" + label_ + ")";
}

void PropertyPass::excludeForCycle(Node* seed, std::vector<Reentry> reentered) {
  auto contains = [](const std::vector<Reentry>& list, const Node* n) {
    return std::any_of(list.begin(), list.end(), [n](const Reentry& r) { return r.member == n; });
  };
  // Dropping every re-entered member leaves a convex set. Keep the seed:
  // when it is itself re-entered, drop the members that re-enter instead,
  // and when it is both, drop both sides but the seed.
  std::vector<Reentry> drop;
  if (!contains(reentered, seed)) {
    drop = std::move(reentered);
  } else {
    std::vector<Reentry> reentering =
        dag_.findReentries(region_, QuotientDag::Direction::kBackward);
    if (!contains(reentering, seed)) {
      drop = std::move(reentering);
    } else {
      for (auto* list : {&reentered, &reentering})
        for (const Reentry& r : *list)
          if (r.member != seed && !contains(drop, r.member)) drop.push_back(r);
    }
  }
  for (const Reentry& r : drop) {
    excluded_[r.member->id()] = seedMark_;
    run_.note(*r.member, ReasonKind::kCycle, cycleReason(r));
  }
}

Status PropertyPass::filterAndCommit() {
  candidates_.assign(region_.begin(), region_.end());
  std::vector<const Node*> kept = selector_->Filter(candidates_);
  ++scratchMark_;
  for (const Node* k : kept) {
    if (!k || k->graph() != &graph_ || candidate_[k->id()] != candidateMark_)
      return fail("Filter returned " +
                  (k ? k->qualifiedOpType() + " node '" + k->displayName() + "'"
                     : std::string("a null node")) +
                  ", which is not one of its candidates");
    if (scratch_[k->id()] == scratchMark_)
      return fail("Filter returned node '" + k->displayName() + "' twice");
    scratch_[k->id()] = scratchMark_;
  }
  if (kept.size() == region_.size()) {
    // The grown region is connected by construction and was just found
    // convex, so it stands as it is.
    commit(region_);
    return Status::ok();
  }
  std::vector<Node*> keptNodes;
  for (Node* n : region_) {
    if (scratch_[n->id()] == scratchMark_) {
      keptNodes.push_back(n);
      continue;
    }
    std::string why = selector_->FilterReason(*n);
    run_.note(*n, ReasonKind::kFilter,
              "dropped by Filter of " + label_ + (why.empty() ? "" : ": " + why));
  }
  if (keptNodes.empty()) return Status::ok();
  if (options_.filterSplit == FilterSplit::kReject) {
    std::vector<std::vector<Node*>> components = connectedComponents(keptNodes);
    std::string problem;
    if (components.size() > 1)
      problem = std::to_string(components.size()) + " disconnected parts";
    else if (!dag_.findReentries(keptNodes, QuotientDag::Direction::kForward).empty())
      problem = "a set that is not convex";
    if (problem.empty()) {
      commit(keptNodes);
    } else {
      for (Node* n : keptNodes)
        run_.note(*n, ReasonKind::kFilter,
                  "Filter of " + label_ + " kept " + problem + ", and the property rejects splits");
    }
    return Status::ok();
  }
  commitConvexParts(std::move(keptNodes));
  return Status::ok();
}

std::vector<std::vector<Node*>> PropertyPass::connectedComponents(const std::vector<Node*>& nodes) {
  ++scratchMark_;
  const uint32_t inSet = scratchMark_;
  for (Node* n : nodes) scratch_[n->id()] = inSet;
  ++scratchMark_;
  const uint32_t seen = scratchMark_;
  std::vector<std::vector<Node*>> components;
  for (Node* start : nodes) {
    if (scratch_[start->id()] == seen) continue;
    std::vector<Node*> component{start};
    scratch_[start->id()] = seen;
    auto reach = [&](Node* other) {
      if (scratch_[other->id()] != inSet) return;
      scratch_[other->id()] = seen;
      component.push_back(other);
    };
    for (size_t i = 0; i < component.size(); ++i) {
      Node* n = component[i];
      for (Value* in : n->inputs())
        if (in && in->producer()) reach(in->producer());
      for (Value* out : n->outputs())
        for (const Use& use : out->uses()) reach(use.user);
    }
    std::sort(component.begin(), component.end(),
              [&](const Node* a, const Node* b) { return dag_.rank(*a) < dag_.rank(*b); });
    components.push_back(std::move(component));
  }
  return components;
}

void PropertyPass::commitConvexParts(std::vector<Node*> kept) {
  // Each step either commits a connected, convex component or splits it
  // into the re-entered members and the rest, both strictly smaller (the
  // lowest-ranked member is never re-entered), so this terminates. A part
  // is checked only after the parts before it were committed: two parts
  // that are each convex may still form a cycle together.
  std::deque<std::vector<Node*>> work;
  for (auto& c : connectedComponents(kept)) work.push_back(std::move(c));
  while (!work.empty()) {
    std::vector<Node*> component = std::move(work.front());
    work.pop_front();
    std::vector<Reentry> reentered =
        dag_.findReentries(component, QuotientDag::Direction::kForward);
    if (reentered.empty()) {
      commit(component);
      continue;
    }
    ++scratchMark_;
    for (const Reentry& r : reentered) scratch_[r.member->id()] = scratchMark_;
    std::vector<Node*> rest, cut;
    for (Node* n : component) (scratch_[n->id()] == scratchMark_ ? cut : rest).push_back(n);
    for (auto* side : {&rest, &cut})
      for (auto& c : connectedComponents(*side)) work.push_back(std::move(c));
  }
}

void PropertyPass::commit(std::span<Node* const> part) {
  if (part.size() < options_.minRegionSize) {
    for (Node* n : part)
      run_.note(*n, ReasonKind::kMinSize,
                "region of " + std::to_string(part.size()) +
                    (part.size() == 1 ? " node" : " nodes") + " is below the minimum region size " +
                    std::to_string(options_.minRegionSize) + " of " + label_);
    return;
  }
  PendingRegion region;
  region.id = info_.id = run_.nextRegionId;
  if (!lateBodies_) {
    info_.nodes.assign(part.begin(), part.end());
    const size_t inlinedBefore = inlined_.size();
    region.body = bodies_.build(part, bodyName(region.id), options_, inlined_);
    SubgraphNodeResult result = property_.CreateSubgraphNode(region.body.body, info_);
    if (!result.accepted()) {
      inlined_.resize(inlinedBefore);
      for (Node* n : part)
        run_.note(*n, ReasonKind::kRejected,
                  "region rejected by property " + label_ +
                      (result.reason().empty() ? "" : ": " + result.reason()));
      return;
    }
    keepNewInlined(inlinedBefore);
    region.fused = std::move(result.node());
  }
  ++run_.nextRegionId;
  run_.regionBackend.push_back(backendIndex_);
  dag_.contract(part);
  const int index = static_cast<int>(pending_.size());
  for (Node* n : part) taken_[n->id()] = index;
  region.firstMember = members_.size();
  region.numMembers = part.size();
  members_.insert(members_.end(), part.begin(), part.end());
  pending_.push_back(std::move(region));
}

std::string PropertyPass::bodyName(int regionId) const {
  // Built in place: the chain of + would allocate a temporary per step,
  // hundreds of thousands of times in a large graph.
  std::string name;
  name.reserve(backend_.size() + info_.property.size() + 16);
  name.append(backend_).append("_").append(info_.property).append("_");
  name.append(std::to_string(regionId));
  return name;
}

void PropertyPass::keepNewInlined(size_t from) {
  // List each inlined constant once per pass, not once per region.
  size_t kept = from;
  for (size_t k = from; k < inlined_.size(); ++k) {
    Value* c = inlined_[k];
    if (!tables_.inlined[c->id()]) {
      tables_.inlined[c->id()] = 1;
      inlined_[kept++] = c;
    }
  }
  inlined_.resize(kept);
}

Status PropertyPass::connectAll() {
  // The hooks of a property that fuses without bodies are the defaults,
  // which change nothing; its bodies do not exist yet.
  if (lateBodies_) return Status::ok();
  // Hooks run for every region before the graph changes, so a hook that
  // breaks its contract leaves the graph as this pass found it.
  for (size_t index = 0; index < pending_.size(); ++index) {
    PendingRegion& region = pending_[index];
    Graph& body = *region.body.body;
    const std::string which = "region " + std::to_string(region.id);
    // The escaping values as the body builder listed them, in a buffer
    // reused across regions.
    std::vector<Value*>& escaping = escaping_;
    escaping.assign(region.body.outputs.begin(), region.body.outputs.end());
    Status in = property_.ConnectSubgraphInputs(body, region.body.inputs);
    if (!in) return fail("ConnectSubgraphInputs failed for " + which + ": " + in.message());
    Status out = property_.ConnectSubgraphOutputs(body, region.body.outputs);
    if (!out) return fail("ConnectSubgraphOutputs failed for " + which + ": " + out.message());

    if (region.body.inputs.size() != body.inputs().size())
      return fail("ConnectSubgraphInputs gave " + which + " " +
                  std::to_string(region.body.inputs.size()) + " inputs for a body with " +
                  std::to_string(body.inputs().size()));
    for (Value* v : region.body.inputs) {
      if (!v || v->graph() != &graph_)
        return fail("ConnectSubgraphInputs gave " + which +
                    " an input that is not a value of graph '" + graph_.name() + "'");
      if (v->producer() && v->producer()->id() < taken_.size() &&
          taken_[v->producer()->id()] == static_cast<int>(index))
        return fail("ConnectSubgraphInputs connected " + which + " to its own value '" + v->name() +
                    "'");
    }
    bool permutation = region.body.outputs == escaping;  // hooks rarely reorder
    if (!permutation) {
      std::vector<Value*> given = region.body.outputs;
      std::sort(given.begin(), given.end());
      std::sort(escaping.begin(), escaping.end());
      permutation = given == escaping;
    }
    if (!permutation || region.body.outputs.size() != body.outputs().size())
      return fail("ConnectSubgraphOutputs must keep " + which +
                  "'s outputs a permutation of its escaping values");
    if (!region.fused.op)
      region.fused.op = OpRegistry::global().intern("subgraph." + backend_, info_.property);
    if (region.fused.name.empty())
      region.fused.name = backend_ + "_" + info_.property + "_" + std::to_string(region.id);
  }
  return Status::ok();
}

std::vector<FusedRegion> PropertyPass::materializeAll() {
  // Report each region and note the values only it reads before its
  // members go; the reports are written in place, reserved once. Members
  // leave in a few batches (removeNodes compacts each shared use list,
  // e.g. a weight's, once per batch instead of once per node), each right
  // after its regions were reported: the heap peaks here, with every
  // region body built, and freeing a batch's members before reporting the
  // next lets the later reports reuse their memory instead of adding to
  // the peak. The batches only split the removal; the resulting graph,
  // use lists and report are those of one removal at the end.
  std::vector<RegionReport>& reports = run_.report.regions;
  reports.reserve(reports.size() + pending_.size());
  // Each batch rescans the surviving readers of every shared value (a
  // cache miss per reader), so the batches are few: four leave a quarter
  // of the reports in the peak for three extra passes over those lists.
  // Small graphs are batched too: the heap target is per node at every
  // size, and a batch of a small graph costs little.
  constexpr size_t kBatches = 4;
  const size_t batchNodes = members_.size() / kBatches + 1;
  std::vector<Value*> internal;  // computed in a region, read only there
  size_t removedUpTo = 0;        // members_[0, removedUpTo) are gone
  auto removeBatch = [&](size_t end) {
    graph_.removeNodes(std::span<Node* const>(members_).subspan(removedUpTo, end - removedUpTo),
                       /*keepOutputs=*/true);
    removedUpTo = end;
  };
  for (PendingRegion& region : pending_) {
    RegionReport& report = reports.emplace_back();
    report.id = region.id;
    report.backend = backend_;
    report.property = info_.property;
    const std::span<Node* const> members = membersOf(region);
    region.rank = dag_.rank(*members.front());
    report.nodes.reserve(members.size());
    report.nodeIds.reserve(members.size());
    for (Node* n : members) {
      report.nodes.push_back(n->displayName());
      report.nodeIds.push_back(n->id());
      if (n->id() < run_.inputBound) run_.regionOf[n->id()] = region.id;
    }
    if (lateBodies_) {
      // The members move into the body (their ids change, so after the
      // report); the region accepts as CreateSubgraphNode's default would.
      const size_t inlinedBefore = inlined_.size();
      region.body = bodies_.move(members, bodyName(region.id), options_, inlined_, touched_);
      keepNewInlined(inlinedBefore);
      info_.id = region.id;
      region.fused = defaultFusedNode(region.body.body, info_);
    } else {
      const std::vector<Value*>& outputs = region.body.outputs;
      for (Node* n : members)
        for (Value* v : n->outputs())
          if (v->producer() == n && std::find(outputs.begin(), outputs.end(), v) == outputs.end())
            internal.push_back(v);
    }
    report.fusedNode = region.fused.name;
    const std::vector<Value*>& outputs = region.body.outputs;
    // The fused node's connections are exactly the body's outer values.
    report.inputs.reserve(region.body.inputs.size());
    for (Value* v : region.body.inputs) report.inputs.push_back(v ? v->name() : std::string());
    report.outputs.reserve(outputs.size());
    for (Value* v : outputs) report.outputs.push_back(v->name());
    const size_t end = region.firstMember + region.numMembers;
    if (!lateBodies_ && end - removedUpTo >= batchNodes) removeBatch(end);
  }
  if (lateBodies_)
    graph_.dropForeignUses(touched_, members_);
  else if (removedUpTo < members_.size())
    removeBatch(members_.size());

  // Escaping values (read outside, or graph outputs) become the fused
  // node's outputs, so outer readers and graph outputs keep pointing at
  // them; values only the region read go. So does an inlined constant
  // (listed once, however many bodies inlined it) that nothing outside
  // the bodies reads: the fused nodes will not read it either, since
  // inlined constants never become body inputs. One batch, before the
  // fused nodes exist: a large graph sheds most of its values here (every
  // weight of every region), which removeValues() does with one rebuild
  // of the name index, and freeing them first keeps them out of the peak.
  // A connection hook may have wired a fused node to any outer value, so
  // a value some fused node will read stays (bit 2 of the by-value table).
  std::vector<uint8_t>& marks = tables_.inlined;
  for (const PendingRegion& region : pending_)
    for (const Value* v : region.body.inputs)
      if (v && v->id() < marks.size()) marks[v->id()] |= 2;
  // So does a value a nested graph reads by name, a use no list shows.
  for (const std::string& name : tables_.captured)
    if (const Value* v = graph_.findValue(name); v && v->id() < marks.size()) marks[v->id()] |= 2;
  std::vector<Value*> dead;
  dead.reserve(internal.size() + inlined_.size());
  auto unused = [&](const Value* v) {
    return !(marks[v->id()] & 2) && !v->hasUses() && !v->isGraphInput() && !v->isGraphOutput();
  };
  for (Value* v : internal)
    if (unused(v)) dead.push_back(v);
  for (Value* c : inlined_)
    if (unused(c)) dead.push_back(c);
  graph_.removeValues(dead);
  std::vector<Value*>().swap(internal);
  std::vector<Value*>().swap(dead);
  std::vector<FusedRegion> fusedRegions;
  fusedRegions.reserve(pending_.size());
  // Adding a fused node writes to each of its outer values (a use on each
  // input, the producer of each output), which by now lie wherever the
  // region's neighbours were: start those loads 4 regions ahead.
  constexpr size_t kAhead = 4;
  for (size_t r = 0; r < pending_.size(); ++r) {
    if (r + kAhead < pending_.size()) {
      const RegionBody& ahead = pending_[r + kAhead].body;
      for (const Value* v : ahead.inputs)
        if (v) __builtin_prefetch(v, 1);
      for (const Value* v : ahead.outputs) __builtin_prefetch(v, 1);
    }
    PendingRegion& region = pending_[r];
    Node* fused = graph_.addNode(region.fused.op, std::move(region.body.inputs),
                                 std::move(region.body.outputs), std::move(region.fused.attrs),
                                 std::move(region.fused.name));
    run_.markFused(*fused, region.id, region.rank);
    fusedRegions.push_back(FusedRegion{region.id, fused});
  }
  return fusedRegions;
}

// Every available node a lower-priority backend would seed a region at, as
// a bit per backend index, to report nodes a higher-priority one took.
class AllAvailable final : public PartitionState {
 public:
  explicit AllAvailable(const RunState& run) : run_(run) {}
  bool available(const Node& node) const override {
    return node.graph() == &run_.graph && !run_.isFused(node);
  }

 private:
  const RunState& run_;
};

std::vector<uint64_t> lowerPriorityWishes(const RunState& run, std::span<SubgraphBackend> backends,
                                          const PartitionOptions& options) {
  std::vector<uint64_t> wanted(run.inputBound, 0);
  AllAvailable state(run);
  for (size_t b = 1; b < backends.size() && b < 64; ++b)
    for (auto& property : backends[b].properties) {
      if (options.forTraining && property->options().inferenceOnly) continue;
      std::unique_ptr<SubgraphSelectorV2> selector = property->CreateSubgraphSelectorV2();
      if (!selector) continue;
      for (Node* n : run.graph.nodes()) {
        if (!state.available(*n)) continue;
        selector->Reset();
        if (selector->Select(NodeView(*n, state))) wanted[n->id()] |= uint64_t{1} << b;
      }
    }
  return wanted;
}

// The ranks the final acyclicity checks compare: a node's group rank in
// the last pass's quotient DAG, or, for a fused node that pass made, its
// region's (RunState::rankOfFused).
class EdgeRanks {
 public:
  EdgeRanks(const Graph& graph, const QuotientDag& dag, const RunState& run)
      : graph_(graph), dag_(dag), run_(run) {}
  uint32_t of(const Node& n) const {
    uint32_t rank = dag_.rankAtInit(n);
    return rank != QuotientDag::kNoRank ? rank : run_.rankOfFused(n);
  }
  // True when every producer in the graph of `node`'s inputs ranks below
  // `rank`, the node's own.
  bool producersBelow(const Node& node, uint32_t rank) const {
    for (const Value* v : node.inputs()) {
      const Node* p = v ? v->producer() : nullptr;
      if (!p || p->graph() != &graph_) continue;
      const uint32_t producerRank = of(*p);
      if (producerRank == QuotientDag::kNoRank || producerRank >= rank) return false;
    }
    return true;
  }

 private:
  const Graph& graph_;
  const QuotientDag& dag_;
  const RunState& run_;
};

// True when every edge of `graph` runs from a lower rank to a higher one,
// ranking each node as the last pass's quotient DAG did: nodes that DAG
// ranked by their group, the fused nodes it made by their region's group.
// Distinct nodes are distinct groups with distinct ranks, so the ranks are
// then a topological numbering and the graph is acyclic: this proves what
// a fresh topological sort would, reading each edge once and building
// nothing. False proves nothing (a PostPartition hook may have added nodes
// the DAG never ranked, or rewired edges); the caller then sorts.
bool ranksOrderEveryEdge(const Graph& graph, const QuotientDag& dag, const RunState& run) {
  const EdgeRanks ranks(graph, dag, run);
  for (const Node* n : graph.nodes()) {
    const uint32_t rank = ranks.of(*n);
    if (rank == QuotientDag::kNoRank || !ranks.producersBelow(*n, rank)) return false;
  }
  return true;
}

// True when every edge the last pass created runs from a lower rank to a
// higher one: the inputs of its fused nodes and the readers of their
// outputs. It proves the graph acyclic, as ranksOrderEveryEdge() would,
// when no other edge was added since the ranks were computed
// (PassScratch::onlyFusedEdgesAdded): an edge the pass did not create
// joins two groups of the quotient DAG, whose ranks it keeps in
// topological order through every contraction. The check then costs the
// fused nodes' edges instead of a read of every edge of a graph that may
// have a million nodes (a cache miss per producer there).
bool fusedEdgesFollowRanks(const Graph& graph, std::span<const Node* const> fused,
                           const QuotientDag& dag, const RunState& run) {
  const EdgeRanks ranks(graph, dag, run);
  for (const Node* f : fused) {
    const uint32_t rank = run.rankOfFused(*f);
    if (rank == QuotientDag::kNoRank || !ranks.producersBelow(*f, rank)) return false;
    for (const Value* v : f->outputs())
      for (const Use& use : v->uses()) {
        if (use.user->graph() != &graph) continue;
        const uint32_t userRank = ranks.of(*use.user);
        if (userRank == QuotientDag::kNoRank || userRank <= rank) return false;
      }
  }
  return true;
}

// The total length of the left-out nodes' names, estimated from an even
// sample of them, for reserving the report's name buffer once. Too small a
// reservation doubles the buffer, which on a large graph copies megabytes
// and touches a fresh block twice their size (the fixed 8 bytes a name
// this replaced was short of the zoo's names, 10-12 bytes, so a 10^6-node
// report copied 8 MB into a fresh 16 MB); measuring every name would load
// every node once more. The sample costs a few dozen loads.
size_t estimateNameBytes(const RunState& run, const std::vector<NodeId>& inputOrder,
                         size_t rejected) {
  constexpr size_t kSamples = 64;
  const size_t step = std::max<size_t>(1, inputOrder.size() / kSamples);
  size_t sampled = 0, bytes = 0;
  for (size_t i = 0; i < inputOrder.size() && sampled < kSamples; i += step) {
    const NodeId id = inputOrder[i];
    const Node* n = run.regionOf[id] < 0 ? run.graph.node(id) : nullptr;
    if (!n) continue;
    // An unnamed node reports its displayName(), "#" and its id.
    bytes += n->name().empty() ? 8 : n->name().size();
    ++sampled;
  }
  if (sampled == 0) return rejected * 16;
  // A quarter over the sample's mean covers the longer names a sample
  // misses (names grow with their index) without doubling.
  return rejected * bytes / sampled * 5 / 4 + 64;
}

void fillReport(RunState& run, const std::vector<NodeId>& inputOrder,
                const std::vector<uint64_t>& wanted, std::span<SubgraphBackend> backends) {
  PartitionReport& report = run.report;
  // Sized exactly: a doubling vector of 10^5 entries would hold up to
  // twice the room, and three times while it moves.
  // The names are not measured first: that would be one more cache miss
  // per node on a large graph, to save a few doublings of one buffer.
  size_t rejected = 0;
  for (NodeId id : inputOrder) rejected += run.regionOf[id] < 0;
  RejectedNodes& out = report.rejected;
  out.reserve(out.size() + rejected, estimateNameBytes(run, inputOrder, rejected));
  // Op and kind texts, and the fixed reasons, are interned once, not per
  // node: a graph no backend applies to rejects every node for the same
  // reason. The noted reasons are added once per text NodeReasons holds.
  std::unordered_map<const OpKey*, uint32_t> opIndex;
  std::array<uint32_t, kReasonKinds> kindIndex;
  for (size_t k = 0; k < kReasonKinds; ++k)
    kindIndex[k] = out.intern(reasonKindName(static_cast<ReasonKind>(k)));
  const uint32_t matchedNone = out.intern("no selector matched");
  const uint32_t noSelector = backends.empty() ? out.intern("no backend is active") : matchedNone;
  std::string unnamed;
  // The report's index of each of run.reasons' texts, once added.
  constexpr uint32_t kUnset = UINT32_MAX;
  std::vector<uint32_t> reportText(run.reasons.texts().size(), kUnset);
  for (size_t i = 0; i < inputOrder.size(); ++i) {
    const NodeId id = inputOrder[i];
    // A left-out node's name and op are read from the node object: start
    // the load 8 nodes ahead (no effect on what is reported).
    if (i + 8 < inputOrder.size()) {
      if (const Node* ahead = run.graph.node(inputOrder[i + 8])) __builtin_prefetch(ahead);
    }
    if (run.regionOf[id] >= 0) {
      ++report.nodesInRegions;
      if (id < wanted.size() && wanted[id]) {
        size_t owner = run.regionBackend[static_cast<size_t>(run.regionOf[id])];
        const RegionReport& region = report.regions[static_cast<size_t>(run.regionOf[id])];
        std::string name = region.nodes[static_cast<size_t>(
            std::find(region.nodeIds.begin(), region.nodeIds.end(), id) - region.nodeIds.begin())];
        for (size_t b = owner + 1; b < backends.size() && b < 64; ++b)
          if (wanted[id] & (uint64_t{1} << b))
            report.contested.push_back(
                ContestedNode{name, backends[b].name, region.backend, region.id});
      }
      continue;
    }
    const Node* n = run.graph.node(id);
    if (!n) {
      out.push_back(RejectedNode{"#" + std::to_string(id), RejectedNode::kNoId, "", "removed",
                                 "removed from the graph by a PostPartition hook"});
      continue;
    }
    ReasonKind kind = run.reasons.kind(id);
    const uint32_t text = run.reasons.textIndex(id);
    uint32_t reason;
    if (kind <= ReasonKind::kNoSelector && isFusedOp(*n)) {
      // Never offered to a selector (isFused()), so nothing noted it.
      kind = ReasonKind::kAlreadyFused;
      reason =
          out.intern("already a fused node (" + n->qualifiedOpType() + "); fused nodes are final");
    } else if (kind == ReasonKind::kNone) {
      reason = noSelector;
    } else if (text == NodeReasons::kNoText) {
      reason = matchedNone;
    } else {
      // Most texts name their node and so are distinct: each moves into
      // the report once, unhashed, however many nodes share it.
      uint32_t& added = reportText[text];
      if (added == kUnset) added = out.addText(std::move(run.reasons.texts()[text]));
      reason = added;
    }
    auto [op, newOp] = opIndex.try_emplace(&n->opKey(), 0);
    if (newOp) op->second = out.intern(n->qualifiedOpType());
    std::string_view name = n->name();
    if (name.empty()) {
      unnamed = n->displayName();
      name = unnamed;
    }
    out.append(name, id, op->second, kindIndex[static_cast<size_t>(kind)], reason);
  }
}

// Adds `nested`, the report of a graph held in attribute `attr` of `owner`,
// to `report`: its regions and left-out nodes under their scope.
void mergeNestedReport(PartitionReport&& nested, const Node& owner, const std::string& attr,
                       PartitionReport& report) {
  const std::string scope = owner.displayName() + "." + attr;
  for (RegionReport& r : nested.regions) {
    r.scope = r.scope.empty() ? scope : scope + "/" + r.scope;
    report.regions.push_back(std::move(r));
  }
  for (const RejectedNode& n : nested.rejected)
    report.rejected.push_back(
        RejectedNode{scope + ":" + n.node, RejectedNode::kNoId, n.op, n.kind, n.reason});
  for (ContestedNode& c : nested.contested) {
    c.node = scope + ":" + c.node;
    report.contested.push_back(std::move(c));
  }
  report.nodesTotal += nested.nodesTotal;
  report.nodesInRegions += nested.nodesInRegions;
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
      mergeNestedReport(std::move(nested).value(), *node, attr.name(), report);
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
  run.nextRegionId = firstRegionId;
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

  std::vector<uint64_t> wanted;
  if (options.reportContested && backends.size() > 1)
    wanted = lowerPriorityWishes(run, backends, options);

  for (size_t b = 0; b < backends.size(); ++b) {
    run.report.backends.push_back(backends[b].name);
    for (auto& property : backends[b].properties) {
      if (!property)
        return Status::invalid("subgraph backend '" + backends[b].name + "' has a null property");
      if (options.forTraining && property->options().inferenceOnly) {
        run.report.skipped.push_back(backends[b].name + "/" + property->name() +
                                     ": inference-only, and the graph is partitioned for training");
        continue;
      }
      PropertyPass pass(run, tables, backends[b].name, b, *property);
      Status passed = pass.run();
      if (!passed.isOk()) {
        if (options.failedBackend) *options.failedBackend = backends[b].name;
        return passed;
      }
    }
  }
  // Contracting only convex sets keeps the result acyclic; check it anyway,
  // cheaply through the ranks (the last pass's new edges where it added
  // nothing else, else every edge), and with a full sort where they cannot
  // tell.
  bool ordered = tables.dagIsCurrent;
  if (!ordered && tables.onlyFusedEdgesAdded) {
    ordered = fusedEdgesFollowRanks(graph, tables.lastFused, tables.dag, run);
#ifndef NDEBUG
    // Debug builds (the sanitizer preset) also read every edge, which
    // checks the quotient DAG's rank invariant itself on every test graph.
    if (ordered && !ranksOrderEveryEdge(graph, tables.dag, run))
      return Status(StatusCode::kInternal,
                    "partitioner bug: the ranks order the fused edges but not the graph");
#endif
  } else if (!ordered) {
    ordered = ranksOrderEveryEdge(graph, tables.dag, run);
  }
  if (!ordered) {
    Status acyclic = tables.dag.init(graph);
    if (!acyclic)
      return Status(StatusCode::kInternal,
                    "partitioned graph is not acyclic: " + acyclic.message());
  }

  run.report.nodesTotal = inputOrder.size();
  fillReport(run, inputOrder, wanted, backends);
  SUBGRAPH_RETURN_IF_ERROR(partitionNestedGraphs(graph, controlFlow, backends, options,
                                                 run.nextRegionId, run.report, enclosing));
  run.report.partitionMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
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
