//===- tests/subgraph/pattern_selector_test.cpp - Declarative patterns ----===//
//
// Each test draws a small graph, partitions it with one PatternProperty,
// and checks the regions; negative tests say why a near-match must not
// fuse. Pattern validation errors are checked one per kind.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/pattern_selector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "partition_test_util.h"

namespace subgraph::partition {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace testing;

using Regions = std::vector<std::vector<std::string>>;

SubgraphBackend patternBackend(Pattern pattern, PropertyOptions options = {}) {
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  std::string name = pattern.name();
  properties.push_back(std::make_unique<PatternProperty>(name, std::move(pattern), options));
  return makeBackend("pat", std::move(properties));
}

Pattern convBnAct() {
  return Pattern::chain(
      "conv_bn_act",
      {"Conv", "BatchNormalization", OpMatcher::anyOf({"Relu", "Clip", "HardSwish"}).optional()});
}

// Conv (not grouped) -> BatchNormalization: the anchor has a predicate.
Pattern denseConvBn() {
  return Pattern::chain(
      "dense_conv_bn",
      {OpMatcher("Conv").where(predicates::attrEquals("group", int64_t{1})), "BatchNormalization"});
}

// %x -> Conv -> <middle> -> %y, with %x also an input of a final Add when
// the middle has one.
std::string convThen(const std::string& middle) {
  return R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, 4, 3, 3] splat(0.5)
      %s = const f32[4] splat(1.0)
      %b = const f32[4] splat(0.0)
      %m = const f32[4] splat(0.0)
      %v = const f32[4] splat(1.0)
      %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} @conv
)" + middle +
         R"(
    })";
}

// Conv -> BN -> <activation> blocks; the activation is a parameter.
std::string convBnBlock(const std::string& activation) {
  return convThen("%n = BatchNormalization(%c, %s, %b, %m, %v) @bn\n %y = " + activation +
                  "(%n) @act\n return %y");
}

//   %x -> Conv -> BatchNormalization -> HardSwish -> %y
/// The optional activation joins the region when it is one of the allowed ops.
TEST(PatternSelector, MatchesChainWithOptionalActivation) {
  auto g = parseGraphOrThrow(convBnBlock("HardSwish"));
  PartitionReport report = partitionOk(*g, patternBackend(convBnAct()));
  EXPECT_EQ(regionSets(report), (Regions{{"act", "bn", "conv"}}));
  EXPECT_THAT(report.regions[0].inputs, ElementsAre("x"));
}

//   %x -> Conv -> BatchNormalization -> Sigmoid -> %y
/// An activation outside the allowed set is left out; Conv+BN still fuse.
TEST(PatternSelector, DoesNotFuseActivationOutsideTheAllowedSet) {
  auto g = parseGraphOrThrow(convBnBlock("Sigmoid"));
  PartitionReport report = partitionOk(*g, patternBackend(convBnAct()));
  EXPECT_EQ(regionSets(report), (Regions{{"bn", "conv"}}));
  EXPECT_EQ(reasonFor(report, "act"), "no selector matched");
}

//   %x -> Conv -> Relu -> %y, and a BatchNormalization of %x
/// A Conv without a BatchNormalization consumer does not seed, and the
/// report says what was missing.
TEST(PatternSelector, DoesNotFuseConvWithoutBatchNormalization) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, 4, 1, 1] splat(0.5)
      %s = const f32[4] splat(1.0)
      %b = const f32[4] splat(0.0)
      %c = Conv(%x, %w) @conv
      %y = Relu(%c) @relu
      %n = BatchNormalization(%x, %s, %b, %b, %s) @bn
      return %y, %n
    })");
  PartitionReport report = partitionOk(*g, patternBackend(convBnAct()));
  EXPECT_THAT(report.regions, IsEmpty());
  EXPECT_EQ(reasonFor(report, "conv"),
            "not selected by pat/conv_bn_act: pattern 'conv_bn_act': Relu 'relu' is not "
            "BatchNormalization");
}

// x -> Conv(group <group>) -> Relu -> %y, and <extra> before the return.
std::string convReluWith(int group, const std::string& extra, const std::string& returned) {
  return R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, )" +
         std::to_string(4 / group) + R"(, 1, 1] splat(0.5)
      %s = const f32[4] splat(1.0)
      %b = const f32[4] splat(0.0)
      %c = Conv(%x, %w) {group = )" +
         std::to_string(group) + R"(} @conv
      %y = Relu(%c) @relu
)" + extra +
         "\n      return " + returned + "\n    }";
}

