//===- tests/runtime/reference_attention_test.cpp - Attention (opset 23) --===//
//
// The reference Attention kernel against a plain oracle written here (per
// head: scores in double, the masks, Softmax, x V): 3-D inputs with the
// heads as strides, 4-D ones with past keys and the causal mask, grouped
// heads, a float and a bool mask, fully masked rows (zeros, as ONNX
// specifies), the qk_matmul_output modes; and the errors a bad mask gives.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "runtime_test_util.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT
using ::testing::HasSubstr;

// [b, h, s, d] of a 4-D tensor in a flat vector.
struct Dims4 {
  int64_t b, h, s, d;
  int64_t at(int64_t i, int64_t j, int64_t k, int64_t l) const {
    return ((i * h + j) * s + k) * d + l;
  }
};

// 3-D [B, S, H * D] as 4-D [B, H, S, D].
std::vector<float> heads(const std::vector<float>& x, int64_t b, int64_t s, int64_t h, int64_t d) {
  std::vector<float> out(x.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t k = 0; k < s; ++k)
        for (int64_t l = 0; l < d; ++l)
          out[static_cast<size_t>(((i * h + j) * s + k) * d + l)] =
              x[static_cast<size_t>((i * s + k) * h * d + j * d + l)];
  return out;
}

// The oracle: 4-D q [B, Hq, Sq, D], k [B, Hkv, T, D], v [B, Hkv, T, Dv];
// `bias(b, h, i, j)` is added to the scores (-inf masks). Returns
// [B, Hq, Sq, Dv]; fully masked rows are zeros.
template <typename Bias>
std::vector<float> oracle(const std::vector<float>& q, Dims4 qd, const std::vector<float>& k,
                          Dims4 kd, const std::vector<float>& v, int64_t dv, double scale,
                          Bias bias) {
  std::vector<float> y(static_cast<size_t>(qd.b * qd.h * qd.s * dv));
  const int64_t group = qd.h / kd.h;
  for (int64_t b = 0; b < qd.b; ++b)
    for (int64_t h = 0; h < qd.h; ++h)
      for (int64_t i = 0; i < qd.s; ++i) {
        std::vector<double> s(static_cast<size_t>(kd.s));
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < kd.s; ++j) {
          double dot = 0;
          for (int64_t l = 0; l < qd.d; ++l)
            dot += static_cast<double>(q[static_cast<size_t>(qd.at(b, h, i, l))]) *
                   k[static_cast<size_t>(kd.at(b, h / group, j, l))];
          s[static_cast<size_t>(j)] = dot * scale + bias(b, h, i, j);
          m = std::max(m, s[static_cast<size_t>(j)]);
        }
        double sum = 0;
        for (double& x : s) sum += x = std::isinf(m) ? 0.0 : std::exp(x - m);
        for (int64_t l = 0; l < dv; ++l) {
          double acc = 0;
          for (int64_t j = 0; j < kd.s; ++j)
            acc += s[static_cast<size_t>(j)] *
                   v[static_cast<size_t>((((b * kd.h) + h / group) * kd.s + j) * dv + l)];
          y[static_cast<size_t>(((b * qd.h + h) * qd.s + i) * dv + l)] =
              static_cast<float>(sum > 0 ? acc / sum : 0.0);
        }
      }
  return y;
}

std::vector<float> uniform(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

double maxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, static_cast<double>(std::fabs(a[i] - b[i])));
  return m;
}

