//===- runtime/engine/program.cpp - Compiling a graph into steps ----------===//
//
// buildProgram() in five stages:
//  1. assign each node a kernel: fused regions to the first backend with a
//     kernel for them (else the default region executor), everything else
//     to the reference backend;
//  2. find the values whose contents resize needs (kernel shapeInputs(),
//     closed backwards through producers) and mark their producers
//     precomputed, moving any that sit on another backend to the host;
//  3. create slots and steps in topological order, inserting a copy step in
//     front of the first consumer that needs a value in another placement
//     (copies are shared by later consumers of the same placement; where
//     no backend copies directly, two copies through host plain memory);
//  4. copy graph outputs to host plain memory where they are not already;
//  5. plan static memory, run static copies (constant data moved to another
//     device or layout, once) and the kernels' session prologues.
//
//===----------------------------------------------------------------------===//
#include "engine/program.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "engine/captures.h"
#include "engine/region_kernel.h"
#include "subgraph/runtime/memory_planner.h"
#include "subgraph/runtime/reference_backend.h"

namespace subgraph::runtime::engine {
namespace {

std::string placementName(const Device& device, const Layout* layout) {
  std::string s = device.toString();
  if (layout) {
    s += "@";
    s += layout->name();
  }
  return s;
}

// The values a node's step reads: its inputs (null for omitted ones), then
// the values its nested graphs capture from this graph (see captures.h).
StatusOr<std::vector<const Value*>> stepInputValues(const Node& node) {
  std::vector<const Value*> values(node.inputs().begin(), node.inputs().end());
  if (isFusedRegion(node)) return values;  // region bodies are self-contained
  for (const std::string& name : capturedNames(node)) {
    const Value* v = node.graph()->findValue(name);
    if (!v)
      return Status::invalid(nodeErrorPrefix(&node) + "a nested graph reads '" + name +
                             "', which no enclosing graph defines");
    values.push_back(v);
  }
  return values;
}

// A node's chosen kernel before slots exist.
struct Assignment {
  const Node* node = nullptr;
  int backend = 0;
  std::string provider;
  std::unique_ptr<Kernel> kernel;
  bool isRegion = false;
};

StatusOr<std::unique_ptr<Kernel>> callCreator(const KernelCreator& creator, const Node& node,
                                              const Backend& backend) {
  try {
    return creator(node, backend);
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, nodeErrorPrefix(&node) + e.what());
  }
}

// Picks the reference kernel for a node (stage 1 for ordinary nodes, and
// the fallback when a precomputed node must move to the host).
Status assignReference(const Program& program, Assignment& a) {
  const Backend& ref = *program.backends[static_cast<size_t>(program.referenceBackend)];
  a.backend = program.referenceBackend;
  if (a.isRegion) {
    StatusOr<std::unique_ptr<Kernel>> k =
        makeRegionKernel(*a.node, program.backends[static_cast<size_t>(program.referenceBackend)]);
    if (!k.isOk()) return k.status();
    a.kernel = std::move(k).value();
    a.provider = "region-executor";
    return Status::ok();
  }
  std::string op = a.node->qualifiedOpType();
  const KernelCreator* creator = ref.findCreator(op);
  if (!creator)
    return Status::error(StatusCode::kUnsupported, nodeErrorPrefix(a.node) + "no kernel for op '" +
                                                       op + "' in the reference backend");
  StatusOr<std::unique_ptr<Kernel>> k = callCreator(*creator, *a.node, ref);
  if (!k.isOk()) return k.status();
  a.kernel = std::move(k).value();
  a.provider = ref.findProvider(op)->name();
  return Status::ok();
}

Status assignKernel(const Program& program, Assignment& a) {
  a.isRegion = isFusedRegion(*a.node);
  // ONNX ops always run on the reference backend; a backend-specific op
  // (another domain, e.g. a node a plugin's transform made) goes to the
  // first backend with a kernel for it, like a region.
  if (!a.isRegion && a.node->domain().empty()) return assignReference(program, a);
  std::string op = a.node->qualifiedOpType();
  for (size_t b = 0; b < program.backends.size(); ++b) {
    const Backend& backend = *program.backends[b];
    const KernelCreator* creator = backend.findCreator(op);
    if (!creator) continue;
    StatusOr<std::unique_ptr<Kernel>> k = callCreator(*creator, *a.node, backend);
    if (!k.isOk()) {
      if (k.status().code() == StatusCode::kUnsupported) continue;
      return k.status();
    }
    a.backend = static_cast<int>(b);
    a.kernel = std::move(k).value();
    a.provider = backend.findProvider(op)->name();
    return Status::ok();
  }
  return assignReference(program, a);
}

class ProgramBuilder {
 public:
  ProgramBuilder(Program& program, const Graph& graph) : p_(program), graph_(graph) {}

