//===- subgraph/partition/subgraph_property.h - One fusion rule -*- C++ -*-===//
//
// A SubgraphProperty is one fusion rule of a backend: it creates the
// selector that proposes regions, turns each accepted region into a fused
// node (or rejects it), and may adjust the fused node's connections and the
// graph before and after its pass. It follows MXNet's SubgraphProperty, with
// typed options instead of a string-keyed attribute bag.
//
// A fused node is described, not built, by the property (FusedNode): the
// partitioner owns graph mutation, so it can keep graph inputs, outputs and
// value names unchanged and the graph acyclic whatever the property does.
// The region reaches the property as a standalone body Graph: its boundary
// inputs are the body's graph inputs, the values that escape the region are
// its graph outputs, and all keep their original names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "subgraph/ir/attribute.h"
#include "subgraph/ir/graph.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/partition/decision.h"
#include "subgraph/partition/subgraph_selector.h"
#include "subgraph/support/status.h"

namespace subgraph::partition {

/// What to do when Filter returns a set that is not one connected, convex
/// region.
enum class FilterSplit {
  kSplit,   ///< Fuse each connected, convex part on its own.
  kReject,  ///< Fuse nothing from this region.
};

/// Typed options of a property.
struct PropertyOptions {
  /// Skip this property when partitioning a graph for training (for example
  /// a fusion that folds BatchNormalization statistics into weights).
  bool inferenceOnly = false;
  /// Regions with fewer nodes are not fused; their nodes are reported as
  /// "below minimum region size".
  size_t minRegionSize = 1;
  /// Give a value that the region reads several times (x + x) one input of
  /// the fused node; otherwise every read is its own input.
  bool mergeDuplicatedInputs = true;
  /// Copy the constants (initializers that are not graph inputs) that the
  /// region reads into its body instead of passing them in as inputs. The
  /// data is shared, not copied; a constant nobody else reads is then
  /// removed from the graph.
  bool inlineConstants = true;
  /// What to do with a Filter result that is disconnected or not convex.
  FilterSplit filterSplit = FilterSplit::kSplit;
};

/// What the partitioner tells a property about a region it is asked to fuse.
struct RegionInfo {
  /// Region id, unique across one partitionGraph() call, in creation order.
  int id = 0;
  /// The backend that owns the property.
  std::string backend;
  /// The property's name().
  std::string property;
  /// The region's nodes in the graph being partitioned, in topological order.
  std::vector<const Node*> nodes;
};

/// The fused node a property asks for; the partitioner connects it.
struct FusedNode {
  /// The op; null means the default, op `<property>` in domain
  /// `subgraph.<backend>`.
  const OpKey* op = nullptr;
  /// Attributes. By convention a graph attribute named "body" holds the
  /// region body; the ONNX exporter turns such nodes into function calls.
  std::vector<Attribute> attrs;
  /// Node name; empty means "<backend>_<property>_<id>".
  std::string name;
};

/// CreateSubgraphNode's answer: the fused node to insert, or a rejection of
/// the region, with a reason where there is one.
class SubgraphNodeResult {
 public:
  /// Accepts the region with `node` as its fused node.
  SubgraphNodeResult(FusedNode node) : node_(std::move(node)) {}  // NOLINT: implicit
  /// Rejects the region without a reason ("nothing").
  SubgraphNodeResult(std::nullopt_t) {}  // NOLINT: implicit
  /// Rejects the region, saying why.
  static SubgraphNodeResult reject(std::string reason) {
    SubgraphNodeResult r(std::nullopt);
    r.reason_ = std::move(reason);
    return r;
  }

  /// True if the region was accepted.
  bool accepted() const { return node_.has_value(); }
  /// The fused node; only meaningful when accepted().
  FusedNode& node() { return *node_; }
  /// Why the region was rejected; may be empty.
  const std::string& reason() const { return reason_; }

 private:
  std::optional<FusedNode> node_;
  std::string reason_;
};

/// One accepted region as its property sees it after the pass, for
/// PostPartition.
struct FusedRegion {
  /// Region id (RegionInfo::id).
  int id = 0;
  /// The fused node now in the graph.
  Node* node = nullptr;
};

/// One fusion rule of a backend.
class SubgraphProperty {
 public:
  virtual ~SubgraphProperty() = default;

  /// Short stable name, e.g. "conv_bn"; used in reports and as the default
  /// fused op name, so it should be a valid identifier.
  virtual std::string name() const = 0;

