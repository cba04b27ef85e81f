//===- tests/subgraph/partitioner_test.cpp - Hand-built partition shapes --===//
//
// Each test draws a tiny graph, partitions it once, and checks the regions
// (their nodes, inputs and outputs) and the graph left behind. Negative
// tests, named DoesNot..., say in one line why something must not fuse.
// Ops in {Relu, Neg, Exp, Add, Mul} are "supported" unless a test says
// otherwise; Sin and Cos stand for ops no backend runs.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "partition_test_util.h"
#include "subgraph/partition/pattern_selector.h"

namespace subgraph::partition {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using namespace testing;

const std::set<std::string> kSupported = {"Relu", "Neg", "Exp", "Add", "Mul"};

//   %x -> Relu -> Neg -> Exp -> %y
/// A supported chain becomes one region, and the graph one fused node.
TEST(Partitioner, FusesSupportedChain) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %b = Neg(%a) @b
      %y = Exp(%b) @c
      return %y
    })");
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  ASSERT_EQ(report.regions.size(), 1u);
  const RegionReport& r = report.regions[0];
  EXPECT_THAT(r.nodes, ElementsAre("a", "b", "c"));
  EXPECT_THAT(r.inputs, ElementsAre("x"));
  EXPECT_THAT(r.outputs, ElementsAre("y"));
  EXPECT_EQ(r.backend, "test");
  EXPECT_EQ(r.property, "ops");
  ASSERT_EQ(g->numNodes(), 1u);
  Node* fused = *g->nodes().begin();
  EXPECT_EQ(fused->qualifiedOpType(), "subgraph.test.ops");
  EXPECT_EQ(fused->name(), "test_ops_0");
  const Graph* body = bodyOf(*fused);
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(body->numNodes(), 3u);
  EXPECT_THAT(names(body->inputs()), ElementsAre("x"));
  EXPECT_THAT(names(body->outputs()), ElementsAre("y"));
  EXPECT_EQ(g->findValue("a"), nullptr) << "internal values leave the outer graph";
  EXPECT_EQ(report.nodesInRegions, 3u);
  EXPECT_THAT(report.rejected, IsEmpty());
}

//   %x -> Relu -> Neg -> Exp -> %y;  %x -> Sin -> %z (no selector)
/// The report says where the time went: the walk and the surgery ran, and
/// the phases, disjoint parts of the call, add up to no more than its
/// total. What must not happen: a phase left out (zero) or counted twice.
TEST(Partitioner, PhasesAreDisjointPartsOfTheTotal) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %b = Neg(%a) @b
      %y = Exp(%b) @c
      %z = Sin(%x) @s
      return %y, %z
    })");
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  ASSERT_EQ(report.regions.size(), 1u);
  const PartitionPhases& p = report.phases;
  EXPECT_GT(p.rankMs, 0.0);
  EXPECT_GT(p.walkMs, 0.0);
  EXPECT_GT(p.surgeryMs, 0.0);
  EXPECT_GT(p.proofMs, 0.0);
  EXPECT_GT(p.reportMs, 0.0);
  EXPECT_LE(p.rankMs + p.walkMs + p.surgeryMs + p.proofMs + p.reportMs, report.partitionMs);
}

//   %x -> Conv(%w) -> BN -> Conv(%w) -> BN -> %y      (%w shared)
/// A weight shared by two fused convs is copied (data shared) into both
/// bodies, and leaves the outer graph once nothing there reads it.
TEST(Partitioner, WeightSharedByTwoConvsIsInlinedIntoBoth) {
  const char* text = R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, 4, 1, 1] splat(0.5)
      %s = const f32[4] splat(1.0)
      %b = const f32[4] splat(0.0)
      %m = const f32[4] splat(0.0)
      %v = const f32[4] splat(1.0)
      %c1 = Conv(%x, %w) @conv1
      %n1 = BatchNormalization(%c1, %s, %b, %m, %v) @bn1
      %c2 = Conv(%n1, %w) @conv2
      %y = BatchNormalization(%c2, %s, %b, %m, %v) @bn2
      return %y
    })";
  registerBuiltinBackends();
  auto g = parseGraphOrThrow(text);
  auto backends = instantiateBackends({"convbn"}).value();
  PartitionReport report = partitionOk(*g, backends);
  EXPECT_EQ(regionSets(report),
            (std::vector<std::vector<std::string>>{{"bn1", "conv1"}, {"bn2", "conv2"}}));
  for (const RegionReport& r : report.regions) EXPECT_EQ(r.inputs.size(), 1u);
  EXPECT_EQ(g->findValue("w"), nullptr);
  for (Node* fused : g->nodes()) {
    const Graph* body = bodyOf(*fused);
    ASSERT_NE(body, nullptr);
    ASSERT_NE(body->findValue("w"), nullptr);
    EXPECT_TRUE(body->findValue("w")->isInitializer());
  }
  // Both bodies share one buffer for %w: inlining never copies weights.
  auto it = g->nodes().begin();
  const Graph* first = bodyOf(**it++);
  const Graph* second = bodyOf(**it);
  EXPECT_EQ(first->findValue("w")->initializer()->bytes().data(),
            second->findValue("w")->initializer()->bytes().data());
}

//   %x -> Conv(%w) -> BN -> %y ; %w also read by Sin (unsupported)
/// With inlining off, constants are fused-node inputs like any other value,
/// and a constant still read outside the region stays in the graph.
TEST(Partitioner, ConstantsAreInputsWhenInliningIsOff) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, 4, 1, 1] splat(0.5)
      %s = const f32[4] splat(1.0)
      %b = const f32[4] splat(0.0)
      %m = const f32[4] splat(0.0)
      %v = const f32[4] splat(1.0)
      %c = Conv(%x, %w) @conv
      %y = BatchNormalization(%c, %s, %b, %m, %v) @bn
      %z = Sin(%w) @sin
      return %y, %z
    })");
  PropertyOptions options;
  options.inlineConstants = false;
  PartitionReport report = partitionOk(*g, opBackend({"Conv", "BatchNormalization"}, options));
  ASSERT_EQ(report.regions.size(), 1u);
  EXPECT_THAT(report.regions[0].inputs, ElementsAre("x", "w", "s", "b", "m", "v"));
  ASSERT_NE(g->findValue("w"), nullptr);
  EXPECT_EQ(g->findValue("w")->uses().size(), 2u);
}

