//===- tests/core/pass_transformer_idioms_test.cpp - GELU and attention ---===//
//
// The transformer idioms: each test draws GELU or attention as an exporter
// writes it, runs one pass and DCE, and checks the graph left. DoesNot...
// tests say in one line why a near-miss must stay as it is. The numerics
// (each rewrite computes what the written-out form computes) are checked
// end to end by tests/cli/transformer_test.cpp.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../../core/passes/strided_view.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/passes/attention_idiom.h"
#include "subgraph/passes/dead_code_elimination.h"
#include "subgraph/passes/gelu_idiom.h"
#include "subgraph/passes/identity_removal.h"
#include "subgraph/passes/linear_idiom.h"
#include "subgraph/passes/redundant_ops.h"
#include "subgraph/passes/sibling_matmuls.h"

namespace subgraph {
namespace {

using ::testing::ElementsAre;

bool runIdiom(Graph& g, std::unique_ptr<Pass> pass) {
  StatusOr<bool> changed = pass->run(g);
  EXPECT_TRUE(changed.isOk()) << changed.status().message();
  EXPECT_TRUE(createDeadCodeEliminationPass()->run(g).isOk());
  Status valid = verify(g);
  EXPECT_TRUE(valid.isOk()) << valid.message() << "\n" << printGraph(g);
  return changed.isOk() && *changed;
}

std::vector<std::string> ops(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes()) out.push_back(n->opType());
  return out;
}

const Node& producerOf(const Graph& g, const std::string& value) {
  const Value* v = g.findValue(value);
  EXPECT_NE(v, nullptr) << value;
  EXPECT_NE(v->producer(), nullptr) << value;
  return *v->producer();
}

void replace(std::string& text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

//===--- GELU ---------------------------------------------------------------===//

// PyTorch's nn.GELU() before opset 20: x * 0.5 * (1 + erf(x / sqrt 2)),
// with the product grouped as (x * (e + 1)) * 0.5.
constexpr const char* kErfGelu = R"(
  graph @g(%x: f32[2, 8]) opset(ai.onnx = 14) {
    %sqrt2 = const f32[] [1.4142135]
    %one = const f32[] [1.0]
    %half = const f32[] [0.5]
    %a = Div(%x, %sqrt2)
    %e = Erf(%a)
    %p = Add(%e, %one)
    %m = Mul(%x, %p)
    %y = Mul(%m, %half) @last
    return %y
  })";

/// The exact form becomes Gelu(x) keeping y's name; the opset stays.
TEST(GeluIdiom, ReplacesTheErfForm) {
  auto g = parseGraphOrThrow(kErfGelu);
  ASSERT_TRUE(runIdiom(*g, createGeluIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("Gelu"));
  const Node& gelu = producerOf(*g, "y");
  EXPECT_EQ(gelu.name(), "last");
  EXPECT_EQ(gelu.input(0)->name(), "x");
  EXPECT_EQ(gelu.attr("approximate"), nullptr);
  EXPECT_EQ(g->opsetImports().at(""), 14);
}

/// The other groupings of the product, and x * (1 / sqrt 2) for the Div.
TEST(GeluIdiom, ReplacesEveryGroupingOfTheProduct) {
  for (const char* tail :
       {"%h = Mul(%p, %half)\n %y = Mul(%x, %h)", "%h = Mul(%half, %x)\n %y = Mul(%p, %h)"}) {
    std::string text = kErfGelu;
    replace(text, "%m = Mul(%x, %p)\n    %y = Mul(%m, %half) @last", tail);
    replace(text, "%a = Div(%x, %sqrt2)", "%r = const f32[] [0.70710677]\n %a = Mul(%r, %x)");
    auto g = parseGraphOrThrow(text);
    ASSERT_TRUE(runIdiom(*g, createGeluIdiomPass())) << tail;
    EXPECT_THAT(ops(*g), ElementsAre("Gelu")) << tail;
  }
}

// GPT-2's tanh approximation as the dynamo exporter writes it.
constexpr const char* kTanhGelu = R"(
  graph @g(%x: f32[2, 8]) opset(ai.onnx = 20) {
    %half = const f32[] [0.5]
    %three = const f32[] [3.0]
    %c = const f32[] [0.044715]
    %k = const f32[] [0.7978846]
    %one = const f32[] [1.0]
    %h = Mul(%x, %half)
    %cube = Pow(%x, %three)
    %t0 = Mul(%cube, %c)
    %t1 = Add(%x, %t0)
    %t2 = Mul(%t1, %k)
    %t = Tanh(%t2)
    %p = Add(%t, %one)
    %y = Mul(%h, %p)
    return %y
  })";

/// The tanh form becomes Gelu {approximate = "tanh"}, with x^3 as Pow or
/// as x * x * x.
TEST(GeluIdiom, ReplacesTheTanhForm) {
  auto g = parseGraphOrThrow(kTanhGelu);
  ASSERT_TRUE(runIdiom(*g, createGeluIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("Gelu"));
  EXPECT_EQ(producerOf(*g, "y").attr("approximate")->asString(), "tanh");

  std::string text = kTanhGelu;
  replace(text, "%cube = Pow(%x, %three)", "%sq = Mul(%x, %x)\n %cube = Mul(%sq, %x)");
  auto g2 = parseGraphOrThrow(text);
  ASSERT_TRUE(runIdiom(*g2, createGeluIdiomPass()));
  EXPECT_THAT(ops(*g2), ElementsAre("Gelu"));
}

/// Negative: 0.044 is not GELU's cubic coefficient, so this is some other
/// function and stays as written.
TEST(GeluIdiom, DoesNotReplaceAnotherCoefficient) {
  std::string text = kTanhGelu;
  replace(text, "[0.044715]", "[0.044]");
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runIdiom(*g, createGeluIdiomPass()));
  EXPECT_EQ(g->numNodes(), 8u);
}

/// A model exported in f16 writes sqrt 2 as the nearest half, 1.4140625
/// (bf16: 1.4140625 too; f16's 1/sqrt 2 is 0.70703125), which the
/// float16-compute pass widens unchanged: still GELU.
TEST(GeluIdiom, ReplacesCoefficientsRoundedToHalfPrecision) {
  for (const char* scale : {"Div(%x, %sqrt2)", "Mul(%x, %inverse)"}) {
    std::string text = kErfGelu;
    replace(text, "[1.4142135]", "[1.4140625]\n %inverse = const f32[] [0.70703125]");
    replace(text, "Div(%x, %sqrt2)", scale);
    auto g = parseGraphOrThrow(text);
    ASSERT_TRUE(runIdiom(*g, createGeluIdiomPass())) << scale;
    EXPECT_THAT(ops(*g), ElementsAre("Gelu"));
  }
}

/// Negative: a coefficient as far from sqrt 2 that is no rounding of it
/// (1.4141, between the f16 neighbours) is another function.
TEST(GeluIdiom, DoesNotReplaceANearbyCoefficientThatIsNoRounding) {
  std::string text = kErfGelu;
  replace(text, "[1.4142135]", "[1.4141]");
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runIdiom(*g, createGeluIdiomPass()));
  EXPECT_EQ(g->numNodes(), 5u);
}

