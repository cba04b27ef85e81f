//===- subgraph/partition/pattern_selector.h - Declarative fusion patterns -*- C++ -*-===//
//
// Most backends fuse small, fixed shapes of ops (Conv -> BatchNormalization
// -> optional Relu; Conv -> Add(residual) -> Relu). A Pattern states such a
// shape declaratively, as a small DAG of op matchers with predicates on
// attributes and shapes; PatternSelector and PatternProperty turn it into a
// selector and a property, so a backend needs no hand-written state machine.
//
// Matching semantics:
//  * Pattern node 0 is the anchor: only nodes matching it seed a region.
//  * Every other pattern node is connected by a pattern edge to an earlier
//    one, so nodes are matched in declaration order, each found among the
//    consumers or producers of an already matched node.
//  * The search backtracks, so the first complete match in use order is
//    found even when a greedy choice would fail; optional nodes are matched
//    when possible (the match is maximal) and skipped otherwise.
//  * A skipped optional node passes its input through: an edge from it
//    stands for an edge from the node feeding it (its first edge from an
//    earlier node), so one pattern Conv -> [BN] -> [Add] -> [Relu] covers
//    Conv+Add, Conv+BN+Relu and the rest, and a required node may follow
//    optional ones (Conv -> [BN] -> Add). A present node is never jumped
//    over: a consumer must read the skipped node's producer directly.
//  * A node marked onlyFeedsNext() must, when another matched node reads
//    it, be read by nothing but its matched pattern successors: the
//    variant of a family with optional steps decides which node is last.
//  * Only nodes the partitioner reports available take part, so a retry
//    after a cycle-forming node was excluded matches around it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "subgraph/ir/node.h"
#include "subgraph/partition/decision.h"
#include "subgraph/partition/subgraph_property.h"
#include "subgraph/partition/subgraph_selector.h"
#include "subgraph/support/status.h"

namespace subgraph::partition {

/// A condition on a candidate node; a "no" explains which condition failed.
using NodePredicate = std::function<Decision(const Node&)>;

/// Matches one node: an op type (or a set of them, or any) plus predicates.
class OpMatcher {
 public:
  /// Matches op `opType`, written "Conv" or "domain.Op".
  OpMatcher(std::string opType);  // NOLINT: implicit so chains read naturally
  /// Matches op `opType`, written "Conv" or "domain.Op".
  OpMatcher(const char* opType) : OpMatcher(std::string(opType)) {}  // NOLINT
  /// Matches any of `opTypes`.
  static OpMatcher anyOf(std::vector<std::string> opTypes);
  /// Matches every op.
  static OpMatcher anyOp();

  /// Adds a predicate the node must also satisfy.
  OpMatcher& where(NodePredicate predicate);
  /// Marks this node optional: matched when present, skipped otherwise.
  OpMatcher& optional(bool isOptional = true);
  /// Requires every reader of this node's outputs to be in the match, and
  /// none of them to be a graph output: unlike a one-use predicate, a value
  /// read twice inside a DAG pattern (the input of GELU's erf form, read
  /// by its Div and its Mul) still matches. Checked on the whole match.
  OpMatcher& usesStayInside(bool inside = true);
  /// Inside the match (another matched node reads it through a pattern
  /// edge), its outputs are read only by the matched nodes its pattern
  /// edges lead to, and none is a graph output; when it ends the match
  /// they may be read anywhere. A chain with optional steps
  /// (Conv -> [BN] -> [Add] -> [act]) needs this where a fixed chain
  /// would say "one use" on every node but its last. Checked on the
  /// whole match.
  OpMatcher& onlyFeedsNext(bool only = true);

  /// True if this node may be skipped.
  bool isOptional() const { return optional_; }
  /// True if every reader must be in the match (usesStayInside).
  bool requiresUsesInside() const { return usesInside_; }
  /// True if, inside the match, only its pattern successors may read it.
  bool requiresOnlyFeedsNext() const { return onlyFeedsNext_; }
  /// True if `node`'s op type is one this matcher accepts.
  bool matchesOpType(const Node& node) const;
  /// The op types it accepts, as written; empty for any op.
  const std::vector<std::string>& opTypes() const { return opTypes_; }
  /// Op type and predicates, with the first failure's reason, which names
  /// `node` ("Add 'b0.add': ...").
  Decision matches(const Node& node) const;
  /// As matches(), with a reason that does not name the node (for a reason
  /// reported against that node already, which then reads the same for
  /// every node it turns down).
  Decision matchesUnnamed(const Node& node) const;
  /// "Conv", "Relu|Clip|HardSwish" or "*".
  std::string describe() const;

