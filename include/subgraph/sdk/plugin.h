//===- subgraph/sdk/plugin.h - The C++ SDK for backend plugins -*- C++ -*-===//
//
// Header-only C++ on top of the plain-C plugin ABI (subgraph/plugin_abi.h).
// A plugin author derives from SubgraphProperty/SubgraphSelector (MXNet's
// semantics), writes kernels as plain C++ classes, and exports everything
// with one macro. The SDK owns the C tables and turns every exception into a
// status code at the boundary, so no C++ exception or STL type ever crosses
// it; the plugin is built with hidden visibility and a version script that
// exports only the entry point (subgraph_add_plugin() in CMake does both).
//
// Usage sketch (docs/writing-a-plugin.md walks through it):
//
//   #include <subgraph/sdk/plugin.h>
//   namespace sdk = subgraph::sdk;
//
//   // 1. A property with a declarative pattern: Conv -> BN -> optional Relu.
//   //    Fused nodes get op "conv_bn_relu" in domain "subgraph.mybackend".
//   auto convBnRelu = std::make_unique<sdk::PatternProperty>(
//       "conv_bn_relu",
//       sdk::Pattern::chain("conv_bn_relu",
//                           {sdk::OpPattern("Conv").constantInput(1).staticShapes(),
//                            sdk::OpPattern("BatchNormalization").oneUse(),
//                            sdk::OpPattern("Relu").optional()}));
//
//   // 1b. Or a hand-written selector (MXNet's SubgraphSelector):
//   class ConvBnSelector : public sdk::SubgraphSelector {
//     sdk::Decision Select(const sdk::NodeView& n) override { return n.is("Conv"); }
//     sdk::Decision SelectOutput(const sdk::NodeView& n, const sdk::NodeView& c) override {
//       return n.is("Conv") && c.is("BatchNormalization");
//     }
//   };
//   class ConvBnProperty : public sdk::SubgraphProperty {
//    public:
//     ConvBnProperty() : SubgraphProperty("conv_bn") {}
//     std::unique_ptr<sdk::SubgraphSelector> CreateSubgraphSelector() const override {
//       return std::make_unique<ConvBnSelector>();
//     }
//   };
//
//   // 2. A kernel for the fused op: it sees the region's body once, at
//   //    creation (op types, attributes, constant weights), prepares in
//   //    sessionPrologue, and runs on dense float32 NCHW buffers.
//   class ConvBnReluKernel : public sdk::Kernel {
//    public:
//     ConvBnReluKernel(const sdk::NodeView& fused, const sdk::KernelContext& ctx) {
//       for (const sdk::NodeView& n : fused.body()->nodes())
//         if (n.is("Conv")) {
//           strides_ = n.attrInts("strides", {1, 1});
//           auto w = n.input(1).constantData<float>();  // the weights
//           weights_.assign(w.begin(), w.end());
//         }
//       threads_ = ctx.numThreads;
//     }
//     void sessionPrologue() override { /* reorder weights, make primitives */ }
//     void run(std::span<const sdk::Tensor> in, std::span<const sdk::Tensor> out) override {
//       const float* x = in[0].data<float>();
//       float* y = out[0].data<float>();
//       // ...
//     }
//    private:
//     std::vector<int64_t> strides_;
//     std::vector<float> weights_;
//     int threads_ = 0;
//   };
//
//   // 3. Export: the backend's name, its version, a description, then what
//   //    it registers. A creator may return null to decline a region, which
//   //    then runs on subgraph's default executor.
//   SUBGRAPH_PLUGIN("mybackend", "1.0.0", "Conv+BN+Relu fusion") {
//     plugin.addProperty(std::move(convBnRelu));   // or addProperty<ConvBnProperty>()
//     plugin.addKernel("subgraph.mybackend.conv_bn_relu",
//                      [](const sdk::NodeView& node, const sdk::KernelContext& ctx) {
//                        return std::make_unique<ConvBnReluKernel>(node, ctx);
//                      },
//                      {.usesOwnThreads = true});
//   }
//
// (In real code the property is built inside the SUBGRAPH_PLUGIN body.)
// Besides properties and kernels, a plugin may define ops for its own nodes
// (addOp), graph transforms run before or after partitioning
// (addTransform), its device allocator (setDevice), and (since ABI 2) its
// own memory layouts with the copies into and out of them (addLayout,
// addCopy; examples/blocked_layout shows both).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "subgraph/plugin_abi.h"
#include "subgraph/sdk/graph_view.h"
#include "subgraph/sdk/kernel.h"
#include "subgraph/sdk/selector.h"

namespace subgraph::sdk {

/// One operand of an op definition.
struct Operand {
  /// 0 required, 1 optional, 2 variadic (SgOperandDef::arity).
  std::string name;
  int32_t arity = 0;
};

/// A backend-specific op, registered with the host when the plugin loads
/// (the host's OpSchemaBuilder). Ops live as long as the process, so an op
/// defined again by a reloaded plugin must be the same.
class OpDef {
 public:
  /// Op `domain`.`name`, e.g. ("example.max_splat", "MaxSplat").
  OpDef(std::string domain, std::string name)
      : domain_(std::move(domain)), name_(std::move(name)) {}
  /// A one-paragraph description.
  OpDef& doc(std::string text) {
    doc_ = std::move(text);
    return *this;
  }
  /// A required input.
  OpDef& input(std::string name) { return operand(inputs_, std::move(name), 0); }
  /// An optional input.
  OpDef& optionalInput(std::string name) { return operand(inputs_, std::move(name), 1); }
  /// Trailing variadic inputs.
  OpDef& variadicInput(std::string name) { return operand(inputs_, std::move(name), 2); }
  /// A required output.
  OpDef& output(std::string name) { return operand(outputs_, std::move(name), 0); }
  /// An attribute with a default (its kind is the default's).
  OpDef& attr(Attr defaultValue) {
    attrs_.push_back({std::move(defaultValue), false});
    return *this;
  }
  /// An attribute every node must carry; `kind` is SG_ATTR_*.
  OpDef& requiredAttr(std::string name, SgAttrKind kind) {
    Attr a;
    a.name = std::move(name);
    a.kind = kind;
    attrs_.push_back({std::move(a), true});
    return *this;
  }
  /// Copies every attribute (with defaults) of a registered op first.
  OpDef& attributesFrom(std::string op) {
    attributesFrom_ = std::move(op);
    return *this;
  }
  /// Reuses a registered op's shape inference (e.g. "Conv"); without it,
  /// every output has the type of input 0.
  OpDef& inferFrom(std::string op) {
    inferFrom_ = std::move(op);
    return *this;
  }
  /// Marks the op elementwise.
  OpDef& dataParallel(bool value = true) {
    dataParallel_ = value;
    return *this;
  }

