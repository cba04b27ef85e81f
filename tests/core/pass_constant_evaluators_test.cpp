//===- tests/core/pass_constant_evaluators_test.cpp - Constant evaluators -===//
//
// The evaluators behind constant folding, one op at a time: each test writes
// a graph with a node named `n` whose inputs are constants, evaluates `n`,
// and checks the exact result, including ONNX's edge cases (negative Slice
// steps, negative Gather indices, truncating integer division, Python-style
// Mod) and the refusals (undefined results, results over the limit).
// A randomized test checks broadcasting against a naive oracle.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/constant_evaluators.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <random>

#include "subgraph/ir/text_format.h"
#include "subgraph/zoo/random.h"

namespace subgraph {
namespace {

using ::testing::HasSubstr;

/// Parses `text` and evaluates its node named "n" on its constant inputs.
StatusOr<std::vector<Tensor>> evaluateN(std::string_view text, int64_t limit = 1 << 20) {
  auto g = parseGraphOrThrow(text);
  Node* n = g->findNode("n");
  if (!n) throw Error("test graph has no node named 'n'");
  std::vector<const Tensor*> inputs;
  for (Value* v : n->inputs()) inputs.push_back(v ? v->initializer() : nullptr);
  return evaluateConstantNode(*n, inputs, {limit});
}

/// Evaluates node "n" and returns its single result; fails the test on error.
Tensor resultOf(std::string_view text) {
  StatusOr<std::vector<Tensor>> r = evaluateN(text);
  if (!r.isOk()) throw Error(r.status());
  EXPECT_EQ(r->size(), 1u);
  return r->front();
}

std::vector<double> doublesOf(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numElements(); ++i) v.push_back(t.elementAsDouble(i));
  return v;
}

using Ints = std::vector<int64_t>;

//   i64[5] [0..4] -> Slice(start -1, end INT64_MIN, step -2) -> [4, 2, 0]
/// A negative step walks backwards; an end below -dim clamps to "before 0".
TEST(ConstantEvaluators, SlicesWithNegativeStep) {
  Tensor t = resultOf(R"(graph @g() {
    %x = const i64[5] [0, 1, 2, 3, 4]
    %s = const i64[1] [-1]
    %e = const i64[1] [-9223372036854775808]
    %a = const i64[1] [0]
    %st = const i64[1] [-2]
    %y = Slice(%x, %s, %e, %a, %st) @n
    return %y })");
  EXPECT_EQ(t.dims(), (Ints{3}));
  EXPECT_EQ(t.toInt64Vector(), (Ints{4, 2, 0}));
}

//   i64[2, 3] -> Slice(axes [1], starts [1], ends [100]) -> [2, 2]
/// Ends past the dim clamp; unlisted axes are kept whole.
TEST(ConstantEvaluators, SlicesOneAxisWithClampedEnd) {
  Tensor t = resultOf(R"(graph @g() {
    %x = const i64[2, 3] [0, 1, 2, 3, 4, 5]
    %s = const i64[1] [1]
    %e = const i64[1] [100]
    %a = const i64[1] [1]
    %y = Slice(%x, %s, %e, %a) @n
    return %y })");
  EXPECT_EQ(t.dims(), (Ints{2, 2}));
  EXPECT_EQ(t.toInt64Vector(), (Ints{1, 2, 4, 5}));
}

//   i64[2, 3] -> Gather(indices [-1, 0], axis 1) -> [2, 2]
/// Negative indices count from the end of the gathered axis.
TEST(ConstantEvaluators, GathersWithNegativeIndices) {
  Tensor t = resultOf(R"(graph @g() {
    %x = const i64[2, 3] [0, 1, 2, 3, 4, 5]
    %i = const i64[2] [-1, 0]
    %y = Gather(%x, %i) {axis = 1} @n
    return %y })");
  EXPECT_EQ(t.dims(), (Ints{2, 2}));
  EXPECT_EQ(t.toInt64Vector(), (Ints{2, 0, 5, 3}));
}