 private:
  OpMatcher() = default;
  void internOpTypes();
  std::vector<std::string> opTypes_;  // empty: any op
  // The op kinds of opTypes_, as the registry interns nodes' ops: a node
  // matches by its key's address, not by comparing names (an activation
  // step lists a dozen op types, and comparing each name was a tenth of a
  // large partition).
  std::vector<const OpKey*> keys_;
  std::vector<NodePredicate> predicates_;
  bool optional_ = false;
  bool usesInside_ = false;
  bool onlyFeedsNext_ = false;
};

/// Common predicates for OpMatcher::where.
namespace predicates {
/// Integer attribute `name` (or its schema default) equals `value`.
NodePredicate attrEquals(std::string name, int64_t value);
/// String attribute `name` (or its schema default) equals `value`.
NodePredicate attrEquals(std::string name, std::string value);
/// Integer-list attribute `name` (or its schema default) equals `value`.
NodePredicate attrEquals(std::string name, std::vector<int64_t> value);
/// Input `index` is present and is a constant (initializer, not a graph input).
NodePredicate inputIsConstant(size_t index);
/// Every output is read by exactly one node and is not a graph output.
NodePredicate hasOneUse();
/// Every present input and every output has a fully static shape.
NodePredicate staticShapes();
/// No input or output has a static dimension of size 0.
NodePredicate noZeroSizeDims();
/// Output 0 has a known rank equal to `rank`.
NodePredicate outputRank(size_t rank);
}  // namespace predicates

/// A small DAG of op matchers; build one with PatternBuilder or chain().
class Pattern {
 public:
  /// Any input position of the consumer, for PatternBuilder::connect.
  static constexpr int kAnyInput = -1;

  /// One pattern edge: output `output` of node `producer` is input `input`
  /// (or any input) of node `consumer`.
  struct Edge {
    size_t producer = 0;
    size_t consumer = 0;
    int input = kAnyInput;
    size_t output = 0;
  };

  /// A chain: each op reads output 0 of the previous one as its input 0,
  /// e.g. chain("conv_bn", {"Conv", "BatchNormalization"}).
  static Pattern chain(std::string name, std::vector<OpMatcher> ops);

  /// The pattern's name, used in reasons.
  const std::string& name() const { return name_; }
  /// Pattern nodes in matching order; node 0 is the anchor.
  const std::vector<OpMatcher>& nodes() const { return nodes_; }
  /// Pattern edges.
  const std::vector<Edge>& edges() const { return edges_; }

 private:
  friend class PatternBuilder;
  std::string name_;
  std::vector<OpMatcher> nodes_;
  std::vector<Edge> edges_;
};

/// Builds a Pattern that is a DAG rather than a chain.
class PatternBuilder {
 public:
  /// Starts a pattern called `name`.
  explicit PatternBuilder(std::string name);
  /// Adds a pattern node and returns its index; the first one is the anchor.
  size_t add(OpMatcher matcher);
  /// Requires output `output` of `producer` to be input `input` (or any
  /// input) of `consumer`.
  PatternBuilder& connect(size_t producer, size_t consumer, int input = Pattern::kAnyInput,
                          size_t output = 0);
  /// The pattern, or an error naming the problem: no nodes, an optional
  /// anchor, an edge to a missing node, a node not connected to an earlier
  /// one, or a required node whose optional predecessors cannot pass an
  /// input through (none of them is fed from an earlier node).
  StatusOr<Pattern> build() const;

 private:
  Pattern pattern_;
};

/// The result of matching a pattern from one anchor.
struct PatternMatch {
  /// Matched graph node per pattern node; null for a skipped optional node.
  std::vector<const Node*> nodes;
  /// Why matching failed; empty on success.
  std::string failure;
  /// True if every required pattern node is matched.
  bool ok() const { return failure.empty() && !nodes.empty(); }
};

/// Matches `pattern` with its anchor at `anchor`, using only nodes for which
/// `available` holds (all nodes if it is empty).
PatternMatch matchPattern(const Pattern& pattern, const Node& anchor,
                          const std::function<bool(const Node&)>& available = {});

/// A selector for one pattern: Select matches the whole pattern from the
/// anchor, and the region grows exactly over the match.
class PatternSelector : public SubgraphSelectorV2 {
 public:
  /// A selector for `pattern`.
  explicit PatternSelector(std::shared_ptr<const Pattern> pattern);

  Decision Select(const NodeView& node) override;
  Decision SelectInput(const NodeView& node, const NodeView& producer) override;
  Decision SelectOutput(const NodeView& node, const NodeView& consumer) override;
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override;
  std::string FilterReason(const Node& node) const override;
  void Reset() override;

