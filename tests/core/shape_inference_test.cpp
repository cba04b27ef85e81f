//===- tests/core/shape_inference_test.cpp - Type and shape inference -----===//
//
// One or two tests per op family: each writes a tiny graph in the text
// format (sketched above it), runs inferShapes() once and checks the types
// that come out, including symbolic dims. Negative tests (Rejects...) check
// that inconsistent graphs fail with one line naming the node. Two
// randomized tests compare broadcasting and pooling sizes with naive
// oracles and print their seeds.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/shape_inference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "subgraph/ir/op_classes.h"
#include "subgraph/ir/text_format.h"

namespace subgraph {
namespace {

using ::testing::HasSubstr;

/// Parses `text` and runs inference, which must succeed.
std::unique_ptr<Graph> inferred(std::string_view text) {
  auto g = parseGraphOrThrow(text);
  Status s = inferShapes(*g);
  EXPECT_TRUE(s.isOk()) << s.message();
  return g;
}

/// The inferred type of value `name`, as text ("f32[N, 3]").
std::string typeOf(const Graph& g, std::string_view name) {
  const Value* v = g.findValue(name);
  return v ? v->type().toString() : "<no value " + std::string(name) + ">";
}

/// The error inferShapes() reports for `text` ("" if it succeeds).
std::string inferError(std::string_view text) {
  auto g = parseGraphOrThrow(text);
  Status s = inferShapes(*g);
  return s.isOk() ? std::string() : s.message();
}

//===--- Broadcasting ---------------------------------------------------===//

/// Numpy broadcasting over static, symbolic and unknown dims.
//   %x f32[2, 3] -> Relu -> %y f32[2, 3]
/// Complete types: every value has a dtype and a static shape. One
/// symbolic dim, one untyped value or one unknown dtype makes them
/// incomplete, so inference still has something to add.
TEST(HasCompleteTypes, NeedsADtypeAndAStaticShapeOnEveryValue) {
  EXPECT_TRUE(hasCompleteTypes(*parseGraphOrThrow(R"(
    graph @g(%x: f32[2, 3]) {
      %w = const f32[3] [1, 2, 3]
      %y: f32[2, 3] = Add(%x, %w)
      return %y
    })")));
  EXPECT_FALSE(hasCompleteTypes(*parseGraphOrThrow(R"(
    graph @g(%x: f32[N, 3]) {
      %y: f32[N, 3] = Relu(%x)
      return %y
    })")));
  EXPECT_FALSE(hasCompleteTypes(*parseGraphOrThrow(R"(
    graph @g(%x: f32[2, 3]) {
      %y = Relu(%x)
      return %y
    })")));
  EXPECT_FALSE(hasCompleteTypes(*parseGraphOrThrow(R"(
    graph @g(%x: f32) {
      %y: f32 = Relu(%x)
      return %y
    })")));
}

TEST(BroadcastShapes, FollowsNumpyRulesWithSymbols) {
  const Dim n = Dim::symbol("N"), m = Dim::symbol("M"), u;
  EXPECT_EQ(broadcastShapes({n, 1, 3}, {4, 1}), (Shape{n, 4, 3}));
  EXPECT_EQ(broadcastShapes({n}, {n}), (Shape{n}));
  EXPECT_EQ(broadcastShapes({n}, {1}), (Shape{n}));
  EXPECT_EQ(broadcastShapes({n}, {m}), (Shape{u}));
  EXPECT_EQ(broadcastShapes({u}, {5}), (Shape{5}));
  EXPECT_EQ(broadcastShapes({}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(broadcastShapes({3}, {4}), std::nullopt);
}

/// Randomized: static broadcasting agrees with a naive oracle.
TEST(BroadcastShapes, MatchesNaiveOracleOnRandomStaticShapes) {
  const unsigned seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::printf("BroadcastShapes seed %u\n", seed);
  std::mt19937 rng(seed);
  auto randomShape = [&] {
    Shape s(rng() % 4);
    for (Dim& d : s) d = Dim(static_cast<int64_t>(rng() % 3 + 1));
    return s;
  };
  for (int trial = 0; trial < 500; ++trial) {
    Shape a = randomShape(), b = randomShape();
    // Oracle: pad with 1s on the left, then each pair must match or hold a 1.
    size_t rank = std::max(a.size(), b.size());
    Shape pa(rank - a.size(), Dim(1)), pb(rank - b.size(), Dim(1));
    pa.insert(pa.end(), a.begin(), a.end());
    pb.insert(pb.end(), b.begin(), b.end());
    std::optional<Shape> expected = Shape();
    for (size_t i = 0; i < rank && expected; ++i) {
      int64_t x = pa[i].size(), y = pb[i].size();
      if (x != y && x != 1 && y != 1)
        expected.reset();
      else
        expected->push_back(Dim(std::max(x, y)));
    }
    EXPECT_EQ(broadcastShapes(a, b), expected)
        << shapeToString(a) << " vs " << shapeToString(b) << " (trial " << trial << ")";
  }
}

//===--- Elementwise ----------------------------------------------------===//

//   %x [N, 3, 1] --+
//   %y [4]      --+--> Add -> %z -> Relu -> %r
/// Add broadcasts symbolic dims; Relu keeps them.
TEST(InferElementwise, AddBroadcastsAndReluKeepsSymbolicDims) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 3, 1], %y: f32[4]) {
      %z = Add(%x, %y)
      %r = Relu(%z)
      return %r
    })");
  EXPECT_EQ(typeOf(*g, "z"), "f32[N, 3, 4]");
  EXPECT_EQ(typeOf(*g, "r"), "f32[N, 3, 4]");
}

//   %x [2, 3] + %y [4]
/// Incompatible static dims fail, naming the node and both shapes.
TEST(InferElementwise, RejectsAddWithIncompatibleShapes) {
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[2, 3], %y: f32[4]) {
      %z = Add(%x, %y) @add
      return %z
    })"),
            "Add node 'add': cannot broadcast [2, 3] with input 1 of shape [4]");
}

//   %a, %b -> Equal -> %e;  %e, %a, %b -> Where -> %w;  %a -> Cast(to i64) -> %c
/// Comparisons give bool; Where broadcasts all three inputs; Cast changes
/// only the element type; Max broadcasts any number of inputs.
TEST(InferElementwise, ComparisonWhereCastAndVariadic) {
  auto g = inferred(R"(
    graph @g(%a: f32[N, 1], %b: f32[5], %c3: f32[1, 1, 1]) {
      %e = Equal(%a, %b)
      %w = Where(%e, %a, %b)
      %c = Cast(%a) {to = 7}
      %m = Max(%a, %b, %c3)
      %n = Not(%e)
      return %w, %c, %m, %n
    })");
  EXPECT_EQ(typeOf(*g, "e"), "bool[N, 5]");
  EXPECT_EQ(typeOf(*g, "w"), "f32[N, 5]");
  EXPECT_EQ(typeOf(*g, "c"), "i64[N, 1]");
  EXPECT_EQ(typeOf(*g, "m"), "f32[1, N, 5]");
  EXPECT_EQ(typeOf(*g, "n"), "bool[N, 5]");
}

/// Cast to an element type number ONNX does not define fails.
TEST(InferElementwise, RejectsCastToUnknownType) {
  EXPECT_THAT(inferError(R"(
    graph @g(%a: f32[2]) {
      %c = Cast(%a) {to = 99} @cast
      return %c
    })"),
              HasSubstr("Cast node 'cast': attribute 'to' = 99 is not a supported element type"));
}

//   %x -> Dropout -> %y, %mask
/// Dropout is an identity at inference; its mask is bool of the same shape.
TEST(InferElementwise, DropoutIsIdentityWithBoolMask) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 8]) {
      %y, %mask = Dropout(%x)
      return %y, %mask
    })");
  EXPECT_EQ(typeOf(*g, "y"), "f32[N, 8]");
  EXPECT_EQ(typeOf(*g, "mask"), "bool[N, 8]");
}

//===--- Activations ----------------------------------------------------===//

//   %x [N, 16, 8, 8], %slope [16, 1, 1] -> PRelu;  %x -> Softmax(axis 1)
/// PRelu's slope broadcasts to X; a slope that would grow X fails.
TEST(InferActivation, PReluAndSoftmax) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 16, 8, 8], %s: f32[16, 1, 1]) {
      %y = PRelu(%x, %s)
      %z = Softmax(%y) {axis = 1}
      %c = Clip(%z)
      return %c
    })");
  EXPECT_EQ(typeOf(*g, "y"), "f32[N, 16, 8, 8]");
  EXPECT_EQ(typeOf(*g, "c"), "f32[N, 16, 8, 8]");
  EXPECT_THAT(inferError(R"(
    graph @g(%x: f32[1, 4], %s: f32[2, 4]) {
      %y = PRelu(%x, %s) @prelu
      return %y
    })"),
              HasSubstr("PRelu node 'prelu': slope of shape [2, 4] does not broadcast to X"));
}