/// A pattern with a required node whose op no node of the graph has can
/// match nowhere (PatternSelector::missingRequiredOps): each anchor is
/// turned down for that, unless it fails its own predicates first, whose
/// reason a search would have given too. Negative: an optional node of an
/// absent op does not stop a match, and where the op is present, however
/// far away, the search runs and names the node it failed at.
TEST(PatternSelector, APatternWhoseRequiredOpTheGraphLacksIsNotSearched) {
  {
    auto g = parseGraphOrThrow(convReluWith(1, "", "%y"));
    PartitionReport report = partitionOk(*g, patternBackend(convBnAct()));
    EXPECT_THAT(report.regions, IsEmpty());
    EXPECT_EQ(reasonFor(report, "conv"),
              "not selected by pat/conv_bn_act: pattern 'conv_bn_act': the graph has no "
              "BatchNormalization");
  }
  {
    auto g = parseGraphOrThrow(convReluWith(2, "", "%y"));
    PartitionReport report = partitionOk(*g, patternBackend(denseConvBn()));
    EXPECT_EQ(reasonFor(report, "conv"),
              "not selected by pat/dense_conv_bn: pattern 'dense_conv_bn': attribute 'group' is "
              "not 1");
  }
  {
    auto g = parseGraphOrThrow(convReluWith(1, "", "%y"));
    PartitionReport report = partitionOk(
        *g, patternBackend(Pattern::chain(
                "conv_bn_relu", {"Conv", OpMatcher("BatchNormalization").optional(), "Relu"})));
    EXPECT_EQ(regionSets(report), (Regions{{"conv", "relu"}}));
  }
  {
    auto g = parseGraphOrThrow(
        convReluWith(1, "      %n = BatchNormalization(%x, %s, %b, %b, %s) @bn", "%y, %n"));
    PartitionReport report = partitionOk(*g, patternBackend(convBnAct()));
    EXPECT_THAT(reasonFor(report, "conv"), HasSubstr("Relu 'relu' is not BatchNormalization"));
  }
}

//   %x -> Conv -> Relu -> %y, and %x -> Conv(group 2) -> %z
/// Under deferred reasons, the anchor of a pattern that can match nowhere
/// is turned down without running its predicates: only a node left
/// unfused has its text built. Negative: the Conv a later property fuses
/// is never checked, and the one left out still gets the predicate's
/// reason.
TEST(PatternSelector, AMissingOpDefersTheAnchorCheckToTheReasonsRead) {
  auto g = parseGraphOrThrow(convReluWith(1,
                                          "      %w2 = const f32[4, 2, 1, 1] splat(0.5)\n"
                                          "      %z = Conv(%x, %w2) {group = 2} @grouped",
                                          "%y, %z"));
  auto checked = std::make_shared<std::vector<std::string>>();
  OpMatcher counted = OpMatcher("Conv").where([checked](const Node& n) {
    checked->push_back(n.name());
    return predicates::attrEquals("group", int64_t{1})(n);
  });
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<PatternProperty>(
      "conv_bn", Pattern::chain("conv_bn", {counted, "BatchNormalization"})));
  // Anchored at the Relu, so that the grouped Conv keeps conv_bn's reason.
  PatternBuilder reluConv("relu_conv");
  reluConv.add(OpMatcher("Relu"));
  reluConv.add(OpMatcher("Conv"));
  reluConv.connect(1, 0, 0);
  properties.push_back(std::make_unique<PatternProperty>("relu_conv", reluConv.build().value()));
  PartitionReport report = partitionOk(*g, makeBackend("pat", std::move(properties)));
  EXPECT_EQ(regionSets(report), (Regions{{"conv", "relu"}}));
  EXPECT_THAT(*checked, ElementsAre("grouped"));
  EXPECT_EQ(reasonFor(report, "grouped"),
            "not selected by pat/conv_bn: pattern 'conv_bn': attribute 'group' is not 1");
}

// A PatternSelector whose Filter keeps the anchor alone.
class AnchorOnlySelector : public PatternSelector {
 public:
  using PatternSelector::PatternSelector;
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override {
    std::vector<const Node*> kept = PatternSelector::Filter(candidates);
    kept.resize(std::min<size_t>(kept.size(), 1));
    return kept;
  }
};

class AnchorOnlyProperty : public SubgraphProperty {
 public:
  std::string name() const override { return "anchor_only"; }
  std::unique_ptr<SubgraphSelectorV2> CreateSubgraphSelectorV2() const override {
    return std::make_unique<AnchorOnlySelector>(std::make_shared<const Pattern>(convBnAct()));
  }
};

//   %x -> Conv -> BatchNormalization -> Relu -> %y
/// A plain PatternSelector's region is its match (the partitioner takes
/// it without growing or filtering). Negative: a subclass that filters
/// otherwise is grown and filtered as any selector is, so its Filter
/// still decides.
TEST(PatternSelector, ARegionIsTheMatchUnlessASubclassFiltersOtherwise) {
  auto g = parseGraphOrThrow(convBnBlock("Relu"));
  PartitionReport plain = partitionOk(*g, patternBackend(convBnAct()));
  EXPECT_EQ(regionSets(plain), (Regions{{"act", "bn", "conv"}}));

  auto h = parseGraphOrThrow(convBnBlock("Relu"));
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<AnchorOnlyProperty>());
  PartitionReport filtered = partitionOk(*h, makeBackend("pat", std::move(properties)));
  EXPECT_EQ(regionSets(filtered), (Regions{{"conv"}}));
  EXPECT_THAT(reasonFor(filtered, "bn"), HasSubstr("dropped by Filter of pat/anchor_only"));
}