  Status build(std::vector<Assignment>& nodes) {
    valueSlot_.assign(graph_.valueIdBound(), -1);
    SUBGRAPH_RETURN_IF_ERROR(addSourceSlots());
    for (Assignment& a : nodes) SUBGRAPH_RETURN_IF_ERROR(addNodeStep(a));
    SUBGRAPH_RETURN_IF_ERROR(addOutputs());
    return Status::ok();
  }

 private:
  int newSlot(Slot slot) {
    if (slot.contentSource < 0) slot.contentSource = static_cast<int>(p_.slots.size());
    p_.slots.push_back(std::move(slot));
    return static_cast<int>(p_.slots.size() - 1);
  }

  Status addSourceSlots() {
    for (Value* v : graph_.inputs()) {
      Slot s;
      s.name = v->name();
      s.kind = SlotKind::kGraphInput;
      s.initializer = v->initializer();
      s.graphInput = static_cast<int>(p_.inputSlots.size());
      s.device = p_.hostDevice;
      int id = newSlot(std::move(s));
      valueSlot_[v->id()] = id;
      p_.inputSlots.push_back(id);
      p_.inputNames.push_back(v->name());
      p_.inputTypes.push_back(v->type());
    }
    for (Value* v : graph_.initializers()) {
      if (valueSlot_[v->id()] >= 0) continue;  // Also a graph input.
      Slot s;
      s.name = v->name();
      s.kind = SlotKind::kInitializer;
      s.initializer = v->initializer();
      s.device = p_.hostDevice;
      valueSlot_[v->id()] = newSlot(std::move(s));
    }
    return Status::ok();
  }

  // The slot holding `value` in placement (device, layout), inserting (or
  // reusing) a copy step when it lives elsewhere.
  StatusOr<int> slotIn(int slot, int device, const Layout* layout, const Backend& consumer) {
    const Slot& src = p_.slots[static_cast<size_t>(slot)];
    if (src.device == device && src.layout == layout) return slot;
    auto key = std::make_tuple(slot, device, layout);
    if (auto it = copies_.find(key); it != copies_.end()) return it->second;

    CopyRequest req;
    if (const Value* v = graph_.findValue(src.name)) req.dtype = v->type().dtype;
    req.from = p_.devices[static_cast<size_t>(src.device)];
    req.fromLayout = src.layout;
    req.to = p_.devices[static_cast<size_t>(device)];
    req.toLayout = layout;
    // The consumer's backend first, then the producer's, then any backend
    // on either device.
    std::vector<int> candidates;
    for (size_t b = 0; b < p_.backends.size(); ++b)
      if (p_.backends[b].get() == &consumer) candidates.push_back(static_cast<int>(b));
    if (src.producer >= 0)
      candidates.push_back(p_.steps[static_cast<size_t>(src.producer)].backend);
    for (size_t b = 0; b < p_.backends.size(); ++b) {
      const Device& d = p_.backends[b]->device();
      if (d == req.from || d == req.to) candidates.push_back(static_cast<int>(b));
    }
    std::unique_ptr<Kernel> kernel;
    int backend = -1;
    for (int b : candidates) {
      kernel = p_.backends[static_cast<size_t>(b)]->createCopy(req);
      if (kernel) {
        backend = b;
        break;
      }
    }
    if (!kernel) return composedCopy(slot, device, layout, consumer, req);
    Step step;
    step.info.name = "copy:" + src.name + "->" + placementName(req.to, req.toLayout);
    step.info.op = "Copy";
    step.info.isCopy = true;
    step.info.backend = p_.backends[static_cast<size_t>(backend)]->name();
    step.info.provider = "copy";
    step.backend = backend;
    step.kernel = std::move(kernel);
    step.inputs = {slot};
    step.isStatic = src.kind == SlotKind::kInitializer || src.isStatic;
    int stepId = static_cast<int>(p_.steps.size());

    Slot out;
    out.name = src.name + "@" + placementName(req.to, req.toLayout);
    out.kind = SlotKind::kComputed;
    out.device = device;
    out.layout = layout;
    out.producer = stepId;
    out.isStatic = step.isStatic;
    out.contentSource = p_.slots[static_cast<size_t>(slot)].contentSource;
    int outId = newSlot(std::move(out));
    step.outputs = {outId};
    p_.slots[static_cast<size_t>(slot)].consumers.push_back(stepId);
    p_.steps.push_back(std::move(step));
    copies_.emplace(key, outId);
    return outId;
  }

