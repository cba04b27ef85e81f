//===- runtime/engine/plan.h - Per-signature resize and memory plan -*- C++ -*-===//
//
// Internal to the runtime. Resizing a Program for one input signature (MNN's
// Session::resize) gives a Plan: the desc of every slot, the values computed
// at resize time (Shape chains, Constants), each step's scratch, and one
// MemoryPlan per device for the frame's dynamic memory. When branches may run
// concurrently (or a device queue is asynchronous) the plan also holds the
// step dependency graph: data edges plus memory edges, which make a step that
// reuses bytes wait for every earlier user of those bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/program.h"
#include "subgraph/runtime/memory_planner.h"
#include "subgraph/runtime/session.h"

namespace subgraph::runtime::engine {

/// 64-byte aligned host memory owned by a plan.
class HostBuffer {
 public:
  explicit HostBuffer(size_t bytes);
  ~HostBuffer();
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::byte* data_;
  size_t size_;
};

/// Everything that depends on the input signature.
struct Plan {
  std::string signature;
  std::vector<TensorDesc> descs;  ///< Per slot.
  /// Per slot: the slot whose buffer it shares (itself when it has its own).
  std::vector<int> root;
  /// Per slot: host memory of values computed at resize time, or null.
  std::vector<std::byte*> precomputed;
  std::vector<std::unique_ptr<HostBuffer>> storage;
  std::vector<size_t> scratchBytes;  ///< Per step.
  std::vector<int> runSteps;         ///< Steps run per request, in order.
  std::vector<MemoryPlan> memory;    ///< Per device.
  std::vector<int> slotBuffer;       ///< Per slot: buffer in its device plan, or -1.
  std::vector<int> scratchBuffer;    ///< Per step: buffer on its device, or -1.
  /// Dependency graph over step indices (only run steps have entries).
  bool hasEdges = false;
  std::vector<std::vector<int>> successors;
  std::vector<int> numPredecessors;
  /// Per step: predecessors on another, asynchronous queue, whose
  /// completion must be awaited before the step is submitted.
  std::vector<std::vector<int>> asyncPredecessors;
  size_t frameBytes = 0;  ///< Dynamic + separate blocks of all devices.
  PlanReport report;
};

/// What resizeProgram() needs besides the program.
struct PlanOptions {
  /// Build the dependency graph (for parallel branches).
  bool buildEdges = false;
  /// Fail when frameBytes plus the program's static bytes exceed it (0: no
  /// limit).
  uint64_t memoryLimitBytes = 0;
};

/// The plan key of a request: each input's desc, plus the raw bytes of the
/// inputs listed in Program::contentInputs (equal keys: equal contents).
std::string signatureOf(const Program& program, std::span<const TensorDesc> inputDescs,
                        std::span<const void* const> inputData);

/// The same request in words, for reports and callbacks: contents shown by
/// their first elements.
std::string signatureText(const Program& program, std::span<const TensorDesc> inputDescs,
                          std::span<const void* const> inputData);

/// Resizes `program` for inputs with `inputDescs`; `inputData` must hold
/// the bytes of every input in Program::contentInputs (others may be null).
/// Precomputed steps run here, on the calling thread.
StatusOr<std::shared_ptr<Plan>> resizeProgram(const Program& program,
                                              std::span<const TensorDesc> inputDescs,
                                              std::span<const void* const> inputData,
                                              const PlanOptions& options);

}  // namespace subgraph::runtime::engine
