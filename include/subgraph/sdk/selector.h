//===- subgraph/sdk/selector.h - Selectors and properties for plugins -*- C++ -*-===//
//
// Part of the header-only plugin SDK (see subgraph/sdk/plugin.h). A plugin
// proposes regions the way an MXNet backend does: a SubgraphProperty makes a
// SubgraphSelector per partitioning pass; the host's partitioner calls
// Select on each candidate seed, grows the region with SelectInput and
// SelectOutput, lets Filter trim it, and finally asks CreateSubgraphNode
// about the region's body. Only the host decides: it keeps every region
// convex and the graph acyclic whatever the selector answers, and it only
// offers nodes that are still free, so a selector never sees fused nodes.
//
// For fixed shapes of ops, a declarative Pattern is simpler and faster: the
// host matches it with its own pattern matcher (backtracking, optional
// nodes) without calling into the plugin for every node.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "subgraph/sdk/graph_view.h"

namespace subgraph::sdk {

/// A selector's answer: yes, or no with an optional reason that ends up in
/// the partition report for nodes left unfused.
class Decision {
 public:
  /// A yes for true, a reasonless no for false.
  Decision(bool yes) : yes_(yes) {}  // NOLINT: implicit so `return true;` reads naturally
  /// A yes.
  static Decision yes() { return Decision(true); }
  /// A no, saying why.
  static Decision no(std::string reason = {}) {
    Decision d(false);
    d.reason_ = std::move(reason);
    return d;
  }
  /// True for yes.
  explicit operator bool() const { return yes_; }
  /// The reason of a no; may be empty.
  const std::string& reason() const { return reason_; }

 private:
  bool yes_;
  std::string reason_;
};

/// Proposes regions node by node (MXNet's SubgraphSelector). A fresh one is
/// made per partitioning pass; Reset() runs before every seed, so it may
/// keep per-region state.
///
/// View lifetimes: the graph does not change during a pass (regions are
/// fused only after its last seed), so a NodeView or ValueView a call
/// receives stays valid, and compares equal to any later view of the same
/// node, until the selector is destroyed, across Reset() and seeds. A
/// selector may keep views between calls, as MXNet selectors keep Node*;
/// it must not keep them past its own life.
class SubgraphSelector {
 public:
  virtual ~SubgraphSelector() = default;
  /// Whether `node` may seed a region.
  virtual Decision Select(const NodeView& node) = 0;
  /// Whether the region holding `node` may grow to `producer`, which
  /// computes one of `node`'s inputs.
  virtual Decision SelectInput(const NodeView& node, const NodeView& producer) {
    (void)node;
    (void)producer;
    return false;
  }
  /// Whether the region holding `node` may grow to `consumer`, which reads
  /// one of `node`'s outputs.
  virtual Decision SelectOutput(const NodeView& node, const NodeView& consumer) {
    (void)node;
    (void)consumer;
    return false;
  }
  /// The subset of the grown region to keep; `candidates` are in
  /// topological order. The host re-checks convexity.
  virtual std::vector<NodeView> Filter(const std::vector<NodeView>& candidates) {
    return candidates;
  }
  /// Why the last Filter call dropped `node`, for the partition report
  /// ("dropped by <plugin>'s Filter: <reason>"); empty for no reason.
  virtual std::string FilterReason(const NodeView& node) {
    (void)node;
    return {};
  }
  /// Forgets per-region state; called before every use.
  virtual void Reset() {}
};

/// Matches one node of a Pattern: op types plus conditions.
class OpPattern {
 public:
  /// Matches `opTypes`: "Conv", "Relu|Clip", "domain.Op", or "*".
  OpPattern(std::string opTypes) : opTypes_(std::move(opTypes)) {}  // NOLINT: implicit
  /// Matches `opTypes` (see above).
  OpPattern(const char* opTypes) : opTypes_(opTypes) {}  // NOLINT: implicit

