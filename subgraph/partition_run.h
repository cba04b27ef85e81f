//===- subgraph/partition_run.h - State of one partition run -*- C++ -*-===//
//
// What the passes of one partitionGraph() call share (internal to
// subgraph_partition): the run's state (RunState: which region took each
// node, the fused nodes made so far, why each other node was left out, the
// report under way) and the id-indexed working tables every pass reuses
// (PassScratch). The policy (property_pass.h) and the surgery
// (region_surgery.h) fill them in, the report (report_builder.h) is
// completed from them, and the rank proof (rank_proof.h) reads the fused
// nodes' ranks.
//
// Tables indexed by node id cover the input graph's nodes, the only ones
// that can end up in regions; the fused nodes a pass makes get ids past
// RunState::inputBound and are tracked apart.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/partition/fused_name.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/quotient_dag.h"
#include "subgraph/region_body.h"
#include "subgraph/seed_index.h"
#include "subgraph/support/status.h"

namespace subgraph::partition::detail {

/// Why a node of the input graph is in no region, weakest first: a later
/// pass may replace a reason by a stronger one, never by a weaker one.
enum class ReasonKind : uint8_t {
  kNone,
  kNoSelector,
  kAlreadyFused,
  kCycle,
  kFilter,
  kMinSize,
  kRejected,
};
/// The number of ReasonKind values, for tables indexed by kind.
constexpr size_t kReasonKinds = static_cast<size_t>(ReasonKind::kRejected) + 1;

/// The reasons of the nodes of the input graph: a kind per node, and a
/// text for the few that have one (a selector that says nothing leaves it
/// empty), so a large graph pays five bytes per node rather than a string
/// per node.
///
/// The texts sit in one list, found through an index per node rather than
/// a hash map: nearly every text names its node, so they are distinct,
/// and on a graph larger than the cache each map lookup and insertion was
/// a miss in a chained bucket (docs/partitioning.md, "Reason texts without
/// hashing"). A text equal to one of the last few stored is shared (a
/// rejected region notes the same text for each member, one after the
/// other, and a pattern notes one text for every anchor it turns down for
/// the same reason); other repeats are stored again. A node's new text takes the
/// entry of its old one where no other node shares it, and a text no node
/// holds any more is freed and its entry reused, so the list holds at most
/// a text per node, and about one per node left out.
class NodeReasons {
 public:
  /// What textIndex() returns for a node without a text.
  static constexpr uint32_t kNoText = UINT32_MAX;

  /// Reasons for nodes with ids below `nodes`, all kNone without a text.
  explicit NodeReasons(size_t nodes) : kinds_(nodes, ReasonKind::kNone), textOf_(nodes, kNoText) {}
  /// The node's reason kind.
  ReasonKind kind(NodeId id) const { return kinds_[id]; }
  /// Index of the node's text in texts(), or kNoText.
  uint32_t textIndex(NodeId id) const { return textOf_[id]; }
  /// True if the node has a text.
  bool hasText(NodeId id) const { return textOf_[id] != kNoText; }
  /// The texts; the report moves each out once it has copied it.
  std::vector<std::string>& texts() { return texts_; }
  /// Gives the node `kind` and `text` (none if empty), whatever it had.
  void set(NodeId id, ReasonKind kind, std::string text) {
    kinds_[id] = kind;
    const uint32_t old = textOf_[id];
    if (text.empty()) {
      release(old);
      textOf_[id] = kNoText;
      return;
    }
    if (const uint32_t same = findRecent(text); same != kNoText) {
      if (same != old) {
        release(old);
        ++users_[same];
        textOf_[id] = same;
      }
      return;
    }
    if (old != kNoText && users_[old] == 1) {
      // Its text is its alone: the new one takes the entry. A node that
      // one property after another turns down keeps one entry, not one
      // per property.
      texts_[old] = std::move(text);
      forgetDeferred(old);
      remember(old);
      return;
    }
    release(old);
    const uint32_t entry = takeEntry();
    texts_[entry] = std::move(text);
    users_[entry] = 1;
    textOf_[id] = entry;
    remember(entry);
  }

  /// A text built only if some node still holds it when the walk ends:
  /// `text(*prefix)` (PatternSelector::DeferredReason).
  struct Deferred {
    std::function<std::string(std::string_view)> text;
    const std::string* prefix = nullptr;
  };
  /// Gives the node `kind` and a text of its own that resolveDeferred()
  /// builds: a later property mostly replaces it or the node joins a
  /// region, and the text, which names a node, is then never built.
  void setDeferred(NodeId id, ReasonKind kind, Deferred deferred) {
    kinds_[id] = kind;
    uint32_t entry = textOf_[id];
    if (entry == kNoText || users_[entry] != 1) {
      release(entry);
      entry = takeEntry();
      users_[entry] = 1;
      textOf_[id] = entry;
    }
    texts_[entry].clear();
    if (deferred_.size() < texts_.size()) deferred_.resize(texts_.size());
    deferred_[entry] = std::move(deferred);
    pending_.push_back(entry);
  }
  /// Builds the deferred texts that nodes still hold. Call it before the
  /// nodes they name change (the surgery), and before reading texts().
  void resolveDeferred() {
    for (uint32_t entry : pending_) {
      Deferred& d = deferred_[entry];
      if (!d.text) continue;
      if (users_[entry] != 0) texts_[entry] = d.text(*d.prefix);
      d = Deferred{};
    }
    pending_.clear();
  }

