//===- tests/cli/run_test.cpp - `subgraph run` ----------------------------===//
//
// The run command end to end: outputs and random inputs written as .npy,
// inputs read back, latency and profile reports, --json, --check against
// the unpartitioned reference, and the one-line errors for bad requests.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <string>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

//   x [2,3] -> Relu -> y
constexpr const char* kRelu = R"(graph @relu(%x: f32[2, 3]) opset(ai.onnx = 17) {
  %y: f32[2, 3] = Relu(%x)
  return %y
}
)";

//   x [4,3] -> Relu -> y      (same names, other shape: its inputs are the
//                              wrong shape for kRelu)
constexpr const char* kReluWide = R"(graph @relu(%x: f32[4, 3]) opset(ai.onnx = 17) {
  %y: f32[4, 3] = Relu(%x)
  return %y
}
)";

//   x [1,2,5,5] -> Conv 3x3 -> BatchNormalization -> Relu -> y
//                  \________ conv_bn region ______/
constexpr const char* kConvBnRelu = R"(graph @cbr(%x: f32[1, 2, 5, 5]) opset(ai.onnx = 17) {
  %w = const f32[3, 2, 3, 3] splat(0.25)
  %s = const f32[3] [1.0, 2.0, 0.5]
  %b = const f32[3] [0.0, 0.1, -0.1]
  %m = const f32[3] [0.2, 0.0, 0.1]
  %v = const f32[3] [1.0, 0.5, 2.0]
  %c: f32[1, 3, 5, 5] = Conv(%x, %w) {pads = [1, 1, 1, 1]} @conv
  %n: f32[1, 3, 5, 5] = BatchNormalization(%c, %s, %b, %m, %v) @bn
  %y: f32[1, 3, 5, 5] = Relu(%n) @relu
  return %y
}
)";

/// Outputs land in DIR/<name>.npy and random inputs in DIR/inputs/, and
/// feeding those inputs back with --input reproduces the outputs exactly.
TEST(CliRun, WritesOutputsAndInputsThatReplay) {
  TempDir dir;
  std::string model = dir.write("relu.sg", kRelu);
  std::string out1 = (dir.path() / "out1").string(), out2 = (dir.path() / "out2").string();
  CliResult r = runCli({"run", model, "--random-inputs", "7", "--output-dir", out1});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("output y: f32[2, 3]\n"));
  EXPECT_THAT(r.out, HasSubstr("wrote " + out1 + "/y.npy"));
  ASSERT_TRUE(std::filesystem::exists(out1 + "/y.npy"));
  ASSERT_TRUE(std::filesystem::exists(out1 + "/inputs/x.npy"));

  CliResult replay =
      runCli({"run", model, "--input", "x=" + out1 + "/inputs/x.npy", "--output-dir", out2});
  ASSERT_EQ(replay.exitCode, 0) << replay.err;
  std::string first = readFile(out1 + "/y.npy");
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(first, readFile(out2 + "/y.npy"));
  // Relu of inputs drawn from [-1, 1) has zeros and positives, and the
  // replay must not have written random inputs of its own.
  EXPECT_FALSE(std::filesystem::exists(out2 + "/inputs"));
}

/// --json is one JSON object with the latency summary, the outputs and
/// the per-region timings.
TEST(CliRun, JsonHasLatencyOutputsAndRegions) {
  TempDir dir;
  std::string model = dir.write("cbr.sg", kConvBnRelu);
  CliResult r = runCli(
      {"run", model, "--backend", "convbn", "--random-inputs", "1", "--runs", "3", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["runs"], 3);
  for (const char* key : {"median", "min", "max"}) {
    ASSERT_TRUE(j["latency_ms"].contains(key)) << key;
    EXPECT_GE(j["latency_ms"][key].get<double>(), 0.0);
  }
  EXPECT_LE(j["latency_ms"]["min"].get<double>(), j["latency_ms"]["median"].get<double>());
  EXPECT_LE(j["latency_ms"]["median"].get<double>(), j["latency_ms"]["max"].get<double>());
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["name"], "y");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::parse("[1, 3, 5, 5]"));
  ASSERT_EQ(j["regions"].size(), 1u);
  EXPECT_EQ(j["regions"][0]["op"], "subgraph.convbn.conv_bn");
}