//   %x -> Conv -> BatchNormalization(%scale (graph input), %b, %m, %v) -> %y
/// BatchNormalization's extra inputs: constants move into the body; a
/// scale fed at run time (a graph input) stays a fused-node input.
TEST(Partitioner, BatchNormalizationExtraInputs) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 4, 8, 8], %scale: f32[4]) {
      %w = const f32[4, 4, 1, 1] splat(0.5)
      %b = const f32[4] splat(0.0)
      %m = const f32[4] splat(0.0)
      %v = const f32[4] splat(1.0)
      %c = Conv(%x, %w) @conv
      %y = BatchNormalization(%c, %scale, %b, %m, %v) @bn
      return %y
    })");
  PartitionReport report = partitionOk(*g, opBackend({"Conv", "BatchNormalization"}));
  ASSERT_EQ(report.regions.size(), 1u);
  EXPECT_THAT(report.regions[0].inputs, ElementsAre("x", "scale"));
  const Graph* body = bodyOf(**g->nodes().begin());
  ASSERT_NE(body, nullptr);
  EXPECT_THAT(names(body->inputs()), ElementsAre("x", "scale"));
  EXPECT_EQ(body->initializers().size(), 4u);
  EXPECT_EQ(g->initializers().size(), 0u);
}

//   %x -> Relu -> %a -> Neg -> %y;  graph outputs: %y, %y, %a
/// A value returned twice, and an intermediate that is also returned, are
/// each one output of the fused node; the graph outputs are unchanged.
TEST(Partitioner, DuplicateOutputsAreMerged) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @relu
      %y = Neg(%a) @neg
      return %y, %y, %a
    })");
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  ASSERT_EQ(report.regions.size(), 1u);
  EXPECT_THAT(report.regions[0].outputs, ElementsAre("a", "y"));
  EXPECT_THAT(names(g->outputs()), ElementsAre("y", "y", "a"));
  Node* fused = *g->nodes().begin();
  EXPECT_EQ(fused->numOutputs(), 2u);
  EXPECT_EQ(g->outputs()[0], g->outputs()[1]);
  EXPECT_EQ(g->outputs()[0]->producer(), fused);
}

//   %x -> Add(%x, %x) -> Relu -> %y
/// x + x reads one outer value twice: the fused node reads it once.
TEST(Partitioner, DuplicatedInputIsMerged) {
  const char* text = R"(
    graph @g(%x: f32[4]) {
      %s = Add(%x, %x) @add
      %y = Relu(%s) @relu
      return %y
    })";
  auto g = parseGraphOrThrow(text);
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  ASSERT_EQ(report.regions.size(), 1u);
  EXPECT_THAT(report.regions[0].inputs, ElementsAre("x"));
  EXPECT_EQ((*g->nodes().begin())->numInputs(), 1u);

  // With merging off every read is its own input, under a fresh body name.
  PropertyOptions unmerged;
  unmerged.mergeDuplicatedInputs = false;
  auto h = parseGraphOrThrow(text);
  PartitionReport second = partitionOk(*h, opBackend(kSupported, unmerged));
  ASSERT_EQ(second.regions.size(), 1u);
  EXPECT_THAT(second.regions[0].inputs, ElementsAre("x", "x"));
  EXPECT_THAT(names(bodyOf(**h->nodes().begin())->inputs()), ElementsAre("x", "x_dup1"));
}

//   %x: f32[0, 3] -> Relu -> Neg -> %y
/// A zero-size dimension is just a shape: the region forms and the body
/// keeps the types.
TEST(Partitioner, ZeroSizeDimensionPartitionsNormally) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[0, 3]) {
      %a: f32[0, 3] = Relu(%x) @relu
      %y: f32[0, 3] = Neg(%a) @neg
      return %y
    })");
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  ASSERT_EQ(report.regions.size(), 1u);
  const Graph* body = bodyOf(**g->nodes().begin());
  EXPECT_EQ(body->findValue("a")->type().toString(), "f32[0, 3]");
  EXPECT_EQ(g->outputs()[0]->type().toString(), "f32[0, 3]");
}

//   %x -> Relu(a) -> Neg(b) ------> Add(d) -> %y
//              \---> Sin(s) -----/
/// The grown region {a, b, d} is not convex (a -> Sin -> d), so d is cut
/// off with a cycle reason and only {a, b} fuses together.
TEST(Partitioner, DoesNotFuseDiamondAroundUnsupportedNode) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %b = Neg(%a) @b
      %s = Sin(%a) @s
      %y = Add(%b, %s) @d
      return %y
    })");
  PropertyOptions options;
  options.minRegionSize = 2;
  PartitionReport report = partitionOk(*g, opBackend(kSupported, options));
  EXPECT_EQ(regionSets(report), (std::vector<std::vector<std::string>>{{"a", "b"}}));
  EXPECT_EQ(reasonFor(report, "s"), "not selected by test/ops: Sin is unsupported");
  EXPECT_THAT(reasonFor(report, "d"), HasSubstr("below the minimum region size 2"));
}

//   %x -> Relu(a) -> Sin(s) -> Cos(t) -> Add(b, reads a and t) -> %y
/// A region {a, b} plus an outside chain a -> Sin -> Cos -> b would close a
/// cycle once fused, so a and b stay in separate regions.
TEST(Partitioner, DoesNotFuseAroundOutsideChain) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %s = Sin(%a) @s
      %t = Cos(%s) @t
      %y = Add(%a, %t) @b
      return %y
    })");
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  EXPECT_EQ(regionSets(report), (std::vector<std::vector<std::string>>{{"a"}, {"b"}}));
}

