//===- tests/runtime/partition_test.cpp - Partitioned vs unpartitioned ----===//
//
// Differential tests: a graph partitioned by the built-in partitioner (its
// fused regions run by the default region executor) must compute what the
// unpartitioned graph computes on the reference backend.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "partition_test_util.h"
#include "runtime_test_util.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT
using ::testing::HasSubstr;

//   %x [2,3,8,8] -> Conv 3x3 -> BatchNormalization -> Relu -> Conv 1x1 -> BatchNormalization -> %y
//                   \________ conv_bn ________/               \________ conv_bn ________/
constexpr const char* kConvBnGraph = R"(
  graph @g(%x: f32[2, 3, 8, 8], %w1: f32[4, 3, 3, 3], %w2: f32[5, 4, 1, 1]) {
    %s1 = const f32[4] [1.5, 0.5, 2.0, 1.0]
    %b1 = const f32[4] [0.1, -0.2, 0.3, 0.0]
    %m1 = const f32[4] [0.05, 0.0, -0.1, 0.2]
    %v1 = const f32[4] [1.0, 2.0, 0.5, 1.5]
    %s2 = const f32[5] splat(0.9)
    %b2 = const f32[5] splat(0.1)
    %m2 = const f32[5] splat(0.01)
    %v2 = const f32[5] splat(1.1)
    %c1 = Conv(%x, %w1) {pads = [1, 1, 1, 1]} @conv1
    %n1 = BatchNormalization(%c1, %s1, %b1, %m1, %v1) @bn1
    %r1 = Relu(%n1) @relu1
    %c2 = Conv(%r1, %w2) @conv2
    %y = BatchNormalization(%c2, %s2, %b2, %m2, %v2) @bn2
    return %y
  })";

/// Conv+BN regions executed through their bodies give the unpartitioned
/// result.
TEST(PartitionTest, ConvBnRegionsMatchUnpartitioned) {
  std::mt19937 rng(11);
  std::vector<NamedTensor> inputs = {{"x", randomF32({2, 3, 8, 8}, rng)},
                                     {"w1", randomF32({4, 3, 3, 3}, rng)},
                                     {"w2", randomF32({5, 4, 1, 1}, rng)}};
  auto plain = compileText(kConvBnGraph);
  Session fused;
  ASSERT_TRUE(fused.load(parseGraphOrThrow(kConvBnGraph)).isOk());
  std::string json;
  Status st = partitionWith(fused, {"convbn"}, &json);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_THAT(json, HasSubstr("\"regions\""));
  ASSERT_TRUE(fused.compile().isOk());
  int regions = 0;
  for (const StepInfo& s : fused.steps())
    if (s.isRegion) {
      ++regions;
      EXPECT_EQ(s.op, "subgraph.convbn.conv_bn");
      EXPECT_EQ(s.provider, "region-executor");
    }
  EXPECT_EQ(regions, 2);
  auto want = runOk(*plain, inputs);
  auto got = runOk(fused, inputs);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LT(maxAbsDiff(got[0].tensor, want[0].tensor), 1e-5);
}

/// Unknown partition backends are reported by name.
TEST(PartitionTest, UnknownPartitionBackendFails) {
  Session s;
  ASSERT_TRUE(s.load(parseGraphOrThrow(kConvBnGraph)).isOk());
  Status st = partitionWith(s, {"no-such-backend"});
  ASSERT_FALSE(st.isOk());
  EXPECT_THAT(st.message(), HasSubstr("no-such-backend"));
}

}  // namespace
}  // namespace subgraph::runtime
