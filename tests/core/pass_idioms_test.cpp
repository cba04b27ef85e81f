//===- tests/core/pass_idioms_test.cpp - Exporters' idioms as single ops --===//
//
// Each test draws an idiom as an exporter writes it, runs one idiom pass
// and DCE, and checks the graph left: the ops in order and the new op's
// operands and attributes. DoesNot... tests say in one line why a near-miss
// must stay as it is. The numerics (each rewrite computes what the
// written-out form computes) are checked end to end by
// tests/cli/run_test.cpp (IdiomsKeepTheResult).
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/passes/clamp_idiom.h"
#include "subgraph/passes/dead_code_elimination.h"
#include "subgraph/passes/hard_swish_idiom.h"
#include "subgraph/passes/layer_norm_idiom.h"

namespace subgraph {
namespace {

using ::testing::ElementsAre;

// Runs `pass` then DCE on `g`; returns whether the pass changed it.
bool runIdiom(Graph& g, std::unique_ptr<Pass> pass) {
  StatusOr<bool> changed = pass->run(g);
  EXPECT_TRUE(changed.isOk()) << changed.status().message();
  EXPECT_TRUE(createDeadCodeEliminationPass()->run(g).isOk());
  Status valid = verify(g);
  EXPECT_TRUE(valid.isOk()) << valid.message() << "\n" << printGraph(g);
  return changed.isOk() && *changed;
}

// Op types in a topological order.
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

// PyTorch's LayerNorm before opset 17, over the last axis of [2, 4].
constexpr const char* kWrittenOutLayerNorm = R"(
  graph @g(%x: f32[2, 4]) opset(ai.onnx = 13) {
    %two = const f32[] [2.0]
    %eps = const f32[] [1e-5]
    %gamma = const f32[4] [1.0, 2.0, 3.0, 4.0]
    %beta = const f32[4] [0.5, 0.5, 0.5, 0.5]
    %m = ReduceMean(%x) {axes = [-1], keepdims = 1}
    %d = Sub(%x, %m)
    %p = Pow(%d, %two)
    %v = ReduceMean(%p) {axes = [-1], keepdims = 1}
    %e = Add(%v, %eps)
    %s = Sqrt(%e)
    %n = Div(%d, %s)
    %g1 = Mul(%n, %gamma)
    %y = Add(%g1, %beta) @last
    return %y
  })";

//   x -> ReduceMean -> Sub -> Pow -> ReduceMean -> Add(eps) -> Sqrt -> Div
//        -> Mul(gamma) -> Add(beta) -> y
/// The written-out form becomes one LayerNormalization keeping y's name,
/// its epsilon, gamma and beta; the opset rises to 17.
TEST(LayerNormIdiom, ReplacesWrittenOutLayerNorm) {
  auto g = parseGraphOrThrow(kWrittenOutLayerNorm);
  ASSERT_TRUE(runIdiom(*g, createLayerNormIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("LayerNormalization"));
  const Node& ln = producerOf(*g, "y");
  EXPECT_EQ(ln.name(), "last");
  EXPECT_EQ(ln.input(0)->name(), "x");
  EXPECT_EQ(ln.input(1)->name(), "gamma");
  EXPECT_EQ(ln.input(2)->name(), "beta");
  EXPECT_FLOAT_EQ(ln.attr("epsilon")->asFloat(), 1e-5f);
  EXPECT_EQ(ln.attr("axis")->asInt(), -1);
  EXPECT_EQ(g->opsetImports().at(""), 17);
}

/// Without the affine tail, and with Mul(d, d) as the square, the scale is
/// a new constant of ones and there is no bias.
TEST(LayerNormIdiom, ReplacesBareNormalizationWithMulSquare) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[3, 8]) opset(ai.onnx = 17) {
      %eps = const f32[1] [1e-6]
      %m = ReduceMean(%x) {axes = [1]}
      %d = Sub(%x, %m)
      %p = Mul(%d, %d)
      %v = ReduceMean(%p) {axes = [1]}
      %e = Add(%eps, %v)
      %s = Sqrt(%e)
      %y = Div(%d, %s)
      return %y
    })");
  ASSERT_TRUE(runIdiom(*g, createLayerNormIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("LayerNormalization"));
  const Node& ln = producerOf(*g, "y");
  ASSERT_TRUE(ln.input(1)->isInitializer());
  EXPECT_THAT(ln.input(1)->initializer()->dims(), ElementsAre(8));
  EXPECT_EQ(ln.input(1)->initializer()->elementAsDouble(7), 1.0);
  EXPECT_EQ(ln.input(2), nullptr);
  EXPECT_FLOAT_EQ(ln.attr("epsilon")->asFloat(), 1e-6f);
}

/// Negative: the centred value d is also a graph output, so the pattern's
/// inside is visible and the nodes must stay.
TEST(LayerNormIdiom, DoesNotReplaceWhenAnIntermediateIsRead) {
  std::string text = kWrittenOutLayerNorm;
  text.replace(text.find("return %y"), 9, "return %y, %d");
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runIdiom(*g, createLayerNormIdiomPass()));
  EXPECT_EQ(g->numNodes(), 9u);
}

/// Negative: a reduction over another axis than the last is not a layer
/// norm over the last axis.
TEST(LayerNormIdiom, DoesNotReplaceReductionOverAnotherAxis) {
  std::string text = kWrittenOutLayerNorm;
  text.replace(text.find("axes = [-1]"), 11, "axes = [0]");
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runIdiom(*g, createLayerNormIdiomPass()));
  EXPECT_EQ(g->numNodes(), 9u);
}