/// With singletons left unfused, the report names the cycle and the node
/// the path goes through.
TEST(Partitioner, ReportsWhyAFusionWouldFormACycle) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %s = Sin(%a) @s
      %t = Cos(%s) @t
      %y = Add(%a, %t) @b
      return %y
    })");
  // Only Relu seeds; Add may only join a region.
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  struct ReluSeeds : OpTypeSelector {
    ReluSeeds() : OpTypeSelector({"Relu", "Add"}) {}
    Decision Select(const Node& n) override { return n.opType() == "Relu"; }
  };
  properties.push_back(
      std::make_unique<LambdaProperty>("ops", [] { return std::make_unique<ReluSeeds>(); }));
  PartitionReport report = partitionOk(*g, makeBackend("test", std::move(properties)));
  EXPECT_EQ(regionSets(report), (std::vector<std::vector<std::string>>{{"a"}}));
  EXPECT_THAT(reasonFor(report, "b"),
              HasSubstr("would form a cycle through node Sin 's' outside the region"));
}

//   %x -> Relu(a) -> Sin(x) -> Neg(b) -> %y
/// A -> X -> B with X unsupported: A and B are not adjacent, so they never
/// share a region.
TEST(Partitioner, DoesNotFuseAcrossUnsupportedNode) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @A
      %s = Sin(%a) @X
      %y = Neg(%s) @B
      return %y
    })");
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  EXPECT_EQ(regionSets(report), (std::vector<std::vector<std::string>>{{"A"}, {"B"}}));
  EXPECT_EQ(reasonFor(report, "X"), "not selected by test/ops: Sin is unsupported");
}

/// Seeds only at nodes whose name ends in "_seed" and grows to nodes with
/// the same two-letter name prefix, so a test can spell out its regions.
class PrefixSelector : public SubgraphSelector {
 public:
  Decision Select(const Node& n) override { return n.name().ends_with("_seed"); }
  Decision SelectInput(const Node& n, const Node& p) override { return same(n, p); }
  Decision SelectOutput(const Node& n, const Node& c) override { return same(n, c); }

 private:
  static bool same(const Node& a, const Node& b) {
    return a.name().substr(0, 2) == b.name().substr(0, 2);
  }
};

SubgraphBackend prefixBackend(PropertyOptions options = {}) {
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<LambdaProperty>(
      "prefix", [] { return std::make_unique<PrefixSelector>(); }, options));
  return makeBackend("test", std::move(properties));
}

//   %x -> Relu(r1_seed) --------> Add(r1_d)
//     \-> Neg(r2_seed) --------> Mul(r2_c)
//   with cross edges r1_seed -> r2_c and r2_seed -> r1_d
/// R1 = {r1_seed, r1_d} and R2 = {r2_seed, r2_c} are each convex, but
/// R1 -> R2 -> R1 once both are fused: the second one loses r2_c.
TEST(Partitioner, DoesNotFuseTwoRegionsThatTogetherFormACycle) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @r1_seed
      %b = Neg(%x) @r2_seed
      %c = Mul(%b, %a) @r2_c
      %d = Add(%a, %b) @r1_d
      return %c, %d
    })");
  PartitionReport report = partitionOk(*g, prefixBackend());
  EXPECT_EQ(regionSets(report),
            (std::vector<std::vector<std::string>>{{"r1_d", "r1_seed"}, {"r2_seed"}}));
  EXPECT_THAT(reasonFor(report, "r2_c"),
              HasSubstr("would form a cycle with region 0 through node Add 'r1_d'"));
}

//   %x -> Relu(a) -> Neg(b) -> Exp(c) -> %y
/// Filter dropping the middle node of a chain leaves {a} and {c}, which
/// are not connected: they become two regions, never one.
TEST(Partitioner, FilterDroppingMiddleNodeSplitsTheRegion) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %b = Neg(%a) @b
      %y = Exp(%b) @c
      return %y
    })");
  auto dropNeg = [](std::span<const Node* const> candidates) {
    std::vector<const Node*> kept;
    for (const Node* n : candidates)
      if (n->opType() != "Neg") kept.push_back(n);
    return kept;
  };
  PartitionReport report = partitionOk(*g, opBackend(kSupported, {}, dropNeg));
  EXPECT_EQ(regionSets(report), (std::vector<std::vector<std::string>>{{"a"}, {"c"}}));
  EXPECT_EQ(reasonFor(report, "b"), "dropped by Filter of test/ops: test filter");
}

//   %x -> Relu(a) -> Neg(b) -> Add(c) -> %y,   and a -> c directly
/// MXNet's bug: Filter drops the middle node b, leaving {a, c} connected
/// by a -> c but not convex (a -> b -> c). It is re-checked and split.
TEST(Partitioner, DoesNotFuseNonConvexFilterResult) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %b = Neg(%a) @b
      %y = Add(%a, %b) @c
      return %y
    })");
  auto dropNeg = [](std::span<const Node* const> candidates) {
    std::vector<const Node*> kept;
    for (const Node* n : candidates)
      if (n->opType() != "Neg") kept.push_back(n);
    return kept;
  };
  PartitionReport report = partitionOk(*g, opBackend(kSupported, {}, dropNeg));
  EXPECT_EQ(regionSets(report), (std::vector<std::vector<std::string>>{{"a"}, {"c"}}));

  // A property that does not accept splits fuses nothing of it.
  PropertyOptions reject;
  reject.filterSplit = FilterSplit::kReject;
  auto h = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %b = Neg(%a) @b
      %y = Add(%a, %b) @c
      return %y
    })");
  PartitionReport none = partitionOk(*h, opBackend(kSupported, reject, dropNeg));
  EXPECT_THAT(none.regions, IsEmpty());
  EXPECT_THAT(reasonFor(none, "a"),
              HasSubstr("kept a set that is not convex, and the property rejects splits"));
}

//   %x -> Relu -> Neg -> %y
/// A region the property rejects is not fused, and its nodes say why.
TEST(Partitioner, DoesNotFuseRegionThePropertyRejects) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %y = Neg(%a) @b
      return %y
    })");
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<LambdaProperty>(
      "ops", [] { return std::make_unique<OpTypeSelector>(kSupported); }, PropertyOptions{},
      [](std::shared_ptr<Graph>, const RegionInfo&) {
        return SubgraphNodeResult::reject("no kernel for this shape");
      }));
  PartitionReport report = partitionOk(*g, makeBackend("test", std::move(properties)));
  EXPECT_THAT(report.regions, IsEmpty());
  EXPECT_EQ(reasonFor(report, "a"),
            "region rejected by property test/ops: no kernel for this shape");
  EXPECT_EQ(g->numNodes(), 2u);
}