//   %x -> Conv(group = 2) -> BatchNormalization -> %y
/// A predicate on attributes rejects the anchor, with the predicate's reason.
TEST(PatternSelector, DoesNotFuseWhenAttributePredicateFails) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, 2, 1, 1] splat(0.5)
      %s = const f32[4] splat(1.0)
      %b = const f32[4] splat(0.0)
      %m = const f32[4] splat(0.0)
      %v = const f32[4] splat(1.0)
      %c = Conv(%x, %w) {group = 2} @conv
      %y = BatchNormalization(%c, %s, %b, %m, %v) @bn
      return %y
    })");
  PartitionReport report = partitionOk(*g, patternBackend(denseConvBn()));
  EXPECT_THAT(report.regions, IsEmpty());
  EXPECT_THAT(reasonFor(report, "conv"), HasSubstr("attribute 'group' is not 1"));
}

//   %x -> Conv(group 2) -> Relu -> Conv -> Sigmoid -> Conv(group 2) -> Relu -> Conv -> Sigmoid,
//   and a BatchNormalization of %x
/// An anchor that fails a predicate gets a reason that does not name it
/// (the report names it already), so one text stands for every such
/// anchor; reasons that name another node stay apart, however the two
/// kinds interleave.
TEST(PatternSelector, AnchorReasonsLeaveTheAnchorUnnamedAndStayApartFromOthers) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, 4, 1, 1] splat(0.5)
      %w2 = const f32[4, 2, 1, 1] splat(0.5)
      %c1 = Conv(%x, %w2) {group = 2} @grouped1
      %r1 = Relu(%c1) @relu1
      %c2 = Conv(%r1, %w) @dense1
      %s2 = Sigmoid(%c2) @sig1
      %c3 = Conv(%s2, %w2) {group = 2} @grouped2
      %r3 = Relu(%c3) @relu2
      %c4 = Conv(%r3, %w) @dense2
      %y = Sigmoid(%c4) @sig2
      %s = const f32[4] splat(1.0)
      %n = BatchNormalization(%x, %s, %s, %s, %s) @bn
      return %y, %n
    })");
  PartitionReport report = partitionOk(*g, patternBackend(denseConvBn()));
  EXPECT_THAT(report.regions, IsEmpty());
  const std::string anchor =
      "not selected by pat/dense_conv_bn: pattern 'dense_conv_bn': attribute 'group' is not 1";
  EXPECT_EQ(reasonFor(report, "grouped1"), anchor);
  EXPECT_EQ(reasonFor(report, "grouped2"), anchor);
  EXPECT_EQ(reasonFor(report, "dense1"),
            "not selected by pat/dense_conv_bn: pattern 'dense_conv_bn': Sigmoid 'sig1' is not "
            "BatchNormalization");
  EXPECT_EQ(reasonFor(report, "dense2"),
            "not selected by pat/dense_conv_bn: pattern 'dense_conv_bn': Sigmoid 'sig2' is not "
            "BatchNormalization");
  // Not the anchor's own name, nor the other anchor's text.
  EXPECT_THAT(reasonFor(report, "grouped1"), Not(HasSubstr("grouped1")));
  EXPECT_THAT(reasonFor(report, "dense2"), Not(HasSubstr("sig1")));
}

//   x -> Conv -> Relu, then the same block with a BatchNormalization
/// A node one property turns down and a later property fuses is not
/// reported with the first property's reason.
TEST(PatternSelector, ANodeFusedByALaterPropertyLeavesNoReasonBehind) {
  auto g = parseGraphOrThrow(convBnBlock("Relu"));
  std::vector<std::unique_ptr<SubgraphProperty>> properties;
  properties.push_back(std::make_unique<PatternProperty>(
      "conv_hswish", Pattern::chain("conv_hswish", {"Conv", "BatchNormalization", "HardSwish"})));
  properties.push_back(std::make_unique<PatternProperty>("conv_bn_act", convBnAct()));
  PartitionReport report = partitionOk(*g, makeBackend("pat", std::move(properties)));
  EXPECT_EQ(regionSets(report), (Regions{{"act", "bn", "conv"}}));
  EXPECT_THAT(report.rejected, IsEmpty());
}

