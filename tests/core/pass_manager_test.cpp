//===- tests/core/pass_manager_test.cpp - Pipelines and their reports -----===//
//
// The PassManager runs pipelines to a fixed point within a round limit and
// reports each pass's effect; the default pipeline must settle (a second run
// changes nothing), and pass names given on the command line must resolve
// or fail with the list of known names.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/pass_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/zoo/zoo.h"

namespace subgraph {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// A pass that claims a change every time, to exercise the round limit.
class AlwaysChangesPass final : public Pass {
 public:
  std::string_view name() const override { return "always-changes"; }
  std::string_view description() const override { return "Claims a change on every run."; }
  StatusOr<bool> run(Graph&) override { return true; }
};

/// A pass that fails, to check how errors are reported.
class FailingPass final : public Pass {
 public:
  std::string_view name() const override { return "failing"; }
  std::string_view description() const override { return "Always fails."; }
  StatusOr<bool> run(Graph&) override { return Status::invalid("node 'n' is broken"); }
};

// A graph with work for every default pass:
//
//   %x f32[4, 6] -> Identity -> Reshape(., Constant[-1, 12]) -> Relu -> %y
//                                        '-> Shape -> Gather(0) -> %d0
//   const %unused;   const %k -> Neg -> %deadneg (dead)
constexpr std::string_view kMessyGraph = R"(
  graph @g(%x: f32[4, 6]) {
    %unused = const f32[3] splat(1.0)
    %k = const f32[2] splat(2.0)
    %zero = const i64[] [0]
    %shape = Constant() {value_ints = [-1, 12]}
    %xi = Identity(%x)
    %r = Reshape(%xi, %shape)
    %s = Shape(%r)
    %d0 = Gather(%s, %zero) {axis = 0}
    %deadneg = Neg(%k)
    %y = Relu(%r) @relu
    return %y, %d0
  })";

//   (kMessyGraph)
/// The default pipeline cleans the graph and reaches a fixed point; running
/// it again reports no change in one round.
TEST(PassManager, DefaultPipelineReachesFixedPoint) {
  auto g = parseGraphOrThrow(kMessyGraph);
  PassManager pm = createDefaultPipeline();
  StatusOr<PipelineReport> first = pm.run(*g);
  ASSERT_TRUE(first.isOk()) << first.status().message();
  EXPECT_TRUE(first->changed());
  EXPECT_TRUE(first->reachedFixedPoint);
  EXPECT_TRUE(verify(*g).isOk()) << verify(*g).message();
  // Reshape and Relu remain; the shape constant folded, the rest was dead.
  EXPECT_EQ(g->numNodes(), 2u);
  EXPECT_EQ(g->findValue("d0")->initializer()->toInt64Vector(), (std::vector<int64_t>{2}));
  EXPECT_EQ(g->findValue("unused"), nullptr);
  EXPECT_EQ(g->findValue("deadneg"), nullptr);

  StatusOr<PipelineReport> second = pm.run(*g);
  ASSERT_TRUE(second.isOk());
  EXPECT_FALSE(second->changed());
  EXPECT_EQ(second->rounds, 1);
  EXPECT_TRUE(second->reachedFixedPoint);
}

//   (kMessyGraph)
/// Each report entry names its pass and round and counts nodes before and
/// after; entries chain (one pass's after is the next one's before).
TEST(PassManager, ReportsEachPassRun) {
  auto g = parseGraphOrThrow(kMessyGraph);
  size_t before = g->numNodes();
  PassManager pm = createDefaultPipeline();
  StatusOr<PipelineReport> report = pm.run(*g);
  ASSERT_TRUE(report.isOk());
  ASSERT_GE(report->passes.size(), 13u);
  EXPECT_EQ(report->passes[0].passName, "constant-to-initializer");
  EXPECT_EQ(report->passes[1].passName, "float16-compute");
  EXPECT_EQ(report->passes[2].passName, "identity-removal");
  EXPECT_EQ(report->passes[3].passName, "constant-folding");
  EXPECT_EQ(report->passes[4].passName, "redundant-ops");
  EXPECT_EQ(report->passes[5].passName, "clamp-idiom");
  EXPECT_EQ(report->passes[6].passName, "hardswish-idiom");
  EXPECT_EQ(report->passes[7].passName, "layernorm-idiom");
  EXPECT_EQ(report->passes[8].passName, "linear-idiom");
  EXPECT_EQ(report->passes[9].passName, "sibling-matmuls");
  EXPECT_EQ(report->passes[10].passName, "gelu-idiom");
  EXPECT_EQ(report->passes[11].passName, "attention-idiom");
  EXPECT_EQ(report->passes[12].passName, "dce");
  EXPECT_EQ(report->nodesBefore(), before);
  EXPECT_EQ(report->nodesAfter(), g->numNodes());
  for (size_t i = 1; i < report->passes.size(); ++i)
    EXPECT_EQ(report->passes[i].nodesBefore, report->passes[i - 1].nodesAfter);
  EXPECT_TRUE(report->passes[0].changed);
  EXPECT_THAT(report->passes[0].summary, HasSubstr("converted 1 Constant"));
  std::string table = report->toString();
  EXPECT_THAT(table, HasSubstr("constant-folding"));
  EXPECT_THAT(table, HasSubstr("fixed point reached"));
}

