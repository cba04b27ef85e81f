//===- tests/core/pass_constant_folding_test.cpp - Constant folding -------===//
//
// Each test draws a tiny graph, writes it in the text format, runs the
// constant folding pass once, and checks `changed`, the nodes left and the
// folded values. Negative tests (DoesNotFold...) say in one line why the
// graph must stay as it is.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/constant_folding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "subgraph/ir/shape_inference.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"

namespace subgraph {
namespace {

using ::testing::HasSubstr;

/// Runs the pass once and returns `changed`; a pass error fails the test.
bool runFolding(Graph& g, const ConstantFoldingOptions& options = {}) {
  auto pass = createConstantFoldingPass(options);
  StatusOr<bool> changed = pass->run(g);
  EXPECT_TRUE(changed.isOk()) << changed.status().message();
  Status valid = verify(g);
  EXPECT_TRUE(valid.isOk()) << valid.message() << "\n" << printGraph(g);
  return changed.isOk() && *changed;
}

/// The constant data of value `name`; fails the test if it is not constant.
std::vector<int64_t> intsOf(const Graph& g, std::string_view name) {
  const Value* v = g.findValue(name);
  EXPECT_NE(v, nullptr) << name;
  if (!v || !v->initializer()) {
    ADD_FAILURE() << "'" << name << "' is not a constant";
    return {};
  }
  return v->initializer()->toInt64Vector();
}

//   %x f32[2, 3, 4] -> Shape -> Gather(0) -> Unsqueeze --.
//                                          const [-1] ---+-> Concat -> %shape
//   %x ----------------------------------------------------> Reshape(%x, %shape) -> %y
/// The exporter chain that flattens a tensor folds to one constant shape.
TEST(ConstantFolding, FoldsShapeGatherUnsqueezeConcatIntoReshapeShape) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2, 3, 4]) {
      %i0 = const i64[] [0]
      %ax = const i64[1] [0]
      %m1 = const i64[1] [-1]
      %s = Shape(%x)
      %d0 = Gather(%s, %i0) {axis = 0}
      %u = Unsqueeze(%d0, %ax)
      %shape = Concat(%u, %m1) {axis = 0}
      %y = Reshape(%x, %shape) @flatten
      return %y
    })");
  EXPECT_TRUE(runFolding(*g));
  ASSERT_EQ(g->numNodes(), 1u);
  Node* reshape = g->findNode("flatten");
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->input(1)->name(), "shape");
  EXPECT_EQ(intsOf(*g, "shape"), (std::vector<int64_t>{2, -1}));
  // The chain's intermediate results were made by the pass and are gone.
  EXPECT_EQ(g->findValue("s"), nullptr);
  EXPECT_EQ(g->findValue("d0"), nullptr);
  EXPECT_EQ(g->findValue("u"), nullptr);
  // Constants that were there before are DCE's business.
  EXPECT_NE(g->findValue("i0"), nullptr);
}

//   %x f32[N, 3] -> Shape -> %s (graph output)
/// A Shape whose input has a symbolic dim is not a constant.
TEST(ConstantFolding, DoesNotFoldNonConstantShape) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[N, 3]) {
      %s = Shape(%x)
      return %s
    })");
  EXPECT_FALSE(runFolding(*g));
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_FALSE(g->findValue("s")->isInitializer());
}

//   %x f32[N, 128, 768] -> Shape -> Gather(1) -> %seq (graph output)
/// Picking a static dim out of a partly symbolic shape folds.
TEST(ConstantFolding, FoldsStaticDimPickedFromSymbolicShape) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[N, 128, 768]) {
      %one = const i64[] [1]
      %s = Shape(%x)
      %seq = Gather(%s, %one) {axis = 0}
      return %seq
    })");
  EXPECT_TRUE(runFolding(*g));
  // The folded value keeps its name and its graph output slot.
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0]->name(), "seq");
  EXPECT_EQ(intsOf(*g, "seq"), (std::vector<int64_t>{128}));
  EXPECT_EQ(g->findValue("seq")->type(), TensorType(DataType::kInt64, Shape{}));
}

//   %x f32[N, 128, 768] -> Shape -> Gather(0) -> %n (graph output)
/// The batch dim is symbolic, so a Gather of it stays.
TEST(ConstantFolding, DoesNotFoldGatherOfSymbolicDim) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[N, 128, 768]) {
      %zero = const i64[] [0]
      %s = Shape(%x)
      %n = Gather(%s, %zero) {axis = 0}
      return %n
    })");
  EXPECT_FALSE(runFolding(*g));
  EXPECT_EQ(g->numNodes(), 2u);
}

