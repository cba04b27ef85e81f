//===- api/inference_session.cpp - Load, partition, run -------------------===//
//
// See subgraph/api/inference_session.h. The steps of build() are the order
// every front end needs: options first (a mistake costs nothing), then the
// backends (a plugin that cannot load fails before any work), then the
// passes, the partition and the compile.
//
//===----------------------------------------------------------------------===//
#include "subgraph/api/inference_session.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "subgraph/api/output_check.h"
#include "subgraph/api/pipeline.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/passes/pass_manager.h"

namespace subgraph::api {

StatusOr<plugins::BackendSelection> chooseBackends(InferenceOptions& options) {
  // One precision and one set of options, decided here, for selection and
  // kernels alike; unknown names and values stop the session now.
  plugins::PluginRunOptions run{options.threads, options.precision, options.pluginOptions, {}};
  if (!options.selection)
    return selectBackends(
        BackendRequest{options.backends, options.allowFallback, options.pluginSearchPath, run});
  plugins::BackendSelection chosen = std::move(*options.selection);
  options.selection.reset();
  SUBGRAPH_RETURN_IF_ERROR(chosen.setRunOptions(run));
  return chosen;
}

uint64_t defaultMemoryLimitBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  uint64_t kib = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemTotal:") return kib / 4 * 3 * 1024;
  return 0;
}

Status checkPrecision(const std::string& precision) {
  if (precision.empty() || precision == "fp32" || precision == "bf16" || precision == "fp16" ||
      precision == "tf32")
    return Status::ok();
  return Status(StatusCode::kUsage,
                "precision must be fp32, bf16, fp16 or tf32, not '" + precision + "'");
}

StatusOr<std::map<std::string, std::string>> parsePluginOptions(
    const std::vector<std::string>& entries, const std::vector<std::string>& backends) {
  std::map<std::string, std::string> out;
  for (const std::string& e : entries) {
    size_t eq = e.find('='), dot = e.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 >= eq)
      return Status(StatusCode::kUsage, "plugin option '" + e + "' is not PLUGIN.NAME=VALUE");
    SUBGRAPH_RETURN_IF_ERROR(plugins::checkOptionBackend(e, e.substr(0, dot), backends));
    out[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return out;
}

StatusOr<std::unique_ptr<InferenceSession>> InferenceSession::create(std::unique_ptr<Graph> model,
                                                                     InferenceOptions options) {
  if (!model) return Status::invalid("InferenceSession::create: no model");
  std::unique_ptr<InferenceSession> s(new InferenceSession());
  SUBGRAPH_RETURN_IF_ERROR(s->build(std::move(model), options));
  return s;
}

StatusOr<std::unique_ptr<InferenceSession>> InferenceSession::open(const std::string& path,
                                                                   InferenceOptions options,
                                                                   const ModelOptions& model) {
  StatusOr<std::unique_ptr<Graph>> graph = loadModel(path, model);
  if (!graph.isOk()) return graph.status();
  return create(std::move(graph).value(), std::move(options));
}

InferenceSession::~InferenceSession() = default;

Status InferenceSession::build(std::unique_ptr<Graph> model, InferenceOptions& options) {
  SUBGRAPH_RETURN_IF_ERROR(checkPrecision(options.precision));
  SUBGRAPH_RETURN_IF_ERROR(runtime::checkThreadCount(options.threads));
  StatusOr<plugins::BackendSelection> selection = chooseBackends(options);
  if (!selection.isOk()) return selection.status();
  for (const std::string& w : selection->warnings()) warnings_.push_back(w);
  backends_ = selection->none() ? std::vector<std::string>{} : selection->names();
  const plugins::PluginRunOptions& run = selection->runOptions();
  passNodes_ = {model->numNodes(), model->numNodes()};
  if (!backends_.empty()) {
    StatusOr<PipelineReport> ran = simplify(*model, options.passes);
    if (!ran.isOk()) return ran.status();
    passNodes_.second = model->numNodes();
  }
  runtime::SessionOptions so;
  so.threads = options.threads;
  so.maxConcurrentRuns = options.maxConcurrentRuns;
  so.batching = options.batching;
  so.memoryLimitBytes = options.memoryLimitBytes;
  so.work = options.work;
  if (!backends_.empty()) {
    auto instances = selection->runtimeBackends(run);
    if (!instances.isOk()) return instances.status();
    so.backendInstances = std::move(instances).value();
  }
  // The session receives the partitioned graph.
  if (!backends_.empty()) {
    StatusOr<Partitioned> parts = partition(*selection, model);
    if (!parts.isOk()) return parts.status();
    for (std::string& w : parts->warnings) warnings_.push_back(std::move(w));
    report_ = std::move(parts->report);
  }
  session_ = std::make_unique<runtime::Session>(so);
  SUBGRAPH_RETURN_IF_ERROR(session_->load(std::move(model)));
  return session_->compile();
}

StatusOr<runtime::RunResult> InferenceSession::run(const std::vector<runtime::NamedTensor>& inputs,
                                                   const runtime::RunOptions& options) const {
  return session_->run(inputs, options);
}

StatusOr<runtime::RunResult> InferenceSession::runInPlace(
    const std::vector<runtime::InputView>& inputs, const runtime::RunOptions& options) const {
  return session_->runInPlace(inputs, options);
}

StatusOr<std::vector<Comparison>> compareWithReference(
    const Graph& original, const std::vector<runtime::NamedTensor>& inputs,
    const std::vector<runtime::NamedTensor>& outputs, double tolerance, ToleranceOf of,
    uint64_t memoryLimitBytes, const runtime::WorkLimits& work) {
  runtime::SessionOptions so;
  so.memoryLimitBytes = memoryLimitBytes;
  so.work = work;
  runtime::Session oracle(so);
  SUBGRAPH_RETURN_IF_ERROR(oracle.load(original));
  SUBGRAPH_RETURN_IF_ERROR(oracle.compile());
  StatusOr<runtime::RunResult> want = oracle.run(inputs);
  if (!want.isOk()) return want.status();
  std::vector<Comparison> out;
  for (const runtime::NamedTensor& got : outputs) {
    auto it = std::find_if(want->outputs.begin(), want->outputs.end(),
                           [&](const runtime::NamedTensor& w) { return w.name == got.name; });
    if (it == want->outputs.end())
      return Status::error(StatusCode::kNotFound, "the reference has no output '" + got.name + "'");
    out.push_back(compareOutput(got.name, got.tensor, it->tensor, tolerance, of));
  }
  return out;
}

}  // namespace subgraph::api
