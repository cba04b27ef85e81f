//===- runtime/engine/executor.cpp - Frames and step execution ------------===//
//
// Frame memory, binding, and the serial and task-graph executors. See
// engine/executor.h.
//
//===----------------------------------------------------------------------===//
#include "engine/executor.h"

#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>

#include "engine/tsan_annotations.h"

namespace subgraph::runtime::engine {
namespace {

constexpr size_t kBlockAlign = 64;
size_t roundUp(size_t n) { return (n + kBlockAlign - 1) / kBlockAlign * kBlockAlign; }

}  // namespace

Frame::Frame(const Program& program) : program_(program) {
  owned_.resize(program.devices.size());
  blocks_.resize(program.devices.size());
  size_t views = 0;
  for (const Step& step : program.steps) {
    stepViewOffset_.push_back(views);
    views += step.inputs.size() + step.outputs.size();
  }
  stepViews_.resize(views);
  scratch_.resize(program.steps.size());
  completions_.resize(program.steps.size());
  stepMs_.resize(program.steps.size());
  slotViews_.resize(program.slots.size());
}

Frame::~Frame() {
  if (initialized_)
    for (size_t s = 0; s < program_.steps.size(); ++s)
      program_.steps[s].kernel->onFrameEpilogue(states_[s].get());
  for (auto& device : owned_)
    for (Owned& o : device)
      if (o.ptr) o.allocator->deallocate(o.ptr);
}

Status Frame::init() {
  states_.resize(program_.steps.size());
  for (size_t s = 0; s < program_.steps.size(); ++s) {
    const Step& step = program_.steps[s];
    StatusOr<std::unique_ptr<KernelFrameState>> state =
        [&]() -> StatusOr<std::unique_ptr<KernelFrameState>> {
      try {
        return step.kernel->onFramePrologue();
      } catch (const std::exception& e) {
        return Status(StatusCode::kInternal, nodeErrorPrefix(step.node) + e.what());
      }
    }();
    if (!state.isOk()) {
      // Undo the prologues that ran, so nothing leaks.
      for (size_t u = 0; u < s; ++u) program_.steps[u].kernel->onFrameEpilogue(states_[u].get());
      states_.clear();
      return state.status();
    }
    states_[s] = std::move(state).value();
  }
  initialized_ = true;
  return Status::ok();
}

Status Frame::reserve(const Plan& plan, std::span<const std::shared_ptr<Allocator>> allocators) {
  for (size_t d = 0; d < program_.devices.size(); ++d) {
    const MemoryPlan& m = plan.memory[d];
    std::vector<Owned>& owned = owned_[d];
    if (owned.size() < m.blocks.size()) owned.resize(m.blocks.size());
    blocks_[d].assign(m.blocks.size(), nullptr);
    for (size_t b = 0; b < m.blocks.size(); ++b) {
      size_t need = m.blocks[b].bytes;
      Owned& o = owned[b];
      if (!o.ptr || o.bytes < need) {
        if (o.ptr) o.allocator->deallocate(o.ptr);
        o.ptr = nullptr;
        StatusOr<void*> mem = allocators[d]->allocate(need, kBlockAlign);
        if (!mem.isOk())
          return Status(mem.status().code(), "cannot allocate a " + std::to_string(need) +
                                                 "-byte " + memoryModeName(m.blocks[b].mode) +
                                                 " block on " + program_.devices[d].toString() +
                                                 ": " + mem.status().message());
        o.ptr = mem.value();
        o.bytes = need;
        o.allocator = allocators[d];
      }
      blocks_[d][b] = static_cast<std::byte*>(o.ptr);
    }
  }
  return Status::ok();
}

size_t Frame::carveBytes(const Plan& plan, int hostDevice) {
  size_t total = 0;
  for (const MemoryBlock& b : plan.memory[static_cast<size_t>(hostDevice)].blocks)
    total += roundUp(b.bytes);
  return total;
}

void Frame::carve(const Plan& plan, std::span<std::byte> memory) {
  size_t d = static_cast<size_t>(program_.hostDevice);
  const MemoryPlan& m = plan.memory[d];
  blocks_[d].assign(m.blocks.size(), nullptr);
  size_t offset = 0;
  for (size_t b = 0; b < m.blocks.size(); ++b) {
    blocks_[d][b] = memory.data() + offset;
    offset += roundUp(m.blocks[b].bytes);
  }
}

void Frame::bind(const Plan& plan, std::span<const void* const> inputData,
                 std::span<void* const> outputOverride) {
  const Program& p = program_;
  std::vector<void*> ptrs(p.slots.size(), nullptr);
  for (size_t s = 0; s < p.slots.size(); ++s) {
    const Slot& slot = p.slots[s];
    switch (slot.kind) {
      case SlotKind::kGraphInput:
        ptrs[s] = const_cast<void*>(inputData[static_cast<size_t>(slot.graphInput)]);
        break;
      case SlotKind::kInitializer:
        ptrs[s] = const_cast<std::byte*>(slot.initializer->bytes().data());
        break;
      case SlotKind::kComputed:
        if (slot.isStatic) {
          ptrs[s] = p.staticPointers[s];
        } else if (plan.precomputed[s]) {
          ptrs[s] = plan.precomputed[s];
        } else if (plan.root[s] != static_cast<int>(s)) {
          ptrs[s] = ptrs[static_cast<size_t>(plan.root[s])];
        } else if (plan.slotBuffer[s] >= 0) {
          size_t d = static_cast<size_t>(slot.device);
          const BufferPlacement& b =
              plan.memory[d].buffers[static_cast<size_t>(plan.slotBuffer[s])];
          ptrs[s] = blocks_[d][b.block] + b.offset;
        }
        break;
    }
  }
  for (size_t o = 0; o < outputOverride.size(); ++o) {
    if (!outputOverride[o]) continue;
    size_t s = static_cast<size_t>(p.outputSlots[o]);
    if (p.slots[s].kind == SlotKind::kComputed && plan.slotBuffer[s] >= 0 &&
        plan.root[s] == static_cast<int>(s))
      ptrs[s] = outputOverride[o];
  }
  for (size_t s = 0; s < p.slots.size(); ++s) slotViews_[s] = TensorView(&plan.descs[s], ptrs[s]);
  for (size_t si = 0; si < p.steps.size(); ++si) {
    const Step& step = p.steps[si];
    TensorView* v = &stepViews_[stepViewOffset_[si]];
    for (size_t i = 0; i < step.inputs.size(); ++i)
      v[i] = step.inputs[i] < 0 ? TensorView() : slotViews_[static_cast<size_t>(step.inputs[i])];
    for (size_t o = 0; o < step.outputs.size(); ++o)
      v[step.inputs.size() + o] = slotViews_[static_cast<size_t>(step.outputs[o])];
    scratch_[si] = {};
    if (plan.scratchBuffer[si] >= 0) {
      size_t d = static_cast<size_t>(p.hostDevice);
      for (size_t dd = 0; dd < p.devices.size(); ++dd)
        if (p.devices[dd] == p.backends[static_cast<size_t>(step.backend)]->device()) d = dd;
      const BufferPlacement& b =
          plan.memory[d].buffers[static_cast<size_t>(plan.scratchBuffer[si])];
      scratch_[si] = std::span<std::byte>(blocks_[d][b.block] + b.offset, plan.scratchBytes[si]);
    }
  }
}

namespace {
thread_local const NestedProfile* tNestedProfile = nullptr;
}  // namespace

const NestedProfile* currentNestedProfile() { return tNestedProfile; }

namespace {

/// The end of the run of steps from steps[k] that one capturing device
/// queue can record: consecutive steps on that queue whose inputs and
/// outputs all live in its device's memory (no host copy: a request's
/// host buffers change) and that wait for no other queue. k when steps[k]
/// starts none.
size_t capturableRunEnd(const Program& p, const Plan& plan, const std::vector<int>& steps,
                        size_t k) {
  auto queueOf = [&](int si) -> WorkQueue& {
    return p.backends[static_cast<size_t>(p.steps[static_cast<size_t>(si)].backend)]->workQueue();
  };
  WorkQueue& queue = queueOf(steps[k]);
  if (!queue.canCapture()) return k;
  const Device& device =
      p.backends[static_cast<size_t>(p.steps[static_cast<size_t>(steps[k])].backend)]->device();
  auto onDevice = [&](int slot) {
    return slot < 0 ||
           p.devices[static_cast<size_t>(p.slots[static_cast<size_t>(slot)].device)] == device;
  };
  size_t end = k;
  for (; end < steps.size(); ++end) {
    int si = steps[end];
    const Step& step = p.steps[static_cast<size_t>(si)];
    if (&queueOf(si) != &queue) break;
    if (!std::all_of(step.inputs.begin(), step.inputs.end(), onDevice) ||
        !std::all_of(step.outputs.begin(), step.outputs.end(), onDevice))
      break;
    if (plan.hasEdges && !plan.asyncPredecessors[static_cast<size_t>(si)].empty()) break;
  }
  return end;
}

}  // namespace

Status execute(const Program& p, const Plan& plan, Frame& frame, const ExecuteOptions& options) {
  using Clock = std::chrono::steady_clock;
  const SessionCallbacks* cb = options.callbacks;
  // The steps of nested graphs that this request's steps run, when profiled.
  const bool profiling = options.profile && options.timings;
  std::mutex nestedMutex;
  std::vector<StepTiming> nested;
  std::mutex waitMutex;
  // Blocks the host until step `pred` on an asynchronous queue completes,
  // recording the wait: a device value read on the host, or a step of one
  // device queue after one of another.
  auto waitFor = [&](int pred, const StepInfo& waiter) -> Status {
    if (options.hostWaits) {
      std::lock_guard<std::mutex> lock(waitMutex);
      options.hostWaits->push_back({waiter.name, p.steps[static_cast<size_t>(pred)].info.name});
    }
    return frame.completions_[static_cast<size_t>(pred)].get();
  };

  // What running step `si` does: its kernel on its bound views.
  auto bodyOf = [&](int si) -> std::function<Status()> {
    StepInfo info = p.steps[static_cast<size_t>(si)].info;
    info.index = static_cast<size_t>(si);
    return [&p, &frame, &options, &nestedMutex, &nested, profiling, cb, si, info]() -> Status {
      const Step& st = p.steps[static_cast<size_t>(si)];
      const TensorView* v = &frame.stepViews_[frame.stepViewOffset_[static_cast<size_t>(si)]];
      std::span<const TensorView> inputs(v, st.inputs.size());
      std::span<const TensorView> outputs(v + st.inputs.size(), st.outputs.size());
      RunContext ctx(
          st.node, inputs, outputs, frame.scratch_[static_cast<size_t>(si)],
          frame.states_.empty() ? nullptr : frame.states_[static_cast<size_t>(si)].get());
      bool timed = options.profile || (cb && cb->onExecuteEnd);
      Clock::time_point start = timed ? Clock::now() : Clock::time_point();
      NestedProfile profile;
      const NestedProfile* outer = tNestedProfile;
      if (profiling) {
        profile = {&nestedMutex, &nested,
                   (options.scope.empty() ? "" : options.scope + "/") + info.name};
        tNestedProfile = &profile;
      }
      Status status = runKernelGuarded(st.node, [&] { return st.kernel->run(ctx); });
      tNestedProfile = outer;
      if (timed) {
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        frame.stepMs_[static_cast<size_t>(si)] = ms;
        if (status.isOk() && cb && cb->onExecuteEnd) cb->onExecuteEnd(info, outputs, ms);
      }
      return status;
    };
  };

  // Runs step `si` on its backend's queue. For an asynchronous queue the
  // step is only submitted; its completion is kept in the frame.
  auto runStep = [&](int si) -> Status {
    const Step& step = p.steps[static_cast<size_t>(si)];
    StepInfo info = step.info;
    info.index = static_cast<size_t>(si);
    if (cb && cb->onExecuteBegin && !cb->onExecuteBegin(info)) return Status::ok();
    if (plan.hasEdges)
      for (int pred : plan.asyncPredecessors[static_cast<size_t>(si)])
        SUBGRAPH_RETURN_IF_ERROR(waitFor(pred, info));
    std::function<Status()> body = bodyOf(si);
    WorkQueue& queue = p.backends[static_cast<size_t>(step.backend)]->workQueue();
    if (!queue.isSynchronous()) {
      frame.completions_[static_cast<size_t>(si)] =
          options.profile ? queue.submitTimed(body, &frame.stepMs_[static_cast<size_t>(si)])
                          : queue.submit(body);
      return Status::ok();
    }
    if (options.exclusive) {
      if (step.exclusive) {
        std::unique_lock<std::shared_mutex> lock(*options.exclusive);
        return body();
      }
      std::shared_lock<std::shared_mutex> lock(*options.exclusive);
      return body();
    }
    return body();
  };

  // Every address and size the steps of `run` are bound to: with the
  // plan's signature, what captured work depends on.
  auto boundOf = [&](std::span<const int> run) {
    std::vector<uintptr_t> bound;
    for (int si : run) {
      const Step& step = p.steps[static_cast<size_t>(si)];
      size_t first = frame.stepViewOffset_[static_cast<size_t>(si)];
      for (size_t i = 0; i < step.inputs.size() + step.outputs.size(); ++i) {
        const TensorView& v = frame.stepViews_[first + i];
        bound.push_back(reinterpret_cast<uintptr_t>(v.raw()));
        bound.push_back(v.byteSize());
      }
      std::span<std::byte> scratch = frame.scratch_[static_cast<size_t>(si)];
      bound.push_back(reinterpret_cast<uintptr_t>(scratch.data()));
      bound.push_back(scratch.size());
    }
    return bound;
  };

  // Runs a run of steps that one device queue captures: recorded the first
  // time (or when the plan or an address changed), then launched as one.
  // Work the device cannot record (a kernel that allocates, say) runs step
  // by step instead, for this key from then on; a real kernel error then
  // surfaces there, nothing having run while recording.
  auto runCaptured = [&](std::span<const int> run) -> Status {
    WorkQueue& queue =
        p.backends[static_cast<size_t>(p.steps[static_cast<size_t>(run[0])].backend)]->workQueue();
    std::vector<uintptr_t> bound = boundOf(run);
    Frame::Capture& c = frame.captures_[run[0]];
    auto stepByStep = [&]() -> Status {
      for (int si : run) SUBGRAPH_RETURN_IF_ERROR(runStep(si));
      return Status::ok();
    };
    const bool same = c.tried && c.signature == plan.signature && c.bound == bound;
    if (same && !c.work) return stepByStep();
    if (!same) {
      c.work.reset();
      c.tried = true;
      c.signature = plan.signature;
      c.bound = std::move(bound);
      if (!queue.beginCapture().isOk()) return stepByStep();
      Status recorded;
      for (int si : run) {
        recorded = queue.record(bodyOf(si));
        if (!recorded.isOk()) break;
      }
      StatusOr<std::shared_ptr<CapturedWork>> work = queue.endCapture();
      if (!recorded.isOk() || !work.isOk()) return stepByStep();
      c.work = std::move(work).value();
    }
    TaskCompletion done = queue.launch(*c.work);
    for (int si : run) frame.completions_[static_cast<size_t>(si)] = done;
    if (options.replayedSteps) *options.replayedSteps += run.size();
    return Status::ok();
  };

  for (int si : plan.runSteps) frame.completions_[static_cast<size_t>(si)] = TaskCompletion();
  Status first;
  if (options.parallel && plan.hasEdges && plan.runSteps.size() > 1) {
    std::vector<std::atomic<int>> pending(p.steps.size());
    for (int si : plan.runSteps)
      pending[static_cast<size_t>(si)].store(plan.numPredecessors[static_cast<size_t>(si)]);
    std::atomic<bool> failed{false};
    std::mutex errorMutex;
    // oneTBB orders a task after its group.run() and before wait()
    // returns, but inside the library, where ThreadSanitizer cannot see it;
    // OrderedTask and these hints state that order (no-ops outside TSan
    // builds), so TSan checks this executor instead of every handoff.
    int order = 0;
    tbb::task_group group;
    std::function<void(int)> spawn = [&](int si) {
      group.run(OrderedTask([&, si] {
        if (!failed.load(std::memory_order_acquire)) {
          Status st = runStep(si);
          if (!st.isOk()) {
            std::lock_guard<std::mutex> lock(errorMutex);
            if (first.isOk()) first = st;
            failed.store(true, std::memory_order_release);
          }
        }
        for (int next : plan.successors[static_cast<size_t>(si)])
          if (pending[static_cast<size_t>(next)].fetch_sub(1, std::memory_order_acq_rel) == 1)
            spawn(next);
        tsanRelease(&order);
      }));
    };
    for (int si : plan.runSteps)
      if (plan.numPredecessors[static_cast<size_t>(si)] == 0) spawn(si);
    group.wait();
    tsanAcquire(&order);
  } else {
    const std::vector<int>& steps = plan.runSteps;
    for (size_t k = 0; k < steps.size() && first.isOk();) {
      size_t end = options.capture ? capturableRunEnd(p, plan, steps, k) : k;
      if (end - k >= 2) {
        first = runCaptured(std::span(steps).subspan(k, end - k));
        k = end;
      } else {
        first = runStep(steps[k++]);
      }
    }
  }

  // Drain asynchronous queues and collect their failures in step order.
  if (p.hasAsyncQueues) {
    for (const auto& b : p.backends)
      if (!b->workQueue().isSynchronous()) b->workQueue().waitIdle();
    for (int si : plan.runSteps) {
      const TaskCompletion& c = frame.completions_[static_cast<size_t>(si)];
      if (!c.valid()) continue;
      Status st = c.get();
      if (!st.isOk() && first.isOk()) first = st;
    }
  }
  if (cb && cb->onWaitFinish) cb->onWaitFinish();
  if (options.profile && options.timings) {
    for (int si : plan.runSteps) {
      StepTiming t;
      t.step = p.steps[static_cast<size_t>(si)].info;
      t.step.index = static_cast<size_t>(si);
      t.step.scope = options.scope;
      t.ms = frame.stepMs_[static_cast<size_t>(si)];
      const Step& step = p.steps[static_cast<size_t>(si)];
      if (step.info.isCopy && !step.outputs.empty())
        t.bytes = plan.descs[static_cast<size_t>(step.outputs[0])].byteSize();
      options.timings->push_back(std::move(t));
    }
    for (StepTiming& t : nested) options.timings->push_back(std::move(t));
  }
  return first;
}

}  // namespace subgraph::runtime::engine