//   %x f32[N, 128, 768] -> Shape -> Slice[1:3] -> Concat(const [-1], .) -> %t
/// Partial shapes flow through Slice and Concat; the static part folds.
TEST(ConstantFolding, FoldsSliceAndConcatOfStaticPartOfSymbolicShape) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[N, 128, 768]) {
      %starts = const i64[1] [1]
      %ends = const i64[1] [3]
      %m1 = const i64[1] [-1]
      %s = Shape(%x)
      %tail = Slice(%s, %starts, %ends)
      %t = Concat(%m1, %tail) {axis = 0}
      return %t
    })");
  EXPECT_TRUE(runFolding(*g));
  EXPECT_EQ(intsOf(*g, "t"), (std::vector<int64_t>{-1, 128, 768}));
}

//   const [1, 4] -> Sqrt -> Mul(., 2) -> Neg -> Cast(i32) -> %y
/// Elementwise math on constants folds to the exact values.
TEST(ConstantFolding, FoldsElementwiseMathAndCast) {
  auto g = parseGraphOrThrow(R"(
    graph @g() {
      %a = const f32[2] [1.0, 4.0]
      %two = const f32[] [2.0]
      %r = Sqrt(%a)
      %m = Mul(%r, %two)
      %n = Neg(%m)
      %y = Cast(%n) {to = 6}
      return %y
    })");
  EXPECT_TRUE(runFolding(*g));
  EXPECT_EQ(g->numNodes(), 0u);
  const Tensor& y = *g->findValue("y")->initializer();
  EXPECT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(y.toInt64Vector(), (std::vector<int64_t>{-2, -4}));
}

//   Range(0, 4, 1) -> Equal(., 2) -> Where(., 10, %iota) -> %y
/// Mask-building subgraphs (Range, Equal, Where) fold.
TEST(ConstantFolding, FoldsRangeEqualWhere) {
  auto g = parseGraphOrThrow(R"(
    graph @g() {
      %start = const i64[] [0]
      %limit = const i64[] [4]
      %delta = const i64[] [1]
      %two = const i64[] [2]
      %ten = const i64[] [10]
      %iota = Range(%start, %limit, %delta)
      %eq = Equal(%iota, %two)
      %y = Where(%eq, %ten, %iota)
      return %y
    })");
  EXPECT_TRUE(runFolding(*g));
  EXPECT_EQ(intsOf(*g, "y"), (std::vector<int64_t>{0, 1, 10, 3}));
}

//   %x f32[2] -> Add(%x, const) -> %y
/// An Add with a graph input is not constant.
TEST(ConstantFolding, DoesNotFoldNodeWithNonConstantInput) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %c = const f32[2] splat(1.0)
      %y = Add(%x, %c)
      return %y
    })");
  EXPECT_FALSE(runFolding(*g));
  EXPECT_EQ(g->numNodes(), 1u);
}

//   const [2000, 1000] -> ConstantOfShape -> %z
/// A result over maxOutputElements stays a node, so the model file does not
/// grow by the size of the tensor.
TEST(ConstantFolding, DoesNotFoldResultOverMaxOutputElements) {
  auto g = parseGraphOrThrow(R"(
    graph @g() {
      %dims = const i64[2] [2000, 1000]
      %z = ConstantOfShape(%dims)
      return %z
    })");
  ConstantFoldingOptions options;
  options.maxOutputElements = 1000;
  auto pass = createConstantFoldingPass(options);
  StatusOr<bool> changed = pass->run(*g);
  ASSERT_TRUE(changed.isOk());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_THAT(pass->lastRunSummary(), HasSubstr("over 1000 elements"));
}

