//===- subgraph/api/inference_session.h - Load, partition, run -*- C++ -*-===//
//
// The library front end that the `subgraph` program and the Python package
// both call (ONNX Runtime's InferenceSession, MXNet's optimize_for): a
// model file in, a session that runs it on the chosen backends out. It does
// in one place what `run` used to do inline: read the model with the
// hardened importers, simplify it, resolve the backend list (plugins by
// name or file, in-process backends), partition with fallback, hand the
// plugins their options through the ABI's kernel context, compile, run, and
// compare with the reference backend.
//
//   api::InferenceOptions o;
//   o.backends = "onednn";
//   o.precision = "bf16";
//   auto s = api::InferenceSession::open("resnet50.onnx", o);
//   auto out = (*s)->run({{"input", tensor}});
//
// Errors are Status values with one-line messages; nothing here reads an
// environment variable the caller did not ask for, or sets one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/api/model.h"
#include "subgraph/api/output_check.h"
#include "subgraph/ir/graph.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/runtime/session.h"
#include "subgraph/support/status.h"

namespace subgraph::api {

/// The memory limit every front end (the program, the Python package) sets
/// when the user sets none: three quarters of the machine's memory
/// (MemTotal), so that a 100-byte model asking for hundreds of GiB fails
/// with a line naming the limit instead of being killed, while any model
/// that fits the machine runs. 0 (no limit) where MemTotal cannot be read.
uint64_t defaultMemoryLimitBytes();

/// The precisions backends may offer; "" is each backend's default.
/// kInvalidArgument for anything else.
Status checkPrecision(const std::string& precision);

/// Plugin options "<plugin>.<name>=<value>" as a map by "<plugin>.<name>";
/// kInvalidArgument for an entry not of that form or for a backend not in
/// `backends`.
StatusOr<std::map<std::string, std::string>> parsePluginOptions(
    const std::vector<std::string>& entries, const std::vector<std::string>& backends);

/// What a session is built with.
struct InferenceOptions {
  /// "a,b" in priority order: backend names or plugin files; "" or "NONE"
  /// runs everything on the reference backend.
  std::string backends;
  /// Skip a plugin that cannot be used, or fails while partitioning, with a
  /// warning instead of failing.
  bool allowFallback = false;
  /// Worker threads (0: one per core), per running request.
  int threads = 0;
  /// Requests that run at once; more wait (0: no bound). A server with C
  /// cores and requests of `threads` threads sets C / threads.
  int maxConcurrentRuns = 0;
  /// Dynamic batching of concurrent requests (runtime::BatchingOptions;
  /// off unless maxBatch > 1).
  runtime::BatchingOptions batching;
  /// "fp32", "bf16", "fp16", "tf32", or "" for each backend's default.
  std::string precision;
  /// Options for the chosen plugins (selection and kernels), by
  /// "<plugin>.<name>"; checked against what each plugin declares.
  std::map<std::string, std::string> pluginOptions;
  /// The pass pipeline run before partitioning ("default", "none", or a
  /// list; see docs/passes.md). Not run without backends.
  std::string passes = "default";
  /// Fail compile or run when a memory plan needs more; 0: no limit. The
  /// front ends set defaultMemoryLimitBytes() unless the user sets one.
  uint64_t memoryLimitBytes = 0;
  /// Limits on Loops and on kernels whose work an attribute or the data
  /// sets (runtime::WorkLimits; its defaults unless changed).
  runtime::WorkLimits work;
  /// Directories searched for plugins by name; empty: the default path.
  std::vector<std::filesystem::path> pluginSearchPath;
  /// A selection already resolved (the CLI resolves its own to report
  /// list mistakes as usage errors); when set, `backends` is ignored.
  std::optional<plugins::BackendSelection> selection;
};

/// The backends `options` chooses: its `selection` (taken) or its
/// `backends` resolved, given the session's threads, precision and plugin
/// options (kUsage for one a plugin does not declare).
StatusOr<plugins::BackendSelection> chooseBackends(InferenceOptions& options);

/// A model loaded, simplified, partitioned and compiled for its backends.
class InferenceSession {
 public:
  /// Builds a session for `model` (taken). Fails with the first problem:
  /// an option, the backend list, a pass, the partition, the compile.
  static StatusOr<std::unique_ptr<InferenceSession>> create(std::unique_ptr<Graph> model,
                                                            InferenceOptions options);
  /// loadModel(path) then create().
  static StatusOr<std::unique_ptr<InferenceSession>> open(const std::string& path,
                                                          InferenceOptions options,
                                                          const ModelOptions& model = {});
  ~InferenceSession();
  InferenceSession(const InferenceSession&) = delete;
  InferenceSession& operator=(const InferenceSession&) = delete;

  /// Runs one request; thread-safe.
  StatusOr<runtime::RunResult> run(const std::vector<runtime::NamedTensor>& inputs,
                                   const runtime::RunOptions& options = {}) const;
  /// The same with inputs read in place, without a copy (numpy arrays).
  StatusOr<runtime::RunResult> runInPlace(const std::vector<runtime::InputView>& inputs,
                                          const runtime::RunOptions& options = {}) const;

  /// The backends in priority order (after fallback dropped any).
  const std::vector<std::string>& backends() const { return backends_; }
  /// The partition report; nullopt when no backend was chosen.
  const std::optional<partition::PartitionReport>& report() const { return report_; }
  /// Warnings: backends skipped by fallback, search-path entries dropped.
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// The runtime session (graph, steps, plan report).
  const runtime::Session& session() const { return *session_; }
  /// Nodes before and after the passes (equal when none ran).
  std::pair<size_t, size_t> passNodes() const { return passNodes_; }

 private:
  InferenceSession() = default;
  Status build(std::unique_ptr<Graph> model, InferenceOptions& options);

  std::unique_ptr<runtime::Session> session_;
  std::vector<std::string> backends_;
  std::optional<partition::PartitionReport> report_;
  std::vector<std::string> warnings_;
  std::pair<size_t, size_t> passNodes_{0, 0};
};

/// Runs `original` (as loaded: unsimplified, unpartitioned) on the
/// reference backend with `inputs` and compares each of `outputs` with its
/// output of the same name (see output_check.h for the rule).
StatusOr<std::vector<Comparison>> compareWithReference(
    const Graph& original, const std::vector<runtime::NamedTensor>& inputs,
    const std::vector<runtime::NamedTensor>& outputs, double tolerance, ToleranceOf of,
    uint64_t memoryLimitBytes = 0, const runtime::WorkLimits& work = {});

}  // namespace subgraph::api