/// Softmax's axis must exist.
TEST(InferActivation, RejectsSoftmaxAxisOutOfRange) {
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[2, 3]) {
      %y = Softmax(%x) {axis = 2} @sm
      return %y
    })"),
            "Softmax node 'sm': axis 2 is out of range for rank 2");
}

//===--- Convolution and pooling ----------------------------------------===//

//   %x [1, 3, 224, 224] -> Conv(64x3x7x7, stride 2, pads 3) -> %y
/// The ResNet stem: explicit pads and strides.
TEST(InferConv, ExplicitPadsAndStrides) {
  auto g = inferred(R"(
    graph @g(%x: f32[1, 3, 224, 224]) {
      %w = const f32[64, 3, 7, 7] splat(0.1)
      %b = const f32[64] splat(0.0)
      %y = Conv(%x, %w, %b) {pads = [3, 3, 3, 3], strides = [2, 2]}
      return %y
    })");
  EXPECT_EQ(typeOf(*g, "y"), "f32[1, 64, 112, 112]");
}

//   %x [N, 32, H, W] -> Conv(3x3, pads 1) -> %same;  Conv(SAME_UPPER, s2) -> %up;
//   Conv(VALID, dilation 2) -> %valid;  depthwise (group 32) -> %dw
/// auto_pad, dilations and groups; "same" convolutions keep symbolic dims.
TEST(InferConv, AutoPadDilationsGroupsAndSymbols) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 32, H, W], %s: f32[1, 32, 225, 225]) {
      %w = const f32[16, 32, 3, 3] splat(0.1)
      %dww = const f32[32, 1, 3, 3] splat(0.1)
      %same = Conv(%x, %w) {pads = [1, 1, 1, 1]}
      %up = Conv(%s, %w) {auto_pad = "SAME_UPPER", strides = [2, 2]}
      %valid = Conv(%s, %w) {auto_pad = "VALID", dilations = [2, 2]}
      %dw = Conv(%x, %dww) {group = 32, pads = [1, 1, 1, 1]}
      %strided = Conv(%x, %w) {strides = [2, 2]}
      return %same, %up, %valid, %dw, %strided
    })");
  EXPECT_EQ(typeOf(*g, "same"), "f32[N, 16, H, W]");
  EXPECT_EQ(typeOf(*g, "up"), "f32[1, 16, 113, 113]");
  EXPECT_EQ(typeOf(*g, "valid"), "f32[1, 16, 221, 221]");
  EXPECT_EQ(typeOf(*g, "dw"), "f32[N, 32, H, W]");
  EXPECT_EQ(typeOf(*g, "strided"), "f32[N, 16, ?, ?]");
}

//   %x [1, 3, 8, 8], %w [8, 4, 3, 3] -> Conv
/// Input channels must equal W's channels times group.
TEST(InferConv, RejectsConvWithMismatchedChannels) {
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[1, 3, 8, 8]) {
      %w = const f32[8, 4, 3, 3] splat(0.1)
      %y = Conv(%x, %w) @conv1
      return %y
    })"),
            "Conv node 'conv1': X has 3 channels but W [8, 4, 3, 3] with group 1 expects 4");
}

/// A kernel larger than the padded input, a wrong-length attribute and a
/// bias of the wrong size all fail.
TEST(InferConv, RejectsBadWindowsAndBias) {
  EXPECT_THAT(inferError(R"(
    graph @g(%x: f32[1, 3, 2, 2]) {
      %w = const f32[8, 3, 3, 3] splat(0.1)
      %y = Conv(%x, %w) @c
      return %y
    })"),
              HasSubstr("Conv node 'c': spatial dim 0 of size 2 (padded 2) is smaller than the "
                        "effective kernel 3"));
  EXPECT_THAT(inferError(R"(
    graph @g(%x: f32[1, 3, 8, 8]) {
      %w = const f32[8, 3, 3, 3] splat(0.1)
      %y = Conv(%x, %w) {pads = [1, 1]} @c
      return %y
    })"),
              HasSubstr("pads [1, 1] has 2 entries, expected 4 for 2 spatial dims"));
  EXPECT_THAT(inferError(R"(
    graph @g(%x: f32[1, 3, 8, 8]) {
      %w = const f32[8, 3, 3, 3] splat(0.1)
      %b = const f32[4] splat(0.0)
      %y = Conv(%x, %w, %b) @c
      return %y
    })"),
              HasSubstr("bias B [4] does not match the 8 output channels"));
}

//   %x [1, 16, 14, 14] -> ConvTranspose(16x8x4x4, stride 2, pads 1) -> %y
/// Transposed convolution: stride, pads, output_padding, output_shape.
TEST(InferConv, ConvTransposeOutputSizes) {
  auto g = inferred(R"(
    graph @g(%x: f32[1, 16, 14, 14]) {
      %w = const f32[16, 8, 4, 4] splat(0.1)
      %y = ConvTranspose(%x, %w) {pads = [1, 1, 1, 1], strides = [2, 2]}
      %p = ConvTranspose(%x, %w) {output_padding = [1, 1], strides = [2, 2]}
      %s = ConvTranspose(%x, %w) {output_shape = [30, 31], strides = [2, 2]}
      %g2 = ConvTranspose(%x, %w) {group = 2, auto_pad = "SAME_UPPER", strides = [2, 2]}
      return %y, %p, %s, %g2
    })");
  EXPECT_EQ(typeOf(*g, "y"), "f32[1, 8, 28, 28]");
  EXPECT_EQ(typeOf(*g, "p"), "f32[1, 8, 31, 31]");
  EXPECT_EQ(typeOf(*g, "s"), "f32[1, 8, 30, 31]");
  EXPECT_EQ(typeOf(*g, "g2"), "f32[1, 16, 28, 28]");
}