//   const [2, 3] -> ConstantOfShape{value = 7} -> %z
/// Under the limit, ConstantOfShape folds with its value attribute.
TEST(ConstantFolding, FoldsConstantOfShapeUnderLimit) {
  auto g = parseGraphOrThrow(R"(
    graph @g() {
      %dims = const i64[2] [2, 3]
      %z = ConstantOfShape(%dims) {value = i64[1] [7]}
      return %z
    })");
  EXPECT_TRUE(runFolding(*g));
  const Tensor& z = *g->findValue("z")->initializer();
  EXPECT_EQ(z.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(z.toInt64Vector(), std::vector<int64_t>(6, 7));
}

//   const f32[6] -> Reshape(., [4]) -> %y
/// A Reshape to a different element count is inconsistent: it stays, and
/// the summary names it.
TEST(ConstantFolding, DoesNotFoldInconsistentReshape) {
  auto g = parseGraphOrThrow(R"(
    graph @g() {
      %a = const f32[6] splat(1.0)
      %s = const i64[1] [4]
      %y = Reshape(%a, %s) @bad
      return %y
    })");
  auto pass = createConstantFoldingPass();
  StatusOr<bool> changed = pass->run(*g);
  ASSERT_TRUE(changed.isOk());
  EXPECT_FALSE(*changed);
  EXPECT_THAT(pass->lastRunSummary(), HasSubstr("Reshape node 'bad'"));
}

//   Constant{value_ints = [3, 4]} -> Mul(., 2) -> %y
/// A Constant node feeding a fold is folded first.
TEST(ConstantFolding, FoldsThroughConstantNodes) {
  auto g = parseGraphOrThrow(R"(
    graph @g() {
      %c = Constant() {value_ints = [3, 4]}
      %two = const i64[] [2]
      %y = Mul(%c, %two)
      return %y
    })");
  EXPECT_TRUE(runFolding(*g));
  EXPECT_EQ(g->numNodes(), 0u);
  EXPECT_EQ(intsOf(*g, "y"), (std::vector<int64_t>{6, 8}));
}

//   const -> Neg -> %dead (unused);  %x -> Relu -> %y
/// Dead nodes are not folded: that would only add a constant for DCE to
/// remove.
TEST(ConstantFolding, DoesNotFoldDeadNode) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %a = const f32[2] splat(1.0)
      %dead = Neg(%a)
      %y = Relu(%x)
      return %y
    })");
  EXPECT_FALSE(runFolding(*g));
  EXPECT_EQ(g->numNodes(), 2u);
}

//   %x f32[2, 3] -> Reshape(., const [3, 2]) -> %r (untyped) -> Shape -> %s
/// Shape inference types the Reshape's output, and its Shape folds.
TEST(ConstantFolding, FoldsShapeOfInferredStaticShape) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2, 3]) {
      %target = const i64[2] [3, 2]
      %r = Reshape(%x, %target)
      %s = Shape(%r)
      return %s
    })");
  EXPECT_TRUE(runFolding(*g));
  EXPECT_EQ(intsOf(*g, "s"), (std::vector<int64_t>{3, 2}));
}

//   %x f32[2, 3] -> Shape -> Gather([1, 0]) -> %rev
//   %x -> Reshape(., %rev) -> %r -> Shape -> %t
/// The Reshape target folds first; the Shape of the Reshape's output folds
/// once the folded target has made that output static.
TEST(ConstantFolding, FoldsShapeMadeStaticByEarlierFold) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2, 3]) {
      %perm = const i64[2] [1, 0]
      %s = Shape(%x)
      %rev = Gather(%s, %perm) {axis = 0}
      %r = Reshape(%x, %rev)
      %t = Shape(%r)
      return %r, %t
    })");
  EXPECT_TRUE(runFolding(*g));
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(intsOf(*g, "rev"), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(intsOf(*g, "t"), (std::vector<int64_t>{3, 2}));
}

//   %x f32[2, 3] -> Shape -> %s;  %x -> Relu -> %r f32[2, 3] -> Shape -> %t
/// In a graph whose every type is complete the pass skips inference and
/// folds from the declared types; the Relu, which reads no constant, stays.
TEST(ConstantFolding, FoldsFromDeclaredTypesWhenEveryTypeIsComplete) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2, 3]) {
      %s: i64[2] = Shape(%x)
      %r: f32[2, 3] = Relu(%x)
      %t: i64[2] = Shape(%r)
      return %s, %r, %t
    })");
  ASSERT_TRUE(hasCompleteTypes(*g));
  EXPECT_TRUE(runFolding(*g));
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(intsOf(*g, "s"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(intsOf(*g, "t"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(g->findValue("r")->initializer(), nullptr);
}

//   %x f32[2, 3] -> Relu -> %y (untyped)
/// A graph with nothing to fold still gets its types inferred: the pass
/// skips its sweep, not the inference that later passes read.
TEST(ConstantFolding, InfersTypesWhenNothingFolds) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2, 3]) {
      %y = Relu(%x)
      return %y
    })");
  EXPECT_FALSE(runFolding(*g));
  EXPECT_EQ(g->findValue("y")->type().toString(), "f32[2, 3]");
}

}  // namespace
}  // namespace subgraph