//   i64[3] -> Gather(indices [3]) -> error
/// An index out of range is inconsistent input, reported with the index.
TEST(ConstantEvaluators, RejectsGatherIndexOutOfRange) {
  auto r = evaluateN(R"(graph @g() {
    %x = const i64[3] [0, 1, 2]
    %i = const i64[] [3]
    %y = Gather(%x, %i) @n
    return %y })");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("Gather node 'n': index 3 is out of range"));
}

//   [2, 1] ++ [2, 2] on axis 1 -> [2, 3]
/// Concat interleaves rows from each part along the axis.
TEST(ConstantEvaluators, ConcatenatesOnInnerAxis) {
  Tensor t = resultOf(R"(graph @g() {
    %a = const f32[2, 1] [1.0, 2.0]
    %b = const f32[2, 2] [10.0, 11.0, 20.0, 21.0]
    %y = Concat(%a, %b) {axis = -1} @n
    return %y })");
  EXPECT_EQ(t.dims(), (Ints{2, 3}));
  EXPECT_EQ(doublesOf(t), (std::vector<double>{1, 10, 11, 2, 20, 21}));
}

//   [2, 3] -> Transpose -> [3, 2]
/// Transpose without perm reverses the axes.
TEST(ConstantEvaluators, TransposesWithDefaultPerm) {
  Tensor t = resultOf(R"(graph @g() {
    %x = const i32[2, 3] [0, 1, 2, 3, 4, 5]
    %y = Transpose(%x) @n
    return %y })");
  EXPECT_EQ(t.dims(), (Ints{3, 2}));
  EXPECT_EQ(t.toInt64Vector(), (Ints{0, 3, 1, 4, 2, 5}));
}

//   [2, 3, 4] -> Reshape([0, -1]) -> [2, 12]
/// 0 copies the input dim and -1 takes what is left.
TEST(ConstantEvaluators, ReshapesWithZeroAndMinusOne) {
  Tensor t = resultOf(R"(graph @g() {
    %x = const f32[2, 3, 4] splat(1.0)
    %s = const i64[2] [0, -1]
    %y = Reshape(%x, %s) @n
    return %y })");
  EXPECT_EQ(t.dims(), (Ints{2, 12}));
}

//   [2, 1] -> Squeeze([-1]) -> [2];  [3] -> Unsqueeze([0, -1]) -> [1, 3, 1]
/// Squeeze and Unsqueeze take axes as an input (opset 13+), negative ones
/// relative to the input and output rank respectively.
TEST(ConstantEvaluators, SqueezesAndUnsqueezesWithAxesInput) {
  Tensor squeezed = resultOf(R"(graph @g() {
    %x = const i64[2, 1] [7, 8]
    %a = const i64[1] [-1]
    %y = Squeeze(%x, %a) @n
    return %y })");
  EXPECT_EQ(squeezed.dims(), (Ints{2}));
  Tensor unsqueezed = resultOf(R"(graph @g() {
    %x = const i64[3] [1, 2, 3]
    %a = const i64[2] [0, -1]
    %y = Unsqueeze(%x, %a) @n
    return %y })");
  EXPECT_EQ(unsqueezed.dims(), (Ints{1, 3, 1}));
  EXPECT_EQ(unsqueezed.toInt64Vector(), (Ints{1, 2, 3}));
}

//   [2, 3] -> Squeeze([1]) -> error
/// Squeezing a dim that is not 1 is inconsistent.
TEST(ConstantEvaluators, RejectsSqueezeOfNonUnitDim) {
  auto r = evaluateN(R"(graph @g() {
    %x = const i64[2, 3] splat(1)
    %a = const i64[1] [1]
    %y = Squeeze(%x, %a) @n
    return %y })");
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.status().message(), HasSubstr("it is not 1"));
}