//   %x [N, 64, 112, 112] -> MaxPool(3x3, s2, p1) -> %y, %idx;  -> GlobalAveragePool
/// Pooling keeps N and C; MaxPool's Indices are i64; global pools give 1s.
TEST(InferPool, MaxAverageAndGlobalPools) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 64, 112, 112], %t: f32[1, 1, 3, 3]) {
      %y, %idx = MaxPool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}
      %a = AveragePool(%x) {kernel_shape = [2, 2], strides = [2, 2]}
      %c = MaxPool(%t) {ceil_mode = 1, kernel_shape = [1, 1], pads = [0, 0, 1, 1], strides = [2, 2]}
      %gap = GlobalAveragePool(%x)
      %gmp = GlobalMaxPool(%x)
      return %y, %idx, %a, %c, %gap, %gmp
    })");
  EXPECT_EQ(typeOf(*g, "y"), "f32[N, 64, 56, 56]");
  EXPECT_EQ(typeOf(*g, "idx"), "i64[N, 64, 56, 56]");
  EXPECT_EQ(typeOf(*g, "a"), "f32[N, 64, 56, 56]");
  // ceil_mode would give 3, but the last window starts in the end padding.
  EXPECT_EQ(typeOf(*g, "c"), "f32[1, 1, 2, 2]");
  EXPECT_EQ(typeOf(*g, "gap"), "f32[N, 64, 1, 1]");
  EXPECT_EQ(typeOf(*g, "gmp"), "f32[N, 64, 1, 1]");
}

/// Randomized: pooled sizes equal the number of window positions a naive
/// enumeration finds (floor and ceil modes, pads, strides, dilations).
TEST(InferPool, MatchesWindowEnumerationOnRandomSizes) {
  const unsigned seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::printf("InferPool seed %u\n", seed);
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t in = rng() % 12 + 1, k = rng() % 4 + 1, s = rng() % 3 + 1, d = rng() % 2 + 1;
    const int64_t pb = rng() % k, pe = rng() % k;
    const bool ceilMode = rng() % 2;
    const int64_t effK = (k - 1) * d + 1;
    if (in + pb + pe < effK) continue;
    // Oracle: windows start at -pb + i * s. A window counts if it fits in
    // the padded input; in ceil mode also if it overhangs the padded end by
    // less than one stride and starts inside the input or begin padding.
    int64_t expected = 0;
    for (int64_t start = -pb;; start += s) {
      bool fits = start + effK <= in + pe;
      bool ceilExtra = ceilMode && start + effK - (in + pe) < s && start < in;
      if (!fits && !ceilExtra) break;
      ++expected;
    }
    Graph g;
    Value* x = g.addInput("x", TensorType(DataType::kFloat32, {1, 1, in}));
    MaxPoolNode* pool = createMaxPool(g, x,
                                      {.ceilMode = ceilMode ? 1 : 0,
                                       .dilations = std::vector<int64_t>{d},
                                       .kernelShape = std::vector<int64_t>{k},
                                       .pads = std::vector<int64_t>{pb, pe},
                                       .strides = std::vector<int64_t>{s}});
    EXPECT_EQ(pool->getY()->type().shape->back(), Dim(expected))
        << "in " << in << " k " << k << " s " << s << " d " << d << " pads " << pb << "," << pe
        << " ceil " << ceilMode << " (trial " << trial << ")";
  }
}

//===--- Normalization --------------------------------------------------===//

//   %x [N, 64, H, W] -> BatchNormalization(scale, B, mean, var [64]) -> %y
//   %t [N, S, 768] -> LayerNormalization -> %ln, %mean, %inv
/// Normalizations keep X's type; LayerNorm's statistics keep leading dims.
TEST(InferNormalization, BatchAndLayerNorm) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 64, H, W], %t: f16[N, S, 768]) {
      %c = const f32[64] splat(1.0)
      %y = BatchNormalization(%x, %c, %c, %c, %c)
      %gamma = const f16[768] splat(1.0)
      %ln, %mean, %inv = LayerNormalization(%t, %gamma)
      %ln2, %mean2 = LayerNormalization(%t, %gamma) {axis = 1}
      return %y, %ln, %mean, %inv, %mean2
    })");
  EXPECT_EQ(typeOf(*g, "y"), "f32[N, 64, H, W]");
  EXPECT_EQ(typeOf(*g, "ln"), "f16[N, S, 768]");
  EXPECT_EQ(typeOf(*g, "mean"), "f32[N, S, 1]");
  EXPECT_EQ(typeOf(*g, "inv"), "f32[N, S, 1]");
  EXPECT_EQ(typeOf(*g, "mean2"), "f32[N, 1, 1]");
}

/// BatchNormalization's per-channel operands must match C.
TEST(InferNormalization, RejectsBatchNormWithWrongScaleSize) {
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[1, 64, 8, 8]) {
      %c = const f32[64] splat(1.0)
      %s = const f32[32] splat(1.0)
      %y = BatchNormalization(%x, %s, %c, %c, %c) @bn
      return %y
    })"),
            "BatchNormalization node 'bn': scale [32] does not match the 64 channels of X");
}

//===--- Matrix products ------------------------------------------------===//

//   [N, S, 64] x [64, 128];  [3] x [3, 4];  [2, 3, 4] x [4];  [2, 1, 3, 4] x [5, 4, 6]
/// MatMul: batch broadcasting and the 1-D cases.
TEST(InferLinalg, MatMulBatchesAndVectors) {
  auto g = inferred(R"(
    graph @g(%a: f32[N, S, 64], %b: f32[64, 128], %v: f32[3], %m: f32[3, 4],
             %t: f32[2, 3, 4], %u: f32[4], %p: f32[2, 1, 3, 4], %q: f32[5, 4, 6]) {
      %y = MatMul(%a, %b)
      %vm = MatMul(%v, %m)
      %tu = MatMul(%t, %u)
      %pq = MatMul(%p, %q)
      %vv = MatMul(%u, %u)
      return %y, %vm, %tu, %pq, %vv
    })");
  EXPECT_EQ(typeOf(*g, "y"), "f32[N, S, 128]");
  EXPECT_EQ(typeOf(*g, "vm"), "f32[4]");
  EXPECT_EQ(typeOf(*g, "tu"), "f32[2, 3]");
  EXPECT_EQ(typeOf(*g, "pq"), "f32[2, 5, 3, 6]");
  EXPECT_EQ(typeOf(*g, "vv"), "f32[]");
}

/// The contracted dims of MatMul must agree.
TEST(InferLinalg, RejectsMatMulWithMismatchedInnerDims) {
  EXPECT_EQ(inferError(R"(
    graph @g(%a: f32[2, 3], %b: f32[4, 5]) {
      %y = MatMul(%a, %b) @mm
      return %y
    })"),
            "MatMul node 'mm': inner dims differ: A [2, 3] and B [4, 5]");
}

//   %a [N, 512] x %w [1000, 512]^T + %c [1000] -> Gemm(transB) -> %y
/// Gemm transposes and broadcasts C; rank-3 operands fail.
TEST(InferLinalg, GemmTransposesAndChecksRanks) {
  auto g = inferred(R"(
    graph @g(%a: f32[N, 512]) {
      %w = const f32[1000, 512] splat(0.1)
      %c = const f32[1000] splat(0.0)
      %y = Gemm(%a, %w, %c) {transB = 1}
      %t = Gemm(%w, %w) {transA = 1}
      return %y, %t
    })");
  EXPECT_EQ(typeOf(*g, "y"), "f32[N, 1000]");
  EXPECT_EQ(typeOf(*g, "t"), "f32[512, 512]");
  EXPECT_EQ(inferError(R"(
    graph @g(%a: f32[1, 2, 3], %b: f32[3, 4]) {
      %y = Gemm(%a, %b) @gemm
      return %y
    })"),
            "Gemm node 'gemm': A must be 2-D, got [1, 2, 3]");
}