//   %x -> Conv @conv -> Sigmoid @sig -> %y
/// A reason that names another node waits to be built until the walk ends
/// (PatternSelector::deferReasons): kept when no later property decides on
/// the node (the Relu pattern does not anchor on a Conv), replaced when a
/// later one turns the node down for a reason of its own. Negative: the
/// deferred text is never lost or left empty, nor built from the wrong
/// property.
TEST(PatternSelector, AReasonThatNamesANodeIsBuiltWhenTheWalkEnds) {
  const char* kGraph = R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, 4, 1, 1] splat(0.5)
      %c = Conv(%x, %w) @conv
      %y = Sigmoid(%c) @sig
      %s = const f32[4] splat(1.0)
      %n = BatchNormalization(%x, %s, %s, %s, %s) @bn
      return %y, %n
    })";
  const std::string deep =
      "not selected by pat/conv_bn: pattern 'conv_bn': Sigmoid 'sig' is not BatchNormalization";
  {
    auto g = parseGraphOrThrow(kGraph);
    std::vector<std::unique_ptr<SubgraphProperty>> properties;
    properties.push_back(std::make_unique<PatternProperty>(
        "conv_bn", Pattern::chain("conv_bn", {"Conv", "BatchNormalization"})));
    properties.push_back(
        std::make_unique<PatternProperty>("relu", Pattern::chain("relu", {"Relu"})));
    PartitionReport report = partitionOk(*g, makeBackend("pat", std::move(properties)));
    EXPECT_THAT(report.regions, IsEmpty());
    EXPECT_EQ(reasonFor(report, "conv"), deep);
  }
  {
    auto g = parseGraphOrThrow(kGraph);
    std::vector<std::unique_ptr<SubgraphProperty>> properties;
    properties.push_back(std::make_unique<PatternProperty>(
        "conv_bn", Pattern::chain("conv_bn", {"Conv", "BatchNormalization"})));
    properties.push_back(std::make_unique<PatternProperty>(
        "grouped", Pattern::chain("grouped", {OpMatcher("Conv").where(
                                                 predicates::attrEquals("group", int64_t{2}))})));
    PartitionReport report = partitionOk(*g, makeBackend("pat", std::move(properties)));
    EXPECT_THAT(report.regions, IsEmpty());
    const std::string later = reasonFor(report, "conv");
    EXPECT_THAT(later, HasSubstr("not selected by pat/grouped: pattern 'grouped': "));
    EXPECT_THAT(later, Not(HasSubstr("Sigmoid")));
  }
}

//   %x: f32[0, 4, 8, 8] -> Conv -> BatchNormalization -> %y
/// A zero-size tensor fails the shape predicate, which says which value.
TEST(PatternSelector, DoesNotFuseZeroSizeTensorsWhenThePatternForbidsThem) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[0, 4, 8, 8]) {
      %w = const f32[4, 4, 1, 1] splat(0.5)
      %s = const f32[4] splat(1.0)
      %b = const f32[4] splat(0.0)
      %m = const f32[4] splat(0.0)
      %v = const f32[4] splat(1.0)
      %c = Conv(%x, %w) @conv
      %y = BatchNormalization(%c, %s, %b, %m, %v) @bn
      return %y
    })");
  Pattern p = Pattern::chain(
      "conv_bn", {OpMatcher("Conv").where(predicates::noZeroSizeDims()), "BatchNormalization"});
  PartitionReport report = partitionOk(*g, patternBackend(std::move(p)));
  EXPECT_THAT(report.regions, IsEmpty());
  EXPECT_THAT(reasonFor(report, "conv"), HasSubstr("input 'x' is empty: f32[0, 4, 8, 8]"));
}

//   %x -> Conv -> Add(residual %x) -> Relu -> %y
/// A small DAG pattern: the Add's other input (the residual) comes from
/// outside and stays a region input.
TEST(PatternSelector, MatchesConvAddReluWithResidualInput) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, 4, 1, 1] splat(0.5)
      %c = Conv(%x, %w) @conv
      %a = Add(%x, %c) @add
      %y = Relu(%a) @relu
      return %y
    })");
  PatternBuilder builder("conv_add_relu");
  size_t conv = builder.add("Conv");
  size_t add = builder.add("Add");
  size_t relu = builder.add("Relu");
  builder.connect(conv, add).connect(add, relu, 0);
  PartitionReport report = partitionOk(*g, patternBackend(builder.build().value()));
  EXPECT_EQ(regionSets(report), (Regions{{"add", "conv", "relu"}}));
  EXPECT_THAT(report.regions[0].inputs, ElementsAre("x"));
}

//   %x -> Conv(a) -> Relu(r1);  Conv(a) -> BN(b) -> %y
/// Backtracking: the first consumer of the Conv is not a BN, the second is.
TEST(PatternSelector, FindsMatchAmongSeveralConsumers) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, 4, 1, 1] splat(0.5)
      %s = const f32[4] splat(1.0)
      %b = const f32[4] splat(0.0)
      %m = const f32[4] splat(0.0)
      %v = const f32[4] splat(1.0)
      %c = Conv(%x, %w) @conv
      %r = Relu(%c) @relu
      %y = BatchNormalization(%c, %s, %b, %m, %v) @bn
      return %r, %y
    })");
  PartitionReport report = partitionOk(*g, patternBackend(convBnAct()));
  EXPECT_EQ(regionSets(report), (Regions{{"bn", "conv"}}));
  // The Conv's output is still read by the Relu, so it escapes the region.
  EXPECT_THAT(report.regions[0].outputs, ElementsAre("c", "y"));
}

