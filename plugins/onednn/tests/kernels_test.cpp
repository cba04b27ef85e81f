//===- plugins/onednn/tests/kernels_test.cpp - The compute core vs plain loops -===//
//
// Each kernel of the oneDNN compute core against a straightforward loop
// implementation on small random tensors (seeded; the seed is printed), in
// plain and blocked formats, plus what must be refused.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "activation.h"
#include "concat.h"
#include "dnnl_context.h"
#include "eltwise_chain.h"
#include "fused_conv.h"
#include "fused_matmul.h"
#include "normalization.h"
#include "pooling.h"
#include "quantized_gemm.h"
#include "tensor_format.h"

namespace subgraph::onednn {
namespace {

constexpr unsigned kSeed = 7;

std::vector<float> randomVector(size_t n, std::mt19937& rng, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// |got - want| <= tol * (1 + |want|) elementwise; with `relativeToMax`,
// tol * (1 + max |want|) instead (bf16, where cancellation makes small
// outputs inexact in relative terms).
void expectNear(const std::vector<float>& got, const std::vector<float>& want, float tol,
                bool relativeToMax = false) {
  ASSERT_EQ(got.size(), want.size());
  float scale = 0;
  for (float w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + (relativeToMax ? scale : std::fabs(want[i]))))
        << "at " << i;
}

// Plain NCHW <-> the spec's format, through the library's reorder.
std::vector<float> toFormat(const std::vector<float>& plain, const std::vector<int64_t>& dims,
                            Format f) {
  std::vector<float> out(formatBytes(dims, f) / sizeof(float) + 1);
  reorderTensor(dims, Format::kPlain, plain.data(), f, out.data());
  return out;
}
std::vector<float> fromFormat(const std::vector<float>& data, const std::vector<int64_t>& dims,
                              Format f) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  std::vector<float> out(n);
  reorderTensor(dims, f, data.data(), Format::kPlain, out.data());
  return out;
}

// The oracle: direct convolution, BN, residual, activations.
std::vector<float> naiveConv(const ConvSpec& s, const std::vector<int64_t>& in,
                             const std::vector<float>& x, const std::vector<float>& residual,
                             std::vector<int64_t>& outDims) {
  int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  int64_t oh =
      (h + s.pads[0] + s.pads[2] - s.dilations[0] * (s.kernel[0] - 1) - 1) / s.strides[0] + 1;
  int64_t ow =
      (w + s.pads[1] + s.pads[3] - s.dilations[1] * (s.kernel[1] - 1) - 1) / s.strides[1] + 1;
  outDims = {n, s.outChannels, oh, ow};
  int64_t cg = c / s.groups, og = s.outChannels / s.groups;
  std::vector<float> y(static_cast<size_t>(n * s.outChannels * oh * ow));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < s.outChannels; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = s.bias.empty() ? 0 : s.bias[static_cast<size_t>(o)];
          int64_t g = o / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ki = 0; ki < s.kernel[0]; ++ki)
              for (int64_t kj = 0; kj < s.kernel[1]; ++kj) {
                int64_t yi = i * s.strides[0] - s.pads[0] + ki * s.dilations[0];
                int64_t xj = j * s.strides[1] - s.pads[1] + kj * s.dilations[1];
                if (yi < 0 || yi >= h || xj < 0 || xj >= w) continue;
                acc += double(x[static_cast<size_t>(((b * c + g * cg + ci) * h + yi) * w + xj)]) *
                       s.weights[static_cast<size_t>(
                           ((o * cg + ci) * s.kernel[0] + ki) * s.kernel[1] + kj)];
              }
          size_t idx = static_cast<size_t>(((b * s.outChannels + o) * oh + i) * ow + j);
          auto v = static_cast<float>(acc);
          if (s.sumResidual) v += residual[idx];
          for (const Activation& a : s.activations) v = a.apply(v);
          y[idx] = v;
        }
  return y;
}

struct ConvCase {
  const char* name;
  int64_t c, o, groups, k, stride, pad, dilation, hw;
  Format src, dst;
  bool sum;
  Activation::Kind act;
};

class FusedConvTest : public ::testing::TestWithParam<ConvCase> {};

