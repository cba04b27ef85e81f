//===- tests/core/pass_float16_compute_test.cpp - f16/bf16 compute in f32 -===//
//
// Each test draws a tiny graph, runs the float16-compute pass once, and
// compares the printed result with the expected graph. Does... tests name
// what must stay as it is and why.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/float16_compute.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"

namespace subgraph {
namespace {

using ::testing::HasSubstr;

// Runs the pass once; returns `changed` and checks the graph stays valid.
bool runPass(Graph& g, std::string* summary = nullptr) {
  auto pass = createFloat16ComputePass();
  StatusOr<bool> changed = pass->run(g);
  EXPECT_TRUE(changed.isOk()) << changed.status().message();
  Status valid = verify(g);
  EXPECT_TRUE(valid.isOk()) << valid.message() << "\n" << printGraph(g);
  if (summary) *summary = pass->lastRunSummary();
  return changed.isOk() && *changed;
}

// The canonical text of `text`, to compare graphs as printed.
std::string canonical(const char* text) { return printGraph(*parseGraphOrThrow(text)); }

//   %x: f32 -> Cast(f16) -> Cast(f32) -> Relu -> %y
/// The f32 -> f16 -> f32 pair a converter leaves folds: Relu reads %x.
TEST(Float16Compute, FoldsCancellingCastPair) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %h: f16[4] = Cast(%x) {to = 10}
      %f: f32[4] = Cast(%h) {to = 1}
      %y: f32[4] = Relu(%f) @relu
      return %y
    })");
  std::string summary;
  EXPECT_TRUE(runPass(*g, &summary));
  EXPECT_EQ(printGraph(*g), canonical(R"(
    graph @g(%x: f32[4]) {
      %y: f32[4] = Relu(%x) @relu
      return %y
    })"));
  EXPECT_THAT(summary, HasSubstr("1 Cast pairs folded"));
}

//   %x: f32 -> Cast(f16) -> %h -> Cast(f32) -> Relu -> %y
//                              -> Cast(f32) -> %z (graph output)
/// Every reader of %h widens it again, so none sees the rounded value: both
/// pairs fold, and the Relu takes the graph output's name "z".
TEST(Float16Compute, FoldsCastPairWithTwoWideningReaders) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %r: f32[4] = Relu(%x) @relu
      %h: f16[4] = Cast(%r) {to = 10}
      %f: f32[4] = Cast(%h) {to = 1}
      %y: f32[4] = Neg(%f) @neg
      %z: f32[4] = Cast(%h) {to = 1}
      return %y, %z
    })");
  std::string summary;
  EXPECT_TRUE(runPass(*g, &summary));
  EXPECT_EQ(printGraph(*g), canonical(R"(
    graph @g(%x: f32[4]) {
      %z: f32[4] = Relu(%x) @relu
      %y: f32[4] = Neg(%z) @neg
      return %y, %z
    })"));
  EXPECT_THAT(summary, HasSubstr("2 Cast pairs folded"));
}

//   %x: f32 -> Cast(f16) -> Conv(w: f16) -> Cast(f32) -> %y
/// An f16 Conv between converter Casts computes in f32: it reads %x, its
/// weight is converted once to f32, and no Cast is left.
TEST(Float16Compute, ComputesF16ConvInF32) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 1, 3, 3]) {
      %w = const f16[1, 1, 1, 1] [0.5]
      %h: f16[1, 1, 3, 3] = Cast(%x) {to = 10}
      %c: f16[1, 1, 3, 3] = Conv(%h, %w) @conv
      %y: f32[1, 1, 3, 3] = Cast(%c) {to = 1}
      return %y
    })");
  EXPECT_TRUE(runPass(*g));
  EXPECT_EQ(printGraph(*g), canonical(R"(
    graph @g(%x: f32[1, 1, 3, 3]) {
      %w = const f32[1, 1, 1, 1] [0.5]
      %y: f32[1, 1, 3, 3] = Conv(%x, %w) @conv
      return %y
    })"));
}