//   %x -> Conv -> BN -> Relu(r) -> %y ; BN -> Sin -> Add(r, sin) ... (r also feeds Add)
/// A retry after a cycle-forming node is excluded matches around it: the
/// optional Relu would close a cycle, so Conv+BN fuse without it.
TEST(PatternSelector, RematchesAroundExcludedOptionalNode) {
  // bn -> relu is in the pattern; bn -> sin -> relu would leave and re-enter.
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %w = const f32[4, 4, 1, 1] splat(0.5)
      %s = const f32[4] splat(1.0)
      %b = const f32[4] splat(0.0)
      %m = const f32[4] splat(0.0)
      %v = const f32[4] splat(1.0)
      %c = Conv(%x, %w) @conv
      %n = BatchNormalization(%c, %s, %b, %m, %v) @bn
      %t = Sin(%n) @sin
      %y = Add(%n, %t) @add
      return %y
    })");
  Pattern p =
      Pattern::chain("conv_bn_add", {"Conv", "BatchNormalization", OpMatcher("Add").optional()});
  PartitionReport report = partitionOk(*g, patternBackend(std::move(p)));
  EXPECT_EQ(regionSets(report), (Regions{{"bn", "conv"}}));
  EXPECT_THAT(reasonFor(report, "add"), HasSubstr("would form a cycle through node Sin 'sin'"));
}

/// Every pattern mistake is reported with the pattern's name.
TEST(PatternSelector, RejectsMalformedPatterns) {
  EXPECT_THAT(PatternBuilder("empty").build().status().message(),
              HasSubstr("pattern 'empty': it has no nodes"));
  {
    PatternBuilder b("optional_anchor");
    b.add(OpMatcher("Conv").optional());
    EXPECT_THAT(b.build().status().message(), HasSubstr("the anchor (node 0) cannot be optional"));
  }
  {
    PatternBuilder b("island");
    b.add("Conv");
    b.add("Relu");
    EXPECT_THAT(b.build().status().message(), HasSubstr("node 1 (Relu) has no edge"));
  }
  {
    PatternBuilder b("dangling");
    b.add("Conv");
    b.connect(0, 5);
    EXPECT_THAT(b.build().status().message(), HasSubstr("an edge refers to node 5"));
  }
  {
    // Add feeds the optional Relu rather than reading through it: when the
    // Relu is absent nothing connects the Add to the Conv.
    PatternBuilder b("beside_optional");
    b.add("Conv");
    b.add(OpMatcher("Relu").optional());
    b.add("Add");
    b.connect(0, 1).connect(2, 1);
    EXPECT_THAT(b.build().status().message(),
                HasSubstr("required node 2 (Add) connects to earlier nodes only through "
                          "optional ones that pass no input through"));
  }
}

// Conv -> [BN] -> [Add] -> [Relu] as one pattern: a skipped optional node
// passes its input through.
Pattern convFamily() {
  return Pattern::chain("conv_family", {"Conv", OpMatcher("BatchNormalization").optional(),
                                        OpMatcher("Add").optional(), OpMatcher("Relu").optional()});
}

//   Conv -> Add -> Relu; Conv -> BN -> Relu; Conv -> Relu; Conv -> BN -> Add
/// One pattern with optional members matches every variant of the family:
/// an absent BatchNormalization or Add is passed through, so the nodes
/// after it still join.
TEST(PatternSelector, OptionalMembersPassTheirInputThrough) {
  const std::pair<const char*, Regions> cases[] = {
      {"%a = Add(%c, %x) @add\n %y = Relu(%a) @relu\n return %y", {{"add", "conv", "relu"}}},
      {"%n = BatchNormalization(%c, %s, %b, %m, %v) @bn\n %y = Relu(%n) @relu\n return %y",
       {{"bn", "conv", "relu"}}},
      {"%y = Relu(%c) @relu\n return %y", {{"conv", "relu"}}},
      {"%n = BatchNormalization(%c, %s, %b, %m, %v) @bn\n %y = Add(%n, %x) @add\n return %y",
       {{"add", "bn", "conv"}}},
  };
  for (const auto& [middle, want] : cases) {
    SCOPED_TRACE(middle);
    auto g = parseGraphOrThrow(convThen(middle));
    EXPECT_EQ(regionSets(partitionOk(*g, patternBackend(convFamily()))), want);
  }
}

