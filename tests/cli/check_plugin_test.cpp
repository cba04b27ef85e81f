//===- tests/cli/check_plugin_test.cpp - `subgraph check-plugin` end to end -===//
//
// The conformance run as a plugin author meets it: the shipped backends
// (example_convbn, onednn where it is built, cudnn where it is built:
// selection-only without a GPU) pass; the two broken
// fixtures (tests/plugins/corpus/check_plugin_broken.cpp) fail, each with
// the smallest failing graph in the text format and a seed whose replay
// fails again. Cases per run: SUBGRAPH_CHECK_PLUGIN_CASES, default 1000
// (200 under sanitizers).
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "cli_runner.h"

#ifndef SUBGRAPH_CHECK_PLUGIN_DEFAULT_CASES
#define SUBGRAPH_CHECK_PLUGIN_DEFAULT_CASES 1000
#endif

namespace subgraph::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string cases() {
  const char* env = std::getenv("SUBGRAPH_CHECK_PLUGIN_CASES");
  return env && *env ? env : std::to_string(SUBGRAPH_CHECK_PLUGIN_DEFAULT_CASES);
}

#ifdef SUBGRAPH_CHECK_PLUGIN_CORPUS
const std::string kCorpus = SUBGRAPH_CHECK_PLUGIN_CORPUS;
#else
const std::string kCorpus;
#endif

/// The first failure's seed and the node count of its smallest graph.
struct ShownFailure {
  std::string seed;
  int nodes = -1;
};

ShownFailure firstFailure(const std::string& out) {
  ShownFailure f;
  std::smatch m;
  if (std::regex_search(out, m, std::regex(R"(case seed (\d+) failed)"))) f.seed = m[1];
  if (std::regex_search(out, m, std::regex(R"(smallest failing graph \((\d+) of \d+ nodes\))")))
    f.nodes = std::stoi(m[1]);
  return f;
}

/// The example plugin passes; the probe finds exactly the ops its selector
/// fuses, and without kernels there is nothing to compare.
TEST(CliCheckPlugin, ExamplePluginPasses) {
  CliResult r = runCli({"check-plugin", "example_convbn", "--cases", cases()});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("plugin:     example_convbn 1.0.0"));
  EXPECT_THAT(r.out, HasSubstr("selectors fuse: BatchNormalization, Conv (probed)"));
  EXPECT_THAT(r.out, HasSubstr(cases() + " passed, 0 failed"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("case seed")));
}

/// blocked_layout (plugin ABI 2: its own layout between its regions, the
/// host's copies where values leave it) passes, numerics included: random
/// graphs mix its regions with reference ops, so values enter and leave
/// the layout everywhere. It caught the example's Add reading a second
/// input that `x + x` regions do not have (their inputs are merged).
TEST(CliCheckPlugin, BlockedLayoutPluginPasses) {
  CliResult r = runCli({"check-plugin", "blocked_layout", "--cases", cases()});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("selectors fuse: Add, Relu (probed)"));
  EXPECT_THAT(r.out, HasSubstr("numerics:       each case against the reference"));
  EXPECT_THAT(r.out, HasSubstr(cases() + " passed, 0 failed"));
}

/// The oneDNN plugin passes, numerics included.
TEST(CliCheckPlugin, OnednnPasses) {
#ifndef SUBGRAPH_CLI_TEST_HAVE_ONEDNN
  GTEST_SKIP() << "built without oneDNN";
#endif
  CliResult r = runCli({"check-plugin", "onednn", "--cases", cases()});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("numerics:       each case against the reference"));
  EXPECT_THAT(r.out, HasSubstr(cases() + " passed, 0 failed"));
}

