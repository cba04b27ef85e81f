//===- testing/testkit/case_worker.h - check-plugin cases in a child process -*- C++ -*-===//
//
// `subgraph check-plugin` checks each case in a worker process, so that a
// plugin that crashes or hangs on one case fails that case, with its seed
// and its shrunk graph, instead of ending the run. The worker is the
// `subgraph` program (`check-plugin TARGET --worker`): the program itself
// for `subgraph check-plugin`, the package's program for Python's
// subgraph.check_plugin. It is started once and kept while it answers; one
// that dies is started again for the next case.
//
// Protocol, over a socket pair (the worker's stdin and stdout): a request
// is "<seed> <bytes>\n" then the case's graph in the text format; the
// answer is "<formed> <ran> <bytes>\n" then the failure ("" for a pass).
// The worker's stderr goes to a pipe the parent drains while it waits,
// keeping a bounded tail; when the worker dies, the last line there (the
// plugin crash handler's, crash_handler.h) becomes the case's failure.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "testkit/plugin_check.h"

namespace subgraph::testkit {

/// The parent's end: one worker at a time.
class CaseWorker {
 public:
  /// Workers run `program` (the `subgraph` program's path) with `args`
  /// (after argv[0]); a case that does not answer within `timeout` fails
  /// and its worker is killed.
  CaseWorker(std::string program, std::vector<std::string> args, std::chrono::seconds timeout);
  ~CaseWorker();
  CaseWorker(const CaseWorker&) = delete;
  CaseWorker& operator=(const CaseWorker&) = delete;

  /// checkGraph's answer for `graph` from a worker, or one line saying how
  /// the worker died on it ("crashed: ...", "hung: ...").
  std::string check(const Graph& graph, uint64_t inputSeed, CaseStats* stats);

 private:
  void start();
  /// Reaps the worker (killing it first when `kill`); returns how it ended.
  std::string stop(bool kill);
  std::string lastErrorLine();

  std::string program_;
  std::vector<std::string> args_;
  std::chrono::seconds timeout_;
  pid_t pid_ = -1;
  int socket_ = -1;        // the parent's end
  int errors_ = -1;        // the read end of the worker's stderr (non-blocking)
  std::string errorTail_;  // the last bytes read from it
};

/// The worker's side: answers requests on stdin/stdout until end of input.
/// Returns the process's exit status.
int serveCases(const BackendUnderTest& backend, const CheckOptions& options);

}  // namespace subgraph::testkit