/// Negative: erf(x / sqrt 2) + 1 is also a graph output, so the pattern's
/// inside is visible and the nodes must stay.
TEST(GeluIdiom, DoesNotReplaceWhenAnIntermediateIsRead) {
  std::string text = kErfGelu;
  replace(text, "return %y", "return %y, %p");
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runIdiom(*g, createGeluIdiomPass()));
  EXPECT_EQ(g->numNodes(), 5u);
}

//===--- Strided views --------------------------------------------------------===//

/// Splitting [1, 4, 8] into 2 heads of 4 and moving the heads forward is
/// a view with the head stride 4; transposing the last two dims after it is
/// K^T's view; merging the heads back would need a copy.
TEST(StridedView, DescribesTheHeadSplitAndRefusesCopies) {
  using passes_detail::StridedView;
  StridedView src = StridedView::contiguous({1, 4, 8});
  std::optional<StridedView> split = src.reshaped({1, 4, 2, 4});
  ASSERT_TRUE(split);
  std::optional<StridedView> heads = split->permuted({0, 2, 1, 3});
  ASSERT_TRUE(heads);
  EXPECT_THAT(heads->dims, ElementsAre(1, 2, 4, 4));
  // The batch dim is 1: its stride does not matter.
  EXPECT_THAT(std::vector<int64_t>(heads->strides.begin() + 1, heads->strides.end()),
              ElementsAre(4, 8, 1));
  std::optional<StridedView> kt = split->permuted({0, 2, 3, 1});
  ASSERT_TRUE(kt);
  EXPECT_THAT(std::vector<int64_t>(kt->strides.begin() + 1, kt->strides.end()),
              ElementsAre(4, 1, 8));
  EXPECT_FALSE(heads->reshaped({1, 2, 16})) << "[B, H, S, D] -> [B, H, S*D] crosses strides";
  EXPECT_FALSE(src.reshaped({1, 4, 7})) << "element counts differ";
  EXPECT_FALSE(split->permuted({0, 1, 1, 3})) << "not a permutation";
}