  // When no backend copies between two placements directly, the value goes
  // through host plain memory, which every backend's copies reach: a
  // device's layout to the host, then the host to another plugin's blocked
  // layout (cuDNN's nhwc.f16 into oneDNN's nChw16c). One endpoint already
  // host plain means there is no third placement to try.
  StatusOr<int> composedCopy(int slot, int device, const Layout* layout, const Backend& consumer,
                             const CopyRequest& req) {
    const std::string name = p_.slots[static_cast<size_t>(slot)].name;
    const std::string what = "no backend can copy value '" + name + "' from " +
                             placementName(req.from, req.fromLayout) + " to " +
                             placementName(req.to, req.toLayout);
    const bool fromHostPlain = req.from.isHost() && !req.fromLayout;
    const bool toHostPlain = req.to.isHost() && !req.toLayout;
    if (fromHostPlain || toHostPlain) return Status::error(StatusCode::kUnsupported, what);
    StatusOr<int> plain = slotIn(slot, p_.hostDevice, nullptr, consumer);
    if (!plain.isOk())
      return Status::error(
          StatusCode::kUnsupported,
          what + ", directly or through host plain memory: " + plain.status().message());
    StatusOr<int> placed = slotIn(plain.value(), device, layout, consumer);
    if (!placed.isOk())
      return Status::error(
          StatusCode::kUnsupported,
          what + ", directly or through host plain memory: " + placed.status().message());
    copies_.emplace(std::make_tuple(slot, device, layout), placed.value());
    return placed.value();
  }

  int deviceOf(const Backend& backend) const {
    for (size_t d = 0; d < p_.devices.size(); ++d)
      if (p_.devices[d] == backend.device()) return static_cast<int>(d);
    return p_.hostDevice;
  }

  // Whether `a`, a reference kernel whose output 0 may alias input 0, can
  // stay a view of a value in a device's plain memory (`dataSlot`) instead
  // of bringing it to the host. Shape inputs (Reshape's target, Squeeze's
  // axes) are host contents read at resize either way.
  bool staysOnDevice(const Assignment& a, int dataSlot) const {
    static const std::set<std::string> kShapeOnly = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                                     "Identity"};
    const Node& node = *a.node;
    if (a.backend != p_.referenceBackend || !node.domain().empty() ||
        !kShapeOnly.count(node.opType()) || precomputed_.count(&node) || dataSlot < 0 ||
        node.numOutputs() != 1 || a.kernel->outputAliasesInput(0) != std::optional<size_t>(0))
      return false;
    const Slot& data = p_.slots[static_cast<size_t>(dataSlot)];
    return data.device != p_.hostDevice && data.layout == nullptr;
  }

