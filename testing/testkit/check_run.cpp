//===- testing/testkit/check_run.cpp - One check-plugin run ---------------===//
//
// See check_run.h. The report's lines are the program's: a test or a
// script reads the same text whether the program or Python made the run.
//
//===----------------------------------------------------------------------===//
#include "testkit/check_run.h"

#include <fmt/format.h>

#include <memory>

#include "subgraph/plugins/crash_handler.h"
#include "testkit/case_worker.h"

namespace subgraph::testkit {
namespace {

std::string joinedWith(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : separator) + s;
  return out;
}

std::string header(const BackendUnderTest& backend) {
  std::string text = "checking " + backend.name() + "\n";
  for (const std::string& line : backend.describe()) text += "  " + line + "\n";
  return text;
}

std::string settings(const CheckSummary& summary, const CheckOptions& check) {
  std::string numerics =
      summary.numerics
          ? fmt::format("each case against the reference backend, tolerance {:g}", check.tolerance)
      : check.numerics ? std::string(
                             "not compared (no kernels: fused regions run their bodies on "
                             "the reference backend)")
                       : std::string("not compared (--no-numerics)");
  return fmt::format("  selectors fuse: {}{}\n", joinedOrNone(summary.touchedOps),
                     check.ops.empty() ? " (probed)" : " (--ops)") +
         fmt::format("  mixed with:     {}\n", joinedOrNone(summary.otherOps)) +
         fmt::format("  numerics:       {}\n", numerics) +
         fmt::format("  cases:          {}, seeds {}..{}\n", check.cases, check.seed,
                     check.seed + check.cases - (check.cases ? 1 : 0));
}

}  // namespace

StatusOr<CheckRun> runCheck(const CheckRunOptions& options,
                            const std::function<void(const std::string&)>& out) {
  StatusOr<BackendUnderTest> opened = BackendUnderTest::open(options.target, options.searchPath);
  if (!opened.isOk()) return opened.status();
  const BackendUnderTest& backend = *opened;
  CheckOptions check = options.check;
  // The line that replays a case names the plugin as it was loaded (a file
  // by its absolute path, so the line works from any folder) and the ops.
  std::string replay = options.target;
  if (!check.ops.empty()) replay += " --ops " + joinedWith(check.ops, ",");
  if (!check.numerics) replay += " --no-numerics";
  // A crash inside the plugin in this process ends it (crash_handler.h);
  // its line then says which case and how to replay it.
  check.beforeCase = [replay](uint64_t seed) {
    plugins::setPluginCrashNote(fmt::format(
        "check-plugin case seed {}; replay: subgraph check-plugin {} --seed {} --cases 1", seed,
        replay, seed));
  };
  std::unique_ptr<CaseWorker> worker;
  if (!options.workerProgram.empty()) {
    // The worker opens the backend itself: by the file it was loaded from,
    // so that it checks the same plugin whatever its search path.
    std::string target = backend.plugin() ? backend.plugin()->info().path : options.target;
    std::vector<std::string> args = {"check-plugin", target, "--worker", "--tolerance",
                                     fmt::format("{:.17g}", check.tolerance)};
    if (!check.numerics) args.push_back("--no-numerics");
    worker = std::make_unique<CaseWorker>(options.workerProgram, args, options.caseTimeout);
    check.runCase = [&worker](const Graph& graph, uint64_t seed, CaseStats* stats) {
      return worker->check(graph, seed, stats);
    };
  }
  out(header(backend));
  auto start = std::chrono::steady_clock::now();
  CheckRun run;
  run.summary = runConformance(backend, check);
  const CheckSummary& summary = run.summary;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string text = settings(summary, check);
  for (const CaseFailure& f : summary.failures) text += "\n" + formatFailure(f, replay);
  if (summary.failed > summary.failures.size())
    text += fmt::format("\n({} more failing cases not shown; --show N)\n",
                        summary.failed - summary.failures.size());
  text += fmt::format(
      "\n{} passed, {} failed ({:.2f} s); {} of {} cases formed regions, {} ran the plugin's "
      "kernels\n",
      summary.passed, summary.failed, seconds, summary.casesWithRegions, check.cases,
      summary.casesWithKernels);
  out(text);
  // Passing cases prove nothing about a plugin whose selectors fused none
  // of them, or whose kernels declined every region.
  run.problem = summary.failed ? fmt::format("{} of {} cases failed", summary.failed, check.cases)
                               : unexercised(summary, backend.name());
  return run;
}

}  // namespace subgraph::testkit
