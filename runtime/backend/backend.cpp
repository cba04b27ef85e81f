//===- runtime/backend/backend.cpp - Backends, providers, registry --------===//
//
// Provider and Backend bookkeeping, the default host copy, and the process
// registry of backend factories. See subgraph/runtime/backend.h.
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/backend.h"

#include <cstring>

#include "subgraph/ir/graph.h"
#include "subgraph/runtime/reference_backend.h"

namespace subgraph::runtime {
namespace {

// Copies a plain host tensor to another plain host buffer.
class HostCopyKernel final : public Kernel {
 public:
  std::optional<size_t> outputAliasesInput(size_t) const override { return 0; }
  Status resize(ResizeContext& ctx) const override {
    TensorDesc out = ctx.inputDesc(0);
    out.layout = nullptr;
    ctx.setOutput(0, std::move(out));
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const TensorView& in = ctx.input(0);
    const TensorView& out = ctx.output(0);
    if (in.raw() != out.raw() && in.byteSize() > 0) std::memcpy(out.raw(), in.raw(), in.byteSize());
    return Status::ok();
  }
};

}  // namespace

void Provider::add(std::string qualifiedOp, KernelCreator creator) {
  if (creators_.count(qualifiedOp))
    throw Error(StatusCode::kInvalidArgument,
                "provider '" + name_ + "' already has a kernel for '" + qualifiedOp + "'");
  creators_.emplace(std::move(qualifiedOp), std::move(creator));
}

const KernelCreator* Provider::find(std::string_view qualifiedOp) const {
  auto it = creators_.find(qualifiedOp);
  return it == creators_.end() ? nullptr : &it->second;
}

std::vector<std::string> Provider::ops() const {
  std::vector<std::string> names;
  for (const auto& [name, creator] : creators_) names.push_back(name);
  return names;
}

Backend::Backend(std::string name, Device device, std::shared_ptr<Allocator> allocator,
                 std::unique_ptr<WorkQueue> queue)
    : name_(std::move(name)),
      device_(std::move(device)),
      allocator_(std::move(allocator)),
      queue_(std::move(queue)) {
  if (!allocator_) allocator_ = std::make_shared<HostAllocator>(device_.toString());
  if (!queue_) queue_ = std::make_unique<InlineWorkQueue>();
}

void Backend::addProvider(std::shared_ptr<Provider> provider) {
  providers_.push_back(std::move(provider));
}

const KernelCreator* Backend::findCreator(std::string_view qualifiedOp) const {
  for (const auto& p : providers_)
    if (const KernelCreator* c = p->find(qualifiedOp)) return c;
  return nullptr;
}

const Provider* Backend::findProvider(std::string_view qualifiedOp) const {
  for (const auto& p : providers_)
    if (p->find(qualifiedOp)) return p.get();
  return nullptr;
}

std::unique_ptr<Kernel> Backend::createCopy(const CopyRequest& request) const {
  if (request.from.isHost() && request.to.isHost() && !request.fromLayout && !request.toLayout)
    return std::make_unique<HostCopyKernel>();
  return nullptr;
}

BackendRegistry& BackendRegistry::global() {
  static BackendRegistry* registry = [] {
    auto* r = new BackendRegistry();
    (void)r->add(kReferenceBackendName,
                 []() -> StatusOr<std::shared_ptr<Backend>> { return createReferenceBackend(); });
    return r;
  }();
  return *registry;
}

Status BackendRegistry::add(std::string name, BackendFactory factory) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (factories_.count(name))
    return Status::invalid("backend '" + name + "' is already registered");
  factories_.emplace(std::move(name), std::move(factory));
  return Status::ok();
}

StatusOr<std::shared_ptr<Backend>> BackendRegistry::create(std::string_view name) const {
  BackendFactory factory;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = factories_.find(name);
    if (it == factories_.end()) {
      std::string known;
      for (const auto& [n, f] : factories_) known += (known.empty() ? "" : ", ") + n;
      return Status::error(StatusCode::kNotFound, "unknown backend '" + std::string(name) +
                                                      "' (registered: " + known + ")");
    }
    factory = it->second;
  }
  return factory();
}

std::vector<std::string> BackendRegistry::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [n, f] : factories_) out.push_back(n);
  return out;
}

}  // namespace subgraph::runtime
