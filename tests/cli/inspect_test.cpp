//===- tests/cli/inspect_test.cpp - `subgraph inspect` --------------------===//
//
// The inspect report, as text and as JSON, on small graphs written by the
// tests (so every number is known) and on the repository's ResNet block.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::ContainerEq;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

//   x    w (const 4x4 f32, 64 bytes)
//    \  /
//   MatMul -> a ----------.
//             Relu -> b   |
//             Relu -> c   |
//             Add(c, a) <-'  -> d
constexpr const char* kTinyGraph = R"(graph @tiny(%x: f32[1, 4]) opset(ai.onnx = 17) {
  %w = const f32[4, 4] splat(0.5)
  %a: f32[1, 4] = MatMul(%x, %w) @mm
  %b: f32[1, 4] = Relu(%a)
  %c: f32[1, 4] = Relu(%b)
  %d: f32[1, 4] = Add(%c, %a)
  return %d
}
)";

/// The text report has every section with the numbers of the graph; the
/// histogram is sorted by count, then by op name.
TEST(CliInspect, TextReportOfTinyGraph) {
  TempDir dir;
  std::string file = dir.write("tiny.sg", kTinyGraph);
  CliResult r = runCli({"inspect", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.err, IsEmpty());
  std::vector<std::string> expected = {
      "file       " + file,
      "graph      tiny",
      "nodes      4",
      "values     6",
      "opsets     ai.onnx 17",
      "inputs     1",
      "  x  f32[1, 4]",
      "outputs    1",
      "  d  f32[1, 4]",
      "constants  1, 64 B (64 bytes)",
      "ops        3 kinds",
      "  2  Relu",
      "  1  Add",
      "  1  MatMul",
      "verify     OK",
  };
  EXPECT_THAT(splitLines(r.out), ContainerEq(expected));
}

/// --json carries the same facts as one JSON object.
TEST(CliInspect, JsonReportOfTinyGraph) {
  TempDir dir;
  std::string file = dir.write("tiny.sg", kTinyGraph);
  CliResult r = runCli({"inspect", "--json", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["graph"], "tiny");
  EXPECT_EQ(j["nodes"], 4);
  EXPECT_EQ(j["values"], 6);
  EXPECT_EQ(j["opsets"], nlohmann::json({{"ai.onnx", 17}}));
  ASSERT_EQ(j["inputs"].size(), 1u);
  EXPECT_EQ(j["inputs"][0]["name"], "x");
  EXPECT_EQ(j["inputs"][0]["type"]["dtype"], "f32");
  EXPECT_EQ(j["inputs"][0]["type"]["shape"], nlohmann::json({1, 4}));
  EXPECT_EQ(j["outputs"][0]["name"], "d");
  EXPECT_EQ(j["constants"], nlohmann::json({{"count", 1}, {"bytes", 64}}));
  nlohmann::json ops = nlohmann::json::array({{{"op", "Relu"}, {"count", 2}},
                                              {{"op", "Add"}, {"count", 1}},
                                              {{"op", "MatMul"}, {"count", 1}}});
  EXPECT_EQ(j["ops"], ops);
  EXPECT_EQ(j["verify"], nlohmann::json({{"ran", true}, {"ok", true}}));
}

/// Symbolic and unknown dims appear in JSON as a name and null.
TEST(CliInspect, JsonShowsSymbolicAndUnknownDims) {
  TempDir dir;
  std::string file = dir.write("sym.sg", "graph @g(%x: f32[N, ?, 3], %s: i64) {\n  return %x\n}\n");
  CliResult r = runCli({"inspect", "--json", "--no-verify", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["inputs"][0]["type"]["shape"], nlohmann::json::parse(R"(["N", null, 3])"));
  EXPECT_EQ(j["inputs"][0]["type"]["text"], "f32[N, ?, 3]");
  EXPECT_TRUE(j["inputs"][1]["type"]["shape"].is_null());
  EXPECT_EQ(j["verify"], nlohmann::json({{"ran", false}}));
}

//   y = Relu(%ghost), where %ghost is never defined
constexpr const char* kDanglingGraph = R"(graph @broken(%x: f32[2]) {
  %y: f32[2] = Relu(%ghost)
  return %y
}
)";

/// A graph the verifier rejects: the report still prints (saying FAILED),
/// stderr has the one-line reason, and the exit status is 1.
TEST(CliInspect, VerificationFailureExitsOneWithReason) {
  TempDir dir;
  std::string file = dir.write("broken.sg", kDanglingGraph);
  CliResult r = runCli({"inspect", file});
  EXPECT_TRUE(failsWithOneLine(r, 1, file + ": verification failed: "));
  EXPECT_THAT(r.err, HasSubstr("ghost"));
  EXPECT_THAT(r.out, HasSubstr("nodes      1\n"));
  EXPECT_THAT(r.out, HasSubstr("verify     FAILED: "));

  CliResult json = runCli({"inspect", "--json", file});
  EXPECT_EQ(json.exitCode, 1);
  nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["verify"]["ok"], false);
  EXPECT_THAT(j["verify"]["error"].get<std::string>(), HasSubstr("ghost"));
}

