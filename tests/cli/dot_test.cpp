//===- tests/cli/dot_test.cpp - `subgraph dot` ----------------------------===//
//
// The DOT output of the CLI: where it goes (-o FILE, -o -), what the
// options change, and clean failures when the output cannot be written.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

//   x   w (const)
//    \ /
//   MatMul @mm -> a -> Relu @act -> y
constexpr const char* kGraph = R"(graph @small(%x: f32[1, 4]) {
  %w = const f32[4, 4] splat(1.0)
  %a: f32[1, 4] = MatMul(%x, %w) @mm
  %y: f32[1, 4] = Relu(%a) @act
  return %y
}
)";

/// -o FILE writes a digraph with one box per node and the constant drawn
/// as a note; stdout stays empty and stderr says where the file went.
TEST(CliDot, WritesFile) {
  TempDir dir;
  std::string in = dir.write("small.sg", kGraph);
  std::string out = (dir.path() / "small.dot").string();
  CliResult r = runCli({"dot", in, "-o", out});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, HasSubstr("subgraph: wrote " + out + " (2 nodes)"));
  std::string dot = readFile(out);
  EXPECT_THAT(dot, HasSubstr("digraph \"small\" {"));
  EXPECT_THAT(dot, HasSubstr("label=\"MatMul\\nmm\""));
  EXPECT_THAT(dot, HasSubstr("label=\"Relu\\nact\""));
  EXPECT_THAT(dot, HasSubstr("shape=note"));  // The constant %w.
  EXPECT_THAT(dot, HasSubstr("f32[1, 4]"));
  EXPECT_EQ(dot.back(), '\n');
}

/// -o - (and no -o at all) writes the DOT to stdout, nothing else.
TEST(CliDot, WritesStdout) {
  TempDir dir;
  std::string in = dir.write("small.sg", kGraph);
  for (auto args :
       {std::vector<std::string>{"dot", in, "-o", "-"}, std::vector<std::string>{"dot", in}}) {
    CliResult r = runCli(args);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out.rfind("digraph \"small\" {\n", 0), 0u) << r.out;
    EXPECT_EQ(r.out.substr(r.out.size() - 2), "}\n");
    EXPECT_THAT(r.err, IsEmpty());
  }
}

/// --no-constants drops the weight and its edge; --no-types drops types
/// from the labels; --rankdir sets the layout direction.
TEST(CliDot, OptionsChangeTheDrawing) {
  TempDir dir;
  std::string in = dir.write("small.sg", kGraph);
  CliResult r = runCli({"dot", in, "--no-constants", "--no-types", "--rankdir", "LR"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("shape=note")));
  EXPECT_THAT(r.out, Not(HasSubstr("f32[")));
  EXPECT_THAT(r.out, HasSubstr("rankdir=\"LR\""));
  EXPECT_THAT(r.out, HasSubstr("label=\"MatMul\\nmm\""));
}

/// A bad --rankdir is a usage error.
TEST(CliDot, BadRankdirIsUsageError) {
  TempDir dir;
  std::string in = dir.write("small.sg", kGraph);
  EXPECT_TRUE(failsWithOneLine(runCli({"dot", in, "--rankdir", "diagonal"}), 2, "diagonal"));
}

/// An output in a folder that does not exist fails naming the file, and
/// leaves nothing behind.
TEST(CliDot, UnwritableOutputIsOneLine) {
  TempDir dir;
  std::string in = dir.write("small.sg", kGraph);
  std::string out = (dir.path() / "no-such-dir" / "x.dot").string();
  CliResult r = runCli({"dot", in, "-o", out});
  EXPECT_TRUE(failsWithOneLine(r, 1, out + ": cannot open for writing"));
  EXPECT_FALSE(std::filesystem::exists(out));
  // A directory as output is refused too.
  EXPECT_TRUE(failsWithOneLine(runCli({"dot", in, "-o", dir.path().string()}), 1,
                               "cannot open for writing"));
}

/// A full disk (/dev/full) is reported, not ignored.
TEST(CliDot, WriteFailureIsReported) {
  TempDir dir;
  std::string in = dir.write("small.sg", kGraph);
  ASSERT_TRUE(std::filesystem::exists("/dev/full"));
  EXPECT_TRUE(
      failsWithOneLine(runCli({"dot", in, "-o", "/dev/full"}), 1, "/dev/full: write failed"));
}

/// The graph is not verified first: a broken graph can still be drawn,
/// with its dangling value marked.
TEST(CliDot, DrawsGraphsTheVerifierRejects) {
  TempDir dir;
  std::string in =
      dir.write("broken.sg", "graph @b(%x: f32[2]) {\n  %y = Relu(%ghost)\n  return %y\n}\n");
  CliResult r = runCli({"dot", in});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(dangling)"));
}

}  // namespace
}  // namespace subgraph::cli::testing