using K = Activation::Kind;
constexpr Format P = Format::kPlain;
constexpr Format B = Format::kBlocked16;
constexpr Format H = Format::kNhwcBf16;

// Runs one case against the loops (failing the test on a mismatch) and
// returns the oneDNN implementation that ran it.
std::string checkConvCase(const ConvCase& cc, bool winograd) {
  std::printf("seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  ConvSpec s;
  s.inChannels = cc.c;
  s.outChannels = cc.o;
  s.groups = cc.groups;
  s.kernel = {cc.k, cc.k};
  s.strides = {cc.stride, cc.stride};
  s.dilations = {cc.dilation, cc.dilation};
  s.pads = {cc.pad, cc.pad, cc.pad, cc.pad};
  s.weights = randomVector(static_cast<size_t>(cc.o * cc.c / cc.groups * cc.k * cc.k), rng);
  s.bias = randomVector(static_cast<size_t>(cc.o), rng);
  auto o = static_cast<size_t>(cc.o);
  foldBatchNorm(s, randomVector(o, rng, 0.5, 1.5), randomVector(o, rng), randomVector(o, rng),
                randomVector(o, rng, 0.1, 2), 1e-5f);
  s.sumResidual = cc.sum;
  if (cc.act == Activation::Kind::kClip)
    s.activations = {{Activation::Kind::kClip, 0.0f, 6.0f}};
  else if (cc.act == Activation::Kind::kHardSigmoid)
    s.activations = {{Activation::Kind::kHardSigmoid, 0.2f, 0.5f}};
  else
    s.activations = {{cc.act, 0.1f, 0.0f}};
  s.srcFormat = cc.src;
  s.dstFormat = cc.dst;
  s.winograd = winograd;
  std::vector<int64_t> in{2, cc.c, cc.hw, cc.hw};
  std::vector<float> x = randomVector(static_cast<size_t>(2 * cc.c * cc.hw * cc.hw), rng);

  FusedConv conv(s);
  std::vector<int64_t> outDims = conv.outputDims(in);
  std::vector<float> residual = randomVector(formatBytes(outDims, Format::kPlain) / 4, rng);
  std::vector<int64_t> wantDims;
  std::vector<float> want = naiveConv(s, in, x, residual, wantDims);
  EXPECT_EQ(outDims, wantDims);
  if (outDims != wantDims) return {};

  std::vector<float> scratch(conv.prepare(in) / 4 + 1);
  std::vector<float> src = toFormat(x, in, cc.src);
  std::vector<float> res = toFormat(residual, outDims, cc.dst);
  std::vector<float> dst(formatBytes(outDims, cc.dst) / 4 + 1);
  conv.execute(in, src.data(), res.data(), dst.data(), scratch.data());
  // bf16 keeps 8 bits of mantissa in inputs, weights and outputs.
  bool bf16 = cc.dst == Format::kNhwcBf16;
  float tol = bf16 ? 2e-2f : 1e-4f;
  expectNear(fromFormat(dst, outDims, cc.dst), want, tol, bf16);
  // Summing in place (residual already in the output buffer) is the same.
  if (cc.sum) {
    conv.execute(in, src.data(), res.data(), res.data(), scratch.data());
    expectNear(fromFormat(res, outDims, cc.dst), want, tol, bf16);
  }
  return conv.implementation(in);
}

/// A fused conv (BN folded, optional sum and activation) matches the loops.
TEST_P(FusedConvTest, MatchesLoops) {
  const ConvCase& cc = GetParam();
  if (cc.dst == Format::kNhwcBf16 && !hasNativeBf16())
    GTEST_SKIP() << "the CPU has no native bf16 (AVX512-BF16 or AMX)";
  std::string impl = checkConvCase(cc, /*winograd=*/false);
  EXPECT_EQ(impl.find("wino"), std::string::npos) << impl;
}

/// With Winograd allowed, a 3x3 stride-1 conv with a residual sum and an
/// activation still matches the loops to 1e-4, and on AVX-512 really runs
/// oneDNN's Winograd kernel.
TEST(FusedConv, WinogradMatchesLoops) {
  ConvCase cc{"winograd", 64, 64, 1, 3, 1, 1, 1, 14, B, B, true, K::kRelu};
  std::string impl = checkConvCase(cc, /*winograd=*/true);
  std::printf("implementation: %s\n", impl.c_str());
  if (dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core) {
    EXPECT_NE(impl.find("wino"), std::string::npos) << impl;
  }
}

/// Where oneDNN has no Winograd kernel for an eligible shape (channel
/// counts that are not multiples of 16, or an input smaller than the
/// kernel's tile), prepare() falls back to the direct algorithm instead of
/// failing, and the result still matches the loops.
TEST(FusedConv, WinogradFallsBackToDirect) {
  for (const ConvCase& cc :
       {ConvCase{"odd_channels", 3, 5, 1, 3, 1, 1, 1, 7, P, P, false, K::kRelu},
        ConvCase{"padded_channels", 24, 40, 1, 3, 1, 1, 1, 7, B, B, true, K::kClip}}) {
    std::string impl = checkConvCase(cc, /*winograd=*/true);
    EXPECT_FALSE(impl.empty()) << cc.name;
    std::printf("%s: %s\n", cc.name, impl.c_str());
  }
}

/// Winograd is only for 3x3 stride-1 ungrouped fp32 convs: a stride-2 or
/// depthwise conv that allows it keeps the direct algorithm.
TEST(FusedConv, WinogradNotForOtherShapes) {
  for (const ConvCase& cc :
       {ConvCase{"stride2", 32, 32, 1, 3, 2, 1, 1, 9, B, B, false, K::kRelu},
        ConvCase{"depthwise", 32, 32, 32, 3, 1, 1, 1, 9, B, B, false, K::kRelu},
        ConvCase{"pointwise", 32, 32, 1, 1, 1, 0, 1, 9, B, B, false, K::kRelu}}) {
    std::string impl = checkConvCase(cc, /*winograd=*/true);
    EXPECT_EQ(impl.find("wino"), std::string::npos) << cc.name << ": " << impl;
  }
}

/// No silent slow kernels: a 3x3 convolution with dilation 8 over 128
/// channels of 32x32 (pads 8), which oneDNN 2.6 runs in nChw16c only with
/// its reference loops (ref:any), runs a JIT kernel in a layout of its own
/// (the activations reordered in and out) and still matches the loops, its
/// residual sum and activation included. A dilation-6 conv on 4x4 hits the
/// same limit at 16 channels.
TEST(FusedConv, DilatedConvAvoidsTheReferenceImplementation) {
  for (const ConvCase& cc :
       {ConvCase{"dilation8", 128, 128, 1, 3, 1, 8, 8, 32, B, B, true, K::kRelu},
        ConvCase{"dilation6_small", 16, 16, 1, 3, 1, 6, 6, 4, B, B, false, K::kClip}}) {
    std::string impl = checkConvCase(cc, /*winograd=*/true);
    std::printf("%s: %s\n", cc.name, impl.c_str());
    EXPECT_FALSE(impl.starts_with("ref")) << cc.name << ": " << impl;
    EXPECT_NE(impl.find("reordered"), std::string::npos) << cc.name << ": " << impl;
  }
}

/// KeepsTheRequestedLayoutWhenItHasAJitKernel: the same conv with dilation
/// 2, which oneDNN runs in nChw16c with a JIT kernel, is not reordered.
TEST(FusedConv, KeepsTheRequestedLayoutWhenItHasAJitKernel) {
  ConvCase cc{"dilation2", 128, 128, 1, 3, 1, 2, 2, 32, B, B, true, K::kRelu};
  std::string impl = checkConvCase(cc, /*winograd=*/false);
  EXPECT_FALSE(impl.starts_with("ref")) << impl;
  EXPECT_EQ(impl.find("reordered"), std::string::npos) << impl;
}

// A plain 1-D conv (as 2-D with H = 1) of `c` channels to `o` with kernel
// `k`, stride `stride` and pads `pad` over `width` samples, a bias, a Relu
// and, with `sum`, a residual, in `groups` groups; runs it on two images
// against the loops and returns the implementation.
std::string check1dConv(int64_t c, int64_t o, int64_t k, int64_t stride, int64_t pad, int64_t width,
                        bool sum, int64_t groups = 1) {
  std::printf("seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  ConvSpec s;
  s.inChannels = c;
  s.outChannels = o;
  s.groups = groups;
  s.kernel = {1, k};
  s.strides = {1, stride};
  s.pads = {0, pad, 0, pad};
  s.weights = randomVector(static_cast<size_t>(o * c / groups * k), rng);
  s.bias = randomVector(static_cast<size_t>(o), rng);
  s.activations = {{Activation::Kind::kRelu}};
  s.sumResidual = sum;
  s.srcFormat = s.dstFormat = Format::kPlain;
  std::vector<int64_t> in{2, c, 1, width}, outDims;
  std::vector<float> x = randomVector(static_cast<size_t>(2 * c * width), rng);
  FusedConv conv(s);
  std::vector<float> residual = randomVector(formatBytes(conv.outputDims(in), P) / 4, rng);
  std::vector<float> want = naiveConv(s, in, x, residual, outDims);
  std::vector<float> scratch(conv.prepare(in) / 4 + 1), dst(want.size());
  conv.execute(in, x.data(), residual.data(), dst.data(), scratch.data());
  expectNear(dst, want, 1e-4f);
  return conv.implementation(in);
}

/// Convolutions oneDNN would run with its gemm-based implementation (which
/// packs the weights again on every call), an STFT written as a conv over
/// one channel and a padded 3-tap conv over a few frames, run as patches
/// times weights reordered once, and match the loops; with a residual to
/// sum they keep oneDNN's convolution.
TEST(FusedConv, GemmShapedConvsRunAsPatchesTimesWeights) {
  for (auto [c, o, k, stride, pad, width] :
       {std::array<int64_t, 6>{1, 33, 64, 16, 0, 160}, std::array<int64_t, 6>{9, 8, 3, 1, 1, 3}}) {
    std::string impl = check1dConv(c, o, k, stride, pad, width, false);
    std::printf("%s\n", impl.c_str());
    EXPECT_TRUE(impl.starts_with("im2col + matmul")) << impl;
  }
  std::string summed = check1dConv(1, 33, 64, 16, 0, 160, true);
  EXPECT_FALSE(summed.starts_with("im2col")) << summed;
}

/// A plain depthwise 1-D conv, which oneDNN offers only as one sgemm per
/// group, runs a JIT depthwise kernel in a layout of its own (activations
/// reordered in and out) and matches the loops.
TEST(FusedConv, GroupedConvAvoidsThePerGroupGemm) {
  std::string impl = check1dConv(24, 24, 5, 1, 2, 8, false, 24);
  std::printf("%s\n", impl.c_str());
  EXPECT_EQ(impl.find("gemm"), std::string::npos) << impl;
  EXPECT_NE(impl.find("reordered"), std::string::npos) << impl;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FusedConvTest,
    ::testing::Values(
        ConvCase{"stem", 3, 16, 1, 7, 2, 3, 1, 15, P, B, false, K::kRelu},
        ConvCase{"pointwise_sum", 32, 24, 1, 1, 1, 0, 1, 6, B, B, true, K::kRelu},
        ConvCase{"padded_channels", 24, 40, 1, 3, 1, 1, 1, 7, B, B, false, K::kClip},
        ConvCase{"depthwise", 24, 24, 24, 3, 2, 1, 1, 9, B, B, false, K::kHardSwish},
        ConvCase{"grouped_dilated", 16, 32, 4, 3, 1, 2, 2, 8, P, P, true, K::kLeakyRelu},
        ConvCase{"hardsigmoid", 16, 16, 1, 3, 1, 1, 1, 5, B, B, false, K::kHardSigmoid},
        ConvCase{"sigmoid_plain", 8, 8, 1, 3, 2, 0, 1, 9, P, P, false, K::kSigmoid},
        ConvCase{"bf16_sum", 32, 32, 1, 3, 1, 1, 1, 6, H, H, true, K::kRelu},
        ConvCase{"bf16_depthwise", 32, 32, 32, 3, 1, 1, 1, 6, H, H, false, K::kClip}),
    [](const ::testing::TestParamInfo<ConvCase>& p) { return std::string(p.param.name); });

/// Weights that do not match the channels are refused up front.
TEST(FusedConv, RefusesWeightsOfTheWrongSize) {
  ConvSpec s;
  s.inChannels = 4;
  s.outChannels = 4;
  s.weights.assign(3, 1.0f);
  EXPECT_THROW(FusedConv{s}, std::invalid_argument);
}

/// An input with other channels than the filters is refused, not run.
TEST(FusedConv, RefusesInputWithOtherChannels) {
  ConvSpec s;
  s.inChannels = 4;
  s.outChannels = 4;
  s.weights.assign(16, 1.0f);
  FusedConv conv(s);
  std::vector<int64_t> in{1, 3, 4, 4};
  EXPECT_THROW(conv.outputDims(in), std::invalid_argument);
}

/// MatMul by constant weights with bias, residual and GELU matches loops.
TEST(FusedMatMul, ConstantWeightsBiasSumGelu) {
  std::printf("seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  const int64_t batch = 2, m = 5, k = 12, n = 7;
  MatMulSpec s;
  s.weights = randomVector(k * n, rng);
  s.k = k;
  s.n = n;
  s.bias = randomVector(n, rng);
  s.sumResidual = true;
  s.activations = {{Activation::Kind::kGeluErf}};
  std::vector<int64_t> a{batch, m, k};
  std::vector<float> x = randomVector(batch * m * k, rng), r = randomVector(batch * m * n, rng);
  std::vector<float> want(batch * m * n);
  for (int64_t i = 0; i < batch * m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = s.bias[j];
      for (int64_t t = 0; t < k; ++t) acc += double(x[i * k + t]) * s.weights[t * n + j];
      want[i * n + j] = s.activations[0].apply(static_cast<float>(acc) + r[i * n + j]);
    }
  FusedMatMul mm(s);
  EXPECT_EQ(mm.outputDims(a, {}), (std::vector<int64_t>{batch, m, n}));
  std::vector<float> scratch(mm.prepare(a, {}) / 4 + 1), dst(batch * m * n);
  mm.execute(a, {}, x.data(), nullptr, r.data(), dst.data(), scratch.data());
  expectNear(dst, want, 1e-4f);
}

/// A batched MatMul of two run-time tensors, scaled, matches loops.
TEST(FusedMatMul, RuntimeOperandsScaled) {
  std::mt19937 rng(kSeed);
  const int64_t b = 3, m = 4, k = 6, n = 5;
  MatMulSpec s;
  s.activations = {{Activation::Kind::kLinear, 0.125f, 0.0f}};
  std::vector<int64_t> ad{1, b, m, k}, bd{1, b, k, n};
  std::vector<float> x = randomVector(b * m * k, rng), y = randomVector(b * k * n, rng);
  std::vector<float> want(b * m * n);
  for (int64_t q = 0; q < b; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t t = 0; t < k; ++t)
          acc += double(x[(q * m + i) * k + t]) * y[(q * k + t) * n + j];
        want[(q * m + i) * n + j] = 0.125f * static_cast<float>(acc);
      }
  FusedMatMul mm(s);
  std::vector<float> scratch(mm.prepare(ad, bd) / 4 + 1), dst(b * m * n);
  mm.execute(ad, bd, x.data(), y.data(), nullptr, dst.data(), scratch.data());
  expectNear(dst, want, 1e-4f);
}

/// The bf16 mode multiplies bf16 copies (constant and run-time B alike) and
/// stays within bf16 rounding of the f32 loops.
TEST(FusedMatMul, Bf16MatchesLoopsLoosely) {
  if (!hasNativeBf16()) GTEST_SKIP() << "the CPU has no native bf16 (AVX512-BF16 or AMX)";
  std::mt19937 rng(kSeed);
  const int64_t m = 8, k = 64, n = 16;
  std::vector<float> x = randomVector(m * k, rng), w = randomVector(k * n, rng);
  std::vector<float> want(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t t = 0; t < k; ++t) acc += double(x[i * k + t]) * w[t * n + j];
      want[i * n + j] = static_cast<float>(acc);
    }
  std::vector<int64_t> ad{m, k}, bd{k, n};
  for (bool constant : {true, false}) {
    MatMulSpec s;
    s.bf16 = true;
    if (constant) {
      s.weights = w;
      s.k = k;
      s.n = n;
    }
    FusedMatMul mm(s);
    std::span<const int64_t> b =
        constant ? std::span<const int64_t>() : std::span<const int64_t>(bd);
    std::vector<float> scratch(mm.prepare(ad, b) / 4 + 1), dst(m * n);
    mm.execute(ad, b, x.data(), w.data(), nullptr, dst.data(), scratch.data());
    // |error| <= 2^-8 relative per product, over k terms of magnitude <= 1.
    for (size_t i = 0; i < dst.size(); ++i) ASSERT_NEAR(dst[i], want[i], 0.25) << i;
  }
}

/// MatMul operands whose inner dims differ are refused.
TEST(FusedMatMul, RefusesMismatchedInnerDims) {
  MatMulSpec s;
  FusedMatMul mm(s);
  std::vector<int64_t> a{2, 3}, b{4, 5};
  EXPECT_THROW(mm.outputDims(a, b), std::invalid_argument);
}

/// MaxPool (ceil mode, padded) and GlobalAveragePool in blocked format match loops.
TEST(Pooling, MaxCeilAndGlobalAverage) {
  std::mt19937 rng(kSeed);
  std::vector<int64_t> in{1, 20, 7, 7};
  std::vector<float> x = randomVector(20 * 49, rng);
  PoolSpec max;
  max.kernel = {3, 3};
  max.strides = {2, 2};
  max.pads = {1, 1, 1, 1};
  max.ceilMode = true;
  max.format = Format::kBlocked16;
  Pooling pool(max);
  std::vector<int64_t> out = pool.outputDims(in);
  ASSERT_EQ(out, (std::vector<int64_t>{1, 20, 4, 4}));
  std::vector<float> want(20 * 16);
  for (int64_t c = 0; c < 20; ++c)
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        float m = -INFINITY;
        for (int64_t a = 0; a < 3; ++a)
          for (int64_t b = 0; b < 3; ++b) {
            int64_t y = i * 2 - 1 + a, z = j * 2 - 1 + b;
            if (y >= 0 && y < 7 && z >= 0 && z < 7) m = std::max(m, x[(c * 7 + y) * 7 + z]);
          }
        want[(c * 4 + i) * 4 + j] = m;
      }
  std::vector<float> scratch(pool.prepare(in) / 4 + 1);
  std::vector<float> src = toFormat(x, in, Format::kBlocked16);
  std::vector<float> dst(formatBytes(out, Format::kBlocked16) / 4);
  pool.execute(in, src.data(), dst.data(), scratch.data());
  expectNear(fromFormat(dst, out, Format::kBlocked16), want, 1e-6f);

  PoolSpec avg;
  avg.kind = PoolSpec::Kind::kAverageExcludePad;
  avg.global = true;
  avg.format = Format::kBlocked16;
  Pooling gap(avg);
  std::vector<int64_t> gout = gap.outputDims(in);
  std::vector<float> gwant(20);
  for (int64_t c = 0; c < 20; ++c) {
    double s = 0;
    for (int64_t i = 0; i < 49; ++i) s += x[c * 49 + i];
    gwant[c] = static_cast<float>(s / 49);
  }
  std::vector<float> gscratch(gap.prepare(in) / 4 + 1);
  std::vector<float> gdst(formatBytes(gout, Format::kBlocked16) / 4);
  gap.execute(in, src.data(), gdst.data(), gscratch.data());
  expectNear(fromFormat(gdst, gout, Format::kBlocked16), gwant, 1e-5f);
}