/// --no-verify reports the same broken graph and succeeds.
TEST(CliInspect, NoVerifySkipsTheVerifier) {
  TempDir dir;
  std::string file = dir.write("broken.sg", kDanglingGraph);
  CliResult r = runCli({"inspect", "--no-verify", file});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.err, IsEmpty());
  EXPECT_THAT(r.out, HasSubstr("verify     skipped (--no-verify)\n"));
}

/// An op nobody defined fails verification unless --allow-unknown-ops.
TEST(CliInspect, UnknownOpNeedsAllowUnknownOps) {
  TempDir dir;
  std::string file =
      dir.write("custom.sg",
                "graph @g(%x: f32[2]) {\n  %y: f32[2] = mydomain.Frobnicate(%x)\n  return %y\n}\n");
  CliResult strict = runCli({"inspect", file});
  EXPECT_TRUE(failsWithOneLine(strict, 1, "Frobnicate"));
  CliResult lenient = runCli({"inspect", "--allow-unknown-ops", file});
  EXPECT_EQ(lenient.exitCode, 0) << lenient.err;
  EXPECT_THAT(lenient.out, HasSubstr("  1  mydomain.Frobnicate\n"));
}

/// --shape fixes symbolic input dims; the report shows the new type.
TEST(CliInspect, ShapeOptionFixesSymbolicInputDims) {
  TempDir dir;
  std::string file = dir.write(
      "sym.sg", "graph @g(%x: f32[N, 4]) {\n  %y: f32[N, 4] = Relu(%x)\n  return %y\n}\n");
  CliResult r = runCli({"inspect", file, "--shape", "x=8,4"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  x  f32[8, 4]\n"));
  CliResult x = runCli({"inspect", file, "--shape", "x=8x4"});
  EXPECT_THAT(x.out, HasSubstr("  x  f32[8, 4]\n"));
}

/// Malformed --shape values are usage errors quoting the value; values
/// that do not fit the graph are failures naming the input.
TEST(CliInspect, ShapeOptionErrors) {
  TempDir dir;
  std::string file = dir.write("sym.sg", "graph @g(%x: f32[N, 4]) {\n  return %x\n}\n");
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", file, "--shape", "x"}), 2,
                               "invalid --shape 'x': expected NAME=DIMS"));
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", file, "--shape", "x=1,-4"}), 2,
                               "'-4' is not a non-negative integer"));
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", file, "--shape", "x=1,,4"}), 2,
                               "'' is not a non-negative integer"));
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", file, "--shape", "x=1,99999999999999999999"}), 2,
                               "99999999999999999999"));
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", file, "--shape", "x=1,4", "--shape", "x=2,4"}), 2,
                               "gives input 'x' twice"));
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", file, "--shape", "y=1,4"}), 1,
                               "no input named 'y' (inputs: x)"));
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", file, "--shape", "x=1,4,4"}), 1,
                               "input 'x' has rank 2, but 3 dims were given"));
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect", file, "--shape", "x=1,5"}), 1,
                               "dim 1 of input 'x' is 4, not 5"));
}

/// "-" reads a text graph from stdin.
TEST(CliInspect, ReadsStdin) {
  CliResult r = runCli({"inspect", "-"}, kTinyGraph);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("file       -\n"));
  EXPECT_THAT(r.out, HasSubstr("nodes      4\n"));
}

