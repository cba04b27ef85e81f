//===- plugins/host/kernel_adapters.cpp - A plugin's kernels and copies --===//
//
// Kernels: each creator becomes a runtime KernelCreator of a Provider on a
// Backend named after the plugin. A creator answering SG_UNSUPPORTED maps to
// kUnsupported, which makes the session try the next backend and finally
// its default region executor. Host and device are one code path: a kernel
// or copy with a device queue calls run_on_queue, one without calls run.
// Backends: the host CPU (PluginBackend) or the plugin's own device
// (AcceleratorBackend, on device_queue.h's queue), each offering the
// plugin's copies between its layouts and plain memory.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "device_queue.h"
#include "host_api.h"
#include "plugin_tables.h"
#include "subgraph/plugins/crash_handler.h"
#include "subgraph/runtime/allocator.h"
#include "subgraph/runtime/session.h"
#include "subgraph/runtime/work_queue.h"

namespace subgraph::plugins {
namespace adapters {
namespace {

// The plugin's device memory as an Allocator, with the same counters the
// host allocator keeps.
class PluginAllocator final : public runtime::Allocator {
 public:
  PluginAllocator(std::shared_ptr<const LoadedPlugin> plugin, const SgDeviceDesc* device)
      : plugin_(std::move(plugin)),
        device_(device),
        name_(plugin_->name() + ":" + deviceOf(*device).toString()) {}
  ~PluginAllocator() override {
    for (auto& [ptr, size] : live_) device_->deallocate(device_->user, ptr);
  }
  const std::string& name() const override { return name_; }
  StatusOr<void*> allocate(size_t bytes, size_t alignment) override {
    void* p = device_->allocate(device_->user, bytes ? bytes : 1, alignment);
    if (!p)
      return Status::error(StatusCode::kLimitExceeded,
                           name_ + ": the plugin's allocator failed to allocate " +
                               std::to_string(bytes) + " bytes");
    std::lock_guard<std::mutex> lock(mutex_);
    live_[p] = bytes;
    stats_.bytesInUse += bytes;
    stats_.peakBytesInUse = std::max(stats_.peakBytesInUse, stats_.bytesInUse);
    ++stats_.numAllocations;
    return p;
  }
  void deallocate(void* ptr) override {
    if (!ptr) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = live_.find(ptr);
      if (it == live_.end()) return;
      stats_.bytesInUse -= it->second;
      live_.erase(it);
    }
    device_->deallocate(device_->user, ptr);
  }
  runtime::AllocatorStats stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;
  const SgDeviceDesc* device_;
  std::string name_;
  mutable std::mutex mutex_;
  std::map<void*, size_t> live_;
  runtime::AllocatorStats stats_;
};

// Plain SgTensorShapes of a kernel's input descs (logical dims whatever the
// layout); false if a rank does not fit.
bool toShapes(const runtime::ResizeContext& ctx, std::vector<SgTensorShape>& in) {
  in.assign(ctx.numInputs(), SgTensorShape{});
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i)) continue;
    const runtime::TensorDesc& d = ctx.inputDesc(i);
    if (d.dims.size() > SG_MAX_RANK) return false;
    in[i].dtype = static_cast<SgDataType>(d.dtype);
    in[i].rank = static_cast<int32_t>(d.dims.size());
    std::copy(d.dims.begin(), d.dims.end(), in[i].dims);
  }
  return true;
}

class PluginKernel final : public runtime::Kernel {
 public:
  // `inputLayouts`/`outputLayouts`: what the kernel asked for, resolved
  // to the plugin's runtime layouts when it was created (null: plain).
  // `queue`: the device queue the kernel runs on (ABI 3), null on the host.
  PluginKernel(std::shared_ptr<const LoadedPlugin> plugin, const SgKernelDesc* desc, void* handle,
               const Node& node, std::vector<const runtime::Layout*> inputLayouts,
               std::vector<const runtime::Layout*> outputLayouts, void* queue)
      : plugin_(std::move(plugin)),
        desc_(desc),
        handle_(handle),
        node_(&node),
        v2_(hasV2Slots(*desc)),
        queue_(queue),
        inputLayouts_(std::move(inputLayouts)),
        outputLayouts_(std::move(outputLayouts)) {}
  ~PluginKernel() override { desc_->destroy(desc_->user, handle_); }

