//===- tests/cli/hardening_test.cpp - Hostile input through the program (issue 32) -===//
//
// What tests/reliability/hostile_corpus_test.cpp checks in the libraries,
// checked here where only the program can show it: every command verifies
// what it loads; numeric options have bounds; FIFOs and devices are never
// read; output files never collide and are written atomically; `--check`
// compares infinities exactly. Each case ends in exit 0 with the right
// result or in one "subgraph: error:" line with exit 1 (failure) or 2
// (usage), never in a signal or a hang.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "subgraph/api/output_check.h"

namespace subgraph::cli::testing {
namespace {

namespace fs = std::filesystem;
using api::compareOutput;
using api::Comparison;
using api::ToleranceOf;
using ::testing::HasSubstr;

/// A node whose required second operand is missing (`_`).
constexpr const char* kMissingInput = R"(graph @g(%x: f32[2]) {
  %y: f32[2] = Add(%x, _)
  return %y
}
)";

/// A node with no outputs at all.
constexpr const char* kNoOutputs = R"(graph @g(%x: f32[2]) {
  Relu(%x)
  %y: f32[2] = Neg(%x)
  return %y
}
)";

//   x [2] -> Neg -> y
constexpr const char* kNeg = R"(graph @g(%x: f32[2]) {
  %y: f32[2] = Neg(%x)
  return %y
}
)";

/// Every command that loads a model rejects a malformed one with one line,
/// before any pass, partition or kernel sees it.
TEST(CliHardening, EveryCommandVerifiesWhatItLoads) {
  TempDir dir;
  for (const char* text : {kMissingInput, kNoOutputs}) {
    std::string model = dir.write("bad.sg", text);
    const std::vector<std::vector<std::string>> commands = {
        {"run", model, "--random-inputs", "1"},
        {"run", model, "--random-inputs", "1", "--backend", "convbn"},
        {"partition", model, "--backend", "convbn"},
        {"convert", model, (dir.path() / "out.sg").string()}};
    for (const auto& args : commands) {
      SCOPED_TRACE(args[0] + " " + text);
      EXPECT_TRUE(failsWithOneLine(runCli(args), 1, "invalid graph"));
    }
    // inspect reports the verdict and still fails.
    CliResult inspected = runCli({"inspect", model, "--passes", "default"});
    EXPECT_EQ(inspected.exitCode, 1) << inspected.err;
    // dot draws broken graphs on purpose (to show what is wrong); it must
    // not crash on them.
    CliResult drawn = runCli({"dot", model, "-o", "-"});
    EXPECT_EQ(drawn.exitCode, 0) << drawn.err;
  }
}

#if SUBGRAPH_CLI_TEST_HAVE_ONNX
/// The same model as ONNX (written with --no-verify) is refused by `run`.
TEST(CliHardening, OnnxModelWithAMissingInputIsRefused) {
  TempDir dir;
  std::string model = dir.write("bad.sg", kMissingInput);
  std::string onnx = (dir.path() / "bad.onnx").string();
  CliResult converted = runCli({"convert", model, onnx, "--no-verify"});
  ASSERT_EQ(converted.exitCode, 0) << converted.err;
  EXPECT_TRUE(failsWithOneLine(runCli({"run", onnx, "--random-inputs", "1"}), 1, "invalid graph"));
}
#endif