  /// The C form; points into this OpDef, which must outlive it.
  const SgOpDef& toC() {
    cInputs_.clear();
    for (const Operand& o : inputs_) cInputs_.push_back({o.name.c_str(), o.arity});
    cOutputs_.clear();
    for (const Operand& o : outputs_) cOutputs_.push_back({o.name.c_str(), o.arity});
    cAttrs_.clear();
    for (const auto& [a, required] : attrs_) cAttrs_.push_back({a.toC(), required ? 1 : 0});
    c_ = SgOpDef{};
    c_.abi_version = SG_PLUGIN_ABI_VERSION;
    c_.struct_size = sizeof(SgOpDef);
    c_.domain = domain_.c_str();
    c_.name = name_.c_str();
    c_.doc = doc_.c_str();
    c_.num_inputs = cInputs_.size();
    c_.inputs = cInputs_.data();
    c_.num_outputs = cOutputs_.size();
    c_.outputs = cOutputs_.data();
    c_.num_attrs = cAttrs_.size();
    c_.attrs = cAttrs_.data();
    c_.attributes_from = attributesFrom_.empty() ? nullptr : attributesFrom_.c_str();
    c_.infer_from = inferFrom_.empty() ? nullptr : inferFrom_.c_str();
    c_.data_parallel = dataParallel_ ? 1 : 0;
    return c_;
  }

 private:
  OpDef& operand(std::vector<Operand>& list, std::string name, int32_t arity) {
    list.push_back({std::move(name), arity});
    return *this;
  }

  std::string domain_, name_, doc_, attributesFrom_, inferFrom_;
  std::vector<Operand> inputs_, outputs_;
  std::vector<std::pair<Attr, bool>> attrs_;
  bool dataParallel_ = false;
  std::vector<SgOperandDef> cInputs_, cOutputs_;
  std::vector<SgAttrDef> cAttrs_;
  SgOpDef c_{};
};

/// When a transform runs.
enum class Stage : int32_t {
  kPrePartition = SG_TRANSFORM_PRE_PARTITION,    ///< Before any backend partitions.
  kPostPartition = SG_TRANSFORM_POST_PARTITION,  ///< After all backends did.
};

/// A graph transform; returns true if it changed the graph.
using Transform = std::function<bool(MutableGraph& graph)>;

/// The device the plugin's kernels run on: host-addressable memory from
/// the plugin's own allocator.
struct Device {
  /// "cpu" (the only kind ABI version 1 supports).
  std::string kind = "cpu";
  /// Returns null on failure; `alignment` is a power of two.
  std::function<void*(size_t bytes, size_t alignment)> allocate;
  /// Frees memory from allocate.
  std::function<void(void* ptr)> deallocate;
};

/// A device of the plugin's own whose memory the host never reads (ABI 3):
/// a GPU, an accelerator, or examples/emulated_device. The plugin derives
/// from it and passes it to Plugin::setDevice; the host then gives each
/// session its own queue, keeps values in the device's memory between the
/// plugin's kernels, and moves them across the boundary only with the
/// copies below, asynchronously, waiting only where a host kernel needs a
/// value and at the end of a run. Every member may throw sdk::Error; the
/// SDK turns it into a status at the boundary.
class AcceleratorDevice {
 public:
  virtual ~AcceleratorDevice() = default;
  /// The device kind: "cuda", "emu", ... (letters, digits, '_'; not "cpu").
  virtual std::string kind() const = 0;
  /// Which device of its kind.
  virtual int id() const { return 0; }
  /// One line for `subgraph plugins`, e.g. the GPU's model.
  virtual std::string description() const { return {}; }

  /// Device memory of `bytes`, aligned to `alignment`; null when out of memory.
  virtual void* allocate(size_t bytes, size_t alignment) = 0;
  /// Frees memory from allocate.
  virtual void deallocate(void* ptr) = 0;

  /// A new work queue; work on one queue runs in submission order.
  virtual Queue createQueue() = 0;
  /// Waits for the queue's work, then frees it.
  virtual void destroyQueue(Queue queue) = 0;
  /// Blocks until `queue` has run everything submitted; throws the first
  /// error of that work.
  virtual void synchronize(Queue queue) = 0;

  /// An event: a point in a queue that the host or another queue waits for.
  virtual void* createEvent() = 0;
  /// Frees an event (the host never destroys one a queue still waits for).
  virtual void destroyEvent(void* event) = 0;
  /// Marks the point everything submitted to `queue` so far reaches.
  virtual void record(void* event, Queue queue) = 0;
  /// Blocks the host until `event`'s point is reached; throws an error of
  /// the work before it.
  virtual void synchronizeEvent(void* event) = 0;
  /// Later work on `queue` waits for `event` without blocking the host.
  virtual void waitEvent(Queue queue, void* event) = 0;
  /// Device milliseconds between two reached events; negative if unknown.
  virtual double elapsedMs(void* start, void* end) {
    (void)start;
    (void)end;
    return -1;
  }

  /// Submits a copy of plain row-major `src` (host memory) into `dst`
  /// (device memory, plain) to `queue`. `src` stays valid until it completes.
  virtual void copyToDevice(Queue queue, const Tensor& src, const Tensor& dst) = 0;
  /// Submits a copy of plain `src` (device) into `dst` (host memory).
  virtual void copyToHost(Queue queue, const Tensor& src, const Tensor& dst) = 0;
  /// Submits a plain copy within the device.
  virtual void copyOnDevice(Queue queue, const Tensor& src, const Tensor& dst) = 0;

