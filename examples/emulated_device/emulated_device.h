//===- examples/emulated_device/emulated_device.h - An accelerator on the CPU -*- C++ -*-===//
//
// EmulatedDevice: the device of backend `emudev`, an accelerator emulated on
// the host CPU so that CI can exercise the host's device path (plugin ABI
// 3) without a GPU. It is built to make a runtime bug fail loudly rather
// than compute plausible numbers:
//  * Its memory cannot be read by the host. allocate() hands out addresses
//    in a range reserved with PROT_NONE, so a host that dereferences a
//    device pointer dies with SIGSEGV. The bytes live in a separate host
//    buffer per allocation, which the device side reaches through
//    translate(); a pointer that is in no live allocation (a host pointer
//    given to a kernel: a missing copy) or a range that runs past one is an
//    error. Addresses are never reused, so a use after free is caught too,
//    and fresh memory reads as 0xFF bytes (NaN).
//  * Every queue has its own worker thread that runs the queue's tasks in
//    submission order, so the host really is asynchronous with the device:
//    a missing synchronize or event wait shows as a race.
//  * copyToHost fills the destination with 0xFF (NaN) when it is
//    submitted and writes the real bytes only when the queue gets to it,
//    so a host that reads an output before waiting sees NaNs. Bytes that
//    an earlier queued copyToDevice has yet to read are poisoned only once
//    it has read them: reusing a host buffer in queue order is legal.
//
// Invariants: every live allocation is one entry of blocks_, inside the
// reserved range, and no two overlap; a task is run by exactly one worker,
// and a queue's error is the first error of its tasks since it was last
// reported by synchronize().
//
//===----------------------------------------------------------------------===//
#pragma once

#include <subgraph/sdk/plugin.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace subgraph::emudev {

/// Device memory, queues and events of an accelerator emulated on the CPU.
/// Thread-safe: every member may be called from any thread.
class EmulatedDevice final : public sdk::AcceleratorDevice {
 public:
  /// How the device behaves.
  struct Options {
    /// Bytes of live allocations beyond which allocate() returns null; 0
    /// for no limit but the reserved address range.
    size_t capacityBytes = 0;
    /// Which emulated device it is (emu:<id>).
    int id = 0;
  };

  /// A device with `options`. Reserves no memory until the first allocate.
  explicit EmulatedDevice(Options options);
  /// A device with default options.
  EmulatedDevice() : EmulatedDevice(Options{}) {}
  /// Drains and joins every queue still alive, then frees the address range.
  ~EmulatedDevice() override;
  EmulatedDevice(const EmulatedDevice&) = delete;
  EmulatedDevice& operator=(const EmulatedDevice&) = delete;

  /// "emu".
  std::string kind() const override { return "emu"; }
  /// Options::id.
  int id() const override { return options_.id; }
  /// What `subgraph plugins` shows for the device.
  std::string description() const override;

  /// An address range of `bytes` that the host cannot read, aligned to
  /// `alignment` (at least 64); null beyond the capacity, for an alignment
  /// that is not a power of two, or when the reserved range is used up.
  void* allocate(size_t bytes, size_t alignment) override;
  /// Frees an allocation; a pointer allocate() did not return is ignored.
  /// Work still queued that reads the allocation fails in translate().
  void deallocate(void* ptr) override;

  /// A queue with its own worker thread.
  sdk::Queue createQueue() override;
  /// Runs what is queued, then stops and joins the worker; an error the
  /// queue still holds is dropped. An unknown queue is ignored.
  void destroyQueue(sdk::Queue queue) override;
  /// Waits until the queue is empty and idle; throws (and forgets) the
  /// first error of its tasks since the last synchronize.
  void synchronize(sdk::Queue queue) override;

  /// A new event, not yet recorded.
  void* createEvent() override;
  /// Destroys an event; work waiting for it keeps it alive until then.
  void destroyEvent(void* event) override;
  /// Marks the point of `queue` reached once its work so far has run.
  void record(void* event, sdk::Queue queue) override;
  /// Blocks until the event's last recorded point is reached (at once if
  /// it was never recorded); throws an error the queue had by then.
  void synchronizeEvent(void* event) override;
  /// Makes `queue`'s later work wait for the event's last recorded point,
  /// without blocking the caller.
  void waitEvent(sdk::Queue queue, void* event) override;
  /// Milliseconds between the points two events reached; negative when
  /// either has not reached its last recorded point.
  double elapsedMs(void* start, void* end) override;

