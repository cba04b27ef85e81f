//===- runtime/memory/host_allocator.cpp - System heap allocator ----------===//
//
// HostAllocator: aligned host memory from the system heap, with exact byte
// counters and an optional cap on the bytes in use.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <new>

#include "subgraph/runtime/allocator.h"

namespace subgraph::runtime {

HostAllocator::HostAllocator(std::string name, uint64_t limitBytes)
    : name_(std::move(name)), limit_(limitBytes) {}

HostAllocator::~HostAllocator() {
  // Anything still live leaked from its owner; free it so the process
  // does not, and keep the counters honest for whoever reads them last.
  for (auto& [ptr, size] : live_) ::operator delete (ptr, std::align_val_t{64});
}

StatusOr<void*> HostAllocator::allocate(size_t bytes, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return Status::invalid(name_ + ": alignment " + std::to_string(alignment) +
                           " is not a power of two");
  // Every block uses one alignment so deallocate() needs no per-block
  // record of it; 64 covers cache lines and AVX-512.
  if (alignment > 64)
    return Status::error(StatusCode::kUnsupported,
                         name_ + ": alignment above 64 bytes is not supported");
  std::lock_guard<std::mutex> lock(mutex_);
  if (limit_ != 0 && stats_.bytesInUse + bytes > limit_)
    return Status::error(StatusCode::kLimitExceeded,
                         name_ + ": allocating " + std::to_string(bytes) +
                             " bytes would exceed the " + std::to_string(limit_) + "-byte limit (" +
                             std::to_string(stats_.bytesInUse) + " in use)");
  void* ptr = ::operator new (std::max<size_t>(bytes, 1), std::align_val_t{64}, std::nothrow);
  if (!ptr)
    return Status::error(StatusCode::kLimitExceeded,
                         name_ + ": the system refused " + std::to_string(bytes) + " bytes");
  live_.emplace(ptr, bytes);
  stats_.bytesInUse += bytes;
  stats_.peakBytesInUse = std::max(stats_.peakBytesInUse, stats_.bytesInUse);
  ++stats_.numAllocations;
  return ptr;
}

void HostAllocator::deallocate(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;  // Not ours; never free foreign memory.
  stats_.bytesInUse -= it->second;
  live_.erase(it);
  ::operator delete (ptr, std::align_val_t{64});
}

AllocatorStats HostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace subgraph::runtime
