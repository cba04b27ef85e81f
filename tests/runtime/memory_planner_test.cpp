//===- tests/runtime/memory_planner_test.cpp - MemoryPlanner and allocators -===//
//
// Checks the offline planner (liveness-based reuse, peak, modes, misuse) and
// the allocators under it (HostAllocator limits, BfcArena best fit and
// coalescing), including a randomized placement check against a brute-force
// overlap oracle.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "subgraph/runtime/allocator.h"
#include "subgraph/runtime/memory_planner.h"

namespace subgraph::runtime {
namespace {

bool overlapsInTime(const BufferPlacement& a, const BufferPlacement& b) {
  return a.acquiredAt < b.releasedAt && b.acquiredAt < a.releasedAt;
}
bool overlapsInSpace(const BufferPlacement& a, const BufferPlacement& b) {
  return a.block == b.block && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

/// Three values in a chain a -> b -> c: a dies when c is born, so c reuses a's bytes.
TEST(MemoryPlannerTest, ChainReusesDeadBuffer) {
  MemoryPlanner planner(64);
  auto a = planner.acquire(1000, MemoryMode::kDynamic, "a");
  auto b = planner.acquire(1000, MemoryMode::kDynamic, "b");
  planner.release(a);
  auto c = planner.acquire(1000, MemoryMode::kDynamic, "c");
  planner.release(b);
  planner.release(c);
  StatusOr<MemoryPlan> plan = planner.plan();
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  EXPECT_EQ(plan->buffers[a].offset, plan->buffers[c].offset);
  EXPECT_NE(plan->buffers[a].offset, plan->buffers[b].offset);
  EXPECT_EQ(plan->peakDynamicBytes, 2048u);  // 1000 rounds up to 1024
  EXPECT_EQ(plan->dynamicBlockBytes, 2048u);
  EXPECT_EQ(plan->unsharedBytes, 3 * 1024u);
}

/// Static buffers never share and sit in their own block; separate buffers get a block each.
TEST(MemoryPlannerTest, ModesGetTheirOwnBlocks) {
  MemoryPlanner planner(64);
  auto w1 = planner.acquire(128, MemoryMode::kStatic, "w1");
  auto w2 = planner.acquire(64, MemoryMode::kStatic, "w2");
  auto out = planner.acquire(256, MemoryMode::kDynamicSeparate, "out");
  auto tmp = planner.acquire(512, MemoryMode::kDynamic, "tmp");
  planner.release(tmp);
  StatusOr<MemoryPlan> plan = planner.plan();
  ASSERT_TRUE(plan.isOk());
  EXPECT_EQ(plan->staticBytes, 192u);
  EXPECT_EQ(plan->separateBytes, 256u);
  EXPECT_EQ(plan->dynamicBlockBytes, 512u);
  EXPECT_EQ(plan->blocks.size(), 3u);
  EXPECT_FALSE(overlapsInSpace(plan->buffers[w1], plan->buffers[w2]));
  EXPECT_NE(plan->buffers[out].block, plan->buffers[tmp].block);
  EXPECT_EQ(plan->plannedBytes(), 192u + 256u + 512u);
}

/// Releasing twice or releasing static memory is reported, not ignored.
TEST(MemoryPlannerTest, RejectsDoubleReleaseAndStaticRelease) {
  MemoryPlanner planner;
  auto a = planner.acquire(8, MemoryMode::kDynamic, "a");
  planner.release(a);
  planner.release(a);
  StatusOr<MemoryPlan> plan = planner.plan();
  ASSERT_FALSE(plan.isOk());
  EXPECT_NE(plan.status().message().find("'a'"), std::string::npos);
  EXPECT_NE(plan.status().message().find("released twice"), std::string::npos);

  MemoryPlanner planner2;
  auto w = planner2.acquire(8, MemoryMode::kStatic, "w");
  planner2.release(w);
  EXPECT_FALSE(planner2.plan().isOk());
}

/// Random acquire/release sequences: no two buffers live at the same time
/// overlap in memory, and the block is never smaller than the live peak.
TEST(MemoryPlannerTest, RandomizedPlacementNeverOverlapsLiveBuffers) {
  unsigned seed = std::random_device{}();
  std::printf("RandomizedPlacementNeverOverlapsLiveBuffers seed=%u\n", seed);
  std::mt19937 rng(seed);
  for (int round = 0; round < 50; ++round) {
    MemoryPlanner planner(64);
    std::vector<MemoryPlanner::BufferId> live;
    int events = 20 + static_cast<int>(rng() % 100);
    for (int e = 0; e < events; ++e) {
      if (!live.empty() && rng() % 3 == 0) {
        size_t i = rng() % live.size();
        planner.release(live[i]);
        live.erase(live.begin() + static_cast<long>(i));
      } else {
        live.push_back(planner.acquire(1 + rng() % 5000, MemoryMode::kDynamic));
      }
    }
    StatusOr<MemoryPlan> plan = planner.plan();
    ASSERT_TRUE(plan.isOk()) << "seed=" << seed;
    const auto& bufs = plan->buffers;
    for (size_t i = 0; i < bufs.size(); ++i) {
      EXPECT_LE(bufs[i].offset + bufs[i].bytes, plan->dynamicBlockBytes) << "seed=" << seed;
      for (size_t j = i + 1; j < bufs.size(); ++j) {
        if (!overlapsInTime(bufs[i], bufs[j])) continue;
        ASSERT_FALSE(overlapsInSpace(bufs[i], bufs[j]))
            << "seed=" << seed << " buffers " << i << " and " << j;
      }
    }
    EXPECT_GE(plan->dynamicBlockBytes, plan->peakDynamicBytes) << "seed=" << seed;
  }
}

/// The host allocator enforces its cap with a message naming it.
TEST(AllocatorTest, HostAllocatorLimit) {
  HostAllocator alloc("cpu:0", 1000);
  StatusOr<void*> a = alloc.allocate(600);
  ASSERT_TRUE(a.isOk());
  StatusOr<void*> b = alloc.allocate(600);
  ASSERT_FALSE(b.isOk());
  EXPECT_EQ(b.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(b.status().message().find("1000-byte limit"), std::string::npos);
  alloc.deallocate(a.value());
  EXPECT_EQ(alloc.stats().bytesInUse, 0u);
  EXPECT_EQ(alloc.stats().peakBytesInUse, 600u);
}

/// Freed neighbours merge back into one chunk, and a freed chunk is reused.
TEST(AllocatorTest, BfcArenaCoalescesAndReuses) {
  auto host = std::make_shared<HostAllocator>();
  BfcArena arena(host, 0, 4096);
  void* a = arena.allocate(1024).value();
  void* b = arena.allocate(1024).value();
  void* c = arena.allocate(1024).value();
  EXPECT_EQ(arena.numFreeChunks(), 1u);  // the tail
  arena.deallocate(b);
  EXPECT_EQ(arena.numFreeChunks(), 2u);
  arena.deallocate(a);
  EXPECT_EQ(arena.numFreeChunks(), 2u);  // a merged with b
  void* d = arena.allocate(2000).value();
  EXPECT_EQ(d, a);  // best fit is the merged a+b chunk
  arena.deallocate(c);
  arena.deallocate(d);
  EXPECT_EQ(arena.numFreeChunks(), 1u);
  EXPECT_EQ(arena.stats().bytesInUse, 0u);
  EXPECT_EQ(host->stats().bytesInUse, 4096u);  // the region is kept
}

/// An arena over its limit fails cleanly instead of growing.
TEST(AllocatorTest, BfcArenaLimit) {
  BfcArena arena(std::make_shared<HostAllocator>(), 8192, 4096);
  ASSERT_TRUE(arena.allocate(4096).isOk());
  ASSERT_TRUE(arena.allocate(4096).isOk());
  StatusOr<void*> over = arena.allocate(64);
  ASSERT_FALSE(over.isOk());
  EXPECT_EQ(over.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(over.status().message().find("arena limit of 8192"), std::string::npos);
}

}  // namespace
}  // namespace subgraph::runtime