  Status addNodeStep(Assignment& a) {
    const Node& node = *a.node;
    const Backend& backend = *p_.backends[static_cast<size_t>(a.backend)];
    int device = deviceOf(backend);
    const bool view =
        node.numInputs() > 0 && node.input(0) && staysOnDevice(a, valueSlot_[node.input(0)->id()]);
    if (view) device = p_.slots[static_cast<size_t>(valueSlot_[node.input(0)->id()])].device;
    Step step;
    step.node = &node;
    step.info.name = node.displayName();
    step.info.op = node.qualifiedOpType();
    step.info.backend = backend.name();
    step.info.provider = a.provider;
    step.info.isRegion = a.isRegion;
    step.backend = a.backend;
    step.kernel = std::move(a.kernel);
    step.shapeInputs = step.kernel->shapeInputs();
    step.ownThreads = step.kernel->usesOwnThreads();
    step.exclusive = step.ownThreads && !step.kernel->concurrentRequests();
    step.precomputed = precomputed_.count(&node) > 0;
    step.isView = step.info.isView = view;
    StatusOr<std::vector<const Value*>> inputs = stepInputValues(node);
    if (!inputs.isOk()) return inputs.status();
    for (size_t i = 0; i < inputs.value().size(); ++i) {
      const Value* v = inputs.value()[i];
      if (!v) {
        step.inputs.push_back(-1);
        continue;
      }
      int slot = valueSlot_[v->id()];
      if (slot < 0)
        return Status::invalid(
            nodeErrorPrefix(&node) + "input " + std::to_string(i) + " ('" + v->name() +
            "') has no producer and is neither a graph input nor an initializer");
      // Precomputed steps read host contents directly; a kernel that reads
      // only descs needs no copy at all.
      bool needsCopy = !step.precomputed && step.kernel->readsInputData() && !(view && i == 0);
      if (needsCopy) {
        StatusOr<int> placed = slotIn(slot, device, step.kernel->inputLayout(i), backend);
        if (!placed.isOk()) return placed.status();
        slot = placed.value();
      }
      step.inputs.push_back(slot);
    }
    int stepId = static_cast<int>(p_.steps.size());
    for (int slot : step.inputs)
      if (slot >= 0) p_.slots[static_cast<size_t>(slot)].consumers.push_back(stepId);
    for (size_t o = 0; o < node.numOutputs(); ++o) {
      const Value* v = node.output(o);
      Slot s;
      s.name = v->name();
      s.device = step.precomputed ? p_.hostDevice : device;
      s.layout = step.precomputed ? nullptr : step.kernel->outputLayout(o);
      s.producer = stepId;
      int id = newSlot(std::move(s));
      valueSlot_[v->id()] = id;
      step.outputs.push_back(id);
    }
    p_.steps.push_back(std::move(step));
    return Status::ok();
  }

  Status addOutputs() {
    const Backend& host = *p_.backends[static_cast<size_t>(p_.referenceBackend)];
    for (Value* v : graph_.outputs()) {
      int slot = valueSlot_[v->id()];
      if (slot < 0)
        return Status::invalid("graph output '" + v->name() +
                               "' has no producer and is neither a graph input nor an initializer");
      StatusOr<int> placed = slotIn(slot, p_.hostDevice, nullptr, host);
      if (!placed.isOk()) return placed.status();
      p_.slots[static_cast<size_t>(placed.value())].isGraphOutput = true;
      p_.outputSlots.push_back(placed.value());
      p_.outputNames.push_back(v->name());
    }
    return Status::ok();
  }

 public:
  std::set<const Node*> precomputed_;

 private:
  Program& p_;
  const Graph& graph_;
  std::vector<int> valueSlot_;
  std::map<std::tuple<int, int, const Layout*>, int> copies_;
};

