//===- tests/cli/plugins_test.cpp - Plugins through the `subgraph` program -===//
//
// Backend plugins as a user meets them: SUBGRAPH_BACKEND naming a missing
// .so fails with one clear line, `--backend` overrides the variable,
// `subgraph plugins` lists what the build's plugin directory holds, and an
// example plugin found by name partitions and runs a model that matches the
// reference (--check). One rule for plugin files (relative to the working
// directory when they contain a '/' or end in .so) in SUBGRAPH_BACKEND,
// --backend and check-plugin; relative SUBGRAPH_PLUGIN_PATH entries, and a
// warning for each dropped one; a file named unlike its backend flagged.
// The example plugins are built into <build>/lib/subgraph/plugins, which
// the program searches by itself.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::HasSubstr;

/// Sets an environment variable for one test (the program inherits it).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

const std::string kBlock = std::string(SUBGRAPH_SOURCE_DIR) + "/tests/data/graphs/resnet_block.sg";
const std::filesystem::path kPluginDir = SUBGRAPH_CLI_TEST_PLUGIN_DIR;

/// Makes `dir` the working directory (the program inherits it) for one test.
class ScopedWorkingDirectory {
 public:
  explicit ScopedWorkingDirectory(const std::filesystem::path& dir)
      : old_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~ScopedWorkingDirectory() {
    std::error_code ec;
    std::filesystem::current_path(old_, ec);
  }
  ScopedWorkingDirectory(const ScopedWorkingDirectory&) = delete;
  ScopedWorkingDirectory& operator=(const ScopedWorkingDirectory&) = delete;

 private:
  std::filesystem::path old_;
};

/// A temporary directory holding a copy of example_convbn.so under
/// `fileName`, in `sub/` when `sub` is set; it is the working directory
/// while the object lives.
struct PluginCopyHere {
  explicit PluginCopyHere(const std::string& fileName = "example_convbn.so") {
    std::filesystem::copy_file(kPluginDir / "example_convbn.so", dir.path() / fileName);
    std::filesystem::create_directory(dir.path() / "sub");
    std::filesystem::copy_file(kPluginDir / "example_convbn.so",
                               dir.path() / "sub" / "example_convbn.so");
  }
  TempDir dir;
  ScopedWorkingDirectory cwd{dir.path()};
  /// The directory as the program sees it (getcwd: no symlinks).
  std::string here() const { return std::filesystem::current_path().string(); }
};

/// A plugin path that does not exist: a usage error (exit 2), one line
/// naming the path and the reason, and no fallback to running without it.
TEST(CliPlugins, MissingPluginFromEnvironmentIsOneClearLine) {
  ScopedEnv env("SUBGRAPH_BACKEND", "/nonexistent.so");
  CliResult r = runCli({"partition", kBlock});
  EXPECT_TRUE(failsWithOneLine(r, 2, "plugin /nonexistent.so: no such file"));
  EXPECT_EQ(r.out, "");
}

/// Every backend list that names nothing, or is malformed, is a usage error
/// (exit 2) in each command that takes one; a plugin that exists but
/// cannot be used is a failure (exit 1).
TEST(CliPlugins, BackendListMistakesAreUsageErrorsEverywhere) {
  for (const char* command : {"partition", "run"}) {
    SCOPED_TRACE(command);
    EXPECT_TRUE(failsWithOneLine(runCli({command, kBlock, "--backend", "no_such_backend"}), 2,
                                 "unknown backend 'no_such_backend'"));
    EXPECT_TRUE(failsWithOneLine(runCli({command, kBlock, "--backend", "no_such,,convbn"}), 2,
                                 "has an empty item"));
    EXPECT_TRUE(failsWithOneLine(runCli({command, kBlock, "--backend", "convbn,convbn"}), 2,
                                 "names 'convbn' twice"));
    EXPECT_TRUE(
        failsWithOneLine(runCli({command, kBlock, "--backend", "./none.so"}), 2, "no such file"));
  }
  EXPECT_TRUE(failsWithOneLine(runCli({"check-plugin", "no_such_backend"}), 2,
                               "unknown backend 'no_such_backend'"));
  PluginCopyHere copy("renamed.so");
  EXPECT_TRUE(failsWithOneLine(runCli({"partition", kBlock, "--backend", "./renamed.so,bad"}), 2,
                               "unknown backend 'bad'"));
  std::filesystem::path notElf = copy.dir.path() / "text.so";
  std::ofstream(notElf) << "not a library";
  EXPECT_TRUE(failsWithOneLine(runCli({"partition", kBlock, "--backend", "./text.so"}), 1,
                               "is not an ELF file"));
}