//===--- Reductions -----------------------------------------------------===//

//   %x [N, 8, 16] -> ReduceMean(axes attr [-1]) ; ReduceSum(axes input [1], keepdims 0)
/// Axes as attribute (old opsets) and as input (new ones); all axes by
/// default; non-constant axes leave dims unknown.
TEST(InferReduce, AxesAsAttributeOrInput) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 8, 16], %dyn: i64[1]) {
      %axes = const i64[1] [1]
      %m = ReduceMean(%x) {axes = [-1]}
      %s = ReduceSum(%x, %axes) {keepdims = 0}
      %all = ReduceMax(%x) {keepdims = 0}
      %noop = ReduceSum(%x) {noop_with_empty_axes = 1}
      %d = ReduceMean(%x, %dyn)
      %d0 = ReduceMean(%x, %dyn) {keepdims = 0}
      return %m, %s, %all, %noop, %d, %d0
    })");
  EXPECT_EQ(typeOf(*g, "m"), "f32[N, 8, 1]");
  EXPECT_EQ(typeOf(*g, "s"), "f32[N, 16]");
  EXPECT_EQ(typeOf(*g, "all"), "f32[]");
  EXPECT_EQ(typeOf(*g, "noop"), "f32[N, 8, 16]");
  EXPECT_EQ(typeOf(*g, "d"), "f32[?, ?, ?]");
  EXPECT_EQ(typeOf(*g, "d0"), "f32");
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[2, 3]) {
      %m = ReduceMean(%x) {axes = [0, -2]} @r
      return %m
    })"),
            "ReduceMean node 'r': axes [0, -2] repeats an axis");
}

//   %x [N, 8, 16] -> ArgMax(axis 1) ; ArgMin(axis -1, keepdims 0)
/// ArgMax/ArgMin reduce one axis to i64 indices.
TEST(InferReduce, ArgMaxAndArgMin) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 8, 16]) {
      %a = ArgMax(%x) {axis = 1}
      %b = ArgMin(%x) {axis = -1, keepdims = 0}
      return %a, %b
    })");
  EXPECT_EQ(typeOf(*g, "a"), "i64[N, 1, 16]");
  EXPECT_EQ(typeOf(*g, "b"), "i64[N, 8]");
}

//===--- Shape manipulation ---------------------------------------------===//

//   %x [2, 3, 4] -> Reshape([0, -1]);  %n [N, 3, 4] -> Reshape([0, -1]);  -> Reshape(%dyn)
/// Reshape: 0 copies, -1 is inferred (symbols cancel), a non-constant shape
/// of known length gives the rank.
TEST(InferShape, ReshapeZeroAndMinusOne) {
  auto g = inferred(R"(
    graph @g(%x: f32[2, 3, 4], %n: f32[N, 3, 4], %m: f32[N, 12], %dyn: i64[3]) {
      %s = const i64[2] [0, -1]
      %s2 = const i64[3] [-1, 3, 4]
      %a = Reshape(%x, %s)
      %b = Reshape(%n, %s)
      %c = Reshape(%m, %s2)
      %d = Reshape(%x, %dyn)
      return %a, %b, %c, %d
    })");
  EXPECT_EQ(typeOf(*g, "a"), "f32[2, 12]");
  EXPECT_EQ(typeOf(*g, "b"), "f32[N, 12]");
  EXPECT_EQ(typeOf(*g, "c"), "f32[N, 3, 4]");
  EXPECT_EQ(typeOf(*g, "d"), "f32[?, ?, ?]");
}

//   %x [N, 3, 4] -> Shape -> Gather(0) -> Unsqueeze(0) --+
//                                        const [-1]    --+--> Concat -> Reshape(%x, .)
//   (and the same with Gather(1) * Gather(2) in place of -1)
/// The exporter's flatten idiom keeps N through tracked shape values.
TEST(InferShape, ReshapeFollowsShapeArithmetic) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 3, 4]) {
      %shape = Shape(%x)
      %zero = const i64[] [0]
      %n = Gather(%shape, %zero)
      %axes = const i64[1] [0]
      %n1 = Unsqueeze(%n, %axes)
      %minus = const i64[1] [-1]
      %target = Concat(%n1, %minus) {axis = 0}
      %y = Reshape(%x, %target)
      %tail = Slice(%shape, %axes, %minus)
      %i1 = const i64[] [1]
      %i2 = const i64[] [2]
      %d1 = Gather(%shape, %i1)
      %d2 = Gather(%shape, %i2)
      %prod = Mul(%d1, %d2)
      %p1 = Unsqueeze(%prod) {axes = [0]}
      %t2 = Concat(%n1, %p1) {axis = 0}
      %z = Reshape(%x, %t2)
      return %y, %tail, %z
    })");
  EXPECT_EQ(typeOf(*g, "shape"), "i64[3]");
  EXPECT_EQ(typeOf(*g, "n"), "i64[]");
  EXPECT_EQ(typeOf(*g, "target"), "i64[2]");
  EXPECT_EQ(typeOf(*g, "y"), "f32[N, 12]");
  EXPECT_EQ(typeOf(*g, "tail"), "i64[2]");
  EXPECT_EQ(typeOf(*g, "z"), "f32[N, 12]");
}

/// A constant target with the wrong element count fails.
TEST(InferShape, RejectsReshapeWithWrongElementCount) {
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[2, 3]) {
      %s = const i64[2] [4, 2]
      %y = Reshape(%x, %s) @reshape
      return %y
    })"),
            "Reshape node 'reshape': cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)");
  EXPECT_THAT(inferError(R"(
    graph @g(%x: f32[2, 3]) {
      %s = const i64[2] [4, -1]
      %y = Reshape(%x, %s) @reshape
      return %y
    })"),
              HasSubstr("cannot reshape [2, 3] (6 elements) to [4, ?]"));
}

//   %x [N, 3, 4, 5] -> Flatten(1) ; Flatten(0) ; Transpose([0, 2, 3, 1]) ; Transpose()
/// Flatten multiplies dims around the axis; Transpose permutes (reverses
/// without perm).
TEST(InferShape, FlattenAndTranspose) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 3, 4, 5]) {
      %f1 = Flatten(%x)
      %f0 = Flatten(%x) {axis = 0}
      %f4 = Flatten(%x) {axis = -1}
      %t = Transpose(%x) {perm = [0, 2, 3, 1]}
      %r = Transpose(%x)
      return %f1, %f0, %f4, %t, %r
    })");
  EXPECT_EQ(typeOf(*g, "f1"), "f32[N, 60]");
  EXPECT_EQ(typeOf(*g, "f0"), "f32[1, ?]");
  EXPECT_EQ(typeOf(*g, "f4"), "f32[?, 5]");
  EXPECT_EQ(typeOf(*g, "t"), "f32[N, 4, 5, 3]");
  EXPECT_EQ(typeOf(*g, "r"), "f32[5, 4, 3, N]");
}

/// perm must be a permutation of the input's axes.
TEST(InferShape, RejectsTransposeWithBadPerm) {
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[2, 3, 4]) {
      %t = Transpose(%x) {perm = [0, 0, 1]} @t
      return %t
    })"),
            "Transpose node 't': perm [0, 0, 1] is not a permutation of 0..2");
}

