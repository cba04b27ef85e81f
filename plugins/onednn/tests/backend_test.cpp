//===- plugins/onednn/tests/backend_test.cpp - The onednn families vs the reference -===//
//
// Each fusion family of the onednn plugin on a tiny graph: load onednn.so
// from the build's plugin directory, partition with it, assert which
// regions formed (and, in the negative tests, what must not fuse and why),
// then run the partitioned graph on the plugin's kernels and compare with
// the unpartitioned graph on the reference backend. Constants are random
// (seeded; the seed is printed).
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <filesystem>
#include <random>
#include <string>

#include "backend_test_util.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

using namespace testing;  // NOLINT: the suite's helpers
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

/// onednn.so pins itself in the process (process_lifetime.h): OpenMP's
/// worker threads outlive any unload, so unloading the plugin must leave
/// the library mapped. ctest runs each test in its own process, where
/// nothing else holds the library.
TEST(OnednnPlugin, StaysMappedAfterTheHostUnloadsIt) {
  std::filesystem::path path = std::filesystem::path(SUBGRAPH_TEST_PLUGIN_DIR) / "onednn.so";
  {
    StatusOr<std::shared_ptr<plugins::LoadedPlugin>> plugin = plugins::loadPlugin(path);
    ASSERT_TRUE(plugin.isOk()) << plugin.status().message();
  }  // the host unloads it here
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(handle, nullptr) << "onednn.so was unmapped by the host's unload";
  if (handle) dlclose(handle);
}

//  %x [1,16,8,8] -> Conv3x3 -> BN -> Relu -> Conv3x3 -> BN -> Add(%x) -> Relu -> %y
//                  \______ conv_bn_act ______/ \________ conv_bn_add_act ________/
// The value between the regions stays blocked: the only copies are %x into
// nChw16c and %y back to plain.
constexpr const char* kResidualBlock = R"(
  graph @block(%x: f32[1, 16, 8, 8]) {
    %w1 = const f32[16, 16, 3, 3] splat(0.0)
    %s1 = const f32[16] splat(0.0)
    %b1 = const f32[16] splat(0.0)
    %m1 = const f32[16] splat(0.0)
    %v1 = const f32[16] splat(1.0)
    %w2 = const f32[16, 16, 3, 3] splat(0.0)
    %s2 = const f32[16] splat(0.0)
    %b2 = const f32[16] splat(0.0)
    %m2 = const f32[16] splat(0.0)
    %v2 = const f32[16] splat(1.0)
    %c1 = Conv(%x, %w1) {pads = [1, 1, 1, 1]} @conv1
    %n1 = BatchNormalization(%c1, %s1, %b1, %m1, %v1) @bn1
    %r1 = Relu(%n1) @relu1
    %c2 = Conv(%r1, %w2) {pads = [1, 1, 1, 1]} @conv2
    %n2 = BatchNormalization(%c2, %s2, %b2, %m2, %v2) @bn2
    %a = Add(%n2, %x) @add
    %y = Relu(%a) @relu2
    return %y
  })";

/// A residual block becomes two conv regions, the BN folded, the Add a sum
/// post-op, with blocked values between them.
TEST(OnednnConvFamily, ResidualBlockFusesAndStaysBlocked) {
  Outcome o = partitionAndRun(kResidualBlock);
  EXPECT_THAT(o.regions, ElementsAre("conv_bn_act", "conv_bn_add_act"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_EQ(o.copies, 2u);
  EXPECT_LT(o.maxDiff, 1e-4);
}

//   %x -> Conv -> Conv(auto_pad NOTSET) -> Conv(auto_pad SAME_UPPER) -> %y
/// The conv family takes a Conv whose auto_pad is NOTSET, written or the
/// schema's default. Negative: one that pads itself is left out, and the
/// report says so.
TEST(OnednnConvFamily, TakesOnlyExplicitPadding) {
  std::unique_ptr<Graph> g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, 4, 3, 3] splat(0.5)
      %a: f32[1, 4, 8, 8] = Conv(%x, %w) {pads = [1, 1, 1, 1]} @plain
      %b: f32[1, 4, 8, 8] = Conv(%a, %w) {auto_pad = "NOTSET", pads = [1, 1, 1, 1]} @notset
      %y: f32[1, 4, 8, 8] = Conv(%b, %w) {auto_pad = "SAME_UPPER"} @same
      return %y
    })");
  auto report = onednnPlugin().partition(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  std::vector<std::string> fused;
  for (const partition::RegionReport& r : report->regions)
    for (const std::string& n : r.nodes) fused.push_back(n);
  EXPECT_THAT(fused, ::testing::UnorderedElementsAre("plain", "notset"));
  std::string reason;
  for (const partition::RejectedNode& n : report->rejected)
    if (n.node == "same") reason = n.reason;
  EXPECT_THAT(reason, ::testing::HasSubstr("attribute 'auto_pad' is not NOTSET"));
}

/// The same block on one thread gives the same result (the --threads path).
TEST(OnednnConvFamily, OneThreadMatches) {
  Outcome o = partitionAndRun(kResidualBlock, 1);
  EXPECT_LT(o.maxDiff, 1e-4);
}

// A region kernel whose work is the default estimate, to read the team the
// policy gives.
class ProbeKernel final : public RegionKernel {
 public:
  using RegionKernel::RegionKernel;
};

/// A run too small to pay for waking OpenMP's workers gets one thread; a
/// big one gets the session's; never more than the session's, never none.
TEST(OnednnThreadPolicy, TeamGrowsWithWork) {
  ProbeKernel two(sdk::KernelContext{2});
  EXPECT_EQ(two.teamFor(0), 1);
  EXPECT_EQ(two.teamFor(RegionKernel::kMacsPerThread / 2), 1);
  EXPECT_EQ(two.teamFor(RegionKernel::kMacsPerThread * 1.5), 1);
  EXPECT_EQ(two.teamFor(RegionKernel::kMacsPerThread * 2), 2);
  EXPECT_EQ(two.teamFor(1e15), 2) << "not past the session's threads";
  ProbeKernel eight(sdk::KernelContext{8});
  EXPECT_EQ(eight.teamFor(RegionKernel::kMacsPerThread * 3.5), 3);
  // The default work: kMacsPerElement for each input element.
  const std::vector<int64_t> a{4, 8}, b{16};
  const std::vector<std::span<const int64_t>> dims{a, b};
  EXPECT_EQ(two.workOf(dims), 48 * RegionKernel::kMacsPerElement);
}

