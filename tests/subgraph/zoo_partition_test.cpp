//===- tests/subgraph/zoo_partition_test.cpp - Partitioning the zoo models -===//
//
// The acceptance checks on real architectures: the built-in backends on
// the zoo's ResNet-50, MobileNetV2 and a synthetic residual graph, built
// with the zoo API directly (no files). The regions must be exactly the
// ones a reader counts by hand from the architecture.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "partition_test_util.h"
#include "subgraph/zoo/zoo.h"

namespace subgraph::partition {
namespace {

using ::testing::IsEmpty;
using namespace testing;

std::vector<std::string> opsOfRegion(const Graph& original, const RegionReport& region) {
  std::vector<std::string> ops;
  for (NodeId id : region.nodeIds) ops.push_back(original.node(id)->opType());
  return ops;
}

/// ResNet-50 with a backend whose only property is Conv -> BatchNormalization:
/// exactly 53 regions, each {Conv, BatchNormalization}.
TEST(ZooPartition, ResNet50ConvBnGivesExactly53Regions) {
  registerBuiltinBackends();
  std::unique_ptr<Graph> graph = zoo::buildResNet50();
  std::unique_ptr<Graph> original = graph->clone();
  auto backends = instantiateBackends({"convbn"}).value();
  ASSERT_EQ(backends[0].properties.size(), 1u);
  PartitionReport report = partitionOk(*graph, backends);
  ASSERT_EQ(report.regions.size(), 53u);
  for (const RegionReport& region : report.regions) {
    EXPECT_EQ(opsOfRegion(*original, region),
              (std::vector<std::string>{"Conv", "BatchNormalization"}))
        << "region " << region.id;
    EXPECT_EQ(region.inputs.size(), 1u) << "weights and BN statistics are inlined";
    EXPECT_EQ(region.outputs.size(), 1u);
  }
  EXPECT_EQ(report.nodesInRegions, 106u);
  EXPECT_EQ(graph->numNodes(), original->numNodes() - 53);
  EXPECT_EQ(names(graph->outputs()), names(original->outputs()));
}

/// Conv -> BN -> optional Relu on ResNet-50: 53 regions, of which 33 take a
/// Relu: the stem's and two per bottleneck. The third conv of each of the
/// 16 bottlenecks and the 4 downsample convs feed an Add instead.
TEST(ZooPartition, ResNet50ConvBnReluAbsorbsEveryReluAfterABatchNorm) {
  registerBuiltinBackends();
  std::unique_ptr<Graph> graph = zoo::buildResNet50();
  std::unique_ptr<Graph> original = graph->clone();
  auto backends = instantiateBackends({"convbnrelu"}).value();
  PartitionReport report = partitionOk(*graph, backends);
  ASSERT_EQ(report.regions.size(), 53u);
  size_t withRelu = 0;
  for (const RegionReport& region : report.regions) withRelu += region.nodes.size() == 3;
  // 16 bottlenecks x 2 inner Relus + the stem's = 33; the 16 Relus after
  // the residual Adds follow an Add, not a BN.
  EXPECT_EQ(withRelu, 33u);
}

/// Two backends in priority order: convbnrelu first takes every Conv+BN, so
/// convbn (lower priority) gets nothing and the report says so.
TEST(ZooPartition, ResNet50HigherPriorityBackendClaimsFirst) {
  registerBuiltinBackends();
  std::unique_ptr<Graph> graph = zoo::buildResNet50();
  auto backends = instantiateBackends({"convbnrelu", "convbn"}).value();
  PartitionReport report = partitionOk(*graph, backends);
  EXPECT_EQ(report.regions.size(), 53u);
  for (const RegionReport& region : report.regions) EXPECT_EQ(region.backend, "convbnrelu");
  EXPECT_EQ(report.contested.size(), 53u) << "every Conv the lower backend wanted";
}

/// MobileNetV2: every conv is followed by a BatchNormalization.
TEST(ZooPartition, MobileNetV2ConvBnFusesEveryConv) {
  registerBuiltinBackends();
  std::unique_ptr<Graph> graph = zoo::buildMobileNetV2();
  size_t convs = 0;
  for (Node* n : graph->nodes()) convs += n->opType() == "Conv";
  auto backends = instantiateBackends({"convbn"}).value();
  PartitionReport report = partitionOk(*graph, backends);
  EXPECT_EQ(report.regions.size(), convs);
}

/// A synthetic residual graph with unsupported Sin nodes cutting chains:
/// regions never contain a Sin, and the result verifies.
TEST(ZooPartition, SyntheticResidualWithUnsupportedNodes) {
  registerBuiltinBackends();
  zoo::SyntheticOptions options;
  options.nodes = 3000;
  options.unsupportedFraction = 0.3;
  std::unique_ptr<Graph> graph = zoo::buildSynthetic(options).value();
  std::unique_ptr<Graph> original = graph->clone();
  auto backends = instantiateBackends({"convbnrelu"}).value();
  PartitionReport report = partitionOk(*graph, backends);
  EXPECT_GT(report.regions.size(), 0u);
  for (const RegionReport& region : report.regions)
    for (const std::string& op : opsOfRegion(*original, region)) EXPECT_NE(op, "Sin");
  for (const RejectedNode& n : report.rejected) {
    if (n.op == "Sin") {
      EXPECT_EQ(n.reason, "no selector matched");
    }
  }
}

/// The transformer graph has no Conv: nothing fuses, every node says why.
TEST(ZooPartition, SyntheticTransformerHasNothingForConvBackends) {
  registerBuiltinBackends();
  zoo::SyntheticOptions options;
  options.nodes = 1000;
  options.shape = zoo::SyntheticShape::kTransformer;
  std::unique_ptr<Graph> graph = zoo::buildSynthetic(options).value();
  auto backends = instantiateBackends({"convbnrelu"}).value();
  PartitionReport report = partitionOk(*graph, backends);
  EXPECT_THAT(report.regions, IsEmpty());
  EXPECT_EQ(report.rejected.size(), 1000u);
}

}  // namespace
}  // namespace subgraph::partition