//   %x -> Conv -> Sigmoid -> Relu -> %y
/// Passing through never jumps over a node that is there: with a Sigmoid
/// between them, the Relu does not read the Conv, so it stays out.
TEST(PatternSelector, OptionalMembersDoNotJumpOverPresentNodes) {
  auto g = parseGraphOrThrow(convThen("%t = Sigmoid(%c) @sig\n %y = Relu(%t) @relu\n return %y"));
  PartitionReport report = partitionOk(*g, patternBackend(convFamily()));
  EXPECT_EQ(regionSets(report), (Regions{{"conv"}}));
  auto fresh =
      parseGraphOrThrow(convThen("%t = Sigmoid(%c) @sig\n %y = Relu(%t) @relu\n return %y"));
  Pattern family = convFamily();
  PatternMatch match = matchPattern(family, *fresh->findNode("conv"));
  ASSERT_TRUE(match.ok());
  EXPECT_EQ(match.nodes[3], nullptr);  // the Relu is not matched
}

// Conv -> [BN] -> Add: a required node after an optional one.
StatusOr<Pattern> convMaybeBnAdd() {
  PatternBuilder b("conv_maybe_bn_add");
  b.add("Conv");
  b.add(OpMatcher("BatchNormalization").optional());
  b.add("Add");
  b.connect(0, 1, 0).connect(1, 2);
  return b.build();
}

//   %x -> Conv -> Add(%x) -> %y
/// A required node may follow optional ones it reads through: Conv ->
/// [BN] -> Add matches Conv -> Add, and still needs the Add.
TEST(PatternSelector, RequiredNodeAfterOptionalOnes) {
  StatusOr<Pattern> p = convMaybeBnAdd();
  ASSERT_TRUE(p.isOk()) << p.status().message();
  auto g = parseGraphOrThrow(convThen("%y = Add(%c, %x) @add\n return %y"));
  EXPECT_EQ(regionSets(partitionOk(*g, patternBackend(p.value()))), (Regions{{"add", "conv"}}));
  auto lone = parseGraphOrThrow(convThen("%y = Relu(%c) @relu\n return %y"));
  EXPECT_THAT(regionSets(partitionOk(*lone, patternBackend(p.value()))), IsEmpty());
}

//   %x -> Conv -> %c, for Conv -> [BN] -> Add
/// The failure after a skipped optional node names the node it passed
/// through (the explanation once read the skipped node, which is null).
TEST(PatternSelector, FailureAfterASkippedNodeNamesTheNodePassedThrough) {
  Pattern p = convMaybeBnAdd().value();
  auto lone = parseGraphOrThrow(convThen("return %c"));
  PatternMatch match = matchPattern(p, *lone->findNode("conv"));
  EXPECT_FALSE(match.ok());
  EXPECT_THAT(match.failure, HasSubstr("no consumer of Conv 'conv' is Add"));
}

// Conv -> [BN] -> [Relu] whose steps only feed the next one: the fused
// kernel of such a family emits the variant's last value only.
Pattern convChain() {
  return Pattern::chain("conv_chain", {OpMatcher("Conv").onlyFeedsNext(),
                                       OpMatcher("BatchNormalization").optional().onlyFeedsNext(),
                                       OpMatcher("Relu").optional()});
}

//   %x -> Conv -> BN -> Relu -> %y, with the BN (or the Conv) read again
/// A step read by anything but the next step of the match ends the match:
/// the variant is as long as its interior values stay inside. Without
/// onlyFeedsNext the same pattern takes the value that leaves.
TEST(PatternSelector, OnlyFeedsNextEndsTheVariantWhereAValueLeaves) {
  const std::string bn = "%n = BatchNormalization(%c, %s, %b, %m, %v) @bn\n ";
  const std::pair<std::string, Regions> cases[] = {
      {bn + "%y = Relu(%n) @relu\n return %y", {{"bn", "conv", "relu"}}},
      // The BN is also a graph output: the Relu stays out.
      {bn + "%y = Relu(%n) @relu\n return %y, %n", {{"bn", "conv"}}},
      // The Conv is also read by a Sigmoid: the BN stays out.
      {bn + "%t = Sigmoid(%c) @sig\n %y = Relu(%n) @relu\n return %y, %t", {{"conv"}}},
  };
  for (const auto& [middle, want] : cases) {
    SCOPED_TRACE(middle);
    auto g = parseGraphOrThrow(convThen(middle));
    EXPECT_EQ(regionSets(partitionOk(*g, patternBackend(convChain()))), want);
  }
  // What must not happen: without the flag the Conv's second reader is
  // ignored, and the region takes the BN and the Relu.
  auto g = parseGraphOrThrow(
      convThen(bn + "%t = Sigmoid(%c) @sig\n %y = Relu(%n) @relu\n return %y, %t"));
  EXPECT_EQ(
      regionSets(partitionOk(*g, patternBackend(Pattern::chain(
                                     "plain", {"Conv", OpMatcher("BatchNormalization").optional(),
                                               OpMatcher("Relu").optional()})))),
      (Regions{{"bn", "conv", "relu"}}));
}

