//===- tests/subgraph/region_move_test.cpp - Bodies moved, not copied -----===//
//
// A property that FusesWithoutBody (PatternProperty) gets its region bodies
// by moving the members out of the graph at surgery; any other property
// gets a copy built before CreateSubgraphNode. The two must be
// indistinguishable: each test partitions the same graph both ways and
// compares the partitioned graphs, every body and the reports.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "partition_test_util.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/partition/pattern_selector.h"

namespace subgraph::partition {
namespace {

using ::testing::UnorderedElementsAre;
using namespace testing;

/// The same pattern and name as a PatternProperty, but through the default
/// (copying) path: it does not claim FusesWithoutBody.
class CopyingPatternProperty : public SubgraphProperty {
 public:
  CopyingPatternProperty(std::string name, Pattern pattern, PropertyOptions options)
      : inner_(name, std::move(pattern), options), name_(std::move(name)) {
    setOptions(options);
  }
  std::string name() const override { return name_; }
  std::unique_ptr<SubgraphSelectorV2> CreateSubgraphSelectorV2() const override {
    return inner_.CreateSubgraphSelectorV2();
  }

 private:
  PatternProperty inner_;
  std::string name_;
};

struct Partitioned {
  std::unique_ptr<Graph> graph;
  PartitionReport report;
};

Partitioned partitionWith(const std::string& text, std::unique_ptr<SubgraphProperty> property) {
  Partitioned out{parseGraphOrThrow(text), {}};
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::move(property));
  out.report = partitionOk(*out.graph, makeBackend("pat", std::move(properties)));
  out.report.partitionMs = 0;
  return out;
}

// Partitions `text` both ways and expects identical results; returns the
// moved one for further checks.
Partitioned expectSameBothWays(const std::string& text, const Pattern& pattern,
                               PropertyOptions options = {}) {
  Partitioned moved =
      partitionWith(text, std::make_unique<PatternProperty>(pattern.name(), pattern, options));
  Partitioned copied = partitionWith(
      text, std::make_unique<CopyingPatternProperty>(pattern.name(), pattern, options));
  EXPECT_EQ(printGraph(*moved.graph), printGraph(*copied.graph));
  EXPECT_EQ(reportToJson(moved.report), reportToJson(copied.report));
  std::vector<const Graph*> movedBodies, copiedBodies;
  for (Node* n : moved.graph->nodes())
    if (const Graph* b = bodyOf(*n)) movedBodies.push_back(b);
  for (Node* n : copied.graph->nodes())
    if (const Graph* b = bodyOf(*n)) copiedBodies.push_back(b);
  EXPECT_EQ(movedBodies.size(), copiedBodies.size());
  for (size_t i = 0; i < std::min(movedBodies.size(), copiedBodies.size()); ++i) {
    EXPECT_EQ(printGraph(*movedBodies[i]), printGraph(*copiedBodies[i]));
    // Same ids too: exporters list initializers in id order.
    std::vector<std::string> a, b;
    for (Value* v : movedBodies[i]->values()) a.push_back(v->name());
    for (Value* v : copiedBodies[i]->values()) b.push_back(v->name());
    EXPECT_EQ(a, b);
    expectValid(*movedBodies[i]);
  }
  return moved;
}

Pattern convRelu() { return Pattern::chain("conv_relu", {"Conv", "Relu"}); }

//   %x -> Conv c1 (%w shared, %b own) -> %t -> Relu r1 -> %a
//                                        %t -> Sin s  -> %u (output)
//   %a -> Conv c2 (%w) -> Relu r2 -> %y (output)
//   %a -> Neg n -> %z (output)
// Region 1 shares %w with region 2, owns %b, and its %t escapes to Sin
// while Relu reads it inside; region 2's output is a graph output.
const char* kTwoRegions = R"(
    graph @g(%x: f32[1, 2, 4, 4]) {
      %w = const f32[2, 2, 1, 1] splat(0.5)
      %b = const f32[2] splat(0.25)
      %t = Conv(%x, %w, %b) @c1
      %a = Relu(%t) @r1
      %u = Sin(%t) @s
      %c = Conv(%a, %w) @c2
      %y = Relu(%c) @r2
      %z = Neg(%a) @n
      return %y, %z, %u
    })";

