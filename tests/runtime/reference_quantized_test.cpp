//===- tests/runtime/reference_quantized_test.cpp - Integer GEMM kernels --===//
//
// The 8-bit kernels (ConvInteger, QLinearConv, MatMulInteger,
// DynamicQuantizeLinear) and the f16/bf16 Conv path of the reference
// backend, against naive oracles: a direct int64 convolution over random
// shapes, groups, strides, pads, dilations and zero points (u8 and i8, 1-d
// to 3-d; the seed is fixed so a failure reproduces), a triple-loop integer
// matrix product, and the f32 convolution rounded once to f16.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "runtime_test_util.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT
using ::testing::ElementsAre;

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

struct IntConvCase {
  std::vector<int64_t> x, w;  // [N, C, spatial...], [M, C/group, kernel...]
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;
  bool signedX, signedW;
  int64_t zx;
  std::vector<int64_t> zw;  // one per output channel
};

// Direct convolution of (x - zx) and (w - zw[oc]) in int64, the definition.
std::vector<int64_t> directIntConv(const IntConvCase& c, const std::vector<int64_t>& x,
                                   const std::vector<int64_t>& w, std::vector<int64_t>& outDims) {
  const size_t rank = c.x.size() - 2;
  outDims = {c.x[0], c.w[0]};
  for (size_t d = 0; d < rank; ++d) {
    int64_t span = (c.w[d + 2] - 1) * c.dilations[d] + 1;
    outDims.push_back((c.x[d + 2] + c.pads[d] + c.pads[d + rank] - span) / c.strides[d] + 1);
  }
  int64_t outSize = 1, inSize = 1, kSize = 1;
  for (size_t d = 0; d < rank; ++d) {
    outSize *= outDims[d + 2];
    inSize *= c.x[d + 2];
    kSize *= c.w[d + 2];
  }
  const int64_t cg = c.x[1] / c.group, mg = c.w[0] / c.group;
  std::vector<int64_t> y(static_cast<size_t>(c.x[0] * c.w[0] * outSize));
  std::vector<int64_t> o(rank), k(rank);
  for (int64_t n = 0; n < c.x[0]; ++n)
    for (int64_t oc = 0; oc < c.w[0]; ++oc)
      for (int64_t op = 0; op < outSize; ++op) {
        int64_t acc = 0;
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t kp = 0; kp < kSize; ++kp) {
            int64_t orest = op, krest = kp, offset = 0;
            bool inside = true;
            for (size_t d = rank; d-- > 0;) {
              o[d] = orest % outDims[d + 2];
              orest /= outDims[d + 2];
              k[d] = krest % c.w[d + 2];
              krest /= c.w[d + 2];
            }
            for (size_t d = 0; d < rank; ++d) {
              int64_t pos = o[d] * c.strides[d] + k[d] * c.dilations[d] - c.pads[d];
              inside = inside && pos >= 0 && pos < c.x[d + 2];
              offset = offset * c.x[d + 2] + pos;
            }
            if (!inside) continue;
            int64_t xv = x[static_cast<size_t>((n * c.x[1] + oc / mg * cg + ci) * inSize + offset)];
            int64_t wv = w[static_cast<size_t>((oc * cg + ci) * kSize + kp)];
            acc += (xv - c.zx) * (wv - c.zw[static_cast<size_t>(oc)]);
          }
        y[static_cast<size_t>((n * c.w[0] + oc) * outSize + op)] = acc;
      }
  return y;
}

// A random 8-bit tensor (as int64 values) of `dims`.
std::vector<int64_t> random8(const std::vector<int64_t>& dims, bool isSigned, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::uniform_int_distribution<int> dist(isSigned ? -128 : 0, isSigned ? 127 : 255);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& e : v) e = dist(rng);
  return v;
}