// Stage 2: values whose contents resize needs, closed backwards.
Status markPrecomputed(const Program& program, const Graph& graph, std::vector<Assignment>& nodes,
                       std::set<const Node*>& precomputed) {
  std::vector<bool> needs(graph.valueIdBound(), false);
  std::map<const Node*, std::vector<const Value*>> inputsOf;
  for (const Assignment& a : nodes) {
    StatusOr<std::vector<const Value*>> in = stepInputValues(*a.node);
    if (!in.isOk()) return in.status();
    inputsOf[a.node] = std::move(in).value();
  }
  for (const Assignment& a : nodes)
    for (size_t i : a.kernel->shapeInputs())
      if (i < inputsOf[a.node].size() && inputsOf[a.node][i])
        needs[inputsOf[a.node][i]->id()] = true;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Assignment& a = *it;
    bool outputNeeded = false;
    for (const Value* out : a.node->outputs()) outputNeeded = outputNeeded || needs[out->id()];
    // Constant-like nodes with no inputs are evaluated once per plan too.
    bool isSource = inputsOf[a.node].empty() && !a.isRegion;
    if (!outputNeeded && !isSource) continue;
    const Backend& backend = *program.backends[static_cast<size_t>(a.backend)];
    if (!backend.device().isHost() || a.backend != program.referenceBackend) {
      if (!outputNeeded) continue;  // A source on a device stays there.
      SUBGRAPH_RETURN_IF_ERROR(assignReference(program, a));
    }
    precomputed.insert(a.node);
    if (a.kernel->readsInputData())
      for (const Value* in : inputsOf[a.node])
        if (in) needs[in->id()] = true;
  }
  return Status::ok();
}