//   %x [N, 1, 3, 1] -> Squeeze(axes attr [1]) ; Squeeze(axes input [-1]) ; Unsqueeze(...)
/// Squeeze and Unsqueeze in both the attribute and the input form.
TEST(InferShape, SqueezeAndUnsqueezeBothForms) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 1, 3, 1], %s: f32[1, 3, 1]) {
      %last = const i64[1] [-1]
      %a = Squeeze(%x) {axes = [1]}
      %b = Squeeze(%x, %last)
      %c = Squeeze(%s)
      %d = Squeeze(%x)
      %u = Unsqueeze(%s) {axes = [0, -1]}
      %v = Unsqueeze(%s, %last)
      return %a, %b, %c, %d, %u, %v
    })");
  EXPECT_EQ(typeOf(*g, "a"), "f32[N, 3, 1]");
  EXPECT_EQ(typeOf(*g, "b"), "f32[N, 1, 3]");
  EXPECT_EQ(typeOf(*g, "c"), "f32[3]");
  EXPECT_EQ(typeOf(*g, "d"), "f32");  // N might be 1: rank unknown
  EXPECT_EQ(typeOf(*g, "u"), "f32[1, 1, 3, 1, 1]");
  EXPECT_EQ(typeOf(*g, "v"), "f32[1, 3, 1, 1]");
}

/// Squeezing a dim that is not 1 fails.
TEST(InferShape, RejectsSqueezeOfNonUnitDim) {
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[2, 3]) {
      %y = Squeeze(%x) {axes = [1]} @sq
      return %y
    })"),
            "Squeeze node 'sq': cannot squeeze axis 1 of size 3 in [2, 3]");
}

//   %x [3, 1] -> Expand([2, 1, 6]) ; Tile([2, 3])
/// Expand broadcasts to the target; Tile multiplies dims.
TEST(InferShape, ExpandAndTile) {
  auto g = inferred(R"(
    graph @g(%x: f32[3, 1], %n: f32[N, 2]) {
      %shape = const i64[3] [2, 1, 6]
      %e = Expand(%x, %shape)
      %reps = const i64[2] [2, 3]
      %t = Tile(%x, %reps)
      %tn = Tile(%n, %reps)
      return %e, %t, %tn
    })");
  EXPECT_EQ(typeOf(*g, "e"), "f32[2, 3, 6]");
  EXPECT_EQ(typeOf(*g, "t"), "f32[6, 3]");
  EXPECT_EQ(typeOf(*g, "tn"), "f32[?, 6]");
}

//   %x [N, 16, H, W] -> DepthToSpace(2) -> [N, 4, ?, ?];  %s [1, 3, 8, 8] -> SpaceToDepth(2)
/// DepthToSpace and SpaceToDepth move blocks between channels and space.
TEST(InferShape, DepthToSpaceAndSpaceToDepth) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 16, H, W], %s: f32[1, 3, 8, 8]) {
      %d = DepthToSpace(%x) {blocksize = 2}
      %e = SpaceToDepth(%s) {blocksize = 2}
      return %d, %e
    })");
  EXPECT_EQ(typeOf(*g, "d"), "f32[N, 4, ?, ?]");
  EXPECT_EQ(typeOf(*g, "e"), "f32[1, 12, 4, 4]");
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[1, 6, 2, 2]) {
      %d = DepthToSpace(%x) {blocksize = 2} @d2s
      return %d
    })"),
            "DepthToSpace node 'd2s': 6 channels do not divide by blocksize^2 = 4");
}

//===--- Indexing -------------------------------------------------------===//

//   %a [N, 2, 4], %b [N, 3, 4] -> Concat(axis 1) -> %c
/// Concat sums the axis and unifies the rest; mismatches fail.
TEST(InferIndexing, ConcatSumsAxis) {
  auto g = inferred(R"(
    graph @g(%a: f32[N, 2, 4], %b: f32[N, 3, 4], %c2: f32[?, 3, 4]) {
      %c = Concat(%a, %b) {axis = 1}
      %d = Concat(%a, %c2) {axis = -2}
      return %c, %d
    })");
  EXPECT_EQ(typeOf(*g, "c"), "f32[N, 5, 4]");
  EXPECT_EQ(typeOf(*g, "d"), "f32[N, 5, 4]");
  EXPECT_EQ(inferError(R"(
    graph @g(%a: f32[1, 2, 4], %b: f32[1, 3, 5]) {
      %c = Concat(%a, %b) {axis = 1} @cat
      return %c
    })"),
            "Concat node 'cat': input 1 [1, 3, 5] differs from input 0 [1, 2, 4] in dim 2");
}

//   %x [N, 6, 10] -> Split(split attr [2, 4]) ; Split(split input) ; Split(3 equal) ; num_outputs
/// Split sizes from the attribute, the input, equal parts or num_outputs.
TEST(InferIndexing, SplitAllForms) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 6, 10]) {
      %a1, %a2 = Split(%x) {axis = 1, split = [2, 4]}
      %sizes = const i64[2] [7, 3]
      %b1, %b2 = Split(%x, %sizes) {axis = -1}
      %c1, %c2, %c3 = Split(%x) {axis = 1}
      %d1, %d2, %d3 = Split(%x) {axis = 2, num_outputs = 3}
      return %a1, %a2, %b1, %b2, %c3, %d1, %d3
    })");
  EXPECT_EQ(typeOf(*g, "a1"), "f32[N, 2, 10]");
  EXPECT_EQ(typeOf(*g, "a2"), "f32[N, 4, 10]");
  EXPECT_EQ(typeOf(*g, "b1"), "f32[N, 6, 7]");
  EXPECT_EQ(typeOf(*g, "b2"), "f32[N, 6, 3]");
  EXPECT_EQ(typeOf(*g, "c3"), "f32[N, 2, 10]");
  EXPECT_EQ(typeOf(*g, "d1"), "f32[N, 6, 4]");
  EXPECT_EQ(typeOf(*g, "d3"), "f32[N, 6, 2]");
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[6]) {
      %a, %b = Split(%x) {split = [2, 3]} @split
      return %a, %b
    })"),
            "Split node 'split': split [2, 3] sums to 5 but axis 0 has size 6");
}

//   %x [10, 20, N] -> Slice(starts [1, -5], ends [1000, -1], axes [0, 1], steps [2, 1])
/// Slice clamps like numpy, handles negative indices and steps, keeps
/// untouched symbolic dims, and accepts the opset-1 attribute form.
TEST(InferIndexing, SliceClampsAndHandlesNegatives) {
  auto g = inferred(R"(
    graph @g(%x: f32[10, 20, N], %dyn: i64[1]) {
      %starts = const i64[2] [1, -5]
      %ends = const i64[2] [1000, -1]
      %axes = const i64[2] [0, 1]
      %steps = const i64[2] [2, 1]
      %a = Slice(%x, %starts, %ends, %axes, %steps)
      %rs = const i64[1] [-1]
      %re = const i64[1] [-1000]
      %r = Slice(%x, %rs, %re, _, %rs)
      %big = const i64[1] [9223372036854775807]
      %zero = const i64[1] [0]
      %two = const i64[1] [2]
      %keep = Slice(%x, %zero, %big, %two)
      %old = Slice(%x) {axes = [1], ends = [3], starts = [1]}
      %u = Slice(%x, %dyn, %dyn, %axes)
      return %a, %r, %keep, %old, %u
    })");
  EXPECT_EQ(typeOf(*g, "a"), "f32[5, 4, N]");
  EXPECT_EQ(typeOf(*g, "r"), "f32[10, 20, N]");
  EXPECT_EQ(typeOf(*g, "keep"), "f32[10, 20, N]");
  EXPECT_EQ(typeOf(*g, "old"), "f32[10, 2, N]");
  EXPECT_EQ(typeOf(*g, "u"), "f32[?, ?, N]");
}

