//===- plugins/onednn/tests/transformer_backend_test.cpp - Attention, GELU -===//
//
// The onednn families a transformer layer uses, each on a tiny graph in the
// text format through the loaded plugin, against the reference backend
// (random constants and inputs, the seed printed): Attention on 3-D and 4-D
// operands and on the packed projection a Split cuts, with an input mask, a
// constant one and none; a bias-free MatMul taking its residual and its
// GELU; and what must stay with the reference (causal attention, a bool
// mask, grouped heads).
//
//===----------------------------------------------------------------------===//
#include <cmath>

#include "backend_test_util.h"

namespace subgraph::onednn::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

//  %p [1, 6, 24] -> Split(3) -> Attention(q, k, v, %m) {2 heads of 4} -> %y
constexpr const char* kPackedAttention = R"(
  graph @g(%p: f32[1, 6, 24], %m: f32[1, 1, 1, 6]) opset(ai.onnx = 23) {
    %sizes = const i64[3] [8, 8, 8]
    %q, %k, %v = Split(%p, %sizes) {axis = -1} @split
    %y = Attention(%q, %k, %v, %m) {q_num_heads = 2, kv_num_heads = 2, scale = 0.5} @att
    return %y
  })";

/// Q, K and V cut from one projection are one region: the kernel reads
/// them as column slices of it, the Split's copies gone.
TEST(OnednnAttentionFamily, PackedProjectionIsOneRegion) {
  Outcome o = partitionAndRun(kPackedAttention);
  EXPECT_THAT(o.regions, ElementsAre("attention_packed"));
  EXPECT_THAT(o.leftOps, IsEmpty());
  EXPECT_LT(o.maxDiff, 1e-5);
}

/// Separate 3-D operands with two batches and a mask per batch; 4-D
/// operands with a constant mask over [Sq, T] and the default scale.
TEST(OnednnAttentionFamily, SeparateAnd4dOperandsMatchTheReference) {
  Outcome three = partitionAndRun(R"(
    graph @g(%q: f32[2, 5, 8], %k: f32[2, 7, 8], %v: f32[2, 7, 12], %m: f32[2, 1, 1, 7]) opset(ai.onnx = 23) {
      %y = Attention(%q, %k, %v, %m) {q_num_heads = 2, kv_num_heads = 2} @att
      return %y
    })");
  EXPECT_THAT(three.regions, ElementsAre("attention"));
  EXPECT_LT(three.maxDiff, 1e-5);
  Outcome four = partitionAndRun(R"(
    graph @g(%q: f32[1, 3, 5, 4], %k: f32[1, 3, 6, 4], %v: f32[1, 3, 6, 4]) opset(ai.onnx = 23) {
      %mask = const f32[5, 6] splat(0.0)
      %y = Attention(%q, %k, %v, %mask) @att
      return %y
    })");
  EXPECT_THAT(four.regions, ElementsAre("attention"));
  EXPECT_LT(four.maxDiff, 1e-5);
}

/// Negative: causal attention, a bool mask and grouped heads are not the
/// kernel's; each stays with the reference, which computes it.
TEST(OnednnAttentionFamily, DoesNotTakeCausalBoolOrGroupedAttention) {
  for (const char* text : {
           R"(graph @g(%q: f32[1, 4, 8], %k: f32[1, 4, 8], %v: f32[1, 4, 8]) opset(ai.onnx = 23) {
                %y = Attention(%q, %k, %v) {q_num_heads = 2, kv_num_heads = 2, is_causal = 1}
                return %y
              })",
           R"(graph @g(%q: f32[1, 4, 8], %k: f32[1, 4, 8], %v: f32[1, 4, 8]) opset(ai.onnx = 23) {
                %m = const bool[4, 4] [true, false, true, true, true, true, false, true,
                                       true, true, true, false, false, true, true, true]
                %y = Attention(%q, %k, %v, %m) {q_num_heads = 2, kv_num_heads = 2}
                return %y
              })",
           R"(graph @g(%q: f32[1, 4, 8], %k: f32[1, 4, 4], %v: f32[1, 4, 4]) opset(ai.onnx = 23) {
                %y = Attention(%q, %k, %v) {q_num_heads = 2, kv_num_heads = 1}
                return %y
              })"}) {
    Outcome o = partitionAndRun(text);
    EXPECT_THAT(o.regions, IsEmpty()) << text;
    EXPECT_THAT(o.leftOps, Contains("Attention")) << text;
    EXPECT_LT(o.maxDiff, 1e-5) << text;
  }
}