/// With several runs the text report gives latency and throughput.
TEST(CliRun, RunsReportLatencyAndThroughput) {
  TempDir dir;
  std::string model = dir.write("relu.sg", kRelu);
  CliResult r = runCli({"run", model, "--random-inputs", "1", "--runs", "4", "--warmup", "1"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("latency: median "));
  EXPECT_THAT(r.out, HasSubstr(" over 4 runs\n"));
  EXPECT_THAT(r.out, HasSubstr("throughput: "));
}

/// A single run prints no latency line: one sample is not a latency.
TEST(CliRun, SingleRunPrintsNoLatency) {
  TempDir dir;
  std::string model = dir.write("relu.sg", kRelu);
  CliResult r = runCli({"run", model, "--random-inputs", "1"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("latency")));
}

/// --profile prints a table with a row per step: the fused region (marked)
/// and the node left outside it.
TEST(CliRun, ProfileListsRegionsAndNodes) {
  TempDir dir;
  std::string model = dir.write("cbr.sg", kConvBnRelu);
  CliResult r = runCli({"run", model, "--backend", "convbn", "--random-inputs", "1", "--profile"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("backend"));
  EXPECT_THAT(r.out, HasSubstr("subgraph.convbn.conv_bn"));
  EXPECT_THAT(r.out, HasSubstr("[region]"));
  EXPECT_THAT(r.out, HasSubstr("Relu"));
}

/// --check compares the partitioned run with the unpartitioned reference
/// and reports the error per output.
TEST(CliRun, CheckComparesWithReference) {
  TempDir dir;
  std::string model = dir.write("cbr.sg", kConvBnRelu);
  CliResult r = runCli({"run", model, "--backend", "convbn", "--random-inputs", "3", "--check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("check y: max abs error "));
  EXPECT_THAT(r.out, HasSubstr(", ok\n"));
}

//   x -> [LayerNorm written out] -> Add(3) -> Clip(0,6) -> Mul(.) -> Div(6)
//     -> LeakyRelu -> Max(-0.1) -> y
constexpr const char* kExporterIdioms = R"(graph @idioms(%x: f32[2, 3, 8]) opset(ai.onnx = 13) {
  %two = const f32[] [2.0]
  %eps = const f32[] [1e-5]
  %gamma = const f32[8] [1.0, 0.5, 2.0, 1.5, 1.0, 0.25, 3.0, 1.0]
  %beta = const f32[8] [0.1, 0.0, -0.1, 0.2, 0.0, 0.3, 0.0, -0.2]
  %three = const f32[] [3.0]
  %zero = const f32[] [0.0]
  %six = const f32[] [6.0]
  %floor = const f32[] [-0.1]
  %m = ReduceMean(%x) {axes = [-1], keepdims = 1}
  %d = Sub(%x, %m)
  %p = Pow(%d, %two)
  %v = ReduceMean(%p) {axes = [-1], keepdims = 1}
  %e = Add(%v, %eps)
  %s = Sqrt(%e)
  %n = Div(%d, %s)
  %g = Mul(%n, %gamma)
  %ln = Add(%g, %beta)
  %a = Add(%ln, %three)
  %r = Clip(%a, %zero, %six)
  %h = Mul(%ln, %r)
  %hs = Div(%h, %six)
  %l = LeakyRelu(%hs) {alpha = 0.1}
  %y = Max(%l, %floor)
  return %y
}
)";

/// The default passes turn the exporters' idioms into LayerNormalization,
/// HardSwish and Clip, and the result still matches the model as written
/// (--check runs the original on the reference backend).
TEST(CliRun, IdiomsKeepTheResult) {
  TempDir dir;
  std::string model = dir.write("idioms.sg", kExporterIdioms);
  std::string out = (dir.path() / "part.sg").string();
  CliResult p = runCli({"partition", model, "--backend", "convbn", "-o", out});
  ASSERT_EQ(p.exitCode, 0) << p.err;
  std::string text = readFile(out);
  EXPECT_THAT(text, HasSubstr("LayerNormalization("));
  EXPECT_THAT(text, HasSubstr("HardSwish("));
  EXPECT_THAT(text, HasSubstr("Clip("));
  EXPECT_THAT(text, Not(HasSubstr("Max(")));
  EXPECT_THAT(text, Not(HasSubstr("ReduceMean(")));
  CliResult r = runCli({"run", model, "--backend", "convbn", "--random-inputs", "5", "--check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(", ok\n"));
}

//   x -> ReduceSum -> Greater(-1e9) -> c (always true at run time)
//   If(c) then: Conv 3x3 -> Relu      else: Relu(x) -> Conv
constexpr const char* kConvInIf = R"(graph @conv_in_if(%x: f32[1, 2, 5, 5]) opset(ai.onnx = 17) {
  %w = const f32[3, 2, 3, 3] splat(0.25)
  %low = const f32[] [-1e9]
  %sum: f32[] = ReduceSum(%x) {keepdims = 0}
  %c: bool[] = Greater(%sum, %low)
  %y: f32[1, 3, 5, 5] = If(%c) {then_branch = graph @then() {
    %t: f32[1, 3, 5, 5] = Conv(%x, %w) {pads = [1, 1, 1, 1]} @then_conv
    %r: f32[1, 3, 5, 5] = Relu(%t) @then_relu
    return %r
  }, else_branch = graph @else() {
    %a: f32[1, 2, 5, 5] = Relu(%x) @else_relu
    %e: f32[1, 3, 5, 5] = Conv(%a, %w) {pads = [1, 1, 1, 1]} @else_conv
    return %e
  }} @branch
  return %y
}
)";

/// --profile times the steps inside an If's branch too, named by the If and
/// the branch, with their share of the whole run; the branch not taken has
/// no row (what must not appear).
TEST(CliRun, ProfileShowsStepsInsideIfBranches) {
  const std::string model = sourcePath("tests/data/graphs/if_branches.sg");
  CliResult r = runCli(
      {"run", model, "--shape", "x=2,8", "--random-inputs", "1", "--profile", "--runs", "3"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const bool then = r.out.find("branch.then_branch/relu") != std::string::npos;
  const bool otherwise = r.out.find("branch.else_branch/neg_relu") != std::string::npos;
  EXPECT_TRUE(then != otherwise) << "exactly one branch ran:\n" << r.out;
  EXPECT_THAT(r.out, HasSubstr("If "));
}

/// A network inside an If branch (as speech models wrap theirs) is fused
/// for the backend like any other: the report names the branch's region,
/// oneDNN runs its convolution, and the result matches the reference.
TEST(CliRun, RegionsInsideIfBranchesRunOnTheirBackend) {
  TempDir dir;
  std::string model = dir.write("conv_in_if.sg", kConvInIf);
  std::string report = (dir.path() / "r.json").string();
  CliResult p = runCli({"partition", model, "--backend", "onednn", "--report", report});
  ASSERT_EQ(p.exitCode, 0) << p.err;
  nlohmann::json j = nlohmann::json::parse(readFile(report));
  std::set<std::string> scopes;
  for (const auto& region : j["regions"]) scopes.insert(region.value("scope", ""));
  EXPECT_TRUE(scopes.count("branch.then_branch")) << j["regions"].dump();
  EXPECT_TRUE(scopes.count("branch.else_branch")) << j["regions"].dump();
  setenv("ONEDNN_VERBOSE", "1", 1);
  CliResult r = runCli({"run", model, "--backend", "onednn", "--random-inputs", "3", "--check"});
  unsetenv("ONEDNN_VERBOSE");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("exec,cpu,convolution")) << "the branch's Conv ran on oneDNN";
  EXPECT_THAT(r.out, HasSubstr(", ok\n"));
}

/// --precision bf16 reaches the onednn backend (its regions run in bf16),
/// judges --check against the output's scale with a default tolerance of
/// 2e-2, and the report carries the error scaled by the output's magnitude,
/// the figure bf16 is judged by.
TEST(CliRun, PrecisionBf16RunsOnednnWithLooserCheck) {
  TempDir dir;
  std::string model = dir.write("cbr.sg", kConvBnRelu);
  CliResult r = runCli({"run", model, "--backend", "onednn", "--random-inputs", "3", "--check",
                        "--precision", "bf16", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& check = j["outputs"][0]["check"];
  EXPECT_TRUE(check["ok"].get<bool>());
  EXPECT_DOUBLE_EQ(check["tolerance"].get<double>(), 2e-2);
  EXPECT_EQ(check["tolerance_of"], "scale");
  // bf16 keeps 8 mantissa bits: the error is far above fp32's (about 1e-7
  // of the scale here, see the next test), so bf16 really ran, yet within a
  // few percent of the scale.
  EXPECT_GT(check["scaled_error"].get<double>(), 1e-4);
  EXPECT_LT(check["scaled_error"].get<double>(), 0.05);
  ASSERT_EQ(j["regions"].size(), 1u);
  EXPECT_EQ(j["regions"][0]["backend"], "onednn");
}

/// In fp32 (the default, or said explicitly) the onednn region agrees with
/// the reference at the strict default tolerance: --precision fp32 does not
/// loosen anything.
TEST(CliRun, PrecisionFp32KeepsStrictTolerance) {
  TempDir dir;
  std::string model = dir.write("cbr.sg", kConvBnRelu);
  CliResult r = runCli({"run", model, "--backend", "onednn", "--random-inputs", "3", "--check",
                        "--precision", "fp32", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["outputs"][0]["check"]["tolerance"].get<double>(), 1e-4);
  EXPECT_EQ(j["outputs"][0]["check"]["tolerance_of"], "element");
  EXPECT_LT(j["outputs"][0]["check"]["scaled_error"].get<double>(), 1e-5);
}

/// The scale criterion still fails a reduced-precision run whose error is
/// past it: an explicit --tolerance far below bf16's rounding must not pass,
/// and the message says what the tolerance was relative to.
TEST(CliRun, PrecisionBf16CheckFailsPastItsScaleTolerance) {
  TempDir dir;
  std::string model = dir.write("cbr.sg", kConvBnRelu);
  CliResult r = runCli({"run", model, "--backend", "onednn", "--random-inputs", "3", "--check",
                        "--precision", "bf16", "--tolerance", "1e-6"});
  EXPECT_NE(r.exitCode, 0) << r.out;
  EXPECT_THAT(r.err, HasSubstr("past tolerance 1e-06 of the output scale"));
}

/// A precision no backend offers is a usage error, not a silent fp32 run.
TEST(CliRun, UnknownPrecisionIsUsageError) {
  TempDir dir;
  std::string model = dir.write("relu.sg", kRelu);
  EXPECT_TRUE(failsWithOneLine(
      runCli({"run", model, "--random-inputs", "1", "--precision", "int4"}), 2, "--precision"));
}

/// An input without data is a one-line error saying how to give it.
TEST(CliRun, MissingInputIsOneLineError) {
  TempDir dir;
  std::string model = dir.write("relu.sg", kRelu);
  CliResult r = runCli({"run", model});
  EXPECT_TRUE(failsWithOneLine(r, 1, "no data for input 'x'"));
  EXPECT_THAT(r.err, HasSubstr("--random-inputs"));
}

/// --input naming something that is not a graph input is refused, not
/// ignored.
TEST(CliRun, UnknownInputNameIsOneLineError) {
  TempDir dir;
  std::string model = dir.write("relu.sg", kRelu);
  std::string out = (dir.path() / "out").string();
  ASSERT_EQ(runCli({"run", model, "--random-inputs", "1", "--output-dir", out}).exitCode, 0);
  CliResult r =
      runCli({"run", model, "--random-inputs", "1", "--input", "nosuch=" + out + "/inputs/x.npy"});
  EXPECT_TRUE(failsWithOneLine(r, 1, "'nosuch'"));
}

/// An input whose dims contradict the declared static shape is refused
/// with a message naming the input; nothing is written.
TEST(CliRun, WrongShapeInputIsOneLineError) {
  TempDir dir;
  std::string model = dir.write("relu.sg", kRelu);
  std::string wide = dir.write("wide.sg", kReluWide);
  std::string out = (dir.path() / "wide_out").string();
  ASSERT_EQ(runCli({"run", wide, "--random-inputs", "1", "--output-dir", out}).exitCode, 0);
  std::string refused = (dir.path() / "refused").string();
  CliResult r =
      runCli({"run", model, "--input", "x=" + out + "/inputs/x.npy", "--output-dir", refused});
  EXPECT_TRUE(failsWithOneLine(r, 1, "'x'"));
  EXPECT_FALSE(std::filesystem::exists(refused + "/y.npy"));
}

/// Nonsense counts are usage errors (exit 2).
TEST(CliRun, BadCountsAreUsageErrors) {
  TempDir dir;
  std::string model = dir.write("relu.sg", kRelu);
  EXPECT_TRUE(
      failsWithOneLine(runCli({"run", model, "--random-inputs", "1", "--runs", "0"}), 2, "--runs"));
  EXPECT_TRUE(failsWithOneLine(runCli({"run", model, "--random-inputs", "1", "--threads", "-1"}), 2,
                               "--threads"));
}

/// An unknown backend name is an error, not a silent unpartitioned run.
TEST(CliRun, UnknownBackendIsOneLineError) {
  TempDir dir;
  std::string model = dir.write("relu.sg", kRelu);
  CliResult r = runCli({"run", model, "--backend", "no_such_backend", "--random-inputs", "1"});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_THAT(r.err, HasSubstr("no_such_backend"));
  EXPECT_THAT(r.out, IsEmpty());
}

}  // namespace
}  // namespace subgraph::cli::testing
