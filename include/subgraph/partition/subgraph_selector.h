//===- subgraph/partition/subgraph_selector.h - What a region may hold -*- C++ -*-===//
//
// A SubgraphSelector is how a backend says, node by node, what it can run:
// the partitioner asks it for a seed (Select), grows a region from the seed
// by asking about each producer (SelectInput) and consumer (SelectOutput) of
// the region, and lets it drop candidates at the end (Filter). The method
// names and their meaning follow MXNet's subgraph API so that backends port
// over directly; the partitioner, not the selector, guarantees that the
// regions are convex and that contracting them leaves the graph acyclic.
//
// Contract between the partitioner and a selector:
//  * Reset() is called before every use of the selector, that is before each
//    seed is offered and before every retry of the same seed, so a selector
//    may keep per-region state (a pattern match, a running cost).
//  * Only nodes that are still available are offered: not claimed by
//    another region, not a fused node, not excluded by an earlier retry.
//  * Every answer is a Decision; a "no" may carry a reason that ends up in
//    the partition report for nodes that stay unfused.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "subgraph/ir/node.h"
#include "subgraph/partition/decision.h"

namespace subgraph::partition {

/// A selector that sees single nodes, as in MXNet's SubgraphSelector.
class SubgraphSelector {
 public:
  virtual ~SubgraphSelector() = default;

  /// Whether `node` may seed a new region.
  virtual Decision Select(const Node& node) = 0;
  /// Whether the region, which holds `node`, may grow to `producer`, a node
  /// computing one of `node`'s inputs.
  virtual Decision SelectInput(const Node& node, const Node& producer) = 0;
  /// Whether the region, which holds `node`, may grow to `consumer`, a node
  /// reading one of `node`'s outputs.
  virtual Decision SelectOutput(const Node& node, const Node& consumer) = 0;
  /// The subset of the grown region to keep; `candidates` are in
  /// topological order. Anything returned that is not a candidate is an
  /// error. The partitioner re-checks the result: a subset that is not
  /// connected and convex is split into parts that are (or rejected, per
  /// PropertyOptions::filterSplit).
  virtual std::vector<const Node*> Filter(std::span<const Node* const> candidates) {
    return {candidates.begin(), candidates.end()};
  }
  /// Why the last Filter call dropped `node`; asked only about dropped
  /// nodes. Empty means "dropped by Filter" is all the report says.
  virtual std::string FilterReason(const Node& node) const {
    (void)node;
    return {};
  }
  /// Forgets all per-region state; called before every use.
  virtual void Reset() {}
};

/// What the partitioner knows about the state of the partition, offered to
/// V2 selectors through NodeView.
class PartitionState {
 public:
  virtual ~PartitionState() = default;
  /// True if `node` may still join the region being grown: it is in the
  /// graph being partitioned, not in any region, not a fused node and not
  /// excluded by an earlier retry of this region.
  virtual bool available(const Node& node) const = 0;
};

/// A node together with its neighbourhood and the partition state, as MXNet's
/// SubgraphSelectorV2 sees a BiDirectedNode.
class NodeView {
 public:
  /// A view of `node` within the partition state `state`.
  NodeView(const Node& node, const PartitionState& state) : node_(&node), state_(&state) {}

  /// The node itself.
  const Node& node() const { return *node_; }
  /// Distinct nodes reading any output of this node, in use order.
  std::vector<const Node*> consumers() const;
  /// Distinct nodes computing any input of this node, in input order.
  std::vector<const Node*> producers() const;
  /// True if some output of this node is a graph output.
  bool feedsGraphOutput() const;
  /// True if `other` may still join the region being grown (see
  /// PartitionState::available).
  bool available(const Node& other) const { return state_->available(other); }
  /// The partition state behind this view.
  const PartitionState& state() const { return *state_; }

 private:
  const Node* node_;
  const PartitionState* state_;
};

/// A selector that sees each node's consumers and the partition state, as
/// in MXNet's SubgraphSelectorV2. The partitioner talks only to this
/// interface; a SubgraphSelector is adapted to it.
class SubgraphSelectorV2 {
 public:
  virtual ~SubgraphSelectorV2() = default;

  /// Whether `node` may seed a new region.
  virtual Decision Select(const NodeView& node) = 0;
  /// Whether the region, which holds `node`, may grow to `producer`.
  virtual Decision SelectInput(const NodeView& node, const NodeView& producer) = 0;
  /// Whether the region, which holds `node`, may grow to `consumer`.
  virtual Decision SelectOutput(const NodeView& node, const NodeView& consumer) = 0;
  /// The subset of the grown region to keep (see SubgraphSelector::Filter).
  virtual std::vector<const Node*> Filter(std::span<const Node* const> candidates) {
    return {candidates.begin(), candidates.end()};
  }
  /// Why the last Filter call dropped `node`; empty if no reason is known.
  virtual std::string FilterReason(const Node& node) const {
    (void)node;
    return {};
  }
  /// Forgets all per-region state; called before every use.
  virtual void Reset() {}
};

/// Wraps a SubgraphSelector so that the partitioner can drive it as a
/// SubgraphSelectorV2.
std::unique_ptr<SubgraphSelectorV2> adaptSelector(std::unique_ptr<SubgraphSelector> selector);

}  // namespace subgraph::partition
