//===- tests/runtime/reference_op_families_test.cpp - Tricky reference kernels -===//
//
// Hand-computed cases for the reference kernels whose semantics have the
// most corners: recurrent layers (directions, sequence lengths, activation
// parameters, linear_before_reset), Einsum (diagonals, implicit output,
// ellipsis), Unique (first-occurrence order, NaN), NonMaxSuppression
// (flipped boxes, thresholds), the quantized ops (rounding, saturation,
// zero-point padding), GridSample padding modes, Det pivoting and BitShift
// past the element width; plus the errors bad inputs must give. The ONNX
// conformance run covers the ordinary cases.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "runtime_test_util.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT
using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename T>
std::vector<T> elements(const Tensor& t) {
  auto d = t.data<T>();
  return {d.begin(), d.end()};
}

template <typename T>
Tensor typed(DataType dt, std::vector<int64_t> dims, std::vector<T> v) {
  return Tensor::fromVector<T>(dt, std::move(dims), v);
}

// The compile error of `text`, or "" when it compiles.
std::string compileError(const std::string& text) {
  Session s;
  Status st = s.load(parseGraphOrThrow(text));
  if (!st.isOk()) return st.message();
  return s.compile().message();
}

//   %x [3, 2, 1] -> RNN(Relu, bidirectional, sequence_lens [3, 2]) -> %y, %yh
/// Both directions honour each batch entry's length: the reverse pass
/// starts at the entry's last step and steps past the end give zeros.
TEST(ReferenceOpFamiliesTest, BidirectionalRnnWithSequenceLengths) {
  auto session = testing::compileText(R"(
    graph @g(%x: f32[3, 2, 1], %lens: i32[2]) {
      %w = const f32[2, 1, 1] [1.0, 1.0]
      %r = const f32[2, 1, 1] [1.0, 1.0]
      %y, %yh = RNN(%x, %w, %r, _, %lens) {hidden_size = 1, direction = "bidirectional", activations = ["Relu", "Relu"]}
      return %y, %yh
    })");
  // Batch 0 reads 1, 2, 3; batch 1 reads 1, 1 (its third step is padding).
  auto out = testing::runOk(*session, {{"x", testing::f32({3, 2, 1}, {1, 1, 2, 1, 3, 9})},
                                       {"lens", typed<int32_t>(DataType::kInt32, {2}, {3, 2})}});
  ASSERT_EQ(out.size(), 2u);
  // h = relu(x + h). Y is [seq, dirs, batch, hidden].
  EXPECT_THAT(testing::values(out[0].tensor), ElementsAre(1, 1, 6, 2,    // t = 0
                                                          3, 2, 5, 1,    // t = 1
                                                          6, 0, 3, 0));  // t = 2
  EXPECT_THAT(testing::values(out[1].tensor), ElementsAre(6, 2, 6, 2));
}