//   %x -> Relu -> %y
/// A region below the minimum size is not fused.
TEST(Partitioner, DoesNotFuseRegionBelowMinimumSize) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) @a
      return %y
    })");
  PropertyOptions options;
  options.minRegionSize = 2;
  PartitionReport report = partitionOk(*g, opBackend(kSupported, options));
  EXPECT_THAT(report.regions, IsEmpty());
  EXPECT_EQ(reasonFor(report, "a"),
            "region of 1 node is below the minimum region size 2 of test/ops");
}

//   %p, %q -> Add -> Relu -> %r ; %q -> Neg -> %s        outputs: %s, %r
/// Graph inputs and outputs keep their order and names.
TEST(Partitioner, KeepsGraphInputsAndOutputs) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%p: f32[4], %q: f32[4]) {
      %t = Add(%p, %q) @add
      %r = Relu(%t) @relu
      %s = Neg(%q) @neg
      return %s, %r
    })");
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  EXPECT_EQ(report.regions.size(), 2u);
  EXPECT_THAT(names(g->inputs()), ElementsAre("p", "q"));
  EXPECT_THAT(names(g->outputs()), ElementsAre("s", "r"));
}

// Backends "first" and "second", in that priority order, that both
// support every op of kSupported.
std::vector<SubgraphBackend> firstAndSecond() {
  std::vector<SubgraphBackend> backends;
  backends.push_back(opBackend(kSupported, {}, {}, "first"));
  backends.push_back(opBackend(kSupported, {}, {}, "second"));
  return backends;
}

//   %x -> Relu -> Neg -> %y, with two backends supporting both ops
/// The higher-priority backend claims the nodes; the lower one gets none,
/// and the report says which nodes it wanted.
TEST(Partitioner, DoesNotLetTwoBackendsClaimOneNode) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %y = Neg(%a) @b
      return %y
    })");
  std::vector<SubgraphBackend> backends = firstAndSecond();
  PartitionReport report = partitionOk(*g, backends);
  ASSERT_EQ(report.regions.size(), 1u);
  EXPECT_EQ(report.regions[0].backend, "first");
  ASSERT_EQ(report.contested.size(), 2u);
  EXPECT_EQ(report.contested[0].backend, "second");
  EXPECT_EQ(report.contested[0].claimedBy, "first");
}

//   %x -> Relu(a) -> Neg(b) -> %y ;  If(%c) then: %y -> Relu(t1) -> Neg(t2)   else: %x
/// Two backends that both want every node, on a graph whose If branch is
/// partitioned after the outer graph's region took id 0: the branch's
/// contested nodes name the branch's region and its backend. Negative: the
/// branch's report must not look its region up by the id the count gave
/// it (1) in its own list of one region, which read past the list and
/// crashed.
TEST(Partitioner, ReportsContestedNodesInsideANestedGraph) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2], %c: bool[]) {
      %a = Relu(%x) @a
      %y = Neg(%a) @b
      %z = If(%c) {
        then_branch = graph @then() {
          %t = Relu(%y) @t1
          %u = Neg(%t) @t2
          return %u
        },
        else_branch = graph @else() { return %x }} @branch
      return %z
    })");
  std::vector<SubgraphBackend> backends = firstAndSecond();
  PartitionReport report = partitionOk(*g, backends);
  ASSERT_EQ(report.regions.size(), 2u);
  EXPECT_EQ(report.regions[1].id, 1);
  EXPECT_EQ(report.regions[1].scope, "branch.then_branch");
  std::vector<std::string> contested;
  for (const ContestedNode& c : report.contested) {
    EXPECT_EQ(c.backend, "second") << c.node;
    EXPECT_EQ(c.claimedBy, "first") << c.node;
    contested.push_back(c.node + "@" + std::to_string(c.region));
  }
  EXPECT_THAT(contested, UnorderedElementsAre("a@0", "b@0", "branch.then_branch:t1@1",
                                              "branch.then_branch:t2@1"));
}

//   %x -> Relu -> Neg -> %y
/// A partitioned graph partitioned again: fused nodes are final, so no
/// region forms and they are reported as already fused.
TEST(Partitioner, DoesNotRefuseFusedNodes) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %y = Neg(%a) @b
      return %y
    })");
  partitionOk(*g, opBackend(kSupported));
  struct AnyOp : SubgraphSelector {
    Decision Select(const Node&) override { return true; }
    Decision SelectInput(const Node&, const Node&) override { return true; }
    Decision SelectOutput(const Node&, const Node&) override { return true; }
  };
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(
      std::make_unique<LambdaProperty>("all", [] { return std::make_unique<AnyOp>(); }));
  PartitionReport again = partitionOk(*g, makeBackend("greedy", std::move(properties)));
  EXPECT_THAT(again.regions, IsEmpty());
  ASSERT_EQ(again.rejected.size(), 1u);
  EXPECT_EQ(again.rejected[0].kind, "already-fused");
}

/// Records every call, and fails the test if a selector is used again
/// without Reset() in between.
class ResetCheckingSelector : public OpTypeSelector {
 public:
  ResetCheckingSelector(int* resets, int* violations)
      : OpTypeSelector(kSupported), resets_(resets), violations_(violations) {}
  Decision Select(const Node& n) override {
    if (used_) ++*violations_;
    used_ = true;
    return OpTypeSelector::Select(n);
  }
  void Reset() override {
    used_ = false;
    ++*resets_;
  }

 private:
  bool used_ = false;
  int* resets_;
  int* violations_;
};