//===--- Attention ------------------------------------------------------------===//

// BERT's self-attention as the TorchScript exporter writes it, on
// [1, 4, 8] (2 heads of 4): the head split of Q and V, K split straight
// into K^T, the scale, the mask, Softmax, x V, the head merge.
constexpr const char* kBertAttention = R"(
  graph @g(%q3: f32[1, 4, 8], %k3: f32[1, 4, 8], %v3: f32[1, 4, 8], %mask: f32[1, 1, 1, 4])
      opset(ai.onnx = 14) {
    %split = const i64[4] [1, 4, 2, 4]
    %merge = const i64[3] [1, 4, 8]
    %scale = const f32[] [0.5]
    %q2 = Reshape(%q3, %split)
    %q = Transpose(%q2) {perm = [0, 2, 1, 3]}
    %k2 = Reshape(%k3, %split)
    %kt = Transpose(%k2) {perm = [0, 2, 3, 1]}
    %v2 = Reshape(%v3, %split)
    %v = Transpose(%v2) {perm = [0, 2, 1, 3]}
    %s0 = MatMul(%q, %kt)
    %s1 = Mul(%s0, %scale)
    %s2 = Add(%s1, %mask)
    %p = Softmax(%s2) {axis = -1}
    %o = MatMul(%p, %v)
    %o1 = Transpose(%o) {perm = [0, 2, 1, 3]}
    %y = Reshape(%o1, %merge) @merge
    return %y
  })";

/// The whole block becomes Attention on the 3-D tensors: the heads are
/// strides, the scale an attribute, the mask an input; y keeps its name.
TEST(AttentionIdiom, ReplacesBertSelfAttentionOn3dInputs) {
  auto g = parseGraphOrThrow(kBertAttention);
  ASSERT_TRUE(runIdiom(*g, createAttentionIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("Attention"));
  const Node& a = producerOf(*g, "y");
  EXPECT_EQ(a.name(), "merge");
  ASSERT_EQ(a.numInputs(), 4u);
  EXPECT_EQ(a.input(0)->name(), "q3");
  EXPECT_EQ(a.input(1)->name(), "k3");
  EXPECT_EQ(a.input(2)->name(), "v3");
  EXPECT_EQ(a.input(3)->name(), "mask");
  EXPECT_EQ(a.attr("q_num_heads")->asInt(), 2);
  EXPECT_EQ(a.attr("kv_num_heads")->asInt(), 2);
  EXPECT_FLOAT_EQ(a.attr("scale")->asFloat(), 0.5f);
  EXPECT_EQ(g->opsetImports().at(""), 14);
}

/// The dynamo exporter's spelling: K^T through [B*H, S, D] and back, the
/// scale split between Q and K^T, the IsNaN guard after Softmax, no mask,
/// and the heads merged straight into [B*S, H*D]. Attention writes
/// [B, S, H*D] and a Reshape gives y its dims.
TEST(AttentionIdiom, ReplacesTheDynamoSpellingWithAGuardAndA2dMerge) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%q3: f32[1, 4, 8], %k3: f32[1, 4, 8], %v3: f32[1, 4, 8]) opset(ai.onnx = 20) {
      %split = const i64[4] [1, 4, -1, 4]
      %flat = const i64[3] [-1, 4, 4]
      %back = const i64[4] [1, 2, 4, 4]
      %merge = const i64[2] [4, 8]
      %root = const f32[] [0.70710677]
      %zero = const f32[] [0.0]
      %q2 = Reshape(%q3, %split)
      %q = Transpose(%q2) {perm = [0, 2, 1, 3]}
      %k2 = Reshape(%k3, %split)
      %k = Transpose(%k2) {perm = [0, 2, 1, 3]}
      %kf = Reshape(%k, %flat)
      %kft = Transpose(%kf) {perm = [0, 2, 1]}
      %kt = Reshape(%kft, %back)
      %v2 = Reshape(%v3, %split)
      %v = Transpose(%v2) {perm = [0, 2, 1, 3]}
      %qs = Mul(%q, %root)
      %kts = Mul(%kt, %root)
      %s = MatMul(%qs, %kts)
      %p = Softmax(%s) {axis = -1}
      %nan = IsNaN(%p)
      %pg = Where(%nan, %zero, %p)
      %o = MatMul(%pg, %v)
      %o1 = Transpose(%o) {perm = [0, 2, 1, 3]}
      %y = Reshape(%o1, %merge)
      return %y
    })");
  ASSERT_TRUE(runIdiom(*g, createAttentionIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("Attention", "Reshape"));
  const Node& a = *producerOf(*g, "y").input(0)->producer();
  EXPECT_EQ(a.opType(), "Attention");
  EXPECT_EQ(a.numInputs(), 3u) << "no mask";
  EXPECT_NEAR(a.attr("scale")->asFloat(), 0.5f, 1e-6f);
  EXPECT_THAT(a.output(0)->type().shape.value(), ElementsAre(Dim(1), Dim(4), Dim(8)));
}

