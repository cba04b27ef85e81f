//===- subgraph/runtime/kernel.h - Kernels and their lifecycle --*- C++ -*-===//
//
// A Kernel executes one node (or one copy between devices) on one backend. It
// is made once per session by its op's KernelCreator (MNN's onCreate) and is
// shared by every frame and every thread, so run() must be safe to call
// concurrently; per-frame mutable state lives in a KernelFrameState.
//
// Lifecycle, in order:
//  1. construction (the creator), when the session compiles;
//  2. onSessionPrologue, once, after the session's static memory exists;
//  3. resize, once per distinct input signature: output descs and scratch;
//  4. onFramePrologue, once per frame (an I/O workspace), when the frame is
//     created; reusing a frame for another request does not run it again;
//  5. run, once per request;
//  6. onFrameEpilogue when a frame is destroyed, onSessionEpilogue when the
//     session is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "subgraph/ir/node.h"
#include "subgraph/runtime/tensor_view.h"
#include "subgraph/support/status.h"

namespace subgraph::runtime {

class Backend;

/// Mutable state a kernel keeps per frame (e.g. a cache that concurrent
/// requests must not share). Created by Kernel::onFramePrologue.
class KernelFrameState {
 public:
  virtual ~KernelFrameState() = default;
};

/// What resize() sees: input descs, the host contents of the inputs the
/// kernel listed in shapeInputs(), and the outputs it must describe.
class ResizeContext {
 public:
  ResizeContext(const Node* node, std::span<const TensorDesc* const> inputs,
                std::span<const TensorView* const> contents, std::span<TensorDesc> outputs)
      : node_(node), inputs_(inputs), contents_(contents), outputs_(outputs) {}

  /// The node being resized; null for copies.
  const Node* node() const { return node_; }
  size_t numInputs() const { return inputs_.size(); }
  /// False for an omitted optional input (and for indices past the end).
  bool hasInput(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  /// The desc of a present input.
  const TensorDesc& inputDesc(size_t i) const { return *inputs_[i]; }
  /// Plain host contents of input `i`, available only for the indices
  /// returned by Kernel::shapeInputs(); null otherwise or when absent.
  const TensorView* inputContent(size_t i) const {
    return i < contents_.size() ? contents_[i] : nullptr;
  }
  size_t numOutputs() const { return outputs_.size(); }
  /// Sets the desc of output `i`.
  void setOutput(size_t i, TensorDesc desc) { outputs_[i] = std::move(desc); }
  const TensorDesc& outputDesc(size_t i) const { return outputs_[i]; }
  /// Asks for `bytes` of scratch memory during run() (planned like any
  /// other dynamic buffer and live only while this kernel runs).
  void requestScratch(size_t bytes) { scratchBytes_ = bytes; }
  size_t scratchBytes() const { return scratchBytes_; }
  /// An invalid-argument error naming the node: "<op> node '<name>': msg".
  Status fail(const std::string& message) const;

 private:
  const Node* node_;
  std::span<const TensorDesc* const> inputs_;
  std::span<const TensorView* const> contents_;
  std::span<TensorDesc> outputs_;
  size_t scratchBytes_ = 0;
};

/// What run() sees: bound inputs, outputs and scratch for one request.
class RunContext {
 public:
  RunContext(const Node* node, std::span<const TensorView> inputs,
             std::span<const TensorView> outputs, std::span<std::byte> scratch,
             KernelFrameState* frameState)
      : node_(node), inputs_(inputs), outputs_(outputs), scratch_(scratch), state_(frameState) {}

  const Node* node() const { return node_; }
  size_t numInputs() const { return inputs_.size(); }
  /// False for an omitted optional input.
  bool hasInput(size_t i) const { return i < inputs_.size() && inputs_[i].valid(); }
  /// Input `i`; read-only by contract.
  const TensorView& input(size_t i) const { return inputs_[i]; }
  size_t numOutputs() const { return outputs_.size(); }
  /// Output `i`, sized as resize() described it.
  const TensorView& output(size_t i) const { return outputs_[i]; }
  /// The scratch memory resize() requested (64-byte aligned).
  std::span<std::byte> scratch() const { return scratch_; }
  /// The state onFramePrologue created for this frame, or null.
  KernelFrameState* frameState() const { return state_; }
  /// An invalid-argument error naming the node.
  Status fail(const std::string& message) const;

