//===- subgraph/runtime/work_queue.h - A device's ordered task queue -*- C++ -*-===//
//
// A backend runs its kernels through a WorkQueue: tasks submitted to one queue
// run in submission order, which is the order the session compiler decided
// (BRT's device work queue, a CUDA stream). A task's completion is a shared
// future, so a step on another queue that reads its result can wait for it.
//
// Two queues come with the runtime: InlineWorkQueue runs each task on the
// submitting thread before submit() returns (the host CPU), and
// SerialWorkQueue runs tasks one by one on a thread of its own, the model of
// an asynchronous device.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "subgraph/support/status.h"

namespace subgraph::runtime {

/// Completion of one submitted task: its Status once it has run.
using TaskCompletion = std::shared_future<Status>;

/// Work a queue recorded (WorkQueue::endCapture), launched again per
/// request. Freed with its last owner.
class CapturedWork {
 public:
  virtual ~CapturedWork() = default;
};

/// Runs `task`, turning an escaping exception into a kInternal Status.
Status runGuarded(const std::function<Status()>& task);

/// An ordered queue of tasks for one device.
class WorkQueue {
 public:
  virtual ~WorkQueue() = default;
  /// Enqueues `task`; tasks of one queue run in submission order. A task
  /// that throws completes with a kInternal status naming the exception.
  virtual TaskCompletion submit(std::function<Status()> task) = 0;
  /// Like submit; a queue that can time its device's work writes the
  /// task's device milliseconds to `*deviceMs` by the time the completion
  /// is ready (profiles). The default times nothing.
  virtual TaskCompletion submitTimed(std::function<Status()> task, double* deviceMs) {
    (void)deviceMs;
    return submit(std::move(task));
  }
  /// True if submit() runs the task before returning, so callers need not
  /// wait on the completion.
  virtual bool isSynchronous() const = 0;
  /// Blocks until every task submitted so far has run.
  virtual void waitIdle() = 0;

  // --- Captured work (CUDA graphs; plugin ABI 5) ---
  /// True if the queue can record work and launch the recording again.
  virtual bool canCapture() const { return false; }
  /// Starts recording: tasks given to record() submit their device work
  /// into the recording instead of running it; nothing else reaches the
  /// queue until endCapture().
  virtual Status beginCapture() { return Status::error(StatusCode::kUnsupported, "no capture"); }
  /// Runs `task` (which submits device work) into the open recording.
  virtual Status record(const std::function<Status()>& task) { return runGuarded(task); }
  /// Ends the recording; the work recorded, to launch any number of times.
  virtual StatusOr<std::shared_ptr<CapturedWork>> endCapture() {
    return Status::error(StatusCode::kUnsupported, "no capture");
  }
  /// Submits captured work; completes when it has run.
  virtual TaskCompletion launch(const CapturedWork& work) {
    (void)work;
    std::promise<Status> p;
    p.set_value(Status::error(StatusCode::kUnsupported, "no capture"));
    return p.get_future().share();
  }
};

/// Runs every task immediately on the calling thread.
class InlineWorkQueue final : public WorkQueue {
 public:
  TaskCompletion submit(std::function<Status()> task) override;
  bool isSynchronous() const override { return true; }
  void waitIdle() override {}
};

/// Runs tasks one at a time, in order, on a dedicated thread.
class SerialWorkQueue final : public WorkQueue {
 public:
  explicit SerialWorkQueue(std::string name = "serial");
  /// Drains the queue, then joins the thread.
  ~SerialWorkQueue() override;
  SerialWorkQueue(const SerialWorkQueue&) = delete;
  SerialWorkQueue& operator=(const SerialWorkQueue&) = delete;

  TaskCompletion submit(std::function<Status()> task) override;
  bool isSynchronous() const override { return false; }
  void waitIdle() override;

 private:
  void loop();

  std::string name_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<std::packaged_task<Status()>> tasks_;
  bool running_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace subgraph::runtime
