//===- plugins/onednn/tests/quantized_backend_test.cpp - The int8 family vs the reference -===//
//
// The dynamically quantized family (quantized_family.cpp) on the graphs
// ONNX Runtime's quantize_dynamic writes: which regions form, what must
// not fuse, and that the fused result equals the reference backend's bit
// for bit (the next layer quantizes it again, so "close" is not enough).
// Weights are random over their whole 8-bit range (seeded; the seed is
// printed), so products reach the extremes where a saturating GEMM would
// go wrong.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "backend_test_util.h"
#include "dnnl_context.h"
#include "quantized_gemm.h"

namespace subgraph::onednn {
namespace {

using namespace testing;  // NOLINT: the suite's helpers
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// The int8 regions a test expects: none on a CPU without VNNI, where the
// family declines (oneDNN's product would saturate there).
std::vector<std::string> int8Regions(std::vector<std::string> regions) {
  return hasExactInt8Gemm() ? regions : std::vector<std::string>{};
}

//  %x -> DynamicQuantizeLinear -> ConvInteger(u8 weights, zero point 131)
//     -> Cast -> Mul(x scale * w scale) -> Add(bias [C,1,1]) -> Relu -> %y
constexpr const char* kQuantizedConv = R"(
  graph @g(%x: f32[2, 5, 9, 11]) {
    %w = const u8[7, 5, 3, 3] splat(0)
    %wz = const u8[] [131]
    %ws = const f32[] [0.0123]
    %b = const f32[7, 1, 1] splat(0.0)
    %q, %s, %z = DynamicQuantizeLinear(%x) @quantize
    %c = ConvInteger(%q, %w, %z, %wz) {pads = [1, 2, 1, 0], strides = [1, 2], dilations = [2, 1]} @conv
    %cf = Cast(%c) {to = 1} @cast
    %sc = Mul(%s, %ws) @scales
    %m = Mul(%cf, %sc) @scale
    %a = Add(%m, %b) @bias
    %y = Relu(%a) @relu
    return %y
  })";

/// The whole chain is one int8 region, equal to the reference bit for bit;
/// on a CPU without VNNI, where oneDNN's product would saturate, nothing
/// fuses.
TEST(OnednnQuantizedFamily, DynamicallyQuantizedConvIsOneExactRegion) {
  Outcome o = partitionAndRun(kQuantizedConv, 2);
  if (hasExactInt8Gemm()) {
    EXPECT_THAT(o.regions, ElementsAre("int8_conv_bias_act"));
    EXPECT_TRUE(o.leftOps.empty()) << ::testing::PrintToString(o.leftOps);
  } else {
    EXPECT_TRUE(o.regions.empty());
  }
  EXPECT_EQ(o.maxDiff, 0.0);
}

/// An image of many tiles (tiles start mid-row), and a 1x1 conv that reads
/// its quantized input directly (int8 weights, per-channel zero points,
/// per-channel scales), both exact.
TEST(OnednnQuantizedFamily, ManyTilesAndPointwiseConvsAreExact) {
  std::string large = kQuantizedConv;
  replaceOnce(large, "f32[2, 5, 9, 11]", "f32[1, 64, 37, 41]");
  replaceOnce(large, "u8[7, 5, 3, 3]", "u8[7, 64, 3, 3]");
  Outcome o = partitionAndRun(large.c_str(), 2);
  EXPECT_THAT(o.regions, ElementsAreArray(int8Regions({"int8_conv_bias_act"})));
  EXPECT_EQ(o.maxDiff, 0.0);

  std::string pointwise = kQuantizedConv;
  replaceOnce(pointwise, "%w = const u8[7, 5, 3, 3] splat(0)",
              "%fixedw = const i8[7, 5, 1, 1] [-128, 127, 0, 5, -7, 1, 2, 3, -4, 100, -100, 9, 8, "
              "7, 6, 5, 4, 3, 2, 1, 0, -1, -2, -3, -4, -5, -6, -7, -8, -9, 10, 11, 12, 13, 14]");
  replaceOnce(pointwise, "%wz = const u8[] [131]",
              "%fixedwz = const i8[7] [0, -1, 1, 0, 2, -2, 0]");
  // Written weights and zero points (random ones would leave per-channel
  // differences the gemm's operand cannot hold, and the kernel would
  // decline).
  replaceOnce(pointwise, "ConvInteger(%q, %w, %z, %wz)", "ConvInteger(%q, %fixedw, %z, %fixedwz)");
  replaceOnce(pointwise, "%ws = const f32[] [0.0123]", "%ws = const f32[7, 1, 1] splat(0.0)");
  replaceOnce(pointwise, "{pads = [1, 2, 1, 0], strides = [1, 2], dilations = [2, 1]}", "");
  o = partitionAndRun(pointwise.c_str(), 2);
  EXPECT_THAT(o.regions, ElementsAreArray(int8Regions({"int8_conv_bias_act"})));
  EXPECT_EQ(o.maxDiff, 0.0);
}

//  %x [2,5,6] -> DynamicQuantizeLinear -> MatMulInteger(i8 [6,4], per-column
//  zero points) -> Cast -> Mul(x scale * w scale [4]) -> Add(bias [4]) -> %y
constexpr const char* kQuantizedMatMul = R"(
  graph @g(%x: f32[2, 5, 6]) {
    %fixedw = const i8[6, 4] [-128, 127, 0, 5, -7, 1, 2, 3, -4, 100, -100, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -2, -3]
    %fixedwz = const i8[4] [0, 3, -3, 1]
    %ws = const f32[4] splat(0.0)
    %b = const f32[4] splat(0.0)
    %q, %s, %z = DynamicQuantizeLinear(%x) @quantize
    %c = MatMulInteger(%q, %fixedw, %z, %fixedwz) @matmul
    %cf = Cast(%c) {to = 1} @cast
    %sc = Mul(%ws, %s) @scales
    %m = Mul(%sc, %cf) @scale
    %y = Add(%b, %m) @bias
    return %y
  })";