  /// Since ABI 5: true if the device records and replays work (the four
  /// members below; CUDA graphs). The host then submits a run's device
  /// steps once and launches the recording for later requests.
  virtual bool canCapture() const { return false; }
  /// Work submitted to `queue` from now on is recorded, not run.
  virtual void beginCapture(Queue queue) {
    (void)queue;
    throw Error("this device cannot capture work");
  }
  /// Ends the recording; returns the recorded work (a graph).
  virtual void* endCapture(Queue queue) {
    (void)queue;
    throw Error("this device cannot capture work");
  }
  /// Submits the recorded work of `graph` to `queue`, without waiting.
  virtual void launch(void* graph, Queue queue) {
    (void)graph;
    (void)queue;
    throw Error("this device cannot capture work");
  }
  /// Frees a graph endCapture returned.
  virtual void destroyGraph(void* graph) { (void)graph; }
};

namespace detail {
struct PluginState;
}  // namespace detail

/// Since ABI 5: one option of the plugin (SgOptionDesc). The host refuses
/// a session option the plugin did not declare, and a value not in
/// `values`, before the plugin sees either.
struct OptionDef {
  /// Letters, digits and '_'.
  std::string name;
  /// The values it takes; empty: any (the plugin checks where it reads it).
  std::vector<std::string> values = {};
  /// What the plugin does without it, for `subgraph plugins`.
  std::string defaultValue = {};
  /// One line.
  std::string doc = {};
};

/// Since ABI 5: makes the properties for one session, from its precision
/// and options (KernelContext::numThreads is 0 here). Called once per
/// distinct precision and options; the SDK keeps each result until the
/// plugin is unloaded.
using PropertiesFor =
    std::function<std::vector<std::unique_ptr<SubgraphProperty>>(const KernelContext& session)>;

/// What a plugin registers; the SUBGRAPH_PLUGIN body receives it as
/// `plugin`.
class Plugin {
 public:
  /// Appends a property; properties run as passes in the order added.
  void addProperty(std::unique_ptr<SubgraphProperty> property) {
    properties_.push_back(std::move(property));
  }
  /// Appends a default-constructed `P`.
  template <typename P, typename... Args>
  void addProperty(Args&&... args) {
    addProperty(std::make_unique<P>(std::forward<Args>(args)...));
  }
  /// Since ABI 5: the properties depend on the session (its precision,
  /// its options for this plugin), so that what selection plans is what
  /// the kernels, made with the same KernelContext, run. Replaces
  /// addProperty: a plugin uses one or the other.
  void setProperties(PropertiesFor make) { propertiesFor_ = std::move(make); }
  /// Since ABI 5: declares an option (`--plugin-option <plugin>.<name>=v`).
  void addOption(OptionDef option) { options_.push_back(std::move(option)); }
  /// Defines an op for the plugin's own nodes.
  void addOp(OpDef op) { ops_.push_back(std::move(op)); }
  /// Adds a transform run at `stage`.
  void addTransform(std::string name, Stage stage, Transform transform) {
    transforms_.push_back({std::move(name), stage, std::move(transform)});
  }
  /// Registers the kernel creator for qualified op type `opType`.
  void addKernel(std::string opType, KernelCreator creator, KernelOptions options = {}) {
    kernels_.push_back({std::move(opType), std::move(creator), options});
  }
  /// Sets the device and its allocator (default: the host's CPU memory).
  void setDevice(Device device) { device_ = std::make_unique<Device>(std::move(device)); }
  /// Since ABI 3: the plugin's kernels run on `device`, a device with its
  /// own memory and queues. Kernels then override Kernel::runOnQueue.
  void setDevice(std::unique_ptr<AcceleratorDevice> device) { accelerator_ = std::move(device); }
  /// Since ABI 6: the plugin has several devices of one kind (GPUs, an
  /// emulator's devices). `make(k)` makes device k (id k) the first time a
  /// session uses it; every session shares it until the plugin unloads.
  /// `count(session)` says how many a session may use (1 to 64): the GPUs
  /// present, or an option. Kernels find theirs in KernelContext::device.
  /// Replaces setDevice; such devices have plain copies only (no
  /// addDeviceCopy).
  void setDevices(std::function<std::unique_ptr<AcceleratorDevice>(int index)> make,
                  std::function<int(const KernelContext& session)> count) {
    makeDevice_ = std::move(make);
    deviceCount_ = std::move(count);
  }
  /// Since ABI 3: a copy between a layout of the plugin on one side of the
  /// device boundary and another (null: plain) on the other, submitted to
  /// a queue, e.g. host NCHW float32 to device NHWC float16. The plain
  /// copies in both directions come from the AcceleratorDevice already.
  void addDeviceCopy(const Layout* from, const Layout* to, CopyDirection direction,
                     QueueCopyFn copy, CopyOptions options = {}) {
    deviceCopies_.push_back({from, to, direction, std::move(copy), options});
  }
  /// Defines a memory layout of the plugin's own, named `name` (unique in
  /// the plugin), sized by `size`. The plugin keeps it; kernels return the
  /// pointer from inputLayout()/outputLayout(). Each layout needs a copy
  /// from plain and one to plain (addCopy), or the host refuses the plugin.
  const Layout* addLayout(std::string name, LayoutSize size) {
    layouts_.push_back(std::unique_ptr<Layout>(new Layout(std::move(name), std::move(size))));
    return layouts_.back().get();
  }
  /// Adds a copy from layout `from` to layout `to` (null: plain row-major;
  /// not both), each one this plugin's addLayout returned.
  void addCopy(const Layout* from, const Layout* to, CopyFn copy, CopyOptions options = {}) {
    copies_.push_back({from, to, std::move(copy), options});
  }

  /// The host's ABI version, to guard calls to slots newer than 1.
  uint32_t hostAbiVersion() const { return host_->abi_version; }
  /// The host's table.
  const SgHostApi* host() const { return host_; }

 private:
  friend struct detail::PluginState;
  struct TransformEntry {
    std::string name;
    Stage stage;
    Transform fn;
  };
  struct KernelEntry {
    std::string opType;
    KernelCreator creator;
    KernelOptions options;
  };
  struct CopyEntry {
    const Layout* from;
    const Layout* to;
    CopyFn fn;
    CopyOptions options;
  };
  struct DeviceCopyEntry {
    const Layout* from;
    const Layout* to;
    CopyDirection direction;
    QueueCopyFn fn;
    CopyOptions options;
  };
  explicit Plugin(const SgHostApi* host) : host_(host) {}

