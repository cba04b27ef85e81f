//===- api/pipelined_session.cpp - Stages run as a pipeline ---------------===//
//
// See subgraph/api/pipelined_session.h. Values travel between stages by
// name in one map per micro-batch: a stage reads its inputs from it (graph
// inputs and what earlier stages sent) and adds its outputs. Stage threads
// hand micro-batches on through one queue per stage; the first error stops
// every stage and is the run's. Each stage runs on a thread of its own that
// lives as long as the session.
//
//===----------------------------------------------------------------------===//
#include "subgraph/api/pipelined_session.h"

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "stage_runs.h"

namespace subgraph::api {

using detail::Values;

struct PipelinedSession::Impl {
  StagePlan plan;
  std::vector<std::unique_ptr<runtime::Session>> stages;
  std::vector<std::string> outputNames;
  std::vector<std::unique_ptr<detail::StageThread>> threads;  // threads[k] runs stage k
  std::mutex runMutex;                                        // one pipelined run at a time
};

namespace {

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
  StatusOr<detail::PlannedStages> planned =
      detail::planPipeline(std::move(model), options, devices, microBatch);
  if (!planned.isOk()) return planned.status();
  auto impl = std::make_unique<Impl>();
  for (size_t k = 0; k < planned->plan.stages.size(); ++k) {
    StatusOr<std::unique_ptr<runtime::Session>> stage = detail::compileStage(*planned, k, options);
    if (!stage.isOk()) return stage.status();
    impl->stages.push_back(std::move(stage).value());
    impl->threads.push_back(std::make_unique<detail::StageThread>());
  }
  impl->plan = std::move(planned->plan);
  impl->outputNames = std::move(planned->outputNames);
  return std::unique_ptr<PipelinedSession>(new PipelinedSession(std::move(impl)));
}

StatusOr<std::vector<runtime::NamedTensor>> PipelinedSession::runInTurn(
    const std::vector<runtime::NamedTensor>& inputs, size_t microBatches) const {
  StatusOr<std::vector<Values>> parts = detail::splitBatch(inputs, microBatches);
  if (!parts.isOk()) return parts.status();
  for (Values& values : *parts)
    for (const auto& stage : impl_->stages)
      SUBGRAPH_RETURN_IF_ERROR(detail::runStage(*stage, values));
  return detail::joinBatch(*parts, impl_->outputNames);
}

StatusOr<std::vector<runtime::NamedTensor>> PipelinedSession::run(
    const std::vector<runtime::NamedTensor>& inputs, size_t microBatches) const {
  StatusOr<std::vector<Values>> parts = detail::splitBatch(inputs, microBatches);
  if (!parts.isOk()) return parts.status();
  const size_t n = impl_->stages.size();
  std::vector<Handoff> handoffs(n);  // handoffs[k]: micro-batches ready for stage k
  std::atomic<bool> stop{false};
  std::mutex errorMutex;
  Status first;
  for (size_t i = 0; i < parts->size(); ++i) handoffs[0].push(i);
  std::lock_guard<std::mutex> one(impl_->runMutex);
  std::vector<std::future<void>> done;
  for (size_t k = 0; k < n; ++k)
    done.push_back(impl_->threads[k]->post([&, k] {
      for (size_t count = 0; count < parts->size(); ++count) {
        std::optional<size_t> i = handoffs[k].pop(stop);
        if (!i) return;
        Status st = detail::runStage(*impl_->stages[k], (*parts)[*i]);
        if (!st.isOk()) {
          std::lock_guard<std::mutex> lock(errorMutex);
          if (first.isOk()) first = st;
          stop = true;
          for (Handoff& h : handoffs) h.wake();
          return;
        }
        if (k + 1 < n) handoffs[k + 1].push(*i);
      }
    }));
  for (std::future<void>& d : done) d.wait();
  if (!first.isOk()) return first;
  return detail::joinBatch(*parts, impl_->outputNames);
}

}  // namespace subgraph::api