//   %x -> Relu(a) -> Neg(b) -> Add(d);  a -> Sin -> d;  Sin unsupported
/// The selector is Reset before every seed and before the retry that the
/// cycle through Sin forces.
TEST(Partitioner, ResetsSelectorBeforeEveryUse) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %b = Neg(%a) @b
      %s = Sin(%a) @s
      %y = Add(%b, %s) @d
      return %y
    })");
  int resets = 0, violations = 0;
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<LambdaProperty>(
      "ops", [&] { return std::make_unique<ResetCheckingSelector>(&resets, &violations); }));
  PartitionReport report = partitionOk(*g, makeBackend("test", std::move(properties)));
  EXPECT_EQ(violations, 0);
  // Seeds a (plus one retry), s, d.
  EXPECT_EQ(resets, 4);
  EXPECT_EQ(report.regions.size(), 2u);
}

//   a small residual graph
/// The same graph and backends give the same report, region for region.
TEST(Partitioner, IsDeterministic) {
  const char* text = R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %b = Neg(%a) @b
      %s = Sin(%a) @s
      %c = Add(%b, %s) @c
      %d = Exp(%c) @d
      %e = Mul(%d, %a) @e
      return %e
    })";
  auto g1 = parseGraphOrThrow(text);
  auto g2 = parseGraphOrThrow(text);
  PartitionReport r1 = partitionOk(*g1, opBackend(kSupported));
  PartitionReport r2 = partitionOk(*g2, opBackend(kSupported));
  r1.partitionMs = r2.partitionMs = 0;
  EXPECT_EQ(reportToJson(r1), reportToJson(r2));
  EXPECT_EQ(printGraph(*g1), printGraph(*g2));
}

/// Reverses the fused node's inputs, and the body's with them.
class ReversingProperty : public LambdaProperty {
 public:
  ReversingProperty()
      : LambdaProperty("rev", [] { return std::make_unique<OpTypeSelector>(kSupported); }) {}
  Status ConnectSubgraphInputs(Graph& body, std::vector<Value*>& inputs) const override {
    std::vector<size_t> order;
    for (size_t i = inputs.size(); i-- > 0;) order.push_back(i);
    return permuteBodyInputs(body, inputs, order);
  }
};

//   %p, %q -> Add -> %y
/// ConnectSubgraphInputs may reorder the fused node's inputs together with
/// the body's.
TEST(Partitioner, ConnectHookReordersInputs) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%p: f32[4], %q: f32[4]) {
      %y = Add(%p, %q) @add
      return %y
    })");
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<ReversingProperty>());
  PartitionReport report = partitionOk(*g, makeBackend("test", std::move(properties)));
  EXPECT_THAT(report.regions[0].inputs, ElementsAre("q", "p"));
  EXPECT_THAT(names(bodyOf(**g->nodes().begin())->inputs()), ElementsAre("q", "p"));
}

/// Drops the fused node's outputs, which would orphan their readers.
class DroppingProperty : public LambdaProperty {
 public:
  DroppingProperty()
      : LambdaProperty("drop", [] { return std::make_unique<OpTypeSelector>(kSupported); }) {}
  Status ConnectSubgraphOutputs(Graph&, std::vector<Value*>& outputs) const override {
    outputs.clear();
    return Status::ok();
  }
};

//   %x -> Relu -> %y
/// A hook that breaks the output contract is an error naming the property,
/// and the graph is left as it was.
TEST(Partitioner, DoesNotApplyAHookThatDropsOutputs) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) @a
      return %y
    })");
  std::vector<SubgraphBackend> backends;
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<DroppingProperty>());
  backends.push_back(makeBackend("test", std::move(properties)));
  StatusOr<PartitionReport> report = partitionGraph(*g, backends);
  ASSERT_FALSE(report.isOk());
  EXPECT_THAT(report.status().message(),
              HasSubstr("subgraph property test/drop: ConnectSubgraphOutputs must keep region 0"));
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ((*g->nodes().begin())->opType(), "Relu");
}

//   %x -> Relu -> %y
/// Filter returning a node that was not a candidate is an error, not a crash.
TEST(Partitioner, RejectsFilterReturningANonCandidate) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %y = Sin(%a) @s
      return %y
    })");
  const Node* sin = g->findNode("s");
  auto bogus = [sin](std::span<const Node* const>) { return std::vector<const Node*>{sin}; };
  std::vector<SubgraphBackend> backends;
  backends.push_back(opBackend(kSupported, {}, bogus));
  StatusOr<PartitionReport> report = partitionGraph(*g, backends);
  ASSERT_FALSE(report.isOk());
  EXPECT_EQ(report.status().message(),
            "subgraph property test/ops: Filter returned Sin node 's', which is not one of its "
            "candidates");
}

/// A graph with a cycle cannot be partitioned; the message names a node
/// on the cycle.
TEST(Partitioner, RejectsCyclicInput) {
  Graph g;
  Value* x = g.addInput("x", TensorType(DataType::kFloat32, {4}));
  Node* a = g.addNode("Add", {x, nullptr}, 1, {}, "a");
  Node* b = g.addNode("Relu", {a->output(0)}, 1, {}, "b");
  g.setNodeInput(a, 1, b->output(0));
  g.addOutput(b->output(0));
  std::vector<SubgraphBackend> backends;
  backends.push_back(opBackend(kSupported));
  StatusOr<PartitionReport> report = partitionGraph(g, backends);
  ASSERT_FALSE(report.isOk());
  EXPECT_THAT(report.status().message(), HasSubstr("has a cycle through"));
}

//   %x -> Relu -> %y
/// An inference-only property does not run when partitioning for training.
TEST(Partitioner, SkipsInferenceOnlyPropertiesForTraining) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) @a
      return %y
    })");
  PropertyOptions options;
  options.inferenceOnly = true;
  PartitionOptions training;
  training.forTraining = true;
  PartitionReport report = partitionOk(*g, opBackend(kSupported, options), training);
  EXPECT_THAT(report.regions, IsEmpty());
  EXPECT_THAT(report.skipped, ElementsAre("test/ops: inference-only, and the graph is "
                                          "partitioned for training"));
}

//   %x -> Split -> (%a -> Relu -> %r), %b (returned)
/// A multi-output node in a region: only the outputs read outside become
/// fused-node outputs.
TEST(Partitioner, MultiOutputNodeKeepsOnlyEscapingOutputs) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2, 4]) {
      %a: f32[2, 2], %b: f32[2, 2] = Split(%x) {axis = 1, num_outputs = 2} @split
      %r = Relu(%a) @relu
      return %r, %b
    })");
  PartitionReport report = partitionOk(*g, opBackend({"Split", "Relu"}));
  ASSERT_EQ(report.regions.size(), 1u);
  EXPECT_THAT(report.regions[0].outputs, ElementsAre("b", "r"));
  EXPECT_THAT(names(g->outputs()), ElementsAre("r", "b"));
}