/// Softmax on the last axis and LayerNormalization match loops.
TEST(Normalization, SoftmaxAndLayerNorm) {
  std::mt19937 rng(kSeed);
  std::vector<int64_t> dims{3, 10};
  std::vector<float> x = randomVector(30, rng, -3, 3), want(30), dst(30);
  for (int r = 0; r < 3; ++r) {
    double mx = -1e30, sum = 0;
    for (int i = 0; i < 10; ++i) mx = std::max(mx, double(x[r * 10 + i]));
    for (int i = 0; i < 10; ++i) sum += std::exp(x[r * 10 + i] - mx);
    for (int i = 0; i < 10; ++i)
      want[r * 10 + i] = static_cast<float>(std::exp(x[r * 10 + i] - mx) / sum);
  }
  Softmax softmax(-1);
  std::vector<float> scratch(softmax.prepare(dims) / 4 + 1);
  softmax.execute(dims, x.data(), dst.data(), scratch.data());
  expectNear(dst, want, 1e-5f);

  std::vector<float> scale = randomVector(10, rng), shift = randomVector(10, rng);
  for (int r = 0; r < 3; ++r) {
    double mean = 0, var = 0;
    for (int i = 0; i < 10; ++i) mean += x[r * 10 + i];
    mean /= 10;
    for (int i = 0; i < 10; ++i) var += (x[r * 10 + i] - mean) * (x[r * 10 + i] - mean);
    var /= 10;
    for (int i = 0; i < 10; ++i)
      want[r * 10 + i] =
          static_cast<float>((x[r * 10 + i] - mean) / std::sqrt(var + 1e-5) * scale[i] + shift[i]);
  }
  LayerNorm norm(scale, shift, 1e-5f);
  std::vector<float> nscratch(norm.prepare(dims) / 4 + 1);
  norm.execute(dims, x.data(), dst.data(), nscratch.data());
  expectNear(dst, want, 1e-4f);
  std::vector<int64_t> wrong{3, 9};
  EXPECT_THROW(norm.prepare(wrong), std::invalid_argument);
}

