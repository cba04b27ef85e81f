//===- testing/testkit/check_run.h - One check-plugin run -----*- C++ -*-===//
//
// The whole conformance run that `subgraph check-plugin` and Python's
// subgraph.check_plugin make, in one place: open the backend, run the
// cases (each in a worker process running the `subgraph` program, so a
// plugin that crashes or hangs fails its case), and write the report as it
// goes. The front ends only parse their arguments and show the result.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "testkit/plugin_check.h"

namespace subgraph::testkit {

/// How a run is made.
struct CheckRunOptions {
  /// NAME|PATH: a plugin name on the search path, a plugin file (an
  /// absolute path), or an in-process backend.
  std::string target;
  /// Directories searched for a plugin by name; empty: the default path.
  std::vector<std::filesystem::path> searchPath;
  /// The cases (count, seed, ops, numerics, tolerance, failures shown).
  CheckOptions check;
  /// The `subgraph` program that checks each case in a child process; ""
  /// checks them in this process (a plugin crash then ends it).
  std::string workerProgram;
  /// A case that does not answer in this time fails as hung.
  std::chrono::seconds caseTimeout{60};
};

/// What a run found.
struct CheckRun {
  CheckSummary summary;
  /// "" when the run proves the backend; else why it does not: cases
  /// failed, or none formed a region, or its kernels ran in none.
  std::string problem;
};

/// Runs the check, writing the report (what the backend registers, the
/// ops, each shrunk failure with the line that replays it, the summary)
/// through `out` as it goes. Errors (a backend that cannot be opened) are
/// one line.
StatusOr<CheckRun> runCheck(const CheckRunOptions& options,
                            const std::function<void(const std::string&)>& out);

}  // namespace subgraph::testkit