/// --backend overrides SUBGRAPH_BACKEND, so the broken variable is ignored.
TEST(CliPlugins, BackendOptionOverridesTheEnvironment) {
  ScopedEnv env("SUBGRAPH_BACKEND", "/nonexistent.so");
  CliResult r = runCli({"partition", kBlock, "--backend", "convbn", "-q"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
}

/// --allow-fallback turns the missing plugin into a warning.
TEST(CliPlugins, AllowFallbackSkipsAnUnusablePlugin) {
  CliResult r =
      runCli({"partition", kBlock, "--backend", "/nonexistent.so,convbn", "--allow-fallback"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: plugin /nonexistent.so: no such file"));
}

/// `subgraph plugins` lists the example plugins with what they register.
TEST(CliPlugins, PluginsCommandListsTheExamples) {
  CliResult r = runCli({"plugins"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("example_convbn 1.0.0 (plugin ABI 6)"));
  EXPECT_THAT(r.out, HasSubstr("conv_bn (selector, seeds Conv)"));
  EXPECT_THAT(r.out, HasSubstr("example.max_splat.MaxSplat"));
  EXPECT_THAT(r.out, HasSubstr("fuse_max_splat (post)"));
  // Layouts are listed for the plugin that has one, and only there.
  EXPECT_THAT(r.out, HasSubstr("  layouts:    nc4hw\n"
                               "  copies:     plain -> nc4hw (f32), nc4hw -> plain (f32)\n"));
  size_t convbn = r.out.find("example_convbn 1.0.0");
  ASSERT_NE(convbn, std::string::npos);
  std::string convbnEntry = r.out.substr(convbn, r.out.find("\n\n", convbn) - convbn);
  EXPECT_EQ(convbnEntry.find("layouts:"), std::string::npos) << convbnEntry;
  CliResult help = runCli({"plugins", "--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_THAT(help.out, HasSubstr("--path"));
}

/// The node counts of a `partition --json` report's regions of `property`.
std::vector<size_t> regionSizes(const CliResult& r, const std::string& property) {
  std::vector<size_t> sizes;
  nlohmann::json report = nlohmann::json::parse(r.out);
  for (const auto& region : report["regions"])
    if (region["property"] == property) sizes.push_back(region["nodes"].size());
  return sizes;
}

/// Plugin options (ABI 5): `subgraph plugins` lists each with its values
/// and default; an undeclared name or value is a usage error with a "did
/// you mean", in run and partition alike, before the model is read; and an
/// option reaches selection, not only kernels: onednn.fusion=none leaves
/// every Conv region a bare Conv, which still runs right.
TEST(CliPlugins, PluginOptionsAreListedCheckedAndReachSelection) {
  CliResult list = runCli({"plugins"});
  ASSERT_EQ(list.exitCode, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("    emudev.delay_us=any value (default 0): "));
  EXPECT_THAT(list.out, HasSubstr("  options:    none\n"));  // example_convbn declares none
  CliResult json = runCli({"plugins", "--json"});
  EXPECT_THAT(json.out, HasSubstr("\"name\": \"delay_us\""));

  EXPECT_TRUE(failsWithOneLine(
      runCli({"run", kBlock, "--backend", "emudev", "--random-inputs", "1", "--plugin-option",
              "emudev.dely_us=1"}),
      2,
      "plugin option 'emudev.dely_us': backend 'emudev' has no option 'dely_us' (did you mean "
      "delay_us?); its options: device_count, delay_us"));
  EXPECT_TRUE(failsWithOneLine(runCli({"partition", kBlock, "--backend", "example_convbn",
                                       "--plugin-option", "example_convbn.fuse=1"}),
                               2,
                               "backend 'example_convbn' has no option 'fuse'; its options: none"));
  EXPECT_TRUE(failsWithOneLine(runCli({"partition", "no-such-model.onnx", "--backend", "emudev",
                                       "--plugin-option", "emudv.delay_us=1"}),
                               2, "which is not chosen (emudev) (did you mean emudev?)"));
}

/// A mistyped backend name gets a "did you mean" among the built-in
/// backends and the plugins on the search path; an unrelated one none.
TEST(CliPlugins, AMistypedBackendNameGetsADidYouMean) {
  EXPECT_TRUE(failsWithOneLine(runCli({"partition", kBlock, "--backend", "onedn"}), 2,
                               "unknown backend 'onedn' (did you mean onednn?)"));
  CliResult far = runCli({"partition", kBlock, "--backend", "tensorrt"});
  EXPECT_THAT(far.err, HasSubstr("unknown backend 'tensorrt': not built in"));
}

TEST(CliPlugins, OnednnFusionOptionReachesSelection) {
  CliResult list = runCli({"plugins"});
  EXPECT_THAT(list.out, HasSubstr("    onednn.fusion=all|act|bn|none (default all): "));
  EXPECT_TRUE(failsWithOneLine(runCli({"partition", kBlock, "--backend", "onednn",
                                       "--plugin-option", "onednn.precision=int8"}),
                               2,
                               "'int8' is not a value of onednn.precision; it takes fp32, bf16"));
  CliResult fused = runCli({"partition", kBlock, "--backend", "onednn", "--json"});
  ASSERT_EQ(fused.exitCode, 0) << fused.err;
  std::vector<size_t> all = regionSizes(fused, "conv");
  ASSERT_FALSE(all.empty());
  EXPECT_GT(*std::max_element(all.begin(), all.end()), 1u);
  CliResult bare = runCli({"partition", kBlock, "--backend", "onednn", "--json", "--plugin-option",
                           "onednn.fusion=none"});
  ASSERT_EQ(bare.exitCode, 0) << bare.err;
  std::vector<size_t> conv = regionSizes(bare, "conv");
  EXPECT_EQ(conv.size(), 4u);  // the block's four Convs
  for (size_t n : conv) EXPECT_EQ(n, 1u);
  CliResult run =
      runCli({"run", kBlock, "--backend", "onednn", "--random-inputs", "1", "--check",
              "--plugin-option", "onednn.fusion=none", "--plugin-option", "onednn.winograd=off"});
  EXPECT_EQ(run.exitCode, 0) << run.err;
}

/// example_convbn by name: the bottleneck block's four Conv+BN pairs are
/// fused, and running it partitioned matches the reference.
TEST(CliPlugins, ExampleConvBnPartitionsAndRunsByName) {
  ScopedEnv env("SUBGRAPH_BACKEND", "example_convbn");
  CliResult r = runCli({"partition", kBlock, "--report", "-", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"backend\": \"example_convbn\""));
  CliResult run = runCli({"run", kBlock, "--random-inputs", "1", "--check"});
  EXPECT_EQ(run.exitCode, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("ok"));
}

/// SUBGRAPH_BACKEND and --backend take a plugin file relative to the
/// working directory (a '/' or a ".so" makes an item a file), like
/// check-plugin; the file loaded is the one here, not the search path's.
TEST(CliPlugins, BackendListTakesPluginFilesRelativeToTheWorkingDirectory) {
  PluginCopyHere copy;
  for (std::string item : {"./example_convbn.so", "example_convbn.so", "sub/example_convbn.so"}) {
    ScopedEnv env("SUBGRAPH_BACKEND", item.c_str());
    CliResult r = runCli({"partition", kBlock, "--report", "-", "-q"});
    ASSERT_EQ(r.exitCode, 0) << item << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("\"backend\": \"example_convbn\"")) << item;
    EXPECT_EQ(r.err, "") << item;
  }
  CliResult option =
      runCli({"partition", kBlock, "--backend", "example_convbn.so", "--report", "-", "-q"});
  EXPECT_EQ(option.exitCode, 0) << option.err;
  // A missing relative file names its absolute path; it is never searched
  // for as "missing.so.so".
  ScopedEnv env("SUBGRAPH_BACKEND", "missing.so");
  CliResult missing = runCli({"partition", kBlock});
  EXPECT_TRUE(failsWithOneLine(missing, 2, "plugin " + copy.here() + "/missing.so: no such file"));
  EXPECT_THAT(missing.err, ::testing::Not(HasSubstr("missing.so.so")));
}

/// check-plugin follows the same rule: `x.so` is the file x.so here.
TEST(CliPlugins, CheckPluginTakesABareSoFileNameAsAFile) {
  PluginCopyHere copy;
  CliResult r = runCli({"check-plugin", "example_convbn.so", "--cases", "5"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("path:       " + copy.here() + "/example_convbn.so"));
  CliResult missing = runCli({"check-plugin", "missing.so"});
  EXPECT_TRUE(failsWithOneLine(missing, 2, "plugin file 'missing.so' does not exist"));
  EXPECT_THAT(missing.err, ::testing::Not(HasSubstr("missing.so.so")));
}

/// A relative SUBGRAPH_PLUGIN_PATH entry is resolved against the working
/// directory; one that is not a directory is dropped with one warning line
/// (without -v), never silently, and the good entries still count.
TEST(CliPlugins, RelativePluginPathIsResolvedAndDroppedEntriesAreWarned) {
  PluginCopyHere copy;
  ScopedEnv path("SUBGRAPH_PLUGIN_PATH", "sub:nowhere");
  CliResult r = runCli({"plugins"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("search path: " + copy.here() + "/sub:"));
  EXPECT_THAT(r.out, HasSubstr("path:       " + copy.here() + "/sub/example_convbn.so"));
  EXPECT_EQ(r.err, "subgraph: warning: SUBGRAPH_PLUGIN_PATH entry 'nowhere' (" + copy.here() +
                       "/nowhere): no such directory; ignored\n");
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr(copy.here() + "/nowhere")));

  // The same warning where a backend is resolved by name, once per run,
  // and the name finds the plugin through the relative entry.
  CliResult check = runCli({"check-plugin", "example_convbn", "--cases", "20"});
  ASSERT_EQ(check.exitCode, 0) << check.err;
  EXPECT_EQ(std::count(check.err.begin(), check.err.end(), '\n'), 1) << check.err;
  EXPECT_THAT(check.err, HasSubstr("warning: SUBGRAPH_PLUGIN_PATH entry 'nowhere'"));
  EXPECT_THAT(check.out, HasSubstr("path:       " + copy.here() + "/sub/example_convbn.so"));
  ScopedEnv backend("SUBGRAPH_BACKEND", "example_convbn");
  CliResult part = runCli({"partition", kBlock, "--report", "-"});
  ASSERT_EQ(part.exitCode, 0) << part.err;
  EXPECT_EQ(std::count(part.err.begin(), part.err.end(), '\n'), 1) << part.err;
  EXPECT_THAT(part.err, HasSubstr("warning: SUBGRAPH_PLUGIN_PATH entry 'nowhere'"));
}

/// `subgraph plugins` flags a file whose name is not its backend's name
/// (no name selects it), and only that one.
TEST(CliPlugins, PluginsCommandFlagsAFileNamedUnlikeItsBackend) {
  PluginCopyHere copy("renamed.so");
  CliResult r = runCli({"plugins", "--path", ".", "--path", "sub"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  path:       " + copy.here() +
                               "/renamed.so\n"
                               "  warning:    file name renamed.so differs from the backend name "
                               "'example_convbn' it declares, so no name selects it (select it "
                               "by path, or rename it example_convbn.so)\n"));
  size_t good = r.out.find("  path:       " + copy.here() + "/sub/example_convbn.so\n");
  ASSERT_NE(good, std::string::npos) << r.out;
  EXPECT_THAT(r.out.substr(good, r.out.find("\n\n", good) - good),
              ::testing::Not(HasSubstr("warning:")));
  CliResult json = runCli({"plugins", "--path", ".", "--json"});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"file_name_matches\": false"));
  EXPECT_THAT(json.out, ::testing::Not(HasSubstr("\"file_name_matches\": true")));
}

}  // namespace
}  // namespace subgraph::cli::testing
