//===- subgraph/runtime/memory_planner.h - Offline memory planning -*- C++ -*-===//
//
// The memory of one device for one frame is planned before anything runs,
// following MNN's onAcquireBuffer/onReleaseBuffer/onAllocateBuffer idea: the
// session first records, in execution order, every acquire and release of a
// buffer, and only then allocates once, into a few merged blocks.
//
// Three memory modes (MNN's Backend::StorageType):
//  * kStatic: weights and prepacked constants. Live for the whole session,
//    never shared; all of them go into one static block allocated once.
//  * kDynamic: intermediate values. Buffers whose lifetimes do not overlap
//    share bytes; all of them go into one dynamic block per frame.
//  * kDynamicSeparate: planned per frame like kDynamic but never shares bytes
//    with another buffer and gets a block of its own. Graph outputs use it,
//    as in MNN, so they stay intact and readable after the run.
//
// Placement is "greedy by size" (TFLite's arena planner): buffers are placed
// largest first, each at the lowest offset that does not overlap any already
// placed buffer whose lifetime overlaps its own. O(n^2) in the number of
// dynamic buffers, which is a few thousand at most for real models.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "subgraph/support/status.h"

namespace subgraph::runtime {

/// How a planned buffer's memory is managed; see the file comment.
enum class MemoryMode : uint8_t { kStatic, kDynamic, kDynamicSeparate };

/// "static", "dynamic" or "dynamic-separate".
const char* memoryModeName(MemoryMode mode);

/// Where one planned buffer lives.
struct BufferPlacement {
  MemoryMode mode = MemoryMode::kDynamic;
  /// Index into MemoryPlan::blocks.
  uint32_t block = 0;
  size_t offset = 0;
  /// Requested size rounded up to the plan's alignment.
  size_t bytes = 0;
  /// Event indices [acquire, release]; release is the last event + 1 when
  /// the buffer was never released.
  uint32_t acquiredAt = 0;
  uint32_t releasedAt = 0;
  std::string label;
};

/// One contiguous allocation of the plan.
struct MemoryBlock {
  MemoryMode mode = MemoryMode::kDynamic;
  size_t bytes = 0;
};

/// The result of planning.
struct MemoryPlan {
  std::vector<BufferPlacement> buffers;  ///< Indexed by BufferId.
  std::vector<MemoryBlock> blocks;
  /// Largest sum of simultaneously live dynamic bytes: the lower bound any
  /// placement of the kDynamic buffers must reach.
  size_t peakDynamicBytes = 0;
  /// Size of the shared kDynamic block (>= peakDynamicBytes).
  size_t dynamicBlockBytes = 0;
  size_t staticBytes = 0;    ///< Sum of kStatic buffers.
  size_t separateBytes = 0;  ///< Sum of kDynamicSeparate buffers.
  /// Sum of every buffer's size: what allocating each value on its own
  /// would cost, for comparison.
  size_t unsharedBytes = 0;
  /// Bytes of all blocks together: what a frame (plus the static block)
  /// really allocates.
  size_t plannedBytes() const;
  /// Index of the kDynamic block, or -1 if there are no dynamic buffers.
  int dynamicBlock = -1;
  /// Index of the kStatic block, or -1 if there are no static buffers.
  int staticBlock = -1;
};

/// Records acquire/release events, then computes a MemoryPlan. Not
/// thread-safe; one planner plans one device for one frame signature.
class MemoryPlanner {
 public:
  using BufferId = uint32_t;

  /// `alignment` (a power of two) applies to every buffer's offset and size.
  explicit MemoryPlanner(size_t alignment = 64);

  /// Records that a buffer of `bytes` becomes live now. `label` names it in
  /// reports (usually the value name).
  BufferId acquire(size_t bytes, MemoryMode mode, std::string label = {});
  /// Records that buffer `id` is dead from now on. Releasing twice, or
  /// releasing a kStatic buffer, is an error reported by plan().
  void release(BufferId id);
  /// Number of events recorded so far (acquires plus releases).
  uint32_t numEvents() const { return nextEvent_; }

  /// Computes offsets for every buffer. Fails if an event was malformed.
  StatusOr<MemoryPlan> plan() const;

 private:
  size_t alignment_;
  uint32_t nextEvent_ = 0;
  std::vector<BufferPlacement> buffers_;
  std::vector<bool> released_;
  std::string firstError_;
};

}  // namespace subgraph::runtime
