//===- runtime/backend/work_queue.cpp - Ordered task queues ---------------===//
//
// InlineWorkQueue (host) and SerialWorkQueue (a model of an asynchronous
// device with one stream); see subgraph/runtime/work_queue.h.
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/work_queue.h"

#include <exception>

namespace subgraph::runtime {

Status runGuarded(const std::function<Status()>& task) {
  try {
    return task();
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, std::string("task threw: ") + e.what());
  } catch (...) {
    return Status(StatusCode::kInternal, "task threw a non-standard exception");
  }
}

TaskCompletion InlineWorkQueue::submit(std::function<Status()> task) {
  std::promise<Status> done;
  done.set_value(runGuarded(task));
  return done.get_future().share();
}

SerialWorkQueue::SerialWorkQueue(std::string name)
    : name_(std::move(name)), thread_([this] { loop(); }) {}

SerialWorkQueue::~SerialWorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

TaskCompletion SerialWorkQueue::submit(std::function<Status()> task) {
  std::packaged_task<Status()> packaged([t = std::move(task)] { return runGuarded(t); });
  TaskCompletion done = packaged.get_future().share();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(packaged));
  }
  wake_.notify_one();
  return done;
}

void SerialWorkQueue::waitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return tasks_.empty() && !running_; });
}

void SerialWorkQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
    // Drain what is queued even when stopping, so no completion is left
    // unfulfilled.
    if (tasks_.empty()) return;
    std::packaged_task<Status()> task = std::move(tasks_.front());
    tasks_.pop_front();
    running_ = true;
    lock.unlock();
    task();
    lock.lock();
    running_ = false;
    if (tasks_.empty()) idle_.notify_all();
  }
}

}  // namespace subgraph::runtime