  /// Matched when present, skipped otherwise.
  OpPattern& optional() { return flag(SG_PATTERN_OPTIONAL); }
  /// Every output is read once and is no graph output.
  OpPattern& oneUse() { return flag(SG_PATTERN_ONE_USE); }
  /// Every reader of every output is in the match and none is a graph
  /// output; unlike oneUse(), a value read twice inside the pattern (GELU's
  /// input, read by its Div and its Mul) matches.
  OpPattern& usesInside() { return flag(SG_PATTERN_USES_INSIDE); }
  /// When a later node of the match reads it, only the nodes its pattern
  /// edges lead to read it, and it is no graph output; when it ends the
  /// match, anything may read it. Mark the steps of a chain with optional
  /// members so (Conv -> [BN] -> [Add] -> [act]): one pattern then covers
  /// every variant, and only the variant's last node has other readers.
  OpPattern& onlyFeedsNext() { return flag(SG_PATTERN_ONLY_FEEDS_NEXT); }
  /// Every input and output has a fully static shape.
  OpPattern& staticShapes() { return flag(SG_PATTERN_STATIC_SHAPES); }
  /// No static dim of size 0.
  OpPattern& noZeroDims() { return flag(SG_PATTERN_NO_ZERO_DIMS); }
  /// Input `index` (< 32) is present and constant (weights).
  OpPattern& constantInput(uint32_t index) {
    constantInputs_ |= 1u << index;
    return *this;
  }
  /// An extra condition, evaluated in the plugin. Several where() calls
  /// must all hold; the first that fails gives the reason.
  OpPattern& where(std::function<Decision(const NodeView&)> predicate) {
    if (!predicate_) {
      predicate_ = std::move(predicate);
    } else {
      predicate_ = [first = std::move(predicate_),
                    second = std::move(predicate)](const NodeView& n) -> Decision {
        Decision d = first(n);
        return d ? second(n) : d;
      };
    }
    return *this;
  }

  /// The op types as written.
  const std::string& opTypes() const { return opTypes_; }
  /// SG_PATTERN_* flags.
  uint32_t flags() const { return flags_; }
  /// Bit mask of inputs that must be constant.
  uint32_t constantInputs() const { return constantInputs_; }
  /// The extra condition, or empty.
  const std::function<Decision(const NodeView&)>& predicate() const { return predicate_; }

 private:
  OpPattern& flag(uint32_t f) {
    flags_ |= f;
    return *this;
  }
  std::string opTypes_;
  uint32_t flags_ = 0;
  uint32_t constantInputs_ = 0;
  std::function<Decision(const NodeView&)> predicate_;
};

/// A small DAG of OpPatterns; node 0 is the anchor that seeds a region.
class Pattern {
 public:
  /// Any input position, for connect().
  static constexpr int32_t kAnyInput = -1;

  /// A pattern called `name` (used in reasons).
  explicit Pattern(std::string name) : name_(std::move(name)) {}
  /// A chain: each op reads output 0 of the previous one as input 0.
  static Pattern chain(std::string name, std::vector<OpPattern> ops) {
    Pattern p(std::move(name));
    for (size_t i = 0; i < ops.size(); ++i) {
      p.add(std::move(ops[i]));
      if (i > 0) p.connect(i - 1, i, 0);
    }
    return p;
  }
  /// Adds a node and returns its index.
  size_t add(OpPattern op) {
    nodes_.push_back(std::move(op));
    return nodes_.size() - 1;
  }
  /// Requires output `output` of `producer` to be input `input` (or any
  /// input) of `consumer`.
  Pattern& connect(size_t producer, size_t consumer, int32_t input = kAnyInput,
                   uint32_t output = 0) {
    edges_.push_back(
        {static_cast<uint32_t>(producer), static_cast<uint32_t>(consumer), input, output});
    return *this;
  }

  /// The name.
  const std::string& name() const { return name_; }
  /// Nodes in matching order.
  const std::vector<OpPattern>& nodes() const { return nodes_; }
  /// Edges.
  const std::vector<SgPatternEdge>& edges() const { return edges_; }

