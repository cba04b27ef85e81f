//===- tests/cli/hardening_round2_test.cpp - Hostile input through the program, second round -===//
//
// What tests/reliability/hostile_round2_test.cpp checks in the libraries
// (issue 48), checked where only the program shows it: a truncated plugin
// file on every path that loads one, the work limits' `--limit` names, out
// of memory inside a Loop, a model's text and data replaced together,
// Graphviz's output through the atomic writer, and check-plugin's workers
// writing without end. Each case ends in exit 0 with the right result or
// in one "subgraph: error:" line, never in a signal, a hang or a file
// written where it should not be.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kPluginDir = SUBGRAPH_CLI_TEST_PLUGIN_DIR;
const std::string kCorpus = SUBGRAPH_CHECK_PLUGIN_CORPUS;

/// Sets an environment variable for the programs a test starts.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

//   x [2] -> Neg -> y
constexpr const char* kNeg = R"(graph @g(%x: f32[2]) {
  %y: f32[2] = Neg(%x)
  return %y
}
)";

/// Runs `command` in sh; its exit status, stderr in `err`.
int shell(const std::string& command, const fs::path& errFile, std::string& err) {
  int status = std::system((command + " 2>'" + errFile.string() + "'").c_str());
  err = readFile(errFile.string());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// A plugin file cut short is one error line on every path that loads a
/// plugin, not SIGBUS inside dlopen: a file given to --backend, a name found
/// on SUBGRAPH_PLUGIN_PATH, `plugins --path` (which still lists the good
/// plugin beside it), and check-plugin.
TEST(CliHardening2, TruncatedPluginIsAnErrorLineOnEveryPath) {
  TempDir dir;
  const std::string elf = readFile((kPluginDir / "example_convbn.so").string());
  ASSERT_GT(elf.size(), 4096u);
  const std::string cut = dir.write("cut.so", elf.substr(0, 4096));
  dir.write("example_convbn.so", elf);
  const std::string model = dir.write("neg.sg", kNeg);
  EXPECT_TRUE(failsWithOneLine(runCli({"run", model, "--random-inputs", "1", "--backend", cut}), 1,
                               "is a truncated ELF file"));
  {
    ScopedEnv path("SUBGRAPH_PLUGIN_PATH", dir.path().string());
    EXPECT_TRUE(failsWithOneLine(runCli({"run", model, "--random-inputs", "1", "--backend", "cut"}),
                                 1, "truncated"));
  }
  CliResult listed = runCli({"plugins", "--path", dir.path().string()});
  EXPECT_LT(listed.exitCode, 2) << listed.err;
  EXPECT_THAT(listed.out + listed.err, HasSubstr("truncated"));
  EXPECT_THAT(listed.out, HasSubstr("example_convbn"));
  EXPECT_TRUE(failsWithOneLine(runCli({"check-plugin", cut, "--cases", "1"}), 1, "truncated"));
}

//   Loop with M = 2^62 whose body negates x
constexpr const char* kEndlessLoop = R"(graph @g(%x: f32[2]) {
  %m = const i64[] [4611686018427387904]
  %t = const bool[] [1]
  %y = Loop(%m, %t, %x) {body = graph @b(%i: i64[], %c: bool[], %v: f32[2]) {
    %w = Neg(%v)
    return %c, %w
  }} @loop
  return %y
}
)";

/// The work limits have `--limit` names, and their messages say which one
/// raises them: a trip count of 2^62, a time limit, a RoiAlign grid.
TEST(CliHardening2, WorkLimitsNameTheirFlag) {
  TempDir dir;
  const std::string loop = dir.write("loop.sg", kEndlessLoop);
  EXPECT_TRUE(failsWithOneLine(
      runCli({"run", loop, "--random-inputs", "1", "--limit", "loop-iterations=1000"}), 1,
      "loop iteration limit of 1000 (iterations of a Loop and of the Loops nested in it) (raise "
      "it with --limit loop-iterations=N)"));
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(failsWithOneLine(runCli({"run", loop, "--random-inputs", "1", "--limit",
                                       "loop-iterations=4G", "--limit", "loop-seconds=1"}),
                               1, "(raise it with --limit loop-seconds=N)"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  const std::string roi = dir.write("roi.sg", R"(graph @g(%x: f32[1, 1, 4, 4], %r: f32[1, 4]) {
  %i = const i64[1] [0]
  %y = RoiAlign(%x, %r, %i) {sampling_ratio = 2147483648} @roi
  return %y
}
)");
  EXPECT_TRUE(failsWithOneLine(runCli({"run", roi, "--random-inputs", "1"}), 1,
                               "sampling_ratio 2147483648 takes 4611686018427387904 steps, over "
                               "the kernel work limit of 17179869184 (raise it with --limit "
                               "kernel-work=N)"));
  EXPECT_EQ(runCli({"run", roi, "--random-inputs", "1", "--limit", "kernel-work=0"}).exitCode, 2);
}

//   Loop M=64: v <- Concat(v, v), doubling 4 KiB each iteration
constexpr const char* kDoublingLoop = R"(graph @g(%x: f32[1024]) {
  %m = const i64[] [64]
  %t = const bool[] [1]
  %y = Loop(%m, %t, %x) {body = graph @b(%i: i64[], %c: bool[], %v: f32) {
    %w = Concat(%v, %v) {axis = 0}
    return %c, %w
  }} @loop
  return %y
}
)";

