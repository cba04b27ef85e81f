//===- testing/testkit/random_partition.h - Random DAGs and selectors -*- C++ -*-===//
//
// The random inputs of the partitioner's property test and fuzzer
// (tests/subgraph/partition_property_test.cpp, tests/fuzz/partition_fuzzer.cpp),
// shared so both explore the same space: structural DAGs of unknown "p.Op"
// nodes, and backends of properties whose selectors, Filter, rejections and
// options are all drawn from the same RandomSource.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/partition/backend_registry.h"
#include "subgraph/partition/subgraph_property.h"
#include "subgraph/partition/subgraph_selector.h"
#include "testkit/random.h"

namespace subgraph::testkit {

/// Random behaviour of one property's selector.
struct RandomSelectorConfig {
  uint64_t seed = 0;
  size_t selectPct = 50, inputPct = 50, outputPct = 50;
  size_t growBudget = 0;  ///< 0: unlimited; else stop after this many nodes
  int filterMode = 0;     ///< 0 keep all, 1 drop a random subset, 2 keep one
  size_t rejectPct = 0;   ///< CreateSubgraphNode rejects this often
  /// Counts selectors used a second time without Reset(), when not null.
  int* resetViolations = nullptr;
};

/// Answers every question by a deterministic roll of its config's seed.
class RandomSelector : public partition::SubgraphSelector {
 public:
  explicit RandomSelector(RandomSelectorConfig config) : c_(config) {}
  partition::Decision Select(const Node& n) override;
  partition::Decision SelectInput(const Node& n, const Node& p) override;
  partition::Decision SelectOutput(const Node& n, const Node& c) override;
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override;
  void Reset() override;

 private:
  partition::Decision grow(bool yes);
  RandomSelectorConfig c_;
  bool used_ = false;
  size_t grown_ = 0;
};

/// A property over RandomSelector that also rejects regions at random.
class RandomProperty : public partition::SubgraphProperty {
 public:
  RandomProperty(std::string name, RandomSelectorConfig config, partition::PropertyOptions options);
  std::string name() const override { return name_; }
  std::unique_ptr<partition::SubgraphSelector> CreateSubgraphSelector() const override;
  partition::SubgraphNodeResult CreateSubgraphNode(
      std::shared_ptr<Graph> body, const partition::RegionInfo& region) const override;

 private:
  std::string name_;
  RandomSelectorConfig config_;
};

/// A random DAG of 1-14 "p.Op" nodes: graph inputs, constants (sometimes
/// shared), nodes with 1-3 inputs drawn from earlier values (repeats
/// allowed, as in x + x; recent values preferred so graphs are deep as well
/// as wide) and 1-2 outputs, and graph outputs that cover every unread value
/// plus random extra ones (repeats allowed).
std::unique_ptr<Graph> randomStructuralGraph(RandomSource& rng);

/// 1-2 backends of 1-2 RandomProperty each, with random options.
/// `resetViolations` is handed to every selector (may be null).
std::vector<partition::SubgraphBackend> randomBackends(RandomSource& rng,
                                                       int* resetViolations = nullptr);

}  // namespace subgraph::testkit