//   %x [2, 1, 1] -> GRU(HardSigmoid, Affine; lbr 0 | 1) -> %h0, %h1
/// Alphas and betas go in order to the functions that take them, and
/// linear_before_reset moves the reset gate outside R_h H + Rb_h.
TEST(ReferenceOpFamiliesTest, GruActivationParametersAndLinearBeforeReset) {
  auto session = testing::compileText(R"(
    graph @g(%x: f32[2, 1, 1]) {
      %w = const f32[1, 3, 1] [0.0, 0.0, 1.0]
      %r = const f32[1, 3, 1] [0.0, 0.0, 1.0]
      %b = const f32[1, 6] [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
      %y0, %h0 = GRU(%x, %w, %r, %b) {hidden_size = 1, activations = ["HardSigmoid", "Affine"], activation_alpha = [0.5, 2.0], activation_beta = [0.5, 0.0]}
      %y1, %h1 = GRU(%x, %w, %r, %b) {hidden_size = 1, linear_before_reset = 1, activations = ["HardSigmoid", "Affine"], activation_alpha = [0.5, 2.0], activation_beta = [0.5, 0.0]}
      return %h0, %h1
    })");
  auto out = testing::runOk(*session, {{"x", testing::f32({2, 1, 1}, {1, 2})}});
  ASSERT_EQ(out.size(), 2u);
  // z = r = HardSigmoid(0) = 0.5. lbr 0: h~ = 2 (x + 0.5 H + 1) gives H = 2,
  // then 5. lbr 1: h~ = 2 (x + 0.5 (H + 1)) gives H = 1.5, then 4.
  EXPECT_THAT(testing::values(out[0].tensor), ElementsAre(5.0f));
  EXPECT_THAT(testing::values(out[1].tensor), ElementsAre(4.0f));
}

//   %a [2, 2] -> Einsum "ii->i" | "ii" | "ij,jk" | "...ij->...ji"
/// Diagonals, implicit outputs (labels seen once, alphabetical) and an
/// ellipsis.
TEST(ReferenceOpFamiliesTest, EinsumDiagonalImplicitAndEllipsis) {
  auto session = testing::compileText(R"(
    graph @g(%a: f32[2, 2], %v: i32[3]) {
      %diag = Einsum(%a) {equation = "ii->i"}
      %trace = Einsum(%a) {equation = "ii"}
      %prod = Einsum(%a, %a) {equation = "ij,jk"}
      %t = Einsum(%a) {equation = " ... i j -> ... j i "}
      %dot = Einsum(%v, %v) {equation = "i,i->"}
      return %diag, %trace, %prod, %t, %dot
    })");
  auto out = testing::runOk(*session, {{"a", testing::f32({2, 2}, {1, 2, 3, 4})},
                                       {"v", typed<int32_t>(DataType::kInt32, {3}, {1, -2, 3})}});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_THAT(testing::values(out[0].tensor), ElementsAre(1, 4));
  EXPECT_TRUE(out[1].tensor.dims().empty());
  EXPECT_THAT(testing::values(out[1].tensor), ElementsAre(5));
  EXPECT_THAT(testing::values(out[2].tensor), ElementsAre(7, 10, 15, 22));
  EXPECT_THAT(testing::values(out[3].tensor), ElementsAre(1, 3, 2, 4));
  EXPECT_THAT(elements<int32_t>(out[4].tensor), ElementsAre(14));
}

/// An equation that does not parse, or does not fit its operands, fails
/// the compile with the equation named.
TEST(ReferenceOpFamiliesTest, EinsumBadEquationFailsCompile) {
  EXPECT_THAT(compileError(R"(
    graph @g(%a: f32[2, 2]) {
      %y = Einsum(%a) {equation = "i1->i"} @e
      return %y
    })"),
              HasSubstr("Einsum node 'e': cannot parse equation 'i1->i'"));
  EXPECT_THAT(compileError(R"(
    graph @g(%a: f32[2, 3]) {
      %y = Einsum(%a) {equation = "ii->i"} @e
      return %y
    })"),
              HasSubstr("Einsum node 'e': label size"));
}

//   %x [6] -> Unique(sorted 0) ; %n [4] -> Unique(sorted 1)
/// Unsorted output keeps first-occurrence order; NaNs are one value that
/// sorts last.
TEST(ReferenceOpFamiliesTest, UniqueOrderAndNaN) {
  auto session = testing::compileText(R"(
    graph @g(%x: f32[6], %n: f32[4]) {
      %y, %idx, %inv, %cnt = Unique(%x) {sorted = 0}
      %ny, %nidx, %ninv, %ncnt = Unique(%n)
      return %y, %idx, %inv, %cnt, %ny, %ncnt
    })");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = testing::runOk(*session, {{"x", testing::f32({6}, {2, 1, 1, 3, 4, 3})},
                                       {"n", testing::f32({4}, {nan, 1, nan, 0})}});
  ASSERT_EQ(out.size(), 6u);
  EXPECT_THAT(testing::values(out[0].tensor), ElementsAre(2, 1, 3, 4));
  EXPECT_THAT(elements<int64_t>(out[1].tensor), ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(elements<int64_t>(out[2].tensor), ElementsAre(0, 1, 1, 2, 3, 2));
  EXPECT_THAT(elements<int64_t>(out[3].tensor), ElementsAre(1, 2, 2, 1));
  std::vector<float> ny = testing::values(out[4].tensor);
  ASSERT_EQ(ny.size(), 3u);
  EXPECT_EQ(ny[0], 0);
  EXPECT_EQ(ny[1], 1);
  EXPECT_TRUE(std::isnan(ny[2]));
  EXPECT_THAT(elements<int64_t>(out[5].tensor), ElementsAre(1, 1, 2));
}

