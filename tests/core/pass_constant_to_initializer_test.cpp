//===- tests/core/pass_constant_to_initializer_test.cpp - Constant nodes --===//
//
// Each test draws a tiny graph of Constant nodes, runs the pass once, and
// checks `changed` and the initializers that replaced them, which must keep
// the Constant's output name.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/constant_to_initializer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"

namespace subgraph {
namespace {

using ::testing::HasSubstr;

const Tensor& constantOf(const Graph& g, std::string_view name) {
  const Value* v = g.findValue(name);
  if (!v || !v->initializer()) throw Error("'" + std::string(name) + "' is not a constant");
  return *v->initializer();
}

//   Constant{value_*} x7 -> graph outputs
/// Every value attribute kind becomes an initializer of the right type and
/// shape, under the Constant's output name.
TEST(ConstantToInitializer, ConvertsEveryValueAttributeKind) {
  auto g = parseGraphOrThrow(R"(
    graph @g() {
      %t = Constant() {value = f32[2, 2] [1.0, 2.0, 3.0, 4.0]}
      %f = Constant() {value_float = 2.5}
      %fs = Constant() {value_floats = [1.0, -1.0, 0.5]}
      %i = Constant() {value_int = 7}
      %is = Constant() {value_ints = [1, 2]}
      %s = Constant() {value_string = "hi"}
      %ss = Constant() {value_strings = ["a", "b"]}
      return %t, %f, %fs, %i, %is, %s, %ss
    })");
  auto pass = createConstantToInitializerPass();
  StatusOr<bool> changed = pass->run(*g);
  ASSERT_TRUE(changed.isOk()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(g->numNodes(), 0u);
  EXPECT_EQ(constantOf(*g, "t"),
            Tensor::fromVector<float>(DataType::kFloat32, {2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(constantOf(*g, "f"), Tensor::fromVector<float>(DataType::kFloat32, {}, {2.5f}));
  EXPECT_EQ(constantOf(*g, "fs"),
            Tensor::fromVector<float>(DataType::kFloat32, {3}, {1.0f, -1.0f, 0.5f}));
  EXPECT_EQ(constantOf(*g, "i"), Tensor::fromVector<int64_t>(DataType::kInt64, {}, {7}));
  EXPECT_EQ(constantOf(*g, "is"), Tensor::fromVector<int64_t>(DataType::kInt64, {2}, {1, 2}));
  EXPECT_EQ(constantOf(*g, "s").strings(), (std::vector<std::string>{"hi"}));
  EXPECT_EQ(constantOf(*g, "s").dims(), (std::vector<int64_t>{}));
  EXPECT_EQ(constantOf(*g, "ss").strings(), (std::vector<std::string>{"a", "b"}));
  // Graph outputs still name the same values.
  EXPECT_EQ(g->outputs()[0]->name(), "t");
  EXPECT_EQ(g->outputs()[6]->name(), "ss");
  EXPECT_THAT(pass->lastRunSummary(), HasSubstr("converted 7 Constant nodes"));
}

//   Constant{value_ints=[2, 3]} -> %shape -> Reshape(%x, %shape) -> %y
/// Uses of the Constant's output read the initializer afterwards.
TEST(ConstantToInitializer, KeepsUsesOfTheConstant) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[6]) {
      %shape = Constant() {value_ints = [2, 3]}
      %y = Reshape(%x, %shape) @reshape
      return %y
    })");
  auto pass = createConstantToInitializerPass();
  ASSERT_TRUE(*pass->run(*g));
  EXPECT_EQ(g->numNodes(), 1u);
  const Value* shape = g->findNode("reshape")->input(1);
  EXPECT_EQ(shape->name(), "shape");
  EXPECT_TRUE(shape->isInitializer());
  EXPECT_TRUE(verify(*g).isOk());
}

//   Constant{value_int, value_float} -> %c
/// Two value attributes are ambiguous: the Constant stays and the summary
/// names it.
TEST(ConstantToInitializer, DoesNotConvertConstantWithTwoValues) {
  auto g = parseGraphOrThrow(R"(
    graph @g() {
      %c = Constant() {value_int = 1, value_float = 2.0} @both
      return %c
    })");
  auto pass = createConstantToInitializerPass();
  StatusOr<bool> changed = pass->run(*g);
  ASSERT_TRUE(changed.isOk());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_THAT(pass->lastRunSummary(), HasSubstr("Constant node 'both'"));
}

//   Constant{sparse_value} -> %c
/// Sparse constants are not supported: the node stays.
TEST(ConstantToInitializer, DoesNotConvertSparseConstant) {
  auto g = parseGraphOrThrow(R"(
    graph @g() {
      %c = Constant() {sparse_value = f32[1] [1.0]}
      return %c
    })");
  auto pass = createConstantToInitializerPass();
  StatusOr<bool> changed = pass->run(*g);
  ASSERT_TRUE(changed.isOk());
  EXPECT_FALSE(*changed);
  EXPECT_THAT(pass->lastRunSummary(), HasSubstr("sparse_value"));
}

}  // namespace
}  // namespace subgraph
