//===- runtime/memory/memory_planner.cpp - Offline memory planning --------===//
//
// MemoryPlanner::plan(): static buffers laid end to end, separate buffers in
// blocks of their own, dynamic buffers placed greedy-by-size into one shared
// block. See subgraph/runtime/memory_planner.h for the contract.
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/memory_planner.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace subgraph::runtime {
namespace {

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

bool lifetimesOverlap(const BufferPlacement& a, const BufferPlacement& b) {
  return a.acquiredAt < b.releasedAt && b.acquiredAt < a.releasedAt;
}

}  // namespace

const char* memoryModeName(MemoryMode mode) {
  switch (mode) {
    case MemoryMode::kStatic: return "static";
    case MemoryMode::kDynamic: return "dynamic";
    case MemoryMode::kDynamicSeparate: return "dynamic-separate";
  }
  return "?";
}

size_t MemoryPlan::plannedBytes() const {
  size_t total = 0;
  for (const MemoryBlock& b : blocks) total += b.bytes;
  return total;
}

MemoryPlanner::MemoryPlanner(size_t alignment) : alignment_(alignment ? alignment : 1) {}

MemoryPlanner::BufferId MemoryPlanner::acquire(size_t bytes, MemoryMode mode, std::string label) {
  BufferPlacement b;
  b.mode = mode;
  b.bytes = roundUp(bytes, alignment_);
  b.acquiredAt = nextEvent_++;
  b.releasedAt = std::numeric_limits<uint32_t>::max();
  b.label = std::move(label);
  buffers_.push_back(std::move(b));
  released_.push_back(false);
  return static_cast<BufferId>(buffers_.size() - 1);
}

void MemoryPlanner::release(BufferId id) {
  if (id >= buffers_.size()) {
    if (firstError_.empty())
      firstError_ = "memory planner: release of unknown buffer " + std::to_string(id);
    return;
  }
  if (released_[id] || buffers_[id].mode == MemoryMode::kStatic) {
    if (firstError_.empty())
      firstError_ = "memory planner: buffer '" + buffers_[id].label + "' (" +
                    memoryModeName(buffers_[id].mode) +
                    (released_[id] ? ") released twice" : ") cannot be released");
    return;
  }
  released_[id] = true;
  buffers_[id].releasedAt = nextEvent_++;
}

StatusOr<MemoryPlan> MemoryPlanner::plan() const {
  if (!firstError_.empty()) return Status(StatusCode::kInternal, firstError_);
  MemoryPlan plan;
  plan.buffers = buffers_;
  const uint32_t end = nextEvent_ + 1;
  for (BufferPlacement& b : plan.buffers) {
    if (b.releasedAt == std::numeric_limits<uint32_t>::max()) b.releasedAt = end;
    plan.unsharedBytes += b.bytes;
  }

  // Static buffers: one block, end to end, since they all live forever.
  size_t staticOffset = 0;
  for (BufferPlacement& b : plan.buffers) {
    if (b.mode != MemoryMode::kStatic) continue;
    b.offset = staticOffset;
    staticOffset += b.bytes;
  }
  if (staticOffset > 0 || std::any_of(plan.buffers.begin(), plan.buffers.end(),
                                      [](auto& b) { return b.mode == MemoryMode::kStatic; })) {
    plan.staticBlock = static_cast<int>(plan.blocks.size());
    plan.blocks.push_back({MemoryMode::kStatic, staticOffset});
    plan.staticBytes = staticOffset;
    for (BufferPlacement& b : plan.buffers)
      if (b.mode == MemoryMode::kStatic) b.block = static_cast<uint32_t>(plan.staticBlock);
  }

  // Separate buffers: a block each.
  for (BufferPlacement& b : plan.buffers) {
    if (b.mode != MemoryMode::kDynamicSeparate) continue;
    b.block = static_cast<uint32_t>(plan.blocks.size());
    b.offset = 0;
    plan.blocks.push_back({MemoryMode::kDynamicSeparate, b.bytes});
    plan.separateBytes += b.bytes;
  }

  // Dynamic buffers: greedy by size. Largest first, each at the smallest gap
  // between already placed, lifetime-overlapping buffers that fits it.
  std::vector<size_t> order;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].mode == MemoryMode::kDynamic) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return plan.buffers[a].bytes > plan.buffers[b].bytes;
  });
  std::vector<size_t> placed;
  size_t blockBytes = 0;
  std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of conflicting buffers
  for (size_t i : order) {
    BufferPlacement& b = plan.buffers[i];
    busy.clear();
    for (size_t j : placed) {
      const BufferPlacement& o = plan.buffers[j];
      if (lifetimesOverlap(b, o)) busy.emplace_back(o.offset, o.offset + o.bytes);
    }
    std::sort(busy.begin(), busy.end());
    size_t bestOffset = 0, bestGap = std::numeric_limits<size_t>::max();
    size_t cursor = 0;
    bool found = false;
    for (auto [lo, hi] : busy) {
      if (lo > cursor && lo - cursor >= b.bytes && lo - cursor < bestGap) {
        bestGap = lo - cursor;
        bestOffset = cursor;
        found = true;
      }
      cursor = std::max(cursor, hi);
    }
    b.offset = found ? bestOffset : cursor;
    blockBytes = std::max(blockBytes, b.offset + b.bytes);
    placed.push_back(i);
  }
  if (!order.empty()) {
    plan.dynamicBlock = static_cast<int>(plan.blocks.size());
    plan.blocks.push_back({MemoryMode::kDynamic, blockBytes});
    for (size_t i : order) plan.buffers[i].block = static_cast<uint32_t>(plan.dynamicBlock);
  }
  plan.dynamicBlockBytes = blockBytes;

  // Peak of simultaneously live dynamic bytes, by sweeping the events.
  std::vector<std::pair<uint32_t, int64_t>> deltas;
  for (const BufferPlacement& b : plan.buffers) {
    if (b.mode != MemoryMode::kDynamic) continue;
    deltas.emplace_back(b.acquiredAt, static_cast<int64_t>(b.bytes));
    deltas.emplace_back(b.releasedAt, -static_cast<int64_t>(b.bytes));
  }
  // At equal times releases come first: a release and an acquire never share
  // an event index, except the synthetic end, where only releases happen.
  std::sort(deltas.begin(), deltas.end());
  int64_t live = 0, peak = 0;
  for (auto [t, d] : deltas) {
    live += d;
    peak = std::max(peak, live);
  }
  plan.peakDynamicBytes = static_cast<size_t>(peak);
  return plan;
}

}  // namespace subgraph::runtime
