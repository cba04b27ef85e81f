//===- tests/cli/zoo_test.cpp - `subgraph zoo` ----------------------------===//
//
// The zoo command writes the generated models that the demo, the
// differential tests and the benchmarks use; these tests check what it
// writes by reading it back with `inspect`, and its usage errors.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::HasSubstr;

// Op histogram of an `inspect --json` report.
std::map<std::string, int> opCounts(const nlohmann::json& report) {
  std::map<std::string, int> counts;
  for (const auto& entry : report["ops"]) counts[entry["op"]] = entry["count"];
  return counts;
}

/// --list names every model the other commands rely on.
TEST(CliZoo, ListNamesTheModels) {
  CliResult r = runCli({"zoo", "--list"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char* name : {"resnet50", "mobilenetv2", "mobilenetv3", "bert", "synthetic"})
    EXPECT_THAT(r.out, HasSubstr(name)) << name;
}

#if SUBGRAPH_CLI_TEST_HAVE_ONNX
/// The generated ResNet-50 is the documented 175 nodes: 53 Conv, each
/// followed by a BatchNormalization, 49 Relu and 16 residual Adds. (ONNX,
/// not the text form: 25M weights as decimal text take minutes to write.)
TEST(CliZoo, ResNet50HasTheDocumentedOps) {
  TempDir dir;
  std::string file = (dir.path() / "resnet50.onnx").string();
  CliResult r = runCli({"zoo", "resnet50", "-o", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  CliResult inspect = runCli({"inspect", "--json", file});
  ASSERT_EQ(inspect.exitCode, 0) << inspect.err;
  nlohmann::json j = nlohmann::json::parse(inspect.out);
  EXPECT_EQ(j["nodes"], 175);
  std::map<std::string, int> ops = opCounts(j);
  EXPECT_EQ(ops["Conv"], 53);
  EXPECT_EQ(ops["BatchNormalization"], 53);
  EXPECT_EQ(ops["Relu"], 49);
  EXPECT_EQ(ops["Add"], 16);
  EXPECT_EQ(ops["Gemm"], 1);
  EXPECT_TRUE(j["verify"]["ok"]);
}

/// --batch 0 gives a symbolic batch dim that survives the ONNX round trip,
/// and the same seed gives the same file.
TEST(CliZoo, SymbolicBatchAndDeterministicOnnx) {
  TempDir dir;
  std::string a = (dir.path() / "a.onnx").string(), b = (dir.path() / "b.onnx").string();
  ASSERT_EQ(runCli({"zoo", "mobilenetv2", "--batch", "0", "-o", a}).exitCode, 0);
  ASSERT_EQ(runCli({"zoo", "mobilenetv2", "--batch", "0", "-o", b}).exitCode, 0);
  EXPECT_EQ(readFile(a), readFile(b));
  CliResult inspect = runCli({"inspect", "--json", a});
  ASSERT_EQ(inspect.exitCode, 0) << inspect.err;
  nlohmann::json j = nlohmann::json::parse(inspect.out);
  EXPECT_EQ(j["inputs"][0]["type"]["shape"], nlohmann::json::parse(R"(["N", 3, 224, 224])"));
}
#endif

/// A synthetic graph has exactly the requested node count.
TEST(CliZoo, SyntheticHasExactNodeCount) {
  TempDir dir;
  std::string file = (dir.path() / "syn.sg").string();
  ASSERT_EQ(
      runCli({"zoo", "synthetic", "--nodes", "1000", "--shape", "residual", "-o", file}).exitCode,
      0);
  CliResult inspect = runCli({"inspect", "--json", file});
  ASSERT_EQ(inspect.exitCode, 0) << inspect.err;
  EXPECT_EQ(nlohmann::json::parse(inspect.out)["nodes"], 1000);
}

/// Usage errors: an unknown model, a missing output, a negative batch.
TEST(CliZoo, UsageErrors) {
  TempDir dir;
  std::string file = (dir.path() / "x.sg").string();
  EXPECT_TRUE(failsWithOneLine(runCli({"zoo", "alexnet", "-o", file}), 2, "alexnet"));
  EXPECT_TRUE(failsWithOneLine(runCli({"zoo", "resnet50"}), 2, "-o"));
  EXPECT_TRUE(
      failsWithOneLine(runCli({"zoo", "resnet50", "--batch", "-1", "-o", file}), 2, "--batch"));
  EXPECT_FALSE(std::filesystem::exists(file));
}

}  // namespace
}  // namespace subgraph::cli::testing
