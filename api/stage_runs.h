//===- api/stage_runs.h - What every pipeline runner shares ---*- C++ -*-===//
//
// Internal to subgraph::api: the model planned into stages once (inputs
// fixed to one micro-batch, simplified, partitioned, cut), each stage
// compiled as a runtime session on its device, and the values one
// micro-batch carries from stage to stage, and the thread a stage runs on.
// PipelinedSession runs every stage in one process; MpiPipelinedSession
// runs one stage per rank.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "subgraph/api/inference_session.h"
#include "subgraph/api/stages.h"

namespace subgraph::api::detail {

/// One micro-batch's values by name: graph inputs, then what stages made.
using Values = std::map<std::string, Tensor>;

/// A model cut into stages, ready to compile any of them.
struct PlannedStages {
  std::unique_ptr<Graph> model;  ///< Partitioned, inputs at micro-batch dims.
  StagePlan plan;
  std::optional<plugins::BackendSelection> selection;  ///< None: reference only.
  std::vector<std::string> outputNames;
};

/// Fixes the inputs to `microBatch`, simplifies and partitions `model` as
/// InferenceSession does (with `options`' backends), and cuts it into one
/// stage per device.
StatusOr<PlannedStages> planPipeline(std::unique_ptr<Graph> model, InferenceOptions& options,
                                     const std::vector<StageDevice>& devices,
                                     const InputShapes& microBatch);

/// Stage `k` compiled as a session of its own, with backend instances of
/// its own on the stage's device.
StatusOr<std::unique_ptr<runtime::Session>> compileStage(const PlannedStages& planned, size_t k,
                                                         const InferenceOptions& options);

/// The names stage `k`'s graph reads (its inputs).
StatusOr<std::vector<std::string>> stageInputs(const PlannedStages& planned, size_t k);

/// Dim 0 of every input split into `parts` equal slices.
StatusOr<std::vector<Values>> splitBatch(const std::vector<runtime::NamedTensor>& inputs,
                                         size_t parts);

/// The outputs `names` of every micro-batch joined along dim 0.
std::vector<runtime::NamedTensor> joinBatch(const std::vector<Values>& parts,
                                            const std::vector<std::string>& names);

/// Runs one stage on one micro-batch's values, adding its outputs to them.
Status runStage(const runtime::Session& stage, Values& values);

/// One stage's own thread, kept for the session's life, so that what a
/// kernel library binds to its calling thread (oneDNN's OpenMP team, its
/// streams) is made once rather than on every run. Runs posted jobs in
/// order.
class StageThread {
 public:
  StageThread() : thread_([this] { loop(); }) {}
  ~StageThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  StageThread(const StageThread&) = delete;
  StageThread& operator=(const StageThread&) = delete;

  /// Runs `job` on the thread after the jobs posted before it.
  std::future<void> post(std::function<void()> job) {
    std::packaged_task<void()> task(std::move(job));
    std::future<void> done = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(std::move(task));
    }
    cv_.notify_one();
    return done;
  }

 private:
  void loop() {
    for (;;) {
      std::packaged_task<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<void()>> jobs_;
  bool stop_ = false;
  std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace subgraph::api::detail