//   x -> LeakyRelu -> Max(., c) -> y
/// tf2onnx's Max with a scalar constant becomes Clip(x, c) with no upper
/// bound; Min(x, c) becomes Clip with no lower bound.
TEST(ClampIdiom, ReplacesMaxAndMinByAConstant) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) opset(ai.onnx = 13) {
      %lo = const f32[1] [-0.5]
      %hi = const f32[] [6.0]
      %a = LeakyRelu(%x) {alpha = 0.2}
      %b = Max(%a, %lo) @floor
      %y = Min(%hi, %x) @ceiling
      return %b, %y
    })");
  ASSERT_TRUE(runIdiom(*g, createClampIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("LeakyRelu", "Clip", "Clip"));
  const Node& floor = producerOf(*g, "b");
  EXPECT_EQ(floor.name(), "floor");
  EXPECT_EQ(floor.input(1)->initializer()->elementAsDouble(0), -0.5);
  EXPECT_TRUE(floor.input(1)->initializer()->dims().empty()) << "Clip's bounds are scalars";
  EXPECT_TRUE(floor.numInputs() < 3 || floor.input(2) == nullptr);
  const Node& ceiling = producerOf(*g, "y");
  EXPECT_EQ(ceiling.input(0)->name(), "x");
  EXPECT_EQ(ceiling.input(1), nullptr);
  EXPECT_EQ(ceiling.input(2)->initializer()->elementAsDouble(0), 6.0);
}

/// Min(Max(x, 0), 6) -- ReLU6 written with two clamps -- is one Clip(0, 6).
TEST(ClampIdiom, MergesNestedClamps) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) opset(ai.onnx = 13) {
      %zero = const f32[] [0.0]
      %six = const f32[] [6.0]
      %a = Max(%x, %zero)
      %y = Min(%a, %six)
      return %y
    })");
  ASSERT_TRUE(runIdiom(*g, createClampIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("Clip"));
  const Node& clip = producerOf(*g, "y");
  EXPECT_EQ(clip.input(0)->name(), "x");
  EXPECT_EQ(clip.input(1)->initializer()->elementAsDouble(0), 0.0);
  EXPECT_EQ(clip.input(2)->initializer()->elementAsDouble(0), 6.0);
}

/// Negative: Max of two tensors, or by a constant of several values, is
/// not a clamp; nor is a Max on opset 10, whose Clip took attributes.
TEST(ClampIdiom, DoesNotReplaceMaxOfTensorsOrVectors) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2], %z: f32[2]) opset(ai.onnx = 13) {
      %c = const f32[2] [0.0, 1.0]
      %a = Max(%x, %z)
      %y = Max(%a, %c)
      return %y
    })");
  EXPECT_FALSE(runIdiom(*g, createClampIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("Max", "Max"));
  auto old = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) opset(ai.onnx = 10) {
      %c = const f32[] [0.0]
      %y = Max(%x, %c)
      return %y
    })");
  EXPECT_FALSE(runIdiom(*old, createClampIdiomPass()));
}

//   x -> Add(3) -> Clip(0, 6) -> Mul(x) -> Div(6) -> y   (PaddlePaddle)
/// Paddle's hard-swish becomes HardSwish(x); opset 13 rises to 14.
TEST(HardSwishIdiom, ReplacesPaddleHardSwish) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 2, 3, 3]) opset(ai.onnx = 13) {
      %three = const f32[] [3.0]
      %zero = const f32[] [0.0]
      %six = const f32[] [6.0]
      %a = Add(%x, %three)
      %r = Clip(%a, %zero, %six)
      %m = Mul(%x, %r)
      %y = Div(%m, %six) @hswish
      return %y
    })");
  ASSERT_TRUE(runIdiom(*g, createHardSwishIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("HardSwish"));
  EXPECT_EQ(producerOf(*g, "y").input(0)->name(), "x");
  EXPECT_EQ(g->opsetImports().at(""), 14);
}

/// Clip(x + 3, 0, 6) * (1/6) is HardSigmoid, and x * HardSigmoid(x) with
/// those constants is HardSwish.
TEST(HardSwishIdiom, ReplacesHardSigmoidThenGate) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) opset(ai.onnx = 14) {
      %three = const f32[] [3.0]
      %zero = const f32[] [0.0]
      %six = const f32[] [6.0]
      %sixth = const f32[] [0.16666667]
      %a = Add(%three, %x)
      %r = Clip(%a, %zero, %six)
      %h = Mul(%r, %sixth)
      %y = Mul(%h, %x)
      return %y
    })");
  ASSERT_TRUE(runIdiom(*g, createHardSwishIdiomPass()));
  EXPECT_THAT(ops(*g), ElementsAre("HardSwish"));
}

/// Negative: Clip(x + 3, 0, 6) / 6 whose ReLU6 is also read elsewhere must
/// stay, and a Clip to (0, 5) is no ReLU6.
TEST(HardSwishIdiom, DoesNotReplaceSharedOrOtherClips) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) opset(ai.onnx = 14) {
      %three = const f32[] [3.0]
      %zero = const f32[] [0.0]
      %five = const f32[] [5.0]
      %six = const f32[] [6.0]
      %a = Add(%x, %three)
      %r = Clip(%a, %zero, %six)
      %y = Div(%r, %six)
      %b = Add(%x, %three)
      %q = Clip(%b, %zero, %five)
      %z = Div(%q, %six)
      return %y, %r, %z
    })");
  EXPECT_FALSE(runIdiom(*g, createHardSwishIdiomPass()));
  EXPECT_EQ(g->numNodes(), 6u);
}

}  // namespace
}  // namespace subgraph