  const SgHostApi* host_;
  std::vector<std::unique_ptr<SubgraphProperty>> properties_;
  std::deque<OpDef> ops_;
  std::vector<TransformEntry> transforms_;
  std::vector<KernelEntry> kernels_;
  std::unique_ptr<Device> device_;
  std::vector<std::unique_ptr<Layout>> layouts_;
  std::vector<CopyEntry> copies_;
  std::unique_ptr<AcceleratorDevice> accelerator_;
  std::function<std::unique_ptr<AcceleratorDevice>(int)> makeDevice_;
  std::function<int(const KernelContext&)> deviceCount_;
  std::vector<DeviceCopyEntry> deviceCopies_;
  PropertiesFor propertiesFor_;
  std::vector<OptionDef> options_;
};

namespace detail {

/// Runs `body` and turns every exception into a status and one line in
/// `message`: the only place exceptions stop.
template <typename F>
SgStatus guarded(const SgHostApi* api, SgMessage* message, F&& body) noexcept {
  auto say = [&](const char* text) {
    if (api && message) api->message_set(message, text);
  };
  try {
    return body();
  } catch (const Error& e) {
    say(e.what());
    return e.code() == SG_OK ? SG_ERROR : e.code();
  } catch (const std::bad_alloc&) {
    say("out of memory");
    return SG_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    say(e.what());
    return SG_ERROR;
  } catch (...) {
    say("unknown exception");
    return SG_ERROR;
  }
}

/// A property and its C tables.
struct PropertyEntry {
  const SgHostApi* api = nullptr;
  SubgraphProperty* property = nullptr;
  SgPropertyDesc desc{};
  SgPatternDesc pattern{};
  std::vector<SgPatternNode> patternNodes;
  std::string seeds;  // a selector's SeedOpTypes(), joined by '|'
  std::vector<std::pair<PropertyEntry*, size_t>> predicateUsers;
};

/// A live selector.
struct SelectorEntry {
  const SgHostApi* api = nullptr;
  std::unique_ptr<SubgraphSelector> selector;
};

/// A kernel creator and its C table.
struct KernelEntry {
  const SgHostApi* api = nullptr;
  KernelCreator creator;
  SgKernelDesc desc{};
  std::string opType;
  /// The device of index k the kernel runs on, null if there is none.
  std::function<AcceleratorDevice*(int)> deviceAt;
};

/// A copy and its C table.
struct CopyEntry {
  const SgHostApi* api = nullptr;
  CopyFn fn;
  QueueCopyFn queueFn;
  SgCopyDesc desc{};
};

/// A transform and its C table.
struct TransformEntry {
  const SgHostApi* api = nullptr;
  Transform fn;
  SgTransformDesc desc{};
  std::string name;
};

inline SgStatus answer(const SgHostApi* api, const Decision& d, int32_t* accept,
                       SgMessage* message) {
  *accept = d ? 1 : 0;
  if (!d && !d.reason().empty() && message) api->message_set(message, d.reason().c_str());
  return SG_OK;
}

inline SgStatus patternPredicate(void* user, const SgNode* node, int32_t* accept,
                                 SgMessage* message) {
  auto* slot = static_cast<std::pair<PropertyEntry*, size_t>*>(user);
  const SgHostApi* api = slot->first->api;
  return guarded(api, message, [&] {
    const OpPattern& op = slot->first->property->pattern()->nodes()[slot->second];
    return answer(api, op.predicate()(NodeView(api, node)), accept, message);
  });
}

inline SgStatus createSelector(void* user, void** selector, SgMessage* message) {
  auto* entry = static_cast<PropertyEntry*>(user);
  return guarded(entry->api, message, [&] {
    auto made = std::make_unique<SelectorEntry>();
    made->api = entry->api;
    made->selector = entry->property->CreateSubgraphSelector();
    if (!made->selector)
      throw Error("property '" + entry->property->name() +
                  "' has neither a pattern nor a selector");
    *selector = made.release();
    return SG_OK;
  });
}

inline void destroySelector(void* /*user*/, void* selector) {
  delete static_cast<SelectorEntry*>(selector);
}

inline SgStatus select(void* selector, const SgNode* node, int32_t* accept, SgMessage* message) {
  auto* s = static_cast<SelectorEntry*>(selector);
  return guarded(s->api, message, [&] {
    return answer(s->api, s->selector->Select(NodeView(s->api, node)), accept, message);
  });
}

inline SgStatus selectInput(void* selector, const SgNode* node, const SgNode* producer,
                            int32_t* accept, SgMessage* message) {
  auto* s = static_cast<SelectorEntry*>(selector);
  return guarded(s->api, message, [&] {
    return answer(s->api,
                  s->selector->SelectInput(NodeView(s->api, node), NodeView(s->api, producer)),
                  accept, message);
  });
}

inline SgStatus selectOutput(void* selector, const SgNode* node, const SgNode* consumer,
                             int32_t* accept, SgMessage* message) {
  auto* s = static_cast<SelectorEntry*>(selector);
  return guarded(s->api, message, [&] {
    return answer(s->api,
                  s->selector->SelectOutput(NodeView(s->api, node), NodeView(s->api, consumer)),
                  accept, message);
  });
}

inline SgStatus filter(void* selector, const SgNode* const* candidates, size_t count, uint8_t* keep,
                       SgMessage* message) {
  auto* s = static_cast<SelectorEntry*>(selector);
  return guarded(s->api, message, [&] {
    std::vector<NodeView> in;
    for (size_t i = 0; i < count; ++i) in.emplace_back(s->api, candidates[i]);
    std::vector<NodeView> kept = s->selector->Filter(in);
    for (size_t i = 0; i < count; ++i)
      keep[i] = std::find(kept.begin(), kept.end(), in[i]) != kept.end() ? 1 : 0;
    return SG_OK;
  });
}

inline SgStatus filterReason(void* selector, const SgNode* node, SgMessage* reason) {
  auto* s = static_cast<SelectorEntry*>(selector);
  return guarded(s->api, reason, [&] {
    std::string why = s->selector->FilterReason(NodeView(s->api, node));
    if (!why.empty()) s->api->message_set(reason, why.c_str());
    return SG_OK;
  });
}

inline SgStatus reset(void* selector, SgMessage* message) {
  auto* s = static_cast<SelectorEntry*>(selector);
  return guarded(s->api, message, [&] {
    s->selector->Reset();
    return SG_OK;
  });
}

inline SgStatus createSubgraphNode(void* user, const SgGraph* body, int32_t regionId,
                                   SgFusedNode* fused, int32_t* accept, SgMessage* message) {
  auto* entry = static_cast<PropertyEntry*>(user);
  const SgHostApi* api = entry->api;
  return guarded(api, message, [&] {
    FusedNode node = entry->property->CreateSubgraphNode(GraphView(api, body), regionId);
    *accept = node.accepted ? 1 : 0;
    if (!node.accepted) {
      if (!node.reason.empty()) api->message_set(message, node.reason.c_str());
      return SG_OK;
    }
    if (!node.opType.empty() || !node.domain.empty())
      api->fused_node_set_op(fused, node.domain.empty() ? nullptr : node.domain.c_str(),
                             node.opType.empty() ? nullptr : node.opType.c_str());
    if (!node.name.empty()) api->fused_node_set_name(fused, node.name.c_str());
    for (const Attr& a : node.attrs) {
      SgAttrValue v = a.toC();
      api->fused_node_add_attr(fused, &v);
    }
    return SG_OK;
  });
}

/// A kernel together with the host table, so the per-kernel slots (which
/// receive only the kernel pointer) can report errors.
struct KernelBox {
  const SgHostApi* api = nullptr;
  std::unique_ptr<Kernel> kernel;
};

/// The C++ view of a kernel context (or, since 5, of a session).
inline KernelContext toKernelContext(const SgKernelContext* context) {
  KernelContext ctx;
  if (context) ctx.numThreads = context->num_threads;
  if (context && context->abi_version >= 3 &&
      context->struct_size >= offsetof(SgKernelContext, option_values) + sizeof(void*)) {
    ctx.precision = context->precision ? context->precision : "";
    for (size_t i = 0; i < context->num_options; ++i)
      ctx.options[context->option_names[i]] = context->option_values[i];
  }
  if (context && context->abi_version >= 6 && context->struct_size > SG_KERNEL_CONTEXT_V5_SIZE)
    ctx.deviceIndex = context->device_index;
  return ctx;
}

inline SgStatus createBoxedKernel(void* user, const SgNode* node, const SgKernelContext* context,
                                  void** kernel, SgMessage* message) {
  auto* entry = static_cast<KernelEntry*>(user);
  return guarded(entry->api, message, [&] {
    KernelContext ctx = toKernelContext(context);
    if (entry->deviceAt) {
      ctx.device = entry->deviceAt(ctx.deviceIndex);
      if (!ctx.device)
        throw Error("the host asked for a kernel on device " + std::to_string(ctx.deviceIndex) +
                    ", which the plugin never gave it");
    }
    auto box = std::make_unique<KernelBox>();
    box->api = entry->api;
    box->kernel = entry->creator(NodeView(entry->api, node), ctx);
    if (!box->kernel) throw Unsupported("the plugin's creator for " + entry->opType + " declined");
    *kernel = box.release();
    return SG_OK;
  });
}

inline void destroyBoxedKernel(void* /*user*/, void* kernel) {
  delete static_cast<KernelBox*>(kernel);
}

inline SgStatus sessionPrologue(void* kernel, SgMessage* message) {
  auto* box = static_cast<KernelBox*>(kernel);
  return guarded(box->api, message, [&] {
    box->kernel->sessionPrologue();
    return SG_OK;
  });
}

inline std::vector<Shape> toShapes(const SgTensorShape* shapes, size_t count) {
  std::vector<Shape> out(count);
  for (size_t i = 0; i < count; ++i) {
    out[i].dtype = static_cast<DataType>(shapes[i].dtype);
    out[i].dims.assign(shapes[i].dims, shapes[i].dims + (shapes[i].rank < 0 ? 0 : shapes[i].rank));
  }
  return out;
}

inline SgStatus resizeKernel(void* kernel, const SgTensorShape* inputs, size_t numInputs,
                             SgTensorShape* outputs, size_t numOutputs, SgMessage* message) {
  auto* box = static_cast<KernelBox*>(kernel);
  return guarded(box->api, message, [&]() -> SgStatus {
    std::optional<std::vector<Shape>> out = box->kernel->resize(toShapes(inputs, numInputs));
    if (!out) return SG_UNSUPPORTED;
    if (out->size() != numOutputs)
      throw Error("resize returned " + std::to_string(out->size()) + " shapes for " +
                  std::to_string(numOutputs) + " outputs");
    for (size_t o = 0; o < numOutputs; ++o) {
      if ((*out)[o].dims.size() > SG_MAX_RANK) throw Error("resize: rank above SG_MAX_RANK");
      outputs[o].dtype = static_cast<SgDataType>((*out)[o].dtype);
      outputs[o].rank = static_cast<int32_t>((*out)[o].dims.size());
      for (size_t d = 0; d < (*out)[o].dims.size(); ++d) outputs[o].dims[d] = (*out)[o].dims[d];
    }
    return SG_OK;
  });
}

// The input_layout and output_layout slots: Kernel::inputLayout or
// Kernel::outputLayout (`Which`) as the C description.
template <const Layout* (Kernel::*Which)(size_t) const>
const SgLayoutDesc* kernelLayout(void* kernel, size_t i) {
  try {
    const Layout* l = (static_cast<KernelBox*>(kernel)->kernel.get()->*Which)(i);
    return l ? l->toC() : nullptr;
  } catch (...) {
    return nullptr;
  }
}

inline SgStatus scratchSize(void* kernel, const SgTensorShape* inputs, size_t numInputs,
                            size_t* bytes, SgMessage* message) {
  auto* box = static_cast<KernelBox*>(kernel);
  return guarded(box->api, message, [&] {
    *bytes = box->kernel->scratchBytes(toShapes(inputs, numInputs));
    return SG_OK;
  });
}

/// The host's tensors as SDK Tensors.
inline std::vector<Tensor> toTensors(const SgTensor* tensors, size_t count) {
  std::vector<Tensor> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) out.emplace_back(tensors[i]);
  return out;
}

inline SgStatus runKernelWithScratch(void* kernel, const SgTensor* inputs, size_t numInputs,
                                     const SgTensor* outputs, size_t numOutputs, void* scratch,
                                     size_t scratchBytes, SgMessage* message) {
  auto* box = static_cast<KernelBox*>(kernel);
  return guarded(box->api, message, [&] {
    box->kernel->runWithScratch(toTensors(inputs, numInputs), toTensors(outputs, numOutputs),
                                {static_cast<std::byte*>(scratch), scratchBytes});
    return SG_OK;
  });
}

// The version-1 slot, which a host of this version never calls (it calls
// run_with_scratch); kept for the table's required `run`.
inline SgStatus runKernel(void* kernel, const SgTensor* inputs, size_t numInputs,
                          const SgTensor* outputs, size_t numOutputs, SgMessage* message) {
  return runKernelWithScratch(kernel, inputs, numInputs, outputs, numOutputs, nullptr, 0, message);
}

inline SgStatus runCopy(void* user, const SgTensor* src, const SgTensor* dst, SgMessage* message) {
  auto* entry = static_cast<CopyEntry*>(user);
  return guarded(entry->api, message, [&] {
    entry->fn(Tensor(*src), Tensor(*dst));
    return SG_OK;
  });
}

inline SgStatus runKernelOnQueue(void* kernel, void* queue, const SgTensor* inputs,
                                 size_t numInputs, const SgTensor* outputs, size_t numOutputs,
                                 void* scratch, size_t scratchBytes, SgMessage* message) {
  auto* box = static_cast<KernelBox*>(kernel);
  return guarded(box->api, message, [&] {
    box->kernel->runOnQueue(Queue{queue}, toTensors(inputs, numInputs),
                            toTensors(outputs, numOutputs),
                            {static_cast<std::byte*>(scratch), scratchBytes});
    return SG_OK;
  });
}

inline SgStatus runCopyOnQueue(void* user, void* queue, const SgTensor* src, const SgTensor* dst,
                               SgMessage* message) {
  auto* entry = static_cast<CopyEntry*>(user);
  return guarded(entry->api, message, [&] {
    entry->queueFn(Queue{queue}, Tensor(*src), Tensor(*dst));
    return SG_OK;
  });
}

inline SgStatus runTransform(void* user, SgGraph* graph, int32_t* changed, SgMessage* message) {
  auto* entry = static_cast<TransformEntry*>(user);
  return guarded(entry->api, message, [&] {
    MutableGraph g(entry->api, graph, message);
    *changed = entry->fn(g) ? 1 : 0;
    return SG_OK;
  });
}

inline void* deviceAllocate(void* user, size_t bytes, size_t alignment) {
  try {
    return static_cast<Device*>(user)->allocate(bytes, alignment);
  } catch (...) {
    return nullptr;
  }
}

inline void deviceDeallocate(void* user, void* ptr) {
  try {
    static_cast<Device*>(user)->deallocate(ptr);
  } catch (...) {
  }
}

/// The SgDeviceDesc slots of an AcceleratorDevice (ABI 3).
struct AcceleratorSlots {
  static AcceleratorDevice& of(void* user) { return *static_cast<AcceleratorDevice*>(user); }
  static void* allocate(void* user, size_t bytes, size_t alignment) {
    try {
      return of(user).allocate(bytes, alignment);
    } catch (...) {
      return nullptr;
    }
  }
  static void deallocate(void* user, void* ptr) {
    try {
      of(user).deallocate(ptr);
    } catch (...) {
    }
  }
  static SgStatus queueCreate(void* user, void** queue, SgMessage* m) {
    return guarded(api, m, [&] {
      *queue = of(user).createQueue().handle;
      return SG_OK;
    });
  }
  static void queueDestroy(void* user, void* queue) {
    try {
      of(user).destroyQueue(Queue{queue});
    } catch (...) {
    }
  }
  static SgStatus queueSynchronize(void* user, void* queue, SgMessage* m) {
    return guarded(api, m, [&] {
      of(user).synchronize(Queue{queue});
      return SG_OK;
    });
  }
  static SgStatus eventCreate(void* user, void** event, SgMessage* m) {
    return guarded(api, m, [&] {
      *event = of(user).createEvent();
      return SG_OK;
    });
  }
  static void eventDestroy(void* user, void* event) {
    try {
      of(user).destroyEvent(event);
    } catch (...) {
    }
  }
  static SgStatus eventRecord(void* user, void* event, void* queue, SgMessage* m) {
    return guarded(api, m, [&] {
      of(user).record(event, Queue{queue});
      return SG_OK;
    });
  }
  static SgStatus eventSynchronize(void* user, void* event, SgMessage* m) {
    return guarded(api, m, [&] {
      of(user).synchronizeEvent(event);
      return SG_OK;
    });
  }
  static SgStatus beginCapture(void* user, void* queue, SgMessage* m) {
    return guarded(api, m, [&] {
      of(user).beginCapture(Queue{queue});
      return SG_OK;
    });
  }
  static SgStatus endCapture(void* user, void* queue, void** graph, SgMessage* m) {
    return guarded(api, m, [&] {
      *graph = of(user).endCapture(Queue{queue});
      return SG_OK;
    });
  }
  static SgStatus graphLaunch(void* user, void* graph, void* queue, SgMessage* m) {
    return guarded(api, m, [&] {
      of(user).launch(graph, Queue{queue});
      return SG_OK;
    });
  }
  static void graphDestroy(void* user, void* graph) {
    try {
      of(user).destroyGraph(graph);
    } catch (...) {
    }
  }
  static SgStatus queueWaitEvent(void* user, void* queue, void* event, SgMessage* m) {
    return guarded(api, m, [&] {
      of(user).waitEvent(Queue{queue}, event);
      return SG_OK;
    });
  }
  static SgStatus elapsed(void* user, void* start, void* end, double* ms, SgMessage* m) {
    return guarded(api, m, [&]() -> SgStatus {
      *ms = of(user).elapsedMs(start, end);
      return *ms < 0 ? SG_UNSUPPORTED : SG_OK;
    });
  }
  /// The host's table, for messages (set once at entry).
  static inline const SgHostApi* api = nullptr;
};

/// One property table: the plugin's own (addProperty), or, since ABI 5,
/// one session's (setProperties), which then owns its properties.
struct PropertySet {
  std::vector<std::unique_ptr<SubgraphProperty>> owned;
  // A deque: the C table points into the entries, so they must not move.
  std::deque<PropertyEntry> entries;
  std::vector<const SgPropertyDesc*> table;

