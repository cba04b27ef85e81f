//===- tests/cli/partition_report_test.cpp - `subgraph partition` reports -===//
//
// Where the partition report goes: --json on stdout and --report FILE write
// the same streamed JSON, and a write that fails halfway fails the command
// instead of leaving a cut report behind an exit status of 0.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

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

/// --json prints the report indented by two, with one newline after it,
/// and --report FILE holds the same report (all but the time it took).
TEST(CliPartitionReport, JsonOnStdoutAndReportFileAgree) {
  TempDir dir;
  std::string in = dir.write("small.sg", kGraph);
  std::string file = (dir.path() / "report.json").string();
  CliResult json = runCli({"partition", in, "--backend", "NONE", "--json", "-q"});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  CliResult report = runCli({"partition", in, "--backend", "NONE", "--report", file, "-q"});
  ASSERT_EQ(report.exitCode, 0) << report.err;
  EXPECT_THAT(json.out, StartsWith("{\n  \"backends\": [],\n  \"regions\": [],\n"
                                   "  \"nodes_total\": 2,\n  \"nodes_in_regions\": 0,\n"
                                   "  \"rejected\": [\n    {\n      \"node\": \"mm\",\n"));
  EXPECT_THAT(json.out, EndsWith("\n}\n"));
  nlohmann::json fromStdout = nlohmann::json::parse(json.out);
  nlohmann::json fromFile = nlohmann::json::parse(readFile(file));
  fromStdout.erase("partition_ms");
  fromFile.erase("partition_ms");
  EXPECT_EQ(fromStdout, fromFile);
  EXPECT_EQ(fromFile["rejected"].size(), 2u);
}

/// Negative: a full disk under the report is an error naming the file, not
/// a cut report and exit status 0, and so is a full disk under stdout.
/// -vv traces the passes before partitioning as a table and the
/// partitioner's phases on one line; -v shows neither, and the JSON report
/// on stdout keeps its keys (the phases are not in it).
TEST(CliPartitionReport, TraceShowsThePassTableAndThePartitionerPhases) {
  TempDir dir;
  std::string in = dir.write("small.sg", kGraph);
  CliResult traced = runCli({"partition", in, "--backend", "onednn", "--json", "-vv"});
  ASSERT_EQ(traced.exitCode, 0) << traced.err;
  EXPECT_THAT(traced.err, HasSubstr("passes before partitioning:\nround pass"));
  EXPECT_THAT(traced.err, HasSubstr("partitioner phases: rank "));
  EXPECT_THAT(traced.err, HasSubstr(" ms, walk "));
  EXPECT_THAT(traced.err, HasSubstr(" ms, surgery "));
  nlohmann::json report = nlohmann::json::parse(traced.out);
  EXPECT_FALSE(report.contains("phases"));
  EXPECT_FALSE(report["regions"].empty());
  CliResult debug = runCli({"partition", in, "--backend", "onednn", "--json", "-v"});
  ASSERT_EQ(debug.exitCode, 0) << debug.err;
  EXPECT_THAT(debug.err, Not(HasSubstr("partitioner phases")));
  EXPECT_THAT(debug.err, HasSubstr("partitioned in "));
}

/// A model of more than HeapPrefault::kMinBytes / 16 bytes of text has its
/// fresh heap faulted in on a helper thread where mimalloc serves the heap
/// (-vv says how much); SUBGRAPH_HEAP_PREFAULT=0 turns that off. Negative:
/// the helper never changes the report, and a build whose heap is not
/// mimalloc's (the sanitizer presets) never starts one.
TEST(CliPartitionReport, LargeModelsPrefaultTheHeapOnAHelperThread) {
  TempDir dir;
  const bool mimalloc = runCli({"--version"}).out.find("mimalloc") != std::string::npos;
  // Over 4 MiB of text where a helper may start; without one (a sanitizer
  // build, and slow there), a small model shows as well that none does.
  const std::string nodes = mimalloc ? "80000" : "3000";
  const std::string model = (dir.path() / "synthetic.sg").string();
  ASSERT_EQ(runCli({"zoo", "synthetic", "--nodes", nodes, "--unsupported-fraction", "0.1", "-o",
                    model, "-q"})
                .exitCode,
            0);
  const std::vector<std::string> args = {"partition", model,    "--backend",
                                         "onednn",    "--json", "-vv"};
  CliResult on = runCli(args);
  ASSERT_EQ(on.exitCode, 0) << on.err;
  std::smatch populated;
  const bool traced =
      std::regex_search(on.err, populated, std::regex("heap prefault: ([0-9]+) MiB faulted in"));
  EXPECT_EQ(traced, mimalloc) << on.err;
  if (traced) {
    EXPECT_GT(std::stoul(populated[1].str()), 0u);
  }

  setenv("SUBGRAPH_HEAP_PREFAULT", "0", 1);
  CliResult off = runCli(args);
  unsetenv("SUBGRAPH_HEAP_PREFAULT");
  ASSERT_EQ(off.exitCode, 0) << off.err;
  EXPECT_THAT(off.err, Not(HasSubstr("heap prefault")));
  nlohmann::json a = nlohmann::json::parse(on.out), b = nlohmann::json::parse(off.out);
  a.erase("partition_ms");
  b.erase("partition_ms");
  EXPECT_EQ(a, b);

  // Under a limit on address space the arena's reservation could fail
  // later allocations, so no helper starts (not tried under sanitizers,
  // whose shadow memory needs more address space than any such limit).
  if (mimalloc) {
    const std::string err = (dir.path() / "limited.txt").string();
    const std::string command = "ulimit -v 8000000 && exec '" + std::string(SUBGRAPH_CLI_PATH) +
                                "' partition '" + model +
                                "' --backend onednn --json -vv >/dev/null 2>'" + err + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
    std::ifstream in(err);
    const std::string limited((std::istreambuf_iterator<char>(in)), {});
    EXPECT_THAT(limited, HasSubstr("partitioned in "));
    EXPECT_THAT(limited, Not(HasSubstr("heap prefault")));
  }
}

TEST(CliPartitionReport, WriteFailureIsReported) {
  TempDir dir;
  std::string in = dir.write("small.sg", kGraph);
  ASSERT_TRUE(std::filesystem::exists("/dev/full"));
  EXPECT_TRUE(
      failsWithOneLine(runCli({"partition", in, "--backend", "NONE", "--report", "/dev/full"}), 1,
                       "/dev/full: write failed"));

  std::string err = (dir.path() / "err.txt").string();
  std::string command = "exec '" + std::string(SUBGRAPH_CLI_PATH) + "' partition '" + in +
                        "' --backend NONE --json >/dev/full 2>'" + err + "'";
  int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << "killed by a signal";
  EXPECT_EQ(WEXITSTATUS(status), 1) << readFile(err);
  EXPECT_THAT(readFile(err), HasSubstr("<stdout>: write failed"));
}

}  // namespace
}  // namespace subgraph::cli::testing