// Stage 5: static memory, static copies and session prologues.
Status prepareStatic(Program& p) {
  p.staticDescs.assign(p.slots.size(), TensorDesc{});
  p.staticPointers.assign(p.slots.size(), nullptr);
  std::vector<MemoryPlanner> planners(p.devices.size());
  struct Request {
    int device;
    MemoryPlanner::BufferId id;
    int slot;  // -1 for a kernel's static memory
    int step;
  };
  std::vector<Request> requests;
  std::vector<size_t> scratch(p.steps.size(), 0);
  for (size_t s = 0; s < p.steps.size(); ++s) {
    Step& step = p.steps[s];
    if (step.isStatic) {
      const Slot& in = p.slots[static_cast<size_t>(step.inputs[0])];
      TensorDesc inDesc;
      if (in.initializer) {
        inDesc.dtype = in.initializer->dtype();
        inDesc.dims = in.initializer->dims();
      } else {
        inDesc = p.staticDescs[static_cast<size_t>(step.inputs[0])];
      }
      const TensorDesc* inputs[] = {&inDesc};
      const TensorView* contents[] = {nullptr};
      TensorDesc outDesc;
      ResizeContext ctx(nullptr, inputs, contents, std::span<TensorDesc>(&outDesc, 1));
      SUBGRAPH_RETURN_IF_ERROR(step.kernel->resize(ctx));
      scratch[s] = ctx.scratchBytes();
      int out = step.outputs[0];
      p.staticDescs[static_cast<size_t>(out)] = outDesc;
      int dev = p.slots[static_cast<size_t>(out)].device;
      requests.push_back(
          {dev,
           planners[static_cast<size_t>(dev)].acquire(outDesc.byteSize(), MemoryMode::kStatic,
                                                      p.slots[static_cast<size_t>(out)].name),
           out, static_cast<int>(s)});
    }
    if (size_t bytes = step.kernel->staticBytes()) {
      int dev = 0;
      for (size_t d = 0; d < p.devices.size(); ++d)
        if (p.devices[d] == p.backends[static_cast<size_t>(step.backend)]->device())
          dev = static_cast<int>(d);
      requests.push_back({dev,
                          planners[static_cast<size_t>(dev)].acquire(bytes, MemoryMode::kStatic,
                                                                     step.info.name + ":static"),
                          -1, static_cast<int>(s)});
    }
  }
  std::vector<std::byte*> bases(p.devices.size(), nullptr);
  std::vector<MemoryPlan> plans;
  for (size_t d = 0; d < p.devices.size(); ++d) {
    StatusOr<MemoryPlan> plan = planners[d].plan();
    if (!plan.isOk()) return plan.status();
    plans.push_back(std::move(plan).value());
    if (plans.back().staticBytes == 0) continue;
    StatusOr<void*> mem = p.deviceAllocators[d]->allocate(plans.back().staticBytes);
    if (!mem.isOk()) return mem.status();
    p.staticBlocks.push_back({p.deviceAllocators[d], mem.value(), plans.back().staticBytes});
    bases[d] = static_cast<std::byte*>(mem.value());
    p.staticBytes += plans.back().staticBytes;
  }
  for (const Request& r : requests) {
    std::byte* ptr = bases[static_cast<size_t>(r.device)] +
                     plans[static_cast<size_t>(r.device)].buffers[r.id].offset;
    if (r.slot >= 0) {
      p.staticPointers[static_cast<size_t>(r.slot)] = ptr;
    } else {
      Step& step = p.steps[static_cast<size_t>(r.step)];
      step.staticMemory = std::span<std::byte>(ptr, step.kernel->staticBytes());
    }
  }
  // Run the static copies in order (a chain of copies reads its
  // predecessor's static output).
  for (size_t s = 0; s < p.steps.size(); ++s) {
    Step& step = p.steps[s];
    if (!step.isStatic) continue;
    int inSlot = step.inputs[0];
    const Slot& in = p.slots[static_cast<size_t>(inSlot)];
    TensorDesc inDesc;
    void* inPtr = nullptr;
    if (in.initializer) {
      inDesc.dtype = in.initializer->dtype();
      inDesc.dims = in.initializer->dims();
      inPtr = const_cast<std::byte*>(in.initializer->bytes().data());
    } else {
      inDesc = p.staticDescs[static_cast<size_t>(inSlot)];
      inPtr = p.staticPointers[static_cast<size_t>(inSlot)];
    }
    int out = step.outputs[0];
    TensorView inputs[] = {TensorView(&inDesc, inPtr)};
    TensorView outputs[] = {TensorView(&p.staticDescs[static_cast<size_t>(out)],
                                       p.staticPointers[static_cast<size_t>(out)])};
    std::vector<std::byte> scratchMem(scratch[s]);
    RunContext ctx(nullptr, inputs, outputs, scratchMem, nullptr);
    Backend& backend = *p.backends[static_cast<size_t>(step.backend)];
    TaskCompletion done = backend.workQueue().submit([&] { return step.kernel->run(ctx); });
    SUBGRAPH_RETURN_IF_ERROR(done.get());
  }
  for (Step& step : p.steps) {
    SessionPrologueContext ctx(step.staticMemory);
    Status st = runGuarded([&] { return step.kernel->onSessionPrologue(ctx); });
    if (!st.isOk()) return Status(st.code(), nodeErrorPrefix(step.node) + st.message());
  }
  p.prologuesRan = true;
  return Status::ok();
}

}  // namespace

Program::~Program() {
  if (prologuesRan)
    for (Step& step : steps) step.kernel->onSessionEpilogue();
  for (StaticBlock& b : staticBlocks) b.allocator->deallocate(b.base);
}

namespace {

thread_local const std::vector<std::shared_ptr<Backend>>* tlsBackendsBeingBuilt = nullptr;
thread_local std::optional<SessionLimits> tlsLimitsBeingBuilt;

// Publishes a program's backends to the kernel creators for one scope; a
// nested build (a body compiled inside a kernel creator) restores the
// outer list when it ends.
class BackendsBeingBuiltScope {
 public:
  BackendsBeingBuiltScope(const std::vector<std::shared_ptr<Backend>>& backends,
                          const SessionLimits& limits)
      : saved_(tlsBackendsBeingBuilt), savedLimits_(tlsLimitsBeingBuilt) {
    tlsBackendsBeingBuilt = &backends;
    tlsLimitsBeingBuilt = limits;
  }
  ~BackendsBeingBuiltScope() {
    tlsBackendsBeingBuilt = saved_;
    tlsLimitsBeingBuilt = savedLimits_;
  }
  BackendsBeingBuiltScope(const BackendsBeingBuiltScope&) = delete;
  BackendsBeingBuiltScope& operator=(const BackendsBeingBuiltScope&) = delete;