//  %x [1,16,?h,?w] -> Conv3x3 -> Relu -> %y, run at 4x4 (one thread) and
//  64x64 (two) in one session, in turn.
constexpr const char* kSymbolicConv = R"(
  graph @conv(%x: f32[1, 16, h, w]) {
    %w = const f32[16, 16, 3, 3] splat(0.0)
    %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} @conv
    %y = Relu(%c) @relu
    return %y
  })";

/// The team is chosen per shape, when its primitive is made and each time
/// it runs; one session that alternates small and large inputs gets the
/// reference's answer every time (a primitive run with another team than
/// it was made for would not).
TEST(OnednnThreadPolicy, AlternatingShapesMatchTheReference) {
  std::printf("seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  std::unique_ptr<Graph> graph = randomized(kSymbolicConv, rng);
  Session reference;
  ASSERT_TRUE(reference.load(*graph).isOk());
  ASSERT_TRUE(reference.compile().isOk());
  SessionOptions options;
  options.threads = 2;
  StatusOr<std::vector<std::shared_ptr<runtime::Backend>>> backends =
      onednnPlugin().runtimeBackends(2);
  ASSERT_TRUE(backends.isOk()) << backends.status().message();
  options.backendInstances = std::move(backends).value();
  Session fused(options);
  ASSERT_TRUE(fused.load(*graph).isOk());
  ASSERT_TRUE(fused
                  .partition([&](Graph& g) -> Status {
                    auto report = onednnPlugin().partition(g);
                    return report.isOk() ? Status::ok() : report.status();
                  })
                  .isOk());
  ASSERT_TRUE(fused.compile().isOk());
  for (int64_t side : {4, 64, 4, 64}) {
    std::vector<NamedTensor> inputs{{"x", randomF32({1, 16, side, side}, rng)}};
    std::vector<NamedTensor> want = runOk(reference, inputs);
    std::vector<NamedTensor> got = runOk(fused, inputs);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_LT(maxAbsDiff(got[0].tensor, want[0].tensor), 1e-4) << side << "x" << side;
  }
}

//  %x [1,24,9,9] -> depthwise Conv3x3/2 -> BN -> <activation> -> %y
constexpr const char* kDepthwiseTemplate = R"(
  graph @dw(%x: f32[1, 24, 9, 9]) {
    %w = const f32[24, 1, 3, 3] splat(0.0)
    %s = const f32[24] splat(0.0)
    %b = const f32[24] splat(0.0)
    %m = const f32[24] splat(0.0)
    %v = const f32[24] splat(1.0)
    %lo = const f32[] [0.0]
    %hi = const f32[] [6.0]
    %c = Conv(%x, %w) {group = 24, strides = [2, 2], pads = [1, 1, 1, 1]} @dw
    %n = BatchNormalization(%c, %s, %b, %m, %v) @bn
    %y = ACTIVATION @act
    return %y
  })";

class OnednnActivationTest : public ::testing::TestWithParam<const char*> {};

