//===- plugins/host/plugin_adapters.cpp - Plugin tables as in-process APIs -===//
//
// Properties: a declarative pattern runs on the host's PatternSelector; a
// callback selector is wrapped as a SubgraphSelector. The partitioner's
// Decision cannot carry an error, so a failing plugin callback answers "no"
// and the property remembers the error, which SelectionStatus then returns:
// the partition fails with the plugin's message, naming the call and the
// node, instead of going on with a half-answered selector.
//
// Kernels: each creator becomes a runtime KernelCreator of a Provider on a
// Backend named after the plugin. A creator answering SG_UNSUPPORTED maps to
// kUnsupported, which makes the session try the next backend and finally
// its default region executor.
//
//===----------------------------------------------------------------------===//
#include "plugin_adapters.h"

#include "subgraph/plugins/crash_handler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "device_adapters.h"
#include "host_api.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/partition/fused_name.h"
#include "subgraph/runtime/allocator.h"
#include "subgraph/runtime/session.h"
#include "subgraph/runtime/work_queue.h"
#include "subgraph/support/did_you_mean.h"

namespace subgraph::plugins {
namespace adapters {
namespace {

using partition::Decision;

std::vector<std::string> splitOps(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t bar = s.find('|', start);
    if (bar == std::string::npos) bar = s.size();
    if (bar > start) out.push_back(s.substr(start, bar - start));
    start = bar + 1;
  }
  return out;
}

// The first error a plugin callback reported during one partitioning run.
class ErrorSlot {
 public:
  void record(const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_.empty()) first_ = message;
  }
  std::string first() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return first_;
  }

 private:
  mutable std::mutex mutex_;
  std::string first_;
};

// A callback selector of a plugin, as MXNet's SubgraphSelector.
class PluginSelector final : public partition::SubgraphSelector {
 public:
  PluginSelector(std::shared_ptr<const LoadedPlugin> plugin, const SgPropertyDesc* desc,
                 void* handle, std::shared_ptr<ErrorSlot> errors)
      : plugin_(std::move(plugin)), desc_(desc), handle_(handle), errors_(std::move(errors)) {}
  ~PluginSelector() override { desc_->destroy_selector(desc_->user, handle_); }

  Decision Select(const Node& node) override {
    return ask("select", node, [&](int32_t* accept, SgMessage* m) {
      return desc_->select(handle_, host::toC(&node), accept, m);
    });
  }
  Decision SelectInput(const Node& node, const Node& producer) override {
    if (!desc_->select_input) return Decision::no();
    return ask("select_input", node, [&](int32_t* accept, SgMessage* m) {
      return desc_->select_input(handle_, host::toC(&node), host::toC(&producer), accept, m);
    });
  }
  Decision SelectOutput(const Node& node, const Node& consumer) override {
    if (!desc_->select_output) return Decision::no();
    return ask("select_output", node, [&](int32_t* accept, SgMessage* m) {
      return desc_->select_output(handle_, host::toC(&node), host::toC(&consumer), accept, m);
    });
  }
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override {
    std::vector<const Node*> all(candidates.begin(), candidates.end());
    if (!desc_->filter) return all;
    std::vector<const SgNode*> in;
    for (const Node* n : candidates) in.push_back(host::toC(n));
    std::vector<uint8_t> keep(in.size(), 1);
    SgMessage m;
    SgStatus st;
    {
      PluginCallScope scope(plugin_->name(), "filter",
                            candidates.empty() ? nullptr : &candidates.front()->name());
      st = desc_->filter(handle_, in.data(), in.size(), keep.data(), &m);
    }
    if (st != SG_OK) {
      errors_->record(prefix("filter") + host::messageOr(m, "failed"));
      return {};
    }
    std::vector<const Node*> out;
    for (size_t i = 0; i < all.size(); ++i)
      if (keep[i]) out.push_back(all[i]);
    return out;
  }
  // The partitioner's line already says "dropped by Filter of <property>";
  // this adds the plugin's reason, if it gives one.
  std::string FilterReason(const Node& node) const override {
    if (desc_->struct_size <= SG_PROPERTY_DESC_V2_SIZE || !desc_->filter_reason) return {};
    SgMessage m;
    SgStatus st;
    {
      PluginCallScope scope(plugin_->name(), "filter_reason", &node.name());
      st = desc_->filter_reason(handle_, host::toC(&node), &m);
    }
    if (st != SG_OK) {
      errors_->record(prefix("filter_reason") + host::messageOr(m, "failed"));
      return {};
    }
    return host::messageOr(m, "");
  }
  void Reset() override {
    if (!desc_->reset) return;
    SgMessage m;
    PluginCallScope scope(plugin_->name(), "reset", nullptr);
    if (desc_->reset(handle_, &m) != SG_OK)
      errors_->record(prefix("reset") + host::messageOr(m, "failed"));
  }