/// A V2 selector that grows to a consumer only if it is that node's sole
/// available consumer, using what NodeView offers.
class SoleConsumerSelector : public SubgraphSelectorV2 {
 public:
  Decision Select(const NodeView& n) override { return n.node().opType() == "Relu"; }
  Decision SelectInput(const NodeView&, const NodeView&) override { return false; }
  Decision SelectOutput(const NodeView& n, const NodeView& c) override {
    std::vector<const Node*> consumers = n.consumers();
    return consumers.size() == 1 && n.available(c.node()) && !n.feedsGraphOutput();
  }
};

class SoleConsumerProperty : public SubgraphProperty {
 public:
  std::string name() const override { return "sole"; }
  std::unique_ptr<SubgraphSelectorV2> CreateSubgraphSelectorV2() const override {
    return std::make_unique<SoleConsumerSelector>();
  }
};

//   %x -> Relu(a) -> Neg(b) -> %y ;  %x -> Relu(c) -> Neg(d), Exp(e)
/// A V2 selector sees consumers: a's single consumer joins, c's two do not.
TEST(Partitioner, SelectorV2SeesConsumers) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %y = Neg(%a) @b
      %c = Relu(%x) @c
      %d = Neg(%c) @d
      %e = Exp(%c) @e
      return %y, %d, %e
    })");
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<SoleConsumerProperty>());
  PartitionReport report = partitionOk(*g, makeBackend("v2", std::move(properties)));
  EXPECT_EQ(regionSets(report), (std::vector<std::vector<std::string>>{{"a", "b"}, {"c"}}));
}

//   %x -> Relu(a) -> Sin(s) -> Neg(b) -> %y   (Sin unsupported: two regions)
constexpr const char* kChainAroundSin = R"(
  graph @g(%x: f32[4]) {
    %a = Relu(%x) @a
    %s = Sin(%a) @s
    %y = Neg(%s) @b
    return %y
  })";

/// Records the regions it is told about after its pass.
class PostRecordingProperty : public LambdaProperty {
 public:
  explicit PostRecordingProperty(std::vector<std::string>* seen)
      : LambdaProperty("post", [] { return std::make_unique<OpTypeSelector>(kSupported); }),
        seen_(seen) {}
  Status PrePartition(const Graph& graph) override {
    seen_->push_back("pre " + std::to_string(graph.numNodes()));
    return Status::ok();
  }
  Status PostPartition(Graph&, std::span<const FusedRegion> regions) override {
    for (const FusedRegion& r : regions)
      seen_->push_back("post " + std::to_string(r.id) + " " + r.node->name());
    return Status::ok();
  }

 private:
  std::vector<std::string>* seen_;
};

//   %x -> Relu -> Sin -> Neg -> %y
/// PrePartition sees the graph before the pass, PostPartition every fused
/// node the pass made.
TEST(Partitioner, CallsPreAndPostPartition) {
  auto g = parseGraphOrThrow(kChainAroundSin);
  std::vector<std::string> seen;
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<PostRecordingProperty>(&seen));
  partitionOk(*g, makeBackend("test", std::move(properties)));
  EXPECT_THAT(seen, ElementsAre("pre 3", "post 0 test_post_0", "post 1 test_post_1"));
}

/// A PostPartition hook that edits the graph after its pass: it either
/// adds a node reading the last fused node's output (a node the quotient
/// DAG never ranked) or wires the first fused node to read the last one's
/// output, closing a cycle.
class EditingPostProperty : public LambdaProperty {
 public:
  explicit EditingPostProperty(bool closeCycle)
      : LambdaProperty("edit", [] { return std::make_unique<OpTypeSelector>(kSupported); }),
        closeCycle_(closeCycle) {}
  Status PostPartition(Graph& graph, std::span<const FusedRegion> regions) override {
    Value* last = regions.back().node->output(0);
    if (closeCycle_)
      graph.setNodeInput(regions.front().node, 0, last);
    else
      graph.addNode("Neg", {last}, 1, {}, "added");
    return Status::ok();
  }

 private:
  bool closeCycle_;
};

//   %x -> Relu(a) -> Sin(s) -> Neg(b) -> %y
/// The final acyclicity check ranks nodes by the quotient DAG; a node a
/// PostPartition hook added has no rank, and the check then sorts the
/// graph instead of failing.
TEST(Partitioner, AcceptsNodesAddedAfterThePass) {
  auto g = parseGraphOrThrow(kChainAroundSin);
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<EditingPostProperty>(/*closeCycle=*/false));
  PartitionReport report = partitionOk(*g, makeBackend("test", std::move(properties)));
  EXPECT_EQ(report.regions.size(), 2u);
  EXPECT_NE(g->findNode("added"), nullptr);
}

//   %x -> Relu(a) -> Sin(s) -> Neg(b) -> %y, then the hook feeds %y to a
/// Negative: a cycle that a PostPartition hook closes is not let through:
/// the ranks cannot order it, and the full sort names it.
TEST(Partitioner, DoesNotLetAHookCloseACycle) {
  auto g = parseGraphOrThrow(kChainAroundSin);
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<EditingPostProperty>(/*closeCycle=*/true));
  std::vector<SubgraphBackend> backends;
  backends.push_back(makeBackend("test", std::move(properties)));
  StatusOr<PartitionReport> report = partitionGraph(*g, backends);
  ASSERT_FALSE(report.isOk());
  EXPECT_EQ(report.status().code(), StatusCode::kInternal);
  EXPECT_THAT(report.status().message(), HasSubstr("not acyclic"));
}

