//===- tests/runtime/reference_kernels_test.cpp - Reference kernels vs oracles -===//
//
// Randomized checks of the performance-minded reference kernels against
// naive oracles (direct convolution, triple-loop matrix products), over
// random shapes, groups, strides, dilations and paddings (the seed is
// printed), plus hand-checked cases for broadcasting, 16-bit floats and
// integer edge cases. The ONNX conformance suite covers the rest.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "runtime_test_util.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string dimsText(const std::vector<int64_t>& v) {
  std::string s = "f32[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

struct ConvCase {
  int64_t n, c, h, w, m, group, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

// Direct convolution, the definition.
std::vector<float> directConv(const ConvCase& k, const std::vector<float>& x,
                              const std::vector<float>& wt, const std::vector<float>& bias,
                              int64_t oh, int64_t ow) {
  std::vector<float> y(static_cast<size_t>(k.n * k.m * oh * ow));
  const int64_t cg = k.c / k.group, mg = k.m / k.group;
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t m = 0; m < k.m; ++m)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = bias[static_cast<size_t>(m)];
          int64_t g = m / mg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t a = 0; a < k.kh; ++a)
              for (int64_t b = 0; b < k.kw; ++b) {
                int64_t ih = i * k.sh - k.pt + a * k.dh, iw = j * k.sw - k.pl + b * k.dw;
                if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                acc += static_cast<double>(
                           x[static_cast<size_t>(((n * k.c + g * cg + c) * k.h + ih) * k.w + iw)]) *
                       wt[static_cast<size_t>(((m * cg + c) * k.kh + a) * k.kw + b)];
              }
          y[static_cast<size_t>(((n * k.m + m) * oh + i) * ow + j)] = static_cast<float>(acc);
        }
  return y;
}

/// Conv (im2col + blocked GEMM, and the pointwise path) equals the direct
/// definition over random geometries.
TEST(ReferenceKernelsTest, RandomizedConvMatchesDirectConvolution) {
  unsigned seed = std::random_device{}();
  std::printf("RandomizedConvMatchesDirectConvolution seed=%u\n", seed);
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<unsigned>(hi - lo + 1));
  };
  for (int round = 0; round < 40; ++round) {
    ConvCase k;
    k.group = pick(1, 3);
    k.c = k.group * pick(1, 4);
    k.m = k.group * pick(1, 5);
    k.n = pick(1, 2);
    k.kh = pick(1, 3);
    k.kw = pick(1, 3);
    k.sh = pick(1, 3);
    k.sw = pick(1, 3);
    k.dh = pick(1, 2);
    k.dw = pick(1, 2);
    k.pt = pick(0, 2);
    k.pl = pick(0, 2);
    k.pb = pick(0, 2);
    k.pr = pick(0, 2);
    k.h = (k.kh - 1) * k.dh + 1 + pick(0, 9);
    k.w = (k.kw - 1) * k.dw + 1 + pick(0, 9);
    const int64_t oh = (k.h + k.pt + k.pb - ((k.kh - 1) * k.dh + 1)) / k.sh + 1;
    const int64_t ow = (k.w + k.pl + k.pr - ((k.kw - 1) * k.dw + 1)) / k.sw + 1;
    Tensor x = randomF32({k.n, k.c, k.h, k.w}, rng);
    Tensor w = randomF32({k.m, k.c / k.group, k.kh, k.kw}, rng);
    Tensor b = randomF32({k.m}, rng);
    std::string text = "graph @g(%x: " + dimsText(x.dims()) + ", %w: " + dimsText(w.dims()) +
                       ", %b: " + dimsText(b.dims()) +
                       ") {\n  %y = Conv(%x, %w, %b) {group = " + std::to_string(k.group) +
                       ", strides = " + ints({k.sh, k.sw}) + ", dilations = " + ints({k.dh, k.dw}) +
                       ", pads = " + ints({k.pt, k.pl, k.pb, k.pr}) + "}\n  return %y\n}";
    auto session = compileText(text);
    auto out = runOk(*session, {{"x", x}, {"w", w}, {"b", b}});
    ASSERT_EQ(out.size(), 1u) << "seed=" << seed << "\n" << text;
    std::vector<float> want = directConv(k, values(x), values(w), values(b), oh, ow);
    ASSERT_EQ(out[0].tensor.dims(), (std::vector<int64_t>{k.n, k.m, oh, ow}))
        << "seed=" << seed << "\n"
        << text;
    std::vector<float> got = values(out[0].tensor);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4) << "seed=" << seed << " element " << i << "\n" << text;
  }
}

