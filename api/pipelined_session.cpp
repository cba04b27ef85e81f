//===- api/pipelined_session.cpp - Stages run as a pipeline ---------------===//
//
// See subgraph/api/pipelined_session.h. Values travel between stages by
// name in one map per micro-batch: a stage reads its inputs from it (graph
// inputs and what earlier stages sent) and adds its outputs. Stage threads
// hand micro-batches on through one queue per stage; the first error stops
// every stage and is the run's.
//
//===----------------------------------------------------------------------===//
#include "subgraph/api/pipelined_session.h"

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "subgraph/api/pipeline.h"

namespace subgraph::api {

using Values = std::map<std::string, Tensor>;

struct PipelinedSession::Impl {
  StagePlan plan;
  std::vector<std::unique_ptr<runtime::Session>> stages;
  std::vector<std::string> outputNames;
};

namespace {

// Dim 0 of every input split into `parts` equal slices.
StatusOr<std::vector<Values>> split(const std::vector<runtime::NamedTensor>& inputs, size_t parts) {
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

// The outputs of every micro-batch joined along dim 0.
std::vector<runtime::NamedTensor> join(const std::vector<Values>& parts,
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

// Runs one stage on one micro-batch's values, adding its outputs to them.
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

/// The hand-off from one stage to the next: micro-batch indices in order.
class Handoff {
 public:
  void push(size_t i) {
    std::lock_guard<std::mutex> lock(mutex_);
    ready_.push_back(i);
    cv_.notify_one();
  }
  /// The next micro-batch, or nothing once `stop` is set.
  std::optional<size_t> pop(const std::atomic<bool>& stop) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return !ready_.empty() || stop.load(); });
    if (ready_.empty()) return std::nullopt;
    size_t i = ready_.front();
    ready_.pop_front();
    return i;
  }
  void wake() {
    std::lock_guard<std::mutex> lock(mutex_);
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<size_t> ready_;
};

}  // namespace

PipelinedSession::PipelinedSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PipelinedSession::~PipelinedSession() = default;

const StagePlan& PipelinedSession::plan() const { return impl_->plan; }

StatusOr<std::unique_ptr<PipelinedSession>> PipelinedSession::create(
    std::unique_ptr<Graph> model, InferenceOptions options, std::vector<StageDevice> devices,
    const InputShapes& microBatch) {
  if (!model) return Status::invalid("PipelinedSession::create: no model");
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
  if (!selection->none()) {
    StatusOr<PipelineReport> ran = simplify(*model, options.passes);
    if (!ran.isOk()) return ran.status();
    StatusOr<Partitioned> parts = partition(*selection, model);
    if (!parts.isOk()) return parts.status();
  }
  auto impl = std::make_unique<Impl>();
  StatusOr<StagePlan> plan = planStages(*model, devices);
  if (!plan.isOk()) return plan.status();
  impl->plan = std::move(plan).value();
  for (const Value* out : model->outputs()) impl->outputNames.push_back(out->name());
  for (size_t k = 0; k < impl->plan.stages.size(); ++k) {
    StatusOr<std::unique_ptr<Graph>> part = stageGraph(*model, impl->plan, k);
    if (!part.isOk()) return part.status();
    runtime::SessionOptions so;
    so.threads = options.threads;
    so.memoryLimitBytes = options.memoryLimitBytes;
    so.work = options.work;
    // Backend instances of their own: a device plugin's stage gets queues
    // of its own, so stages overlap.
    if (!selection->none()) {
      auto instances = selection->runtimeBackends(selection->runOptions());
      if (!instances.isOk()) return instances.status();
      so.backendInstances = std::move(instances).value();
    }
    auto session = std::make_unique<runtime::Session>(so);
    SUBGRAPH_RETURN_IF_ERROR(session->load(std::move(part).value()));
    SUBGRAPH_RETURN_IF_ERROR(session->compile());
    impl->stages.push_back(std::move(session));
  }
  return std::unique_ptr<PipelinedSession>(new PipelinedSession(std::move(impl)));
}

StatusOr<std::vector<runtime::NamedTensor>> PipelinedSession::runInTurn(
    const std::vector<runtime::NamedTensor>& inputs, size_t microBatches) const {
  StatusOr<std::vector<Values>> parts = split(inputs, microBatches);
  if (!parts.isOk()) return parts.status();
  for (Values& values : *parts)
    for (const auto& stage : impl_->stages) SUBGRAPH_RETURN_IF_ERROR(runStage(*stage, values));
  return join(*parts, impl_->outputNames);
}

StatusOr<std::vector<runtime::NamedTensor>> PipelinedSession::run(
    const std::vector<runtime::NamedTensor>& inputs, size_t microBatches) const {
  StatusOr<std::vector<Values>> parts = split(inputs, microBatches);
  if (!parts.isOk()) return parts.status();
  const size_t n = impl_->stages.size();
  std::vector<Handoff> handoffs(n);  // handoffs[k]: micro-batches ready for stage k
  std::atomic<bool> stop{false};
  std::mutex errorMutex;
  Status first;
  for (size_t i = 0; i < parts->size(); ++i) handoffs[0].push(i);
  std::vector<std::thread> threads;
  for (size_t k = 0; k < n; ++k)
    threads.emplace_back([&, k] {
      for (size_t done = 0; done < parts->size(); ++done) {
        std::optional<size_t> i = handoffs[k].pop(stop);
        if (!i) return;
        Status st = runStage(*impl_->stages[k], (*parts)[*i]);
        if (!st.isOk()) {
          std::lock_guard<std::mutex> lock(errorMutex);
          if (first.isOk()) first = st;
          stop = true;
          for (Handoff& h : handoffs) h.wake();
          return;
        }
        if (k + 1 < n) handoffs[k + 1].push(*i);
      }
    });
  for (std::thread& t : threads) t.join();
  if (!first.isOk()) return first;
  return join(*parts, impl_->outputNames);
}

}  // namespace subgraph::api