/// 3-D inputs [2, 3, 8] with 2 heads of 4 and a float mask per key: the
/// heads are read with strides and the result is [B, S, H * Dv].
TEST(ReferenceAttention, ThreeDInputsWithAFloatMaskMatchTheOracle) {
  std::mt19937 rng(7);
  auto session = compileText(R"(
    graph @g(%q: f32[2, 3, 8], %k: f32[2, 5, 8], %v: f32[2, 5, 8], %m: f32[2, 1, 1, 5]) {
      %y = Attention(%q, %k, %v, %m) {q_num_heads = 2, kv_num_heads = 2, scale = 0.3}
      return %y
    })");
  std::vector<float> q = uniform(48, rng), k = uniform(80, rng), v = uniform(80, rng),
                     m = uniform(10, rng);
  auto out = runOk(*session, {{"q", f32({2, 3, 8}, q)},
                              {"k", f32({2, 5, 8}, k)},
                              {"v", f32({2, 5, 8}, v)},
                              {"m", f32({2, 1, 1, 5}, m)}});
  ASSERT_EQ(out.size(), 1u);
  std::vector<float> want4 = oracle(
      heads(q, 2, 3, 2, 4), {2, 2, 3, 4}, heads(k, 2, 5, 2, 4), {2, 2, 5, 4}, heads(v, 2, 5, 2, 4),
      4, 0.3, [&](int64_t b, int64_t, int64_t, int64_t j) { return m[b * 5 + j]; });
  // The oracle's [B, H, S, Dv] merged back to [B, S, H * Dv].
  std::vector<float> want(want4.size());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t s = 0; s < 3; ++s)
        for (int64_t d = 0; d < 4; ++d)
          want[static_cast<size_t>((b * 3 + s) * 8 + h * 4 + d)] =
              want4[static_cast<size_t>(((b * 2 + h) * 3 + s) * 4 + d)];
  EXPECT_LT(maxDiff(values(out[0].tensor), want), 1e-5);
}

/// 4-D inputs with two past steps and is_causal: query i sees keys up to
/// i + 2; present_key is the past followed by K. The default scale is
/// 1 / sqrt(head size).
TEST(ReferenceAttention, CausalWithPastKeysMatchesTheOracle) {
  std::mt19937 rng(11);
  auto session = compileText(R"(
    graph @g(%q: f32[1, 2, 3, 4], %k: f32[1, 2, 3, 4], %v: f32[1, 2, 3, 2],
             %pk: f32[1, 2, 2, 4], %pv: f32[1, 2, 2, 2]) {
      %y, %kk, %vv = Attention(%q, %k, %v, _, %pk, %pv) {is_causal = 1}
      return %y, %kk, %vv
    })");
  std::vector<float> q = uniform(24, rng), k = uniform(24, rng), v = uniform(12, rng),
                     pk = uniform(16, rng), pv = uniform(8, rng);
  auto out = runOk(*session, {{"q", f32({1, 2, 3, 4}, q)},
                              {"k", f32({1, 2, 3, 4}, k)},
                              {"v", f32({1, 2, 3, 2}, v)},
                              {"pk", f32({1, 2, 2, 4}, pk)},
                              {"pv", f32({1, 2, 2, 2}, pv)}});
  ASSERT_EQ(out.size(), 3u);
  // present = concat(past, new) along the sequence, per head.
  std::vector<float> fullK, fullV;
  for (int64_t h = 0; h < 2; ++h) {
    fullK.insert(fullK.end(), pk.begin() + h * 8, pk.begin() + h * 8 + 8);
    fullK.insert(fullK.end(), k.begin() + h * 12, k.begin() + h * 12 + 12);
    fullV.insert(fullV.end(), pv.begin() + h * 4, pv.begin() + h * 4 + 4);
    fullV.insert(fullV.end(), v.begin() + h * 6, v.begin() + h * 6 + 6);
  }
  EXPECT_EQ(values(out[1].tensor), fullK);
  EXPECT_EQ(values(out[2].tensor), fullV);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<float> want =
      oracle(q, {1, 2, 3, 4}, fullK, {1, 2, 5, 4}, fullV, 2, 0.5,
             [&](int64_t, int64_t, int64_t i, int64_t j) { return j <= i + 2 ? 0.0 : -inf; });
  EXPECT_LT(maxDiff(values(out[0].tensor), want), 1e-5);
}