  /// A selector for one pass. Override this or CreateSubgraphSelectorV2.
  virtual std::unique_ptr<SubgraphSelector> CreateSubgraphSelector() const { return nullptr; }
  /// A V2 selector for one pass; by default the V1 selector, adapted.
  virtual std::unique_ptr<SubgraphSelectorV2> CreateSubgraphSelectorV2() const;

  /// The fused node for the region whose body is `subgraph`, or a
  /// rejection. Called once per region, before the region is committed, so a
  /// rejection leaves its nodes free for later seeds. `region.id` is the
  /// region id. The default returns defaultFusedNode().
  virtual SubgraphNodeResult CreateSubgraphNode(std::shared_ptr<Graph> subgraph,
                                                const RegionInfo& region) const;

  /// True if this property accepts every region with defaultFusedNode()
  /// and keeps the default connection hooks, so that no decision needs a
  /// body. The partitioner then calls none of the three and builds each
  /// body only at surgery, by moving the region's own nodes into it rather
  /// than copying them before CreateSubgraphNode and freeing them after:
  /// that copy is most of the cost of partitioning a large graph.
  /// PatternProperty says so and seals the three; a property that
  /// overrides any of them must not.
  virtual bool FusesWithoutBody() const { return false; }

  /// The op types ("Conv", or "domain.Op" for another domain) of the nodes
  /// that can seed this property's regions. A property that declares them
  /// promises that its selector's Select says no, without a reason, to
  /// every other node, and the partitioner then offers it only those
  /// nodes: a pass costs its seeds, not the whole graph. Empty (the
  /// default): every node may seed. PatternProperty declares its anchor's.
  virtual std::vector<std::string> SeedOpTypes() const { return {}; }

  /// Adjusts the fused node's inputs: `inputs[i]` is the outer value that
  /// feeds body input i. An override may reorder them if it permutes the
  /// body's inputs the same way (permuteBodyInputs), or replace a value by
  /// another outer value. The count must stay equal to the body's.
  virtual Status ConnectSubgraphInputs(Graph& subgraph, std::vector<Value*>& inputs) const {
    (void)subgraph;
    (void)inputs;
    return Status::ok();
  }
  /// Adjusts the fused node's outputs: `outputs[j]` is the outer value that
  /// body output j becomes. An override may reorder them together with the
  /// body's outputs; the set must stay that of the escaping values, which
  /// is what keeps every outside reader connected.
  virtual Status ConnectSubgraphOutputs(Graph& subgraph, std::vector<Value*>& outputs) const {
    (void)subgraph;
    (void)outputs;
    return Status::ok();
  }

  /// Runs before this property's pass, e.g. to collect graph-wide facts.
  virtual Status PrePartition(const Graph& graph) {
    (void)graph;
    return Status::ok();
  }
  /// Asked once the pass has visited every seed, before any region is
  /// fused: an error a selector or CreateSubgraphNode could not return
  /// through its answer (a plugin callback that failed answers "no" and
  /// remembers why). An error fails the partition, named as a selection
  /// error, not as PostPartition's.
  virtual Status SelectionStatus() const { return Status::ok(); }
  /// Runs after this property's pass with the regions it fused. The graph
  /// must stay acyclic; the partitioner checks.
  virtual Status PostPartition(Graph& graph, std::span<const FusedRegion> regions) {
    (void)graph;
    (void)regions;
    return Status::ok();
  }
  /// False promises that PrePartition and PostPartition are the defaults,
  /// which change nothing: the partitioner may then rank the graph once
  /// for this property and its neighbours of the same backend and fuse
  /// their regions in one surgery at the end (Traversal::kPerBackend).
  /// True, the default, gives the property a pass of its own, between the
  /// graphs its hooks and the fusions before it leave.
  virtual bool HasPartitionHooks() const { return true; }

  /// This property's options.
  const PropertyOptions& options() const { return options_; }
  /// Replaces this property's options.
  void setOptions(PropertyOptions options) { options_ = std::move(options); }

 private:
  PropertyOptions options_;
};

/// The default fused node: op `<property>` in domain `subgraph.<backend>`,
/// named `<backend>_<property>_<id>`, with `subgraph` as graph attribute
/// "body".
FusedNode defaultFusedNode(std::shared_ptr<Graph> subgraph, const RegionInfo& region);

/// Reorders the body's graph inputs and `inputs` together: new position k
/// holds old position `order[k]`. `order` must be a permutation.
Status permuteBodyInputs(Graph& body, std::vector<Value*>& inputs, std::span<const size_t> order);
/// Reorders the body's graph outputs and `outputs` together, as above.
Status permuteBodyOutputs(Graph& body, std::vector<Value*>& outputs, std::span<const size_t> order);

}  // namespace subgraph::partition
