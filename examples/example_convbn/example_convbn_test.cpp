//===- examples/example_convbn/example_convbn_test.cpp - The example's own tests -===//
//
// The example plugin's tests, written with subgraph::testing as the model
// for plugin authors (docs/writing-a-plugin.md, "Testing your plugin"):
// load the plugin, partition small graphs written in the text format,
// state the regions expected and the nodes left out with their reasons,
// check the invariants, and compare with the reference backend. They build
// in subgraph's tree and out of tree against the installed package alike.
//
//===----------------------------------------------------------------------===//
#include <subgraph/testing/plugin_test.h>

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace subgraph::testkit;

class ExampleConvBnTest : public PluginTest {
 protected:
  // The build passes the plugin's path; a name on SUBGRAPH_PLUGIN_PATH
  // works as well.
  void SetUp() override { ASSERT_TRUE(LoadPlugin(EXAMPLE_CONVBN_PLUGIN)); }
};

//   %x -> conv1 -> bn1 -> relu1 -> conv2 -> %y
// conv1+bn1 is the seed example's region; relu1 has no selector that
// wants it, and conv2, a Conv without its BatchNormalization, is dropped by
// the example's Filter.
const std::string kChain = R"(
graph @chain(%x: f32[1, 2, 4, 4]) opset(ai.onnx = 17) {
  %w1 = const f32[2, 2, 1, 1] splat(0.5)
  %w2 = const f32[2, 2, 3, 3] splat(0.1)
  %s = const f32[2] splat(1.5)
  %b = const f32[2] splat(0.25)
  %m = const f32[2] splat(0.1)
  %v = const f32[2] splat(2.0)
  %c1: f32[1, 2, 4, 4] = Conv(%x, %w1) {kernel_shape = [1, 1]} @conv1
  %n1: f32[1, 2, 4, 4] = BatchNormalization(%c1, %s, %b, %m, %v) {epsilon = 1e-05} @bn1
  %r1: f32[1, 2, 4, 4] = Relu(%n1) @relu1
  %y: f32[1, 2, 4, 4] = Conv(%r1, %w2) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} @conv2
  return %y
}
)";

TEST_F(ExampleConvBnTest, FusesConvWithItsBatchNormalization) {
  PartitionResult r = Partition(kChain);
  EXPECT_TRUE(HasRegions(r, 1));
  EXPECT_TRUE(HasRegionWithOps(r, {"Conv", "BatchNormalization"}));
  EXPECT_TRUE(HasRegionWithNodes(r, {"conv1", "bn1"}));
  EXPECT_TRUE(IsAcyclicAndConvex(r));
}

// What must NOT happen: the Relu joining the region, or a lone Conv being
// fused.
TEST_F(ExampleConvBnTest, LeavesOutReluAndALoneConv) {
  PartitionResult r = Partition(kChain);
  EXPECT_TRUE(IsNotFused(r, "relu1", "no selector matched"));
  EXPECT_TRUE(IsNotFused(r, "conv2", "dropped by Filter of example_convbn/conv_bn"));
}

//   %x -> conv -> bn_a -> %a
//            \--> bn_b -> %b
// A Conv feeding two BatchNormalizations takes one of them (the selector's
// state), and the other is left out, not fused twice.
TEST_F(ExampleConvBnTest, ConvWithTwoBatchNormalizationsTakesOne) {
  PartitionResult r = Partition(R"(
graph @two(%x: f32[1, 2, 4, 4]) opset(ai.onnx = 17) {
  %w = const f32[2, 2, 1, 1] splat(0.5)
  %s = const f32[2] splat(1.0)
  %b = const f32[2] splat(0.0)
  %m = const f32[2] splat(0.0)
  %v = const f32[2] splat(1.0)
  %c: f32[1, 2, 4, 4] = Conv(%x, %w) {kernel_shape = [1, 1]} @conv
  %a: f32[1, 2, 4, 4] = BatchNormalization(%c, %s, %b, %m, %v) @bn_a
  %bb: f32[1, 2, 4, 4] = BatchNormalization(%c, %s, %b, %m, %v) @bn_b
  return %a, %bb
}
)");
  EXPECT_TRUE(HasRegions(r, 1));
  EXPECT_TRUE(HasRegionWithNodes(r, {"conv", "bn_a"}));
  EXPECT_TRUE(IsNotFused(r, "bn_b", "no selector matched"));
  EXPECT_TRUE(IsAcyclicAndConvex(r));
}

// The fused region computes what the unfused graph computes.
TEST_F(ExampleConvBnTest, MatchesTheReference) {
  EXPECT_TRUE(MatchesReference(kChain, /*seed=*/1));
  EXPECT_TRUE(MatchesReference(kChain, /*seed=*/2));
}

// `subgraph check-plugin example_convbn --cases 200`, inside the test.
TEST_F(ExampleConvBnTest, PassesTheConformanceRun) { EXPECT_TRUE(PassesConformance(200)); }

}  // namespace
