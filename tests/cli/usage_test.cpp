//===- tests/cli/usage_test.cpp - Command-line handling of `subgraph` -----===//
//
// How the program treats its command line: help, version, global flags, and
// the one-line usage errors (exit 2) for unknown commands and options.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

/// Without a command the program shows its help, listing the commands,
/// and exits with the usage status.
TEST(CliUsage, NoArgumentsPrintsHelpAndExitsWithUsageStatus) {
  CliResult r = runCli({});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.out, HasSubstr("Usage:"));
  EXPECT_THAT(r.out, HasSubstr("inspect"));
  EXPECT_THAT(r.out, HasSubstr("dot"));
}

/// --version prints "subgraph <project version>" and succeeds.
TEST(CliUsage, VersionPrintsProjectVersion) {
  CliResult r = runCli({"--version"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("subgraph " SUBGRAPH_VERSION " (heap: "));
  EXPECT_THAT(r.err, IsEmpty());
}

/// --version names the allocator that really serves malloc: mimalloc in a
/// build that links it (tools/allocator), and never mimalloc in one that
/// does not (a sanitizer build, or SUBGRAPH_MIMALLOC=OFF).
TEST(CliUsage, VersionNamesTheHeapAllocator) {
  CliResult r = runCli({"--version"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
#if SUBGRAPH_CLI_TEST_HAVE_MIMALLOC
  EXPECT_THAT(r.out,
              MatchesRegex(".*\\(heap: mimalloc [0-9]+\\.[0-9]+\\.[0-9]+, large OS pages\\)\n"));
#else
  EXPECT_THAT(r.out, EndsWith("(heap: system malloc)\n"));
#endif
}

/// Large OS pages are mimalloc's default here, not a forced setting: the
/// environment can still turn them off, and --version then must not claim
/// them (nor any build without mimalloc).
TEST(CliUsage, LargePagesFollowTheEnvironment) {
  setenv("MIMALLOC_LARGE_OS_PAGES", "0", 1);
  CliResult r = runCli({"--version"});
  unsetenv("MIMALLOC_LARGE_OS_PAGES");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("large OS pages")));
#if SUBGRAPH_CLI_TEST_HAVE_MIMALLOC
  EXPECT_THAT(r.out, MatchesRegex(".*\\(heap: mimalloc [0-9]+\\.[0-9]+\\.[0-9]+\\)\n"));
#endif
}

/// --help lists the commands in name order, so the listing is stable
/// whatever order the linker ran the registrations in.
TEST(CliUsage, HelpListsCommandsSortedByName) {
  CliResult r = runCli({"--help"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  size_t dot = r.out.find("\n  dot");
  size_t inspect = r.out.find("\n  inspect");
  ASSERT_NE(dot, std::string::npos) << r.out;
  ASSERT_NE(inspect, std::string::npos) << r.out;
  EXPECT_LT(dot, inspect);
  EXPECT_THAT(r.out, HasSubstr("--verbose"));
  EXPECT_THAT(r.out, HasSubstr("--quiet"));
}

/// Every command has --help describing its own options.
TEST(CliUsage, CommandHelpDescribesItsOptions) {
  CliResult inspect = runCli({"inspect", "--help"});
  EXPECT_EQ(inspect.exitCode, 0) << inspect.err;
  EXPECT_THAT(inspect.out, HasSubstr("--json"));
  EXPECT_THAT(inspect.out, HasSubstr("--no-verify"));
  EXPECT_THAT(inspect.out, HasSubstr("--shape"));
  CliResult dot = runCli({"dot", "--help"});
  EXPECT_EQ(dot.exitCode, 0) << dot.err;
  EXPECT_THAT(dot.out, HasSubstr("--output"));
  EXPECT_THAT(dot.out, HasSubstr("--no-constants"));
}

/// A misspelt command names itself and the commands that exist.
TEST(CliUsage, UnknownCommandIsOneUsageErrorLine) {
  CliResult r = runCli({"frobnicate", "model.sg"});
  EXPECT_TRUE(failsWithOneLine(r, 2, "unknown command 'frobnicate'"));
  EXPECT_THAT(r.err, HasSubstr("dot, "));
  EXPECT_THAT(r.err, HasSubstr("inspect"));
  EXPECT_THAT(r.out, IsEmpty());
}

/// An unknown option is a usage error pointing at the command's --help.
TEST(CliUsage, UnknownOptionIsOneUsageErrorLine) {
  CliResult r = runCli({"inspect", "model.sg", "--frobnicate"});
  EXPECT_TRUE(failsWithOneLine(r, 2, "--frobnicate"));
  EXPECT_THAT(r.err, HasSubstr("subgraph inspect --help"));
}

/// A command without its required FILE is a usage error.
TEST(CliUsage, MissingFileArgumentIsUsageError) {
  EXPECT_TRUE(failsWithOneLine(runCli({"inspect"}), 2, "FILE"));
  EXPECT_TRUE(failsWithOneLine(runCli({"dot"}), 2, "FILE"));
}

/// A global flag alone is not a command.
TEST(CliUsage, GlobalFlagWithoutCommandIsUsageError) {
  EXPECT_TRUE(failsWithOneLine(runCli({"-v"}), 2, "subcommand"));
}

/// -q and -v contradict each other.
TEST(CliUsage, QuietAndVerboseTogetherIsUsageError) {
  EXPECT_TRUE(failsWithOneLine(runCli({"-q", "-v", "inspect", "x.sg"}), 2, "quiet"));
}

/// -v turns on debug progress lines on stderr, before or after the command;
/// stdout stays the report alone.
TEST(CliUsage, VerboseLogsProgressToStderrOnly) {
  TempDir dir;
  std::string file = dir.write("g.sg", "graph @g(%x: f32[2]) {\n  return %x\n}\n");
  for (auto args : {std::vector<std::string>{"-v", "inspect", file},
                    std::vector<std::string>{"inspect", file, "--verbose"}}) {
    CliResult r = runCli(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("subgraph: debug: loading " + file));
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("debug:")));
  }
  CliResult quiet = runCli({"inspect", file});
  EXPECT_THAT(quiet.err, IsEmpty());
}

}  // namespace
}  // namespace subgraph::cli::testing
