//===- tests/cli/cli_runner.h - Running the `subgraph` binary in tests ----===//
//
// The CLI tests are black-box: they run the real `subgraph` executable (its
// path is compiled in as SUBGRAPH_CLI_PATH) and assert on its exit status,
// stdout and stderr, exactly as a user or a script would see them. Files a
// test needs are written into a fresh temporary directory per test.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace subgraph::cli::testing {

/// What one run of the binary produced.
struct CliResult {
  int exitCode = -1;      ///< Exit status; 128+N when killed by signal N.
  bool timedOut = false;  ///< Killed after the time limit: a hang.
  std::string out;        ///< Everything written to stdout.
  std::string err;        ///< Everything written to stderr.
};

/// Runs `subgraph` with `args`, feeding `input` on stdin, and kills it after
/// `timeoutSeconds` (sanitizer builds are slow, hence the generous default).
CliResult runCli(const std::vector<std::string>& args, std::string_view input = {},
                 int timeoutSeconds = 120);

/// A directory under the system temp dir, removed with its contents when
/// the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// Writes `contents` to `name` inside the directory; returns its path.
  std::string write(const std::string& name, std::string_view contents) const;

 private:
  std::filesystem::path path_;
};

/// Succeeds when `result` is a clean failure: exit status `exitCode`, and
/// stderr exactly one line "subgraph: error: ..." containing `needle`.
/// Anything else (a crash, a hang, a second line, a stack trace) fails
/// with the whole stderr in the message.
::testing::AssertionResult failsWithOneLine(const CliResult& result, int exitCode,
                                            std::string_view needle);

/// Reads a whole file; empty if it cannot be read.
std::string readFile(const std::string& path);

/// The lines of `text`, without their '\n'.
std::vector<std::string> splitLines(std::string_view text);

/// Path of a file in the source tree, e.g. "tests/data/graphs/x.sg".
std::string sourcePath(const std::string& relative);

}  // namespace subgraph::cli::testing