 private:
  std::string prefix(const char* slot) const {
    return "plugin '" + plugin_->name() + "' property '" + desc_->name + "' " + slot + ": ";
  }
  template <typename Call>
  Decision ask(const char* slot, const Node& node, Call&& call) {
    SgMessage m;
    int32_t accept = 0;
    SgStatus st;
    {
      PluginCallScope scope(plugin_->name(), slot, &node.name());
      st = call(&accept, &m);
    }
    if (st != SG_OK) {
      errors_->record("plugin '" + plugin_->name() + "' property '" + desc_->name + "' " + slot +
                      " on node '" + node.name() + "': " + host::messageOr(m, "failed"));
      return Decision::no("plugin error");
    }
    return accept ? Decision::yes() : Decision::no(std::move(m.text));
  }

  std::shared_ptr<const LoadedPlugin> plugin_;
  const SgPropertyDesc* desc_;
  void* handle_;
  std::shared_ptr<ErrorSlot> errors_;
};

// A selector that only refuses, for a property whose create_selector
// failed (the error is already recorded).
class RefusingSelector final : public partition::SubgraphSelector {
 public:
  Decision Select(const Node&) override { return Decision::no("plugin selector unavailable"); }
  Decision SelectInput(const Node&, const Node&) override { return Decision::no(); }
  Decision SelectOutput(const Node&, const Node&) override { return Decision::no(); }
};

class PluginProperty final : public partition::SubgraphProperty {
 public:
  PluginProperty(std::shared_ptr<const LoadedPlugin> plugin, const SgPropertyDesc* desc)
      : plugin_(std::move(plugin)), desc_(desc), errors_(std::make_shared<ErrorSlot>()) {
    partition::PropertyOptions options;
    options.inferenceOnly = desc->inference_only != 0;
    options.minRegionSize = desc->min_region_size ? desc->min_region_size : 1;
    setOptions(options);
    if (desc->pattern) {
      StatusOr<partition::Pattern> p = buildPattern(*desc->pattern, plugin_);
      // Checked at load time; a failure here cannot happen, but keep it an
      // error rather than a crash.
      if (p.isOk())
        pattern_ = std::make_shared<const partition::Pattern>(std::move(p).value());
      else
        errors_->record(p.status().message());
    }
    // Checked at load time too.
    if (StatusOr<std::vector<std::string>> seeds = seedOpTypes(*desc); seeds.isOk())
      seeds_ = std::move(seeds).value();
    else
      errors_->record(seeds.status().message());
  }

  std::string name() const override { return desc_->name; }

  std::unique_ptr<partition::SubgraphSelector> CreateSubgraphSelector() const override {
    void* handle = nullptr;
    SgMessage m;
    PluginCallScope scope(plugin_->name(), "create_selector", nullptr);
    if (desc_->create_selector(desc_->user, &handle, &m) != SG_OK) {
      errors_->record("plugin '" + plugin_->name() + "' property '" + desc_->name +
                      "' create_selector: " + host::messageOr(m, "failed"));
      return std::make_unique<RefusingSelector>();
    }
    return std::make_unique<PluginSelector>(plugin_, desc_, handle, errors_);
  }

  std::unique_ptr<partition::SubgraphSelectorV2> CreateSubgraphSelectorV2() const override {
    if (desc_->pattern) {
      if (!pattern_) return partition::adaptSelector(std::make_unique<RefusingSelector>());
      return std::make_unique<partition::PatternSelector>(pattern_);
    }
    return SubgraphProperty::CreateSubgraphSelectorV2();
  }

  // A declarative pattern runs on the host's PatternSelector, which says a
  // reasonless no to every node but its anchor's ops; a selector says so
  // where it declares seed_op_types.
  std::vector<std::string> SeedOpTypes() const override {
    return pattern_ ? pattern_->nodes()[0].opTypes() : seeds_;
  }

  // A property without create_subgraph_node accepts every region as
  // defaultFusedNode() would, so the partitioner builds no body to ask it
  // and moves the members into the bodies after partitioning.
  bool FusesWithoutBody() const override { return !desc_->create_subgraph_node; }
  // The ABI has no per-property hooks (a plugin's transforms run before
  // and after all partitioning).
  bool HasPartitionHooks() const override { return false; }