/// Out-of-range numeric options are usage errors (exit 2), not crashes.
TEST(CliHardening, NumericOptionsHaveBounds) {
  TempDir dir;
  std::string model = dir.write("neg.sg", kNeg);
  const std::vector<std::vector<std::string>> bad = {
      {"run", model, "--random-inputs", "1", "--threads", "2147483647"},
      {"run", model, "--random-inputs", "1", "--threads", "-1"},
      {"run", model, "--random-inputs", "1", "--threads", "99999999999999999999"},
      {"run", model, "--random-inputs", "1", "--runs", "0"},
      {"run", model, "--random-inputs", "1", "--runs", "2147483647"},
      {"run", model, "--random-inputs", "1", "--warmup", "1000000000"},
      {"run", model, "--random-inputs", "-5"},
      {"check-plugin", "convbn", "--cases", "0"},
      {"check-plugin", "convbn", "--cases", "18446744073709551615"},
      {"check-plugin", "convbn", "--show", "100000"},
      {"convert", model, (dir.path() / "o.onnx").string(), "--opset", "0"},
      {"zoo", "synthetic", "--nodes", "10000000000", "-o", (dir.path() / "z.sg").string()},
      {"zoo", "resnet50", "--batch", "4611686018427387904", "-o", (dir.path() / "z.sg").string()},
      {"inspect", model, "--limit", "depth=256"},
      {"inspect", model, "--limit", "depth=18446744073709551615"},
      {"inspect", model, "--limit", "memory=0"}};
  for (const auto& args : bad) {
    std::string line;
    for (const std::string& a : args) line += a + " ";
    SCOPED_TRACE(line);
    CliResult r = runCli(args);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(splitLines(r.err).size(), 1u) << r.err;
  }
  // The largest allowed values still work.
  EXPECT_EQ(runCli({"inspect", model, "--limit", "depth=255"}).exitCode, 0);
  EXPECT_EQ(runCli({"run", model, "--random-inputs", "1", "--threads", "1024"}).exitCode, 0);
}

/// A FIFO, a directory or a symlink to /dev/zero given as a model or a
/// .npy input is refused at once: no hang, no read until memory runs out.
TEST(CliHardening, OnlyRegularFilesAreRead) {
  TempDir dir;
  std::string model = dir.write("neg.sg", kNeg);
  std::string fifo = (dir.path() / "x.npy").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string zero = (dir.path() / "zero.npy").string();
  fs::create_symlink("/dev/zero", zero);
  std::string fifoModel = (dir.path() / "m.sg").string();
  ASSERT_EQ(::mkfifo(fifoModel.c_str(), 0600), 0);
  std::string zeroModel = (dir.path() / "z.onnx").string();
  fs::create_symlink("/dev/zero", zeroModel);
  std::string folder = (dir.path() / "folder.npy").string();
  fs::create_directory(folder);
  for (const std::string& input : {fifo, zero, folder}) {
    SCOPED_TRACE(input);
    CliResult r = runCli({"run", model, "--input", "x=" + input}, {}, 20);
    EXPECT_FALSE(r.timedOut);
    EXPECT_TRUE(failsWithOneLine(r, 1, "regular file"));
  }
  for (const std::string& path : {fifoModel, zeroModel}) {
    SCOPED_TRACE(path);
    CliResult r = runCli({"inspect", path}, {}, 20);
    EXPECT_FALSE(r.timedOut);
    EXPECT_TRUE(failsWithOneLine(r, 1, "not a regular file"));
  }
}

/// Two outputs whose names map to one file name are an error, not an
/// overwrite; nothing is written.
TEST(CliHardening, OutputFileNamesNeverCollide) {
  TempDir dir;
  std::string model = dir.write("two.sg", R"(graph @g(%x: f32[2]) {
  %"a/b": f32[2] = Neg(%x)
  %a_b: f32[2] = Relu(%x)
  return %"a/b", %a_b
}
)");
  fs::path out = dir.path() / "out";
  CliResult r = runCli({"run", model, "--random-inputs", "1", "--output-dir", out.string()});
  EXPECT_TRUE(failsWithOneLine(r, 1, "would both be written to a_b.npy"));
  EXPECT_FALSE(fs::exists(out / "a_b.npy"));
}