/// Depthwise Conv -> BN -> each activation is one region matching the
/// reference.
TEST_P(OnednnActivationTest, DepthwiseConvBnActivation) {
  std::string text = kDepthwiseTemplate;
  replaceOnce(text, "ACTIVATION", GetParam());
  Outcome o = partitionAndRun(text.c_str());
  EXPECT_THAT(o.regions, ElementsAre("conv_bn_act"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Activations, OnednnActivationTest,
                         ::testing::Values("Clip(%n, %lo, %hi)", "Relu(%n)", "Sigmoid(%n)",
                                           "HardSigmoid(%n) {alpha = 0.25, beta = 0.4}",
                                           "HardSwish(%n)", "LeakyRelu(%n) {alpha = 0.1}",
                                           "Max(%n, %lo)", "Min(%hi, %n)"));

//  %x [1,16,6,6] -> Conv -> LeakyRelu -> Max(c) -> Conv -> LeakyRelu -> Max(c) -> %y
//                  \____ conv_act_act ____/    \____ conv_act_act ____/
// tf2onnx's conv block (c a [1, 1, 1, 1] constant): both activations are
// post-ops, and the value between the convs stays blocked.
constexpr const char* kConvLeakyMax = R"(
  graph @g(%x: f32[1, 16, 6, 6]) {
    %w1 = const f32[16, 16, 3, 3] splat(0.0)
    %w2 = const f32[16, 16, 3, 3] splat(0.0)
    %c = const f32[1, 1, 1, 1] [-0.4]
    %c1 = Conv(%x, %w1) {pads = [1, 1, 1, 1]} @conv1
    %l1 = LeakyRelu(%c1) {alpha = 0.2} @leaky1
    %m1 = Max(%l1, %c) @max1
    %c2 = Conv(%m1, %w2) {pads = [1, 1, 1, 1]} @conv2
    %l2 = LeakyRelu(%c2) {alpha = 0.2} @leaky2
    %y = Max(%c, %l2) @max2
    return %y
  })";

/// ConvLeakyReluMaxIsOneRegion: Max with a one-element constant is a clip
/// with one infinite bound, a second post-op after the LeakyRelu, either
/// operand order.
TEST(OnednnConvFamily, ConvLeakyReluMaxIsOneRegion) {
  Outcome o = partitionAndRun(kConvLeakyMax);
  EXPECT_THAT(o.regions, ElementsAre("conv_act_act", "conv_act_act"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_EQ(o.copies, 2u);
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x [1,16,6,6] -> Conv -> Max(%t) -> Min(per-channel %k) -> %y
constexpr const char* kMaxOfTensors = R"(
  graph @g(%x: f32[1, 16, 6, 6], %t: f32[1, 16, 6, 6]) {
    %w = const f32[16, 16, 1, 1] splat(0.0)
    %k = const f32[1, 16, 1, 1] splat(0.0)
    %c = Conv(%x, %w) @conv
    %m = Max(%c, %t) @max
    %y = Min(%m, %k) @min
    return %y
  })";

/// DoesNotTakeMaxOfTensorsAsActivation: Max of two runtime tensors and
/// Min by a per-channel constant are not clips; the Conv fuses alone, and
/// each is a broadcasting binary region of its own.
TEST(OnednnConvFamily, DoesNotTakeMaxOfTensorsAsActivation) {
  Outcome o = partitionAndRun(kMaxOfTensors);
  EXPECT_THAT(o.regions, ElementsAre("conv", "binary", "binary"));
  EXPECT_THAT(o.leftOps, ::testing::IsEmpty());
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x -> Conv -> BN(%scale is a graph input) -> Relu
constexpr const char* kRuntimeBnParams = R"(
  graph @g(%x: f32[1, 16, 6, 6], %scale: f32[16]) {
    %w = const f32[16, 16, 1, 1] splat(0.0)
    %b = const f32[16] splat(0.0)
    %m = const f32[16] splat(0.0)
    %v = const f32[16] splat(1.0)
    %c = Conv(%x, %w) @conv
    %n = BatchNormalization(%c, %scale, %b, %m, %v) @bn
    %y = Relu(%n) @relu
    return %y
  })";

/// DoesNotFoldBatchNormWithRuntimeParams: nothing to fold at session start,
/// so the BN stays outside; the Conv is fused alone (and the Relu, cut off
/// from it, is an element-wise region).
TEST(OnednnConvFamily, DoesNotFoldBatchNormWithRuntimeParams) {
  Outcome o = partitionAndRun(kRuntimeBnParams);
  EXPECT_THAT(o.regions, ElementsAre("conv", "eltwise1"));
  EXPECT_THAT(o.leftOps, ::testing::Contains("BatchNormalization"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

// kResidualBlock as an exported model has it: the batch is the symbol N,
// so the Add's operands are both f32[N, 16, 8, 8].
std::string symbolicBatch(std::string text, const std::string& residualBatch) {
  replaceOnce(text, "f32[1, 16, 8, 8]",
              "f32[N, 16, 8, 8], %r: f32[" + residualBatch + ", 16, 8, 8]");
  replaceOnce(text, "Add(%n2, %x)", "Add(%n2, %r)");
  return text;
}

/// SymbolicBatchResidualStillSums: equal symbolic shapes are equal at run
/// time, so a dynamic-batch model keeps the `sum` post-op (it ran at N = 3).
TEST(OnednnConvFamily, SymbolicBatchResidualStillSums) {
  std::string text = symbolicBatch(kResidualBlock, "N");
  Outcome o = partitionAndRun(text.c_str(), 0, 3);
  EXPECT_THAT(o.regions, ElementsAre("conv_bn_act", "conv_bn_add_act"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_LT(o.maxDiff, 1e-4);
}

/// DoesNotSumAcrossDifferentSymbols: a residual of batch M may differ from
/// the conv's N (Add would broadcast), so the Add is not a post-op.
TEST(OnednnConvFamily, DoesNotSumAcrossDifferentSymbols) {
  std::string text = symbolicBatch(kResidualBlock, "M");
  Outcome o = partitionAndRun(text.c_str(), 0, 3);
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains(::testing::HasSubstr("add"))));
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x -> Conv -> %c -> Add(%c, %x) -> Relu
//               \-> Sigmoid -> %z      (%c is read twice before the Add)
constexpr const char* kConvUsedTwice = R"(
  graph @g(%x: f32[1, 16, 6, 6]) {
    %w = const f32[16, 16, 3, 3] splat(0.0)
    %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} @conv
    %a = Add(%c, %x) @add
    %y = Relu(%a) @relu
    %z = Sigmoid(%c) @side
    return %y, %z
  })";

/// DoesNotSumConvOutputReadTwice: the region would have to emit %c as well,
/// so the Add and Relu fuse elsewhere, never into the conv.
TEST(OnednnConvFamily, DoesNotSumConvOutputReadTwice) {
  Outcome o = partitionAndRun(kConvUsedTwice);
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains(::testing::StartsWith("conv_add"))));
  EXPECT_THAT(o.regions, ::testing::Contains("conv"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x [1,16,6,6] -> Conv -> BN -> %n -> HardSigmoid(1/6, 1/2) -> %g -> Mul(%n, %g) -> %y
//                              \______________________________________/^
//                  \_______________________ conv_bn_hswish ________________________/
// HardSwish as torch.onnx.export writes it at opset 13, where ONNX has no
// HardSwish op: %n is read by the gate and by the Mul, and by nothing else.
constexpr const char* kDecomposedHardSwish = R"(
  graph @g(%x: f32[1, 16, 6, 6]) {
    %w = const f32[16, 16, 3, 3] splat(0.0)
    %s = const f32[16] splat(0.0)
    %b = const f32[16] splat(0.0)
    %m = const f32[16] splat(0.0)
    %v = const f32[16] splat(1.0)
    %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} @conv
    %n = BatchNormalization(%c, %s, %b, %m, %v) @bn
    %g = HardSigmoid(%n) {alpha = 0.16666667, beta = 0.5} @gate
    %y = Mul(%n, %g) @hswish
    return %y
  })";

/// DecomposedHardSwishIsOnePostOp: Conv, BN, the gate and its Mul are one
/// region, the pair a oneDNN hardswish post-op.
TEST(OnednnConvFamily, DecomposedHardSwishIsOnePostOp) {
  Outcome o = partitionAndRun(kDecomposedHardSwish);
  EXPECT_THAT(o.regions, ElementsAre("conv_bn_hswish"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_LT(o.maxDiff, 1e-4);
  // The gate on the other side of the Mul is the same function.
  std::string swapped = kDecomposedHardSwish;
  replaceOnce(swapped, "Mul(%n, %g)", "Mul(%g, %n)");
  o = partitionAndRun(swapped.c_str());
  EXPECT_THAT(o.regions, ElementsAre("conv_bn_hswish"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

/// DoesNotTakeOtherGatesOrSharedValuesForHardSwish: a HardSigmoid with
/// other constants is not a HardSwish, and when the BN output has a third
/// reader the region would have to emit it: in both cases no region holds
/// the Mul as a post-op (it is a binary region of its own), and the
/// results still match.
TEST(OnednnConvFamily, DoesNotTakeOtherGatesOrSharedValuesForHardSwish) {
  std::string otherGate = kDecomposedHardSwish;
  replaceOnce(otherGate, "alpha = 0.16666667", "alpha = 0.2");
  Outcome o = partitionAndRun(otherGate.c_str());
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains(::testing::HasSubstr("hswish"))));
  EXPECT_THAT(o.regions, ::testing::Contains("binary"));
  EXPECT_LT(o.maxDiff, 1e-4);

  std::string shared = kDecomposedHardSwish;
  replaceOnce(shared, "    return %y", "    %z = Sigmoid(%n) @other\n    return %y, %z");
  o = partitionAndRun(shared.c_str());
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains(::testing::HasSubstr("hswish"))));
  EXPECT_THAT(o.regions, ::testing::Contains("binary"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x [1,16,6,6] -> Conv -> Relu -> Resize x2 (linear) -> Conv -> %y [1,16,12,12]
//                  \_conv_act_/   \__ resize __/          \conv/
// The Resize reads and writes the blocked layout: the only copies are %x in
// and %y out.
constexpr const char* kUpsampleBetweenConvs = R"(
  graph @g(%x: f32[1, 16, 6, 6]) {
    %w1 = const f32[16, 16, 3, 3] splat(0.0)
    %w2 = const f32[16, 16, 1, 1] splat(0.0)
    %fixed_scales = const f32[4] [1.0, 1.0, 2.0, 2.0]
    %c = Conv(%x, %w1) {pads = [1, 1, 1, 1]} @conv1
    %r = Relu(%c) @relu
    %u = Resize(%r, _, %fixed_scales) {mode = "linear", coordinate_transformation_mode = "half_pixel"} @up
    %y = Conv(%u, %w2) @conv2
    return %y
  })";

/// ResizeBetweenConvsStaysBlocked: a linear Resize by whole factors is a
/// oneDNN resampling in the blocked layout and matches the reference.
TEST(OnednnResizeFamily, ResizeBetweenConvsStaysBlocked) {
  Outcome o = partitionAndRun(kUpsampleBetweenConvs);
  EXPECT_THAT(o.regions, ElementsAre("conv_act", "resize", "conv"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_EQ(o.copies, 2u);
  EXPECT_LT(o.maxDiff, 1e-4);
}

/// NearestAsymmetricFloorUpsample: torch's nearest Upsample (asymmetric,
/// floor), by 3 in height and 2 in width.
TEST(OnednnResizeFamily, NearestAsymmetricFloorUpsample) {
  std::string text = kUpsampleBetweenConvs;
  replaceOnce(text, "[1.0, 1.0, 2.0, 2.0]", "[1.0, 1.0, 3.0, 2.0]");
  replaceOnce(text, R"({mode = "linear", coordinate_transformation_mode = "half_pixel"})",
              R"({mode = "nearest", coordinate_transformation_mode = "asymmetric", )"
              R"(nearest_mode = "floor"})");
  Outcome o = partitionAndRun(text.c_str());
  EXPECT_THAT(o.regions, ElementsAre("conv_act", "resize", "conv"));
  EXPECT_LT(o.maxDiff, 1e-5);
}

//  %x [1,16,6,6] -> Conv -> Relu -> Resize(sizes [1,16,12,12]) -> Conv -> %y
// F.interpolate(size=...) once the Shape -> Slice -> Concat chain that
// computed the sizes is folded: constant sizes over a static input.
constexpr const char* kUpsampleBySizes = R"(
  graph @g(%x: f32[1, 16, 6, 6]) {
    %w1 = const f32[16, 16, 3, 3] splat(0.0)
    %w2 = const f32[16, 16, 1, 1] splat(0.0)
    %sizes = const i64[4] [1, 16, 12, 18]
    %c = Conv(%x, %w1) {pads = [1, 1, 1, 1]} @conv1
    %r = Relu(%c) @relu
    %u = Resize(%r, _, _, %sizes) {mode = "linear", coordinate_transformation_mode = "pytorch_half_pixel"} @up
    %y = Conv(%u, %w2) @conv2
    return %y
  })";

/// ConstantSizesAreWholeFactors: sizes 12 x 18 over a 6 x 6 input are the
/// factors 2 and 3.
TEST(OnednnResizeFamily, ConstantSizesAreWholeFactors) {
  Outcome o = partitionAndRun(kUpsampleBySizes);
  EXPECT_THAT(o.regions, ElementsAre("conv_act", "resize", "conv"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_LT(o.maxDiff, 1e-4);
}

/// DoesNotFuseSizesThatAreNotFactorsOrOverSymbolicDims: 6 -> 9 is a factor
/// of 1.5, and over a symbolic height the factor is unknown until run time.
TEST(OnednnResizeFamily, DoesNotFuseSizesThatAreNotFactorsOrOverSymbolicDims) {
  std::string fractional = kUpsampleBySizes;
  replaceOnce(fractional, "[1, 16, 12, 18]", "[1, 16, 9, 18]");
  Outcome o = partitionAndRun(fractional.c_str());
  EXPECT_THAT(o.leftOps, ElementsAre("Resize"));
  EXPECT_LT(o.maxDiff, 1e-4);

  std::string symbolic = kUpsampleBySizes;
  replaceOnce(symbolic, "%x: f32[1, 16, 6, 6]", "%x: f32[1, 16, H, 6]");
  o = partitionAndRun(symbolic.c_str(), 0, 6);
  EXPECT_THAT(o.leftOps, ElementsAre("Resize"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

/// DoesNotFuseFractionalOrCubicResize: a factor of 1.5 (oneDNN's mapping
/// would not be ONNX's) and cubic interpolation stay with the reference.
TEST(OnednnResizeFamily, DoesNotFuseFractionalOrCubicResize) {
  std::string fractional = kUpsampleBetweenConvs;
  replaceOnce(fractional, "[1.0, 1.0, 2.0, 2.0]", "[1.0, 1.0, 1.5, 1.5]");
  Outcome o = partitionAndRun(fractional.c_str());
  EXPECT_THAT(o.leftOps, ElementsAre("Resize"));
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains("resize")));
  EXPECT_LT(o.maxDiff, 1e-4);

  std::string cubic = kUpsampleBetweenConvs;
  replaceOnce(cubic, R"(mode = "linear")", R"(mode = "cubic")");
  o = partitionAndRun(cubic.c_str());
  EXPECT_THAT(o.leftOps, ElementsAre("Resize"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

/// A linear Resize whose result is re-quantized (here through a Concat, as
/// a dynamically quantized U-Net does) stays with the reference, which
/// rounds as ONNX Runtime does; the Conv and Relu before it still fuse,
/// and the same Resize feeding a Conv fuses (ConstantSizesAreWholeFactors).
TEST(OnednnResizeFamily, DoesNotFuseLinearResizeThatIsRequantized) {
  std::string quantized = kUpsampleBySizes;
  replaceOnce(quantized, "%y = Conv(%u, %w2) @conv2",
              "%cat = Concat(%u, %u) {axis = 1} @cat\n"
              "    %q, %y, %zp = DynamicQuantizeLinear(%cat) @quantize");
  Outcome o = partitionAndRun(quantized.c_str());
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains("resize")));
  EXPECT_THAT(o.leftOps, ::testing::Contains("Resize"));
  EXPECT_THAT(o.regions, ::testing::Contains("conv_act"));
  EXPECT_LT(o.maxDiff, 1e-6);
}

//  %x [1,8,5,5] -> ConvTranspose 4x4 stride 2 pad 1 (+bias) -> Relu -> %y [1,6,10,10]
//                  \____________ deconv_act ______________________/
constexpr const char* kDeconvRelu = R"(
  graph @g(%x: f32[1, 8, 5, 5]) {
    %w = const f32[8, 6, 4, 4] splat(0.0)
    %b = const f32[6] splat(0.0)
    %d = ConvTranspose(%x, %w, %b) {strides = [2, 2], pads = [1, 1, 1, 1]} @deconv
    %y = Relu(%d) @relu
    return %y
  })";

// The deconvolution of `text` (kDeconvRelu or kDeconvBnRelu) made grouped,
// weights [8, 3, 3, 3] in two groups, with an output_padding within the end
// pad.
std::string groupedWithOutputPadding(std::string text) {
  replaceOnce(text, "f32[8, 6, 4, 4]", "f32[8, 3, 3, 3]");
  replaceOnce(text, "{strides = [2, 2], pads = [1, 1, 1, 1]}",
              "{strides = [2, 2], pads = [1, 1, 1, 1], group = 2, output_padding = [1, 1]}");
  return text;
}

/// ConvTransposeWithActivation: the head's learned upsampling is one
/// deconvolution with the Relu as a post-op.
TEST(OnednnDeconvFamily, ConvTransposeWithActivation) {
  Outcome o = partitionAndRun(kDeconvRelu);
  EXPECT_THAT(o.regions, ElementsAre("deconv_act"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_LT(o.maxDiff, 1e-4);
}

/// GroupedConvTransposeWithOutputPadding: groups (weights [C_in, C_out/g,
/// k, k]) and an output_padding within the end pad.
TEST(OnednnDeconvFamily, GroupedConvTransposeWithOutputPadding) {
  std::string text = groupedWithOutputPadding(kDeconvRelu);
  Outcome o = partitionAndRun(text.c_str());
  EXPECT_THAT(o.regions, ElementsAre("deconv_act"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x [1,8,5,5] -> ConvTranspose 4x4 stride 2 pad 1 (+bias) -> BN -> Relu -> %y [1,6,10,10]
//                  \_________________ deconv_bn_act ___________________/
constexpr const char* kDeconvBnRelu = R"(
  graph @g(%x: f32[1, 8, 5, 5]) {
    %w = const f32[8, 6, 4, 4] splat(0.0)
    %b = const f32[6] splat(0.0)
    %s = const f32[6] splat(1.0)
    %t = const f32[6] splat(0.0)
    %m = const f32[6] splat(0.0)
    %v = const f32[6] splat(1.0)
    %d = ConvTranspose(%x, %w, %b) {strides = [2, 2], pads = [1, 1, 1, 1]} @deconv
    %n = BatchNormalization(%d, %s, %t, %m, %v) {epsilon = 0.001} @bn
    %y = Relu(%n) @relu
    return %y
  })";

/// ConvTransposeBatchNormActivationIsOneDeconvolution: the BN after a
/// decoder's ConvTranspose (as torch exports ConvTranspose2d +
/// BatchNorm2d) folds into its weights and bias, plain and grouped.
TEST(OnednnDeconvFamily, ConvTransposeBatchNormActivationIsOneDeconvolution) {
  Outcome o = partitionAndRun(kDeconvBnRelu);
  EXPECT_THAT(o.regions, ElementsAre("deconv_bn_act"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_LT(o.maxDiff, 1e-4);

  // Groups: output channel j of input channel i is j in i's group, so a
  // fold that indexed the weights as [out, in, ...] would be off here.
  std::string grouped = groupedWithOutputPadding(kDeconvBnRelu);
  o = partitionAndRun(grouped.c_str());
  EXPECT_THAT(o.regions, ElementsAre("deconv_bn_act"));
  EXPECT_LT(o.maxDiff, 1e-4);

  std::string noAct = kDeconvBnRelu;
  replaceOnce(noAct, "%y = Relu(%n) @relu", "%y = Sin(%n) @sin");
  o = partitionAndRun(noAct.c_str());
  EXPECT_THAT(o.regions, ElementsAre("deconv_bn"));
  EXPECT_THAT(o.leftOps, ElementsAre("Sin"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

/// DoesNotFoldABatchNormalizationWithRuntimeStatisticsOrASharedOutput: a
/// mean fed at run time is nothing to fold, and a ConvTranspose output
/// that something else also reads must stay a value of its own.
TEST(OnednnDeconvFamily, DoesNotFoldABatchNormalizationWithRuntimeStatisticsOrASharedOutput) {
  std::string runtimeMean = kDeconvBnRelu;
  replaceOnce(runtimeMean, "graph @g(%x: f32[1, 8, 5, 5])",
              "graph @g(%x: f32[1, 8, 5, 5], %m: f32[6])");
  replaceOnce(runtimeMean, "%m = const f32[6] splat(0.0)", "");
  Outcome o = partitionAndRun(runtimeMean.c_str());
  EXPECT_THAT(o.regions, ElementsAre("deconv", "eltwise1"));  // the Relu on its own
  EXPECT_THAT(o.leftOps, ::testing::Contains("BatchNormalization"));
  EXPECT_LT(o.maxDiff, 1e-4);

  std::string shared = kDeconvBnRelu;
  replaceOnce(shared, "return %y", "%k = Neg(%d) @neg\n    return %y, %k");
  o = partitionAndRun(shared.c_str());
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains(::testing::StartsWith("deconv_bn"))));
  EXPECT_THAT(o.leftOps, ::testing::Contains("BatchNormalization"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

/// DoesNotFuseConvTransposeWithOutputShapeOrRuntimeWeights: output_shape
/// makes the pads depend on the input; weights fed at run time cannot be
/// reordered at session start.
TEST(OnednnDeconvFamily, DoesNotFuseConvTransposeWithOutputShapeOrRuntimeWeights) {
  std::string shaped = kDeconvRelu;
  replaceOnce(shaped, "{strides = [2, 2], pads = [1, 1, 1, 1]}",
              "{strides = [2, 2], output_shape = [10, 10]}");
  Outcome o = partitionAndRun(shaped.c_str());
  EXPECT_THAT(o.leftOps, ::testing::Contains("ConvTranspose"));
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains(::testing::StartsWith("deconv"))));
  EXPECT_LT(o.maxDiff, 1e-4);

  std::string runtimeWeights = kDeconvRelu;
  replaceOnce(runtimeWeights, "graph @g(%x: f32[1, 8, 5, 5])",
              "graph @g(%x: f32[1, 8, 5, 5], %w: f32[8, 6, 4, 4])");
  replaceOnce(runtimeWeights, "%w = const f32[8, 6, 4, 4] splat(0.0)", "");
  o = partitionAndRun(runtimeWeights.c_str());
  EXPECT_THAT(o.leftOps, ::testing::Contains("ConvTranspose"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x [1,24,6,6] -> Conv -> Relu -> %a ----------------------------------------> Mul -> Conv1x1 ->
//  %y
//                                   \-> GlobalAveragePool -> Conv1x1 -> Relu      ^
//                                         -> Conv1x1 -> HardSigmoid -> %g [1,24,1,1]
// A squeeze-excite block: the gate %g scales %a channel by channel.
constexpr const char* kSqueezeExcite = R"(
  graph @g(%x: f32[1, 24, 6, 6]) {
    %w1 = const f32[24, 24, 3, 3] splat(0.0)
    %wr = const f32[16, 24, 1, 1] splat(0.0)
    %br = const f32[16] splat(0.0)
    %we = const f32[24, 16, 1, 1] splat(0.0)
    %be = const f32[24] splat(0.0)
    %wp = const f32[16, 24, 1, 1] splat(0.0)
    %c = Conv(%x, %w1) {pads = [1, 1, 1, 1]} @conv
    %a = Relu(%c) @relu
    %p = GlobalAveragePool(%a) @squeeze
    %r = Conv(%p, %wr, %br) @reduce
    %rr = Relu(%r) @reduce_relu
    %e = Conv(%rr, %we, %be) @expand
    %g = HardSigmoid(%e) {alpha = 0.1666667, beta = 0.5} @gate
    %s = Mul(%a, %g) @excite
    %y = Conv(%s, %wp) @project
    return %y
  })";

/// SqueezeExciteStaysBlocked: the excite Mul is a oneDNN binary_mul whose
/// gate is broadcast over H and W, reading both operands in the blocked
/// layout the convolutions wrote: nothing is left to the reference and the
/// only copies are %x in and %y out.
TEST(OnednnChannelScaleFamily, SqueezeExciteStaysBlocked) {
  Outcome o = partitionAndRun(kSqueezeExcite);
  EXPECT_THAT(o.regions, ::testing::Contains("channel_scale"));
  EXPECT_TRUE(o.leftOps.empty()) << ::testing::PrintToString(o.leftOps);
  EXPECT_EQ(o.copies, 2u);
  EXPECT_LT(o.maxDiff, 1e-4);
}

/// With the batch a symbol, gate [N, 24, 1, 1] and activation [N, 24, 6, 6]
/// still pair up (ran at N = 3).
TEST(OnednnChannelScaleFamily, SymbolicBatchStillScales) {
  std::string text = kSqueezeExcite;
  replaceOnce(text, "%x: f32[1, 24, 6, 6]", "%x: f32[N, 24, 6, 6]");
  Outcome o = partitionAndRun(text.c_str(), 0, 3);
  EXPECT_THAT(o.regions, ::testing::Contains("channel_scale"));
  EXPECT_TRUE(o.leftOps.empty()) << ::testing::PrintToString(o.leftOps);
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x [1,8,4,4] -> Mul(%k const [1,8,1,1]) -> Mul(%h input [1,8,4,1]) -> %y
/// DoesNotScaleByConstantsOrOtherBroadcasts: a constant factor is for a
/// conv or BN to fold, and a factor broadcast over W only is not a channel
/// scale; both Muls are broadcasting binary regions instead.
TEST(OnednnChannelScaleFamily, DoesNotScaleByConstantsOrOtherBroadcasts) {
  Outcome o = partitionAndRun(R"(
    graph @g(%x: f32[1, 8, 4, 4], %h: f32[1, 8, 4, 1]) {
      %k = const f32[1, 8, 1, 1] splat(0.0)
      %m = Mul(%x, %k) @by_constant
      %y = Mul(%m, %h) @over_width
      return %y
    })");
  EXPECT_THAT(o.regions, ElementsAre("binary", "binary"));
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains("channel_scale")));
  EXPECT_LT(o.maxDiff, 1e-5);
}

//  %x [1,4,21] -> Conv1d (stride 2, dilation 2, pads [1, 2]) -> Relu -> %y
//                \_______________________ conv_act _______________________/
// Rank 3, as audio models have (an STFT written as Conv): one oneDNN
// convolution over [N, C, 1, L], reading and writing plain.
constexpr const char* kConv1d = R"(
  graph @g(%x: f32[1, 4, 21]) {
    %w = const f32[8, 4, 3] splat(0.0)
    %b = const f32[8] splat(0.0)
    %c = Conv(%x, %w, %b) {strides = [2], dilations = [2], pads = [1, 2]} @conv
    %y = Relu(%c) @relu
    return %y
  })";

/// Conv1dReluIsOneRegion: the 1-D conv and its Relu are one region, with
/// no copies (its activations are plain).
TEST(OnednnConvFamily, Conv1dReluIsOneRegion) {
  Outcome o = partitionAndRun(kConv1d);
  EXPECT_THAT(o.regions, ElementsAre("conv_act"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_EQ(o.copies, 0u);
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x [N,1,40] -> Conv1d(k8, stride 4) -> %s -> grouped Conv1d(k3, pads 1) -> Add(%s) -> Relu
//                 \______ conv ______/        \___________ conv_add_act ___________/
// An STFT-like front end (one input channel, a long strided kernel) on a
// symbolic batch, then a grouped 1-D conv with a residual.
constexpr const char* kConv1dStack = R"(
  graph @g(%x: f32[N, 1, 40]) {
    %w1 = const f32[12, 1, 8] splat(0.0)
    %w2 = const f32[12, 4, 3] splat(0.0)
    %s = Conv(%x, %w1) {strides = [4]} @stft
    %c = Conv(%s, %w2) {group = 3, pads = [1, 1]} @conv
    %a = Add(%c, %s) @add
    %y = Relu(%a) @relu
    return %y
  })";

/// Conv1dStackWithResidual: a strided single-channel and a grouped 1-D conv,
/// the second with its residual as a sum post-op (ran at N = 2).
TEST(OnednnConvFamily, Conv1dStackWithResidual) {
  Outcome o = partitionAndRun(kConv1dStack);
  EXPECT_THAT(o.regions, ElementsAre("conv", "conv_add_act"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x [1,4,5,5,5] -> Conv3d -> Relu   (rank 5: the kernel is 1-D or 2-D)
constexpr const char* kConv3d = R"(
  graph @g(%x: f32[1, 4, 5, 5, 5]) {
    %w = const f32[8, 4, 3, 3, 3] splat(0.0)
    %c = Conv(%x, %w) @conv
    %y = Relu(%c) @relu
    return %y
  })";

/// DoesNotFuseConv3d: output rank 5 is refused ("expected 3 or 4"); the
/// Conv stays with the reference.
TEST(OnednnConvFamily, DoesNotFuseConv3d) {
  Outcome o = partitionAndRun(kConv3d);
  EXPECT_THAT(o.leftOps, ::testing::Contains("Conv"));
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains(::testing::StartsWith("conv"))));
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x [1,6,32] -> MatMul(W) -> Add(bias) -> Gelu
//             -> MatMul(W2) -> Add(bias2) -> Add(residual %x) -> LayerNorm -> Softmax
constexpr const char* kDenseBlock = R"(
  graph @g(%x: f32[1, 6, 32]) {
    %w1 = const f32[32, 48] splat(0.0)
    %b1 = const f32[48] splat(0.0)
    %w2 = const f32[48, 32] splat(0.0)
    %b2 = const f32[32] splat(0.0)
    %g = const f32[32] splat(0.0)
    %beta = const f32[32] splat(0.0)
    %h = MatMul(%x, %w1) @mm1
    %hb = Add(%h, %b1) @bias1
    %q = Gelu(%hb) @gelu
    %o = MatMul(%q, %w2) @mm2
    %ob = Add(%o, %b2) @bias2
    %r = Add(%ob, %x) @residual
    %n = LayerNormalization(%r, %g, %beta) {axis = -1, epsilon = 1e-5} @ln
    %y = Softmax(%n) {axis = -1} @softmax
    return %y
  })";

/// A transformer feed-forward block: GELU (as the gelu-idiom pass leaves
/// it) and the residual fuse into the matmuls; LayerNormalization and
/// Softmax are regions of their own.
TEST(OnednnMatMulFamily, FeedForwardBlock) {
  Outcome o = partitionAndRun(kDenseBlock);
  EXPECT_THAT(o.regions, ElementsAre("matmul_bias_act", "matmul_bias_add", "layernorm", "softmax"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x [4, 16] -> MatMul(w) -> Add(b) -> Add(%r) -> Relu -> %y
constexpr const char* kBiasResidualRelu = R"(
  graph @g(%x: f32[4, 16], %r: f32[4, 8]) {
    %w = const f32[16, 8] splat(0.0)
    %b = const f32[8] splat(0.0)
    %h = MatMul(%x, %w) @mm
    %hb = Add(%h, %b) @bias
    %s = Add(%hb, %r) @residual
    %y = Relu(%s) @relu
    return %y
  })";

/// The bias family's steps are optional: MatMul -> bias -> residual ->
/// activation is one matmul_bias region (bias, sum and eltwise post-ops),
/// and computes what the reference does.
TEST(OnednnMatMulFamily, BiasResidualAndActivationAreOneRegion) {
  Outcome o = partitionAndRun(kBiasResidualRelu);
  EXPECT_THAT(o.regions, ElementsAre("matmul_bias_add_act"));
  EXPECT_TRUE(o.leftOps.empty());
  EXPECT_LT(o.maxDiff, 1e-4);
}

/// Negative: a bias whose sum another node also reads does not take the
/// residual (its value would vanish into the region), nor does a residual
/// read elsewhere take the activation: each step only feeds the next.
TEST(OnednnMatMulFamily, AStepReadElsewhereEndsTheRegion) {
  std::string text = kBiasResidualRelu;
  replaceOnce(text, "return %y", "%z = Sigmoid(%hb) @other\n    return %y, %z");
  Outcome biasRead = partitionAndRun(text.c_str());
  EXPECT_THAT(biasRead.regions, Contains("matmul_bias"));
  EXPECT_THAT(biasRead.regions, Not(Contains(HasSubstr("_add"))));
  EXPECT_LT(biasRead.maxDiff, 1e-4);

  text = kBiasResidualRelu;
  replaceOnce(text, "return %y", "%z = Sigmoid(%s) @other\n    return %y, %z");
  Outcome residualRead = partitionAndRun(text.c_str());
  EXPECT_THAT(residualRead.regions, Contains("matmul_bias_add"));
  EXPECT_THAT(residualRead.regions, Not(Contains("matmul_bias_add_act")));
  EXPECT_LT(residualRead.maxDiff, 1e-4);
}

//  %q,%k [1,2,5,8] -> MatMul -> Div(c)     %a [2,3] x const [3,4] -> Gemm(transB) -> Relu
constexpr const char* kAttentionScores = R"(
  graph @g(%q: f32[1, 2, 5, 8], %k: f32[1, 2, 8, 5], %a: f32[2, 6]) {
    %c = const f32[] [2.0]
    %wt = const f32[4, 6] splat(0.0)
    %bias = const f32[4] splat(0.0)
    %s = MatMul(%q, %k) @qk
    %y = Div(%s, %c) @scale
    %g = Gemm(%a, %wt, %bias) {transB = 1, alpha = 0.5} @gemm
    %z = Relu(%g) @relu
    return %y, %z
  })";

/// Q x K^T scaled is one matmul with a scale post-op; Gemm with transB
/// transposes its weights once.
TEST(OnednnMatMulFamily, ScaledScoresAndGemm) {
  Outcome o = partitionAndRun(kAttentionScores);
  EXPECT_THAT(o.regions, ::testing::UnorderedElementsAre("matmul_scale", "gemm_act"));
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %x [1,20,9,9] -> MaxPool 3x3/2 ceil -> AveragePool 2x2 -> GlobalAveragePool
//  %u -> Concat(axis 1) with itself -> Sigmoid -> Mul(2) -> Max(0.5) -> Min(1.5)
constexpr const char* kPoolsAndMore = R"(
  graph @g(%x: f32[1, 20, 9, 9], %u: f32[3, 5]) {
    %two = const f32[] [2.0]
    %lo = const f32[1] [0.5]
    %hi = const f32[] [1.5]
    %p = MaxPool(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = 1} @max
    %q = AveragePool(%p) {kernel_shape = [2, 2], pads = [0, 0, 1, 1]} @avg
    %y = GlobalAveragePool(%q) @gap
    %c = Concat(%u, %u) {axis = 1} @concat
    %s = Sigmoid(%c) @sig
    %z0 = Mul(%s, %two) @mul
    %z1 = Max(%z0, %lo) @floor
    %z = Min(%hi, %z1) @ceiling
    return %y, %z
  })";

/// Pools chain in blocked layout; Concat and an element-wise chain fuse,
/// Max and Min by scalar constants included.
TEST(OnednnOtherFamilies, PoolsConcatEltwise) {
  Outcome o = partitionAndRun(kPoolsAndMore);
  EXPECT_THAT(o.regions,
              ::testing::UnorderedElementsAre("pool", "pool", "pool", "concat", "eltwise4"));
  EXPECT_TRUE(o.leftOps.empty()) << ::testing::PrintToString(o.leftOps);
  EXPECT_LT(o.maxDiff, 1e-5);
}

//  %x [1,6,32] -> LayerNormalization over axes 1.. (axis = 1)
constexpr const char* kWideLayerNorm = R"(
  graph @g(%x: f32[1, 6, 32]) {
    %g = const f32[6, 32] splat(1.0)
    %b = const f32[6, 32] splat(0.0)
    %y = LayerNormalization(%x, %g, %b) {axis = 1} @ln
    return %y
  })";

/// DoesNotFuseLayerNormOverSeveralAxes: oneDNN normalizes the last axis only.
TEST(OnednnOtherFamilies, DoesNotFuseLayerNormOverSeveralAxes) {
  Outcome o = partitionAndRun(kWideLayerNorm);
  EXPECT_TRUE(o.regions.empty());
  EXPECT_THAT(o.leftOps, ElementsAre("LayerNormalization"));
  EXPECT_LT(o.maxDiff, 1e-5);
}

}  // namespace
}  // namespace subgraph::onednn