  partition::SubgraphNodeResult CreateSubgraphNode(
      std::shared_ptr<Graph> subgraph, const partition::RegionInfo& region) const override {
    const Graph* body = subgraph.get();
    partition::FusedNode node = partition::defaultFusedNode(std::move(subgraph), region);
    if (!desc_->create_subgraph_node) return node;
    SgFusedNode fused;
    fused.node = &node;
    fused.defaultDomain = partition::fusedDomain(region.backend);
    fused.defaultOp = region.property;
    SgMessage m;
    int32_t accept = 1;
    SgStatus st;
    {
      PluginCallScope scope(plugin_->name(), "create_subgraph_node", nullptr);
      st =
          desc_->create_subgraph_node(desc_->user, host::toC(body), region.id, &fused, &accept, &m);
    }
    if (st != SG_OK) {
      errors_->record("plugin '" + plugin_->name() + "' property '" + desc_->name +
                      "' create_subgraph_node: " + host::messageOr(m, "failed"));
      return partition::SubgraphNodeResult::reject("plugin error");
    }
    if (!accept) return partition::SubgraphNodeResult::reject(m.text);
    return node;
  }

  Status SelectionStatus() const override {
    std::string e = errors_->first();
    return e.empty() ? Status::ok() : Status::invalid(e);
  }

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;
  const SgPropertyDesc* desc_;
  std::shared_ptr<ErrorSlot> errors_;
  std::shared_ptr<const partition::Pattern> pattern_;
  std::vector<std::string> seeds_;  // a selector's declared seed ops
};

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
      return Status::invalid(prefix() + "session prologue: " + host::messageOr(m, "failed"));
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
        return ctx.fail(prefix() + "scratch_size: " + host::messageOr(m, "failed"));
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
    if (st != SG_OK) return ctx.fail(prefix() + host::messageOr(m, "run failed"));
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
        return ctx.fail(prefix() + "resize: " + host::messageOr(m, "failed"));
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

// One of a plugin's copies (SgCopyDesc) as a runtime copy kernel.
class PluginCopyKernel final : public runtime::Kernel {
 public:
  PluginCopyKernel(std::shared_ptr<const LoadedPlugin> plugin, const SgCopyDesc* desc)
      : plugin_(std::move(plugin)),
        desc_(desc),
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
    if (desc_->run(desc_->user, &src, &dst, &m) != SG_OK)
      return ctx.fail("plugin '" + plugin_->name() + "' copy: " + host::messageOr(m, "failed"));
    return Status::ok();
  }

  /// The copy's runtime layouts (null: plain).
  const runtime::Layout* from() const { return from_; }
  const runtime::Layout* to() const { return to_; }

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;
  const SgCopyDesc* desc_;
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

// The plugin's copy from `from` to `to` (null: plain) for `dtype`, or null.
const SgCopyDesc* findCopy(const SgPlugin& p, const SgLayoutDesc* from, const SgLayoutDesc* to,
                           DataType dtype) {
  if (!hasV2Slots(p)) return nullptr;
  for (size_t i = 0; i < p.num_copies; ++i) {
    const SgCopyDesc* c = p.copies[i];
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
      const SgCopyDesc* c = findCopy(plugin->table(), src, dst, request.dtype);
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

}  // namespace

namespace {

// What an MXNet selector calls the ops that ONNX names otherwise.
std::string_view mxnetEquivalent(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"Convolution", "Conv"},
      {"Deconvolution", "ConvTranspose"},
      {"FullyConnected", "Gemm or MatMul"},
      {"BatchNorm", "BatchNormalization"},
      {"LayerNorm", "LayerNormalization"},
      {"Activation", "Relu, Sigmoid or Tanh"},
      {"LeakyReLU", "LeakyRelu"},
      {"Pooling", "MaxPool or AveragePool"},
      {"elemwise_add", "Add"},
      {"broadcast_add", "Add"},
      {"elemwise_mul", "Mul"},
      {"SoftmaxOutput", "Softmax"},
      {"softmax", "Softmax"},
      {"SliceChannel", "Split"},
      {"Reshape", "Reshape"},
  };
  for (const auto& [mxnet, onnx] : kNames)
    if (mxnet == name) return onnx;
  return {};
}

