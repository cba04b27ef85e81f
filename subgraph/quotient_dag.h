//===- subgraph/quotient_dag.h - Regions as groups over a ranked DAG -*- C++ -*-===//
//
// The partitioner's cycle-safety engine (internal to subgraph_partition).
// It views the graph as a quotient DAG: every committed region is one
// group, every other node is a group of its own, and group edges are the
// data edges between members. Each group carries a rank, and the ranks are
// a topological order of the quotient DAG at all times.
//
// Invariants:
//  * rank(group(u)) < rank(group(v)) for every edge u -> v between groups.
//  * A group is either a single node or one committed region; regions are
//    formed from single-node groups in one step and never merged again, so
//    the union-find forest has depth one and find() is a load.
//
// Why ranks: a path between two groups only visits groups whose ranks lie
// between theirs, so a cycle check for a candidate region searches only the
// rank window [min rank, max rank] of the region, and a region whose
// escaping edges all leave the window needs no search at all.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/support/status.h"

namespace subgraph::partition::detail {

/// A node of a candidate region that is reachable again from the region
/// through a node outside it (or that reaches the region again, for a
/// backward search), and the first outside node on that path.
struct Reentry {
  Node* member = nullptr;
  Node* via = nullptr;
};

/// Union-find groups over a graph with a maintained topological rank order.
class QuotientDag {
 public:
  /// Direction of a bounded search.
  enum class Direction { kForward, kBackward };

  /// Builds singleton groups over `graph` ranked by a deterministic,
  /// locality-preserving topological order (a depth-first Kahn order: a
  /// node's consumer that becomes ready is placed right after it, so
  /// chains get adjacent ranks). Fails naming a node on a cycle.
  Status init(const Graph& graph);
  /// Reserves room for graphs of up to `nodes` node ids, so that init()
  /// reuses its tables instead of reallocating them.
  void reserve(size_t nodes);

  /// The topological order computed by init(), unaffected by later merges.
  const std::vector<Node*>& order() const { return order_; }
  /// The ids of order(), computed from the ranks rather than read from the
  /// nodes (which on a large graph costs a cache miss each). Valid until
  /// the first merge.
  std::vector<NodeId> orderIds() const;
  /// The representative node id of `node`'s group.
  NodeId group(const Node& node) const { return groupsReady_ ? parent_[node.id()] : node.id(); }
  /// The rank of `node`'s group.
  uint32_t rank(const Node& node) const { return rank_[group(node)]; }
  /// What rankAtInit() gives for nodes the last init() did not see.
  static constexpr uint32_t kNoRank = UINT32_MAX;
  /// rank(node) if `node` existed when init() last ran (node ids are never
  /// reused, so an id below that graph's bound says so), else kNoRank.
  uint32_t rankAtInit(const Node& node) const { return node.id() < bound_ ? rank(node) : kNoRank; }

  /// Members of `members` (distinct, single-node groups) that are
  /// reachable from the set through some node outside it, searching along
  /// `direction` only inside the set's rank window. The set is convex iff
  /// the forward result is empty (equivalently, the backward one).
  std::vector<Reentry> findReentries(std::span<Node* const> members, Direction direction);

  /// Contracts `members` (distinct single-node groups forming a convex
  /// set) into one group and restores the rank invariant, reordering only
  /// groups in the set's rank window (Pearce-Kelly). Returns the number of
  /// groups whose rank changed, for tests and statistics.
  size_t contract(std::span<Node* const> members);

  /// Number of bounded searches that visited at least one group, and the
  /// total number of groups they visited; the complexity argument in
  /// docs/partitioning.md is about these.
  uint64_t searches() const { return searches_; }
  uint64_t visitedGroups() const { return visited_; }

 private:
  struct Window {
    uint32_t lo = 0;
    uint32_t hi = 0;
  };
  Window markMembers(std::span<Node* const> members);
  // Visits groups reachable from the marked members along `direction`
  // strictly inside the window; outside groups go to `outside` and reached
  // members to `reentries` (if non-null).
  void search(std::span<Node* const> members, Direction direction, Window window,
              std::vector<NodeId>& outside, std::vector<Reentry>* reentries);
  template <typename Fn>
  void forEachNeighbour(NodeId rep, Direction direction, Fn&& fn) const;

  // Fills the group tables (parent_, next_ and the epochs) on the first
  // search or contraction after init(). Until then every group is a single
  // node, which group() answers without them: a pass that forms no region
  // (a backend matching nothing in the model) never writes these four
  // tables, 16 bytes a node.
  void prepareGroups();

  const Graph* graph_ = nullptr;
  NodeId bound_ = 0;          // the graph's node id bound at init()
  bool groupsReady_ = false;  // parent_, next_ and the epochs are filled
  std::vector<Node*> order_;
  std::vector<NodeId> parent_;  // group representative, by node id
  std::vector<NodeId> next_;    // circular list of group members, by node id
  std::vector<uint32_t> rank_;  // rank, valid at representatives
  std::vector<uint32_t> memberEpoch_;
  std::vector<uint32_t> visitEpoch_;
  uint32_t memberMark_ = 0;
  uint32_t visitMark_ = 0;
  uint64_t searches_ = 0;
  uint64_t visited_ = 0;
  // Scratch buffers reused across calls so a region costs no allocation.
  std::vector<std::pair<NodeId, Node*>> stack_;
  std::vector<uint32_t> pending_;
  std::vector<uint32_t> succBegin_;  // init's successor table: node id -> first in succ_
  std::vector<NodeId> succ_;         // consumers' ids, a use each, by producer
  std::vector<NodeId> readyIds_;
  std::vector<NodeId> forward_;
  std::vector<NodeId> backward_;
  std::vector<uint32_t> pool_;
};

}  // namespace subgraph::partition::detail
