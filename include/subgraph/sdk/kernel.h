//===- subgraph/sdk/kernel.h - Kernels in plain C++ for plugins -*- C++ -*-===//
//
// Part of the header-only plugin SDK (see subgraph/sdk/plugin.h). A kernel
// creator (MNN's onCreate) is registered per qualified op type: a plain op
// ("Relu"), a backend op the plugin defined ("example.MaxSplat"), or the op
// of a fused region ("subgraph.<backend>.<property>"). For a fused region the
// creator reads the region's body through NodeView::body(): op types,
// attributes and constant weights of every node inside.
//
// Lifecycle of a kernel, driven by the host's session:
//   creator(node, context)  once per session, when it compiles;
//   sessionPrologue()       once, before the first run (prepack weights,
//                           create primitives);
//   resize(inputs)          once per input signature (optional: the node's
//                           static output types are used otherwise);
//   run(inputs, outputs)    once per request, possibly from several threads
//                           at once: keep per-request state on the stack;
//   destructor              when the session is destroyed.
//
// Tensors are dense row-major buffers in host memory (float32 NCHW for
// convolutions), owned by the host.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "subgraph/sdk/graph_view.h"

namespace subgraph::sdk {

/// A tensor buffer a kernel reads or writes.
class Tensor {
 public:
  /// Wraps the host's description.
  explicit Tensor(const SgTensor& t) : t_(t) {}
  /// The element type.
  DataType dtype() const { return static_cast<DataType>(t_.dtype); }
  /// The dims.
  std::span<const int64_t> dims() const {
    return {t_.dims, static_cast<size_t>(t_.rank < 0 ? 0 : t_.rank)};
  }
  /// Dim `i`.
  int64_t dim(size_t i) const { return t_.dims[i]; }
  /// The rank.
  size_t rank() const { return static_cast<size_t>(t_.rank); }
  /// Product of the dims (1 for a scalar).
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : dims()) n *= d;
    return n;
  }
  /// Size of the buffer in bytes.
  size_t bytes() const { return t_.bytes; }
  /// The buffer as `T` (which must match dtype()).
  template <typename T>
  T* data() const {
    return static_cast<T*>(t_.data);
  }
  /// The raw buffer.
  void* raw() const { return t_.data; }

 private:
  SgTensor t_;
};

/// An element type and dims, for resize().
struct Shape {
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> dims;
};

/// What a creator learns about the session.
struct KernelContext {
  /// Worker threads the session was given (0: one per core). A kernel with
  /// its own pool (OpenMP, oneDNN) should use no more.
  int numThreads = 0;
};

/// A kernel for one node. run() must be thread-safe.
class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Once per session, before the first run.
  virtual void sessionPrologue() {}
  /// Output types for input types; nullopt uses the node's static output
  /// types.
  virtual std::optional<std::vector<Shape>> resize(const std::vector<Shape>& inputs) {
    (void)inputs;
    return std::nullopt;
  }
  /// Computes the outputs. Throw sdk::Error to fail the request.
  virtual void run(std::span<const Tensor> inputs, std::span<const Tensor> outputs) = 0;
};

/// Makes the kernel for `node`; return null (or throw sdk::Unsupported) to
/// decline it.
using KernelCreator =
    std::function<std::unique_ptr<Kernel>(const NodeView& node, const KernelContext& context)>;

/// How a kernel creator's kernels run.
struct KernelOptions {
  /// run() uses a thread pool of its own: the session never runs the
  /// kernel concurrently with others, so pools do not oversubscribe.
  bool usesOwnThreads = false;
};

}  // namespace subgraph::sdk
