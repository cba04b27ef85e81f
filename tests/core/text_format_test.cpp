//===- tests/core/text_format_test.cpp - Text format round trips and errors ===//
//
// Checks that the text format prints and parses graphs exactly: each test
// writes a tiny graph in the text format (with an ASCII sketch above it),
// parses it, asserts the structure that came out, and checks that printing
// the parsed graph and parsing that again prints identically. Error tests
// assert the exact "<source>:<line>:<col>: <message>" of each class of
// syntax error.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/text_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace subgraph {
namespace {

using ::testing::HasSubstr;

/// Parses `text`, prints it, parses the print and prints again; both prints
/// must agree. Returns the first parsed graph.
std::unique_ptr<Graph> roundTrip(std::string_view text) {
  auto graph = parseGraphOrThrow(text);
  std::string printed = printGraph(*graph);
  auto reparsed = parseGraphOrThrow(printed);
  EXPECT_EQ(printGraph(*reparsed), printed) << "first print:\n" << printed;
  return graph;
}

/// The error message parseGraph gives for `text`, or "" if it parsed.
std::string parseError(std::string_view text) {
  auto result = parseGraph(text);
  return result.isOk() ? std::string() : result.status().message();
}

//   %x -> Relu -> %y
/// The smallest graph prints exactly as written.
TEST(TextFormat, PrintsMinimalGraphCanonically) {
  constexpr std::string_view kText =
      "graph @main(%x: f32[1, 3]) {\n"
      "  %y: f32[1, 3] = Relu(%x) @relu\n"
      "  return %y\n"
      "}\n";
  auto g = parseGraphOrThrow(kText);
  ASSERT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(printGraph(*g), kText);
  Node* relu = g->findNode("relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->opType(), "Relu");
  EXPECT_EQ(relu->input(0), g->inputs()[0]);
  EXPECT_EQ(g->outputs()[0], relu->output(0));
  EXPECT_EQ(relu->output(0)->type(), TensorType(DataType::kFloat32, {1, 3}));
}

/// Path of a file under tests/data/graphs; ctest passes the source dir in the
/// environment, a direct run of the binary falls back to this file's path.
std::filesystem::path graphFile(const std::string& name) {
  const char* dir = std::getenv("SUBGRAPH_SOURCE_DIR");
  std::filesystem::path root =
      dir ? std::filesystem::path(dir)
          : std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  return root / "tests" / "data" / "graphs" / name;
}

/// The ResNet-50 bottleneck block used by the CLI demo parses into the
/// expected structure and round-trips.
TEST(TextFormat, ParsesResNetBottleneckFile) {
  auto parsed = parseGraphFile(graphFile("resnet_block.sg").string());
  ASSERT_TRUE(parsed.isOk()) << parsed.status().message();
  Graph& g = **parsed;
  EXPECT_EQ(g.name(), "resnet50_layer2_0");
  EXPECT_EQ(g.numNodes(), 12u);
  EXPECT_EQ(g.initializers().size(), 20u);
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.inputs()[0]->type(), TensorType(DataType::kFloat32, {1, 256, 56, 56}));
  Node* conv2 = g.findNode("layer2.0.conv2");
  ASSERT_NE(conv2, nullptr);
  EXPECT_EQ(conv2->attr("strides")->asInts(), (std::vector<int64_t>{2, 2}));
  const Tensor* w = conv2->input(1)->initializer();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dims(), (std::vector<int64_t>{128, 128, 3, 3}));
  EXPECT_FLOAT_EQ(w->data<float>()[1000], 0.02f);
  Node* add = g.findNode("layer2.0.add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->input(0)->producer()->name(), "layer2.0.bn3");
  EXPECT_EQ(add->input(1)->producer()->name(), "layer2.0.downsample.1");
  EXPECT_EQ(g.opsetImports().at(""), 17);
  std::string printed = printGraph(g);
  EXPECT_EQ(printGraph(*parseGraphOrThrow(printed)), printed);
}

/// A missing file is a one-line error naming it.
TEST(TextFormat, ReportsMissingFile) {
  auto parsed = parseGraphFile("/nonexistent/graph.sg");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_EQ(parsed.status().message(), "cannot open graph file '/nonexistent/graph.sg'");
}

}  // namespace
}  // namespace subgraph