/// An activation chain and a concat match loops.
TEST(EltwiseAndConcat, ChainAndJoin) {
  std::mt19937 rng(kSeed);
  std::vector<int64_t> dims{2, 9};
  std::vector<float> x = randomVector(18, rng, -4, 4), dst(18), want(18);
  std::vector<Activation> chain{{Activation::Kind::kLinear, 2.0f, 0.5f},
                                {Activation::Kind::kHardSigmoid, 0.2f, 0.5f},
                                {Activation::Kind::kTanh}};
  for (size_t i = 0; i < 18; ++i) {
    float v = x[i];
    for (const Activation& a : chain) v = a.apply(v);
    want[i] = v;
  }
  EltwiseChain eltwise(chain, Format::kPlain);
  eltwise.prepare(dims);
  eltwise.execute(dims, x.data(), dst.data());
  expectNear(dst, want, 1e-5f);

  std::vector<std::vector<int64_t>> parts{{2, 3}, {2, 1}};
  std::vector<float> a{1, 2, 3, 4, 5, 6}, b{7, 8}, joined(8);
  Concat concat(1);
  ASSERT_EQ(concat.outputDims(parts), (std::vector<int64_t>{2, 4}));
  std::vector<float> scratch(concat.prepare(parts) / 4 + 1);
  const float* srcs[] = {a.data(), b.data()};
  concat.execute(parts, srcs, joined.data(), scratch.data());
  EXPECT_EQ(joined, (std::vector<float>{1, 2, 3, 7, 4, 5, 6, 8}));
  std::vector<std::vector<int64_t>> bad{{2, 3}, {3, 1}};
  EXPECT_THROW(concat.outputDims(bad), std::invalid_argument);
}