//   %x: f16 (graph input) -> Relu -> %y: f16 (graph output)
/// Graph inputs and outputs keep names and types: one Cast widens at the
/// input, one narrows at the output, and Relu computes in f32 between.
TEST(Float16Compute, KeepsF16GraphInputAndOutputTypes) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f16[4]) {
      %y: f16[4] = Relu(%x) @relu
      return %y
    })");
  EXPECT_TRUE(runPass(*g));
  EXPECT_EQ(printGraph(*g), canonical(R"(
    graph @g(%x: f16[4]) {
      %x_f32: f32[4] = Cast(%x) {to = 1}
      %y_f32: f32[4] = Relu(%x_f32) @relu
      %y: f16[4] = Cast(%y_f32) {to = 10}
      return %y
    })"));
}

//   %w: bf16 (initializer) -> MatMul (twice), and -> Identity -> %wout
/// A bf16 weight read by two MatMuls and by a graph output is converted once
/// into a new f32 initializer; the bf16 one stays for the output.
TEST(Float16Compute, ConvertsSharedBf16WeightOnce) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 2]) {
      %w = const bf16[2, 2] [1, 2, 3, 4]
      %a: bf16[1, 2] = Cast(%x) {to = 16}
      %m1: bf16[1, 2] = MatMul(%a, %w) @m1
      %m2: bf16[1, 2] = MatMul(%m1, %w) @m2
      %y: f32[1, 2] = Cast(%m2) {to = 1}
      return %y, %w
    })");
  EXPECT_TRUE(runPass(*g));
  EXPECT_EQ(printGraph(*g), canonical(R"(
    graph @g(%x: f32[1, 2]) {
      %w = const bf16[2, 2] [1, 2, 3, 4]
      %w_f32 = const f32[2, 2] [1, 2, 3, 4]
      %m1: f32[1, 2] = MatMul(%x, %w_f32) @m1
      %y: f32[1, 2] = MatMul(%m1, %w_f32) @m2
      return %y, %w
    })"));
}

//   %i: i64 -> Cast(i32) -> Cast(i64) -> %j;  %h: f16 -> Neg -> %n
/// An integer Cast pair is not an identity (it truncates), so it stays even
/// in a graph the pass rewrites.
TEST(Float16Compute, DoesNotFoldIntegerCastPair) {
  const char* text = R"(
    graph @g(%i: i64[2], %h: f16[2]) {
      %t: i32[2] = Cast(%i) {to = 6}
      %j: i64[2] = Cast(%t) {to = 7}
      %n: f16[2] = Neg(%h)
      return %j, %n
    })";
  auto g = parseGraphOrThrow(text);
  EXPECT_TRUE(runPass(*g));  // the Neg is rewritten
  EXPECT_NE(g->findValue("t"), nullptr);
  EXPECT_EQ(g->findValue("j")->producer()->input(0), g->findValue("t"));
}

//   %x: f32 -> Cast(f16) -> %h (graph output) -> Cast(f32) -> Relu -> %y
/// The rounded %h is also a graph output: skipping the rounding for Relu
/// would give two readers of %h two different numbers, so the pair stays.
TEST(Float16Compute, DoesNotFoldCastPairWhoseMiddleHasAnotherReader) {
  const char* text = R"(
    graph @g(%x: f32[4]) {
      %h: f16[4] = Cast(%x) {to = 10}
      %f: f32[4] = Cast(%h) {to = 1}
      %y: f32[4] = Relu(%f)
      return %y, %h
    })";
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runPass(*g));
  EXPECT_EQ(printGraph(*g), canonical(text));
}

//   %x: f16 -> Shape -> %s
/// Shape does not compute on floats; it keeps reading the f16 input, and
/// nothing is inserted for it.
TEST(Float16Compute, DoesNotWidenForShape) {
  const char* text = R"(
    graph @g(%x: f16[2, 3]) {
      %s: i64[2] = Shape(%x)
      return %s
    })";
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runPass(*g));
  EXPECT_EQ(printGraph(*g), canonical(text));
}

//   %x: f32 -> Relu -> %y
/// A graph without f16/bf16 values is left exactly as it is.
TEST(Float16Compute, DoesNotTouchF32Graph) {
  const char* text = R"(
    graph @g(%x: f32[4]) {
      %h: f64[4] = Cast(%x) {to = 11}
      %y: f32[4] = Cast(%h) {to = 1}
      return %y
    })";
  auto g = parseGraphOrThrow(text);
  EXPECT_FALSE(runPass(*g));
  EXPECT_EQ(printGraph(*g), canonical(text));
}

}  // namespace
}  // namespace subgraph