/// A quantize_dynamic MatMul (operands in either order) is one exact region.
TEST(OnednnQuantizedFamily, DynamicallyQuantizedMatMulIsOneExactRegion) {
  Outcome o = partitionAndRun(kQuantizedMatMul, 2);
  EXPECT_THAT(o.regions, ElementsAreArray(int8Regions({"int8_matmul_bias"})));
  if (hasExactInt8Gemm()) {
    EXPECT_TRUE(o.leftOps.empty()) << ::testing::PrintToString(o.leftOps);
  }
  EXPECT_EQ(o.maxDiff, 0.0);
}

/// What must not fuse: a quantized input shared by two products (the region
/// would have to emit it), a Sigmoid (its float result depends on the
/// implementation, and the next layer may re-quantize it; here the eltwise
/// family takes it), a grouped conv.
TEST(OnednnQuantizedFamily, DoesNotFuseSharedQuantizationInexactActivationsOrGroups) {
  std::string shared = kQuantizedMatMul;
  replaceOnce(shared, "return %y",
              "%c2 = MatMulInteger(%q, %fixedw, %z, %fixedwz) @matmul2\n    return %y, %c2");
  Outcome o = partitionAndRun(shared.c_str(), 2);
  EXPECT_THAT(o.regions, ::testing::Each(::testing::Not(::testing::StartsWith("int8"))));
  EXPECT_EQ(o.maxDiff, 0.0);

  std::string sigmoid = kQuantizedConv;
  replaceOnce(sigmoid, "Relu(%a) @relu", "Sigmoid(%a) @sigmoid");
  o = partitionAndRun(sigmoid.c_str(), 2);
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains("int8_conv_bias_act")));
  if (hasExactInt8Gemm()) {
    EXPECT_THAT(o.regions, ElementsAre("int8_conv_bias", "eltwise1"));
  }
  EXPECT_LT(o.maxDiff, 1e-6);

  std::string grouped = kQuantizedConv;
  replaceOnce(grouped, "f32[2, 5, 9, 11]", "f32[2, 6, 9, 11]");
  replaceOnce(grouped, "u8[7, 5, 3, 3]", "u8[8, 3, 3, 3]");
  replaceOnce(grouped, "f32[7, 1, 1]", "f32[8, 1, 1]");
  replaceOnce(grouped, "dilations = [2, 1]}", "dilations = [2, 1], group = 2}");
  o = partitionAndRun(grouped.c_str(), 2);
  EXPECT_THAT(o.regions, ::testing::Each(::testing::Not(::testing::StartsWith("int8"))));
  EXPECT_THAT(o.leftOps, ::testing::Contains("ConvInteger"));
  EXPECT_EQ(o.maxDiff, 0.0);
}