  /// A reason whose text is built only when called: `text(prefix)` is
  /// `prefix` followed by what Select's reason would have been. It reads
  /// the nodes the match failed at, so call it while they are unchanged.
  using DeferredReason = std::function<std::string(std::string_view prefix)>;
  /// With deferral on, a match that fails away from its anchor (and, under
  /// assumeMissing(), every anchor) leaves its reason unbuilt: Select says
  /// a no without a reason, and
  /// takeDeferredReason() hands that reason out once. For a partitioner
  /// whose later properties mostly replace or drop the reasons of the
  /// earlier ones (a failed match names a node, so no two texts are alike).
  void deferReasons(bool on) { deferReasons_ = on; }
  /// The last Select's match: the matched node per pattern node, null for
  /// a skipped optional node; empty unless that Select said yes. The
  /// region SelectInput and SelectOutput grow from the anchor is exactly
  /// its nodes, and Filter keeps them all.
  const std::vector<const Node*>& matchedNodes() const { return match_.nodes; }
  /// The reason the last Select left unbuilt, or an empty function.
  DeferredReason takeDeferredReason() { return std::exchange(deferred_, nullptr); }
  /// The op types (OpMatcher::describe()) of the first required node
  /// other than the anchor that no node of `hasAny`'s graph has, or empty:
  /// such a pattern can match nowhere in that graph.
  std::string missingRequiredOps(const std::function<bool(const OpMatcher&)>& hasAny) const;
  /// With `ops` (from missingRequiredOps) set, Select turns down every
  /// anchor instead of searching from it: for the graph having no `ops`
  /// where the anchor passes its own predicates, else for the predicate it
  /// fails, the reason a search would have given first. With deferral on,
  /// that check runs only when the deferred reason is read. Empty: search.
  void assumeMissing(const std::string& ops);

 private:
  bool inMatch(const Node& node) const;
  // The reason assumeMissing() gives `anchor`, after `prefix`.
  std::string missingReasonFor(const Node& anchor, std::string_view prefix) const;

  std::shared_ptr<const Pattern> pattern_;
  PatternMatch match_;
  std::string filterReason_;
  bool deferReasons_ = false;
  DeferredReason deferred_;
  // assumeMissing(): "the graph has no <ops>", the reason of every anchor
  // that passes its own predicates; empty when the pattern is searched.
  std::string missingWhy_;
};

/// A property whose selector is a PatternSelector; the fused node is the
/// default one (op `<name>` in domain `subgraph.<backend>`).
class PatternProperty : public SubgraphProperty {
 public:
  /// A property named `name` fusing `pattern`.
  PatternProperty(std::string name, Pattern pattern, PropertyOptions options = {});

  std::string name() const override { return name_; }
  std::unique_ptr<SubgraphSelectorV2> CreateSubgraphSelectorV2() const override;

  /// A matched pattern is the whole decision: every region is accepted with
  /// defaultFusedNode() and connected as found, so the partitioner moves
  /// the members into their bodies instead of copying them
  /// (FusesWithoutBody). Sealed, so that no subclass breaks that promise;
  /// a backend that must inspect bodies pairs a PatternSelector with a
  /// property of its own.
  bool FusesWithoutBody() const final { return true; }
  /// The anchor's op types: a pattern's match starts at its anchor.
  std::vector<std::string> SeedOpTypes() const override { return pattern_->nodes()[0].opTypes(); }
  SubgraphNodeResult CreateSubgraphNode(std::shared_ptr<Graph> subgraph,
                                        const RegionInfo& region) const final {
    return SubgraphProperty::CreateSubgraphNode(std::move(subgraph), region);
  }
  Status ConnectSubgraphInputs(Graph& subgraph, std::vector<Value*>& inputs) const final {
    return SubgraphProperty::ConnectSubgraphInputs(subgraph, inputs);
  }
  Status ConnectSubgraphOutputs(Graph& subgraph, std::vector<Value*>& outputs) const final {
    return SubgraphProperty::ConnectSubgraphOutputs(subgraph, outputs);
  }
  /// No hooks, so the properties of a backend made of patterns share one
  /// ranking and one surgery.
  bool HasPartitionHooks() const final { return false; }
  Status PrePartition(const Graph& graph) final { return SubgraphProperty::PrePartition(graph); }
  Status PostPartition(Graph& graph, std::span<const FusedRegion> regions) final {
    return SubgraphProperty::PostPartition(graph, regions);
  }

  /// The pattern.
  const Pattern& pattern() const { return *pattern_; }

 private:
  std::string name_;
  std::shared_ptr<const Pattern> pattern_;
};

}  // namespace subgraph::partition
