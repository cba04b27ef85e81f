//===- tests/core/pass_dead_code_elimination_test.cpp - DCE ---------------===//
//
// Each test draws a tiny graph, runs DCE once, and checks `changed` and what
// is left. Negative tests (DoesNotRemove..., Keeps...) say why something
// that looks unused must stay.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/dead_code_elimination.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"

namespace subgraph {
namespace {

using ::testing::HasSubstr;

bool runDce(Graph& g, const DeadCodeEliminationOptions& options = {}) {
  auto pass = createDeadCodeEliminationPass(options);
  StatusOr<bool> changed = pass->run(g);
  EXPECT_TRUE(changed.isOk()) << changed.status().message();
  Status valid = verify(g);
  EXPECT_TRUE(valid.isOk()) << valid.message() << "\n" << printGraph(g);
  return changed.isOk() && *changed;
}

//   %x -> Relu -> %y (output)
//   %x -> Neg -> Exp -> %dead
/// A chain that reaches no output goes, node by node.
TEST(DeadCodeElimination, RemovesChainThatReachesNoOutput) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %y = Relu(%x) @relu
      %n = Neg(%x) @neg
      %dead = Exp(%n) @exp
      return %y
    })");
  auto pass = createDeadCodeEliminationPass();
  StatusOr<bool> changed = pass->run(*g);
  ASSERT_TRUE(changed.isOk());
  EXPECT_TRUE(*changed);
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_NE(g->findNode("relu"), nullptr);
  EXPECT_EQ(g->findValue("n"), nullptr);
  EXPECT_EQ(g->findValue("dead"), nullptr);
  EXPECT_THAT(pass->lastRunSummary(), HasSubstr("2 nodes (1 Exp, 1 Neg)"));
  EXPECT_TRUE(verify(*g).isOk());
}

//   %w (unused const), %x -> Relu -> %y
/// Constants that nothing reads are removed with the dead code.
TEST(DeadCodeElimination, RemovesUnusedInitializers) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %w = const f32[2] splat(1.0)
      %y = Relu(%x)
      return %y
    })");
  EXPECT_TRUE(runDce(*g));
  EXPECT_EQ(g->findValue("w"), nullptr);
}

//   %w (unused const)
/// With removeUnusedInitializers off, unused constants stay.
TEST(DeadCodeElimination, KeepsUnusedInitializersWhenAsked) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %w = const f32[2] splat(1.0)
      %y = Relu(%x)
      return %y
    })");
  EXPECT_FALSE(runDce(*g, {.removeUnusedInitializers = false}));
  EXPECT_NE(g->findValue("w"), nullptr);
}

//   %x -> Relu -> %y;   %unused (graph input, no uses)
/// Graph inputs are the interface: an unused one is not dead code.
TEST(DeadCodeElimination, DoesNotRemoveUnusedGraphInput) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2], %unused: f32[2]) {
      %y = Relu(%x)
      return %y
    })");
  EXPECT_FALSE(runDce(*g));
  ASSERT_EQ(g->inputs().size(), 2u);
  EXPECT_EQ(g->inputs()[1]->name(), "unused");
}

//   %x -> Split -> %a (output), %b (unused)
/// A node with one live output stays whole.
TEST(DeadCodeElimination, DoesNotRemoveNodeWithOneLiveOutput) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a: f32[2], %b: f32[2] = Split(%x) {axis = 0, num_outputs = 2}
      return %a
    })");
  EXPECT_FALSE(runDce(*g));
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_NE(g->findValue("b"), nullptr);
}

//   %x -> Relu -> %r (no direct uses)
//   %c -> If { then: return %r  else: return %x } -> %y
/// A value that a live body reads by name (outer-scope capture) is live,
/// although it has no use in the top-level graph.
TEST(DeadCodeElimination, KeepsValueCapturedByLiveBody) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2], %c: bool[]) {
      %r = Relu(%x) @relu
      %y = If(%c) {
        then_branch = graph @then() { return %r },
        else_branch = graph @else() { return %x }}
      return %y
    })");
  EXPECT_FALSE(runDce(*g));
  EXPECT_NE(g->findNode("relu"), nullptr);
}

//   %x -> Relu -> %y
/// A graph without dead code is reported unchanged.
TEST(DeadCodeElimination, DoesNotChangeLiveGraph) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %w = const f32[2] splat(1.0)
      %y = Add(%x, %w)
      return %y
    })");
  EXPECT_FALSE(runDce(*g));
  EXPECT_EQ(g->numNodes(), 1u);
}

//   %x -> Relu -> %y;  %orphan (created, never connected)
/// Values an importer created but never connected are removed.
TEST(DeadCodeElimination, RemovesDanglingValues) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %y = Relu(%x)
      return %y
    })");
  g->createValue("orphan");
  EXPECT_TRUE(runDce(*g));
  EXPECT_EQ(g->findValue("orphan"), nullptr);
}

//   %x -> Neg -> %a -> Exp -> %b --.
//              %a -> Abs -> %c ------+-> Add -> %d (read by nobody)
//   %x -> Relu -> %y (output)
/// Dead nodes that read each other go together: the quick check that finds
/// nothing dead must not stop at %a, %b and %c, which all have readers.
TEST(DeadCodeElimination, RemovesADeadDiamondWhoseNodesReadEachOther) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %y = Relu(%x) @relu
      %a = Neg(%x)
      %b = Exp(%a)
      %c = Abs(%a)
      %d = Add(%b, %c)
      return %y
    })");
  EXPECT_TRUE(runDce(*g));
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_NE(g->findNode("relu"), nullptr);
  EXPECT_EQ(g->findValue("a"), nullptr);
}

}  // namespace
}  // namespace subgraph