  bool usesOwnThreads() const override { return desc_->uses_own_threads != 0; }
  bool concurrentRequests() const override { return adapters::concurrentRequests(*desc_); }
  const runtime::Layout* inputLayout(size_t i) const override {
    return i < inputLayouts_.size() ? inputLayouts_[i] : nullptr;
  }
  const runtime::Layout* outputLayout(size_t o) const override {
    return o < outputLayouts_.size() ? outputLayouts_[o] : nullptr;
  }

  Status onSessionPrologue(runtime::SessionPrologueContext&) override {
    if (!desc_->session_prologue) return Status::ok();
    SgMessage m;
    PluginCallScope scope(plugin_->name(), "session_prologue", &node_->name());
    if (desc_->session_prologue(handle_, &m) != SG_OK)
      return Status(StatusCode::kPluginFailure,
                    prefix() + "session prologue: " + host::messageOr(m, "failed"));
    return Status::ok();
  }

  Status resize(runtime::ResizeContext& ctx) const override {
    std::vector<SgTensorShape> in;
    if (!toShapes(ctx, in)) return ctx.fail("input rank above SG_MAX_RANK");
    Status st = resizeOutputs(ctx, in);
    if (!st.isOk()) return st;
    for (size_t o = 0; o < ctx.numOutputs(); ++o)
      if (std::string why = cannotHold(ctx.outputDesc(o)); !why.empty())
        return ctx.fail(prefix() + "output " + std::to_string(o) + ": " + why);
    if (v2_ && desc_->scratch_size) {
      size_t bytes = 0;
      SgMessage m;
      PluginCallScope scope(plugin_->name(), "scratch_size", &node_->name());
      if (desc_->scratch_size(handle_, in.data(), in.size(), &bytes, &m) != SG_OK)
        return pluginFailure(ctx.fail(prefix() + "scratch_size: " + host::messageOr(m, "failed")));
      ctx.requestScratch(bytes);
    }
    return Status::ok();
  }

  Status run(runtime::RunContext& ctx) const override {
    std::vector<SgTensor> in(ctx.numInputs()), out(ctx.numOutputs());
    // The session converts every value into the layout the kernel asked
    // for; a mismatch here is the host's bug, so it is checked, not
    // trusted, before the plugin reads a buffer in the wrong layout.
    for (size_t i = 0; i < in.size(); ++i) {
      if (!ctx.hasInput(i)) continue;
      if (ctx.input(i).desc().layout != inputLayout(i))
        return ctx.fail(prefix() + "input " + std::to_string(i) + " arrived in layout " +
                        ctx.input(i).desc().toString() + ", not the one the kernel asked for");
      in[i] = toTensor(ctx.input(i));
    }
    for (size_t o = 0; o < out.size(); ++o) {
      if (ctx.output(o).desc().layout != outputLayout(o))
        return ctx.fail(prefix() + "output " + std::to_string(o) + " is in layout " +
                        ctx.output(o).desc().toString() + ", not the one the kernel asked for");
      out[o] = toTensor(ctx.output(o));
    }
    SgMessage m;
    SgStatus st = SG_OK;
    PluginCallScope scope(plugin_->name(), queue_ ? "run_on_queue" : "run", &node_->name());
    std::span<std::byte> scratch = ctx.scratch();
    if (queue_) {
      st = desc_->run_on_queue(handle_, queue_, in.data(), in.size(), out.data(), out.size(),
                               scratch.empty() ? nullptr : scratch.data(), scratch.size(), &m);
    } else if (v2_ && desc_->run_with_scratch) {
      st = desc_->run_with_scratch(handle_, in.data(), in.size(), out.data(), out.size(),
                                   scratch.empty() ? nullptr : scratch.data(), scratch.size(), &m);
    } else {
      st = desc_->run(handle_, in.data(), in.size(), out.data(), out.size(), &m);
    }
    if (st != SG_OK) return pluginFailure(ctx.fail(prefix() + host::messageOr(m, "run failed")));
    return Status::ok();
  }

 private:
  std::string prefix() const { return "plugin '" + plugin_->name() + "': "; }