/// Without a head merge (the model reads the heads), Attention takes the
/// 4-D operands; K^T must then be K transposed.
TEST(AttentionIdiom, Replaces4dAttentionWithoutAMerge) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%q: f32[2, 3, 5, 4], %k: f32[2, 3, 6, 4], %v: f32[2, 3, 6, 7]) opset(ai.onnx = 17) {
      %d = const f32[] [2.0]
      %kt = Transpose(%k) {perm = [0, 1, 3, 2]}
      %s0 = MatMul(%q, %kt)
      %s = Div(%s0, %d)
      %p = Softmax(%s) {axis = 3}
      %y = MatMul(%p, %v)
      return %y
    })");
  ASSERT_TRUE(runIdiom(*g, createAttentionIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("Attention"));
  const Node& a = producerOf(*g, "y");
  EXPECT_EQ(a.input(1)->name(), "k");
  EXPECT_EQ(a.attr("q_num_heads"), nullptr);
  EXPECT_FLOAT_EQ(a.attr("scale")->asFloat(), 0.5f);
}

/// Negative: a mask one element long on the key axis broadcasts in the Add,
/// but Attention would pad it with -inf instead; the nodes stay.
TEST(AttentionIdiom, DoesNotTakeAMaskThatBroadcastsOverKeys) {
  std::string text = kBertAttention;
  replace(text, "%mask: f32[1, 1, 1, 4]", "%mask: f32[1, 1, 4, 1]");
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runIdiom(*g, createAttentionIdiomPass()));
  EXPECT_EQ(g->numNodes(), 13u);
}

/// Negative: the probabilities are also a graph output, so the pattern's
/// inside is visible and the nodes must stay.
TEST(AttentionIdiom, DoesNotReplaceWhenTheProbabilitiesAreRead) {
  std::string text = kBertAttention;
  replace(text, "return %y", "return %y, %p");
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runIdiom(*g, createAttentionIdiomPass()));
  EXPECT_EQ(g->numNodes(), 13u);
}

/// Negative: Q's Reshape keeps the dims in another order ([B, S, D, H]
/// then a transpose), so Q' is not a head view of q3 and nothing changes.
TEST(AttentionIdiom, DoesNotReplaceAnotherSplitOfTheHeads) {
  std::string text = kBertAttention;
  replace(text, "%q = Transpose(%q2) {perm = [0, 2, 1, 3]}",
          "%qs = const i64[4] [1, 4, 4, 2]\n %q2b = Reshape(%q3, %qs)\n"
          " %q = Transpose(%q2b) {perm = [0, 3, 1, 2]}");
  replace(text, "%q2 = Reshape(%q3, %split)\n", "");
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runIdiom(*g, createAttentionIdiomPass()));
  EXPECT_EQ(g->numNodes(), 13u);
}