/// Memory running out inside a Loop is one error line (the memory limit
/// names itself first, counting what the Loop holds; with that limit
/// raised past the machine, the allocation that fails does), never an
/// abort with no line. mimalloc aborts where no new handler is installed;
/// the sanitizers' shadow memory cannot run under an address-space limit,
/// so that part needs mimalloc.
TEST(CliHardening2, OutOfMemoryInsideALoopIsAnErrorLine) {
  TempDir dir;
  const std::string model = dir.write("double.sg", kDoublingLoop);
  EXPECT_TRUE(
      failsWithOneLine(runCli({"run", model, "--random-inputs", "1", "--limit", "memory=64M"}), 1,
                       "over the memory limit of 67108864 bytes (raise it with --limit memory=N)"));
  if (!SUBGRAPH_CLI_TEST_HAVE_MIMALLOC) GTEST_SKIP() << "the address-space limit needs mimalloc";
  std::string err;
  const int status =
      shell("ulimit -v 2000000 && exec '" + std::string(SUBGRAPH_CLI_PATH) + "' run '" + model +
                "' --random-inputs 1 --limit memory=1024G >/dev/null",
            dir.path() / "err.txt", err);
  EXPECT_EQ(status, 1) << err;
  EXPECT_EQ(splitLines(err).size(), 1u) << err;
  EXPECT_THAT(err, HasSubstr("out of memory"));
}

/// A text model with a 1 KiB constant (of `value`s), which convert writes
/// to a data file beside the text, and `nodes` nodes in all.
std::string modelWithData(float value, int nodes) {
  std::string values;
  for (int i = 0; i < 256; ++i) values += (i ? ", " : "") + std::to_string(value + i);
  std::string text =
      "graph @g(%x: f32[256]) {\n  %k = const f32[256] [" + values + "]\n  %v0 = Add(%x, %k)\n";
  for (int i = 1; i < nodes; ++i)
    text += "  %v" + std::to_string(i) + " = Neg(%v" + std::to_string(i - 1) + ")\n";
  return text + "  return %v" + std::to_string(nodes - 1) + "\n}\n";
}

/// `convert new.sg old.sg` that fails after the new data file is written
/// (the file-size limit stands in for a full disk: the 1 KiB data fits,
/// the long text does not) leaves old.sg and old.sg.data both as they
/// were: the old text never meets the new constants.
TEST(CliHardening2, FailedConvertKeepsTheOldTextAndDataTogether) {
  TempDir dir;
  const std::string source = dir.write("source.sg", modelWithData(1.0f, 2));
  const std::string old = (dir.path() / "old.sg").string();
  ASSERT_EQ(runCli({"convert", source, old}).exitCode, 0);
  const std::string oldText = readFile(old), oldData = readFile(old + ".data");
  ASSERT_EQ(oldData.size(), 1024u);
  const std::string fresh = dir.write("new.sg", modelWithData(2.0f, 400));
  std::string err;
  const int status = shell("ulimit -f 4; trap '' XFSZ; exec '" + std::string(SUBGRAPH_CLI_PATH) +
                               "' convert '" + fresh + "' '" + old + "'",
                           dir.path() / "err.txt", err);
  EXPECT_EQ(status, 1) << err;
  EXPECT_THAT(err, HasSubstr("write failed"));
  EXPECT_EQ(readFile(old), oldText);
  EXPECT_EQ(readFile(old + ".data"), oldData);
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_NE(entry.path().filename().string().rfind(".old.sg", 0), 0u)
        << "temporary file left behind: " << entry.path();
  // What must not happen: the same convert refused without the limit.
  EXPECT_EQ(runCli({"convert", fresh, old}).exitCode, 0);
  EXPECT_NE(readFile(old), oldText);
}

/// `partition --svg` with a symlink planted at the SVG's name replaces the
/// link and leaves the file it points to alone: Graphviz writes into an
/// anonymous file and the SVG reaches its name through the atomic writer.
TEST(CliHardening2, SvgDoesNotFollowAPlantedSymlink) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) GTEST_SKIP() << "Graphviz not installed";
  TempDir dir;
  const std::string victim = dir.write("victim.txt", "keep");
  const fs::path svg = dir.path() / "out.svg";
  fs::create_symlink(victim, svg);
  CliResult r = runCli(
      {"partition", dir.write("neg.sg", kNeg), "--backend", "NONE", "--svg", svg.string(), "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(readFile(victim), "keep");
  EXPECT_FALSE(fs::is_symlink(svg));
  EXPECT_THAT(readFile(svg.string()), HasSubstr("<svg"));
  EXPECT_FALSE(fs::exists(svg.string() + ".dot.tmp"));
}

/// A plugin whose kernel writes to stderr without end: the case fails as
/// hung after --case-timeout, the worker's output never lands in a file,
/// and the parent keeps only a tail of it.
TEST(CliHardening2, CheckPluginWorkerOutputIsBounded) {
  if (kCorpus.empty()) GTEST_SKIP() << "built without the plugin corpus";
  auto start = std::chrono::steady_clock::now();
  CliResult r =
      runCli({"check-plugin", kCorpus + "/spew_run.so", "--cases", "1", "--case-timeout", "2"});
  EXPECT_EQ(r.exitCode, 1) << r.err.substr(0, 1000);
  EXPECT_THAT(r.out, HasSubstr("hung: no answer in 2 s"));
  EXPECT_LT(r.out.size() + r.err.size(), size_t{1} << 20);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

}  // namespace
}  // namespace subgraph::cli::testing
