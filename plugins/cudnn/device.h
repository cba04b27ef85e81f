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
/// own cuDNN handle, the plan, and its constants, uploaded once. Inputs,
/// outputs and the workspace are the session's device memory (plugin ABI
/// 3), so values stay on the device between regions.
class DeviceRegion {
 public:
  /// Uploads constants and builds the plan. `name` labels messages.
  DeviceRegion(const RegionPlan& plan, Precision precision, std::string name = {});
  ~DeviceRegion();
  DeviceRegion(const DeviceRegion&) = delete;
  DeviceRegion& operator=(const DeviceRegion&) = delete;

  /// Device scratch enqueue() needs.
  size_t workspaceBytes() const { return static_cast<size_t>(exec_->workspaceBytes()); }
  /// Submits one execution to `stream` and returns without waiting.
  /// `inputs` and `outputs` are device addresses of the fused node's
  /// operands in the plugin's layout (channels-last for 4-D, float16 in the
  /// fp16 mode); `workspace` holds workspaceBytes(). Thread-safe.
  void enqueue(CUstream_st* stream, const std::vector<void*>& inputs,
               const std::vector<void*>& outputs, void* workspace);
  /// The engine cuDNN runs this region with.
  const std::string& engine() const { return exec_->engine(); }

 private:
  const RegionPlan& plan_;
  std::mutex mutex_;  // the handle's stream is set per submission
  cudnnContext* handle_ = nullptr;
  std::unique_ptr<ExecutablePlan> exec_;
  std::vector<void*> constants_;  // per tensor: device address of a constant, else null
};

/// Creates and finalizes every tensor and operation descriptor of `plan`
/// and the operation graph (without a handle, which cuDNN 9 allows): empty
/// if cuDNN accepts them all, else cuDNN's error. Needs no GPU, so tests
/// check attribute types and shapes on machines without one; heuristics
/// and execution plans are not covered (they need the device).
std::string validateDescriptors(const RegionPlan& plan);

/// Whether cuDNN has an engine for `plan` on this device in `precision`
/// (the session's): empty if so, else the reason (used by the selectors
/// and CreateSubgraphNode to shrink or reject the region).
std::string checkEngine(const RegionPlan& plan, Precision precision);

}  // namespace subgraph::cudnn