  /// Appends the C tables of `property`.
  void add(const SgHostApi* api, SubgraphProperty* property) {
    PropertyEntry& e = entries.emplace_back();
    e.api = api;
    e.property = property;
    e.desc.abi_version = SG_PLUGIN_ABI_VERSION;
    e.desc.struct_size = sizeof(SgPropertyDesc);
    e.desc.name = property->name().c_str();
    e.desc.inference_only = property->options().inferenceOnly ? 1 : 0;
    e.desc.min_region_size = property->options().minRegionSize;
    e.desc.user = &e;
    if (const Pattern* p = property->pattern()) {
      const std::vector<OpPattern>& nodes = p->nodes();
      e.predicateUsers.reserve(nodes.size());
      for (size_t i = 0; i < nodes.size(); ++i) {
        e.predicateUsers.emplace_back(&e, i);
        SgPatternNode n{};
        n.abi_version = SG_PLUGIN_ABI_VERSION;
        n.struct_size = sizeof(SgPatternNode);
        n.op_types = nodes[i].opTypes().c_str();
        n.flags = nodes[i].flags();
        n.constant_inputs = nodes[i].constantInputs();
        if (nodes[i].predicate()) {
          n.predicate_user = &e.predicateUsers.back();
          n.predicate = &patternPredicate;
        }
        e.patternNodes.push_back(n);
      }
      e.pattern.abi_version = SG_PLUGIN_ABI_VERSION;
      e.pattern.struct_size = sizeof(SgPatternDesc);
      e.pattern.name = p->name().c_str();
      e.pattern.num_nodes = e.patternNodes.size();
      e.pattern.nodes = e.patternNodes.data();
      e.pattern.num_edges = p->edges().size();
      e.pattern.edges = p->edges().data();
      e.desc.pattern = &e.pattern;
    } else {
      e.desc.create_selector = &createSelector;
      e.desc.destroy_selector = &destroySelector;
      e.desc.select = &select;
      e.desc.select_input = &selectInput;
      e.desc.select_output = &selectOutput;
      e.desc.filter = &filter;
      e.desc.filter_reason = &filterReason;
      e.desc.reset = &reset;
      for (const std::string& op : property->SeedOpTypes())
        (e.seeds.empty() ? e.seeds : e.seeds += '|') += op;
      if (!e.seeds.empty()) e.desc.seed_op_types = e.seeds.c_str();
    }
    // No slot: the host accepts every region with the defaults, and
    // need not copy a body for each one to ask (it moves the members
    // into the bodies once partitioning is over).
    e.desc.create_subgraph_node = e.property->AcceptsEveryRegion() ? nullptr : &createSubgraphNode;
    table.push_back(&e.desc);
  }
};

/// An option and its C table.
struct OptionEntry {
  std::string values;  // OptionDef::values, joined by '|'
  SgOptionDesc desc{};
};

/// Everything one loaded instance of the plugin owns; freed by release.
struct PluginState {
  PluginState(const SgHostApi* host, const char* n, const char* v, const char* d)
      : plugin(host), name(n), version(v), description(d) {}