//   %data [N, 5, 6], %idx [2, 3] -> Gather(axis 1) -> %g ; scalar index -> %s
/// Gather replaces the axis with the indices' shape; bad constant indices
/// fail.
TEST(InferIndexing, GatherReplacesAxis) {
  auto g = inferred(R"(
    graph @g(%data: f32[N, 5, 6], %idx: i64[2, 3]) {
      %ga = Gather(%data, %idx) {axis = 1}
      %one = const i64[] [1]
      %s = Gather(%data, %one) {axis = -1}
      return %ga, %s
    })");
  EXPECT_EQ(typeOf(*g, "ga"), "f32[N, 2, 3, 6]");
  EXPECT_EQ(typeOf(*g, "s"), "f32[N, 5]");
  EXPECT_EQ(inferError(R"(
    graph @g(%data: f32[4, 5]) {
      %i = const i64[1] [7]
      %y = Gather(%data, %i) {axis = 1} @gather
      return %y
    })"),
            "Gather node 'gather': index 7 is out of range for axis 1 of size 5");
}

//   %x [1, 3, N, 10] -> Pad(pads input) ; Pad(pads attribute) ; Pad(negative)
/// Pad in both forms, with opset-18 axes and cropping.
TEST(InferIndexing, PadBothFormsAndAxes) {
  auto g = inferred(R"(
    graph @g(%x: f32[1, 3, N, 10]) {
      %pads = const i64[8] [0, 0, 1, 2, 0, 0, 1, 2]
      %a = Pad(%x, %pads)
      %b = Pad(%x) {pads = [0, 0, 0, -2, 0, 0, 0, -3]}
      %axpads = const i64[2] [3, 3]
      %ax = const i64[1] [-1]
      %c = Pad(%x, %axpads, _, %ax) {mode = "reflect"}
      return %a, %b, %c
    })");
  EXPECT_EQ(typeOf(*g, "a"), "f32[1, 3, ?, 14]");
  EXPECT_EQ(typeOf(*g, "b"), "f32[1, 3, N, 5]");
  EXPECT_EQ(typeOf(*g, "c"), "f32[1, 3, N, 16]");
  EXPECT_THAT(inferError(R"(
    graph @g(%x: f32[2, 2]) {
      %pads = const i64[2] [1, 1]
      %y = Pad(%x, %pads) @pad
      return %y
    })"),
              HasSubstr("Pad node 'pad': pads [1, 1] has 2 entries, expected 4"));
}

//   %x [1, 3, 10, 10] -> Resize(scales [1, 1, 2, 2]) ; Resize(sizes) ; Resize opset 10
/// Resize by scales (floor), by sizes, with axes, and in the opset-10 form.
TEST(InferIndexing, ResizeByScalesOrSizes) {
  auto g = inferred(R"(
    graph @g(%x: f32[1, 3, 10, 10], %n: f32[N, 3, H, W]) {
      %scales = const f32[4] [1.0, 1.0, 2.5, 2.0]
      %a = Resize(%x, _, %scales)
      %sizes = const i64[4] [1, 3, 7, 9]
      %b = Resize(%x, _, _, %sizes) {mode = "linear"}
      %c = Resize(%x, %scales)
      %s2 = const f32[2] [2.0, 2.0]
      %d = Resize(%n, _, %s2) {axes = [2, 3]}
      %empty = const f32[0] []
      %e = Resize(%x, %empty, %empty, %sizes)
      return %a, %b, %c, %d, %e
    })");
  EXPECT_EQ(typeOf(*g, "a"), "f32[1, 3, 25, 20]");
  EXPECT_EQ(typeOf(*g, "b"), "f32[1, 3, 7, 9]");
  EXPECT_EQ(typeOf(*g, "c"), "f32[1, 3, 25, 20]");
  EXPECT_EQ(typeOf(*g, "d"), "f32[N, 3, ?, ?]");
  EXPECT_EQ(typeOf(*g, "e"), "f32[1, 3, 7, 9]");
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[1, 3, 10, 10]) {
      %y = Resize(%x) @resize
      return %y
    })"),
            "Resize node 'resize': one of scales and sizes is required");
}

//   %x [N, 10] -> TopK(K = 3) -> %v, %i ;  %idx -> OneHot(depth 5) ;  GatherND ; GatherElements
/// TopK, OneHot, GatherND, GatherElements and NonZero.
TEST(InferIndexing, TopKOneHotGatherNDAndNonZero) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 10], %idx: i64[N, 4], %data: f32[2, 3, 4], %nd: i64[2, 5, 1]) {
      %k = const i64[1] [3]
      %v, %i = TopK(%x, %k)
      %depth = const i64[] [5]
      %values = const f32[2] [0.0, 1.0]
      %h = OneHot(%idx, %depth, %values) {axis = 1}
      %gnd = GatherND(%data, %nd) {batch_dims = 1}
      %ge = GatherElements(%x, %idx) {axis = 1}
      %c = const i64[2, 3] [0, 1, 0, 2, 0, 3]
      %nz = NonZero(%c)
      return %v, %i, %h, %gnd, %ge, %nz
    })");
  EXPECT_EQ(typeOf(*g, "v"), "f32[N, 3]");
  EXPECT_EQ(typeOf(*g, "i"), "i64[N, 3]");
  EXPECT_EQ(typeOf(*g, "h"), "f32[N, 5, 4]");
  EXPECT_EQ(typeOf(*g, "gnd"), "f32[2, 5, 4]");
  EXPECT_EQ(typeOf(*g, "ge"), "f32[N, 4]");
  EXPECT_EQ(typeOf(*g, "nz"), "i64[2, 3]");
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[2, 4]) {
      %k = const i64[1] [5]
      %v, %i = TopK(%x, %k) @topk
      return %v, %i
    })"),
            "TopK node 'topk': K 5 is out of range for axis 1 of size 4");
}

//   %x f32 [N, 64] -> QuantizeLinear(scale, zero u8) -> DequantizeLinear -> f32
/// Quantization takes the zero point's type; dequantization the scale's.
TEST(InferQuantization, QuantizeAndDequantize) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 64]) {
      %scale = const f32[] [0.5]
      %zero = const i8[] [0]
      %q = QuantizeLinear(%x, %scale, %zero)
      %u = QuantizeLinear(%x, %scale)
      %d = DequantizeLinear(%q, %scale, %zero)
      return %q, %u, %d
    })");
  EXPECT_EQ(typeOf(*g, "q"), "i8[N, 64]");
  EXPECT_EQ(typeOf(*g, "u"), "u8[N, 64]");
  EXPECT_EQ(typeOf(*g, "d"), "f32[N, 64]");
}

//   %x u8 [1, 3, 8, 8] -> QLinearConv(w u8 [4, 3, 3, 3]) -> u8 ;  %a i8 -> MatMulInteger -> i32
/// Quantized Conv and MatMul reuse the float rules with their own types.
TEST(InferQuantization, QLinearConvAndIntegerMatMul) {
  auto g = inferred(R"(
    graph @g(%x: u8[1, 3, 8, 8], %a: i8[N, 16], %b: i8[16, 4]) {
      %s = const f32[] [0.1]
      %z = const u8[] [128]
      %w = const u8[4, 3, 3, 3] splat(1)
      %y = QLinearConv(%x, %s, %z, %w, %s, %z, %s, %z) {pads = [1, 1, 1, 1]}
      %m = MatMulInteger(%a, %b)
      %c = ConvInteger(%x, %w) {strides = [2, 2]}
      %q, %qs, %qz = DynamicQuantizeLinear(%s)
      return %y, %m, %c, %q
    })");
  EXPECT_EQ(typeOf(*g, "y"), "u8[1, 4, 8, 8]");
  EXPECT_EQ(typeOf(*g, "m"), "i32[N, 4]");
  EXPECT_EQ(typeOf(*g, "c"), "i32[1, 4, 3, 3]");
  EXPECT_EQ(typeOf(*g, "qs"), "f32[]");
}