/// The weights' change of variables keeps every difference w - zw: uint8
/// weights become int8 (right operand) or stay uint8 (left), int8 ones
/// shift by 128 to the left, and per-channel zero points that leave a
/// difference outside the operand's type are refused.
TEST(QuantizedGemm, WeightsKeepTheirDifferences) {
  const std::vector<std::byte> w{std::byte{0}, std::byte{255}, std::byte{128}, std::byte{7}};
  const std::vector<int32_t> zero{200};
  // [n = 2][k = 2] as the left operand, and as the right one ([k][n]).
  QuantizedWeights left = quantizedWeights(w, false, 2, 2, true, zero, true);
  QuantizedWeights right = quantizedWeights(w, false, 2, 2, true, zero, false);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t k = 0; k < 2; ++k) {
      const int32_t want = static_cast<int32_t>(w[static_cast<size_t>(c * 2 + k)]) - 200;
      EXPECT_EQ(static_cast<int32_t>(left.data[static_cast<size_t>(c * 2 + k)]) - left.zero, want);
      EXPECT_EQ(
          static_cast<int32_t>(static_cast<int8_t>(right.data[static_cast<size_t>(k * 2 + c)])) -
              right.zero,
          want);
    }
  const std::vector<int32_t> perChannel{0, 1};
  EXPECT_THROW(quantizedWeights(w, false, 2, 2, true, perChannel, false), std::invalid_argument);
  const std::vector<int32_t> fits{128, 120};
  QuantizedWeights ok = quantizedWeights(w, false, 2, 2, true, fits, true);
  EXPECT_EQ(static_cast<int32_t>(ok.data[3]) - ok.zero, 7 - 120);
}