Tensor tensor8(const std::vector<int64_t>& dims, const std::vector<int64_t>& v, bool isSigned) {
  if (isSigned) return Tensor::fromVector<int8_t>(DataType::kInt8, dims, {v.begin(), v.end()});
  return Tensor::fromVector<uint8_t>(DataType::kUInt8, dims, {v.begin(), v.end()});
}

IntConvCase randomCase(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  IntConvCase c;
  const size_t rank = static_cast<size_t>(pick(1, 3));
  c.group = pick(1, 3);
  const int64_t cg = pick(1, 4), mg = pick(1, 9);
  c.x = {pick(1, 2), cg * c.group};
  c.w = {mg * c.group, cg};
  for (size_t d = 0; d < rank; ++d) {
    c.x.push_back(pick(rank == 3 ? 3 : 4, rank == 3 ? 6 : 21));
    c.w.push_back(pick(1, 3));
    c.strides.push_back(pick(1, 3));
    c.dilations.push_back(pick(1, 2));
  }
  for (size_t d = 0; d < 2 * rank; ++d) c.pads.push_back(pick(0, 2));
  for (size_t d = 0; d < rank; ++d)  // keep at least one output position
    c.x[d + 2] = std::max(c.x[d + 2], (c.w[d + 2] - 1) * c.dilations[d] + 1);
  c.signedX = pick(0, 1) == 1;
  c.signedW = pick(0, 1) == 1;
  c.zx = c.signedX ? pick(-128, 127) : pick(0, 255);
  const bool perChannel = pick(0, 1) == 1;
  const int64_t shared = c.signedW ? pick(-128, 127) : pick(0, 255);
  for (int64_t oc = 0; oc < c.w[0]; ++oc)
    c.zw.push_back(perChannel ? (c.signedW ? pick(-128, 127) : pick(0, 255)) : shared);
  return c;
}

// The graph text of ConvInteger for `c`, with its zero points as constants.
std::string convIntegerGraph(const IntConvCase& c) {
  auto t = [](bool s) { return std::string(s ? "i8" : "u8"); };
  std::string zw = "[";
  for (size_t i = 0; i < c.zw.size(); ++i) zw += (i ? ", " : "") + std::to_string(c.zw[i]);
  zw += "]";
  return "graph @g(%x: " + t(c.signedX) + list(c.x) + ", %w: " + t(c.signedW) + list(c.w) +
         ") {\n  %xz = const " + t(c.signedX) + "[] [" + std::to_string(c.zx) + "]\n" +
         "  %wz = const " + t(c.signedW) + "[" + std::to_string(c.zw.size()) + "] " + zw + "\n" +
         "  %y = ConvInteger(%x, %w, %xz, %wz) {group = " + std::to_string(c.group) +
         ", strides = " + list(c.strides) + ", dilations = " + list(c.dilations) +
         ", pads = " + list(c.pads) + "}\n  return %y\n}";
}

/// ConvInteger over random shapes, groups, strides, pads, dilations, u8/i8
/// operands and per-tensor or per-channel weight zero points gives exactly
/// the direct int64 convolution.
TEST(ReferenceQuantizedTest, ConvIntegerMatchesDirectConvolution) {
  std::mt19937 rng(20261126);
  for (int trial = 0; trial < 60; ++trial) {
    IntConvCase c = randomCase(rng);
    const std::string text = convIntegerGraph(c);
    SCOPED_TRACE(text);
    std::vector<int64_t> x = random8(c.x, c.signedX, rng), w = random8(c.w, c.signedW, rng);
    std::vector<int64_t> outDims;
    std::vector<int64_t> expected = directIntConv(c, x, w, outDims);
    auto session = compileText(text);
    auto out =
        runOk(*session, {{"x", tensor8(c.x, x, c.signedX)}, {"w", tensor8(c.w, w, c.signedW)}});
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].tensor.dims(), outDims);
    auto got = out[0].tensor.data<int32_t>();
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "element " << i;
  }
}

