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
// convolutions), owned by the host, unless the kernel asks for one of its
// plugin's own layouts (since ABI 2; Plugin::addLayout): a kernel returning
// a Layout from inputLayout(i) or outputLayout(i) reads or writes that
// value in it, and the host converts a value with the plugin's copies only
// where it enters or leaves the layout, so a value passed between two of
// the plugin's regions stays in it. A kernel may also ask for scratch
// memory (scratchBytes, then runWithScratch), planned by the host like any
// other buffer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "subgraph/sdk/graph_view.h"

namespace subgraph::sdk {

/// Bytes a tensor of `dtype` with logical `dims` takes in a layout; 0 if
/// the layout cannot hold it.
using LayoutSize = std::function<size_t(DataType dtype, std::span<const int64_t> dims)>;

class Plugin;

/// One of the plugin's own memory layouts (ABI 2), e.g. channels blocked
/// by 16. Made and kept by Plugin::addLayout; kernels return it from
/// inputLayout()/outputLayout(), and Plugin::addCopy converts values
/// between it and plain row-major.
class Layout {
 public:
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;
  /// The name given to addLayout.
  const std::string& name() const { return name_; }
  /// Bytes a tensor of `dtype` and logical `dims` takes in this layout.
  size_t byteSize(DataType dtype, std::span<const int64_t> dims) const {
    return size_(dtype, dims);
  }
  /// Internal: the C description the host sees.
  const SgLayoutDesc* toC() const { return &c_; }

 private:
  friend class Plugin;
  Layout(std::string name, LayoutSize size) : name_(std::move(name)), size_(std::move(size)) {
    c_.abi_version = SG_PLUGIN_ABI_VERSION;
    c_.struct_size = sizeof(SgLayoutDesc);
    c_.name = name_.c_str();
    c_.user = this;
    c_.byte_size = &byteSizeC;
  }
  static size_t byteSizeC(void* user, SgDataType dtype, int32_t rank,
                          const int64_t* dims) noexcept {
    try {
      return static_cast<Layout*>(user)->size_(static_cast<DataType>(dtype),
                                               {dims, static_cast<size_t>(rank < 0 ? 0 : rank)});
    } catch (...) {
      return 0;
    }
  }

  std::string name_;
  LayoutSize size_;
  SgLayoutDesc c_{};
};

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
  /// Size of the buffer in bytes (in its layout, which may pad).
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
class AcceleratorDevice;

struct KernelContext {
  /// Worker threads the session was given (0: one per core). A kernel with
  /// its own pool (OpenMP, oneDNN) should use no more.
  int numThreads = 0;
  /// Since ABI 3: the precision the session asks for ("fp32", "tf32",
  /// "fp16", "bf16"), or "" for the plugin's default.
  std::string precision = {};
  /// Since ABI 3: the session's options for this plugin (`--plugin-option
  /// <plugin>.<name>=<value>`), by name without the plugin's prefix.
  std::map<std::string, std::string> options = {};
  /// Since ABI 6: which of the session's devices the kernel runs on (0
  /// for a plugin with one device).
  int deviceIndex = 0;
  /// The AcceleratorDevice the kernel runs on (Plugin::setDevice, or
  /// device deviceIndex of Plugin::setDevices); null for a host plugin.
  AcceleratorDevice* device = nullptr;

  /// Option `name`, or `fallback` when the session did not set it.
  std::string option(const std::string& name, std::string fallback = {}) const {
    auto it = options.find(name);
    return it == options.end() ? fallback : it->second;
  }
};

/// One of the plugin device's work queues (ABI 3): the handle the plugin's
/// AcceleratorDevice::createQueue made.
struct Queue {
  void* handle = nullptr;
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
  /// Computes the outputs. Throw sdk::Error to fail the request. Override
  /// this, or runWithScratch for a kernel that needs scratch memory.
  virtual void run(std::span<const Tensor> inputs, std::span<const Tensor> outputs) {
    (void)inputs;
    (void)outputs;
    throw Error("the kernel overrides neither run nor runWithScratch");
  }