//   f32 [-1.7, 2.9] -> Cast(i32) -> [-1, 2];  1e10 -> Cast(i32) -> refused
/// Float-to-int casts truncate toward zero; out-of-range values are
/// undefined in ONNX and are refused rather than guessed.
TEST(ConstantEvaluators, CastsFloatToIntByTruncation) {
  Tensor t = resultOf(R"(graph @g() {
    %x = const f32[2] [-1.7, 2.9]
    %y = Cast(%x) {to = 6} @n
    return %y })");
  EXPECT_EQ(t.dtype(), DataType::kInt32);
  EXPECT_EQ(t.toInt64Vector(), (Ints{-1, 2}));
  auto r = evaluateN(R"(graph @g() {
    %x = const f32[1] [1e10]
    %y = Cast(%x) {to = 6} @n
    return %y })");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
}

//   f32 [1/3, 65520, 6e-8, -0.0] -> Cast(f16)
/// Casts to f16 round to nearest even, overflow to inf, and keep subnormals
/// and the sign of zero.
TEST(ConstantEvaluators, CastsToHalfWithRoundToNearestEven) {
  Tensor t = resultOf(R"(graph @g() {
    %x = const f32[4] [0.33333334, 65520.0, 6e-08, -0.0]
    %y = Cast(%x) {to = 10} @n
    return %y })");
  ASSERT_EQ(t.dtype(), DataType::kFloat16);
  std::vector<uint16_t> bits(4);
  std::memcpy(bits.data(), t.bytes().data(), 8);
  EXPECT_EQ(bits, (std::vector<uint16_t>{0x3555, 0x7c00, 0x0001, 0x8000}));
}

//   i64 [7, -7] / [2, 2] -> [3, -3];  x / 0 -> refused
/// Integer Div truncates toward zero; division by zero is not folded.
TEST(ConstantEvaluators, DividesIntegersTowardZero) {
  Tensor t = resultOf(R"(graph @g() {
    %a = const i64[2] [7, -7]
    %b = const i64[] [2]
    %y = Div(%a, %b) @n
    return %y })");
  EXPECT_EQ(t.toInt64Vector(), (Ints{3, -3}));
  auto r = evaluateN(R"(graph @g() {
    %a = const i64[1] [7]
    %b = const i64[1] [0]
    %y = Div(%a, %b) @n
    return %y })");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
}

//   [-7, 7] Mod [3, -3]: fmod=0 -> [2, -2];  fmod=1 -> [-1, 1]
/// Mod follows the divisor's sign by default and C's fmod with fmod=1.
TEST(ConstantEvaluators, ModFollowsDivisorSignUnlessFmod) {
  Tensor python = resultOf(R"(graph @g() {
    %a = const i64[2] [-7, 7]
    %b = const i64[2] [3, -3]
    %y = Mod(%a, %b) @n
    return %y })");
  EXPECT_EQ(python.toInt64Vector(), (Ints{2, -2}));
  Tensor c = resultOf(R"(graph @g() {
    %a = const i64[2] [-7, 7]
    %b = const i64[2] [3, -3]
    %y = Mod(%a, %b) {fmod = 1} @n
    return %y })");
  EXPECT_EQ(c.toInt64Vector(), (Ints{-1, 1}));
}

//   Range(5, 0, -2) -> [5, 3, 1];  Range(0.0, 1.0, 0.25) -> [0, .25, .5, .75]
/// Range counts ceil((limit - start) / delta) elements in either direction.
TEST(ConstantEvaluators, RangesUpAndDown) {
  Tensor down = resultOf(R"(graph @g() {
    %s = const i64[] [5]
    %l = const i64[] [0]
    %d = const i64[] [-2]
    %y = Range(%s, %l, %d) @n
    return %y })");
  EXPECT_EQ(down.toInt64Vector(), (Ints{5, 3, 1}));
  Tensor up = resultOf(R"(graph @g() {
    %s = const f32[] [0.0]
    %l = const f32[] [1.0]
    %d = const f32[] [0.25]
    %y = Range(%s, %l, %d) @n
    return %y })");
  EXPECT_EQ(doublesOf(up), (std::vector<double>{0, 0.25, 0.5, 0.75}));
}