// "" when `op` names an op the registry knows (a plain name is an ONNX op; a
// dotted one, a plugin-defined op, is not checked here), else why not, with
// the MXNet equivalent or the nearest ONNX names.
std::string unknownOp(std::string_view op) {
  if (op.find('.') != std::string_view::npos || OpRegistry::global().lookup("", op)) return {};
  std::string why = "'" + std::string(op) + "', which is not an ONNX op";
  if (std::string_view onnx = mxnetEquivalent(op); !onnx.empty())
    return why + " (MXNet's name; ONNX calls it " + std::string(onnx) + ")";
  std::vector<std::string> near;
  for (const OpSchema* schema : OpRegistry::global().schemas())
    if (schema->domain.empty() && editDistance(op, schema->name) <= 2) near.push_back(schema->name);
  if (!near.empty()) why += " (did you mean " + fmt::format("{}", fmt::join(near, " or ")) + "?)";
  return why;
}

}  // namespace

StatusOr<partition::Pattern> buildPattern(const SgPatternDesc& desc,
                                          std::shared_ptr<const LoadedPlugin> plugin) {
  if (desc.abi_version < SG_PLUGIN_ABI_MIN_VERSION || desc.abi_version > SG_PLUGIN_ABI_VERSION ||
      desc.struct_size < sizeof(SgPatternDesc))
    return Status::invalid("pattern has plugin ABI version " + std::to_string(desc.abi_version) +
                           " or a short struct_size; this subgraph's is " +
                           std::to_string(SG_PLUGIN_ABI_VERSION));
  if (desc.num_nodes == 0 || !desc.nodes) return Status::invalid("pattern has no nodes");
  if (desc.num_edges && !desc.edges) return Status::invalid("pattern has a null edge array");
  partition::PatternBuilder builder(desc.name ? desc.name : "pattern");
  for (size_t i = 0; i < desc.num_nodes; ++i) {
    const SgPatternNode& n = desc.nodes[i];
    if (n.struct_size < sizeof(SgPatternNode) || !n.op_types || !*n.op_types)
      return Status::invalid("pattern node " + std::to_string(i) + " has no op types");
    std::string ops = n.op_types;
    if (ops != "*")
      for (const std::string& op : splitOps(ops))
        if (std::string why = unknownOp(op); !why.empty())
          return Status::invalid("pattern node " + std::to_string(i) + " names op " + why +
                                 ", so it can never match");
    partition::OpMatcher m = ops == "*" ? partition::OpMatcher::anyOp()
                             : ops.find('|') != std::string::npos
                                 ? partition::OpMatcher::anyOf(splitOps(ops))
                                 : partition::OpMatcher(ops);
    if (n.flags & SG_PATTERN_OPTIONAL) m.optional();
    if (n.flags & SG_PATTERN_ONE_USE) m.where(partition::predicates::hasOneUse());
    if (n.flags & SG_PATTERN_STATIC_SHAPES) m.where(partition::predicates::staticShapes());
    if (n.flags & SG_PATTERN_NO_ZERO_DIMS) m.where(partition::predicates::noZeroSizeDims());
    if (n.flags & SG_PATTERN_USES_INSIDE) m.usesStayInside();
    if (n.flags & SG_PATTERN_ONLY_FEEDS_NEXT) m.onlyFeedsNext();
    for (uint32_t bit = 0; bit < 32; ++bit)
      if (n.constant_inputs & (1u << bit)) m.where(partition::predicates::inputIsConstant(bit));
    if (n.predicate && plugin) {
      auto fn = n.predicate;
      void* user = n.predicate_user;
      m.where([plugin, fn, user](const Node& node) -> Decision {
        SgMessage msg;
        int32_t accept = 0;
        PluginCallScope scope(plugin->name(), "pattern predicate", &node.name());
        if (fn(user, host::toC(&node), &accept, &msg) != SG_OK)
          return Decision::no("plugin '" + plugin->name() +
                              "' predicate failed: " + host::messageOr(msg, "no message"));
        return accept ? Decision::yes() : Decision::no(std::move(msg.text));
      });
    }
    builder.add(std::move(m));
  }
  for (size_t e = 0; e < desc.num_edges; ++e) {
    const SgPatternEdge& edge = desc.edges[e];
    if (edge.producer >= desc.num_nodes || edge.consumer >= desc.num_nodes)
      return Status::invalid("pattern edge " + std::to_string(e) + " names a missing node");
    builder.connect(edge.producer, edge.consumer, edge.input, edge.output);
  }
  return builder.build();
}