  /// Builds the C tables from what the define function registered.
  void finalize() {
    const SgHostApi* api = plugin.host_;
    if (plugin.propertiesFor_) {
      if (!plugin.properties_.empty())
        throw Error("the plugin called both addProperty and setProperties");
      // The default table (no precision, no options): what `subgraph
      // plugins` lists, and what a session without options gets.
      plugin.properties_ = plugin.propertiesFor_(KernelContext{});
    }
    for (auto& property : plugin.properties_) {
      if (!property) throw Error("a null property");
      properties.add(api, property.get());
    }
    for (const OptionDef& o : plugin.options_) {
      OptionEntry& e = optionEntries.emplace_back();
      for (const std::string& v : o.values) (e.values.empty() ? e.values : e.values += '|') += v;
      e.desc.abi_version = SG_PLUGIN_ABI_VERSION;
      e.desc.struct_size = sizeof(SgOptionDesc);
      e.desc.name = o.name.c_str();
      e.desc.values = e.values.c_str();
      e.desc.default_value = o.defaultValue.c_str();
      e.desc.doc = o.doc.c_str();
      optionTable.push_back(&e.desc);
    }
    for (OpDef& op : plugin.ops_) opTable.push_back(&op.toC());
    for (auto& t : plugin.transforms_) {
      TransformEntry& e = transforms.emplace_back();
      e.api = api;
      e.fn = std::move(t.fn);
      e.name = std::move(t.name);
      e.desc.abi_version = SG_PLUGIN_ABI_VERSION;
      e.desc.struct_size = sizeof(SgTransformDesc);
      e.desc.name = e.name.c_str();
      e.desc.stage = static_cast<int32_t>(t.stage);
      e.desc.user = &e;
      e.desc.run = &runTransform;
      transformTable.push_back(&e.desc);
    }
    for (auto& k : plugin.kernels_) {
      KernelEntry& e = kernels.emplace_back();
      e.api = api;
      e.creator = std::move(k.creator);
      e.opType = std::move(k.opType);
      e.desc.abi_version = SG_PLUGIN_ABI_VERSION;
      e.desc.struct_size = sizeof(SgKernelDesc);
      e.desc.op_type = e.opType.c_str();
      e.desc.uses_own_threads = k.options.usesOwnThreads ? 1 : 0;
      e.desc.concurrent_requests = k.options.concurrentRequests ? 1 : 0;
      e.desc.user = &e;
      e.desc.create = &createBoxedKernel;
      e.desc.destroy = &destroyBoxedKernel;
      e.desc.session_prologue = &sessionPrologue;
      e.desc.resize = &resizeKernel;
      e.desc.run = &runKernel;
      e.desc.input_layout = &kernelLayout<&Kernel::inputLayout>;
      e.desc.output_layout = &kernelLayout<&Kernel::outputLayout>;
      e.desc.scratch_size = &scratchSize;
      e.desc.run_with_scratch = &runKernelWithScratch;
      e.desc.run_on_queue = &runKernelOnQueue;
      if (plugin.accelerator_ || plugin.makeDevice_)
        e.deviceAt = [this](int index) { return deviceAt(index); };
      kernelTable.push_back(&e.desc);
    }
    for (const auto& layout : plugin.layouts_) layoutTable.push_back(layout->toC());
    for (auto& copy : plugin.copies_) {
      CopyEntry& e = copies.emplace_back();
      e.api = api;
      e.fn = std::move(copy.fn);
      e.desc.abi_version = SG_PLUGIN_ABI_VERSION;
      e.desc.struct_size = sizeof(SgCopyDesc);
      e.desc.from = copy.from ? copy.from->toC() : nullptr;
      e.desc.to = copy.to ? copy.to->toC() : nullptr;
      e.desc.dtype = static_cast<SgDataType>(copy.options.dtype);
      e.desc.uses_own_threads = copy.options.usesOwnThreads ? 1 : 0;
      e.desc.concurrent_requests = copy.options.concurrentRequests ? 1 : 0;
      e.desc.user = &e;
      e.desc.run = &runCopy;
      e.desc.direction = SG_COPY_ON_HOST;
      copyTable.push_back(&e.desc);
    }
    if (plugin.accelerator_ && plugin.device_)
      throw Error("the plugin set both a host device and an AcceleratorDevice (setDevice twice)");
    if (plugin.accelerator_ || plugin.makeDevice_) finalizeAccelerator(api);
    if (plugin.device_ && !plugin.accelerator_) {
      device.abi_version = SG_PLUGIN_ABI_VERSION;
      device.struct_size = sizeof(SgDeviceDesc);
      device.kind = plugin.device_->kind.c_str();
      device.user = plugin.device_.get();
      device.allocate = &deviceAllocate;
      device.deallocate = &deviceDeallocate;
    }
    c.abi_version = SG_PLUGIN_ABI_VERSION;
    c.struct_size = sizeof(SgPlugin);
    c.name = name.c_str();
    c.version = version.c_str();
    c.description = description.c_str();
    c.num_properties = properties.table.size();
    c.properties = properties.table.data();
    c.num_op_defs = opTable.size();
    c.op_defs = opTable.data();
    c.num_transforms = transformTable.size();
    c.transforms = transformTable.data();
    c.num_kernels = kernelTable.size();
    c.kernels = kernelTable.data();
    c.device = !devices.empty() ? &devices.front().desc : plugin.device_ ? &device : nullptr;
    c.user = this;
    c.release = &release;
    c.num_layouts = layoutTable.size();
    c.layouts = layoutTable.data();
    c.num_copies = copyTable.size();
    c.copies = copyTable.data();
    c.num_options = optionTable.size();
    c.options = optionTable.data();
    c.properties_for = plugin.propertiesFor_ ? &propertiesFor : nullptr;
    c.devices_for = plugin.makeDevice_ ? &devicesFor : nullptr;
  }

