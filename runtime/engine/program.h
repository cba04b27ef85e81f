//===- runtime/engine/program.h - Compiled form of a graph ------*- C++ -*-===//
//
// Internal to the runtime. A Program is a graph compiled for a set of
// backends and independent of input shapes: every node has a kernel, every
// value a slot with a placement (device, layout), copies are inserted where a
// value crosses placements, and the steps are in the order they will run.
// A Plan (plan.h) adds what depends on the input signature: descs, memory
// offsets, and values precomputed at resize time.
//
// Invariants:
//  * steps are in a topological order; a step's inputs are produced by
//    earlier steps, or are graph inputs, initializers or static slots;
//  * every input a step reads has the placement the step's kernel asked for;
//  * a precomputed step runs on the host (reference backend) and reads only
//    host plain slots (or only input descs, for Shape-like kernels);
//  * a static step copies constant data to another placement, once, at
//    compile time, into static memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/runtime/backend.h"
#include "subgraph/runtime/session.h"

namespace subgraph::runtime::engine {

/// Where a value's slot comes from.
enum class SlotKind : uint8_t {
  kGraphInput,   ///< Bound to the caller's tensor each request.
  kInitializer,  ///< Bound to the graph's constant data.
  kComputed,     ///< Written by a step.
};

/// One run-time value.
struct Slot {
  std::string name;
  SlotKind kind = SlotKind::kComputed;
  const Tensor* initializer = nullptr;  ///< Constant data (also a graph input's default).
  int graphInput = -1;                  ///< Index into Program::inputSlots.
  int device = 0;                       ///< Index into Program::devices.
  const Layout* layout = nullptr;
  int producer = -1;           ///< Step index, for kComputed.
  std::vector<int> consumers;  ///< Step indices that read it.
  bool isGraphOutput = false;  ///< Returned to the caller (host plain).
  bool needsContent = false;   ///< Its bytes are read at resize time.
  /// Slot whose plain host bytes equal this slot's (the source of a chain of
  /// copies; the slot itself otherwise). Resize reads contents through it.
  int contentSource = -1;
  /// Set for outputs of static steps: the constant lives in static memory.
  bool isStatic = false;
};

/// One unit of execution: a node's kernel or an inserted copy.
struct Step {
  const Node* node = nullptr;  ///< Null for copies.
  StepInfo info;
  int backend = 0;  ///< Index into Program::backends.
  std::unique_ptr<Kernel> kernel;
  std::vector<int> inputs;  ///< Slot ids; -1 for an omitted optional input.
  std::vector<int> outputs;
  std::vector<size_t> shapeInputs;
  bool precomputed = false;
  bool isStatic = false;
  /// A shape-only op (Reshape, Flatten, Squeeze, Unsqueeze, Identity) on a
  /// value in a device's plain memory: resized for its output's dims, never
  /// run; its output aliases input 0 where it lies, so the value does not
  /// leave the device and the host does not wait for it.
  bool isView = false;
  /// Kernel::usesOwnThreads(): the request runs its steps in order.
  bool ownThreads = false;
  /// ... and not Kernel::concurrentRequests(): it runs alone, across all
  /// requests of the session.
  bool exclusive = false;
  /// Static memory handed to the kernel's session prologue.
  std::span<std::byte> staticMemory;
};

/// Static memory of one device, allocated once per program.
struct StaticBlock {
  std::shared_ptr<Allocator> allocator;
  void* base = nullptr;
  size_t bytes = 0;
};

/// A compiled graph. Owns kernels and static memory; runs session
/// epilogues and frees static memory on destruction.
struct Program {
  const Graph* graph = nullptr;
  std::vector<std::shared_ptr<Backend>> backends;  ///< Priority order, reference last.
  int referenceBackend = 0;
  std::vector<Device> devices;
  /// The allocator serving each device (its first backend's).
  std::vector<std::shared_ptr<Allocator>> deviceAllocators;
  int hostDevice = 0;
  std::vector<Slot> slots;
  std::vector<Step> steps;
  std::vector<int> inputSlots;   ///< Per graph input.
  std::vector<int> outputSlots;  ///< Per graph output, host plain.
  std::vector<std::string> inputNames;
  std::vector<std::string> outputNames;
  std::vector<TensorType> inputTypes;
  /// Graph inputs whose contents are read at resize (they key the plans).
  std::vector<int> contentInputs;
  /// A step runs alone across requests (Step::exclusive).
  bool hasExclusiveSteps = false;
  /// A step brings its own threads (Step::ownThreads): requests run their
  /// steps in order.
  bool hasOwnThreadSteps = false;
  bool hasAsyncQueues = false;
  /// Descs of static slots (known at compile time), by slot id.
  std::vector<TensorDesc> staticDescs;
  std::vector<void*> staticPointers;
  std::vector<StaticBlock> staticBlocks;
  size_t staticBytes = 0;
  bool prologuesRan = false;

  Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program();
};

/// The limits of a session that its kernels enforce themselves: what
/// control flow holds (plans, carried values, scan outputs: memory) and
/// what one kernel call or one Loop may spend (work).
struct SessionLimits {
  uint64_t memoryBytes = 0;  ///< SessionOptions::memoryLimitBytes; 0: none.
  WorkLimits work;           ///< SessionOptions::work.
};

/// Compiles `graph` for `backends` (priority order; the reference backend
/// must be among them), then fills static memory and runs the kernels'
/// session prologues. The graph must outlive the program.
/// `limits` (by default those of the program being built around this one)
/// are published to the kernel creators with the backends, see
/// limitsBeingBuilt().
StatusOr<std::unique_ptr<Program>> buildProgram(
    const Graph& graph, const std::vector<std::shared_ptr<Backend>>& backends,
    std::optional<SessionLimits> limits = std::nullopt);

/// The backends of the program that buildProgram() is making kernels for on
/// this thread, or empty outside it. Control-flow kernels compile their
/// nested graphs for these, so that regions the partitioner fused inside
/// an If branch or a Loop body run on the backends that fused them. (A
/// kernel creator sees only its own backend; the creators' signature is
/// shared with plugins, so the program says it this way instead.)
std::vector<std::shared_ptr<Backend>> backendsBeingBuilt();

/// The session's limits while buildProgram() makes kernels on this thread;
/// outside it, no memory limit and the default work limits. Control-flow
/// kernels hold their nested plans and the values a Loop accumulates to the
/// memory limit (it checks one plan, and a Loop's scan outputs grow past
/// any plan), Loops their iterations and time to the work limits, and
/// kernels whose work an attribute sets that work.
SessionLimits limitsBeingBuilt();

}  // namespace subgraph::runtime::engine
