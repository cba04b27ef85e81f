//===- tests/core/graphviz_test.cpp - DOT output ---------------------------===//
//
// Checks the DOT that writeDot() produces: node, input, output and constant
// shapes, edge labels, partition clusters with their labels and colours,
// escaping of awkward names, and that the result parses as DOT (with
// Boost's own Graphviz reader, so no external `dot` binary is needed).
//
//===----------------------------------------------------------------------===//
#include "subgraph/analysis/graphviz.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>

#include "subgraph/ir/text_format.h"

namespace subgraph {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The text between `subgraph cluster_<id> {` and its closing brace.
std::string clusterBody(const std::string& dot, const std::string& id) {
  size_t open = dot.find("subgraph cluster_" + id + " {");
  if (open == std::string::npos) return "";
  size_t close = dot.find("\n  }\n", open);
  return dot.substr(open, close - open);
}

// Parses DOT with Boost's reader; returns (vertices, edges) or (-1, -1).
std::pair<long, long> parseDot(const std::string& dot) {
  boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS> parsed;
  boost::dynamic_properties properties(boost::ignore_other_properties);
  try {
    if (!boost::read_graphviz(dot, parsed, properties)) return {-1, -1};
  } catch (const std::exception&) {
    return {-1, -1};
  }
  return {static_cast<long>(boost::num_vertices(parsed)),
          static_cast<long>(boost::num_edges(parsed))};
}

//   x      w (constant)
//    \    /
//    Conv conv -> c -> Relu relu -> y -> (output)
constexpr const char* kConvRelu = R"(
  graph @net(%x: f32[1, 2, 4, 4]) {
    %w = const f32[2, 2, 1, 1] splat(0.5)
    %c: f32[1, 2, 4, 4] = Conv(%x, %w) @conv
    %y: f32[1, 2, 4, 4] = Relu(%c) @relu
    return %y
  })";

/// Ops are boxes with op type and name; inputs, constants and outputs get
/// their own shapes; edges carry value name and type.
TEST(Graphviz, DrawsNodesValuesAndTypedEdges) {
  auto g = parseGraphOrThrow(kConvRelu);
  std::string dot = toDot(*g);
  Node* conv = g->findNode("conv");
  Node* relu = g->findNode("relu");
  std::string convId = "n" + std::to_string(conv->id());
  std::string reluId = "n" + std::to_string(relu->id());
  std::string xId = "v" + std::to_string(g->findValue("x")->id());
  std::string wId = "v" + std::to_string(g->findValue("w")->id());

  EXPECT_THAT(dot, HasSubstr("digraph \"net\" {"));
  EXPECT_THAT(dot, HasSubstr(convId + " [label=\"Conv\\nconv\"]"));
  EXPECT_THAT(dot, HasSubstr(xId + " [label=\"x\\nf32[1, 2, 4, 4]\", shape=invhouse"));
  EXPECT_THAT(dot, HasSubstr(wId + " [label=\"w\\nf32[2, 2, 1, 1]\", shape=note"));
  EXPECT_THAT(dot, HasSubstr("out0 [label=\"y\", shape=house"));
  EXPECT_THAT(dot, HasSubstr(convId + " -> " + reluId + " [label=\"c\\nf32[1, 2, 4, 4]\"]"));
  EXPECT_THAT(dot, HasSubstr(wId + " -> " + convId));
  EXPECT_THAT(dot, HasSubstr(reluId + " -> out0 [label=\"y\\nf32[1, 2, 4, 4]\"]"));
  EXPECT_THAT(dot, Not(HasSubstr("subgraph cluster_")));
  // 2 ops + x + w + out0; x->conv, w->conv, conv->relu, relu->out0.
  EXPECT_EQ(parseDot(dot), std::make_pair(5L, 4L));
}

/// showConstants = false drops constants and their edges; showTypes = false
/// drops types from labels.
TEST(Graphviz, HidesConstantsAndTypesWhenAsked) {
  auto g = parseGraphOrThrow(kConvRelu);
  std::string dot = toDot(*g, {.showConstants = false, .showTypes = false});
  std::string wId = "v" + std::to_string(g->findValue("w")->id());
  EXPECT_THAT(dot, Not(HasSubstr(wId)));
  EXPECT_THAT(dot, Not(HasSubstr("shape=note")));
  EXPECT_THAT(dot, Not(HasSubstr("f32[")));
  EXPECT_THAT(dot, HasSubstr("[label=\"c\"]"));
  EXPECT_EQ(parseDot(dot), std::make_pair(4L, 3L));
}

/// Clusters from the caller become labelled, coloured `subgraph cluster_N`
/// blocks that contain exactly their nodes.
TEST(Graphviz, DrawsClustersWithLabelsAndColours) {
  //   x -> Relu a -> Neg b -> Relu c -> (output)
  //        [ region 0: onednn ] [ region 1: cudnn ]  c unassigned
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %b = Neg(%a) @b
      %c = Relu(%b) @c
      return %c
    })");
  DotOptions options;
  options.clusters[g->findNode("a")->id()] = {0, "region 0: onednn", dotPaletteColor(0)};
  options.clusters[g->findNode("b")->id()] = {1, "region 1: cudnn", "lightblue"};
  std::string dot = toDot(*g, options);

  std::string first = clusterBody(dot, "0");
  std::string second = clusterBody(dot, "1");
  EXPECT_THAT(first, HasSubstr("label=\"region 0: onednn\";"));
  EXPECT_THAT(first, HasSubstr("fillcolor=\"#8dd3c7\";"));
  EXPECT_THAT(first, HasSubstr("[label=\"Relu\\na\"]"));
  EXPECT_THAT(first, Not(HasSubstr("Neg")));
  EXPECT_THAT(second, HasSubstr("label=\"region 1: cudnn\";"));
  EXPECT_THAT(second, HasSubstr("fillcolor=\"lightblue\";"));
  EXPECT_THAT(second, HasSubstr("[label=\"Neg\\nb\"]"));
  EXPECT_THAT(first + second, Not(HasSubstr("Relu\\nc")));
  EXPECT_THAT(dot, HasSubstr("[label=\"Relu\\nc\"]"));
  EXPECT_EQ(parseDot(dot), std::make_pair(5L, 4L));
}