/// The kit covers what plugins fuse beyond convolutions: the probe finds
/// the oneDNN plugin's MatMul, GELU, attention and LayerNormalization
/// fusions, and a run limited to a dense layer with GELU (`--ops`, which
/// takes the kit's composite entries) forms regions in most cases and runs
/// the plugin's kernels against the reference in them.
TEST(CliCheckPlugin, MatMulGeluPluginIsExercised) {
#ifndef SUBGRAPH_CLI_TEST_HAVE_ONEDNN
  GTEST_SKIP() << "built without oneDNN";
#endif
  CliResult probe = runCli({"check-plugin", "onednn", "--cases", "20"});
  ASSERT_EQ(probe.exitCode, 0) << probe.out << probe.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(probe.out, m, std::regex("selectors fuse: ([^\n]*)")));
  for (const char* entry : {"MatMul", "Gelu", "Attention", "LayerNormalization", "Gemm"})
    EXPECT_THAT(std::string(m[1]), HasSubstr(entry)) << m[1];

  CliResult r =
      runCli({"check-plugin", "onednn", "--ops", "MatMul,BiasAdd,Gelu", "--cases", "100"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  ASSERT_TRUE(std::regex_search(
      r.out, m,
      std::regex(R"((\d+) of 100 cases formed regions, (\d+) ran the plugin's kernels)")));
  EXPECT_GE(std::stoi(m[1]), 80) << r.out;
  EXPECT_GE(std::stoi(m[2]), 80) << r.out;
}

/// The cuDNN plugin passes where it is built: in full where a GPU is
/// present, else (it refuses to load without one) selection-only, which
/// still checks every partitioning invariant, its kernels declining so the
/// default executor runs the regions. Skipped where it is not built.
TEST(CliCheckPlugin, CudnnPassesWhereBuilt) {
  CliResult r = runCli({"check-plugin", "cudnn", "--cases", "200", "--tolerance", "1e-2"});
  if (r.exitCode != 0 && r.err.find("unknown backend 'cudnn'") != std::string::npos)
    GTEST_SKIP() << r.err;
  if (r.exitCode != 0 && r.err.find("unavailable on this machine") != std::string::npos) {
    setenv("SUBGRAPH_CUDNN_SELECTION_ONLY", "1", 1);
    // Its kernels decline without a GPU: they are not what is checked here.
    CliResult all = runCli({"check-plugin", "cudnn", "--cases", "20"});
    EXPECT_TRUE(failsWithOneLine(all, 1, "kernels ran in none")) << all.out;
    r = runCli({"check-plugin", "cudnn", "--cases", "200", "--no-numerics"});
    unsetenv("SUBGRAPH_CUDNN_SELECTION_ONLY");
  }
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("200 passed, 0 failed"));
}

/// A selector that asks for {Relu, Add} around a Sigmoid fails, shrunk to
///   x -> Relu -> Sigmoid -> Add <- Relu   (3 nodes)
/// and the printed seed replays the failure.
TEST(CliCheckPlugin, SelectorProposingACycleFails) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  const std::string plugin = kCorpus + "/broken_cycle.so";
  CliResult r = runCli({"check-plugin", plugin, "--cases", cases()});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("failed: cycle: a region the selector proposed would create a cycle"));
  EXPECT_THAT(r.out, HasSubstr("graph @case"));
  ShownFailure f = firstFailure(r.out);
  ASSERT_FALSE(f.seed.empty()) << r.out;
  EXPECT_GE(f.nodes, 2) << r.out;
  EXPECT_LE(f.nodes, 4) << r.out;
  EXPECT_THAT(r.out, HasSubstr("replay: subgraph check-plugin " + plugin + " --seed " + f.seed +
                               " --cases 1"));

  CliResult replay = runCli({"check-plugin", plugin, "--seed", f.seed, "--cases", "1"});
  EXPECT_EQ(replay.exitCode, 1) << replay.out;
  EXPECT_THAT(replay.out, HasSubstr("0 passed, 1 failed"));

  // Loaded by a relative path, the replay line still names the file by its
  // absolute path, so it replays from any folder.
  std::filesystem::path old = std::filesystem::current_path();
  std::filesystem::current_path(kCorpus);
  CliResult relative = runCli({"check-plugin", "./broken_cycle.so", "--cases", cases()});
  std::filesystem::current_path(old);
  EXPECT_THAT(relative.out, HasSubstr("replay: subgraph check-plugin " + plugin + " --seed "));
}