/// A failed write leaves the old file whole, even when it is the input
/// (`convert m.sg m.sg` with the file-size limit standing in for a full
/// disk), and a symlink planted at the old temporary name is not followed.
TEST(CliHardening, WritesAreAtomicAndNeverTruncateTheInput) {
  TempDir dir;
  std::string big = "graph @g(%x: f32[2]) {\n";
  for (int i = 0; i < 200; ++i)
    big += "  %v" + std::to_string(i) + ": f32[2] = Neg(%" +
           (i ? "v" + std::to_string(i - 1) : "x") + ")\n";
  big += "  return %v199\n}\n";
  std::string model = dir.write("m.sg", big);
  ASSERT_GT(big.size(), 4096u);
  // ulimit -f counts 512-byte blocks; SIGXFSZ ignored so write() fails
  // with EFBIG, as on a full disk, instead of killing the program.
  std::string err = (dir.path() / "err.txt").string();
  std::string command = "ulimit -f 4; trap '' XFSZ; exec '" + std::string(SUBGRAPH_CLI_PATH) +
                        "' convert '" + model + "' '" + model + "' 2>'" + err + "'";
  int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << "killed by a signal";
  EXPECT_EQ(WEXITSTATUS(status), 1) << readFile(err);
  EXPECT_EQ(splitLines(readFile(err)).size(), 1u) << readFile(err);
  EXPECT_THAT(readFile(err), HasSubstr("write failed"));
  EXPECT_EQ(readFile(model), big);
  std::remove(err.c_str());
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().filename().string().find(".m.sg."), std::string::npos)
        << "temporary file left behind: " << entry.path();

  // A planted symlink where `<out>.tmp` used to be written stays untouched.
  std::string victim = dir.write("victim.txt", "keep");
  std::string target = (dir.path() / "o.onnx").string();
  fs::create_symlink(victim, target + ".tmp");
  CliResult converted = runCli({"convert", dir.write("neg.sg", kNeg), target});
  EXPECT_EQ(converted.exitCode, 0) << converted.err;
  EXPECT_EQ(readFile(victim), "keep");
}

Tensor floats(std::vector<float> values) {
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return Tensor(DataType::kFloat32, {static_cast<int64_t>(values.size())}, std::move(bytes));
}

/// `--check` compares infinities and NaN exactly: an infinite reference no
/// longer makes the bound infinite.
TEST(CliHardening, CheckComparesInfinitiesAndNanExactly) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Pair {
    float got, want;
    bool passes;
  };
  const Pair pairs[] = {{inf, inf, true},   {-inf, -inf, true},  {nan, nan, true},
                        {1.0f, inf, false}, {inf, 1.0f, false},  {-inf, inf, false},
                        {nan, inf, false},  {inf, nan, false},   {1.0f, nan, false},
                        {nan, 1.0f, false}, {3e38f, inf, false}, {1.0f, 1.0f, true}};
  for (ToleranceOf of : {ToleranceOf::kElement, ToleranceOf::kScale})
    for (const Pair& p : pairs) {
      SCOPED_TRACE(std::to_string(p.got) + " vs " + std::to_string(p.want));
      Comparison c = compareOutput("y", floats({p.got, 2.0f}), floats({p.want, 2.0f}), 1e-4, of);
      EXPECT_EQ(c.failing == 0, p.passes);
    }
  // A finite output next to an infinite reference element keeps its scale.
  Comparison c =
      compareOutput("y", floats({inf, 1.0f}), floats({inf, 1.5f}), 1e-2, ToleranceOf::kScale);
  EXPECT_EQ(c.failing, 1);
}

/// A huge random input fails against the default memory limit, set from
/// the machine's memory, and `--limit memory` sets it.
TEST(CliHardening, InputsAreBoundedByTheMemoryLimit) {
  TempDir dir;
  std::string model = dir.write("any.sg", R"(graph @g(%x: f32[N, N]) {
  %y = Neg(%x)
  return %y
}
)");
  CliResult huge = runCli({"run", model, "--random-inputs", "1", "--shape", "x=1000000,1000000"});
  EXPECT_TRUE(failsWithOneLine(huge, 1, "--limit memory=N"));
  CliResult small =
      runCli({"run", model, "--random-inputs", "1", "--shape", "x=64,64", "--limit", "memory=1K"});
  EXPECT_TRUE(failsWithOneLine(small, 1, "over the memory limit"));
  EXPECT_EQ(runCli({"run", model, "--random-inputs", "1", "--shape", "x=4,4"}).exitCode, 0);
}

}  // namespace
}  // namespace subgraph::cli::testing