//   %x -> Relu -> %y
/// A pipeline that never settles stops at maxRounds and says so.
TEST(PassManager, StopsAtRoundLimitWithoutFixedPoint) {
  auto g = parseGraphOrThrow("graph @g(%x: f32[2]) {\n %y = Relu(%x)\n return %y\n}");
  PassManager pm({.runToFixedPoint = true, .maxRounds = 3});
  pm.addPass(std::make_unique<AlwaysChangesPass>());
  StatusOr<PipelineReport> report = pm.run(*g);
  ASSERT_TRUE(report.isOk());
  EXPECT_EQ(report->rounds, 3);
  EXPECT_EQ(report->passes.size(), 3u);
  EXPECT_FALSE(report->reachedFixedPoint);
  EXPECT_THAT(report->toString(), HasSubstr("NOT at a fixed point"));
}

//   %x -> Relu -> %y
/// A failing pass stops the pipeline with an error naming pass and round.
TEST(PassManager, NamesTheFailingPass) {
  auto g = parseGraphOrThrow("graph @g(%x: f32[2]) {\n %y = Relu(%x)\n return %y\n}");
  PassManager pm;
  pm.addPass(createPassByName("dce").value()).addPass(std::make_unique<FailingPass>());
  StatusOr<PipelineReport> report = pm.run(*g);
  ASSERT_FALSE(report.isOk());
  EXPECT_EQ(report.status().message(), "pass 'failing' (round 1) failed: node 'n' is broken");
}

/// Every registered name builds a pass that reports that name.
TEST(PassManager, CreatesEveryRegisteredPassByName) {
  std::vector<PassInfo> passes = registeredPasses();
  ASSERT_EQ(passes.size(), 13u);
  for (const PassInfo& info : passes) {
    StatusOr<std::unique_ptr<Pass>> pass = createPassByName(info.name);
    ASSERT_TRUE(pass.isOk()) << info.name;
    EXPECT_EQ((*pass)->name(), info.name);
    EXPECT_FALSE(info.description.empty());
  }
}

/// `--passes` lists parse with spaces and "default"; unknown or empty names
/// fail with the known names listed.
TEST(PassManager, ParsesPassLists) {
  StatusOr<PassManager> pm = parsePassPipeline(" constant-folding , dce");
  ASSERT_TRUE(pm.isOk()) << pm.status().message();
  EXPECT_THAT(pm->passNames(), ElementsAre("constant-folding", "dce"));

  StatusOr<PassManager> withDefault = parsePassPipeline("default,dce");
  ASSERT_TRUE(withDefault.isOk());
  EXPECT_EQ(withDefault->size(), 14u);

  StatusOr<PassManager> unknown = parsePassPipeline("dce,fold-everything");
  ASSERT_FALSE(unknown.isOk());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown pass 'fold-everything'"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("identity-removal"));

  StatusOr<PassManager> empty = parsePassPipeline("dce,,");
  ASSERT_FALSE(empty.isOk());
  EXPECT_THAT(empty.status().message(), HasSubstr("empty name"));
}