  /// Drops the node's text, keeping its kind: the node joined a region,
  /// so the report will not show why others turned it down, and a large
  /// graph would otherwise keep a text for most of its nodes.
  void dropText(NodeId id) {
    release(textOf_[id]);
    textOf_[id] = kNoText;
  }

 private:
  // A text no node holds any more is freed, and its entry reused.
  void release(uint32_t text) {
    if (text != kNoText && --users_[text] == 0) {
      std::string().swap(texts_[text]);
      forgetDeferred(text);
      free_.push_back(text);
    }
  }
  void forgetDeferred(uint32_t entry) {
    if (entry < deferred_.size() && deferred_[entry].text) deferred_[entry] = Deferred{};
  }
  uint32_t takeEntry() {
    if (free_.empty()) {
      texts_.emplace_back();
      users_.push_back(0);
      return static_cast<uint32_t>(texts_.size() - 1);
    }
    const uint32_t entry = free_.back();
    free_.pop_back();
    return entry;
  }
  // The entry among the last few texts stored that equals `text`, or
  // kNoText. A property that turns nodes down for a reason that does not
  // name them (the anchor of a pattern failing a predicate) gives one text
  // to thousands of nodes, interleaved with the few other reasons of the
  // same walk; comparing against a handful of recent entries shares those
  // without hashing every text.
  uint32_t findRecent(const std::string& text) const {
    for (uint32_t entry : recent_)
      if (entry < texts_.size() && texts_[entry] == text) return entry;
    return kNoText;
  }
  void remember(uint32_t entry) {
    recent_[nextRecent_] = entry;
    nextRecent_ = (nextRecent_ + 1) % kRecent;
  }

  static constexpr size_t kRecent = 8;
  std::vector<ReasonKind> kinds_;
  std::vector<uint32_t> textOf_;  // index into texts_, or kNoText
  std::vector<std::string> texts_;
  std::vector<uint32_t> users_;     // by text: the nodes it is the text of
  std::vector<uint32_t> free_;      // entries no node holds
  std::vector<Deferred> deferred_;  // by text entry: a text not built yet
  std::vector<uint32_t> pending_;   // entries given a deferred text
  // Entries of recently stored texts; a stale one is harmless, since a
  // freed entry is empty and a reused one is compared by its text.
  std::array<uint32_t, kRecent> recent_{};
  size_t nextRecent_ = 0;
};

/// True if `node` is a fused node by its op, whoever made it.
inline bool isFusedOp(const Node& node) { return node.domain().starts_with(kFusedDomainPrefix); }

/// The error a property's pass fails with: `message`, naming the
/// property by `label` (backend/property).
inline Status propertyError(const std::string& label, const std::string& message) {
  return Status::invalid("subgraph property " + label + ": " + message);
}

/// Milliseconds of wall time since `start`, for the report's phases.
inline double millisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// State shared by all passes of one partitionGraph() call.
struct RunState {
  explicit RunState(Graph& g) : graph(g), inputBound(g.nodeIdBound()), reasons(inputBound) {
    regionOf.assign(inputBound, -1);
    // `fused` covers only the fused nodes this run makes (markFused). Those
    // already in the input are recognized by their op where it matters
    // (isFused(), the report) rather than by a pass over every node here:
    // on a large graph each node's first touch is a cache miss.
  }

  /// Notes why `node` is left out, replacing what was noted before, except
  /// that a no-selector note never replaces a more specific reason, nor,
  /// without a text, a note that has one. Nodes past inputBound (the fused
  /// nodes this run made) are not reported, so nothing is noted for them.
  void note(const Node& node, ReasonKind kind, std::string text) {
    if (node.id() >= inputBound) return;
    const NodeId id = node.id();
    if (kind == ReasonKind::kNoSelector) {
      if (reasons.kind(id) > ReasonKind::kNoSelector) return;
      if (text.empty() && reasons.hasText(id)) return;
    }
    reasons.set(id, kind, std::move(text));
  }

  /// Made by this run, or already fused in the input.
  bool isFused(const Node& node) const {
    return (node.id() < fused.size() && fused[node.id()]) || isFusedOp(node);
  }
  /// note() for a text built later (NodeReasons::setDeferred).
  void noteDeferred(const Node& node, ReasonKind kind, NodeReasons::Deferred deferred) {
    if (node.id() >= inputBound) return;
    if (kind == ReasonKind::kNoSelector && reasons.kind(node.id()) > ReasonKind::kNoSelector)
      return;
    reasons.setDeferred(node.id(), kind, std::move(deferred));
  }