//   %x [S, N, 32] -> LSTM(bidirectional, hidden 64) -> %y, %h, %c ;  GRU(layout 1)
/// Recurrent layers: hidden size from the attribute or W, both layouts.
TEST(InferRecurrent, LstmAndGruShapes) {
  auto g = inferred(R"(
    graph @g(%x: f32[S, N, 32], %xb: f32[N, S, 32]) {
      %w = const f32[2, 256, 32] splat(0.1)
      %r = const f32[2, 256, 64] splat(0.1)
      %y, %h, %c = LSTM(%x, %w, %r) {direction = "bidirectional", hidden_size = 64}
      %gw = const f32[1, 48, 32] splat(0.1)
      %gr = const f32[1, 48, 16] splat(0.1)
      %gy, %gh = GRU(%xb, %gw, %gr) {layout = 1}
      return %y, %h, %c, %gy, %gh
    })");
  EXPECT_EQ(typeOf(*g, "y"), "f32[S, 2, N, 64]");
  EXPECT_EQ(typeOf(*g, "h"), "f32[2, N, 64]");
  EXPECT_EQ(typeOf(*g, "c"), "f32[2, N, 64]");
  EXPECT_EQ(typeOf(*g, "gy"), "f32[N, S, 1, 16]");
  EXPECT_EQ(typeOf(*g, "gh"), "f32[N, 1, 16]");
  EXPECT_THAT(inferError(R"(
    graph @g(%x: f32[5, 1, 32]) {
      %w = const f32[1, 256, 32] splat(0.1)
      %r = const f32[1, 256, 64] splat(0.1)
      %y = LSTM(%x, %w, %r) {direction = "bidirectional"} @lstm
      return %y
    })"),
              HasSubstr("LSTM node 'lstm': W [1, 256, 32] has 1 directions, expected 2"));
}

//   %a [B, I, J], %b [B, J, K] -> Einsum("bij,bjk->bik") ; "...ij->...ji" ; implicit "ij,jk"
/// Einsum: explicit and implicit outputs, ellipsis, label conflicts.
TEST(InferLinalg, EinsumEquations) {
  auto g = inferred(R"(
    graph @g(%a: f32[B, 3, 4], %b: f32[B, 4, 5], %c: f32[2, 7, 3, 4], %m: f32[3, 4], %n: f32[4, 6]) {
      %bmm = Einsum(%a, %b) {equation = "bij,bjk->bik"}
      %t = Einsum(%c) {equation = "...ij->...ji"}
      %mm = Einsum(%m, %n) {equation = "ij,jk"}
      %tr = Einsum(%m) {equation = "ij->"}
      return %bmm, %t, %mm, %tr
    })");
  EXPECT_EQ(typeOf(*g, "bmm"), "f32[B, 3, 5]");
  EXPECT_EQ(typeOf(*g, "t"), "f32[2, 7, 4, 3]");
  EXPECT_EQ(typeOf(*g, "mm"), "f32[3, 6]");
  EXPECT_EQ(typeOf(*g, "tr"), "f32[]");
  EXPECT_EQ(inferError(R"(
    graph @g(%a: f32[3, 4], %b: f32[5, 6]) {
      %y = Einsum(%a, %b) {equation = "ij,jk->ik"} @e
      return %y
    })"),
            "Einsum node 'e': label 'j' is 4 in one operand and 5 in another");
}

//   %x [N, 256, 14, 14], %rois [R, 4] -> RoiAlign(7x7) ;  NonMaxSuppression ;  GridSample
/// Vision ops: RoiAlign output size, NMS triples, GridSample grid size.
TEST(InferVision, RoiAlignNmsAndGridSample) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 256, 14, 14], %rois: f32[R, 4], %idx: i64[R], %boxes: f32[1, 100, 4],
             %scores: f32[1, 3, 100], %grid: f32[N, 32, 32, 2]) {
      %roi = RoiAlign(%x, %rois, %idx) {output_height = 7, output_width = 7}
      %keep = NonMaxSuppression(%boxes, %scores)
      %s = GridSample(%x, %grid)
      return %roi, %keep, %s
    })");
  EXPECT_EQ(typeOf(*g, "roi"), "f32[R, 256, 7, 7]");
  EXPECT_EQ(typeOf(*g, "keep"), "i64[?, 3]");
  EXPECT_EQ(typeOf(*g, "s"), "f32[N, 256, 32, 32]");
}

//===--- Generators -----------------------------------------------------===//

//   Constant(value_ints) ; Shape(start 1, end -1) ; ConstantOfShape ; Range
/// Constant, Shape, ConstantOfShape and Range.
TEST(InferGenerator, ConstantShapeAndRange) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 3, H, W]) {
      %c = Constant() {value_ints = [1, 2, 3]}
      %f = Constant() {value_float = 1.5}
      %t = Constant() {value = f16[2, 2] splat(1.0)}
      %s = Shape(%x) {end = -1, start = 1}
      %full = Shape(%x)
      %zeros = ConstantOfShape(%c)
      %ones = ConstantOfShape(%s) {value = i64[1] [1]}
      %start = const i32[] [2]
      %limit = const i32[] [11]
      %delta = const i32[] [3]
      %r = Range(%start, %limit, %delta)
      return %c, %f, %t, %s, %full, %zeros, %ones, %r
    })");
  EXPECT_EQ(typeOf(*g, "c"), "i64[3]");
  EXPECT_EQ(typeOf(*g, "f"), "f32[]");
  EXPECT_EQ(typeOf(*g, "t"), "f16[2, 2]");
  EXPECT_EQ(typeOf(*g, "s"), "i64[2]");
  EXPECT_EQ(typeOf(*g, "full"), "i64[4]");
  EXPECT_EQ(typeOf(*g, "zeros"), "f32[1, 2, 3]");
  EXPECT_EQ(typeOf(*g, "ones"), "i64[3, H]");
  EXPECT_EQ(typeOf(*g, "r"), "i32[3]");
  EXPECT_THAT(inferError(R"(
    graph @g() {
      %c = Constant() {value_int = 1, value_float = 2.0} @k
      return %c
    })"),
              HasSubstr("Constant node 'k': needs exactly one of value"));
}

//   %x [2, 3, 4] -> Shape -> Size -> %rank;  Range(1, %rank) -> ReduceMean axes;
//   Neg([1]) -> ConstantOfShape -> suffix of a reshape target
/// Size, Range, Neg and ConstantOfShape carry shape values, as expanded
/// ONNX functions (LayerNormalization's) need.
TEST(InferGenerator, ShapeValuesThroughSizeRangeAndNeg) {
  auto g = inferred(R"(
    graph @g(%x: f32[2, 3, 4]) {
      %shape = Shape(%x)
      %rank = Size(%shape)
      %one = const i64[] [1]
      %step = const i64[] [1]
      %axes = Range(%one, %rank, %step)
      %m = ReduceMean(%x, %axes)
      %axis = const i64[1] [-2]
      %count = Neg(%axis)
      %ones = ConstantOfShape(%count) {value = i64[1] [1]}
      %zero = const i64[1] [0]
      %prefix = Slice(%shape, %zero, %one)
      %target = Concat(%prefix, %ones) {axis = 0}
      %r = Reshape(%m, %target)
      return %axes, %r
    })");
  EXPECT_EQ(typeOf(*g, "rank"), "i64[]");
  EXPECT_EQ(typeOf(*g, "axes"), "i64[2]");
  EXPECT_EQ(typeOf(*g, "m"), "f32[2, 1, 1]");
  EXPECT_EQ(typeOf(*g, "ones"), "i64[2]");
  EXPECT_EQ(typeOf(*g, "r"), "f32[2, 1, 1]");
}