/// MatMul with broadcast batch dims and 1-d operands equals the triple
/// loop, across GEMM tile edges.
TEST(ReferenceKernelsTest, RandomizedMatMulMatchesNaive) {
  unsigned seed = std::random_device{}();
  std::printf("RandomizedMatMulMatchesNaive seed=%u\n", seed);
  std::mt19937 rng(seed);
  for (int round = 0; round < 20; ++round) {
    int64_t m = 1 + rng() % 140, k = 1 + rng() % 300, n = 1 + rng() % 300, batch = 1 + rng() % 3;
    bool broadcastB = rng() % 2;
    Tensor a = randomF32({batch, m, k}, rng);
    Tensor b = broadcastB ? randomF32({k, n}, rng) : randomF32({batch, k, n}, rng);
    auto session =
        compileText("graph @g(%a: " + dimsText(a.dims()) + ", %b: " + dimsText(b.dims()) +
                    ") {\n  %y = MatMul(%a, %b)\n  return %y\n}");
    auto out = runOk(*session, {{"a", a}, {"b", b}});
    ASSERT_EQ(out[0].tensor.dims(), (std::vector<int64_t>{batch, m, n})) << "seed=" << seed;
    auto av = a.data<float>(), bv = b.data<float>();
    std::vector<float> got = values(out[0].tensor);
    for (int64_t z = 0; z < batch; ++z)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t p = 0; p < k; ++p)
            acc += static_cast<double>(av[static_cast<size_t>((z * m + i) * k + p)]) *
                   bv[static_cast<size_t>(((broadcastB ? 0 : z) * k + p) * n + j)];
          ASSERT_NEAR(got[static_cast<size_t>((z * m + i) * n + j)], acc, 1e-3)
              << "seed=" << seed << " m=" << m << " k=" << k << " n=" << n;
        }
  }
}

//   %a [3,2] (transA) x %b [4,3] (transB) + %c [4] broadcast
/// Gemm applies transposes, alpha, beta and a row-broadcast bias.
TEST(ReferenceKernelsTest, GemmTransposesAndBias) {
  auto session = compileText(R"(
    graph @g(%a: f32[3, 2], %b: f32[4, 3], %c: f32[4]) {
      %y = Gemm(%a, %b, %c) {transA = 1, transB = 1, alpha = 2.0, beta = 0.5}
      return %y
    })");
  // op(A) = [[1,3,5],[2,4,6]], op(B) = B^T with B rows e0, e1, e2, ones.
  auto out = runOk(*session, {{"a", f32({3, 2}, {1, 2, 3, 4, 5, 6})},
                              {"b", f32({4, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1})},
                              {"c", f32({4}, {2, 4, 6, 8})}});
  EXPECT_THAT(values(out[0].tensor), ElementsAre(3, 8, 13, 22, 5, 10, 15, 28));
}

//   %x [2,3] + %b [3] ; %x * %s [2,1] ; Where(%x > 0, %x, 0)
/// Broadcasting along rows, columns and in Where.
TEST(ReferenceKernelsTest, BroadcastingBinaryAndWhere) {
  auto session = compileText(R"(
    graph @g(%x: f32[2, 3], %b: f32[3], %s: f32[2, 1]) {
      %zero = const f32[] [0.0]
      %sum = Add(%x, %b)
      %prod = Mul(%x, %s)
      %pos = Greater(%x, %zero)
      %w = Where(%pos, %x, %zero)
      return %sum, %prod, %w
    })");
  auto out = runOk(*session, {{"x", f32({2, 3}, {1, -2, 3, -4, 5, -6})},
                              {"b", f32({3}, {10, 20, 30})},
                              {"s", f32({2, 1}, {2, -1})}});
  EXPECT_THAT(values(out[0].tensor), ElementsAre(11, 18, 33, 6, 25, 24));
  EXPECT_THAT(values(out[1].tensor), ElementsAre(2, -4, 6, 4, -5, 6));
  EXPECT_THAT(values(out[2].tensor), ElementsAre(1, 0, 3, 0, 5, 0));
}