/// Moving gives the graph, bodies, ids and report that copying gives.
TEST(RegionMove, MovedBodiesMatchCopiedBodies) {
  Partitioned moved = expectSameBothWays(kTwoRegions, convRelu());
  EXPECT_EQ(regionSets(moved.report),
            (std::vector<std::vector<std::string>>{{"c1", "r1"}, {"c2", "r2"}}));
  // The constant only region 1 read went with it; the shared one stayed
  // out of the graph too, since only bodies read it now.
  EXPECT_EQ(moved.graph->findValue("b"), nullptr);
  EXPECT_EQ(moved.graph->findValue("w"), nullptr);
  EXPECT_EQ(moved.graph->numNodes(), 4u);  // two fused nodes, Sin, Neg
}

/// Same with constants passed in as inputs and duplicate reads unmerged.
TEST(RegionMove, MovedBodiesMatchCopiedBodiesWithoutInliningOrMerging) {
  PropertyOptions options;
  options.inlineConstants = false;
  options.mergeDuplicatedInputs = false;
  Partitioned moved = expectSameBothWays(kTwoRegions, convRelu(), options);
  EXPECT_NE(moved.graph->findValue("w"), nullptr);  // an input of both fused nodes
  EXPECT_EQ(moved.graph->findValue("w")->uses().size(), 2u);

  //   %x -> Add(%x, %x) -> Relu -> %y
  const char* dup = R"(
    graph @g(%x: f32[4]) {
      %s = Add(%x, %x) @add
      %y = Relu(%s) @relu
      return %y
    })";
  Pattern addRelu = Pattern::chain("add_relu", {"Add", "Relu"});
  moved = expectSameBothWays(dup, addRelu, options);
  EXPECT_EQ(moved.report.regions.at(0).inputs, (std::vector<std::string>{"x", "x"}));
  moved = expectSameBothWays(dup, addRelu);
  EXPECT_EQ(moved.report.regions.at(0).inputs, (std::vector<std::string>{"x"}));
}

/// Negative: nothing of a moved region stays behind in the graph, and a
/// graph value read both by the region and outside it keeps exactly the
/// outside readers plus the fused node.
TEST(RegionMove, LeavesNoTraceOfTheMembers) {
  Partitioned moved = expectSameBothWays(kTwoRegions, convRelu());
  const Graph& g = *moved.graph;
  for (const char* name : {"c1", "r1", "c2", "r2"}) EXPECT_EQ(g.findNode(name), nullptr) << name;
  EXPECT_EQ(g.findValue("c"), nullptr);  // internal to region 2
  Value* a = g.findValue("a");
  ASSERT_NE(a, nullptr);
  std::vector<std::string> readers;
  for (const Use& u : a->uses()) readers.push_back(u.user->name());
  EXPECT_THAT(readers, UnorderedElementsAre("n", "pat_conv_relu_1"));
  for (Value* v : g.values())
    for (const Use& u : v->uses()) EXPECT_EQ(u.user->graph(), &g) << v->name();
}

//   %x -> Exp e -> %a ----+
//   %x -> Neg p -> %v -> Add m -> %m (output)
//                  %v -> Sin s -> %s (output)
// Region {e, m} is seeded first and moved first; it reads %v, which region
// {p, s}, moved after it, computes. Moving {e, m} drops m's use of %v at
// once (a short list), so %v's list then names only s.
const char* kEarlierRegionReadsLater = R"(
    graph @g(%x: f32[4]) {
      %a = Exp(%x) @e
      %v = Neg(%x) @p
      %m = Add(%a, %v) @m
      %s = Sin(%v) @s
      return %m, %s
    })";

/// Negative: a value that a region moved earlier read must not be taken
/// into a later region's body as internal, though its use list no longer
/// shows that reader; it stays an output of the later fused node.
TEST(RegionMove, ValueReadByAnEarlierMovedRegionStillEscapes) {
  Pattern pattern =
      Pattern::chain("pair", {OpMatcher::anyOf({"Exp", "Neg"}), OpMatcher::anyOf({"Add", "Sin"})});
  Partitioned moved = expectSameBothWays(kEarlierRegionReadsLater, pattern);
  EXPECT_EQ(regionSets(moved.report),
            (std::vector<std::vector<std::string>>{{"e", "m"}, {"p", "s"}}));
  EXPECT_EQ(moved.report.regions.at(1).outputs, (std::vector<std::string>{"v", "s"}));
  const Graph& g = *moved.graph;
  expectValid(g);
  Value* v = g.findValue("v");
  ASSERT_NE(v, nullptr);
  ASSERT_NE(v->producer(), nullptr);
  EXPECT_EQ(v->producer()->name(), "pat_pair_1");
  ASSERT_EQ(v->uses().size(), 1u);
  EXPECT_EQ(v->uses()[0].user->name(), "pat_pair_0");
}

}  // namespace
}  // namespace subgraph::partition
