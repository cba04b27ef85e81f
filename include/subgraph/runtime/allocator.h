//===- subgraph/runtime/allocator.h - Device memory allocators --*- C++ -*-===//
//
// Every device has one Allocator (the source of its memory) and, optionally,
// a best-fit-with-coalescing arena on top of it (BfcArena), which keeps freed
// chunks and hands them out again so that frames created and destroyed under
// load do not go back to the system each time. Both are thread-safe and both
// count bytes in use and the peak, which the session reports.
//
// Allocation failure is a value (a Status naming the device, the request and
// the limit), never an exception, because it happens while serving a request.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "subgraph/support/status.h"

namespace subgraph::runtime {

/// Counters every allocator keeps.
struct AllocatorStats {
  uint64_t bytesInUse = 0;      ///< Bytes handed out and not yet returned.
  uint64_t peakBytesInUse = 0;  ///< Largest bytesInUse seen.
  uint64_t numAllocations = 0;  ///< Successful allocate() calls.
  uint64_t bytesReserved = 0;   ///< Bytes held from the parent (arenas only).
};

/// The source of one device's memory.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// A short name for messages, e.g. "cpu:0" or "cpu:0/bfc".
  virtual const std::string& name() const = 0;
  /// Allocates `bytes` aligned to `alignment` (a power of two). A request of
  /// zero bytes returns a unique non-null pointer that must still be freed.
  virtual StatusOr<void*> allocate(size_t bytes, size_t alignment = 64) = 0;
  /// Returns memory from allocate(); null is ignored.
  virtual void deallocate(void* ptr) = 0;
  /// A snapshot of the counters.
  virtual AllocatorStats stats() const = 0;
};

/// Host memory from the system heap, with an optional cap on bytes in use.
class HostAllocator final : public Allocator {
 public:
  /// `limitBytes` of 0 means unlimited.
  explicit HostAllocator(std::string name = "cpu:0", uint64_t limitBytes = 0);
  ~HostAllocator() override;

  const std::string& name() const override { return name_; }
  StatusOr<void*> allocate(size_t bytes, size_t alignment = 64) override;
  void deallocate(void* ptr) override;
  AllocatorStats stats() const override;

 private:
  std::string name_;
  uint64_t limit_;
  mutable std::mutex mutex_;
  // Sizes of live blocks, so deallocate() can keep the counters exact.
  std::map<void*, size_t> live_;
  AllocatorStats stats_;
};

/// A best-fit-with-coalescing arena (the scheme of TensorFlow's and ONNX
/// Runtime's BFC allocators) over a parent allocator.
///
/// Invariants: memory is taken from the parent in regions that are never
/// returned until the arena dies; each region is tiled by chunks in address
/// order; two free chunks are never adjacent (they are merged on free); a
/// request is served by the smallest free chunk that fits, split when the
/// remainder is worth keeping.
class BfcArena final : public Allocator {
 public:
  /// `limitBytes` caps the bytes reserved from the parent (0: unlimited).
  /// Regions grow geometrically from `initialRegionBytes`.
  BfcArena(std::shared_ptr<Allocator> parent, uint64_t limitBytes = 0,
           size_t initialRegionBytes = size_t{1} << 20);
  ~BfcArena() override;

  const std::string& name() const override { return name_; }
  StatusOr<void*> allocate(size_t bytes, size_t alignment = 64) override;
  void deallocate(void* ptr) override;
  AllocatorStats stats() const override;
  /// Number of free chunks; tests use it to check coalescing.
  size_t numFreeChunks() const;

 private:
  struct Chunk {
    char* base = nullptr;
    size_t size = 0;
    bool inUse = false;
    size_t region = 0;
  };
  using ChunkMap = std::map<char*, Chunk>;
  Status growLocked(size_t minBytes);
  void insertFreeLocked(const Chunk& chunk);
  void eraseFreeLocked(const Chunk& chunk);

  std::shared_ptr<Allocator> parent_;
  std::string name_;
  uint64_t limit_;
  size_t nextRegionBytes_;
  mutable std::mutex mutex_;
  // Chunks by address, so neighbours are found in O(log n) for coalescing.
  ChunkMap chunks_;
  // Free chunks by (size, address): lower_bound gives the best fit.
  std::set<std::pair<size_t, char*>> free_;
  std::vector<std::pair<void*, size_t>> regions_;
  AllocatorStats stats_;
};

}  // namespace subgraph::runtime