  /// SgPlugin::properties_for: one table per distinct precision and
  /// options, made on first use and kept until release.
  static SgStatus propertiesFor(void* user, const SgKernelContext* session, size_t* count,
                                const SgPropertyDesc* const** table, SgMessage* message) {
    auto* self = static_cast<PluginState*>(user);
    const SgHostApi* api = self->plugin.host_;
    return guarded(api, message, [&] {
      KernelContext ctx = toKernelContext(session);
      ctx.numThreads = 0;
      // A session with neither precision nor options is the default one,
      // whose table finalize() built.
      if (ctx.precision.empty() && ctx.options.empty()) {
        *count = self->properties.table.size();
        *table = self->properties.table.data();
        return SG_OK;
      }
      // Length-prefixed, so no value can fake another key.
      std::string key = std::to_string(ctx.precision.size()) + ':' + ctx.precision;
      for (const auto& [name, value] : ctx.options)
        key +=
            std::to_string(name.size()) + ':' + name + std::to_string(value.size()) + ':' + value;
      std::lock_guard<std::mutex> lock(self->sessionMutex);
      std::unique_ptr<PropertySet>& set = self->sessions[key];
      if (!set) {
        auto made = std::make_unique<PropertySet>();
        made->owned = self->plugin.propertiesFor_(ctx);
        for (auto& property : made->owned) {
          if (!property) throw Error("setProperties made a null property");
          made->add(api, property.get());
        }
        set = std::move(made);
      }
      *count = set->table.size();
      *table = set->table.data();
      return SG_OK;
    });
  }

  /// One device's C table and its plain copies both ways.
  struct DeviceEntry {
    std::unique_ptr<AcceleratorDevice> owned;  // null for setDevice's, which the plugin owns
    AcceleratorDevice* device = nullptr;
    std::string kind, description;
    SgDeviceDesc desc{};
    std::deque<CopyEntry> copies;
    std::vector<const SgCopyDesc*> copyTable;
  };
  /// The most devices setDevices may give (the table never reallocates).
  static constexpr size_t kMaxDevices = 64;

  /// A copy run on a queue, added to `table` (which the C tables point to).
  static void addQueueCopy(const SgHostApi* api, std::deque<CopyEntry>& entries,
                           std::vector<const SgCopyDesc*>& table, const Layout* from,
                           const Layout* to, CopyDirection dir, QueueCopyFn fn,
                           CopyOptions options) {
    CopyEntry& e = entries.emplace_back();
    e.api = api;
    e.queueFn = std::move(fn);
    e.desc.abi_version = SG_PLUGIN_ABI_VERSION;
    e.desc.struct_size = sizeof(SgCopyDesc);
    e.desc.from = from ? from->toC() : nullptr;
    e.desc.to = to ? to->toC() : nullptr;
    e.desc.dtype = static_cast<SgDataType>(options.dtype);
    e.desc.uses_own_threads = options.usesOwnThreads ? 1 : 0;
    e.desc.concurrent_requests = options.concurrentRequests ? 1 : 0;
    e.desc.user = &e;
    e.desc.run = &runCopy;  // never called for a device copy
    e.desc.direction = static_cast<int32_t>(dir);
    e.desc.run_on_queue = &runCopyOnQueue;
    table.push_back(&e.desc);
  }

  /// Fills `e`'s device table for `d` with its plain copies both ways.
  static void describeDevice(const SgHostApi* api, DeviceEntry& e, AcceleratorDevice& d) {
    AcceleratorSlots::api = api;
    e.device = &d;
    e.kind = d.kind();
    e.description = d.description();
    SgDeviceDesc& desc = e.desc;
    desc.abi_version = SG_PLUGIN_ABI_VERSION;
    desc.struct_size = sizeof(SgDeviceDesc);
    desc.kind = e.kind.c_str();
    desc.user = &d;
    desc.allocate = &AcceleratorSlots::allocate;
    desc.deallocate = &AcceleratorSlots::deallocate;
    desc.id = d.id();
    desc.description = e.description.c_str();
    desc.queue_create = &AcceleratorSlots::queueCreate;
    desc.queue_destroy = &AcceleratorSlots::queueDestroy;
    desc.queue_synchronize = &AcceleratorSlots::queueSynchronize;
    desc.event_create = &AcceleratorSlots::eventCreate;
    desc.event_destroy = &AcceleratorSlots::eventDestroy;
    desc.event_record = &AcceleratorSlots::eventRecord;
    desc.event_synchronize = &AcceleratorSlots::eventSynchronize;
    desc.queue_wait_event = &AcceleratorSlots::queueWaitEvent;
    desc.event_elapsed_ms = &AcceleratorSlots::elapsed;
    if (d.canCapture()) {
      desc.queue_begin_capture = &AcceleratorSlots::beginCapture;
      desc.queue_end_capture = &AcceleratorSlots::endCapture;
      desc.graph_launch = &AcceleratorSlots::graphLaunch;
      desc.graph_destroy = &AcceleratorSlots::graphDestroy;
    }
    auto plain = [&](CopyDirection dir, QueueCopyFn fn) {
      addQueueCopy(api, e.copies, e.copyTable, nullptr, nullptr, dir, std::move(fn), {});
    };
    plain(CopyDirection::kHostToDevice,
          [&d](Queue q, const Tensor& s, const Tensor& t) { d.copyToDevice(q, s, t); });
    plain(CopyDirection::kDeviceToHost,
          [&d](Queue q, const Tensor& s, const Tensor& t) { d.copyToHost(q, s, t); });
    plain(CopyDirection::kOnDevice,
          [&d](Queue q, const Tensor& s, const Tensor& t) { d.copyOnDevice(q, s, t); });
  }