/// A Relu kernel computing y = x fails the numerics, shrunk to one Relu.
TEST(CliCheckPlugin, WrongKernelFails) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  CliResult r = runCli({"check-plugin", kCorpus + "/broken_kernel.so", "--cases", cases()});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("failed: numerics: output %"));
  EXPECT_THAT(r.out, HasSubstr("the reference computes"));
  EXPECT_THAT(r.out, HasSubstr("= Relu("));
  EXPECT_EQ(firstFailure(r.out).nodes, 1) << r.out;
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr(" 0 failed")));
}

//   %x [2, 3] -> Relu @act -> %y
constexpr std::string_view kOneRelu = R"(
  graph @g(%x: f32[2, 3]) {
    %y = Relu(%x) @act
    return %y
  })";

/// A plugin whose Select segfaults is named in one line, with the call and
/// the node, and exit status 3: not a bare signal (exit 139, no word).
TEST(CliPluginCrash, CrashInSelectIsNamed) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  TempDir dir;
  std::string graph = dir.write("relu.sg", kOneRelu);
  setenv("SUBGRAPH_PLUGIN_PATH", kCorpus.c_str(), 1);
  CliResult r = runCli({"partition", graph, "--backend", "crash_select"});
  unsetenv("SUBGRAPH_PLUGIN_PATH");
  EXPECT_TRUE(failsWithOneLine(
      r, 3,
      "plugin 'crash_select' crashed (SIGSEGV, invalid memory access) in select on node 'act'"));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

/// A selector that throws something that is not an exception class fails
/// the partition with one line naming the plugin, the property, the call,
/// the node and the phase (selection), not "PostPartition failed".
TEST(CliPluginCrash, ThrowInSelectNamesTheCallNodeAndPhase) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  TempDir dir;
  std::string graph = dir.write("relu.sg", kOneRelu);
  setenv("SUBGRAPH_PLUGIN_PATH", kCorpus.c_str(), 1);
  CliResult r = runCli({"partition", graph, "--backend", "throw_select"});
  unsetenv("SUBGRAPH_PLUGIN_PATH");
  EXPECT_TRUE(failsWithOneLine(r, 1,
                               "selection failed: plugin 'throw_select' property 'relu' select on "
                               "node 'act': unknown exception"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("PostPartition")));
}

/// --allow-fallback also covers a plugin that fails while partitioning:
/// the backend is dropped with a warning naming its error, the report says
/// so, and the graph partitioned again without it is the one run and
/// written; the other backends' regions stay. Without the flag the same
/// command fails (above).
TEST(CliPluginCrash, AllowFallbackSkipsAPluginFailingWhilePartitioning) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  TempDir dir;
  std::string graph = dir.write("relu.sg", kOneRelu);
  std::string out = (dir.path() / "out.sg").string();
  setenv("SUBGRAPH_PLUGIN_PATH", kCorpus.c_str(), 1);
  CliResult partition = runCli({"partition", graph, "--backend", "throw_select,broken_kernel",
                                "--allow-fallback", "--json", "-o", out});
  CliResult run = runCli({"run", graph, "--backend", "throw_select", "--allow-fallback",
                          "--random-inputs", "1", "--check"});
  unsetenv("SUBGRAPH_PLUGIN_PATH");
  ASSERT_EQ(partition.exitCode, 0) << partition.err;
  EXPECT_THAT(partition.err, HasSubstr("warning: backend 'throw_select' failed while "
                                       "partitioning and is skipped (fallback allowed): "));
  EXPECT_THAT(partition.err, HasSubstr("node 'act': unknown exception"));
  nlohmann::json report = nlohmann::json::parse(partition.out);
  EXPECT_EQ(report["backends"], nlohmann::json::array({"broken_kernel"}));
  ASSERT_EQ(report["regions"].size(), 1u);
  EXPECT_EQ(report["regions"][0]["backend"], "broken_kernel");
  EXPECT_THAT(report["skipped"].dump(), HasSubstr("throw_select: failed while partitioning"));
  EXPECT_THAT(readFile(out), HasSubstr("subgraph.broken_kernel"));
  EXPECT_EQ(run.exitCode, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("warning: backend 'throw_select' failed while partitioning"));
}