/// Shapes that do not broadcast fail at compile time with both shapes.
TEST(ReferenceKernelsTest, NonBroadcastableShapesFail) {
  Session s;
  ASSERT_TRUE(s.load(parseGraphOrThrow(R"(
    graph @g(%a: f32[2, 3], %b: f32[4]) {
      %y = Add(%a, %b) @add
      return %y
    })"))
                  .isOk());
  Status st = s.compile();
  EXPECT_EQ(st.message(), "Add node 'add': shapes [2, 3] and [4] do not broadcast");
}

//   f32 -> Cast(f16) -> Add -> Cast(f32);  f32 -> Cast(bf16) -> Mul -> Cast(f32)
/// 16-bit floats compute through float and round on store.
TEST(ReferenceKernelsTest, HalfAndBFloat16Arithmetic) {
  auto session = compileText(R"(
    graph @g(%x: f32[4]) {
      %h = Cast(%x) {to = 10}
      %hs = Add(%h, %h)
      %hf = Cast(%hs) {to = 1}
      %b = Cast(%x) {to = 16}
      %bm = Mul(%b, %b)
      %bf = Cast(%bm) {to = 1}
      return %hf, %bf
    })");
  auto out = runOk(*session, {{"x", f32({4}, {1.5f, -0.25f, 1000.0f, 65504.0f})}});
  EXPECT_THAT(values(out[0].tensor),
              ElementsAre(3.0f, -0.5f, 2000.0f, std::numeric_limits<float>::infinity()));
  EXPECT_THAT(values(out[1].tensor), ElementsAre(2.25f, 0.0625f, 999424.0f, 4294967296.0f));
}

//   i32: Div by zero, INT_MIN / -1, Add wrap-around; Cast of NaN and 1e20 to i32
/// Integer edge cases neither trap nor invoke undefined behaviour.
TEST(ReferenceKernelsTest, IntegerEdgeCasesAreSafe) {
  auto session = compileText(R"(
    graph @g(%a: i32[3], %b: i32[3], %f: f32[3]) {
      %q = Div(%a, %b)
      %s = Add(%a, %a)
      %c = Cast(%f) {to = 6}
      return %q, %s, %c
    })");
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  auto i32 = [](std::vector<int32_t> v) {
    return Tensor::fromVector<int32_t>(DataType::kInt32, {static_cast<int64_t>(v.size())}, v);
  };
  auto out = runOk(*session, {{"a", i32({7, kMin, -7})},
                              {"b", i32({0, -1, 2})},
                              {"f", f32({3}, {std::nanf(""), 1e20f, -2.7f})}});
  auto q = out[0].tensor.data<int32_t>(), s = out[1].tensor.data<int32_t>(),
       c = out[2].tensor.data<int32_t>();
  EXPECT_THAT(std::vector<int32_t>(q.begin(), q.end()), ElementsAre(0, kMin, -3));
  EXPECT_THAT(std::vector<int32_t>(s.begin(), s.end()), ElementsAre(14, 0, -14));
  EXPECT_THAT(std::vector<int32_t>(c.begin(), c.end()),
              ElementsAre(0, std::numeric_limits<int32_t>::max(), -2));
}

//   %x [1,1,4,4] -> MaxPool 3x3 /2 SAME_UPPER ceil ; AveragePool 2x2 pads 1 count_include_pad
/// Pool windows clip at the borders as ONNX specifies.
TEST(ReferenceKernelsTest, PoolingBorders) {
  auto session = compileText(R"(
    graph @g(%x: f32[1, 1, 4, 4]) {
      %m = MaxPool(%x) {kernel_shape = [3, 3], strides = [2, 2], auto_pad = "SAME_UPPER"}
      %a = AveragePool(%x) {kernel_shape = [2, 2], strides = [2, 2], pads = [1, 1, 1, 1], count_include_pad = 1}
      %e = AveragePool(%x) {kernel_shape = [2, 2], strides = [2, 2], pads = [1, 1, 1, 1]}
      return %m, %a, %e
    })");
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  auto out = runOk(*session, {{"x", f32({1, 1, 4, 4}, x)}});
  EXPECT_THAT(values(out[0].tensor), ElementsAre(10, 11, 14, 15));
  EXPECT_EQ(out[1].tensor.dims(), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_THAT(values(out[1].tensor),
              ElementsAre(0.0f, 0.75f, 0.75f, 3.0f, 7.5f, 4.5f, 3.0f, 6.75f, 3.75f));
  EXPECT_THAT(values(out[2].tensor),
              ElementsAre(0.0f, 1.5f, 3.0f, 6.0f, 7.5f, 9.0f, 12.0f, 13.5f, 15.0f));
}

/// An unknown auto_pad value is refused when the graph is loaded (the
/// verifier), before any kernel is made.
TEST(ReferenceKernelsTest, BadAttributeIsRefusedAtLoad) {
  Session s;
  Status st = s.load(parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 1, 4, 4]) {
      %m = MaxPool(%x) {kernel_shape = [2, 2], auto_pad = "SIDEWAYS"} @pool
      return %m
    })"));
  EXPECT_EQ(st.message(),
            "invalid graph: MaxPool node 'pool': auto_pad 'SIDEWAYS' is not one of NOTSET, "
            "SAME_UPPER, SAME_LOWER, VALID");
}

}  // namespace
}  // namespace subgraph::runtime