//   %x -> Conv -> BN -> Relu
/// matchPattern reports the matched node for each pattern node, and null
/// for a skipped optional one.
TEST(PatternSelector, MatchPatternReportsAssignment) {
  auto g = parseGraphOrThrow(convBnBlock("Neg"));
  PatternMatch match = matchPattern(convBnAct(), *g->findNode("conv"));
  ASSERT_TRUE(match.ok()) << match.failure;
  ASSERT_EQ(match.nodes.size(), 3u);
  EXPECT_EQ(match.nodes[0]->name(), "conv");
  EXPECT_EQ(match.nodes[1]->name(), "bn");
  EXPECT_EQ(match.nodes[2], nullptr);
}

//   Relu, ai.onnx Relu spelled out, custom.Relu, com.microsoft.FusedConv
/// An op type names the default domain, "domain.Op" any other, and
/// "ai.onnx" is the default domain spelled out; the same name in another
/// domain is not a match.
TEST(OpMatcher, MatchesOpTypesByDomain) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @plain
      %b = "ai.onnx.Relu"(%a) @spelled
      %c = "custom.Relu"(%b) @custom
      %y = "com.microsoft.FusedConv"(%c) @ms
      return %y
    })");
  const Node& plain = *g->findNode("plain");
  const Node& spelled = *g->findNode("spelled");
  const Node& custom = *g->findNode("custom");
  const Node& ms = *g->findNode("ms");
  for (const OpMatcher& relu : {OpMatcher("Relu"), OpMatcher("ai.onnx.Relu")}) {
    EXPECT_TRUE(relu.matchesOpType(plain));
    EXPECT_TRUE(relu.matchesOpType(spelled));
    EXPECT_FALSE(relu.matchesOpType(custom));
    EXPECT_FALSE(relu.matchesOpType(ms));
  }
  EXPECT_TRUE(OpMatcher("custom.Relu").matchesOpType(custom));
  EXPECT_FALSE(OpMatcher("custom.Relu").matchesOpType(plain));
  const OpMatcher any = OpMatcher::anyOf({"Sigmoid", "com.microsoft.FusedConv"});
  EXPECT_TRUE(any.matchesOpType(ms));
  EXPECT_FALSE(any.matchesOpType(plain));
  EXPECT_TRUE(OpMatcher::anyOp().matchesOpType(custom));
}

//   %x -> Conv -> BatchNormalization -> %y, and Conv -> Relu
/// A predicate may run a search of its own (matchPattern) in the middle of
/// one: each gets its own candidate lists, so both find their match.
TEST(PatternSelector, APredicateMayMatchAPatternInsideASearch) {
  auto g = parseGraphOrThrow(convThen(
      "%n = BatchNormalization(%c, %s, %b, %m, %v) @bn\n %r = Relu(%c) @relu\n return %n, %r"));
  const Pattern inner = Pattern::chain("inner", {"Conv", "BatchNormalization"});
  int nested = 0;
  OpMatcher bn = OpMatcher("BatchNormalization").where([&](const Node& n) -> Decision {
    PatternMatch m = matchPattern(inner, *n.input(0)->producer());
    ++nested;
    return m.ok() ? Decision::yes() : Decision::no("the inner search failed: " + m.failure);
  });
  const Pattern outer = Pattern::chain("outer", {"Conv", bn});
  PatternMatch match = matchPattern(outer, *g->findNode("conv"));
  ASSERT_TRUE(match.ok()) << match.failure;
  EXPECT_EQ(match.nodes[1], g->findNode("bn"));
  EXPECT_GE(nested, 1);
  // Not a match for a node the inner search cannot complete.
  EXPECT_FALSE(matchPattern(outer, *g->findNode("relu")).ok());
}

/// Decision::And keeps the first "no"; Or joins both reasons.
TEST(Decision, CombinesReasons) {
  Decision yes = Decision::yes();
  Decision a = Decision::no("too big");
  Decision b = Decision::no("wrong type");
  EXPECT_TRUE(yes.And(yes).canFuse());
  EXPECT_EQ(a.And(b).reason(), "too big");
  EXPECT_EQ(yes.And(b).reason(), "wrong type");
  EXPECT_TRUE(a.Or(yes).canFuse());
  EXPECT_EQ(a.Or(b).reason(), "too big and wrong type");
  EXPECT_EQ(Decision(false).explain("fallback"), "fallback");
  EXPECT_EQ(Decision::noIf(false, "never").explain(), "yes");
}

}  // namespace
}  // namespace subgraph::partition