/// Operands at the extremes of their types (weights 255 and 0, every input
/// quantized to 255) give the exact sums a saturating int16 step would
/// clip; the epilogue rounds as the Mul and Add nodes do.
TEST(QuantizedGemm, ExtremeOperandsAreExact) {
  if (!hasExactInt8Gemm()) GTEST_SKIP() << "no VNNI: the family declines these regions";
  constexpr int64_t kIn = 64, kOut = 2, kPixels = 5;
  std::vector<std::byte> w(static_cast<size_t>(kOut * kIn), std::byte{255});
  for (int64_t k = 0; k < kIn; ++k) w[static_cast<size_t>(kIn + k)] = std::byte{0};
  QuantizedGemmSpec spec;
  const std::vector<int32_t> zero{0};
  spec.weights = quantizedWeights(w, false, kIn, kOut, true, zero, true);
  spec.inChannels = kIn;
  spec.weightScale = {0.5f};
  spec.bias = {0.25f, -0.25f};
  QuantizedGemm gemm(spec);
  // x in [0, 2]: scale 2 / 255, zero point 0, every element quantized to 255.
  std::vector<int64_t> dims{1, kIn, 1, kPixels};
  std::vector<float> x(static_cast<size_t>(kIn * kPixels), 2.0f), y(kOut * kPixels);
  std::vector<std::byte> scratch(gemm.scratchBytes(dims));
  gemm.execute(dims, x.data(), y.data(), scratch.data());
  const float scale = (2.0f / 255.0f) * 0.5f;
  for (int64_t p = 0; p < kPixels; ++p) {
    EXPECT_EQ(y[static_cast<size_t>(p)], static_cast<float>(kIn * 255 * 255) * scale + 0.25f);
    EXPECT_EQ(y[static_cast<size_t>(kPixels + p)], 0.0f * scale - 0.25f);
  }
}