  // Output descs from the plugin's resize, or else the node's static
  // output types; either way in the layouts the kernel asked for.
  Status resizeOutputs(runtime::ResizeContext& ctx, std::vector<SgTensorShape>& in) const {
    if (desc_->resize) {
      std::vector<SgTensorShape> out(ctx.numOutputs());
      SgMessage m;
      SgStatus st;
      {
        PluginCallScope scope(plugin_->name(), "resize", &node_->name());
        st = desc_->resize(handle_, in.data(), in.size(), out.data(), out.size(), &m);
      }
      if (st == SG_OK) {
        for (size_t o = 0; o < out.size(); ++o) {
          if (out[o].rank < 0 || out[o].rank > SG_MAX_RANK)
            return ctx.fail(prefix() + "resize returned rank " + std::to_string(out[o].rank));
          runtime::TensorDesc d;
          d.dtype = static_cast<DataType>(out[o].dtype);
          d.dims.assign(out[o].dims, out[o].dims + out[o].rank);
          d.layout = outputLayout(o);
          ctx.setOutput(o, std::move(d));
        }
        return Status::ok();
      }
      if (st != SG_UNSUPPORTED)
        return pluginFailure(ctx.fail(prefix() + "resize: " + host::messageOr(m, "failed")));
    }
    for (size_t o = 0; o < ctx.numOutputs(); ++o) {
      const Value* v = node_->output(o);
      if (!v || !v->type().shape || !isStaticShape(*v->type().shape))
        return ctx.fail(prefix() + "output " + std::to_string(o) +
                        " has no static shape and the plugin kernel has no resize");
      runtime::TensorDesc d;
      d.dtype = v->type().dtype;
      for (const Dim& dim : *v->type().shape) d.dims.push_back(dim.size());
      d.layout = outputLayout(o);
      ctx.setOutput(o, std::move(d));
    }
    return Status::ok();
  }

  std::shared_ptr<const LoadedPlugin> plugin_;
  const SgKernelDesc* desc_;
  void* handle_;
  const Node* node_;
  bool v2_;
  void* queue_;
  std::vector<const runtime::Layout*> inputLayouts_;
  std::vector<const runtime::Layout*> outputLayouts_;
};

// One of a plugin's copies (SgCopyDesc) as a runtime copy kernel: on the
// host (no queue) through run, across or within a device through
// run_on_queue on the backend's queue.
class PluginCopyKernel final : public runtime::Kernel {
 public:
  PluginCopyKernel(std::shared_ptr<const LoadedPlugin> plugin, const SgCopyDesc* desc,
                   void* queue = nullptr)
      : plugin_(std::move(plugin)),
        desc_(desc),
        queue_(queue),
        from_(plugin_->layoutFor(desc->from)),
        to_(plugin_->layoutFor(desc->to)) {}

  bool usesOwnThreads() const override { return desc_->uses_own_threads != 0; }
  bool concurrentRequests() const override { return adapters::concurrentRequests(*desc_); }
  const runtime::Layout* inputLayout(size_t) const override { return from_; }
  const runtime::Layout* outputLayout(size_t) const override { return to_; }

  Status resize(runtime::ResizeContext& ctx) const override {
    runtime::TensorDesc out = ctx.inputDesc(0);
    out.layout = to_;
    if (std::string why = cannotHold(out); !why.empty())
      return ctx.fail("plugin '" + plugin_->name() + "' copy: " + why);
    ctx.setOutput(0, std::move(out));
    return Status::ok();
  }

  Status run(runtime::RunContext& ctx) const override {
    SgTensor src = toTensor(ctx.input(0)), dst = toTensor(ctx.output(0));
    SgMessage m;
    PluginCallScope scope(plugin_->name(), "copy", nullptr);
    SgStatus st = queue_ ? desc_->run_on_queue(desc_->user, queue_, &src, &dst, &m)
                         : desc_->run(desc_->user, &src, &dst, &m);
    if (st != SG_OK)
      return pluginFailure(
          ctx.fail("plugin '" + plugin_->name() + "' copy: " + host::messageOr(m, "failed")));
    return Status::ok();
  }

  /// The copy's runtime layouts (null: plain).
  const runtime::Layout* from() const { return from_; }
  const runtime::Layout* to() const { return to_; }

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;
  const SgCopyDesc* desc_;
  void* queue_;
  const runtime::Layout* from_;
  const runtime::Layout* to_;
};

