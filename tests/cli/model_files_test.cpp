//===- tests/cli/model_files_test.cpp - Text graphs with external data ----===//
//
// Writing a model as a text graph keeps it short: constants of 1 KiB and
// more go to OUT.sg.data beside it (`zoo`, `convert`, `partition -o`), and
// every command reads them back. A partitioned model written that way runs
// again, its fused regions checked against their bodies rather than
// refused as unknown ops.
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
using ::testing::Not;

namespace fs = std::filesystem;

/// zoo -o and partition -o write a short text and a data file; the
/// partitioned model inspects and runs (--check) from them. --inline-constants
/// writes one file and removes the stale data file.
TEST(CliModelFiles, PartitionedModelWithExternalDataReadsBackAndRuns) {
  TempDir dir;
  const std::string model = (dir.path() / "m.sg").string();
  const std::string part = (dir.path() / "p.sg").string();
  CliResult zoo = runCli({"zoo", "mobilenetv2", "-o", model});
  ASSERT_EQ(zoo.exitCode, 0) << zoo.err;
  ASSERT_TRUE(fs::exists(model + ".data"));
  EXPECT_LT(fs::file_size(model), 400'000u);
  EXPECT_GT(fs::file_size(model + ".data"), 10'000'000u);
  EXPECT_THAT(readFile(model), HasSubstr("external(\"m.sg.data\", "));

  CliResult p = runCli({"partition", model, "--backend", "convbnrelu", "-o", part, "-q"});
  ASSERT_EQ(p.exitCode, 0) << p.err;
  ASSERT_TRUE(fs::exists(part + ".data"));
  EXPECT_THAT(readFile(part), HasSubstr("subgraph.convbnrelu."));
  EXPECT_EQ(runCli({"inspect", part}).exitCode, 0);
  CliResult r = runCli({"run", part, "--random-inputs", "1", "--check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(", ok\n"));

  p = runCli(
      {"partition", model, "--backend", "convbnrelu", "-o", part, "-q", "--inline-constants"});
  ASSERT_EQ(p.exitCode, 0) << p.err;
  EXPECT_FALSE(fs::exists(part + ".data"));
  EXPECT_THAT(readFile(part), Not(HasSubstr("external(")));
  EXPECT_GT(fs::file_size(part), 10'000'000u);
}

/// A text graph with external data read from stdin has no directory to
/// read the data from: one line saying so, not a read relative to the
/// working directory.
TEST(CliModelFiles, ExternalDataFromStdinIsRefused) {
  TempDir dir;
  std::string graph = dir.write(
      "g.sg", "graph @g() {\n  %w = const f32[4] external(\"g.sg.data\", 0, 16)\n  return %w\n}\n");
  dir.write("g.sg.data", std::string(16, '\0'));
  EXPECT_EQ(runCli({"inspect", graph}).exitCode, 0);
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", "-"}, readFile(graph)), 1,
                               "has no directory to read it from"));
}

/// A fused region whose body does not match its node is refused when read.
TEST(CliModelFiles, FusedRegionMustMatchItsBody) {
  TempDir dir;
  std::string graph = dir.write("f.sg", R"(graph @g(%x: f32[2]) {
  %y = subgraph.mine.relu(%x, %x) {body = graph @body(%a: f32[2]) {
    %b = Relu(%a)
    return %b
  }}
  return %y
})");
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", graph}), 1,
                               "is a fused region whose body takes 1 inputs and gives 1 outputs, "
                               "but the node has 2 and 1"));
}

}  // namespace
}  // namespace subgraph::cli::testing