/// Grouped heads (4 query heads share 2 key/value heads) with a bool mask
/// whose second query row is all false: that row is zeros, not NaN, and
/// the others match the oracle.
TEST(ReferenceAttention, GroupedHeadsAndAFullyMaskedRow) {
  std::mt19937 rng(3);
  auto session = compileText(R"(
    graph @g(%q: f32[1, 4, 2, 4], %k: f32[1, 2, 3, 4], %v: f32[1, 2, 3, 4], %m: bool[2, 3]) {
      %y = Attention(%q, %k, %v, %m)
      return %y
    })");
  std::vector<float> q = uniform(32, rng), k = uniform(24, rng), v = uniform(24, rng);
  Tensor mask = Tensor::fromVector<uint8_t>(DataType::kBool, {2, 3}, {1, 0, 1, 0, 0, 0});
  auto out = runOk(*session, {{"q", f32({1, 4, 2, 4}, q)},
                              {"k", f32({1, 2, 3, 4}, k)},
                              {"v", f32({1, 2, 3, 4}, v)},
                              {"m", mask}});
  ASSERT_EQ(out.size(), 1u);
  const double inf = std::numeric_limits<double>::infinity();
  const bool allowed[2][3] = {{true, false, true}, {false, false, false}};
  std::vector<float> want =
      oracle(q, {1, 4, 2, 4}, k, {1, 2, 3, 4}, v, 4, 0.5,
             [&](int64_t, int64_t, int64_t i, int64_t j) { return allowed[i][j] ? 0.0 : -inf; });
  std::vector<float> got = values(out[0].tensor);
  EXPECT_LT(maxDiff(got, want), 1e-5);
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t d = 0; d < 4; ++d) EXPECT_EQ(got[static_cast<size_t>((h * 2 + 1) * 4 + d)], 0.0f);
}

/// qk_matmul_output_mode 3 gives the probabilities: each row sums to 1.
TEST(ReferenceAttention, ModeThreeOutputsTheProbabilities) {
  std::mt19937 rng(5);
  auto session = compileText(R"(
    graph @g(%q: f32[1, 1, 3, 2], %k: f32[1, 1, 4, 2], %v: f32[1, 1, 4, 2]) {
      %y, %kk, %vv, %p = Attention(%q, %k, %v) {qk_matmul_output_mode = 3}
      return %y, %p
    })");
  auto out = runOk(*session, {{"q", f32({1, 1, 3, 2}, uniform(6, rng))},
                              {"k", f32({1, 1, 4, 2}, uniform(8, rng))},
                              {"v", f32({1, 1, 4, 2}, uniform(8, rng))}});
  ASSERT_EQ(out.size(), 2u);
  std::vector<float> p = values(out[1].tensor);
  ASSERT_EQ(p.size(), 12u);
  for (int row = 0; row < 3; ++row)
    EXPECT_NEAR(p[row * 4] + p[row * 4 + 1] + p[row * 4 + 2] + p[row * 4 + 3], 1.0f, 1e-6f);
}

/// Errors: a mask longer than the keys, and 3-D inputs without heads, are
/// one line naming the node; nothing runs.
TEST(ReferenceAttention, BadMasksAndMissingHeadsAreErrors) {
  Session s;
  ASSERT_TRUE(s.load(parseGraphOrThrow(R"(
    graph @g(%q: f32[1, 1, 3, 2], %k: f32[1, 1, 4, 2], %v: f32[1, 1, 4, 2], %m: f32[1, 1, 3, 6]) {
      %y = Attention(%q, %k, %v, %m) @att
      return %y
    })"))
                  .isOk());
  Status st = s.compile();
  EXPECT_FALSE(st.isOk());
  EXPECT_THAT(st.message(), HasSubstr("attn_mask"));
  Session s2;
  Status loaded = s2.load(parseGraphOrThrow(R"(
    graph @g(%q: f32[1, 3, 4], %k: f32[1, 4, 4], %v: f32[1, 4, 4]) {
      %y = Attention(%q, %k, %v) @att
      return %y
    })"));
  Status compiled = loaded.isOk() ? s2.compile() : loaded;
  EXPECT_FALSE(compiled.isOk());
  EXPECT_THAT(compiled.message(), HasSubstr("q_num_heads"));
}

}  // namespace
}  // namespace subgraph::runtime