// Two copies through plain row-major, for layouts with no direct copy
// (two layouts of one plugin, or of two plugins): the plain tensor lives
// in the step's scratch memory.
class TwoStepCopyKernel final : public runtime::Kernel {
 public:
  TwoStepCopyKernel(std::unique_ptr<PluginCopyKernel> toPlain,
                    std::unique_ptr<PluginCopyKernel> fromPlain)
      : toPlain_(std::move(toPlain)), fromPlain_(std::move(fromPlain)) {}

  bool usesOwnThreads() const override {
    return toPlain_->usesOwnThreads() || fromPlain_->usesOwnThreads();
  }
  bool concurrentRequests() const override {
    return (!toPlain_->usesOwnThreads() || toPlain_->concurrentRequests()) &&
           (!fromPlain_->usesOwnThreads() || fromPlain_->concurrentRequests());
  }
  const runtime::Layout* inputLayout(size_t) const override { return toPlain_->from(); }
  const runtime::Layout* outputLayout(size_t) const override { return fromPlain_->to(); }

  Status resize(runtime::ResizeContext& ctx) const override {
    runtime::TensorDesc out = ctx.inputDesc(0);
    out.layout = fromPlain_->to();
    if (std::string why = cannotHold(out); !why.empty()) return ctx.fail(why);
    // The plain tensor between the two legs.
    ctx.requestScratch(runtime::TensorDesc{out.dtype, out.dims, nullptr}.byteSize());
    ctx.setOutput(0, std::move(out));
    return Status::ok();
  }

  Status run(runtime::RunContext& ctx) const override {
    runtime::TensorDesc plain = ctx.input(0).desc();
    plain.layout = nullptr;
    runtime::TensorView mid(&plain, ctx.scratch().data());
    runtime::TensorView in[] = {ctx.input(0)}, midway[] = {mid}, out[] = {ctx.output(0)};
    runtime::RunContext first(ctx.node(), in, midway, {}, nullptr);
    if (Status st = toPlain_->run(first); !st.isOk()) return st;
    runtime::RunContext second(ctx.node(), midway, out, {}, nullptr);
    return fromPlain_->run(second);
  }

 private:
  std::unique_ptr<PluginCopyKernel> toPlain_;
  std::unique_ptr<PluginCopyKernel> fromPlain_;
};

// The plugin's copy from `from` to `to` (null: plain) for `dtype`, or null;
// with a `direction` (>= 0), only a device copy (ABI 3) in that direction.
const SgCopyDesc* findCopy(std::span<const SgCopyDesc* const> copies, const SgLayoutDesc* from,
                           const SgLayoutDesc* to, DataType dtype, int32_t direction = -1) {
  for (const SgCopyDesc* c : copies) {
    if (direction >= 0 && (!hasV3Slots(*c) || c->direction != direction)) continue;
    if (c->from == from && c->to == to &&
        (c->dtype == SG_DTYPE_UNDEFINED || c->dtype == static_cast<SgDataType>(dtype)))
      return c;
  }
  return nullptr;
}

// The host CPU as a plugin's backend: its kernels, plus copies between
// plugin layouts and plain row-major. A copy between two plugin layouts
// with no direct copy goes through plain, each leg by its layout's owner.
class PluginBackend final : public runtime::Backend {
 public:
  PluginBackend(std::shared_ptr<const LoadedPlugin> plugin,
                std::shared_ptr<runtime::Allocator> allocator)
      : runtime::Backend(plugin->name(), runtime::Device{"cpu", 0}, std::move(allocator),
                         std::make_unique<runtime::InlineWorkQueue>()) {}

  std::unique_ptr<runtime::Kernel> createCopy(const runtime::CopyRequest& request) const override {
    auto* from = dynamic_cast<const PluginLayout*>(request.fromLayout);
    auto* to = dynamic_cast<const PluginLayout*>(request.toLayout);
    // Plain to plain, another device, or a layout of an in-process backend
    // (which makes its own copies): not a plugin copy.
    if (!request.from.isHost() || !request.to.isHost() || (!from && !to) ||
        (request.fromLayout && !from) || (request.toLayout && !to))
      return runtime::Backend::createCopy(request);
    auto leg = [&](const PluginLayout* owner, const SgLayoutDesc* src,
                   const SgLayoutDesc* dst) -> std::unique_ptr<PluginCopyKernel> {
      std::shared_ptr<const LoadedPlugin> plugin = owner->owner().shared_from_this();
      const SgPlugin& p = plugin->table();
      const SgCopyDesc* c =
          hasV2Slots(p) ? findCopy({p.copies, p.num_copies}, src, dst, request.dtype) : nullptr;
      return c ? std::make_unique<PluginCopyKernel>(std::move(plugin), c) : nullptr;
    };
    if (!to) return leg(from, from->desc(), nullptr);
    if (!from) return leg(to, nullptr, to->desc());
    if (&from->owner() == &to->owner())
      if (auto direct = leg(from, from->desc(), to->desc())) return direct;
    std::unique_ptr<PluginCopyKernel> toPlain = leg(from, from->desc(), nullptr);
    std::unique_ptr<PluginCopyKernel> fromPlain = leg(to, nullptr, to->desc());
    if (!toPlain || !fromPlain) return nullptr;
    return std::make_unique<TwoStepCopyKernel>(std::move(toPlain), std::move(fromPlain));
  }
};