//   boxes: b0, b1 (IoU 0.82 with b0), b2 (b0 with corners swapped), b3 (far,
//   low score) -> NMS(iou 0.5) ; NMS(iou 0.9)
/// Flipped corners are the same box, the IoU threshold is strict, and
/// boxes at or below score_threshold are never selected.
TEST(ReferenceOpFamiliesTest, NonMaxSuppressionThresholds) {
  auto session = testing::compileText(R"(
    graph @g(%boxes: f32[1, 4, 4], %scores: f32[1, 1, 4]) {
      %max = const i64[1] [3]
      %lo = const f32[1] [0.5]
      %hi = const f32[1] [0.9]
      %st = const f32[1] [0.3]
      %a = NonMaxSuppression(%boxes, %scores, %max, %lo, %st)
      %b = NonMaxSuppression(%boxes, %scores, %max, %hi, %st)
      return %a, %b
    })");
  auto out = testing::runOk(
      *session, {{"boxes", testing::f32({1, 4, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 1, 1, 0, 0,  //
                                                    5, 5, 6, 6})},
                 {"scores", testing::f32({1, 1, 4}, {0.9f, 0.8f, 0.7f, 0.3f})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor.dims(), (std::vector<int64_t>{1, 3}));
  EXPECT_THAT(elements<int64_t>(out[0].tensor), ElementsAre(0, 0, 0));
  EXPECT_THAT(elements<int64_t>(out[1].tensor), ElementsAre(0, 0, 0, 0, 0, 1));
}

//   QLinearMatMul: one result saturates at 255, one rounds 2.5 to 2
/// Requantization rounds half to even and saturates to the output type.
TEST(ReferenceOpFamiliesTest, QLinearMatMulRoundsAndSaturates) {
  auto session = testing::compileText(R"(
    graph @g(%a: u8[1, 2], %b: u8[2, 1]) {
      %as = const f32[] [0.5]
      %az = const u8[] [10]
      %bs = const f32[] [1.0]
      %bz = const u8[] [1]
      %one = const f32[] [1.0]
      %eight = const f32[] [8.0]
      %z250 = const u8[] [250]
      %z0 = const u8[] [0]
      %sat = QLinearMatMul(%a, %as, %az, %b, %bs, %bz, %one, %z250)
      %half = QLinearMatMul(%a, %as, %az, %b, %bs, %bz, %eight, %z0)
      %acc = MatMulInteger(%a, %b, %az, %bz)
      return %sat, %half, %acc
    })");
  auto out = testing::runOk(*session, {{"a", typed<uint8_t>(DataType::kUInt8, {1, 2}, {10, 20})},
                                       {"b", typed<uint8_t>(DataType::kUInt8, {2, 1}, {3, 5})}});
  ASSERT_EQ(out.size(), 3u);
  // acc = (10 - 10)(3 - 1) + (20 - 10)(5 - 1) = 40; 40 * 0.5 = 20.
  EXPECT_THAT(elements<int32_t>(out[2].tensor), ElementsAre(40));
  EXPECT_THAT(elements<uint8_t>(out[0].tensor), ElementsAre(255));  // 20 + 250
  EXPECT_THAT(elements<uint8_t>(out[1].tensor), ElementsAre(2));    // 20 / 8 = 2.5
}

//   %x u8 [1, 1, 2, 2] (zero point 1) -> ConvInteger(1x1 w = 2, pads 1)
/// Padding stands for the zero point, so it contributes nothing.
TEST(ReferenceOpFamiliesTest, ConvIntegerPadsWithTheZeroPoint) {
  auto session = testing::compileText(R"(
    graph @g(%x: u8[1, 1, 2, 2]) {
      %w = const u8[1, 1, 1, 1] [2]
      %xz = const u8[] [1]
      %y = ConvInteger(%x, %w, %xz) {pads = [1, 1, 1, 1]}
      return %y
    })");
  auto out = testing::runOk(*session,
                            {{"x", typed<uint8_t>(DataType::kUInt8, {1, 1, 2, 2}, {1, 2, 3, 4})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor.dims(), (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_THAT(elements<int32_t>(out[0].tensor),
              ElementsAre(0, 0, 0, 0, 0, 0, 2, 0, 0, 4, 6, 0, 0, 0, 0, 0));
}

//   %x [1, 1, 2, 2] sampled at (0, 0) and (-1, -1): zeros | border ; nearest
/// Out-of-image taps read 0 under zeros padding and the edge under border;
/// nearest with align_corners rounds half to even.
TEST(ReferenceOpFamiliesTest, GridSamplePaddingModes) {
  auto session = testing::compileText(R"(
    graph @g(%x: f32[1, 1, 2, 2], %grid: f32[1, 1, 2, 2]) {
      %z = GridSample(%x, %grid)
      %b = GridSample(%x, %grid) {padding_mode = "border"}
      %n = GridSample(%x, %grid) {mode = "nearest", align_corners = 1}
      return %z, %b, %n
    })");
  auto out = testing::runOk(*session, {{"x", testing::f32({1, 1, 2, 2}, {1, 2, 3, 4})},
                                       {"grid", testing::f32({1, 1, 2, 2}, {0, 0, -1, -1})}});
  ASSERT_EQ(out.size(), 3u);
  // (0, 0) is the image centre: the mean 2.5. (-1, -1) is the outer corner
  // (-0.5, -0.5): a quarter of pixel (0, 0) with zeros, all of it with border.
  EXPECT_THAT(testing::values(out[0].tensor), ElementsAre(2.5f, 0.25f));
  EXPECT_THAT(testing::values(out[1].tensor), ElementsAre(2.5f, 1.0f));
  // align_corners: (0, 0) -> (0.5, 0.5) rounds to pixel (0, 0).
  EXPECT_THAT(testing::values(out[2].tensor), ElementsAre(1.0f, 1.0f));
}

//   %m [3, 2, 2] -> Det ; %k [3, 3] -> Det
/// Row swaps flip the sign, a singular matrix gives 0, and a 3x3 needing
/// a pivot is exact.
TEST(ReferenceOpFamiliesTest, DetPivotsAndSingular) {
  auto session = testing::compileText(R"(
    graph @g(%m: f32[3, 2, 2], %k: f32[3, 3]) {
      %d = Det(%m)
      %e = Det(%k)
      return %d, %e
    })");
  auto out = testing::runOk(*session,
                            {{"m", testing::f32({3, 2, 2}, {0, 1, 1, 0, 1, 2, 2, 4, 3, 1, 2, 5})},
                             {"k", testing::f32({3, 3}, {0, 2, 1, 1, 1, 1, 2, 1, 0})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(testing::values(out[0].tensor), ElementsAre(-1, 0, 13));
  EXPECT_TRUE(out[1].tensor.dims().empty());
  EXPECT_NEAR(testing::values(out[1].tensor)[0], 3.0f, 1e-5);
}

//   u8: [1, 128, 255] << [1, 1, 8] ; [255] >> [9]
/// Shifting by the element width or more gives 0 instead of undefined
/// behaviour.
TEST(ReferenceOpFamiliesTest, BitShiftPastTheWidthGivesZero) {
  auto session = testing::compileText(R"(
    graph @g(%x: u8[3], %s: u8[3]) {
      %l = BitShift(%x, %s) {direction = "LEFT"}
      %r = BitShift(%x, %s) {direction = "RIGHT"}
      return %l, %r
    })");
  auto out = testing::runOk(*session, {{"x", typed<uint8_t>(DataType::kUInt8, {3}, {1, 128, 255})},
                                       {"s", typed<uint8_t>(DataType::kUInt8, {3}, {1, 1, 9})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(elements<uint8_t>(out[0].tensor), ElementsAre(2, 0, 0));
  EXPECT_THAT(elements<uint8_t>(out[1].tensor), ElementsAre(0, 64, 0));
}

/// A sequence length beyond the time axis fails the request with one line
/// naming the entry, instead of reading past the input.
TEST(ReferenceOpFamiliesTest, ReverseSequenceRejectsLongSequences) {
  auto session = testing::compileText(R"(
    graph @g(%x: f32[2, 2], %lens: i64[2]) {
      %y = ReverseSequence(%x, %lens) @rev
      return %y
    })");
  StatusOr<RunResult> r = session->run(
      {{"x", testing::f32({2, 2}, {1, 2, 3, 4})}, {"lens", testing::i64({2}, {2, 3})}});
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.status().message(),
              HasSubstr("ReverseSequence node 'rev': sequence_lens[1] = 3 is out of range"));
  // In range: batch 0 reversed over both steps, batch 1 untouched.
  auto out = testing::runOk(
      *session, {{"x", testing::f32({2, 2}, {1, 2, 3, 4})}, {"lens", testing::i64({2}, {2, 1})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(testing::values(out[0].tensor), ElementsAre(3, 2, 1, 4));
}

/// A Compress condition longer than the axis is an error, not a read past
/// the input.
TEST(ReferenceOpFamiliesTest, CompressRejectsLongCondition) {
  auto session = testing::compileText(R"(
    graph @g(%x: f32[3], %c: bool[4]) {
      %y = Compress(%x, %c) {axis = 0} @cmp
      return %y
    })");
  auto cond = typed<uint8_t>(DataType::kBool, {4}, {1, 0, 1, 1});
  StatusOr<RunResult> r = session->run({{"x", testing::f32({3}, {1, 2, 3})}, {"c", cond}});
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.status().message(),
              HasSubstr("Compress node 'cmp': condition has 4 entries for an axis of size 3"));
}

// The 3x3 input of the bilinear cases (standard normal, seed 0).
const std::vector<float> kResizeInput = {0.1257302165f, -0.1321048588f, 0.6404226422f,
                                         0.1049001142f, -0.5356693864f, 0.3615950644f,
                                         1.3040000200f, 0.9470809698f,  -0.7037352324f};

//   %x [1, 1, 3, 3] -> Resize(linear, sizes [1, 1, H, W], MODE) -> %y
std::vector<float> bilinear(const std::string& mode, int64_t h, int64_t w) {
  auto session = testing::compileText(R"(
    graph @g(%x: f32[1, 1, 3, 3]) {
      %sizes = const i64[4] [1, 1, )" +
                                      std::to_string(h) + ", " + std::to_string(w) + R"(]
      %y = Resize(%x, _, _, %sizes) {mode = "linear", coordinate_transformation_mode = ")" +
                                      mode + R"("}
      return %y
    })");
  auto out = testing::runOk(*session, {{"x", testing::f32({1, 1, 3, 3}, kResizeInput)}});
  return testing::values(out[0].tensor);
}

/// Bilinear resizing of f32 gives ONNX Runtime 1.30's bits (the values
/// below are its outputs), not the double-precision taps rounded once:
/// those differ in the last bit in 32 of these 49 outputs, and a quantized
/// model that re-quantizes after an upsample turns such bits into whole
/// quantization steps.
TEST(ReferenceOpFamiliesTest, BilinearResizeRoundsAsOnnxRuntime) {
  const std::vector<float> halfPixel = {
      0.125730217f,    0.0888966247f, -0.0216041319f, -0.132104859f,  0.198978394f,  0.530061603f,
      0.640422642f,    0.122754484f,  0.0781099722f,  -0.0558235049f, -0.18975696f,  0.148963243f,
      0.487683415f,    0.600590169f,  0.113827303f,   0.0457500592f,  -0.158481583f, -0.362713218f,
      -0.00108212233f, 0.360548943f,  0.481092542f,   0.104900114f,   0.0133901536f, -0.261139661f,
      -0.535669386f,   -0.151127443f, 0.233414471f,   0.361595064f,   0.618800104f,  0.544656515f,
      0.322225809f,    0.0997951031f, 0.0163221359f,  -0.0671508014f, -0.094975099f, 1.13270009f,
      1.07592285f,     0.905591249f,  0.735259593f,   0.183771729f,   -0.367716104f, -0.551545262f,
      1.30400002f,     1.25301158f,   1.10004616f,    0.94708097f,    0.239588246f,  -0.467904449f,
      -0.703735232f};
  EXPECT_THAT(bilinear("half_pixel", 7, 7), ::testing::ElementsAreArray(halfPixel));
  const std::vector<float> alignCorners = {
      0.125730217f,  -0.0461598374f, 0.125404343f, 0.640422642f, 0.115315169f,
      -0.184153035f, -0.0555884354f, 0.501008868f, 0.104900114f, -0.322146237f,
      -0.236581206f, 0.361595064f,   0.704450071f, 0.371953875f, 0.0801138207f,
      -0.171070084f, 1.30400002f,    1.06605399f,  0.396808833f, -0.703735232f};
  EXPECT_THAT(bilinear("align_corners", 5, 4), ::testing::ElementsAreArray(alignCorners));
}

/// What must not change: bilinear over other axes, and other types, keep
/// the general multilinear path (an integer input rounds its sum once).
TEST(ReferenceOpFamiliesTest, BilinearResizeOfIntegersRoundsOnce) {
  auto session = testing::compileText(R"(
    graph @g(%x: i32[1, 1, 1, 2]) {
      %scales = const f32[4] [1.0, 1.0, 1.0, 2.0]
      %y = Resize(%x, _, %scales) {mode = "linear", coordinate_transformation_mode = "half_pixel"}
      return %y
    })");
  auto out =
      testing::runOk(*session, {{"x", typed<int32_t>(DataType::kInt32, {1, 1, 1, 2}, {0, 3})}});
  // Sources 0, 0.25, 0.75, 1 -> 0, 0.75, 2.25, 3 -> rounded half to even.
  EXPECT_THAT(elements<int32_t>(out[0].tensor), ElementsAre(0, 1, 2, 3));
}

//   %x [6] -> Pow(%x, 2) -> %y;  %x [3] -> Pow(%x, [[2]]) -> %z [1, 3]
/// Squaring takes x * x, which must equal powf's correctly rounded result
/// bit for bit, edge values included; an exponent that broadcasts the base
/// keeps the general path and its output shape.
TEST(ReferenceOpFamiliesTest, PowOfTwoIsTheExactSquare) {
  auto session = testing::compileText(R"(
    graph @g(%x: f32[6], %w: f32[3]) {
      %two = const f32[] [2.0]
      %y = Pow(%x, %two)
      %two2 = const f32[1, 1] [2.0]
      %z = Pow(%w, %two2)
      return %y, %z
    })");
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {-0.0f, 1.1f, -3.0e19f, inf, -inf, 1.0e-23f};
  auto out = testing::runOk(
      *session, {{"x", testing::f32({6}, x)}, {"w", testing::f32({3}, {1.5f, -2.0f, 0.1f})}});
  std::vector<float> y = testing::values(out[0].tensor);
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(std::pow(x[i], 2.0f)))
        << "x = " << x[i];
  EXPECT_EQ(out[1].tensor.dims(), (std::vector<int64_t>{1, 3}));
  EXPECT_THAT(testing::values(out[1].tensor), ElementsAre(2.25f, 4.0f, std::pow(0.1f, 2.0f)));
}

//   %x [1, 1, 2, 2], %scales f32[4] (a graph input) -> Resize -> %y
/// Scales from the data can ask for any size: 1e30 (past int64) and a roi
/// that makes the extent negative are one error naming the axis, never
/// an undefined cast into a wrapped size.
TEST(ReferenceOpFamiliesTest, ResizeRefusesSizesPastInt64) {
  auto session = testing::compileText(R"(
    graph @g(%x: f32[1, 1, 2, 2], %scales: f32[4], %roi: f32[8]) {
      %y = Resize(%x, %roi, %scales) {mode = "nearest", coordinate_transformation_mode = "tf_crop_and_resize"}
      return %y
    })");
  Tensor x = testing::f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor roi = testing::f32({8}, {0, 0, 0, 0, 1, 1, 1, 1});
  StatusOr<RunResult> huge =
      session->run({{"x", x}, {"roi", roi}, {"scales", testing::f32({4}, {1, 1, 1, 1e30f})}});
  ASSERT_FALSE(huge.isOk());
  EXPECT_THAT(huge.status().message(), HasSubstr("scales make axis 3"));
  Tensor backwards = testing::f32({8}, {0, 0, 0, 1, 1, 1, 1, 0});
  StatusOr<RunResult> negative =
      session->run({{"x", x}, {"roi", backwards}, {"scales", testing::f32({4}, {1, 1, 1, 2})}});
  ASSERT_FALSE(negative.isOk());
  EXPECT_THAT(negative.status().message(), HasSubstr("scales make axis 3"));
  // What must not be refused: an ordinary upsample through the same path.
  auto ok = testing::runOk(*session,
                           {{"x", x}, {"roi", roi}, {"scales", testing::f32({4}, {1, 1, 2, 2})}});
  EXPECT_EQ(ok[0].tensor.dims(), (std::vector<int64_t>{1, 1, 4, 4}));
}

}  // namespace
}  // namespace subgraph::runtime