  /// Records `node` as the fused node of `region`; `rank` is the rank of
  /// the region's group in the pass's quotient DAG.
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
  /// The rank markFused() recorded for a fused node, or kNoRank.
  uint32_t rankOfFused(const Node& node) const {
    return node.id() < fusedRank.size() ? fusedRank[node.id()] : QuotientDag::kNoRank;
  }
  /// Region id of a fused node made in this run, or -1.
  int regionOfFused(const Node& node) const {
    return node.id() < fusedRegion.size() ? fusedRegion[node.id()] : -1;
  }

  Graph& graph;
  /// The input graph's node id bound: ids at or past it are fused nodes.
  NodeId inputBound;
  NodeReasons reasons;
  /// Region id by input node id, or -1.
  std::vector<int> regionOf;
  /// By node id, for the fused nodes this run made: 1, their region id
  /// and their region's rank (markFused()).
  std::vector<uint8_t> fused;
  std::vector<int> fusedRegion;
  std::vector<uint32_t> fusedRank;
  /// By region, in id order from firstRegionId: the index of the backend
  /// that made it.
  std::vector<size_t> regionBackend;
  PartitionReport report;
  /// The id the next region gets; nested graphs continue the count.
  int nextRegionId = 0;
  /// The id of this run's first region: region id r is report.regions and
  /// regionBackend entry r - firstRegionId (a nested graph's run starts
  /// where its enclosing graph's count stood).
  int firstRegionId = 0;
};

/// Id-indexed working tables shared by every pass of one run, reused:
/// allocating them per pass would, after a pass has freed thousands of
/// nodes, make the allocator consolidate all those chunks each time.
///
/// They are sized for the input graph, not for the fused nodes the passes
/// add: the heap peaks at the end of a pass, when the region bodies exist
/// and the members they replace are not yet freed, so room reserved then
/// for later passes would add to the peak, while growing a table
/// afterwards, once the members are gone, does not.
struct PassScratch {
  explicit PassScratch(const Graph& graph) {
    size_t nodes = graph.nodeIdBound() + 64;
    size_t values = graph.valueIdBound() + 64;
    dag.reserve(nodes);
    bodies.reserve(nodes, values);
    for (auto* table : {&excluded, &candidate, &scratch}) table->reserve(nodes);
    taken.reserve(nodes);
    inlinedBy.reserve(values);
    readByFused.reserve(values);
  }

  QuotientDag dag;
  /// dag was initialized on the graph as it is now.
  bool dagIsCurrent = false;
  /// Over dag's order; invalidated with every init.
  SeedIndex seeds;
  RegionBodyBuilder bodies;
  /// By node id: the id of the pending region that took the node, or -1.
  std::vector<int> taken;
  /// By node id: epoch stamps of the passes' growth (property_pass.h). The
  /// properties of one backend share them, so the epochs are shared too.
  std::vector<uint32_t> excluded;
  std::vector<uint32_t> candidate;
  std::vector<uint32_t> scratch;
  uint32_t seedMark = 1;  // excluded starts at 0: nothing excluded
  uint32_t candidateMark = 0;
  uint32_t scratchMark = 0;
  /// The tables above are filled for the traversal under way (they are
  /// filled at the first selected seed, not before: a traversal that
  /// selects nothing never writes them).
  bool regionTables = false;
  /// By value id: the serial of the last surgery (RegionSurgery) that
  /// listed the constant as inlined, and of the last one whose fused nodes
  /// read the value. Each surgery takes the next serial.
  std::vector<uint32_t> inlinedBy;
  std::vector<uint32_t> readByFused;
  uint32_t surgerySerial = 0;
  /// Names that nested graphs (If, Loop, Scan bodies) read from the graph.
  /// Fusing keeps outer names, so the set taken before the first pass
  /// holds for every pass.
  std::set<std::string> captured;
  /// The fused nodes the last traversal made, and whether the edges they
  /// hold are the only ones added to the graph since the quotient DAG's
  /// ranks were computed (no hook added an edge or a node).
  std::vector<const Node*> lastFused;
  bool onlyFusedEdgesAdded = false;
};

/// True if `node`, a node of `run.graph`, may still join a region: not
/// fused, not taken by a pending region, and not excluded to avoid a cycle
/// under the current seed epoch (a node the previous seed's region
/// excluded is not offered as the next seed either). Before the first
/// selected seed of a traversal nothing is taken or excluded, and the
/// tables saying so are not filled yet.
inline bool isAvailable(const RunState& run, const PassScratch& tables, const Node& node) {
  if (run.isFused(node)) return false;
  return !tables.regionTables ||
         (tables.taken[node.id()] < 0 && tables.excluded[node.id()] != tables.seedMark);
}

}  // namespace subgraph::partition::detail