/// A kernel that overflows its stack is named like any crash, on whichever
/// thread runs it (every thread gets an alternate signal stack when it
/// first enters plugin code); one whose helper thread crashes is named with
/// the call that was in flight. Neither ends in a bare signal.
TEST(CliPluginCrash, StackOverflowAndHelperThreadCrashesAreNamed) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  TempDir dir;
  std::string graph = dir.write("relu.sg", kOneRelu);
  setenv("SUBGRAPH_PLUGIN_PATH", kCorpus.c_str(), 1);
  CliResult overflow =
      runCli({"run", graph, "--backend", "overflow_run", "--random-inputs", "1", "--threads", "2"});
  CliResult helper =
      runCli({"run", graph, "--backend", "helper_crash", "--random-inputs", "1", "--threads", "2"});
  unsetenv("SUBGRAPH_PLUGIN_PATH");
  EXPECT_TRUE(failsWithOneLine(overflow, 3,
                               "plugin 'overflow_run' crashed (SIGSEGV, invalid memory access) in "
                               "run on node '"));
  EXPECT_TRUE(failsWithOneLine(helper, 3,
                               "plugin 'helper_crash' crashed (SIGSEGV, invalid memory access) in "
                               "run on node '"));
  EXPECT_THAT(helper.err, HasSubstr(", on another thread while that call ran"));
}

/// A kernel that segfaults fails its case, not the run: each case runs in
/// a worker process, so the crash becomes a failing case with its seed, the
/// crash line (plugin, call, node) and its shrunk graph, and the run goes
/// on to the next case.
TEST(CliPluginCrash, CrashInRunFailsItsCaseAndTheRunGoesOn) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  // One case shown: shrinking a crash starts a worker per try, which is
  // slow under the sanitizers.
  CliResult r = runCli({"check-plugin", kCorpus + "/crash_run.so", "--cases", "3", "--show", "1"});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("failed: crashed: plugin 'crash_run' crashed (SIGSEGV"));
  EXPECT_THAT(r.out, HasSubstr(") in run on node '"));
  EXPECT_THAT(r.out, HasSubstr("0 passed, 3 failed"));
  ShownFailure f = firstFailure(r.out);
  EXPECT_EQ(f.nodes, 1) << r.out;  // shrunk to the one Relu
  EXPECT_THAT(r.out, HasSubstr("replay: subgraph check-plugin " + kCorpus +
                               "/crash_run.so --seed " + f.seed + " --cases 1"));
}

/// --in-process keeps the old contract: the crash ends the run with the
/// crash handler's one line, naming the case and its replay.
TEST(CliPluginCrash, CrashInProcessNamesTheCase) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  CliResult r = runCli({"check-plugin", kCorpus + "/crash_run.so", "--cases", "5", "--in-process"});
  EXPECT_TRUE(failsWithOneLine(r, 3, "plugin 'crash_run' crashed (SIGSEGV"));
  EXPECT_THAT(r.err, HasSubstr("check-plugin case seed "));
  EXPECT_THAT(r.err,
              HasSubstr("replay: subgraph check-plugin " + kCorpus + "/crash_run.so --seed"));
}

