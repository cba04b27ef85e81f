//===- plugins/cudnn/device.h - CUDA device, memory and cuDNN plans -*- C++ -*-===//
//
// The device half of the cuDNN backend (CUDA runtime + cuDNN 9 backend API):
//  * probeDevice(): the one place that asks whether a GPU is there, so the
//    plugin's entry point can refuse with one line ("no CUDA device");
//  * DeviceAllocator: a caching allocator over cudaMalloc (freed blocks are
//    kept in size bins and reused; memory returns to CUDA only at the end);
//  * ExecutablePlan: a RegionPlan as cuDNN descriptors: tensors, the
//    operation graph, heuristics (mode A), the first engine configuration
//    that finalizes into an execution plan, and its workspace size. Built
//    once per session in the kernel's prologue, executed per request.
// Errors are one-line std::runtime_errors naming the cuDNN or CUDA call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "region_plan.h"

struct cudnnContext;
struct CUstream_st;
struct CUevent_st;

namespace subgraph::cudnn {

/// Empty if at least one CUDA device is usable; otherwise one line
/// starting "no CUDA device" with CUDA's reason.
std::string probeDevice();

/// A caching allocator of device memory (cudaMalloc) or page-locked host
/// memory (cudaHostAlloc, which the copy engines read and write at full
/// speed): blocks are rounded up to 256 bytes (and to powers of two above
/// 1 MiB) and kept for reuse when freed, so steady-state requests never
/// call CUDA's allocators. Thread-safe.
class DeviceAllocator {
 public:
  enum class Kind { kDevice, kPinnedHost };
  explicit DeviceAllocator(Kind kind = Kind::kDevice) : kind_(kind) {}
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;
  /// Frees every block (cudaFree or cudaFreeHost).
  ~DeviceAllocator();
  /// A device block of at least `bytes`; throws on failure.
  void* allocate(size_t bytes);
  /// Returns a block from allocate() to the cache.
  void deallocate(void* ptr);
  /// Bytes currently obtained from cudaMalloc.
  size_t reservedBytes() const;
  /// Rounded block size for `bytes` (exposed for tests).
  static size_t roundedSize(size_t bytes);

 private:
  void* obtain(size_t bytes);
  void release(void* p);

  const Kind kind_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  std::map<void*, size_t> used_;
  size_t reserved_ = 0;
};

/// The process-wide device allocator of the plugin.
DeviceAllocator& deviceAllocator();
/// The process-wide pinned host allocator (staging for copies).
DeviceAllocator& pinnedAllocator();

/// A RegionPlan compiled for the current device.
class ExecutablePlan {
 public:
  /// Builds descriptors, runs heuristics (mode A, then the fallback list)
  /// and finalizes the first engine configuration that `precision` allows
  /// with `handle`. Throws a one-line error if cuDNN has no such engine for
  /// the graph or a call fails.
  ExecutablePlan(const RegionPlan& plan, cudnnContext* handle, Precision precision);
  ~ExecutablePlan();
  ExecutablePlan(const ExecutablePlan&) = delete;
  ExecutablePlan& operator=(const ExecutablePlan&) = delete;

  /// Scratch memory execute() needs.
  int64_t workspaceBytes() const { return workspace_; }
  /// The chosen engine, e.g. "engine 7 (heuristics A #1; tensor core)".
  const std::string& engine() const { return engine_; }
  /// Runs on `handle`'s stream with `pointers[i]` the device address of
  /// plan tensor uid i + 1 for every non-virtual tensor (null otherwise).
  void execute(cudnnContext* handle, const std::vector<void*>& pointers, void* workspace) const;

 private:
  struct Descriptors;
  std::unique_ptr<Descriptors> d_;
  int64_t workspace_ = 0;
  std::vector<int64_t> uids_;
  std::string engine_;
};

/// Everything a region kernel keeps on the device for one session: its
/// own handle and stream, the plan, constants uploaded once, and buffers
/// for inputs, outputs and the workspace.
class DeviceRegion {
 public:
  /// Uploads constants, builds the plan and sizes every buffer.
  /// `name` and `verbose` only label the timing line printed at the end.
  DeviceRegion(const RegionPlan& plan, Precision precision, std::string name = {},
               bool verbose = false);
  ~DeviceRegion();
  DeviceRegion(const DeviceRegion&) = delete;
  DeviceRegion& operator=(const DeviceRegion&) = delete;

  /// One request: packs `inputs` (host, NCHW float) into pinned staging in
  /// the device's layout and type, copies them to the device, executes and
  /// copies `outputs` back, all queued on the region's stream with one
  /// wait at the end, then unpacks. Serialized per region.
  void run(const std::vector<const float*>& inputs, const std::vector<float*>& outputs);
  /// The engine cuDNN runs this region with.
  const std::string& engine() const { return exec_->engine(); }

 private:
  /// Per-run times, printed when the region ends (SUBGRAPH_CUDNN_VERBOSE=1).
  struct Timing {
    int runs = 0;
    double packMs = 0, uploadMs = 0, executeMs = 0, downloadMs = 0, unpackMs = 0;
  };

  const RegionPlan& plan_;
  const Precision precision_;
  std::mutex mutex_;
  cudnnContext* handle_ = nullptr;
  CUstream_st* stream_ = nullptr;
  std::unique_ptr<ExecutablePlan> exec_;
  std::vector<void*> pointers_;  // per tensor, device address or null
  void* workspace_ = nullptr;
  bool verbose_ = false;
  std::string name_;
  Timing timing_;
  std::vector<CUevent_st*> events_;  // verbose: copy/execute boundaries
};

/// Creates and finalizes every tensor and operation descriptor of `plan`
/// and the operation graph (without a handle, which cuDNN 9 allows): empty
/// if cuDNN accepts them all, else cuDNN's error. Needs no GPU, so tests
/// check attribute types and shapes on machines without one; heuristics
/// and execution plans are not covered (they need the device).
std::string validateDescriptors(const RegionPlan& plan);

/// Whether cuDNN has an engine for `plan` on this device in the
/// environment's precision: empty if so, else the reason (used by the
/// selectors and CreateSubgraphNode to shrink or reject the region).
std::string checkEngine(const RegionPlan& plan);

}  // namespace subgraph::cudnn