/// Negative: a factor on V scales the output, not the scores; it must not
/// be folded into the scale.
TEST(AttentionIdiom, DoesNotFoldAFactorOnV) {
  std::string text = kBertAttention;
  replace(text, "%o = MatMul(%p, %v)", "%vs = Mul(%v, %scale)\n %o = MatMul(%p, %vs)");
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runIdiom(*g, createAttentionIdiomPass()));
  EXPECT_EQ(g->numNodes(), 14u);
}

//===--- Linear layers as 2-D Gemm ------------------------------------------===//

// GPT-2's nn.Linear as the dynamo exporter writes it: [1, 4, 8] flattened
// to [4, 8], Gemm by [8, 6] with a bias, restored to [1, 4, 6].
constexpr const char* kGemmLinear = R"(
  graph @g(%x: f32[1, 4, 8]) opset(ai.onnx = 20) {
    %rows = const i64[2] [-1, 8]
    %back = const i64[3] [1, 4, 6]
    %w = const f32[8, 6] splat(0.5)
    %b = const f32[6] splat(0.25)
    %a = Reshape(%x, %rows)
    %g = Gemm(%a, %w, %b) @fc
    %y = Reshape(%g, %back)
    %z = Relu(%y)
    return %z
  })";

/// The Reshapes go: MatMul on the 3-D x and an Add of the bias write y,
/// which keeps its name and reader.
TEST(LinearIdiom, Replaces2dGemmBetweenReshapes) {
  auto g = parseGraphOrThrow(kGemmLinear);
  ASSERT_TRUE(runIdiom(*g, createLinearIdiomPass()));
  EXPECT_THAT(ops(*g), ::testing::UnorderedElementsAre("MatMul", "Add", "Relu"));
  const Node& add = producerOf(*g, "y");
  EXPECT_EQ(add.opType(), "Add");
  EXPECT_EQ(add.input(1)->name(), "b");
  EXPECT_EQ(add.input(0)->producer()->input(0)->name(), "x");
}

/// transB = 1 with constant weights: MatMul reads a transposed copy.
TEST(LinearIdiom, TransposesConstantWeightsOnce) {
  std::string text = kGemmLinear;
  replace(text, "%w = const f32[8, 6] splat(0.5)", "%w = const f32[6, 8] splat(0.5)");
  replace(text, "%g = Gemm(%a, %w, %b) @fc", "%g = Gemm(%a, %w, %b) {transB = 1} @fc");
  auto g = parseGraphOrThrow(text);
  ASSERT_TRUE(runIdiom(*g, createLinearIdiomPass()));
  const Node& mm = *producerOf(*g, "y").input(0)->producer();
  EXPECT_EQ(mm.opType(), "MatMul");
  EXPECT_THAT(mm.input(1)->initializer()->dims(), ElementsAre(8, 6));
}

/// Negative: alpha 2 scales the product; the pass takes only plain
/// products and leaves the Gemm.
TEST(LinearIdiom, DoesNotReplaceAScaledGemm) {
  std::string text = kGemmLinear;
  replace(text, "%g = Gemm(%a, %w, %b) @fc", "%g = Gemm(%a, %w, %b) {alpha = 2.0} @fc");
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runIdiom(*g, createLinearIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("Reshape", "Gemm", "Reshape", "Relu"));
}

//===--- Sibling projections --------------------------------------------------===//

// Q, K and V of one activation, each a MatMul and a bias Add.
constexpr const char* kProjections = R"(
  graph @g(%x: f32[1, 4, 8]) opset(ai.onnx = 14) {
    %wq = const f32[8, 8] splat(0.1)
    %wk = const f32[8, 8] splat(0.2)
    %wv = const f32[8, 4] splat(0.3)
    %bq = const f32[8] splat(1.0)
    %bk = const f32[8] splat(2.0)
    %bv = const f32[4] splat(3.0)
    %q0 = MatMul(%x, %wq)
    %q = Add(%bq, %q0)
    %k0 = MatMul(%x, %wk)
    %k = Add(%k0, %bk)
    %v0 = MatMul(%x, %wv)
    %v = Add(%v0, %bv)
    return %q, %k, %v
  })";

