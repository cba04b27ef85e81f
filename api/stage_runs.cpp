//===- api/stage_runs.cpp - What every pipeline runner shares -------------===//
//
// See stage_runs.h.
//
//===----------------------------------------------------------------------===//
#include "stage_runs.h"

#include <fmt/format.h>

#include "subgraph/api/pipeline.h"

namespace subgraph::api::detail {

StatusOr<PlannedStages> planPipeline(std::unique_ptr<Graph> model, InferenceOptions& options,
                                     const std::vector<StageDevice>& devices,
                                     const InputShapes& microBatch) {
  if (!model) return Status::invalid("pipeline: no model");
  SUBGRAPH_RETURN_IF_ERROR(checkPrecision(options.precision));
  if (std::string why = runtime::batchRefusal(*model); !why.empty())
    return Status::invalid("pipelined micro-batches: " + why +
                           "; they need a free dim 0 that every op keeps apart");
  // Every stage runs micro-batches of one size: fixed now, before the passes
  // and the partition, backends see static shapes (a plugin may fuse only
  // those), and the stages are planned with known costs and bytes.
  SUBGRAPH_RETURN_IF_ERROR(applyInputShapes(*model, microBatch));
  StatusOr<plugins::BackendSelection> selection = chooseBackends(options);
  if (!selection.isOk()) return selection.status();
  PlannedStages out;
  if (!selection->none()) {
    StatusOr<PipelineReport> ran = simplify(*model, options.passes);
    if (!ran.isOk()) return ran.status();
    StatusOr<Partitioned> parts = partition(*selection, model);
    if (!parts.isOk()) return parts.status();
    out.selection = std::move(selection).value();
  }
  StatusOr<StagePlan> plan = planStages(*model, devices);
  if (!plan.isOk()) return plan.status();
  out.plan = std::move(plan).value();
  for (const Value* v : model->outputs()) out.outputNames.push_back(v->name());
  out.model = std::move(model);
  return out;
}

StatusOr<std::unique_ptr<runtime::Session>> compileStage(const PlannedStages& planned, size_t k,
                                                         const InferenceOptions& options) {
  StatusOr<std::unique_ptr<Graph>> part = stageGraph(*planned.model, planned.plan, k);
  if (!part.isOk()) return part.status();
  runtime::SessionOptions so;
  so.threads = options.threads;
  so.memoryLimitBytes = options.memoryLimitBytes;
  // The stage's device limit holds at run time too: its compiled plan
  // (constants and frame) must fit, not only the planner's estimate.
  if (uint64_t device = planned.plan.stages[k].memoryLimit;
      device != 0 && (so.memoryLimitBytes == 0 || device < so.memoryLimitBytes))
    so.memoryLimitBytes = device;
  so.work = options.work;
  // Backend instances of their own: a device plugin's stage gets queues
  // of its own, so stages overlap, on the device the stage names.
  if (planned.selection) {
    plugins::PluginRunOptions run = planned.selection->runOptions();
    run.device = planned.plan.stages[k].device;
    auto instances = planned.selection->runtimeBackends(run);
    if (!instances.isOk()) return instances.status();
    so.backendInstances = std::move(instances).value();
  }
  auto session = std::make_unique<runtime::Session>(so);
  SUBGRAPH_RETURN_IF_ERROR(session->load(std::move(part).value()));
  SUBGRAPH_RETURN_IF_ERROR(session->compile());
  return session;
}

StatusOr<std::vector<std::string>> stageInputs(const PlannedStages& planned, size_t k) {
  StatusOr<std::unique_ptr<Graph>> part = stageGraph(*planned.model, planned.plan, k);
  if (!part.isOk()) return part.status();
  std::vector<std::string> names;
  for (const Value* v : (*part)->inputs()) names.push_back(v->name());
  return names;
}

StatusOr<std::vector<Values>> splitBatch(const std::vector<runtime::NamedTensor>& inputs,
                                         size_t parts) {
  if (parts == 0) return Status(StatusCode::kUsage, "micro-batches must be 1 or more");
  std::vector<Values> out(parts);
  for (const runtime::NamedTensor& in : inputs) {
    const Tensor& t = in.tensor;
    if (t.dims().empty() || t.dims()[0] % static_cast<int64_t>(parts) != 0)
      return Status(StatusCode::kUsage,
                    fmt::format("input '{}' has dim 0 of {}, which {} micro-batches do not divide",
                                in.name, t.dims().empty() ? 0 : t.dims()[0], parts));
    std::vector<int64_t> dims = t.dims();
    dims[0] /= static_cast<int64_t>(parts);
    const size_t slice = t.bytes().size() / parts;
    for (size_t p = 0; p < parts; ++p) {
      std::vector<std::byte> bytes(t.bytes().begin() + static_cast<ptrdiff_t>(p * slice),
                                   t.bytes().begin() + static_cast<ptrdiff_t>((p + 1) * slice));
      out[p].emplace(in.name, Tensor(t.dtype(), dims, std::move(bytes)));
    }
  }
  return out;
}

std::vector<runtime::NamedTensor> joinBatch(const std::vector<Values>& parts,
                                            const std::vector<std::string>& names) {
  std::vector<runtime::NamedTensor> out;
  for (const std::string& name : names) {
    const Tensor& first = parts.front().at(name);
    std::vector<int64_t> dims = first.dims();
    std::vector<std::byte> bytes;
    for (const Values& p : parts) {
      const Tensor& t = p.at(name);
      bytes.insert(bytes.end(), t.bytes().begin(), t.bytes().end());
    }
    if (!dims.empty()) dims[0] *= static_cast<int64_t>(parts.size());
    out.push_back({name, Tensor(first.dtype(), dims, std::move(bytes))});
  }
  return out;
}

Status runStage(const runtime::Session& stage, Values& values) {
  std::vector<runtime::NamedTensor> feeds;
  for (const runtime::IoInfo& in : stage.inputInfo()) {
    auto it = values.find(in.name);
    if (it == values.end())
      return Status(StatusCode::kInternal, "pipeline: no value '" + in.name + "' for a stage");
    feeds.push_back({in.name, it->second});
  }
  StatusOr<runtime::RunResult> ran = stage.run(feeds);
  if (!ran.isOk()) return ran.status();
  for (runtime::NamedTensor& out : ran->outputs) values[out.name] = std::move(out.tensor);
  return Status::ok();
}

}  // namespace subgraph::api::detail
