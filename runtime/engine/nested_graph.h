//===- runtime/engine/nested_graph.h - A graph run inside a kernel -*- C++ -*-===//
//
// Internal to the runtime. Some kernels run a whole graph: the default
// executor of fused regions runs the region body, and control flow (If,
// Loop) runs its branches. NestedGraph compiles such a graph once (for the
// reference backend, or for the session's backends when a body holds
// fused regions), keeps one Plan per input signature, and runs it
// serially inside the calling kernel, with its dynamic memory carved from
// memory the caller provides (the outer kernel's scratch) and its outputs
// written straight into the caller's output buffers where possible.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "engine/plan.h"
#include "engine/program.h"

namespace subgraph::runtime::engine {

/// A graph compiled to run inside another kernel. Thread-safe.
class NestedGraph {
 public:
  /// Compiles `graph` for the reference backend `reference`.
  static StatusOr<std::unique_ptr<NestedGraph>> compile(std::shared_ptr<const Graph> graph,
                                                        std::shared_ptr<Backend> reference);
  /// Compiles `graph` for `backends` (priority order, the reference backend
  /// among them), as a control-flow body whose fused regions run on the
  /// backends that claim them. The graph runs in host memory that the
  /// calling kernel carves, so when a backend lives on another device the
  /// graph is compiled for the reference backend alone.
  static StatusOr<std::unique_ptr<NestedGraph>> compile(
      std::shared_ptr<const Graph> graph, const std::vector<std::shared_ptr<Backend>>& backends);

  const Graph& graph() const { return *graph_; }
  size_t numInputs() const { return program_->inputSlots.size(); }
  size_t numOutputs() const { return program_->outputSlots.size(); }
  /// Graph input indices whose contents the plans depend on.
  std::vector<size_t> contentInputs() const;

  /// The plan for inputs with `descs` (contents in `data` for the content
  /// inputs), made on first use and cached.
  StatusOr<std::shared_ptr<const Plan>> planFor(std::span<const TensorDesc> descs,
                                                std::span<const void* const> data) const;
  /// Desc of graph output `o` under `plan`.
  const TensorDesc& outputDesc(const Plan& plan, size_t o) const;
  /// Host memory run() needs under `plan`.
  size_t memoryBytes(const Plan& plan) const;

  /// A new frame (with frame prologues run).
  StatusOr<std::unique_ptr<Frame>> newFrame() const;
  /// The limits of the session the graph was compiled in; its plans are
  /// checked against the memory limit.
  const SessionLimits& limits() const { return limits_; }
  /// The attribute holding the graph ("then_branch", "body"), which
  /// profiles show in the scope of its steps.
  void setLabel(std::string label) { label_ = std::move(label); }
  /// Runs the graph under `plan` on `frame`, with `memory` (memoryBytes()
  /// bytes) for its intermediates, reading `inputs` and writing each output
  /// into `outputs[o]` (sized per outputDesc()).
  Status run(const Plan& plan, Frame& frame, std::span<std::byte> memory,
             std::span<const void* const> inputs, std::span<void* const> outputs) const;

 private:
  NestedGraph() = default;
  std::shared_ptr<const Graph> graph_;
  SessionLimits limits_;  // of the session that built it
  std::string label_ = "graph";
  std::unique_ptr<Program> program_;
  mutable std::mutex mutex_;
  // Plans by signature. Bounded: once full the oldest plan is dropped
  // (plans in use stay alive through their shared_ptr).
  mutable std::map<std::string, std::shared_ptr<const Plan>> plans_;
  mutable std::vector<std::string> planOrder_;
};

/// Frame state of a kernel that runs a NestedGraph.
struct NestedFrameState : KernelFrameState {
  std::unique_ptr<Frame> frame;
};

}  // namespace subgraph::runtime::engine