/// A convolution with more output positions than one tile (and more rows
/// than one 6-row strip) stitches its tiles without gaps or overlap.
TEST(ReferenceQuantizedTest, ConvIntegerAcrossManyTiles) {
  std::mt19937 rng(7);
  IntConvCase c{{1, 5, 37, 29}, {13, 5, 3, 3}, 1,    {1, 1}, {1, 1},
                {1, 1, 1, 1},   false,         true, 17,     {}};
  for (int64_t oc = 0; oc < 13; ++oc) c.zw.push_back(oc - 6);
  std::vector<int64_t> x = random8(c.x, false, rng), w = random8(c.w, true, rng);
  std::vector<int64_t> outDims;
  std::vector<int64_t> expected = directIntConv(c, x, w, outDims);
  auto session = compileText(convIntegerGraph(c));
  auto out = runOk(*session, {{"x", tensor8(c.x, x, false)}, {"w", tensor8(c.w, w, true)}});
  ASSERT_EQ(out.size(), 1u);
  auto got = out[0].tensor.data<int32_t>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "element " << i;
}

//   QLinearConv(x u8, w i8 per-channel scale, bias) vs the int accumulator
/// QLinearConv requantizes the exact accumulator plus bias per channel:
/// round half to even, then saturate.
TEST(ReferenceQuantizedTest, QLinearConvRequantizesPerChannel) {
  auto session = compileText(R"(
    graph @g(%x: u8[1, 1, 1, 3]) {
      %xs = const f32[] [0.5]
      %xz = const u8[] [2]
      %w = const i8[2, 1, 1, 2] [1, -1, 3, 2]
      %ws = const f32[2] [1.0, 0.25]
      %wz = const i8[2] [0, 1]
      %ys = const f32[] [1.0]
      %yz = const u8[] [100]
      %b = const i32[2] [3, -200]
      %y = QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b)
      return %y
    })");
  auto out = runOk(
      *session, {{"x", Tensor::fromVector<uint8_t>(DataType::kUInt8, {1, 1, 1, 3}, {2, 7, 255})}});
  ASSERT_EQ(out.size(), 1u);
  // x - 2 = [0, 5, 253]. Channel 0: w = [1, -1]: acc [-5, -248], + 3 ->
  // [-2, -245] * 0.5 = [-1, -122.5 -> -122] + 100 = [99, -22 -> 0].
  // Channel 1: w - 1 = [2, 1]: acc [5, 263], - 200 -> [-195, 63] * 0.125
  // = [-24.375 -> -24, 7.875 -> 8] + 100 = [76, 108].
  auto got = out[0].tensor.data<uint8_t>();
  EXPECT_THAT(std::vector<int>(got.begin(), got.end()), ElementsAre(99, 0, 76, 108));
}

/// MatMulInteger with a batch, a per-row A zero point and a per-column B
/// zero point gives exactly the triple-loop product.
TEST(ReferenceQuantizedTest, MatMulIntegerMatchesTripleLoop) {
  std::mt19937 rng(11);
  const int64_t batch = 2, m = 7, k = 45, n = 150;
  std::vector<int64_t> a = random8({batch, m, k}, false, rng), b = random8({k, n}, true, rng);
  std::vector<int64_t> za = random8({m}, false, rng), zb = random8({n}, true, rng);
  auto session = compileText(
      "graph @g(%a: u8[2, 7, 45], %b: i8[45, 150], %za: u8[7], %zb: i8[150]) {\n"
      "  %y = MatMulInteger(%a, %b, %za, %zb)\n  return %y\n}");
  auto out = runOk(*session, {{"a", tensor8({batch, m, k}, a, false)},
                              {"b", tensor8({k, n}, b, true)},
                              {"za", tensor8({m}, za, false)},
                              {"zb", tensor8({n}, zb, true)}});
  ASSERT_EQ(out.size(), 1u);
  auto got = out[0].tensor.data<int32_t>();
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += (a[static_cast<size_t>((t * m + i) * k + p)] - za[static_cast<size_t>(i)]) *
                 (b[static_cast<size_t>(p * n + j)] - zb[static_cast<size_t>(j)]);
        ASSERT_EQ(got[static_cast<size_t>((t * m + i) * n + j)], acc) << t << "," << i << "," << j;
      }
}

