//===- tests/cli/limits_test.cpp - The global `--limit` option ------------===//
//
// `--limit NAME=VALUE` sets the resource limits of every layer a command
// uses (model bytes, tensor bytes, node count, nesting depth, a run's
// memory plan). Each test sets one limit just below what a tiny model
// needs and checks for the one-line error naming the limit and the flag
// that raises it, and just at it, where the command must succeed.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

//   x [2,3] -> Relu -> Neg -> y        (two nodes, one 24-byte constant
//        c [2,3] ------^ Add            added in between: three nodes)
constexpr const char* kSmall = R"(graph @small(%x: f32[2, 3]) opset(ai.onnx = 17) {
  %c = const f32[2, 3] splat(0.5)
  %r: f32[2, 3] = Relu(%x)
  %a: f32[2, 3] = Add(%r, %c)
  %y: f32[2, 3] = Neg(%a)
  return %y
}
)";

/// One error line, exit code 1, naming the limit and the flag.
void expectLimitError(const CliResult& r, const std::string& flag) {
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("(raise it with --limit " + flag + "=N)")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

/// Node count: three nodes pass `nodes=3` and fail `nodes=2`.
TEST(CliLimits, NodeCount) {
  TempDir dir;
  std::string model = dir.write("small.sg", kSmall);
  CliResult ok = runCli({"inspect", model, "--limit", "nodes=3"});
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  CliResult over = runCli({"inspect", model, "--limit", "nodes=2"});
  expectLimitError(over, "nodes");
  EXPECT_THAT(over.err, HasSubstr("more nodes than the limit of 2"));
}

/// Tensor bytes: the 24-byte constant passes 24 and fails 23.
TEST(CliLimits, TensorBytes) {
  TempDir dir;
  std::string model = dir.write("small.sg", kSmall);
  EXPECT_EQ(runCli({"inspect", model, "--limit", "tensor-bytes=24"}).exitCode, 0);
  CliResult over = runCli({"inspect", model, "--limit", "tensor-bytes=23"});
  expectLimitError(over, "tensor-bytes");
  EXPECT_THAT(over.err, HasSubstr("exceeds the limit of 23 bytes"));
}

/// Model bytes: the file's own size passes and one byte less fails.
TEST(CliLimits, ModelBytes) {
  TempDir dir;
  std::string model = dir.write("small.sg", kSmall);
  const std::string size = std::to_string(std::string(kSmall).size());
  const std::string less = std::to_string(std::string(kSmall).size() - 1);
  EXPECT_EQ(runCli({"inspect", model, "--limit", "model-bytes=" + size}).exitCode, 0);
  expectLimitError(runCli({"inspect", model, "--limit", "model-bytes=" + less}), "model-bytes");
}

//   x -> If(c) { then: If(c) { then: Relu(x)  else: Neg(x) }
//                else: Neg(x) } -> y             (two levels of subgraphs)
constexpr const char* kNested = R"(graph @nested(%x: f32[2], %c: bool[]) opset(ai.onnx = 17) {
  %y: f32[2] = If(%c) {else_branch = graph @outer_else() {
    %e: f32[2] = Neg(%x)
    return %e
  }, then_branch = graph @outer_then() {
    %t: f32[2] = If(%c) {else_branch = graph @inner_else() {
      %ie: f32[2] = Neg(%x)
      return %ie
    }, then_branch = graph @inner_then() {
      %it: f32[2] = Relu(%x)
      return %it
    }}
    return %t
  }}
  return %y
}
)";

/// Nesting depth counts the levels of subgraphs below the main graph:
/// two levels pass `depth=2` and fail `depth=1`.
TEST(CliLimits, NestingDepth) {
  TempDir dir;
  std::string model = dir.write("nested.sg", kNested);
  CliResult ok = runCli({"inspect", model, "--limit", "depth=2"});
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  CliResult over = runCli({"inspect", model, "--limit", "depth=1"});
  expectLimitError(over, "depth");
  EXPECT_THAT(over.err, HasSubstr("nested deeper than the limit"));
}

/// A run's memory plan: a generous cap runs, a 16-byte cap (less than one
/// 24-byte intermediate) fails with the plan's size and the flag.
TEST(CliLimits, RunMemoryPlan) {
  TempDir dir;
  std::string model = dir.write("small.sg", kSmall);
  CliResult ok = runCli({"run", model, "--random-inputs", "1", "--limit", "memory=1M"});
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  CliResult over = runCli({"run", model, "--random-inputs", "1", "--limit", "memory=16"});
  expectLimitError(over, "memory");
  EXPECT_THAT(over.err, HasSubstr("over the memory limit of 16 bytes"));
}

/// Negative: malformed --limit values are usage errors (exit 2) that name
/// the problem; they never reach a command, and never fall back silently
/// to the default.
TEST(CliLimits, MalformedValuesAreUsageErrors) {
  TempDir dir;
  std::string model = dir.write("small.sg", kSmall);
  struct Case {
    const char* spec;
    const char* says;
  } cases[] = {
      {"nodes", "expected NAME=VALUE"}, {"cats=3", "unknown limit 'cats'"},
      {"nodes=0", "positive integer"},  {"nodes=-1", "positive integer"},
      {"nodes=3X", "positive integer"}, {"memory=99999999999999999999G", "positive integer"},
  };
  for (const Case& c : cases) {
    CliResult r = runCli({"inspect", model, "--limit", c.spec});
    EXPECT_EQ(r.exitCode, 2) << c.spec;
    EXPECT_THAT(r.err, HasSubstr(c.says)) << c.spec;
    EXPECT_THAT(r.out, Not(HasSubstr("graph @small"))) << c.spec;
  }
  CliResult twice = runCli({"inspect", model, "--limit", "nodes=3", "--limit", "nodes=4"});
  EXPECT_EQ(twice.exitCode, 2);
  EXPECT_THAT(twice.err, HasSubstr("given twice"));
}

/// --help documents the option and its names.
TEST(CliLimits, HelpNamesTheLimits) {
  CliResult r = runCli({"--help"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_THAT(r.out, HasSubstr("--limit"));
  EXPECT_THAT(r.out, HasSubstr("tensor-bytes"));
}

}  // namespace
}  // namespace subgraph::cli::testing
