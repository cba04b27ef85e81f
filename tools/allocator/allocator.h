//===- allocator.h - Which heap allocator this program runs on -*- C++ -*-===//
//
// Programs link subgraph_allocator (tools/allocator/CMakeLists.txt says
// why); this names the allocator that actually serves malloc, so that
// `subgraph --version` and benchmark reports say what they ran on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <thread>

namespace subgraph {

/// The allocator serving malloc in this process: "mimalloc 2.0.9" when
/// mimalloc replaced it, else "system malloc". Probes with one allocation,
/// so a build that links mimalloc but does not get to replace malloc (a
/// preloaded allocator wins) says so rather than what was linked.
std::string heapAllocatorName();

/// Faults in fresh heap memory on a helper thread while the calling
/// thread allocates it, so that the kernel's zeroing of new pages (a
/// large share of loading and partitioning a graph of 10^6 nodes, and far
/// more on a virtual machine whose host backs memory lazily) runs on
/// another core. It reserves a mimalloc arena of `bytes` (address space
/// only), which mimalloc then takes its segments from, front to back, and
/// the helper populates it (MADV_POPULATE_WRITE, which leaves contents
/// alone) at most kAheadBytes past the end of the last block mimalloc has
/// taken: the process holds no more memory it did not ask for than that
/// and the rest of the block in use. It does nothing without mimalloc 2.0
/// (whose arena layout it reads; Debian bookworm has 2.0.9), below
/// kMinBytes, where the kernel lacks MADV_POPULATE_WRITE (Linux < 5.14),
/// where the arena cannot be reserved, under a limit on address space or
/// data (RLIMIT_AS, RLIMIT_DATA), or with SUBGRAPH_HEAP_PREFAULT=0.
/// Stops and joins on destruction.
class HeapPrefault {
 public:
  /// Smaller phases are not worth a thread.
  static constexpr size_t kMinBytes = size_t{64} << 20;
  /// How far the helper may run past the blocks mimalloc has taken.
  static constexpr size_t kAheadBytes = size_t{16} << 20;

  /// Starts the helper for a phase that will allocate up to about `bytes`
  /// (an overestimate costs address space only).
  explicit HeapPrefault(size_t bytes);
  ~HeapPrefault();
  HeapPrefault(const HeapPrefault&) = delete;
  HeapPrefault& operator=(const HeapPrefault&) = delete;

  /// True if a helper runs (or ran) for this phase.
  bool active() const { return thread_.joinable(); }
  /// Bytes the helper has populated so far.
  size_t populatedBytes() const { return populated_.load(std::memory_order_relaxed); }

 private:
  void populate(char* area, size_t size);

  std::atomic<bool> stop_{false};
  std::atomic<size_t> populated_{0};
  std::thread thread_;
};

}  // namespace subgraph