// The backend of a plugin with its own device: runs the plugin's kernels on
// one PluginQueue and offers the plugin's copies across the device boundary.
class AcceleratorBackend final : public runtime::Backend {
 public:
  AcceleratorBackend(std::shared_ptr<const LoadedPlugin> plugin, const SgDeviceDesc* device,
                     std::shared_ptr<runtime::Allocator> allocator,
                     std::unique_ptr<PluginQueue> queue);
  std::unique_ptr<runtime::Kernel> createCopy(const runtime::CopyRequest& request) const override;
  /// The queue's plugin handle.
  void* queueHandle() const { return queue_; }

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;
  const SgDeviceDesc* device_;
  void* queue_;
};

AcceleratorBackend::AcceleratorBackend(std::shared_ptr<const LoadedPlugin> plugin,
                                       const SgDeviceDesc* device,
                                       std::shared_ptr<runtime::Allocator> allocator,
                                       std::unique_ptr<PluginQueue> queue)
    : runtime::Backend(plugin->name(), deviceOf(*device), std::move(allocator), std::move(queue)),
      plugin_(std::move(plugin)),
      device_(device),
      queue_(static_cast<PluginQueue&>(workQueue()).handle()) {}

std::unique_ptr<runtime::Kernel> AcceleratorBackend::createCopy(
    const runtime::CopyRequest& request) const {
  const runtime::Device& self = device();
  int32_t direction = -1;
  if (request.from.isHost() && request.to == self) direction = SG_COPY_HOST_TO_DEVICE;
  if (request.from == self && request.to.isHost()) direction = SG_COPY_DEVICE_TO_HOST;
  if (request.from == self && request.to == self) direction = SG_COPY_ON_DEVICE;
  if (direction < 0) return nullptr;
  // Only this plugin's layouts (or plain) can be on either side.
  auto own = [&](const runtime::Layout* l, const SgLayoutDesc*& desc) {
    auto* pl = dynamic_cast<const PluginLayout*>(l);
    desc = pl && &pl->owner() == plugin_.get() ? pl->desc() : nullptr;
    return !l || desc;
  };
  const SgLayoutDesc *from = nullptr, *to = nullptr;
  if (!own(request.fromLayout, from) || !own(request.toLayout, to)) return nullptr;
  const SgCopyDesc* c =
      findCopy(copiesOf(plugin_->table(), *device_), from, to, request.dtype, direction);
  if (!c) return nullptr;
  return std::make_unique<PluginCopyKernel>(plugin_, c, queue_);
}

// The layouts a new kernel reads and writes, resolved to the plugin's
// runtime layouts; "" or why one is not the plugin's.
std::string resolveLayouts(const LoadedPlugin& plugin, const SgKernelDesc& desc, void* handle,
                           std::vector<const runtime::Layout*>& inputs,
                           std::vector<const runtime::Layout*>& outputs) {
  if (!hasV2Slots(desc)) return {};
  std::string bad;
  auto resolve = [&](auto slot, std::vector<const runtime::Layout*>& into, const char* what) {
    if (!slot) return;
    for (size_t k = 0; k < into.size() && bad.empty(); ++k) {
      const SgLayoutDesc* l = slot(handle, k);
      into[k] = l ? plugin.layoutFor(l) : nullptr;
      if (l && !into[k])
        bad = std::string(what) + " " + std::to_string(k) +
              "'s layout is not one of the plugin's layouts";
    }
  };
  resolve(desc.input_layout, inputs, "input");
  resolve(desc.output_layout, outputs, "output");
  return bad;
}