/// A clean zoo model has nothing to simplify: the default pipeline reports
/// no change and leaves every node.
TEST(PassManager, DoesNotChangeCleanModel) {
  std::unique_ptr<Graph> g = zoo::buildMobileNetV2();
  size_t nodes = g->numNodes();
  PassManager pm = createDefaultPipeline();
  StatusOr<PipelineReport> report = pm.run(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  EXPECT_FALSE(report->changed()) << report->toString();
  EXPECT_EQ(g->numNodes(), nodes);
}

//   If(%c) then: Constant -> %k; Mul(%x, %k) -> %m     else: Relu(%x)
/// The default pipeline runs over the If's branches too: the branch's
/// Constant node becomes an initializer, on a copy that replaces the branch;
/// a clone taken before keeps its branch as it was (negative).
TEST(PassManager, SimplifiesNestedGraphsOnACopy) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2], %c: bool[]) {
      %y = If(%c) {
        then_branch = graph @then() {
          %k = Constant() {value = f32[2] [2.0, 3.0]}
          %i = Identity(%k)
          %m = Mul(%x, %i)
          return %m
        },
        else_branch = graph @else() {
          %r = Relu(%x)
          return %r
        }} @branch
      return %y
    })");
  std::unique_ptr<Graph> before = g->clone();
  PassManager pm = createDefaultPipeline();
  StatusOr<PipelineReport> report = pm.run(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  // Both branches are replaced: the pipeline changed one, and gave both the
  // types of what they read by name.
  EXPECT_EQ(report->nestedGraphsChanged, 2);
  EXPECT_TRUE(report->changed());
  const Graph& then = *g->findValue("y")->producer()->attr("then_branch")->asGraph();
  EXPECT_EQ(then.numNodes(), 1u) << printGraph(then);
  ASSERT_NE(then.findValue("k"), nullptr);
  EXPECT_TRUE(then.findValue("k")->isInitializer());
  const Graph& old = *before->findValue("y")->producer()->attr("then_branch")->asGraph();
  EXPECT_EQ(old.numNodes(), 3u);
  // Off, the branches are left alone.
  auto h = before->clone();
  PassManager top = createDefaultPipeline({true, 8, false});
  ASSERT_TRUE(top.run(*h).isOk());
  EXPECT_EQ(h->findValue("y")->producer()->attr("then_branch")->asGraph()->numNodes(), 3u);
}

// An LSTM exported inside an If slices and concatenates weights that the
// enclosing graph holds (silero VAD): the branch reads them by name, so
// folding there must see them as the constants they are. A value the
// enclosing graph takes as an input is not constant, even when it has an
// initializer (an overridable default).
TEST(PassManager, FoldsWhatABranchComputesFromEnclosingConstants) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4], %c: bool[], %bias: f32[2]) {
      %w = const f32[4] [1.0, 2.0, 3.0, 4.0]
      %bias = const f32[2] [5.0, 6.0]
      %start = const i64[1] [0]
      %end = const i64[1] [2]
      %y = If(%c) {
        then_branch = graph @then() {
          %lo = Slice(%w, %start, %end)
          %both = Concat(%lo, %lo) {axis = 0}
          %m = Mul(%x, %both)
          return %m
        },
        else_branch = graph @else() {
          %b = Concat(%bias, %bias) {axis = 0}
          %n = Add(%x, %b)
          return %n
        }} @branch
      return %y
    })");
  PassManager pm = createDefaultPipeline();
  StatusOr<PipelineReport> report = pm.run(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  const Node& branch = *g->findValue("y")->producer();
  const Graph& then = *branch.attr("then_branch")->asGraph();
  ASSERT_EQ(then.numNodes(), 1u) << printGraph(then);
  const Value* both = then.findValue("both");
  ASSERT_NE(both, nullptr);
  ASSERT_TRUE(both->isInitializer());
  std::vector<double> folded;
  for (int64_t i = 0; i < 4; ++i) folded.push_back(both->initializer()->elementAsDouble(i));
  EXPECT_THAT(folded, ElementsAre(1.0, 2.0, 1.0, 2.0));
  // The enclosing graph's weight stays where it was.
  EXPECT_TRUE(g->findValue("w")->isInitializer());
  // What must not happen: the input's default folded into the else branch.
  const Graph& otherwise = *branch.attr("else_branch")->asGraph();
  EXPECT_EQ(otherwise.numNodes(), 2u) << printGraph(otherwise);
  EXPECT_FALSE(otherwise.findValue("bias")->isInitializer());
  EXPECT_TRUE(verify(*g).isOk()) << verify(*g).message();
}

}  // namespace
}  // namespace subgraph