/// The repository's ResNet-50 bottleneck block (layer2.0): three conv-bn
/// stages, a conv-bn shortcut, the residual Add and three Relus.
TEST(CliInspect, ResnetBlock) {
  std::string file = sourcePath("tests/data/graphs/resnet_block.sg");
  ASSERT_TRUE(std::filesystem::exists(file)) << file;
  CliResult r = runCli({"inspect", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("graph      resnet50_layer2_0\n"));
  EXPECT_THAT(r.out, HasSubstr("nodes      12\n"));
  EXPECT_THAT(r.out, HasSubstr("inputs     1\n  x  f32[1, 256, 56, 56]\n"));
  EXPECT_THAT(r.out, HasSubstr("outputs    1\n  y  f32[1, 512, 28, 28]\n"));
  // 4 conv weights (128x256, 128x128x3x3, 512x128, 512x256) and 4 x 4
  // BatchNormalization vectors (128, 128, 512, 512 channels), all f32.
  EXPECT_THAT(r.out, HasSubstr("constants  20, 1.5 MiB (1527808 bytes)\n"));
  EXPECT_THAT(r.out, HasSubstr("ops        4 kinds\n"
                               "  4  BatchNormalization\n"
                               "  4  Conv\n"
                               "  3  Relu\n"
                               "  1  Add\n"));
  EXPECT_THAT(r.out, HasSubstr("verify     OK\n"));
}

//   x -> Identity -> a ----.
//   k1, k2 -> Add -> k ---> Add -> y
//   x -> Relu -> dead (no user)
constexpr const char* kSimplifiable = R"(graph @simplify(%x: f32[2]) opset(ai.onnx = 17) {
  %k1 = const f32[2] [1.0, 2.0]
  %k2 = const f32[2] [3.0, 4.0]
  %a: f32[2] = Identity(%x)
  %k: f32[2] = Add(%k1, %k2)
  %dead: f32[2] = Relu(%x)
  %y: f32[2] = Add(%a, %k)
  return %y
}
)";

/// --passes default shows the graph after Identity removal, constant
/// folding and DCE: one Add is left, fed by x and the folded constant.
TEST(CliInspect, PassesDefaultShowsSimplifiedGraph) {
  TempDir dir;
  std::string file = dir.write("simplify.sg", kSimplifiable);
  CliResult r = runCli({"inspect", "--passes", "default", "--json", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nodes"], 4);  // the input graph is reported unchanged
  ASSERT_TRUE(j.contains("after_passes"));
  EXPECT_EQ(j["after_passes"]["nodes"], 1);
  EXPECT_EQ(j["after_passes"]["ops"], nlohmann::json::parse(R"([{"op": "Add", "count": 1}])"));
  EXPECT_TRUE(j["after_passes"]["fixed_point"]);

  CliResult text = runCli({"inspect", "--passes", "default", file});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("after passes"));
  EXPECT_THAT(text.out, HasSubstr("nodes      4 -> 1\n"));
}

/// A single named pass runs alone: DCE removes the dead Relu but must not
/// fold the constant Add or remove the Identity.
TEST(CliInspect, PassesSingleNamedPassRunsAlone) {
  TempDir dir;
  std::string file = dir.write("simplify.sg", kSimplifiable);
  CliResult r = runCli({"inspect", "--passes", "dce", "--json", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["after_passes"]["nodes"], 3);
  EXPECT_EQ(
      j["after_passes"]["ops"],
      nlohmann::json::parse(R"([{"op": "Add", "count": 2}, {"op": "Identity", "count": 1}])"));
}

/// An unknown pass name is a one-line error that lists the known passes.
TEST(CliInspect, PassesUnknownNameIsOneLineError) {
  TempDir dir;
  std::string file = dir.write("simplify.sg", kSimplifiable);
  CliResult r = runCli({"inspect", "--passes", "no-such-pass", file});
  EXPECT_TRUE(failsWithOneLine(r, 1, "no-such-pass"));
  EXPECT_THAT(r.err, HasSubstr("dce"));
  EXPECT_THAT(r.out, IsEmpty());
}

#if SUBGRAPH_CLI_TEST_HAVE_ONNX
/// An ONNX model from the ONNX test data (libonnx-testdata) loads and is
/// summarized like a text graph.
TEST(CliInspect, OnnxModelFromOnnxTestData) {
  std::string file = "/usr/share/libonnx-testdata/data/node/test_relu/model.onnx";
  ASSERT_TRUE(std::filesystem::exists(file)) << file << " is missing; install libonnx-testdata";
  CliResult r = runCli({"inspect", "--json", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nodes"], 1);
  EXPECT_EQ(j["ops"], nlohmann::json::parse(R"([{"op": "Relu", "count": 1}])"));
  EXPECT_EQ(j["inputs"][0]["name"], "x");
  EXPECT_EQ(j["outputs"][0]["name"], "y");
}
#endif

}  // namespace
}  // namespace subgraph::cli::testing
