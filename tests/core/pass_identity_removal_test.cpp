//===- tests/core/pass_identity_removal_test.cpp - Identity removal -------===//
//
// Each test draws a tiny graph, runs Identity removal once, and checks
// `changed`, the nodes left and that graph input and output names are
// exactly as before. Keeps... tests name the reason an Identity must stay.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/identity_removal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"

namespace subgraph {
namespace {

using ::testing::HasSubstr;

bool runRemoval(Graph& g) {
  auto pass = createIdentityRemovalPass();
  StatusOr<bool> changed = pass->run(g);
  EXPECT_TRUE(changed.isOk()) << changed.status().message();
  Status valid = verify(g);
  EXPECT_TRUE(valid.isOk()) << valid.message() << "\n" << printGraph(g);
  return changed.isOk() && *changed;
}

std::vector<std::string> outputNames(const Graph& g) {
  std::vector<std::string> names;
  for (const Value* v : g.outputs()) names.push_back(v->name());
  return names;
}

//   %x -> Relu -> Identity -> Neg -> %y
/// An Identity between two nodes disappears; Neg reads Relu directly.
TEST(IdentityRemoval, RemovesIdentityBetweenNodes) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %r = Relu(%x) @relu
      %i = Identity(%r)
      %y = Neg(%i) @neg
      return %y
    })");
  EXPECT_TRUE(runRemoval(*g));
  EXPECT_EQ(g->numNodes(), 2u);
  EXPECT_EQ(g->findNode("neg")->input(0), g->findNode("relu")->output(0));
  EXPECT_EQ(g->findValue("i"), nullptr);
}

//   %x -> Relu (%r) -> Identity -> %y (graph output)
/// An Identity that only names a graph output goes; the Relu's output takes
/// the name "y".
TEST(IdentityRemoval, RenamesInputToGraphOutputName) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %r = Relu(%x) @relu
      %y = Identity(%r)
      return %y
    })");
  EXPECT_TRUE(runRemoval(*g));
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(outputNames(*g), (std::vector<std::string>{"y"}));
  EXPECT_EQ(g->outputs()[0]->producer(), g->findNode("relu"));
  EXPECT_EQ(g->findValue("r"), nullptr);
}

//   %x -> Relu -> Identity -> Identity -> %y (graph output)
/// A chain of Identities collapses into the Relu, which ends up named "y".
TEST(IdentityRemoval, CollapsesIdentityChainBeforeGraphOutput) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %r = Relu(%x) @relu
      %a = Identity(%r)
      %y = Identity(%a)
      return %y
    })");
  EXPECT_TRUE(runRemoval(*g));
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(outputNames(*g), (std::vector<std::string>{"y"}));
  EXPECT_EQ(g->outputs()[0]->producer(), g->findNode("relu"));
}

//   %x (graph input) -> Identity -> %y (graph output)
/// Renaming the input would change the graph's interface, so the Identity
/// that forwards an input to an output stays.
TEST(IdentityRemoval, KeepsIdentityBetweenGraphInputAndOutput) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %y = Identity(%x)
      return %y
    })");
  auto pass = createIdentityRemovalPass();
  StatusOr<bool> changed = pass->run(*g);
  ASSERT_TRUE(changed.isOk());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(g->inputs()[0]->name(), "x");
  EXPECT_EQ(outputNames(*g), (std::vector<std::string>{"y"}));
  EXPECT_THAT(pass->lastRunSummary(), HasSubstr("passing a graph input"));
}

//   %x -> Relu -> %r (graph output) -> Identity -> %y (graph output)
/// Two output names need two values: the Identity stays.
TEST(IdentityRemoval, KeepsIdentityThatDuplicatesAGraphOutput) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %r = Relu(%x)
      %y = Identity(%r)
      return %r, %y
    })");
  EXPECT_FALSE(runRemoval(*g));
  EXPECT_EQ(g->numNodes(), 2u);
  EXPECT_EQ(outputNames(*g), (std::vector<std::string>{"r", "y"}));
}

//   %x -> Identity -> %i;  %c -> If { then: return %i ... }
/// A body reads %i by name; removing its Identity would break that read.
TEST(IdentityRemoval, KeepsIdentityNamedByNestedGraph) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2], %c: bool[]) {
      %r = Relu(%x)
      %i = Identity(%r)
      %y = If(%c) {
        then_branch = graph @then() { return %i },
        else_branch = graph @else() { return %x }}
      return %y
    })");
  EXPECT_FALSE(runRemoval(*g));
  EXPECT_NE(g->findValue("i"), nullptr);
  EXPECT_EQ(g->numNodes(), 3u);
}

//   %x -> Relu -> %r -> Identity -> %y: f32[2] (graph output; %r untyped)
/// The surviving value keeps the type the Identity's output declared.
TEST(IdentityRemoval, KeepsDeclaredTypeOfRemovedOutput) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x) {
      %r = Relu(%x)
      %y: f32[2] = Identity(%r)
      return %y
    })");
  EXPECT_TRUE(runRemoval(*g));
  EXPECT_EQ(g->outputs()[0]->type(), TensorType(DataType::kFloat32, {2}));
}

}  // namespace
}  // namespace subgraph
