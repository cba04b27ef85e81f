//===- subgraph/runtime/backend.h - Backends, providers, kernel creators -*- C++ -*-===//
//
// The backend model (MNN's Backend, BRT's device and provider). A Backend
// owns one device: the device's Allocator (optionally fronted by a BFC arena)
// and a WorkQueue that runs its kernels in the order the session decided. A
// backend gathers kernels from one or more Providers; when several providers
// implement the same op, the first one registered wins. A provider maps a
// qualified op type ("Conv", "subgraph.onednn.ConvBnRelu") to a
// KernelCreator.
//
// Values that cross devices or layouts are moved by copy kernels, which a
// backend offers through createCopy(): the session asks the consumer's
// backend first, then the producer's.
//
// Backends are found by name in the BackendRegistry; the built-in "reference"
// backend (host CPU, plain layout, every op of the op table) is always there.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/node.h"
#include "subgraph/runtime/allocator.h"
#include "subgraph/runtime/kernel.h"
#include "subgraph/runtime/work_queue.h"
#include "subgraph/support/status.h"

namespace subgraph::runtime {

/// A device: a kind ("cpu", "cuda", ...) and an index.
struct Device {
  std::string kind = "cpu";
  int index = 0;

  /// True for host memory the CPU reads directly.
  bool isHost() const { return kind == "cpu"; }
  /// "cpu:0".
  std::string toString() const { return kind + ":" + std::to_string(index); }
  friend bool operator==(const Device& a, const Device& b) {
    return a.kind == b.kind && a.index == b.index;
  }
};

/// Makes the kernel for one node, or returns an error saying why the node is
/// not supported (kUnsupported lets the session try the next provider).
using KernelCreator =
    std::function<StatusOr<std::unique_ptr<Kernel>>(const Node& node, const Backend& backend)>;

/// A named collection of kernel creators (MNN's per-op creators).
class Provider {
 public:
  explicit Provider(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  /// Registers the creator for `qualifiedOp` ("Conv", "subgraph.x.Y").
  /// Throws `Error` if this provider already has one for the op.
  void add(std::string qualifiedOp, KernelCreator creator);
  /// The creator for `qualifiedOp`, or null.
  const KernelCreator* find(std::string_view qualifiedOp) const;
  /// The ops this provider implements, sorted.
  std::vector<std::string> ops() const;

 private:
  std::string name_;
  std::map<std::string, KernelCreator, std::less<>> creators_;
};

/// Describes one copy the session needs: a value of `dtype` moving from one
/// (device, layout) to another.
struct CopyRequest {
  DataType dtype = DataType::kFloat32;
  Device from;
  const Layout* fromLayout = nullptr;
  Device to;
  const Layout* toLayout = nullptr;
};

/// A device plus the kernels that run on it.
class Backend {
 public:
  /// `allocator` is the device's memory; `queue` runs its kernels.
  Backend(std::string name, Device device, std::shared_ptr<Allocator> allocator,
          std::unique_ptr<WorkQueue> queue);
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  /// Stable name, e.g. "reference" or "onednn".
  const std::string& name() const { return name_; }
  const Device& device() const { return device_; }
  /// The device's allocator.
  const std::shared_ptr<Allocator>& allocator() const { return allocator_; }
  WorkQueue& workQueue() const { return *queue_; }

  /// Appends a provider; earlier providers win when two implement an op.
  void addProvider(std::shared_ptr<Provider> provider);
  const std::vector<std::shared_ptr<Provider>>& providers() const { return providers_; }
  /// The first registered creator for `qualifiedOp`, or null.
  const KernelCreator* findCreator(std::string_view qualifiedOp) const;
  /// The provider whose creator findCreator() returns, or null.
  const Provider* findProvider(std::string_view qualifiedOp) const;

  /// Whether this backend claims a fused region node (domain "subgraph.*"
  /// with a "body" graph attribute) it has no dedicated kernel for. The
  /// default claims nothing; the session then runs the body on the
  /// reference backend.
  virtual bool claimsRegion(const Node& /*region*/) const { return false; }

  /// A kernel copying a value as `request` describes, or null if this
  /// backend cannot. The default handles host-to-host plain copies.
  virtual std::unique_ptr<Kernel> createCopy(const CopyRequest& request) const;

 private:
  std::string name_;
  Device device_;
  std::shared_ptr<Allocator> allocator_;
  std::unique_ptr<WorkQueue> queue_;
  std::vector<std::shared_ptr<Provider>> providers_;
};

/// Makes a backend instance; called once per session that names it.
using BackendFactory = std::function<StatusOr<std::shared_ptr<Backend>>()>;

/// Process-wide table of backend factories by name. Thread-safe.
class BackendRegistry {
 public:
  /// The registry, with "reference" already registered.
  static BackendRegistry& global();
  /// Registers a factory. Fails if the name is taken.
  Status add(std::string name, BackendFactory factory);
  /// Creates the backend named `name`; kNotFound lists the known names.
  StatusOr<std::shared_ptr<Backend>> create(std::string_view name) const;
  /// Registered names, sorted.
  std::vector<std::string> names() const;

 private:
  BackendRegistry() = default;
  mutable std::mutex mutex_;
  std::map<std::string, BackendFactory, std::less<>> factories_;
};

}  // namespace subgraph::runtime
