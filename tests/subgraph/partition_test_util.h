//===- tests/subgraph/partition_test_util.h - Helpers for partitioner tests -===//
//
// Small selectors and properties whose behaviour a test states in one line
// (which op types are supported, which Filter to apply), and checks shared
// by every partitioner test: the result verifies, and regions read as sets
// of node names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/partition/partitioner.h"

namespace subgraph::partition::testing {

/// Decides which of a region's candidates to keep.
using FilterFn = std::function<std::vector<const Node*>(std::span<const Node* const>)>;

/// Seeds at, and grows over, nodes whose op type is in `supported`.
class OpTypeSelector : public SubgraphSelector {
 public:
  explicit OpTypeSelector(std::set<std::string> supported, FilterFn filter = {})
      : supported_(std::move(supported)), filter_(std::move(filter)) {}

  Decision Select(const Node& node) override { return supports(node); }
  Decision SelectInput(const Node&, const Node& producer) override { return supports(producer); }
  Decision SelectOutput(const Node&, const Node& consumer) override { return supports(consumer); }
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override {
    return filter_ ? filter_(candidates) : SubgraphSelector::Filter(candidates);
  }
  std::string FilterReason(const Node&) const override { return "test filter"; }

 private:
  Decision supports(const Node& node) const {
    return Decision::noIf(!supported_.count(node.opType()), node.opType() + " is unsupported");
  }
  std::set<std::string> supported_;
  FilterFn filter_;
};

/// A property built from lambdas: the selector factory and, optionally,
/// CreateSubgraphNode.
class LambdaProperty : public SubgraphProperty {
 public:
  using MakeSelector = std::function<std::unique_ptr<SubgraphSelector>()>;
  using CreateNode = std::function<SubgraphNodeResult(std::shared_ptr<Graph>, const RegionInfo&)>;

  LambdaProperty(std::string name, MakeSelector make, PropertyOptions options = {},
                 CreateNode create = {})
      : name_(std::move(name)), make_(std::move(make)), create_(std::move(create)) {
    setOptions(std::move(options));
  }
  std::string name() const override { return name_; }
  std::unique_ptr<SubgraphSelector> CreateSubgraphSelector() const override { return make_(); }
  SubgraphNodeResult CreateSubgraphNode(std::shared_ptr<Graph> body,
                                        const RegionInfo& region) const override {
    return create_ ? create_(std::move(body), region)
                   : SubgraphProperty::CreateSubgraphNode(std::move(body), region);
  }

 private:
  std::string name_;
  MakeSelector make_;
  CreateNode create_;
};

/// A backend of the given properties.
inline SubgraphBackend makeBackend(std::string name,
                                   std::vector<std::unique_ptr<SubgraphProperty>> properties) {
  SubgraphBackend backend;
  backend.name = std::move(name);
  backend.properties = std::move(properties);
  return backend;
}

/// A backend "test" with one property "ops" over OpTypeSelector.
inline SubgraphBackend opBackend(std::set<std::string> supported, PropertyOptions options = {},
                                 FilterFn filter = {}, std::string name = "test") {
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<LambdaProperty>(
      "ops", [supported, filter] { return std::make_unique<OpTypeSelector>(supported, filter); },
      options));
  return makeBackend(std::move(name), std::move(properties));
}

/// Verifies a partitioned graph; fused ops have no schema.
inline void expectValid(const Graph& graph) {
  VerifyOptions options;
  options.allowUnknownOps = true;
  Status valid = verify(graph, options);
  EXPECT_TRUE(valid.isOk()) << valid.message() << "\n" << printGraph(graph);
}

/// Partitions `graph` for `backends`, expecting success and a valid result.
inline PartitionReport partitionOk(Graph& graph, std::vector<SubgraphBackend>& backends,
                                   const PartitionOptions& options = {}) {
  StatusOr<PartitionReport> report = partitionGraph(graph, backends, options);
  EXPECT_TRUE(report.isOk()) << report.status().message();
  if (!report.isOk()) return {};
  expectValid(graph);
  EXPECT_EQ(report->nodesInRegions + report->rejected.size(), report->nodesTotal);
  return std::move(report).value();
}

/// Partitions `graph` for one backend.
inline PartitionReport partitionOk(Graph& graph, SubgraphBackend backend,
                                   const PartitionOptions& options = {}) {
  std::vector<SubgraphBackend> backends;
  backends.push_back(std::move(backend));
  return partitionOk(graph, backends, options);
}

/// Each region's node names, sorted, and the regions sorted: a canonical
/// form to compare against a literal.
inline std::vector<std::vector<std::string>> regionSets(const PartitionReport& report) {
  std::vector<std::vector<std::string>> sets;
  for (const RegionReport& r : report.regions) {
    std::vector<std::string> nodes = r.nodes;
    std::sort(nodes.begin(), nodes.end());
    sets.push_back(std::move(nodes));
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

/// The region holding node `name`, or null.
inline const RegionReport* regionWith(const PartitionReport& report, const std::string& name) {
  for (const RegionReport& r : report.regions)
    if (std::find(r.nodes.begin(), r.nodes.end(), name) != r.nodes.end()) return &r;
  return nullptr;
}

/// The reason node `name` was left out, or "" if it is in a region.
inline std::string reasonFor(const PartitionReport& report, const std::string& name) {
  for (const RejectedNode& n : report.rejected)
    if (n.node == name) return n.reason;
  return {};
}

/// Names of a graph's inputs or outputs, in order.
inline std::vector<std::string> names(std::span<Value* const> values) {
  std::vector<std::string> out;
  for (Value* v : values) out.push_back(v->name());
  return out;
}

/// The body graph carried by a fused node.
inline const Graph* bodyOf(const Node& fused) {
  const Attribute* body = fused.attr("body");
  return body && body->kind() == AttrKind::kGraph ? body->asGraph().get() : nullptr;
}

}  // namespace subgraph::partition::testing