/// Several nodes with one cluster id share a single block, whose label
/// and colour come from the lowest node id.
TEST(Graphviz, GroupsNodesOfOneClusterTogether) {
  //   x -> Relu a -> Relu b -> (output)     both in cluster 7
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %b = Relu(%a) @b
      return %b
    })");
  DotOptions options;
  options.clusters[g->findNode("a")->id()] = {7, "region 7", "#ffffb3"};
  options.clusters[g->findNode("b")->id()] = {7, "ignored label", "red"};
  std::string dot = toDot(*g, options);
  std::string body = clusterBody(dot, "7");
  EXPECT_THAT(body, HasSubstr("label=\"region 7\";"));
  EXPECT_THAT(body, HasSubstr("Relu\\na"));
  EXPECT_THAT(body, HasSubstr("Relu\\nb"));
  EXPECT_THAT(dot, Not(HasSubstr("ignored label")));
  EXPECT_EQ(dot.find("subgraph cluster_7"), dot.rfind("subgraph cluster_7"));
}

/// Quotes, backslashes and newlines in names, labels and notes are escaped,
/// so the DOT still parses.
TEST(Graphviz, EscapesAwkwardNames) {
  //   "say \"hi\"" -> Relu @"a\"b\\c" -> out
  auto g = parseGraphOrThrow(R"(
    graph @"my \"net\"" (%"say \"hi\"": f32[4]) {
      %"o\\ut" = Relu(%"say \"hi\"") @"a\"b\\c"
      return %"o\\ut"
    })");
  DotOptions options;
  Node* relu = *g->nodes().begin();
  options.clusters[relu->id()] = {0, "region \"0\"\nbackend: x", ""};
  options.notes[relu->id()] = "why: \"no\"";
  std::string dot = toDot(*g, options);
  EXPECT_THAT(dot, HasSubstr("digraph \"my \\\"net\\\"\" {"));
  EXPECT_THAT(dot, HasSubstr("[label=\"say \\\"hi\\\"\\nf32[4]\""));
  EXPECT_THAT(dot, HasSubstr("[label=\"Relu\\na\\\"b\\\\c\\nwhy: \\\"no\\\"\"]"));
  EXPECT_THAT(dot, HasSubstr("label=\"region \\\"0\\\"\\nbackend: x\";"));
  EXPECT_THAT(dot, HasSubstr("[label=\"o\\\\ut\""));
  EXPECT_EQ(parseDot(dot), std::make_pair(3L, 2L));
}

/// escapeDotString on its own: escapes, line breaks, dropped controls.
TEST(Graphviz, EscapeDotStringHandlesControlCharacters) {
  EXPECT_EQ(escapeDotString("a\"b\\c\nd\te\x01"), "a\\\"b\\\\c\\nde");
  EXPECT_EQ(escapeDotString(""), "");
}

/// A value nothing defines is drawn as a dashed "dangling" node instead of
/// being dropped, so broken graphs can still be inspected.
TEST(Graphviz, DrawsDanglingValues) {
  //   ghost (undefined) -> Relu r -> (output)
  auto g = parseGraphOrThrow(R"(
    graph @g() {
      %y = Relu(%ghost) @r
      return %y
    })");
  std::string dot = toDot(*g);
  EXPECT_THAT(dot, HasSubstr("[label=\"ghost\\n(dangling)\", shape=ellipse, style=dashed"));
  EXPECT_EQ(parseDot(dot), std::make_pair(3L, 2L));
}

/// Nodes holding bodies (If, Loop) say so in their label.
TEST(Graphviz, SummarizesBodiesInNodeLabels) {
  //   flag -> If(then: Relu(x), else: Neg(Relu(x))) -> r
  auto g = parseGraphOrThrow(R"(
    graph @g(%flag: bool[], %x: f32[4]) {
      %r = If(%flag) {
        then_branch = graph @then() {
          %t = Relu(%x)
          return %t
        },
        else_branch = graph @else() {
          %e1 = Relu(%x)
          %e2 = Neg(%e1)
          return %e2
        }} @if
      return %r
    })");
  EXPECT_THAT(toDot(*g),
              HasSubstr("[label=\"If\\nif\\nthen_branch: 1 node\\nelse_branch: 2 nodes\"]"));
}

/// The palette cycles and gives "#rrggbb" colours.
TEST(Graphviz, PaletteCycles) {
  EXPECT_EQ(dotPaletteColor(0), "#8dd3c7");
  EXPECT_EQ(dotPaletteColor(12), dotPaletteColor(0));
  EXPECT_NE(dotPaletteColor(1), dotPaletteColor(0));
  EXPECT_EQ(dotPaletteColor(5).size(), 7u);
}

}  // namespace
}  // namespace subgraph