//  %x [1, 6, 8] -> MatMul(w1) -> Gelu(tanh) -> MatMul(w2) -> Add(residual %x) -> %y
constexpr const char* kBiasFreeBlock = R"(
  graph @g(%x: f32[1, 6, 8]) opset(ai.onnx = 20) {
    %w1 = const f32[8, 16] splat(0.0)
    %w2 = const f32[16, 8] splat(0.0)
    %h = MatMul(%x, %w1) @fc
    %g = Gelu(%h) {approximate = "tanh"} @gelu
    %o = MatMul(%g, %w2) @proj
    %y = Add(%o, %x) @residual
    return %y
  })";

/// GPT-2's projections have no bias: the MatMul still takes its
/// activation, and its residual as a sum post-op.
TEST(OnednnMatMulFamily, BiasFreeMatMulTakesItsActivationAndResidual) {
  Outcome o = partitionAndRun(kBiasFreeBlock);
  EXPECT_THAT(o.regions, ElementsAre("matmul_act", "matmul_add"));
  EXPECT_THAT(o.leftOps, IsEmpty());
  EXPECT_LT(o.maxDiff, 1e-4);
}

//  %ids [1, 5] -> Gather(table [10, 8]) -> Add(positions [1, 5, 8]) -> %e
//  %mask [1, 5] i64 -> Cast(bool) -> Reshape [1, 1, 1, 5] -> Expand [1, 1, 5, 5]
//                  -> Where(0, -1e4) -> %m
//  %h [1, 8, 5] -> Transpose -> Gather(index 0, axis 1) -> %cls
constexpr const char* kEmbeddingAndMask = R"(
  graph @g(%ids: i64[1, 5], %mask: i64[1, 5], %h: f32[1, 8, 5]) opset(ai.onnx = 14) {
    %table = const f32[10, 8] splat(0.0)
    %positions = const f32[1, 5, 8] splat(0.0)
    %fixedshape = const i64[4] [1, 1, 1, 5]
    %fixedsize = const i64[4] [1, 1, 5, 5]
    %zero = const f32[] [0.0]
    %big = const f32[] [-10000.0]
    %first = const i64[] [0]
    %w = Gather(%table, %ids) @embed
    %e = Add(%w, %positions) @positions
    %b = Cast(%mask) {to = 9} @to_bool
    %r = Reshape(%b, %fixedshape) @reshape
    %x = Expand(%r, %fixedsize) @expand
    %m = Where(%x, %zero, %big) @where
    %t = Transpose(%h) {perm = [0, 2, 1]} @channels_last
    %cls = Gather(%t, %first) {axis = 1} @first_token
    return %e, %m, %cls
  })";

// Feeds for kEmbeddingAndMask: token ids below 10, a mask with padding.
std::vector<NamedTensor> embeddingFeeds() {
  std::mt19937 rng(kSeed);
  return {{"ids", runtime::testing::i64({1, 5}, {3, 0, 9, 4, 4})},
          {"mask", runtime::testing::i64({1, 5}, {1, 1, 1, 0, 0})},
          {"h", randomF32({1, 8, 5}, rng)}};
}

/// The embedding sum, the mask and ViT's pooler are regions of the
/// gather, binary, select and transpose families, and compute what the
/// reference does, bit for bit (copies, one add, one select).
TEST(OnednnGlueFamilies, EmbeddingMaskAndPoolerAreRegions) {
  Outcome o = partitionAndRunWith(kEmbeddingAndMask, embeddingFeeds());
  EXPECT_THAT(o.regions,
              ::testing::UnorderedElementsAre("gather", "gather", "binary", "select", "transpose"));
  EXPECT_THAT(o.leftOps, IsEmpty());
  EXPECT_EQ(o.maxDiff, 0.0);
}

/// Negative: a token id past the table is an error line naming the index,
/// never a read past the table.
TEST(OnednnGlueFamilies, AnIndexPastTheTableIsAnError) {
  std::vector<NamedTensor> feeds = embeddingFeeds();
  feeds[0].tensor = runtime::testing::i64({1, 5}, {3, 0, 10, 4, 4});
  std::string error = partitionAndRunError(kEmbeddingAndMask, feeds);
  EXPECT_THAT(error, ::testing::HasSubstr("index 10 is out of range"));
}