/// Fuses nothing, then points input 0 of node `reader` at value `value`.
class RewiringPostProperty : public LambdaProperty {
 public:
  RewiringPostProperty(std::string reader, std::string value)
      : LambdaProperty("nothing",
                       [] { return std::make_unique<OpTypeSelector>(std::set<std::string>{}); }),
        reader_(std::move(reader)),
        value_(std::move(value)) {}
  Status PostPartition(Graph& graph, std::span<const FusedRegion>) override {
    graph.setNodeInput(graph.findNode(reader_), 0, graph.findValue(value_));
    return Status::ok();
  }

 private:
  std::string reader_, value_;
};

//   %x -> Relu(a) -> Sin(s) -> Neg(b) -> %y, then the hook feeds %y to a
/// Negative: a pass that fuses nothing may keep its ranks for the final
/// check only while its hook adds no edge; a hook that closes a cycle
/// after such a pass is still caught.
TEST(Partitioner, DoesNotTrustTheRanksAfterAHookAddsAnEdge) {
  auto g = parseGraphOrThrow(kChainAroundSin);
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<RewiringPostProperty>("a", "y"));
  std::vector<SubgraphBackend> backends;
  backends.push_back(makeBackend("test", std::move(properties)));
  StatusOr<PartitionReport> report = partitionGraph(*g, backends);
  ASSERT_FALSE(report.isOk());
  EXPECT_THAT(report.status().message(), HasSubstr("not acyclic"));
}

//   %x -> Relu(a) -> Sin(s) -> Neg(b) -> %y, then the hook makes it
//   %x -> Relu(a) -> Sin(s)      %x -> Neg(b) -> %y
/// A pass that selects nothing fills no region tables and leaves every
/// group a single node; a hook edge after it is judged by those ranks, and
/// a later property of the same backend still fuses on tables of its own.
TEST(Partitioner, FusesAfterAPassThatSelectsNothing) {
  auto g = parseGraphOrThrow(kChainAroundSin);
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  // x has no producer, so the new edge x -> b closes no cycle.
  properties.push_back(std::make_unique<RewiringPostProperty>("b", "x"));
  properties.push_back(std::make_unique<LambdaProperty>(
      "ops", [] { return std::make_unique<OpTypeSelector>(kSupported); }));
  PartitionReport report = partitionOk(*g, makeBackend("test", std::move(properties)));
  EXPECT_EQ(regionSets(report), (std::vector<std::vector<std::string>>{{"a"}, {"b"}}));
  EXPECT_EQ(report.regions[0].property, "ops");
  EXPECT_THAT(report.regions[1].inputs, ElementsAre("x"));
  expectValid(*g);
}

//   %x -> Relu(a) -> Sin(s) -> Neg(b) -> %y
/// Negative: a backend that selects nothing fuses nothing and leaves the
/// graph as it was, every node reported as matched by no selector.
TEST(Partitioner, DoesNotChangeTheGraphWhenNothingIsSelected) {
  auto g = parseGraphOrThrow(kChainAroundSin);
  PartitionReport report = partitionOk(*g, opBackend({}));
  EXPECT_THAT(report.regions, IsEmpty());
  EXPECT_EQ(g->numNodes(), 3u);
  ASSERT_EQ(report.rejected.size(), 3u);
  for (const RejectedNode& r : report.rejected) EXPECT_EQ(r.kind, "no-selector") << r.node;
  EXPECT_EQ(report.rejected[0].node, "a");
  EXPECT_EQ(report.rejected[2].node, "b");
}

//   %x -> Relu(a) -> %r -> Neg(b) -> %y
//   If(%c) then: return %r (read by name)   else: return %x
/// A value that only a nested graph reads (by name, so no use list shows
/// it) stays an output of the region that computes it.
TEST(Partitioner, ValueReadOnlyByANestedGraphEscapesItsRegion) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2], %c: bool[]) {
      %r = Relu(%x) @a
      %y = Neg(%r) @b
      %z = If(%c) {
        then_branch = graph @then() { return %r },
        else_branch = graph @else() { return %x }} @branch
      return %y, %z
    })");
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  ASSERT_EQ(report.regions.size(), 1u);
  EXPECT_THAT(report.regions[0].nodes, ElementsAre("a", "b"));
  EXPECT_THAT(report.regions[0].outputs, ElementsAre("r", "y"));
  ASSERT_NE(g->findValue("r"), nullptr);
  EXPECT_NE(g->findValue("r")->producer(), nullptr) << "the If's branch reads %r by name";
}

//   %k = const ; %x -> Add(%x, %k) -> %y ;  If(%c) then: return %k
/// Negative: a constant a nested graph reads by name is not taken into the
/// body of the region that reads it; it must stay in the graph.
TEST(Partitioner, DoesNotTakeAConstantANestedGraphReads) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2], %c: bool[]) {
      %k = const f32[2] [1.0, 2.0]
      %y = Add(%x, %k) @add
      %z = If(%c) {
        then_branch = graph @then() { return %k },
        else_branch = graph @else() { return %x }} @branch
      return %y, %z
    })");
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  ASSERT_EQ(report.regions.size(), 1u);
  ASSERT_NE(g->findValue("k"), nullptr);
  EXPECT_TRUE(g->findValue("k")->isInitializer());
}

//   If(%c) then: %x -> Relu(t1) -> Neg(t2) -> Sin(t3)   else: Exp(e1)
/// The partitioner fuses inside nested graphs too: the then-branch's
/// chain is a region of its own, reported with its scope, and its
/// decisions (Sin left out) carry the scope in the node name.
TEST(Partitioner, FusesInsideIfBranches) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2], %c: bool[]) {
      %y = If(%c) {
        then_branch = graph @then() {
          %a = Relu(%x) @t1
          %b = Neg(%a) @t2
          %s = Sin(%b) @t3
          return %s
        },
        else_branch = graph @else() {
          %e = Exp(%x) @e1
          return %e
        }} @branch
      return %y
    })");
  std::unique_ptr<Graph> before = g->clone();
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  EXPECT_EQ(regionSets(report), (std::vector<std::vector<std::string>>{{"e1"}, {"t1", "t2"}}));
  EXPECT_EQ(report.regions[0].scope, "branch.then_branch");
  EXPECT_EQ(report.regions[1].scope, "branch.else_branch");
  EXPECT_NE(report.regions[0].fusedNode, report.regions[1].fusedNode);
  EXPECT_EQ(report.nodesTotal, 5u);
  EXPECT_EQ(report.nodesInRegions, 3u);
  ASSERT_EQ(report.rejected.size(), 2u);
  EXPECT_EQ(report.rejected[0].node, "branch");
  EXPECT_EQ(report.rejected[1].node, "branch.then_branch:t3");
  const Graph& then = *g->findValue("y")->producer()->attr("then_branch")->asGraph();
  EXPECT_EQ(then.numNodes(), 2u) << printGraph(then);
  // Negative: the clone taken before shares the original branches, which
  // must not change under it.
  const Graph& oldThen = *before->findValue("y")->producer()->attr("then_branch")->asGraph();
  EXPECT_EQ(oldThen.numNodes(), 3u);
}