  /// The device table of the plugin's AcceleratorDevice (setDevice), or of
  /// device 0 of setDevices; the plugin's copies are its plain copies and
  /// the plugin's own device copies.
  void finalizeAccelerator(const SgHostApi* api) {
    if (plugin.accelerator_ && plugin.makeDevice_)
      throw Error("the plugin called both setDevice and setDevices");
    DeviceEntry& first = devices.emplace_back();
    if (plugin.makeDevice_) {
      if (!plugin.deviceCount_) throw Error("setDevices without a device count");
      if (!plugin.deviceCopies_.empty())
        throw Error("addDeviceCopy is for a plugin with one device (setDevice)");
      first.owned = plugin.makeDevice_(0);
      if (!first.owned) throw Error("setDevices made no device 0");
    }
    describeDevice(api, first, plugin.makeDevice_ ? *first.owned : *plugin.accelerator_);
    deviceTable.reserve(kMaxDevices);
    deviceTable.push_back(&first.desc);
    copyTable.insert(copyTable.end(), first.copyTable.begin(), first.copyTable.end());
    // One device: the plugin's copies serve it (they include its layouts').
    if (plugin.makeDevice_) {
      first.desc.num_copies = first.copyTable.size();
      first.desc.copies = first.copyTable.data();
    }
    for (auto& copy : plugin.deviceCopies_)
      addQueueCopy(api, copies, copyTable, copy.from, copy.to, copy.direction, std::move(copy.fn),
                   copy.options);
  }

  /// The first `n` devices of setDevices, made as needed; throws past
  /// kMaxDevices or when the plugin cannot make one.
  void growDevices(size_t n) {
    if (n == 0 || n > kMaxDevices)
      throw Error("a session may use 1 to " + std::to_string(kMaxDevices) + " devices, not " +
                  std::to_string(n));
    while (deviceTable.size() < n) {
      int k = static_cast<int>(deviceTable.size());
      std::unique_ptr<AcceleratorDevice> made = plugin.makeDevice_(k);
      if (!made || made->id() != k)
        throw Error("setDevices' make(" + std::to_string(k) + ") made " +
                    (made ? "a device with id " + std::to_string(made->id()) : "no device"));
      DeviceEntry& e = devices.emplace_back();
      e.owned = std::move(made);
      describeDevice(plugin.host_, e, *e.owned);
      e.desc.num_copies = e.copyTable.size();
      e.desc.copies = e.copyTable.data();
      deviceTable.push_back(&e.desc);
    }
  }

  /// SgPlugin::devices_for: the first count(session) devices.
  static SgStatus devicesFor(void* user, const SgKernelContext* session, size_t* count,
                             const SgDeviceDesc* const** table, SgMessage* message) {
    auto* self = static_cast<PluginState*>(user);
    return guarded(self->plugin.host_, message, [&] {
      int n = self->plugin.deviceCount_(toKernelContext(session));
      std::lock_guard<std::mutex> lock(self->deviceMutex);
      self->growDevices(n < 0 ? 0 : static_cast<size_t>(n));
      *count = static_cast<size_t>(n);
      *table = self->deviceTable.data();
      return SG_OK;
    });
  }

  /// The device of index k, or null if no session was given it.
  AcceleratorDevice* deviceAt(int k) {
    std::lock_guard<std::mutex> lock(deviceMutex);
    if (k < 0 || static_cast<size_t>(k) >= devices.size()) return nullptr;
    return devices[static_cast<size_t>(k)].device;
  }

  static void release(void* user) { delete static_cast<PluginState*>(user); }

  Plugin plugin;
  std::string name, version, description;
  PropertySet properties;
  std::deque<OptionEntry> optionEntries;
  std::vector<const SgOptionDesc*> optionTable;
  std::mutex sessionMutex;
  std::map<std::string, std::unique_ptr<PropertySet>> sessions;
  // Deques: entries are pointed to by the C tables, so they must not move.
  std::deque<TransformEntry> transforms;
  std::deque<KernelEntry> kernels;
  std::deque<CopyEntry> copies;
  std::vector<const SgOpDef*> opTable;
  std::vector<const SgTransformDesc*> transformTable;
  std::vector<const SgKernelDesc*> kernelTable;
  std::vector<const SgLayoutDesc*> layoutTable;
  std::vector<const SgCopyDesc*> copyTable;
  SgDeviceDesc device{};   // a host Device's (setDevice(Device))
  std::mutex deviceMutex;  // guards devices and deviceTable's growth
  std::deque<DeviceEntry> devices;
  std::vector<const SgDeviceDesc*> deviceTable;
  SgPlugin c{};
};

/// The body of the exported entry point.
inline SgStatus enter(const SgHostApi* host, const SgPlugin** out, SgMessage* message,
                      const char* name, const char* version, const char* description,
                      void (*define)(Plugin&)) noexcept {
  if (!host || !out) return SG_INVALID_ARGUMENT;
  // A host older than this SDK lacks slots the SDK calls unconditionally.
  if (host->abi_version < 1 || host->struct_size < sizeof(SgHostApi)) {
    if (host->abi_version >= 1 && host->message_set)
      host->message_set(message, "the host's plugin ABI is older than the plugin's");
    return SG_INVALID_ARGUMENT;
  }
  return guarded(host, message, [&] {
    auto state = std::make_unique<PluginState>(host, name, version, description);
    define(state->plugin);
    state->finalize();
    *out = &state->c;
    state.release();
    return SG_OK;
  });
}

}  // namespace detail
}  // namespace subgraph::sdk

/// Marks the entry point as the plugin's one exported symbol.
#define SUBGRAPH_PLUGIN_EXPORT __attribute__((visibility("default")))

/// Exports the plugin: backend `NAME` (a string, a valid identifier), its
/// `VERSION` string and a one-line `DESCRIPTION`, followed by a body that
/// registers things on `plugin` (an sdk::Plugin&). Use once per plugin.
#define SUBGRAPH_PLUGIN(NAME, VERSION, DESCRIPTION)                                            \
  static void subgraph_plugin_define(::subgraph::sdk::Plugin& plugin);                         \
  extern "C" SUBGRAPH_PLUGIN_EXPORT SgStatus subgraph_plugin_entry(                            \
      const SgHostApi* host, const SgPlugin** out, SgMessage* message) {                       \
    return ::subgraph::sdk::detail::enter(host, out, message, NAME, VERSION, DESCRIPTION,      \
                                          &subgraph_plugin_define);                            \
  }                                                                                            \
  static_assert(sizeof(SgPluginEntryFn) == sizeof(&subgraph_plugin_entry), "entry signature"); \
  static void subgraph_plugin_define(::subgraph::sdk::Plugin& plugin)