//  %x [1,4,6,6] -> Conv -> Resize(linear, x2) -> [int8 conv region]
/// A linear Resize re-quantized by the int8 family's region (fused before
/// the resize family runs) stays on the reference backend, which rounds as
/// ONNX Runtime does; nothing in the chain differs from the reference.
TEST(OnednnQuantizedFamily, ResizeFeedingAnInt8RegionStaysExact) {
  std::string text = kQuantizedConv;
  replaceOnce(text, "graph @g(%x: f32[2, 5, 9, 11]) {", R"(graph @g(%in: f32[2, 5, 5, 6]) {
    %wf = const f32[5, 5, 3, 3] splat(0.0)
    %fixedscales = const f32[4] [1.0, 1.0, 2.0, 2.0]
    %f = Conv(%in, %wf) {pads = [1, 1, 1, 1]} @conv_f32
    %x = Resize(%f, _, %fixedscales) {mode = "linear"} @up)");
  Outcome o = partitionAndRun(text.c_str(), 2);
  EXPECT_THAT(o.leftOps, ::testing::Contains("Resize"));
  EXPECT_THAT(o.regions, ::testing::Not(::testing::Contains("resize")));
  if (hasExactInt8Gemm()) {
    EXPECT_THAT(o.regions, ::testing::Contains("int8_conv_bias_act"));
  }
  EXPECT_EQ(o.maxDiff, 0.0);
}

//  %in -> Conv -> Relu -> MaxPool -> [int8 conv region], in the bf16 mode
/// In the bf16 precision mode, a region whose result is re-quantized (the
/// pool here, read by the int8 region's DynamicQuantizeLinear) keeps f32:
/// a bf16 rounding would move values to other quantization levels. So does
/// the float conv before it, whose result is pooled and re-quantized: the
/// bf16 mode computes exactly what the fp32 mode computes.
TEST(OnednnQuantizedFamily, Bf16ModeKeepsRequantizedValuesInF32) {
  if (!hasNativeBf16()) GTEST_SKIP() << "no native bf16: the bf16 mode is not used here";
  std::string text = kQuantizedConv;
  replaceOnce(text, "graph @g(%x: f32[2, 5, 9, 11]) {", R"(graph @g(%in: f32[2, 5, 9, 11]) {
    %wf = const f32[5, 5, 3, 3] splat(0.0)
    %f = Conv(%in, %wf) {pads = [1, 1, 1, 1]} @conv_f32
    %r = Relu(%f) @relu_f32
    %x = MaxPool(%r) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} @pool)");
  Outcome fp32 = partitionAndRun(text.c_str(), 2);
  Outcome o = partitionAndRun(text.c_str(), 2, 2, "bf16");
  EXPECT_THAT(o.regions, ::testing::Contains("pool"));
  EXPECT_EQ(o.maxDiff, fp32.maxDiff);
  EXPECT_LT(o.maxDiff, 1e-4);
}

}  // namespace
}  // namespace subgraph::onednn