/// A kernel that never returns fails its case as hung after --case-timeout
/// (its worker killed), without shrinking, and the run finishes.
TEST(CliPluginCrash, HungCaseFailsAfterTheTimeout) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  CliResult r =
      runCli({"check-plugin", kCorpus + "/hang_run.so", "--cases", "2", "--case-timeout", "1"});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("failed: hung: no answer in 1 s; the worker was killed"));
  EXPECT_THAT(r.out, HasSubstr("0 passed, 2 failed"));
}

/// A plugin whose selectors fuse nothing passes every case without being
/// tested; check-plugin fails it in one line instead of "N passed".
TEST(CliCheckPlugin, PluginThatNeverFusesFails) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  CliResult r = runCli({"check-plugin", kCorpus + "/broken_never_fuses.so", "--cases", "20"});
  EXPECT_TRUE(
      failsWithOneLine(r, 1, "no case formed a region, so 'never_fuses' was not exercised"));
  EXPECT_THAT(r.out, HasSubstr("0 of 20 cases formed regions"));
}

/// A plugin whose kernel creators decline every region passes every case
/// on the reference backend's bodies; check-plugin fails it, saying that
/// its kernels ran in no case.
TEST(CliCheckPlugin, PluginWhoseKernelsAllDeclineFails) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  CliResult r = runCli({"check-plugin", kCorpus + "/broken_declines.so", "--cases", "20"});
  EXPECT_TRUE(failsWithOneLine(r, 1, "'declines''s kernels ran in none (each declined"));
  EXPECT_THAT(r.out, HasSubstr(", 0 ran the plugin's kernels"));
  // The negative side: a plugin whose kernels run is not refused for it
  // (broken_kernel fails on its numerics, not on this).
  CliResult ran = runCli({"check-plugin", kCorpus + "/broken_kernel.so", "--cases", "20"});
  EXPECT_THAT(ran.err, Not(HasSubstr("ran in none")));
}

/// A selector seeded on MatMul with constant weights that grows into an Add
/// of a constant is found by the default probe, from its declared seed:
/// the run forms regions without --ops and passes.
TEST(CliCheckPlugin, ProbeFindsMatMulAddFromDeclaredSeeds) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  CliResult r = runCli({"check-plugin", kCorpus + "/broken_matmul_add.so", "--cases", "30"});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("BiasAdd, MatMul (probed)"));
  EXPECT_THAT(r.out, Not(HasSubstr(" 0 of 30 cases formed regions")));
}

/// A selector that declares Relu as its seed op but also takes a Sigmoid
/// breaks the promise seeds make (the host would never offer it the
/// Sigmoid): check-plugin, which offers it every node, fails it and says
/// which node and answer broke it. The example plugin, which keeps the
/// promise, passes (ExamplePluginPasses).
TEST(CliCheckPlugin, SelectorBreakingItsSeedPromiseFails) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  CliResult r = runCli({"check-plugin", kCorpus + "/broken_seeds.so", "--cases", cases()});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("failed: seeds: the selector of broken_seeds/relu declares seed "
                               "ops Relu but answers Select("));
  EXPECT_THAT(r.out, HasSubstr("a Sigmoid, with yes; the host offers it only nodes of those ops"));
  EXPECT_THAT(r.out, HasSubstr("= Sigmoid("));
}

/// Usage mistakes and unknown plugins are one line, never a crash.
TEST(CliCheckPlugin, ErrorsAreOneLine) {
  EXPECT_TRUE(failsWithOneLine(runCli({"check-plugin", "./missing.so"}), 2,
                               "plugin file './missing.so' does not exist"));
  EXPECT_TRUE(failsWithOneLine(runCli({"check-plugin", "example_convbn", "--ops", "Conv,Bogus"}), 2,
                               "--ops: 'Bogus' is not an op random graphs can use"));
  CliResult help = runCli({"check-plugin", "--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_THAT(help.out, HasSubstr("--cases"));
}

}  // namespace
}  // namespace subgraph::cli::testing