/// DynamicQuantizeLinear over many parallel chunks picks the range of the
/// whole tensor and rounds x / scale half to even, as the serial formula.
TEST(ReferenceQuantizedTest, DynamicQuantizeLinearOverManyChunks) {
  const int64_t n = 300000;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = std::sin(0.001f * i) * 3.0f + 1.0f;
  x[250000] = -7.0f;  // the minimum sits in a late chunk
  auto session = compileText(
      "graph @g(%x: f32[300000]) {\n  %y, %s, %z = DynamicQuantizeLinear(%x)\n  return %y, %s, "
      "%z\n}");
  auto out = runOk(*session, {{"x", f32({n}, x)}});
  ASSERT_EQ(out.size(), 3u);
  const float hi = *std::max_element(x.begin(), x.end()), lo = -7.0f;
  const float scale = (hi - lo) / 255.0f;
  const float zero = std::nearbyint(std::clamp(-lo / scale, 0.0f, 255.0f));
  EXPECT_EQ(out[1].tensor.data<float>()[0], scale);
  EXPECT_EQ(out[2].tensor.data<uint8_t>()[0], static_cast<uint8_t>(zero));
  auto y = out[0].tensor.data<uint8_t>();
  for (int64_t i = 0; i < n; ++i) {
    float q = std::clamp(std::nearbyint(x[static_cast<size_t>(i)] / scale) + zero, 0.0f, 255.0f);
    ASSERT_EQ(y[static_cast<size_t>(i)], static_cast<uint8_t>(q)) << "element " << i;
  }
}

//   %x f32 -> Cast(f16) -> Conv(w f16, b f16) -> Cast(f32)
/// The reference Conv runs f16 by computing in f32 and rounding once: the
/// result equals the f32 Conv of the f16 values, rounded to f16.
TEST(ReferenceQuantizedTest, HalfConvComputesInF32) {
  const char* body = R"(
      %w = const f32[2, 1, 3, 3] [0.5, -1, 0.25, 2, 1, -0.5, 0.125, 3, -2, 1, 1, 1, -1, -1, 0.5, 0.75, 0.3, 0.1]
      %b = const f32[2] [0.1, -3]
      %xh = Cast(%x) {to = TYPE}
      %wh = Cast(%w) {to = TYPE}
      %bh = Cast(%b) {to = TYPE}
      %ch = Conv(%xh, %wh, %bh) {pads = [1, 1, 1, 1]}
      %y = Cast(%ch) {to = 1}
      %xr = Cast(%xh) {to = 1}
      %wr = Cast(%wh) {to = 1}
      %br = Cast(%bh) {to = 1}
      %cf = Conv(%xr, %wr, %br) {pads = [1, 1, 1, 1]}
      %cr = Cast(%cf) {to = TYPE}
      %ref = Cast(%cr) {to = 1}
      return %y, %ref
    })";
  std::mt19937 rng(3);
  for (const char* type : {"10", "16"}) {
    std::string text = std::string("graph @g(%x: f32[1, 1, 5, 4]) {") + body;
    for (size_t at; (at = text.find("TYPE")) != std::string::npos;) text.replace(at, 4, type);
    auto session = compileText(text);
    auto out = runOk(*session, {{"x", randomF32({1, 1, 5, 4}, rng)}});
    ASSERT_EQ(out.size(), 2u) << type;
    EXPECT_EQ(values(out[0].tensor), values(out[1].tensor)) << type;
  }
}

}  // namespace
}  // namespace subgraph::runtime
