//===- runtime/memory/bfc_arena.cpp - Best-fit-with-coalescing arena ------===//
//
// BfcArena: see subgraph/runtime/allocator.h for the invariants. Chunks are
// kept in an address-ordered map (for neighbour lookup when coalescing) and
// free chunks additionally in a (size, address) set (for best-fit lookup),
// so allocate and free are both O(log n).
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "subgraph/runtime/allocator.h"

namespace subgraph::runtime {
namespace {

constexpr size_t kGranule = 64;

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

BfcArena::BfcArena(std::shared_ptr<Allocator> parent, uint64_t limitBytes,
                   size_t initialRegionBytes)
    : parent_(std::move(parent)),
      name_(parent_->name() + "/bfc"),
      limit_(limitBytes),
      nextRegionBytes_(std::max<size_t>(initialRegionBytes, kGranule)) {}

BfcArena::~BfcArena() {
  for (auto& [ptr, size] : regions_) parent_->deallocate(ptr);
}

void BfcArena::insertFreeLocked(const Chunk& chunk) { free_.emplace(chunk.size, chunk.base); }
void BfcArena::eraseFreeLocked(const Chunk& chunk) { free_.erase({chunk.size, chunk.base}); }

Status BfcArena::growLocked(size_t minBytes) {
  size_t bytes = std::max(nextRegionBytes_, roundUp(minBytes, kGranule));
  if (limit_ != 0 && stats_.bytesReserved + bytes > limit_) {
    // Fall back to exactly what is needed before giving up.
    bytes = roundUp(minBytes, kGranule);
    if (stats_.bytesReserved + bytes > limit_)
      return Status::error(StatusCode::kLimitExceeded,
                           name_ + ": a " + std::to_string(minBytes) +
                               "-byte request would exceed the arena limit of " +
                               std::to_string(limit_) + " bytes (" +
                               std::to_string(stats_.bytesReserved) + " reserved)");
  }
  StatusOr<void*> region = parent_->allocate(bytes, kGranule);
  if (!region.isOk()) return region.status();
  char* base = static_cast<char*>(region.value());
  Chunk chunk{base, bytes, false, regions_.size()};
  regions_.emplace_back(base, bytes);
  chunks_.emplace(base, chunk);
  insertFreeLocked(chunk);
  stats_.bytesReserved += bytes;
  // Geometric growth keeps the number of regions logarithmic in the total.
  nextRegionBytes_ = std::max(nextRegionBytes_, bytes) * 2;
  return Status::ok();
}

StatusOr<void*> BfcArena::allocate(size_t bytes, size_t alignment) {
  if (alignment == 0 || alignment > kGranule || (alignment & (alignment - 1)) != 0)
    return Status::invalid(name_ + ": alignment must be a power of two up to 64, got " +
                           std::to_string(alignment));
  size_t need = roundUp(std::max<size_t>(bytes, 1), kGranule);
  std::lock_guard<std::mutex> lock(mutex_);
  auto fit = free_.lower_bound({need, nullptr});
  if (fit == free_.end()) {
    SUBGRAPH_RETURN_IF_ERROR(growLocked(need));
    fit = free_.lower_bound({need, nullptr});
  }
  Chunk& chunk = chunks_.at(fit->second);
  eraseFreeLocked(chunk);
  // Split off the remainder as a free chunk; chunks are multiples of the
  // granule, so any remainder is usable.
  if (chunk.size > need) {
    Chunk rest{chunk.base + need, chunk.size - need, false, chunk.region};
    chunk.size = need;
    chunks_.emplace(rest.base, rest);
    insertFreeLocked(rest);
  }
  chunk.inUse = true;
  stats_.bytesInUse += chunk.size;
  stats_.peakBytesInUse = std::max(stats_.peakBytesInUse, stats_.bytesInUse);
  ++stats_.numAllocations;
  return static_cast<void*>(chunk.base);
}

void BfcArena::deallocate(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = chunks_.find(static_cast<char*>(ptr));
  if (it == chunks_.end() || !it->second.inUse) return;
  it->second.inUse = false;
  stats_.bytesInUse -= it->second.size;
  // Merge with the next chunk if it is free and in the same region.
  auto next = std::next(it);
  if (next != chunks_.end() && !next->second.inUse && next->second.region == it->second.region &&
      it->second.base + it->second.size == next->second.base) {
    eraseFreeLocked(next->second);
    it->second.size += next->second.size;
    chunks_.erase(next);
  }
  // Merge into the previous chunk likewise.
  if (it != chunks_.begin()) {
    auto prev = std::prev(it);
    if (!prev->second.inUse && prev->second.region == it->second.region &&
        prev->second.base + prev->second.size == it->second.base) {
      eraseFreeLocked(prev->second);
      prev->second.size += it->second.size;
      chunks_.erase(it);
      it = prev;
    }
  }
  insertFreeLocked(it->second);
}

AllocatorStats BfcArena::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

size_t BfcArena::numFreeChunks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

}  // namespace subgraph::runtime