namespace subgraph::partition {
namespace {

//   %x -> Erf-form GELU: a = Add(x, b); Div(a, c) -> Erf -> Mul(a, .) -> %y
// `a` is read twice, both times inside the pattern.
constexpr const char* kGeluAfterBias = R"(
  graph @g(%x: f32[2, 4]) {
    %b = const f32[4] splat(0.5)
    %c = const f32[] [1.4142135]
    %a = Add(%x, %b) @bias
    %d = Div(%a, %c) @div
    %e = Erf(%d) @erf
    %y = Mul(%a, %e) @mul
    return %y
  })";

// bias -> {div -> erf} -> mul, the bias Add's uses required to stay inside.
Pattern biasGelu(bool usesInside) {
  PatternBuilder b("bias_gelu");
  OpMatcher bias("Add");
  bias.usesStayInside(usesInside);
  if (!usesInside) bias.where(predicates::hasOneUse());
  size_t add = b.add(bias);
  size_t div = b.add("Div");
  size_t erf = b.add("Erf");
  size_t mul = b.add("Mul");
  b.connect(add, div, 0).connect(div, erf, 0).connect(erf, mul).connect(add, mul);
  StatusOr<Pattern> p = b.build();
  EXPECT_TRUE(p.isOk()) << p.status().message();
  return std::move(p).value();
}

/// usesStayInside: a value read twice, both inside the pattern, matches,
/// where a one-use condition cannot express the DAG.
TEST(PatternSelector, UsesInsideTheMatchAllowDagPatterns) {
  auto g = parseGraphOrThrow(kGeluAfterBias);
  PartitionReport inside = partitionOk(*g, patternBackend(biasGelu(true)));
  EXPECT_EQ(regionSets(inside), (Regions{{"bias", "div", "erf", "mul"}}));

  auto g2 = parseGraphOrThrow(kGeluAfterBias);
  PartitionReport oneUse = partitionOk(*g2, patternBackend(biasGelu(false)));
  EXPECT_THAT(regionSets(oneUse), IsEmpty());
}

/// What must not match: the same value also read outside the pattern (a
/// Relu here), or returned as a graph output; the report says which.
TEST(PatternSelector, DoesNotMatchWhenAUseLeavesTheMatch) {
  std::string outside = kGeluAfterBias;
  outside.replace(outside.find("return %y"), 9, "%r = Relu(%a) @relu\n    return %y, %r");
  auto g = parseGraphOrThrow(outside);
  PartitionReport report = partitionOk(*g, patternBackend(biasGelu(true)));
  EXPECT_THAT(regionSets(report), IsEmpty());
  EXPECT_THAT(reasonFor(report, "bias"), HasSubstr("is read outside the match, by Relu 'relu'"));

  std::string returned = kGeluAfterBias;
  returned.replace(returned.find("return %y"), 9, "return %y, %a");
  auto g2 = parseGraphOrThrow(returned);
  report = partitionOk(*g2, patternBackend(biasGelu(true)));
  EXPECT_THAT(regionSets(report), IsEmpty());
  EXPECT_THAT(reasonFor(report, "bias"), HasSubstr("is a graph output"));
}

//   %x -> Sigmoid(s) -> Add(add) <- Conv(c) <- %x
/// The properties of one backend share one traversal, yet the first
/// registered still sees all of its seeds first: conv_add takes the Add
/// although sigmoid_add's seed comes first in the order. Negative: the
/// later property never takes a node the earlier one fused, and the
/// per-property order gives exactly the same regions.
TEST(PatternSelector, FirstRegisteredPropertyWinsInOneTraversal) {
  const char* text = R"(
    graph @g(%x: f32[1, 4, 8, 8]) {
      %s = Sigmoid(%x) @sig
      %w = const f32[4, 4, 1, 1] splat(0.5)
      %c = Conv(%x, %w) @conv
      %y = Add(%s, %c) @add
      return %y
    })";
  for (Traversal traversal : {Traversal::kPerBackend, Traversal::kPerProperty}) {
    auto g = parseGraphOrThrow(text);
    std::vector<std::unique_ptr<SubgraphProperty>> properties;
    PatternBuilder convAdd("conv_add");
    convAdd.connect(convAdd.add("Conv"), convAdd.add("Add"));  // through any input
    properties.push_back(std::make_unique<PatternProperty>("conv_add", convAdd.build().value()));
    properties.push_back(std::make_unique<PatternProperty>(
        "sigmoid_add", Pattern::chain("sigmoid_add", {"Sigmoid", "Add"})));
    std::vector<SubgraphBackend> backends;
    backends.push_back(makeBackend("pat", std::move(properties)));
    PartitionOptions options;
    options.traversal = traversal;
    auto report = partitionGraph(*g, std::span(backends), options);
    ASSERT_TRUE(report.isOk()) << report.status().message();
    EXPECT_EQ(regionSets(*report), (Regions{{"add", "conv"}}));
    EXPECT_EQ(report->regions[0].property, "conv_add");
    // The Sigmoid is left out by the property that could not have it.
    EXPECT_THAT(reasonFor(*report, "sig"), HasSubstr("sigmoid_add"));
  }
}

}  // namespace
}  // namespace subgraph::partition
