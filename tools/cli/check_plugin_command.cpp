//===- tools/cli/check_plugin_command.cpp - `subgraph check-plugin` -------===//
//
// A conformance run for one backend, in-tree or not:
//
//   subgraph check-plugin NAME|PATH [--cases N] [--seed S] [--ops LIST]
//                                   [--tolerance T] [--show N]
//
// It loads the plugin (a .so file, absolute or relative to the working
// directory: anything with a '/' or ending in .so; else a plugin name on the
// search path such as onednn, or an in-process backend), prints
// what it registers, finds the ops its selectors fuse by partitioning small
// probe graphs (or takes --ops), then partitions N random graphs of those
// ops mixed with ops it does not fuse and checks every invariant; backends
// with kernels also run each case against the reference backend. Cases run
// in a worker process (case_worker.h), so a plugin that crashes or hangs
// on one fails that case; --in-process runs them here. The run itself is
// the test kit's (testing/testkit/check_run.h), which Python's
// subgraph.check_plugin calls too. It prints
// "N passed, N failed"; each failure (the first --show) is shrunk to the
// smallest graph that still fails and printed in the text format with the
// seed that replays it. Exit status 1 when a case fails. The engine is
// testing/testkit/plugin_check.h.
//
//===----------------------------------------------------------------------===//
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli_util.h"
#include "command.h"
#include "subgraph/plugins/crash_handler.h"
#include "subgraph/plugins/plugin_loader.h"

#ifdef SUBGRAPH_CLI_HAVE_TESTKIT
#include "testkit/case_worker.h"
#include "testkit/check_run.h"
#include "testkit/plugin_check.h"
#endif

namespace subgraph::cli {
namespace {

struct CheckPluginOptions {
  std::string target;
  size_t cases = 100;
  uint64_t seed = 1;
  std::string ops;
  double tolerance = 1e-3;
  bool noNumerics = false;  // selection only: the kernels are not run
  size_t show = 3;
  bool inProcess = false;
  int caseTimeout = 60;
  bool worker = false;  // this process answers a parent's cases
};

#ifdef SUBGRAPH_CLI_HAVE_TESTKIT
void runCheckPlugin(const CheckPluginOptions& options) {
  std::string target = options.target;
  // The rule of SUBGRAPH_BACKEND (plugin_loader.h): a '/' or a ".so"
  // names a file, absolute or relative to the working directory; anything
  // else is a backend name looked up on the search path.
  if (plugins::namesPluginFile(target)) {
    std::filesystem::path file = plugins::pluginFilePath(target);
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
      throw UsageError("plugin file '" + target + "' does not exist");
    target = file.string();
  } else {
    warnAboutDroppedPluginDirs();
  }
  testkit::CheckOptions check;
  check.cases = options.cases;
  check.seed = options.seed;
  check.tolerance = options.tolerance;
  check.numerics = !options.noNumerics;
  check.maxFailuresShown = options.show;
  const std::vector<std::string> catalog = testkit::catalogOps();
  for (const std::string& op : splitCommas(options.ops)) {
    if (std::find(catalog.begin(), catalog.end(), op) == catalog.end())
      throw UsageError("--ops: '" + op + "' is not an op random graphs can use (" +
                       testkit::joinedOrNone(catalog) + ")");
    check.ops.push_back(op);
  }
  if (options.worker) {
    StatusOr<testkit::BackendUnderTest> opened = testkit::BackendUnderTest::open(target);
    if (!opened.isOk()) throwSelectionError(target, opened.status());
    requestedExitCode() = testkit::serveCases(*opened, check);
    return;
  }
  // Each case in a worker process (this program again): a crash or a hang
  // fails the case.
  testkit::CheckRunOptions run;
  run.target = target;
  run.check = std::move(check);
  run.workerProgram = options.inProcess ? "" : "/proc/self/exe";
  run.caseTimeout = std::chrono::seconds(options.caseTimeout);
  StatusOr<testkit::CheckRun> done = testkit::runCheck(run, [](const std::string& text) {
    std::cout << text;
    std::cout.flush();
  });
  if (!done.isOk()) throwSelectionError(target, done.status());
  if (done->summary.failed) {
    requestedExitCode() = 1;
    return;
  }
  // Passing cases that proved nothing: say so, as a failure.
  if (!done->problem.empty()) throw Error(Status::invalid("check-plugin: " + done->problem));
}
#endif

const CommandRegistration kCheckPlugin("check-plugin", [](CLI::App& app) {
  auto options = std::make_shared<CheckPluginOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check-plugin",
      "Conformance run of a backend plugin: partition random graphs, check every invariant and "
      "the numerics, print failures as minimal graphs with their seeds");
  cmd->add_option("PLUGIN", options->target,
                  "Plugin name (on the search path), path to its .so, or a built-in backend")
      ->required()
      ->type_name("NAME|PATH");
  // Bounded so that a typo cannot start a practically endless run.
  cmd->add_option("--cases", options->cases, "Random graphs to check (default 100, at most 10^6)")
      ->type_name("N")
      ->check(CLI::Range(size_t{1}, size_t{1'000'000}));
  cmd->add_option("--seed", options->seed, "Seed of the first case; case i uses seed + i")
      ->type_name("S");
  cmd->add_option("--ops", options->ops,
                  "Comma-separated ops to build graphs from, instead of the probed ones")
      ->type_name("LIST");
  cmd->add_option("--tolerance", options->tolerance,
                  "Absolute plus relative tolerance of the numerics (default 1e-3)")
      ->type_name("T")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_flag("--no-numerics", options->noNumerics,
                "Check partitioning only: do not run the plugin's kernels against the reference "
                "(a run that forms regions then passes without its kernels)");
  cmd->add_option("--show", options->show, "Failing cases to shrink and print (default 3)")
      ->type_name("N")
      ->check(CLI::Range(size_t{0}, size_t{1000}));
  cmd->add_flag("--in-process", options->inProcess,
                "Check cases in this process instead of a worker process (for a debugger); a "
                "plugin crash then ends the run, named with its case");
  cmd->add_option("--case-timeout", options->caseTimeout,
                  "Seconds a case may run in the worker before it counts as hung (default 60)")
      ->type_name("S")
      ->check(CLI::Range(1, 86400));
  // The worker side of the parent's cases (case_worker.h); not for users.
  cmd->add_flag("--worker", options->worker)->group("");
  cmd->callback([options] {
#ifdef SUBGRAPH_CLI_HAVE_TESTKIT
    runCheckPlugin(*options);
#else
    (void)options;
    throw Error(StatusCode::kUnsupported, "this subgraph was built without plugin support");
#endif
  });
});

}  // namespace
}  // namespace subgraph::cli