//   Where(cond [2, 1], X [1, 3], Y scalar) -> [2, 3]
/// Where broadcasts all three inputs.
TEST(ConstantEvaluators, WhereBroadcastsThreeWays) {
  Tensor t = resultOf(R"(graph @g() {
    %c = const bool[2, 1] [true, false]
    %x = const i64[1, 3] [1, 2, 3]
    %z = const i64[] [0]
    %y = Where(%c, %x, %z) @n
    return %y })");
  EXPECT_EQ(t.dims(), (Ints{2, 3}));
  EXPECT_EQ(t.toInt64Vector(), (Ints{1, 2, 3, 0, 0, 0}));
}

//   [3, 1] -> Expand([2, 1, 2]) -> [2, 3, 2];  [1, 2] -> Tile([3]) -> [6]
/// Expand broadcasts to the larger shape; Tile repeats.
TEST(ConstantEvaluators, ExpandsAndTiles) {
  Tensor e = resultOf(R"(graph @g() {
    %x = const i64[3, 1] [1, 2, 3]
    %s = const i64[3] [2, 1, 2]
    %y = Expand(%x, %s) @n
    return %y })");
  EXPECT_EQ(e.dims(), (Ints{2, 3, 2}));
  EXPECT_EQ(e.toInt64Vector(), (Ints{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  Tensor t = resultOf(R"(graph @g() {
    %x = const i64[2] [1, 2]
    %r = const i64[1] [3]
    %y = Tile(%x, %r) @n
    return %y })");
  EXPECT_EQ(t.toInt64Vector(), (Ints{1, 2, 1, 2, 1, 2}));
}

//   Shape(start = 1) and Shape(end = -1) of a [2, 3, 4] constant
/// Shape's start/end (opset 15) select a range of dims.
TEST(ConstantEvaluators, ShapeHonoursStartAndEnd) {
  Tensor tail = resultOf(R"(graph @g() {
    %x = const f32[2, 3, 4] splat(0.0)
    %y = Shape(%x) {start = 1} @n
    return %y })");
  EXPECT_EQ(tail.toInt64Vector(), (Ints{3, 4}));
  Tensor head = resultOf(R"(graph @g() {
    %x = const f32[2, 3, 4] splat(0.0)
    %y = Shape(%x) {end = -1} @n
    return %y })");
  EXPECT_EQ(head.toInt64Vector(), (Ints{2, 3}));
}

//   f32 [1, 2] < f32 [2, 2] -> bool [true, false]
/// Comparisons produce bool.
TEST(ConstantEvaluators, ComparesIntoBool) {
  Tensor t = resultOf(R"(graph @g() {
    %a = const f32[2] [1.0, 2.0]
    %b = const f32[2] [2.0, 2.0]
    %y = Less(%a, %b) @n
    return %y })");
  EXPECT_EQ(t.dtype(), DataType::kBool);
  EXPECT_EQ(t.toInt64Vector(), (Ints{1, 0}));
}

//   ConstantOfShape([10, 10]) with a limit of 50 -> refused
/// The limit is checked before anything is allocated.
TEST(ConstantEvaluators, RefusesResultOverLimit) {
  auto r = evaluateN(R"(graph @g() {
    %s = const i64[2] [10, 10]
    %y = ConstantOfShape(%s) @n
    return %y })",
                     50);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(r.status().message(), HasSubstr("100 elements, over the limit of 50"));
}

/// Ops without an evaluator, and other domains, are kUnsupported.
TEST(ConstantEvaluators, KnowsWhichOpsItEvaluates) {
  EXPECT_TRUE(hasConstantEvaluator("", "Gather"));
  EXPECT_TRUE(hasConstantEvaluator("ai.onnx", "Shape"));
  EXPECT_FALSE(hasConstantEvaluator("", "Conv"));
  EXPECT_FALSE(hasConstantEvaluator("com.microsoft", "Gather"));
  auto r = evaluateN(R"(graph @g() {
    %x = const f32[1, 1, 1, 1] splat(1.0)
    %y = Conv(%x, %x) @n
    return %y })");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
}