 private:
  const std::vector<std::shared_ptr<Backend>>* saved_;
  std::optional<SessionLimits> savedLimits_;
};

}  // namespace

std::vector<std::shared_ptr<Backend>> backendsBeingBuilt() {
  return tlsBackendsBeingBuilt ? *tlsBackendsBeingBuilt : std::vector<std::shared_ptr<Backend>>{};
}

SessionLimits limitsBeingBuilt() { return tlsLimitsBeingBuilt.value_or(SessionLimits{}); }

StatusOr<std::unique_ptr<Program>> buildProgram(
    const Graph& graph, const std::vector<std::shared_ptr<Backend>>& backends,
    std::optional<SessionLimits> limits) {
  auto program = std::make_unique<Program>();
  Program& p = *program;
  p.graph = &graph;
  p.backends = backends;
  p.referenceBackend = -1;
  for (size_t b = 0; b < backends.size(); ++b)
    if (backends[b]->name() == kReferenceBackendName) p.referenceBackend = static_cast<int>(b);
  if (p.referenceBackend < 0)
    return Status(StatusCode::kInternal, "the reference backend is missing from the session");
  for (const auto& b : backends) {
    bool known = false;
    for (const Device& d : p.devices) known = known || d == b->device();
    if (!known) {
      p.devices.push_back(b->device());
      p.deviceAllocators.push_back(b->allocator());
    }
    if (!b->workQueue().isSynchronous()) p.hasAsyncQueues = true;
  }
  const Device& host = backends[static_cast<size_t>(p.referenceBackend)]->device();
  for (size_t d = 0; d < p.devices.size(); ++d)
    if (p.devices[d] == host) p.hostDevice = static_cast<int>(d);

  StatusOr<std::vector<Node*>> order = graph.topologicalOrder();
  if (!order.isOk()) return order.status();
  std::vector<Assignment> nodes;
  BackendsBeingBuiltScope scope(backends, limits.value_or(limitsBeingBuilt()));
  for (Node* n : order.value()) {
    Assignment a;
    a.node = n;
    SUBGRAPH_RETURN_IF_ERROR(assignKernel(p, a));
    nodes.push_back(std::move(a));
  }
  ProgramBuilder builder(p, graph);
  SUBGRAPH_RETURN_IF_ERROR(markPrecomputed(p, graph, nodes, builder.precomputed_));
  SUBGRAPH_RETURN_IF_ERROR(builder.build(nodes));

  for (size_t s = 0; s < p.steps.size(); ++s) {
    const Step& step = p.steps[s];
    p.hasExclusiveSteps = p.hasExclusiveSteps || step.exclusive;
    p.hasOwnThreadSteps = p.hasOwnThreadSteps || step.ownThreads;
    for (size_t i : step.shapeInputs) {
      if (i >= step.inputs.size() || step.inputs[i] < 0) continue;
      int src = p.slots[static_cast<size_t>(step.inputs[i])].contentSource;
      p.slots[static_cast<size_t>(src)].needsContent = true;
    }
  }
  // Content needs propagate through precomputed steps that read data.
  for (size_t s = p.steps.size(); s-- > 0;) {
    const Step& step = p.steps[s];
    if (!step.precomputed || !step.kernel->readsInputData()) continue;
    for (int in : step.inputs)
      if (in >= 0)
        p.slots[static_cast<size_t>(p.slots[static_cast<size_t>(in)].contentSource)].needsContent =
            true;
  }
  for (size_t i = 0; i < p.inputSlots.size(); ++i)
    if (p.slots[static_cast<size_t>(p.inputSlots[i])].needsContent)
      p.contentInputs.push_back(static_cast<int>(i));

  SUBGRAPH_RETURN_IF_ERROR(prepareStatic(p));
  return program;
}

}  // namespace subgraph::runtime::engine
