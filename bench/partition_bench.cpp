//===- bench/partition_bench.cpp - Partitioner scaling benchmark ----------===//
//
// Partitions the zoo's synthetic residual and transformer graphs of 10^3 to
// 10^6 nodes with 0%, 10% and 30% unsupported nodes, for the built-in
// `convbnrelu` backend (the Conv -> BatchNormalization -> optional Relu
// pattern selector).
//
// Reported per configuration, besides CPU time: nodes, regions, the page
// faults and kernel time inside the timed calls, and heap use per node,
// measured in one extra untimed run with a counting operator new (below):
// bytes_per_node is the peak on top of the input graph,
// working_bytes_per_node the part of it that is neither input nor result
// (the region bodies the result holds). Run it through
// bench/partition_scaling.py, which derives the log-log slope and writes
// docs/benchmarks.md.
//
// Only the partitioning is timed: each iteration partitions a fresh clone
// made while the timer is paused, since partitioning rewrites the graph.
//
//===----------------------------------------------------------------------===//
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>

#include "allocator.h"
#include "subgraph/partition/partitioner.h"
#include "subgraph/zoo/zoo.h"

namespace {

// Heap accounting for peak-memory figures: live bytes (by usable size, so
// frees balance allocations exactly) and the high-water mark since the
// last resetPeak(). Relaxed atomics: the benchmark is single-threaded and
// only needs the counts to be exact, not ordered.
std::atomic<int64_t> gLive{0};
std::atomic<int64_t> gPeak{0};
// Counting costs a malloc_usable_size per call, so it is on only for the
// one untimed run per configuration that measures memory. Frees of blocks
// allocated before counting began are subtracted too, which is right: the
// figures are differences, and freed input nodes do lower the heap.
std::atomic<bool> gCounting{false};

void noteAlloc(void* p) {
  if (!p || !gCounting.load(std::memory_order_relaxed)) return;
  int64_t now =
      gLive.fetch_add(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed) +
      static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = gPeak.load(std::memory_order_relaxed);
  while (now > peak && !gPeak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void noteFree(void* p) {
  if (p && gCounting.load(std::memory_order_relaxed))
    gLive.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
}

void resetPeak() { gPeak.store(gLive.load(std::memory_order_relaxed), std::memory_order_relaxed); }

}  // namespace

// The replacements pair malloc with free by design; GCC, seeing through
// the inlined operators, would call that a new/free mismatch.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(size_t size) {
  void* p = std::malloc(size ? size : 1);
  if (!p) throw std::bad_alloc();
  noteAlloc(p);
  return p;
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, std::align_val_t align) {
  void* p = std::aligned_alloc(static_cast<size_t>(align), (size + static_cast<size_t>(align) - 1) &
                                                               ~(static_cast<size_t>(align) - 1));
  if (!p) throw std::bad_alloc();
  noteAlloc(p);
  return p;
}
void* operator new[](size_t size, std::align_val_t align) { return operator new(size, align); }
void operator delete(void* p) noexcept {
  noteFree(p);
  std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, size_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t) noexcept { operator delete(p); }
void operator delete(void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { operator delete(p); }

namespace {

using subgraph::Graph;
namespace partition = subgraph::partition;
namespace zoo = subgraph::zoo;

// One prototype graph per configuration, built once: building 10^6 nodes
// takes longer than partitioning them.
const Graph& prototype(zoo::SyntheticShape shape, int64_t nodes, int unsupportedPercent) {
  static std::map<std::tuple<int, int64_t, int>, std::unique_ptr<Graph>> cache;
  auto key = std::make_tuple(static_cast<int>(shape), nodes, unsupportedPercent);
  auto it = cache.find(key);
  if (it == cache.end()) {
    cache.clear();  // keep one 10^6-node graph in memory at a time
    zoo::SyntheticOptions options;
    options.nodes = nodes;
    options.shape = shape;
    options.unsupportedFraction = unsupportedPercent / 100.0;
    it = cache.emplace(key, zoo::buildSynthetic(options).value()).first;
  }
  return *it->second;
}

// Heap figures of one partitioning run, in bytes.
struct HeapUse {
  int64_t peakExtra = 0;  // peak over the heap before the call
  int64_t growth = 0;     // heap after the call (graph + report) minus before
};

HeapUse measureHeap(const Graph& proto) {
  std::unique_ptr<Graph> graph = proto.clone();
  auto backends = partition::instantiateBackends({"convbnrelu"}).value();
  gCounting = true;
  int64_t before = gLive.load();
  resetPeak();
  auto report = partition::partitionGraph(*graph, backends);
  HeapUse use{gPeak.load() - before, gLive.load() - before};
  gCounting = false;
  return use;
}

void BM_Partition(benchmark::State& state, zoo::SyntheticShape shape) {
  const int64_t nodes = state.range(0);
  const int unsupported = static_cast<int>(state.range(1));
  partition::registerBuiltinBackends();
  const Graph& proto = prototype(shape, nodes, unsupported);
  const HeapUse heap = measureHeap(proto);
  size_t regions = 0;
  // Page faults and kernel time inside the timed call, per iteration: how
  // much of a large graph's time is the kernel zeroing fresh pages rather
  // than partitioning (measured: about 9,000 faults and 12-16 ms of a
  // 10^6-node residual run; none at 10^4, where the heap is reused).
  double faults = 0, iterations = 0, kernelMs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Graph> graph = proto.clone();
    auto backends = partition::instantiateBackends({"convbnrelu"}).value();
    state.ResumeTiming();
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    auto report = partition::partitionGraph(*graph, backends);
    getrusage(RUSAGE_SELF, &after);
    faults += static_cast<double>(after.ru_minflt - before.ru_minflt);
    kernelMs += static_cast<double>(after.ru_stime.tv_sec - before.ru_stime.tv_sec) * 1e3 +
                static_cast<double>(after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e3;
    ++iterations;

    state.PauseTiming();
    if (!report.isOk()) {
      state.SkipWithError(report.status().message().c_str());
      break;
    }
    regions = report->regions.size();
    // Freeing the result is not partitioning: the report (a RegionReport
    // of strings per region) and the graph with its bodies go while the
    // clock is paused.
    report = partition::PartitionReport();
    graph.reset();
    state.ResumeTiming();
  }
  const double n = static_cast<double>(nodes);
  state.counters["nodes"] = n;
  state.counters["page_faults"] = iterations > 0 ? faults / iterations : 0.0;
  state.counters["kernel_ms"] = iterations > 0 ? kernelMs / iterations : 0.0;
  state.counters["regions"] = static_cast<double>(regions);
  // Peak heap on top of the input graph, and the part of it that is
  // working memory rather than the result: peak minus the larger of the
  // graph before and the graph (with its region bodies) and report after.
  state.counters["bytes_per_node"] = static_cast<double>(heap.peakExtra) / n;
  state.counters["working_bytes_per_node"] =
      static_cast<double>(heap.peakExtra - std::max<int64_t>(0, heap.growth)) / n;
  state.counters["growth_bytes_per_node"] = static_cast<double>(heap.growth) / n;
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t nodes : {1000, 10000, 100000, 1000000})
    for (int64_t unsupported : {0, 10, 30}) b->Args({nodes, unsupported});
  b->ArgNames({"nodes", "unsupported_pct"});
  b->Unit(benchmark::kMillisecond);
  // CPU time of the process: the figure the one-core target is about,
  // and steadier than wall time on a shared machine.
  b->MeasureProcessCPUTime();
}

BENCHMARK_CAPTURE(BM_Partition, residual, zoo::SyntheticShape::kResidual)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Partition, transformer, zoo::SyntheticShape::kTransformer)->Apply(sizes);

}  // namespace

int main(int argc, char** argv) {
  // The allocator is half the story of a partitioning run's time (see
  // tools/allocator), so the report says which one served it.
  benchmark::AddCustomContext("heap_allocator", subgraph::heapAllocatorName());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