 private:
  const Node* node_;
  std::span<const TensorView> inputs_;
  std::span<const TensorView> outputs_;
  std::span<std::byte> scratch_;
  KernelFrameState* state_;
};

/// What onSessionPrologue sees: the static memory the kernel asked for.
class SessionPrologueContext {
 public:
  explicit SessionPrologueContext(std::span<std::byte> staticMemory)
      : staticMemory_(staticMemory) {}
  /// Kernel::staticBytes() bytes that live as long as the session.
  std::span<std::byte> staticMemory() const { return staticMemory_; }

 private:
  std::span<std::byte> staticMemory_;
};

/// Executes one node on one backend. See the file comment for the lifecycle.
class Kernel {
 public:
  virtual ~Kernel() = default;

  /// Input indices whose contents (not just descs) resize() reads, e.g.
  /// Reshape's shape. The session computes those values before anything
  /// runs (on the host, like MNN's shape-compute ops) and keys its memory
  /// plans on them.
  virtual std::vector<size_t> shapeInputs() const { return {}; }
  /// False if run() reads only input descs, never input bytes (Shape). The
  /// session then need not compute an input's contents to precompute this
  /// kernel's outputs.
  virtual bool readsInputData() const { return true; }
  /// If output `i` holds exactly the bytes of some input (Reshape,
  /// Identity), that input's index: the session may then let the output
  /// share the input's memory. run() must cope with both sharing and not.
  virtual std::optional<size_t> outputAliasesInput(size_t /*output*/) const { return std::nullopt; }
  /// Layout the kernel needs input `i` in; null means plain.
  virtual const Layout* inputLayout(size_t /*input*/) const { return nullptr; }
  /// Layout the kernel writes output `i` in; null means plain.
  virtual const Layout* outputLayout(size_t /*output*/) const { return nullptr; }
  /// True if run() uses a thread pool of its own (OpenMP, a vendor
  /// library's threads). The session then never runs it concurrently with
  /// other kernels, so the two pools do not oversubscribe the cores.
  virtual bool usesOwnThreads() const { return false; }
  /// For a kernel that usesOwnThreads(): true if two requests may run it,
  /// and anything else, at the same time, each on its own threads (at most
  /// the session's count; SessionOptions::maxConcurrentRuns bounds the
  /// requests). False: the session runs it alone, across all requests.
  virtual bool concurrentRequests() const { return false; }
  /// Bytes of session-lifetime memory this kernel wants (prepacked
  /// weights), planned as kStatic and handed to onSessionPrologue.
  virtual size_t staticBytes() const { return 0; }

  /// Runs once per session, after static memory is allocated.
  virtual Status onSessionPrologue(SessionPrologueContext& /*ctx*/) { return Status::ok(); }
  /// Runs once when the session is destroyed.
  virtual void onSessionEpilogue() {}
  /// Runs once per frame when the frame is created; may return null.
  virtual StatusOr<std::unique_ptr<KernelFrameState>> onFramePrologue() const {
    return std::unique_ptr<KernelFrameState>();
  }
  /// Runs once per frame when the frame is destroyed.
  virtual void onFrameEpilogue(KernelFrameState* /*state*/) const {}

  /// Computes output descs (and scratch) from input descs. Must not keep
  /// per-signature state in the kernel: several signatures coexist.
  virtual Status resize(ResizeContext& ctx) const = 0;
  /// Computes the outputs. Thread-safe: concurrent calls use different
  /// frames.
  virtual Status run(RunContext& ctx) const = 0;
};

/// "<op> node '<name>': <message>", the prefix every kernel error uses.
std::string nodeErrorPrefix(const Node* node);

/// Runs one of `node`'s kernel calls (resize, run, prologue). An exception
/// escaping the kernel becomes a kInternal Status that, like a returned
/// error, names the node: a kernel that throws is a bug in that kernel, and
/// the user needs to know which node hit it.
Status runKernelGuarded(const Node* node, const std::function<Status()>& call);

}  // namespace subgraph::runtime