  // --- Since ABI 2: layouts and scratch memory ---

  /// The layout run() reads input `i` in: one of the plugin's layouts, or
  /// null (the default) for plain row-major. Asked once per input, right
  /// after the creator made the kernel.
  virtual const Layout* inputLayout(size_t i) const {
    (void)i;
    return nullptr;
  }
  /// The layout run() writes output `i` in; null (the default) is plain.
  virtual const Layout* outputLayout(size_t i) const {
    (void)i;
    return nullptr;
  }
  /// Bytes of scratch memory runWithScratch needs for these input shapes;
  /// asked after resize(), once per input signature. Default: none.
  virtual size_t scratchBytes(const std::vector<Shape>& inputs) {
    (void)inputs;
    return 0;
  }
  /// Computes the outputs with `scratch` (scratchBytes() bytes, 64-byte
  /// aligned, contents undefined). The default calls run().
  virtual void runWithScratch(std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                              std::span<std::byte> scratch) {
    (void)scratch;
    run(inputs, outputs);
  }

  // --- Since ABI 3: devices ---

  /// For a plugin with an AcceleratorDevice (Plugin::setDevice), the host
  /// calls this instead of run: submit the work to `queue` and return
  /// without waiting. Tensors and scratch are device memory; copy the dims
  /// you need (the Tensor objects die with the call, the memory lives until
  /// the work completes). Errors found while the work runs belong to the
  /// queue and surface at its next synchronize.
  virtual void runOnQueue(Queue queue, std::span<const Tensor> inputs,
                          std::span<const Tensor> outputs, std::span<std::byte> scratch) {
    (void)queue;
    (void)inputs;
    (void)outputs;
    (void)scratch;
    throw Error("the plugin has a device but the kernel does not override runOnQueue");
  }
};

/// Makes the kernel for `node`; return null (or throw sdk::Unsupported) to
/// decline it.
using KernelCreator =
    std::function<std::unique_ptr<Kernel>(const NodeView& node, const KernelContext& context)>;

/// How a kernel creator's kernels run.
struct KernelOptions {
  /// run() uses a thread pool of its own: the session never runs the
  /// kernel concurrently with others of the same request, so pools do not
  /// oversubscribe.
  bool usesOwnThreads = false;
  /// Since ABI 5, with usesOwnThreads: two requests may run it at the same
  /// time, each on its own threads (at most KernelContext::numThreads).
  /// Without it, the session runs the kernel alone across all requests.
  bool concurrentRequests = false;
};

/// Writes `dst` from `src`: the same element type and logical dims, each
/// in the layout its Plugin::addCopy named. Throw sdk::Error to fail.
using CopyFn = std::function<void(const Tensor& src, const Tensor& dst)>;

/// Since ABI 3: submits a copy between host and device memory (or within
/// the device) to `queue`, without waiting; see Plugin::addDeviceCopy.
using QueueCopyFn = std::function<void(Queue queue, const Tensor& src, const Tensor& dst)>;

/// Since ABI 3: which memories a device copy moves between.
enum class CopyDirection : int32_t {
  kHostToDevice = SG_COPY_HOST_TO_DEVICE,
  kDeviceToHost = SG_COPY_DEVICE_TO_HOST,
  kOnDevice = SG_COPY_ON_DEVICE,
};

/// What a copy handles and how it runs.
struct CopyOptions {
  /// The element type it copies; kUndefined (the default): any.
  DataType dtype = DataType::kUndefined;
  /// The copy uses a thread pool of its own (as KernelOptions's).
  bool usesOwnThreads = false;
  /// Since ABI 5: as KernelOptions::concurrentRequests.
  bool concurrentRequests = false;
};

}  // namespace subgraph::sdk