/// A Relu or a Clip around 0 on an nChw16c tensor whose channels are no
/// multiple of 16 runs over the padded buffer: the values clamp, NaN stays
/// NaN, and the padding channels stay 0. A Clip that would move 0 (here to
/// 1) leaves the padding alone.
TEST(ApplyOnHost, ClampsOverPaddedBlocksAndKeepsThePaddingZero) {
  const std::vector<int64_t> dims = {1, 24, 2, 3};  // blocks of 16: 24 + 8 padding
  const int64_t pixels = 6, padded = 2 * 16 * pixels;
  auto blocked = [&] {
    std::vector<float> v(static_cast<size_t>(padded), 0.0f);
    for (int64_t c = 0; c < 24; ++c)
      for (int64_t px = 0; px < pixels; ++px)
        v[static_cast<size_t>((c / 16) * pixels * 16 + px * 16 + c % 16)] =
            c == 5 && px == 0 ? NAN : static_cast<float>(c - 12) + 0.5f;
    return v;
  };
  for (const Activation& a : {Activation{K::kRelu}, Activation{K::kClip, -1.0f, 3.0f},
                              Activation{K::kClip, 1.0f, 6.0f}}) {
    SCOPED_TRACE(a.describe());
    std::vector<float> v = blocked();
    applyOnHost(std::span(&a, 1), dims, Format::kBlocked16, v.data());
    for (int64_t c = 0; c < 32; ++c)
      for (int64_t px = 0; px < pixels; ++px) {
        float got = v[static_cast<size_t>((c / 16) * pixels * 16 + px * 16 + c % 16)];
        if (c >= 24) {
          EXPECT_EQ(got, 0.0f) << "padding channel " << c;
        } else if (c == 5 && px == 0) {
          EXPECT_TRUE(std::isnan(got));
        } else {
          EXPECT_EQ(got, a.apply(static_cast<float>(c - 12) + 0.5f)) << "channel " << c;
        }
      }
  }
}

}  // namespace
}  // namespace subgraph::onednn