/// One MatMul of the weights side by side, one Add of the biases side by
/// side, and a Split whose outputs are q, k and v themselves.
TEST(SiblingMatMuls, MergesProjectionsOfOneInput) {
  auto g = parseGraphOrThrow(kProjections);
  ASSERT_TRUE(runIdiom(*g, createSiblingMatMulsPass()));
  EXPECT_THAT(ops(*g), ElementsAre("MatMul", "Add", "Split"));
  const Node& split = producerOf(*g, "q");
  EXPECT_EQ(split.output(1)->name(), "k");
  EXPECT_EQ(split.output(2)->name(), "v");
  EXPECT_THAT(split.input(1)->initializer()->toInt64Vector(), ElementsAre(8, 8, 4));
  const Node& mm = *split.input(0)->producer()->input(0)->producer();
  const Tensor& w = *mm.input(1)->initializer();
  EXPECT_THAT(w.dims(), ElementsAre(8, 20));
  EXPECT_FLOAT_EQ(static_cast<float>(w.elementAsDouble(8)), 0.2f) << "row 0, K's first column";
  const Tensor& b = *split.input(0)->producer()->input(1)->initializer();
  EXPECT_FLOAT_EQ(static_cast<float>(b.elementAsDouble(19)), 3.0f);
}

/// Negative: projections of different inputs, or of weights with a
/// different row count, are no siblings.
TEST(SiblingMatMuls, DoesNotMergeOtherInputsOrRowCounts) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 4, 8], %u: f32[1, 4, 8], %t: f32[1, 4, 6]) opset(ai.onnx = 14) {
      %w1 = const f32[8, 8] splat(0.1)
      %w2 = const f32[8, 8] splat(0.2)
      %w3 = const f32[6, 8] splat(0.3)
      %a = MatMul(%x, %w1)
      %b = MatMul(%u, %w2)
      %c = MatMul(%t, %w3)
      return %a, %b, %c
    })");
  EXPECT_FALSE(runIdiom(*g, createSiblingMatMulsPass()));
  EXPECT_EQ(g->numNodes(), 3u);
}

//===--- Casts to the type their input has --------------------------------------===//

/// ViT casts its Softmax to f32 twice: both Casts go as Identities; a
/// Cast that changes the type stays.
TEST(IdentityRemoval, RemovesCastsToTheirInputsOwnType) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2, 3]) {
      %p: f32[2, 3] = Softmax(%x) {axis = -1}
      %c1: f32[2, 3] = Cast(%p) {to = 1}
      %c2: f32[2, 3] = Cast(%c1) {to = 1}
      %h: f16[2, 3] = Cast(%c2) {to = 10}
      return %h
    })");
  ASSERT_TRUE(runIdiom(*g, createIdentityRemovalPass()));
  EXPECT_THAT(ops(*g), ElementsAre("Softmax", "Cast"));
  EXPECT_EQ(producerOf(*g, "h").input(0)->name(), "p");
}

// ONNX Runtime's quantize_dynamic: Q and K of one DynamicQuantizeLinear,
// each MatMulInteger -> Cast -> Mul(Mul(s, sw)) -> Add(b); per-tensor
// weight zero points and scales that differ between the two.
constexpr const char* kQuantizedProjections = R"(
  graph @g(%x: f32[1, 4, 8]) opset(ai.onnx = 14) {
    %wq = const i8[8, 8] splat(3)
    %wk = const i8[8, 6] splat(-2)
    %zq = const i8[] [1]
    %zk = const i8[] [-1]
    %sq = const f32[] [0.5]
    %sk = const f32[] [0.25]
    %bq = const f32[8] splat(1.0)
    %bk = const f32[6] splat(2.0)
    %q8, %s, %z = DynamicQuantizeLinear(%x)
    %aq = MatMulInteger(%q8, %wq, %z, %zq)
    %fq = Cast(%aq) {to = 1}
    %cq = Mul(%s, %sq)
    %mq = Mul(%fq, %cq)
    %q = Add(%mq, %bq)
    %ak = MatMulInteger(%q8, %wk, %z, %zk)
    %fk = Cast(%ak) {to = 1}
    %ck = Mul(%sk, %s)
    %mk = Mul(%ck, %fk)
    %k = Add(%bk, %mk)
    return %q, %k
  })";