/// Broadcast Add and Mul agree with a naive coordinate-by-coordinate oracle
/// on random shapes (rank up to 4, dims 1..3, random unit dims).
TEST(ConstantEvaluators, BroadcastMatchesNaiveOracleOnRandomShapes) {
  const uint64_t seed = std::random_device{}();
  std::cout << "[ seed     ] " << seed << "\n";
  SCOPED_TRACE("seed " + std::to_string(seed));
  zoo::SplitMix64 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    int64_t rank = static_cast<int64_t>(rng.below(5));
    Ints out(static_cast<size_t>(rank)), a, b;
    for (auto& d : out) d = 1 + static_cast<int64_t>(rng.below(3));
    // Each operand drops some leading dims and turns some dims into 1.
    auto operandDims = [&] {
      size_t keep = static_cast<size_t>(rng.below(static_cast<uint64_t>(rank) + 1));
      Ints dims(out.end() - static_cast<int64_t>(keep), out.end());
      for (auto& d : dims)
        if (rng.below(3) == 0) d = 1;
      return dims;
    };
    a = operandDims();
    b = operandDims();
    // The broadcast shape by numpy's rule, from the operands alone (both may
    // have dropped a dim of `out` or pinned it to 1).
    out.assign(std::max(a.size(), b.size()), 1);
    for (size_t i = 0; i < out.size(); ++i) {
      size_t fromEnd = out.size() - 1 - i;
      int64_t da = fromEnd < a.size() ? a[a.size() - 1 - fromEnd] : 1;
      int64_t db = fromEnd < b.size() ? b[b.size() - 1 - fromEnd] : 1;
      out[i] = std::max(da, db);
    }
    auto fill = [&](const Ints& dims) {
      int64_t n = 1;
      for (int64_t d : dims) n *= d;
      Ints v(static_cast<size_t>(n));
      for (auto& e : v) e = static_cast<int64_t>(rng.below(100)) - 50;
      return Tensor::fromVector<int64_t>(DataType::kInt64, dims, v);
    };
    Tensor ta = fill(a), tb = fill(b);
    Graph g;
    Value* va = g.addInitializer("a", ta);
    Value* vb = g.addInitializer("b", tb);
    const char* op = trial % 2 ? "Add" : "Mul";
    Node* n = g.addNode(op, {va, vb}, 1, {}, "n");
    std::vector<const Tensor*> inputs{&ta, &tb};
    StatusOr<std::vector<Tensor>> r = evaluateConstantNode(*n, inputs);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    const Tensor& got = r->front();
    ASSERT_EQ(got.dims(), out) << "trial " << trial;
    // Oracle: walk output coordinates, read each operand at the same
    // trailing coordinates with unit dims pinned to 0.
    auto at = [](const Tensor& t, const Ints& coord) {
      const Ints& dims = t.dims();
      int64_t index = 0;
      size_t offset = coord.size() - dims.size();
      for (size_t i = 0; i < dims.size(); ++i)
        index = index * dims[i] + (dims[i] == 1 ? 0 : coord[offset + i]);
      return t.elementAsInt(index);
    };
    for (int64_t i = 0; i < got.numElements(); ++i) {
      Ints coord(out.size());
      int64_t rest = i;
      for (size_t d = out.size(); d-- > 0;) {
        coord[d] = rest % out[d];
        rest /= out[d];
      }
      int64_t x = at(ta, coord), y = at(tb, coord);
      int64_t want = trial % 2 ? x + y : x * y;
      ASSERT_EQ(got.elementAsInt(i), want) << "trial " << trial << " element " << i;
    }
  }
}

}  // namespace
}  // namespace subgraph
