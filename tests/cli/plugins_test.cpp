//===- tests/cli/plugins_test.cpp - Plugins through the `subgraph` program -===//
//
// Backend plugins as a user meets them: SUBGRAPH_BACKEND naming a missing
// .so fails with one clear line, `--backend` overrides the variable,
// `subgraph plugins` lists what the build's plugin directory holds, and an
// example plugin found by name partitions and runs a model that matches the
// reference (--check). The example plugins are built into
// <build>/lib/subgraph/plugins, which the program searches by itself.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

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

/// A plugin path that does not exist: exit 1, one line naming the path
/// and the reason, and no fallback to running without it.
TEST(CliPlugins, MissingPluginFromEnvironmentIsOneClearLine) {
  ScopedEnv env("SUBGRAPH_BACKEND", "/nonexistent.so");
  CliResult r = runCli({"partition", kBlock});
  EXPECT_TRUE(failsWithOneLine(r, 1, "plugin /nonexistent.so: no such file"));
  EXPECT_EQ(r.out, "");
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
  EXPECT_THAT(r.out, HasSubstr("example_convbn 1.0.0 (plugin ABI 2)"));
  EXPECT_THAT(r.out, HasSubstr("conv_bn (selector)"));
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

}  // namespace
}  // namespace subgraph::cli::testing