//  %ids [1, 4] -> Gather(u8 table [6, 4]) -> DequantizeLinear(0.5, 3) -> %y
/// A quantized embedding table and its DequantizeLinear are one region,
/// rounded as the reference rounds.
TEST(OnednnGlueFamilies, QuantizedEmbeddingIsOneRegion) {
  Outcome o = partitionAndRunWith(R"(
    graph @g(%ids: i64[1, 4]) opset(ai.onnx = 14) {
      %table = const u8[6, 4] [0, 1, 2, 3, 250, 251, 252, 253, 9, 8, 7, 6, 100, 101, 102, 103,
                                 3, 3, 3, 3, 255, 0, 128, 127]
      %scale = const f32[] [0.0123]
      %zero = const u8[] [3]
      %q = Gather(%table, %ids) @embed
      %y = DequantizeLinear(%q, %scale, %zero) @dequantize
      return %y
    })",
                                  {{"ids", runtime::testing::i64({1, 4}, {5, 1, -1, 0})}});
  EXPECT_THAT(o.regions, ElementsAre("gather"));
  EXPECT_THAT(o.leftOps, IsEmpty());
  EXPECT_EQ(o.maxDiff, 0.0);
}

/// A residual sum and the LayerNormalization after it are one region
/// (ONNX Runtime's SkipLayerNormalization).
TEST(OnednnLayerNormFamily, ResidualSumIsPartOfTheRegion) {
  Outcome o = partitionAndRun(R"(
    graph @g(%x: f32[2, 5, 8], %r: f32[2, 5, 8]) opset(ai.onnx = 17) {
      %scale = const f32[8] splat(1.0)
      %shift = const f32[8] splat(0.0)
      %s = Add(%x, %r) @residual
      %y = LayerNormalization(%s, %scale, %shift) {axis = -1} @norm
      return %y
    })");
  EXPECT_THAT(o.regions, ElementsAre("add_layernorm"));
  EXPECT_THAT(o.leftOps, IsEmpty());
  EXPECT_LT(o.maxDiff, 1e-5);
}

/// Negative: a sum that is read elsewhere too (the next residual), or
/// that adds a constant (a bias), or broadcasts, stays out of the region.
TEST(OnednnLayerNormFamily, SharedBiasOrBroadcastSumsStayOut) {
  Outcome o = partitionAndRun(R"(
    graph @g(%x: f32[2, 5, 8], %r: f32[2, 5, 8], %v: f32[8]) opset(ai.onnx = 17) {
      %scale = const f32[8] splat(1.0)
      %shift = const f32[8] splat(0.0)
      %bias = const f32[2, 5, 8] splat(0.5)
      %s = Add(%x, %r) @shared
      %y = LayerNormalization(%s, %scale, %shift) {axis = -1} @norm1
      %b = Add(%x, %bias) @bias
      %z = LayerNormalization(%b, %scale, %shift) {axis = -1} @norm2
      %w = Add(%r, %v) @broadcast
      %u = LayerNormalization(%w, %scale, %shift) {axis = -1} @norm3
      return %y, %s, %z, %u
    })");
  EXPECT_THAT(o.regions, ::testing::UnorderedElementsAre("binary", "binary", "binary", "layernorm",
                                                         "layernorm", "layernorm"));
  EXPECT_LT(o.maxDiff, 1e-5);
}

//  %ids [1, 6] -> Equal(pad) -> Not -> Cast(i32) -> CumSum -> Mul -> Cast(i64)
//              -> Add(pad) -> %pos -> GatherElements(types) -> Expand -> %tt
// RoBERTa's position ids and token-type ids, in the form its exporter
// writes them (the Cast read twice: by the CumSum and by the Mul).
constexpr const char* kPositionIds = R"(
  graph @g(%ids: i64[1, 6]) opset(ai.onnx = 14) {
    %pad = const i64[] [1]
    %axis = const i32[] [1]
    %types = const i64[1, 7] [5, 6, 7, 8, 9, 10, 11]
    %size = const i64[2] [2, 6]
    %eq = Equal(%ids, %pad) @is_pad
    %keep = Not(%eq) @keep
    %k = Cast(%keep) {to = 6} @to_int
    %c = CumSum(%k, %axis) @count
    %m = Mul(%c, %k) @masked
    %l = Cast(%m) {to = 7} @to_long
    %pos = Add(%l, %pad) @positions
    %g = GatherElements(%types, %pos) {axis = 1} @types_of
    %tt = Expand(%g, %size) @expand
    return %pos, %tt
  })";