  /// Submits a copy of host `src` into device `dst` (same byte count).
  void copyToDevice(sdk::Queue queue, const sdk::Tensor& src, const sdk::Tensor& dst) override;
  /// Fills host `dst` with 0xFF now and submits the copy from device `src`.
  void copyToHost(sdk::Queue queue, const sdk::Tensor& src, const sdk::Tensor& dst) override;
  /// Submits a copy between two device buffers.
  void copyOnDevice(sdk::Queue queue, const sdk::Tensor& src, const sdk::Tensor& dst) override;

  /// Captures are recorded replays: work pushed to a queue being captured
  /// is kept, not run, and a launch pushes copies of the kept tasks again.
  bool canCapture() const override { return true; }
  /// Starts recording `queue`'s work. Events and host copies on it are
  /// refused until endCapture (a capture holds device work only).
  void beginCapture(sdk::Queue queue) override;
  /// Stops recording; returns the recorded work.
  void* endCapture(sdk::Queue queue) override;
  /// Pushes the recorded work of `graph` to `queue` again.
  void launch(void* graph, sdk::Queue queue) override;
  /// Forgets a graph.
  void destroyGraph(void* graph) override;
  /// Graphs launched so far (tests).
  uint64_t launches() const { return launches_.load(); }

  // --- The device side, for kernels and tests ---

  /// Appends `task` to `queue`; it runs on the queue's worker after
  /// everything submitted before it. An exception it throws becomes the
  /// queue's error (if it has none yet). Throws for an unknown queue.
  void submit(sdk::Queue queue, std::function<void()> task);
  /// The host bytes backing device range [ptr, ptr + bytes), kept alive by
  /// the returned pointer even if the allocation is freed meanwhile; null
  /// for 0 bytes. Throws sdk::Error("emudev: <what> is not device memory
  /// (...)") unless the range lies inside one live allocation.
  std::shared_ptr<std::byte> translate(const void* ptr, size_t bytes,
                                       const std::string& what) const;
  /// True if `ptr` lies in the reserved range: device memory, live or not.
  bool isDeviceAddress(const void* ptr) const;
  /// Bytes of live allocations.
  size_t allocatedBytes() const;

 private:
  struct QueueState;
  struct EventState;
  /// Recorded work: the tasks a capture kept, in order.
  struct Graph {
    std::vector<std::function<void()>> tasks;
  };
  class HostCopies;
  class HostCopyDone;

  std::shared_ptr<QueueState> findQueue(sdk::Queue queue) const;
  std::shared_ptr<EventState> findEvent(void* event) const;
  void reserveAddressRange();
  void checkHostMemory(const sdk::Tensor& t, const char* what) const;
  /// Throws if `queue` is being captured: `what` cannot be recorded.
  void refuseWhileCapturing(sdk::Queue queue, const char* what) const;
  /// Submits the task of host copy `copy`, or unregisters the copy if it
  /// cannot be submitted.
  void submitOrForget(sdk::Queue queue, uint64_t copy, std::function<void()> task);

  const Options options_;

  // The reserved range [base_, base_ + reserved_) and its bump pointer.
  // Addresses are handed out once and never again, so a stale pointer
  // can never alias a later allocation.
  uintptr_t base_ = 0;
  size_t reserved_ = 0;
  size_t next_ = 0;

  /// One allocation: its size and the host bytes that stand for it.
  struct Block {
    size_t size = 0;
    std::shared_ptr<std::byte[]> bytes;
  };
  // Ordered by base address, so translate() finds the block holding an
  // address with one upper_bound.
  mutable std::mutex memoryMutex_;
  std::map<uintptr_t, Block> blocks_;
  size_t allocated_ = 0;

  // Host ranges of queued copies, for poisoning destinations.
  std::unique_ptr<HostCopies> hostCopies_;

  mutable std::mutex handleMutex_;
  std::map<void*, std::shared_ptr<QueueState>> queues_;
  std::map<void*, std::shared_ptr<EventState>> events_;
  std::map<void*, std::shared_ptr<Graph>> graphs_;
  std::atomic<uint64_t> launches_{0};
};

}  // namespace subgraph::emudev