 private:
  std::string name_;
  std::vector<OpPattern> nodes_;
  std::vector<SgPatternEdge> edges_;
};

/// Options of a property (the host's PropertyOptions).
struct PropertyOptions {
  /// Skip when partitioning for training.
  bool inferenceOnly = false;
  /// Smaller regions are not fused.
  uint32_t minRegionSize = 1;
};

/// CreateSubgraphNode's answer: accept (optionally naming the fused op and
/// adding attributes) or reject with a reason.
struct FusedNode {
  /// Accepted with the host's defaults: op `<property>` in domain
  /// `subgraph.<backend>`, the region as attribute "body".
  static FusedNode accept() { return FusedNode{}; }
  /// Rejected; the region's nodes stay free for later seeds.
  static FusedNode reject(std::string reason) {
    FusedNode n;
    n.accepted = false;
    n.reason = std::move(reason);
    return n;
  }

  bool accepted = true;
  std::string reason;
  /// Empty: default.
  std::string opType;
  /// Empty: default.
  std::string domain;
  /// Empty: default.
  std::string name;
  /// Extra attributes, besides "body".
  std::vector<Attr> attrs;
};

/// One fusion rule (MXNet's SubgraphProperty). Give it a Pattern, or
/// override CreateSubgraphSelector.
class SubgraphProperty {
 public:
  /// A property called `name`: a valid identifier, the default fused op's
  /// name.
  explicit SubgraphProperty(std::string name, PropertyOptions options = {})
      : name_(std::move(name)), options_(options) {}
  virtual ~SubgraphProperty() = default;

  /// The name.
  const std::string& name() const { return name_; }
  /// The options.
  const PropertyOptions& options() const { return options_; }
  /// The declarative pattern, or null if the property has a selector.
  const Pattern* pattern() const { return pattern_.get(); }

  /// A fresh selector for one pass; unused when a pattern is set.
  virtual std::unique_ptr<SubgraphSelector> CreateSubgraphSelector() const { return nullptr; }
  /// For a selector: the op types ("Conv", or "domain.Op" for another
  /// domain) of the nodes that can seed a region. Declaring them promises
  /// that Select says no, without a reason, to every node of another type,
  /// and the host then offers Select only these: a pass costs its seeds,
  /// not the whole graph. Empty (the default): every node. Unused when a
  /// pattern is set (its anchor's ops are its seeds).
  virtual std::vector<std::string> SeedOpTypes() const { return {}; }
  /// Decides on a region whose body is `body` (its boundary values are the
  /// body's inputs and outputs); the default accepts it as is.
  virtual FusedNode CreateSubgraphNode(const GraphView& body, int regionId) const {
    (void)body;
    (void)regionId;
    return FusedNode::accept();
  }
  /// True if CreateSubgraphNode accepts every region with the defaults, so
  /// that the host need not build a body per region to ask (the plugin
  /// then registers no create_subgraph_node slot). PatternProperty says
  /// so; a property that overrides CreateSubgraphNode must not.
  virtual bool AcceptsEveryRegion() const { return false; }

 protected:
  /// Makes this a declarative property.
  void setPattern(Pattern pattern) { pattern_ = std::make_shared<Pattern>(std::move(pattern)); }

 private:
  std::string name_;
  PropertyOptions options_;
  std::shared_ptr<Pattern> pattern_;
};

/// A property that is just a pattern: it accepts every region it matches.
/// Sealed, so that no subclass breaks AcceptsEveryRegion's promise;
/// derive from SubgraphProperty to decide on regions.
class PatternProperty : public SubgraphProperty {
 public:
  /// A property called `name` fusing `pattern`.
  PatternProperty(std::string name, Pattern pattern, PropertyOptions options = {})
      : SubgraphProperty(std::move(name), options) {
    setPattern(std::move(pattern));
  }
  FusedNode CreateSubgraphNode(const GraphView&, int) const final { return FusedNode::accept(); }
  bool AcceptsEveryRegion() const final { return true; }
};

}  // namespace subgraph::sdk