StatusOr<std::vector<std::string>> seedOpTypes(const SgPropertyDesc& desc) {
  if (desc.struct_size <= SG_PROPERTY_DESC_V4_SIZE || !desc.seed_op_types)
    return std::vector<std::string>{};
  if (desc.pattern)
    return Status::invalid(
        "sets seed_op_types, which only a selector property takes "
        "(a pattern's seeds are its anchor's ops)");
  std::vector<std::string> ops = splitOps(desc.seed_op_types);
  if (ops.empty())
    return Status::invalid(
        "has an empty seed_op_types, so nothing could seed it "
        "(NULL offers every node)");
  if (ops.size() == 1 && ops[0] == "*") return std::vector<std::string>{};
  for (const std::string& op : ops)
    if (std::string why = unknownOp(op); !why.empty())
      return Status::invalid("seed_op_types names op " + why + ", so it can never seed a region");
  return ops;
}

}  // namespace adapters

partition::SubgraphBackend LoadedPlugin::instantiateBackend() const {
  partition::SubgraphBackend backend;
  backend.name = info_.name;
  for (size_t i = 0; i < plugin_->num_properties; ++i)
    backend.properties.push_back(
        std::make_unique<adapters::PluginProperty>(shared_from_this(), plugin_->properties[i]));
  return backend;
}

StatusOr<partition::SubgraphBackend> LoadedPlugin::instantiateBackend(
    const PluginRunOptions& options) const {
  if (!adapters::hasV5Slots(*plugin_) || !plugin_->properties_for) return instantiateBackend();
  // Selection sees the session as kernels will: its precision and its
  // options, never a thread count.
  PluginRunOptions session = options;
  session.threads = 0;
  adapters::KernelContextData data(session, info_.name);
  SgKernelContext context = data.toC();
  size_t count = 0;
  const SgPropertyDesc* const* table = nullptr;
  SgMessage m;
  SgStatus st;
  {
    PluginCallScope scope(info_.name, "properties_for", nullptr);
    st = plugin_->properties_for(plugin_->user, &context, &count, &table, &m);
  }
  std::string who = "plugin '" + info_.name + "' properties_for";
  if (st != SG_OK) return Status::invalid(who + ": " + host::messageOr(m, "failed"));
  if (count && !table) return Status::invalid(who + ": a count with a null table");
  if (std::string why = adapters::checkPropertyTable(table, count); !why.empty())
    return Status::invalid(who + ": " + why);
  partition::SubgraphBackend backend;
  backend.name = info_.name;
  for (size_t i = 0; i < count; ++i)
    backend.properties.push_back(
        std::make_unique<adapters::PluginProperty>(shared_from_this(), table[i]));
  return backend;
}

bool LoadedPlugin::hasKernels() const { return plugin_->num_kernels > 0; }

namespace adapters {
namespace {

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
      return Status::invalid(who + "kernel creator failed: " + host::messageOr(m, "no message"));
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
  std::shared_ptr<runtime::Allocator> allocator =
      plugin_->device ? std::shared_ptr<runtime::Allocator>(
                            std::make_shared<adapters::PluginAllocator>(self, plugin_->device))
                      : std::make_shared<runtime::HostAllocator>(info_.name + ":cpu");
  std::shared_ptr<runtime::Backend> backend;
  if (adapters::isAcceleratorDevice(plugin_->device)) {
    StatusOr<std::unique_ptr<adapters::PluginQueue>> queue = adapters::PluginQueue::create(self);
    if (!queue.isOk()) return queue.status();
    backend = std::make_shared<adapters::AcceleratorBackend>(self, std::move(allocator),
                                                             std::move(queue).value());
  } else {
    backend = std::make_shared<adapters::PluginBackend>(self, std::move(allocator));
  }
  auto data = std::make_shared<const adapters::KernelContextData>(options, info_.name);
  auto provider = std::make_shared<runtime::Provider>(info_.name);
  for (size_t i = 0; i < plugin_->num_kernels; ++i)
    provider->add(plugin_->kernels[i]->op_type,
                  adapters::makeCreator(self, plugin_->kernels[i], data));
  backend->addProvider(std::move(provider));
  return backend;
}

Status LoadedPlugin::runTransforms(Graph& graph, int stage) const {
  for (size_t i = 0; i < plugin_->num_transforms; ++i) {
    const SgTransformDesc* t = plugin_->transforms[i];
    if (t->stage != stage) continue;
    SgMessage m;
    int32_t changed = 0;
    PluginCallScope scope(info_.name, "transform", nullptr);
    if (t->run(t->user, host::toMutableC(&graph), &changed, &m) != SG_OK)
      return Status::invalid("plugin '" + info_.name + "' transform '" + t->name +
                             "': " + host::messageOr(m, "failed"));
  }
  return Status::ok();
}

}  // namespace subgraph::plugins