std::vector<NamedTensor> positionFeeds(std::vector<int64_t> ids) {
  return {{"ids", runtime::testing::i64({1, 6}, std::move(ids))}};
}

/// The position ids and token types are one index region, equal to the
/// reference's element for element.
TEST(OnednnIndexFamily, PositionIdsAreOneRegion) {
  Outcome o = partitionAndRunWith(kPositionIds, positionFeeds({0, 7, 3, 1, 1, 1}));
  EXPECT_THAT(o.regions, ElementsAre("index"));
  EXPECT_THAT(o.leftOps, IsEmpty());
  EXPECT_EQ(o.maxDiff, 0.0);
}

/// int32 arithmetic wraps as the reference's does; comparisons, And, Or,
/// Where and an exclusive reverse CumSum, with broadcasting.
TEST(OnednnIndexFamily, WrapsAndBroadcastsAsTheReference) {
  Outcome o = partitionAndRunWith(R"(
    graph @g(%a: i32[2, 3], %b: i32[3]) opset(ai.onnx = 14) {
      %big = const i32[] [2000000000]
      %axis = const i64[] [-1]
      %wrapped = Mul(%a, %big) @wrap
      %sum = Add(%wrapped, %b) @sum
      %lt = Less(%a, %b) @lt
      %gt = Greater(%a, %b) @gt
      %both = And(%lt, %gt) @both
      %either = Or(%lt, %gt) @either
      %pick = Where(%either, %sum, %b) @pick
      %run = CumSum(%pick, %axis) {exclusive = 1, reverse = 1} @run
      %d = Sub(%run, %a) @difference
      return %both, %d
    })",
                                  {{"a", runtime::testing::i32({2, 3}, {1, -2, 3, 7, 5, 5})},
                                   {"b", runtime::testing::i32({3}, {2, 5, 3})}});
  EXPECT_THAT(o.regions, ElementsAre("index"));
  EXPECT_EQ(o.maxDiff, 0.0);
}

/// Negative: a step with a float value, a symbolic dim or more than 2^16
/// elements stays out of the region, and the float family takes none of
/// the integer steps.
TEST(OnednnIndexFamily, FloatsSymbolsAndLargeValuesStayOut) {
  Outcome o = partitionAndRunWith(
      R"(
    graph @g(%ids: i64[1, 4], %n: i64[N], %big: i64[300, 300]) opset(ai.onnx = 14) {
      %one = const i64[] [1]
      %p = Add(%ids, %one) @index_step
      %f = Cast(%p) {to = 1} @to_float
      %q = Add(%n, %one) @symbolic
      %r = Add(%big, %one) @large
      return %f, %q, %r
    })",
      {{"ids", runtime::testing::i64({1, 4}, {1, 2, 3, 4})},
       {"n", runtime::testing::i64({2}, {5, 6})},
       {"big", runtime::testing::i64({300, 300}, std::vector<int64_t>(90000, 2))}});
  EXPECT_THAT(o.regions, ElementsAre("index"));
  EXPECT_THAT(o.leftOps, ::testing::UnorderedElementsAre("Cast", "Add", "Add"));
  EXPECT_EQ(o.maxDiff, 0.0);
}

/// Negative: a position past the token-type table (six tokens, no padding:
/// position 7 of 7) is the reference's error line, never a read past it.
TEST(OnednnIndexFamily, AnIndexPastTheTableIsAnError) {
  std::string error = partitionAndRunError(kPositionIds, positionFeeds({0, 7, 3, 4, 5, 6}));
  EXPECT_THAT(error, ::testing::HasSubstr("index 7 is out of range for axis 1 of size 7"));
  // The region's own kernel says so, not a fallback to the reference.
  EXPECT_THAT(error, ::testing::Not(::testing::HasSubstr("body:"))) << error;
}

}  // namespace
}  // namespace subgraph::onednn::testing