//   %w = const (main graph);  If(%c) then: Mul(%x, %w) -> %m
/// A branch reads the main graph's constant %w by name; partitioning gives
/// the branch its own reference to that constant (shared data) so backends
/// can see it is constant, while the graph input %x stays a read by name.
TEST(Partitioner, NestedGraphSeesOuterConstantsAsConstants) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2], %c: bool[]) {
      %w = const f32[2] [2.0, 3.0]
      %y = If(%c) {
        then_branch = graph @then() {
          %m = Mul(%x, %w) @mul
          return %m
        },
        else_branch = graph @else() { return %x }} @branch
      return %y
    })");
  PartitionReport report = partitionOk(*g, opBackend(kSupported));
  ASSERT_EQ(report.regions.size(), 1u);
  const Graph& then = *g->findValue("y")->producer()->attr("then_branch")->asGraph();
  ASSERT_EQ(then.numNodes(), 1u);
  const Graph* body = bodyOf(**then.nodes().begin());
  ASSERT_NE(body, nullptr);
  ASSERT_NE(body->findValue("w"), nullptr);
  EXPECT_TRUE(body->findValue("w")->isInitializer()) << "the region took the constant";
  EXPECT_EQ(body->findValue("w")->initializer()->bytes().data(),
            g->findValue("w")->initializer()->bytes().data());
  ASSERT_NE(then.findValue("x"), nullptr);
  EXPECT_FALSE(then.findValue("x")->isInitializer()) << "a graph input is no constant";
}

using Regions = std::vector<std::vector<std::string>>;

// A selector over OpTypeSelector that counts the nodes offered as seeds.
class CountingSelector : public OpTypeSelector {
 public:
  CountingSelector(std::set<std::string> supported, std::vector<std::string>* offered)
      : OpTypeSelector(std::move(supported)), offered_(offered) {}
  Decision Select(const Node& node) override {
    offered_->push_back(node.name());
    return node.opType() == "Relu" ? OpTypeSelector::Select(node) : Decision::no();
  }

 private:
  std::vector<std::string>* offered_;
};

// A property seeding at Relu (declared or not) and growing over Relu/Sigmoid.
class ReluSeededProperty : public SubgraphProperty {
 public:
  ReluSeededProperty(bool declare, std::vector<std::string>* offered)
      : declare_(declare), offered_(offered) {}
  std::string name() const override { return "relu_seeded"; }
  std::unique_ptr<SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<CountingSelector>(std::set<std::string>{"Relu", "Sigmoid"}, offered_);
  }
  std::vector<std::string> SeedOpTypes() const override {
    return declare_ ? std::vector<std::string>{"Relu"} : std::vector<std::string>{};
  }

 private:
  bool declare_;
  std::vector<std::string>* offered_;
};

//   %x -> Sigmoid @s1 -> Relu @r1 -> Sigmoid @s2 -> Tanh @t -> Relu @r2
/// A property that declares its seed ops is offered only nodes of those
/// ops, in the same order, and forms the same regions (which grow over
/// other ops) and reasons as when every node is offered; after an earlier
/// pass fused some nodes, the index follows the new graph.
TEST(Partitioner, OffersDeclaredSeedOpsOnly) {
  const char* text = R"(
    graph @g(%x: f32[4]) {
      %a = Sigmoid(%x) @s1
      %b = Relu(%a) @r1
      %c = Sigmoid(%b) @s2
      %d = Tanh(%c) @t
      %e = Relu(%d) @r2
      return %e
    })";
  auto run = [&](bool declare, std::vector<std::string>& offered) {
    auto g = parseGraphOrThrow(text);
    std::vector<std::unique_ptr<SubgraphProperty>> properties;
    properties.push_back(std::make_unique<LambdaProperty>(
        "tanh", [] { return std::make_unique<OpTypeSelector>(std::set<std::string>{"Tanh"}); }));
    properties.push_back(std::make_unique<ReluSeededProperty>(declare, &offered));
    std::vector<SubgraphBackend> backends;
    backends.push_back(makeBackend("b", std::move(properties)));
    return partitionOk(*g, backends);
  };
  std::vector<std::string> all, declared;
  PartitionReport full = run(false, all);
  PartitionReport seeded = run(true, declared);
  EXPECT_THAT(all, ElementsAre("s1", "r1", "r2"));  // r1's region took s2
  EXPECT_THAT(declared, ElementsAre("r1", "r2"));
  EXPECT_EQ(regionSets(seeded), regionSets(full));
  EXPECT_EQ(regionSets(seeded), (Regions{{"r1", "s1", "s2"}, {"r2"}, {"t"}}));
  EXPECT_EQ(reasonFor(seeded, "s1"), reasonFor(full, "s1"));
}

/// A pattern property declares its anchor's ops; an any-op anchor none.
TEST(Partitioner, PatternPropertySeedsAtItsAnchor) {
  PatternProperty conv("conv_bn", Pattern::chain("conv_bn", {OpMatcher::anyOf({"Conv", "x.Op"}),
                                                             "BatchNormalization"}));
  EXPECT_THAT(conv.SeedOpTypes(), ElementsAre("Conv", "x.Op"));
  PatternProperty any("any", Pattern::chain("any", {OpMatcher::anyOp(), "Relu"}));
  EXPECT_THAT(any.SeedOpTypes(), IsEmpty());
}

}  // namespace
}  // namespace subgraph::partition
