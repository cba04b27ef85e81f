//===- runtime/engine/executor.h - Frames and step execution ----*- C++ -*-===//
//
// Internal to the runtime. A Frame is one I/O workspace: the per-frame state
// of every kernel (created by onFramePrologue when the frame is made) and the
// memory blocks of the plan it last served. A request binds its inputs into a
// frame, runs the plan's steps, and reads the outputs; frames are reused by
// later requests, growing their blocks only when a plan needs more.
//
// execute() runs steps either in plan order on the calling thread, or as a
// oneTBB task graph (tbb::task_group) following the plan's edges. A step on an
// asynchronous work queue is submitted and its successors on other queues
// wait for its completion; every queue is drained before execute() returns.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "engine/plan.h"
#include "engine/program.h"
#include "subgraph/runtime/session.h"

namespace subgraph::runtime::engine {

struct ExecuteOptions;

/// One I/O workspace; used by one request at a time.
class Frame {
 public:
  explicit Frame(const Program& program);
  /// Runs frame epilogues and frees the frame's memory.
  ~Frame();
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;

  /// Runs every kernel's onFramePrologue; call once, right after
  /// construction.
  Status init();
  /// Makes the frame's blocks large enough for `plan`, allocating from
  /// `allocators` (one per device of the program).
  Status reserve(const Plan& plan, std::span<const std::shared_ptr<Allocator>> allocators);
  /// Points the plan's host blocks into `memory` instead (nested programs
  /// whose memory is the scratch of an outer kernel).
  void carve(const Plan& plan, std::span<std::byte> memory);
  /// Bytes carve() needs for `plan`.
  static size_t carveBytes(const Plan& plan, int hostDevice);

  /// Binds every slot to memory for one request. `inputData` holds each
  /// graph input's bytes; `outputOverride`, if not empty, gives memory for
  /// graph outputs to be written to directly (null entries: use the plan).
  void bind(const Plan& plan, std::span<const void* const> inputData,
            std::span<void* const> outputOverride = {});
  /// The view of slot `slot` after bind().
  const TensorView& view(int slot) const { return slotViews_[static_cast<size_t>(slot)]; }

 private:
  friend Status execute(const Program&, const Plan&, Frame&, const ExecuteOptions&);
  struct Owned {
    std::shared_ptr<Allocator> allocator;
    void* ptr = nullptr;
    size_t bytes = 0;
  };

  const Program& program_;
  bool initialized_ = false;
  std::vector<std::unique_ptr<KernelFrameState>> states_;
  std::vector<std::vector<Owned>> owned_;        // [device][block]
  std::vector<std::vector<std::byte*>> blocks_;  // [device][block]
  std::vector<TensorView> slotViews_;
  std::vector<TensorView> stepViews_;  // inputs then outputs of each step
  std::vector<size_t> stepViewOffset_;
  std::vector<std::span<std::byte>> scratch_;
  std::vector<TaskCompletion> completions_;
  std::vector<double> stepMs_;
  /// Work a device queue captured, by the first step of its run of steps,
  /// with the plan and every address and size the steps were bound to, so
  /// a frame whose memory moved, or another plan, captures again.
  struct Capture {
    std::string signature;
    std::vector<uintptr_t> bound;
    bool tried = false;  // recorded (work) or found not capturable (null)
    std::shared_ptr<CapturedWork> work;
  };
  std::map<int, Capture> captures_;
};

/// How execute() runs the steps.
struct ExecuteOptions {
  /// Follow the plan's edges with a task graph (needs Plan::hasEdges).
  bool parallel = false;
  /// Record per-step times in `timings`.
  bool profile = false;
  const SessionCallbacks* callbacks = nullptr;
  /// Shared by all requests of a session: exclusive steps lock it
  /// uniquely, other steps share it. Null when no step is exclusive.
  std::shared_mutex* exclusive = nullptr;
  std::vector<StepTiming>* timings = nullptr;
  /// Where mid-run host waits on asynchronous queues are recorded; may be
  /// null.
  std::vector<HostWait>* hostWaits = nullptr;
  /// The graph's scope in the profile (StepInfo::scope): "" for the
  /// session's graph.
  std::string scope;
  /// Capture runs of device steps and launch them (serial execution only).
  bool capture = false;
  /// Counts the steps run from captured work; may be null.
  size_t* replayedSteps = nullptr;
};

/// Where the nested graphs run by the step now running on this thread
/// report their steps' times, while a request is profiled.
struct NestedProfile {
  std::mutex* mutex = nullptr;
  std::vector<StepTiming>* timings = nullptr;
  std::string scope;  ///< The running step's scope and name, e.g. "If_0".
};

/// The running step's NestedProfile on this thread, or null when the
/// request is not profiled (NestedGraph::run reads it).
const NestedProfile* currentNestedProfile();

/// Runs the plan's steps on a bound frame. Returns the first failure.
Status execute(const Program& program, const Plan& plan, Frame& frame,
               const ExecuteOptions& options);

}  // namespace subgraph::runtime::engine