//===--- Control flow ---------------------------------------------------===//

//   %c -> If(then: [2, 3] f32, else: [2, 4] f32) -> %y ;  Loop(carried %x, scan %x)
/// If takes what both branches agree on; Loop adds the iteration dim to
/// scan outputs.
TEST(InferControlFlow, IfJoinsBranchesAndLoopScans) {
  auto g = inferred(R"(
    graph @g(%c: bool[], %x: f32[4], %n: i64[]) {
      %y = If(%c) {
        else_branch = graph @else() {
          %e = const f32[2, 4] splat(0.0)
          return %e
        },
        then_branch = graph @then() {
          %t = const f32[2, 3] splat(1.0)
          return %t
        }}
      %out, %scan = Loop(%n, _, %x) {body = graph @body(%i: i64[], %cond: bool[], %acc: f32[4]) {
          %next: f32[4] = Add(%acc, %acc)
          return %cond, %next, %next
        }}
      return %y, %out, %scan
    })");
  EXPECT_EQ(typeOf(*g, "y"), "f32[2, ?]");
  EXPECT_EQ(typeOf(*g, "out"), "f32[4]");
  EXPECT_EQ(typeOf(*g, "scan"), "f32[?, 4]");
}

//   %n = 3 -> Loop(no cond, carried %x) { %next = Mul(%acc, %acc) }  (body types undeclared)
/// Loop bodies without declared types are inferred from the carried
/// inputs; without a condition input the scan length is M.
TEST(InferControlFlow, InfersUndeclaredLoopBody) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 4]) {
      %n = const i64[] [3]
      %out, %scan = Loop(%n, _, %x) {body = graph @body(%i: i64[], %cond: bool[], %acc) {
          %next = Mul(%acc, %acc)
          %row = ReduceSum(%next) {axes = [0], keepdims = 0}
          return %cond, %next, %row
        }}
      return %out, %scan
    })");
  EXPECT_EQ(typeOf(*g, "out"), "f32[N, 4]");
  EXPECT_EQ(typeOf(*g, "scan"), "f32[3, 4]");
}

//===--- The graph walk -------------------------------------------------===//

//   %x [N, 3] -> Relu -> %y (declared f32[8, 3])
/// A declared type that is more precise is kept; a conflicting one fails.
TEST(InferShapes, MergesWithDeclaredTypes) {
  auto g = inferred(R"(
    graph @g(%x: f32[N, 3]) {
      %y: f32[8, 3] = Relu(%x)
      %z: f32[N, ?] = Relu(%x)
      return %y, %z
    })");
  EXPECT_EQ(typeOf(*g, "y"), "f32[8, 3]");
  EXPECT_EQ(typeOf(*g, "z"), "f32[N, 3]");
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[2, 3]) {
      %y: f32[2, 4] = Relu(%x) @relu
      return %y
    })"),
            "Relu node 'relu': inferred type f32[2, 3] for output 'y' conflicts with its declared "
            "type f32[2, 4]");
}

/// An attribute of the wrong kind is an inference error naming the node,
/// not an exception.
TEST(InferShapes, ReportsWrongAttributeKindAsError) {
  EXPECT_EQ(inferError(R"(
    graph @g(%x: f32[1, 3, 8, 8]) {
      %w = const f32[4, 3, 3, 3] splat(0.1)
      %y = Conv(%x, %w) {strides = 2} @conv
      return %y
    })"),
            "Conv node 'conv': attribute 'strides' is int, expected ints");
}

/// Nodes whose operand counts do not fit the schema, or that lack a
/// required input, fail before their InferFn runs.
TEST(InferShapes, RejectsWrongOperandCounts) {
  Graph g;
  Value* x = g.addInput("x", TensorType(DataType::kFloat32, {4}));
  g.addNode("Relu", {x}, 0, {}, "relu");
  EXPECT_EQ(inferShapes(g).message(), "Relu node 'relu': has 0 outputs, expected 1");
  Graph h;
  Value* y = h.addInput("y", TensorType(DataType::kFloat32, {4}));
  h.addNode("Split", {y}, 0, {}, "split");
  EXPECT_EQ(inferShapes(h).message(), "Split node 'split': has 0 outputs, expected at least 1");
  Graph k;
  Value* z = k.addInput("z", TensorType(DataType::kFloat32, {1, 3, 4, 4}));
  k.addNode("Conv", {z, nullptr}, 1, {}, "conv");
  EXPECT_EQ(inferShapes(k).message(), "Conv node 'conv': required input 'W' is missing");
}

/// Slices with extreme steps and bounds clamp without overflowing.
TEST(InferIndexing, SliceWithExtremeStepsDoesNotOverflow) {
  auto g = inferred(R"(
    graph @g(%x: f32[10, 0]) {
      %min = const i64[1] [-9223372036854775808]
      %max = const i64[1] [9223372036854775807]
      %zero = const i64[1] [0]
      %one = const i64[1] [1]
      %a = Slice(%x, %zero, %max, %zero, %max)
      %b = Slice(%x, %max, %min, %zero, %min)
      %c = Slice(%x, %zero, %max, %one, %min)
      return %a, %b, %c
    })");
  EXPECT_EQ(typeOf(*g, "a"), "f32[1, 0]");
  EXPECT_EQ(typeOf(*g, "b"), "f32[1, 0]");
  EXPECT_EQ(typeOf(*g, "c"), "f32[10, 0]");
}

/// Unknown ops are skipped by default and rejected on request.
TEST(InferShapes, UnknownOpsFollowOptions) {
  constexpr std::string_view kText = R"(
    graph @g(%x: f32[2]) {
      %y = mystery.Op(%x) @m
      %z = Relu(%y)
      return %z
    })";
  auto g = inferred(kText);
  EXPECT_EQ(typeOf(*g, "z"), "?");
  auto strict = parseGraphOrThrow(kText);
  Status s = inferShapes(*strict, {.allowUnknownOps = false});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "mystery.Op node 'm': op has no registered schema");
}

/// mergeTypes keeps the more precise parts and reports conflicts.
TEST(InferShapes, MergeTypesPrefersPreciseInformation) {
  const Dim n = Dim::symbol("N");
  TensorType declared(DataType::kFloat32, {n, Dim(), 3});
  TensorType inferred(DataType::kUndefined, {Dim(), 5, 3});
  EXPECT_EQ(mergeTypes(declared, inferred), TensorType(DataType::kFloat32, {n, 5, 3}));
  EXPECT_EQ(mergeTypes(declared, TensorType(DataType::kFloat16)), std::nullopt);
  EXPECT_EQ(mergeTypes(declared, TensorType(DataType::kFloat32, {1, 2})), std::nullopt);
  EXPECT_EQ(mergeTypes(TensorType(), inferred), inferred);
}

}  // namespace
}  // namespace subgraph