// The runtime creator of one plugin kernel creator.
runtime::KernelCreator makeCreator(std::shared_ptr<const LoadedPlugin> self,
                                   const SgKernelDesc* desc,
                                   std::shared_ptr<const KernelContextData> data) {
  return [self, desc, data](
             const Node& node,
             const runtime::Backend& backend) -> StatusOr<std::unique_ptr<runtime::Kernel>> {
    SgKernelContext context = data->toC();
    SgMessage m;
    void* handle = nullptr;
    SgStatus st;
    {
      PluginCallScope scope(self->name(), "kernel create", &node.name());
      st = desc->create(desc->user, host::toC(&node), &context, &handle, &m);
    }
    std::string who = runtime::nodeErrorPrefix(&node) + "plugin '" + self->name() + "' ";
    if (st == SG_UNSUPPORTED)
      return Status::error(StatusCode::kUnsupported, who + "declined: " + m.text);
    if (st != SG_OK || !handle)
      return Status(StatusCode::kPluginFailure,
                    who + "kernel creator failed: " + host::messageOr(m, "no message"));
    // The layouts are asked for once and checked here, so a kernel naming a
    // layout that is not its plugin's fails to compile instead of handing
    // the runtime a pointer it cannot size.
    std::vector<const runtime::Layout*> inputs(node.numInputs()), outputs(node.numOutputs());
    if (std::string bad = resolveLayouts(*self, *desc, handle, inputs, outputs); !bad.empty()) {
      desc->destroy(desc->user, handle);
      return Status::invalid(who + "kernel: " + bad);
    }
    auto* device = dynamic_cast<const AcceleratorBackend*>(&backend);
    return std::unique_ptr<runtime::Kernel>(std::make_unique<PluginKernel>(
        self, desc, handle, node, std::move(inputs), std::move(outputs),
        device ? device->queueHandle() : nullptr));
  };
}

}  // namespace
}  // namespace adapters

bool LoadedPlugin::hasKernels() const { return plugin_->num_kernels > 0; }

std::shared_ptr<runtime::Backend> LoadedPlugin::createRuntimeBackend(int threads) const {
  PluginRunOptions options;
  options.threads = threads;
  StatusOr<std::shared_ptr<runtime::Backend>> made = createRuntimeBackend(options);
  if (!made.isOk()) throw Error(made.status());
  return std::move(made).value();
}

StatusOr<std::shared_ptr<runtime::Backend>> LoadedPlugin::createRuntimeBackend(
    const PluginRunOptions& options) const {
  // The plugin sizes its own thread pools from this count.
  SUBGRAPH_RETURN_IF_ERROR(runtime::checkThreadCount(options.threads));
  std::shared_ptr<const LoadedPlugin> self = shared_from_this();
  StatusOr<int> index = deviceIndex(options);
  if (!index.isOk()) return index.status();
  const SgDeviceDesc* device = plugin_->device;
  if (*index > 0) {
    StatusOr<std::vector<const SgDeviceDesc*>> all = devices(options);
    if (!all.isOk()) return all.status();
    device = (*all)[static_cast<size_t>(*index)];
  }
  std::shared_ptr<runtime::Allocator> allocator =
      device ? std::shared_ptr<runtime::Allocator>(
                   std::make_shared<adapters::PluginAllocator>(self, device))
             : std::make_shared<runtime::HostAllocator>(info_.name + ":cpu");
  std::shared_ptr<runtime::Backend> backend;
  if (adapters::isAcceleratorDevice(device)) {
    StatusOr<std::unique_ptr<adapters::PluginQueue>> queue =
        adapters::PluginQueue::create(self, device);
    if (!queue.isOk()) return queue.status();
    backend = std::make_shared<adapters::AcceleratorBackend>(self, device, std::move(allocator),
                                                             std::move(queue).value());
  } else {
    backend = std::make_shared<adapters::PluginBackend>(self, std::move(allocator));
  }
  auto data = std::make_shared<const adapters::KernelContextData>(options, info_.name, *index);
  auto provider = std::make_shared<runtime::Provider>(info_.name);
  for (size_t i = 0; i < plugin_->num_kernels; ++i)
    provider->add(plugin_->kernels[i]->op_type,
                  adapters::makeCreator(self, plugin_->kernels[i], data));
  backend->addProvider(std::move(provider));
  return backend;
}

}  // namespace subgraph::plugins