/// The two chains become one, their constants side by side per column
/// (zero points 1 x 8 then -1 x 6, scales likewise), and a Split into q
/// and k; the quantization stays one node.
TEST(SiblingMatMuls, MergesOnnxRuntimesQuantizedProjections) {
  auto g = parseGraphOrThrow(kQuantizedProjections);
  ASSERT_TRUE(runIdiom(*g, createSiblingMatMulsPass()));
  EXPECT_THAT(ops(*g), ::testing::UnorderedElementsAre("DynamicQuantizeLinear", "MatMulInteger",
                                                       "Cast", "Mul", "Mul", "Add", "Split"));
  const Node& split = producerOf(*g, "q");
  EXPECT_EQ(split.output(1)->name(), "k");
  const Node& add = *split.input(0)->producer();
  const Node& mul = *add.input(0)->producer();
  const Node& cast = *mul.input(0)->producer();
  const Node& mmi = *cast.input(0)->producer();
  EXPECT_THAT(mmi.input(1)->initializer()->dims(), ElementsAre(8, 14));
  const Tensor& zeros = *mmi.input(3)->initializer();
  EXPECT_THAT(zeros.dims(), ElementsAre(14));
  EXPECT_EQ(zeros.elementAsDouble(7), 1.0);
  EXPECT_EQ(zeros.elementAsDouble(8), -1.0);
  const Tensor& scales = *mul.input(1)->producer()->input(1)->initializer();
  EXPECT_EQ(scales.elementAsDouble(0), 0.5);
  EXPECT_EQ(scales.elementAsDouble(13), 0.25);
}

/// Negative: a chain whose scale Mul has another reader keeps its shape
/// (the merged Mul would not compute that reader's value); with one branch
/// left there is nothing to merge.
TEST(SiblingMatMuls, DoesNotMergeAChainWithAnOutsideReader) {
  std::string text = kQuantizedProjections;
  replace(text, "return %q, %k", "return %q, %k, %ck");
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runIdiom(*g, createSiblingMatMulsPass()));
  EXPECT_EQ(g->numNodes(), 11u);
}

//===--- Redundant ops around masks ----------------------------------------===//

// DistilBERT's mask helper once its shapes are fixed: Flatten, a Gather of
// every element in order, two Reshapes, an And with all true, an Expand.
constexpr const char* kMaskHelper = R"(
  graph @g(%m: bool[1, 4]) opset(ai.onnx = 14) {
    %idx = const i64[1, 1, 1, 4] [0, 1, 2, 3]
    %flat = const i64[1] [4]
    %shape = const i64[4] [1, 1, 1, 4]
    %ones = const bool[1, 1, 4, 1] splat(true)
    %size = const i64[4] [1, 1, 4, 4]
    %f = Flatten(%m) {axis = 2}
    %g = Gather(%f, %idx) {axis = 0}
    %r1 = Reshape(%g, %flat)
    %r2 = Reshape(%r1, %shape)
    %a = And(%ones, %r2)
    %y = Expand(%a, %size)
    return %y
  })";

/// The copies go: one Reshape of the mask, one Expand to [1, 1, 4, 4]; y
/// keeps its name.
TEST(RedundantOps, MaskHelperBecomesOneReshapeAndOneExpand) {
  auto g = parseGraphOrThrow(kMaskHelper);
  StatusOr<bool> changed = createRedundantOpsPass()->run(*g);
  ASSERT_TRUE(changed.isOk() && *changed);
  // Later rounds of the pipeline take what one round's rewrites made.
  while (*createRedundantOpsPass()->run(*g)) {
  }
  EXPECT_TRUE(createDeadCodeEliminationPass()->run(*g).isOk());
  EXPECT_THAT(ops(*g), ::testing::UnorderedElementsAre("Reshape", "Expand"));
  const Node& expand = producerOf(*g, "y");
  EXPECT_EQ(expand.opType(), "Expand");
  EXPECT_EQ(expand.input(0)->producer()->input(0)->name(), "m");
}

/// Negative: a Gather that reverses the elements moves them, and a
/// Reshape whose input another node reads cannot absorb it.
TEST(RedundantOps, DoesNotRemoveAReorderingGatherOrASharedReshape) {
  std::string text = kMaskHelper;
  replace(text, "[0, 1, 2, 3]", "[3, 2, 1, 0]");
  replace(text, "return %y", "return %y, %r1");
  auto g = parseGraphOrThrow(text);
  (void)runIdiom(*g, createRedundantOpsPass());
  EXPECT_THAT(ops(*g), ::testing::Contains("Gather"));
  EXPECT_EQ(producerOf(*g, "r2").input(0)->name(), "r1");
}

}  // namespace
}  // namespace subgraph
