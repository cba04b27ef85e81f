//===- runtime/engine/plan.cpp - Resize and memory planning ---------------===//
//
// resizeProgram() in four passes over the steps:
//  1. descs: every step's resize() in order; precomputed steps also run, on
//     host buffers the plan keeps;
//  2. aliasing: outputs that are views of an input (Reshape) share its
//     buffer when the placements agree and the output is not returned;
//  3. memory: acquire and release events per device in run order, then one
//     MemoryPlanner::plan() per device;
//  4. edges (optional): data edges, and memory edges from every user of a
//     buffer to the writer of any later buffer placed over the same bytes.
//
//===----------------------------------------------------------------------===//
#include "engine/plan.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <set>

#include <fmt/format.h>

#include "subgraph/runtime/work_queue.h"

namespace subgraph::runtime::engine {
namespace {

// The content of a shape-deciding input as the plan key holds it: its raw
// bytes, so two contents share a plan only when they are equal bit for bit
// (text would round floats, and cost a formatted number per element on
// every run).
void appendContent(std::string& key, const TensorDesc& desc, const void* data) {
  const int64_t n = desc.numElements();
  if (n <= 0) return;
  key += '{';
  key.append(static_cast<const char*>(data), static_cast<size_t>(n) * dataTypeSize(desc.dtype));
  key += '}';
}

// A few elements of a shape-deciding input, for people: the report and
// the resize callback show the plan's inputs this way.
std::string contentText(const TensorDesc& desc, const void* data) {
  constexpr int64_t kShown = 16;
  const int64_t n = desc.numElements();
  std::string s = "{";
  for (int64_t i = 0; i < std::min(n, kShown); ++i) {
    if (i) s += ",";
    switch (desc.dtype) {
      case DataType::kInt64: s += std::to_string(static_cast<const int64_t*>(data)[i]); break;
      case DataType::kInt32: s += std::to_string(static_cast<const int32_t*>(data)[i]); break;
      case DataType::kFloat32: s += fmt::format("{}", static_cast<const float*>(data)[i]); break;
      default: s += "?";
    }
  }
  if (n > kShown) s += fmt::format(",... {} elements", n);
  return s + "}";
}

// No single tensor may exceed this; it keeps element counts and byte sizes
// far from int64 overflow whatever shapes the data asks for.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;

// True if `desc` has non-negative dims whose byte size fits the limit,
// computed without overflowing.
bool sizeIsSane(const TensorDesc& desc) {
  uint64_t bytes = std::max<size_t>(dataTypeSize(desc.dtype), 1);
  for (int64_t d : desc.dims)
    if (d < 0) return false;
  for (int64_t d : desc.dims) {
    if (d == 0) return true;
    if (bytes > kMaxTensorBytes / static_cast<uint64_t>(d)) return false;
    bytes *= static_cast<uint64_t>(d);
  }
  return true;
}

bool isPlanned(const Program& p, const Plan& plan, int slot) {
  const Slot& s = p.slots[static_cast<size_t>(slot)];
  return s.kind == SlotKind::kComputed && !s.isStatic &&
         !plan.precomputed[static_cast<size_t>(slot)];
}

Status resizeSteps(const Program& p, Plan& plan, std::span<const TensorDesc> inputDescs,
                   std::span<const void* const> inputData) {
  const size_t numSlots = p.slots.size();
  std::vector<TensorView> contents(numSlots);
  for (size_t i = 0; i < p.inputSlots.size(); ++i) {
    size_t slot = static_cast<size_t>(p.inputSlots[i]);
    plan.descs[slot] = inputDescs[i];
    // Bound even without data: a zero-element content has no bytes.
    contents[slot] = TensorView(&plan.descs[slot], const_cast<void*>(inputData[i]));
  }
  for (size_t s = 0; s < numSlots; ++s) {
    const Slot& slot = p.slots[s];
    if (slot.kind == SlotKind::kInitializer) {
      plan.descs[s].dtype = slot.initializer->dtype();
      plan.descs[s].dims = slot.initializer->dims();
      contents[s] =
          TensorView(&plan.descs[s], const_cast<std::byte*>(slot.initializer->bytes().data()));
    } else if (slot.isStatic) {
      plan.descs[s] = p.staticDescs[s];
    }
  }

  std::vector<const TensorDesc*> inDescs;
  std::vector<const TensorView*> inContents;
  std::vector<TensorDesc> outDescs;
  std::vector<TensorView> runInputs, runOutputs;
  for (size_t si = 0; si < p.steps.size(); ++si) {
    const Step& step = p.steps[si];
    if (step.isStatic) continue;
    inDescs.assign(step.inputs.size(), nullptr);
    inContents.assign(step.inputs.size(), nullptr);
    for (size_t i = 0; i < step.inputs.size(); ++i)
      if (step.inputs[i] >= 0) inDescs[i] = &plan.descs[static_cast<size_t>(step.inputs[i])];
    for (size_t i : step.shapeInputs) {
      if (i >= step.inputs.size() || step.inputs[i] < 0) continue;
      const Slot& slot = p.slots[static_cast<size_t>(step.inputs[i])];
      const TensorView& c = contents[static_cast<size_t>(slot.contentSource)];
      if (!c.valid() ||
          (!c.raw() && plan.descs[static_cast<size_t>(slot.contentSource)].byteSize() > 0))
        return Status(StatusCode::kInternal, nodeErrorPrefix(step.node) + "contents of input '" +
                                                 slot.name + "' are not known at resize time");
      inContents[i] = &c;
    }
    outDescs.assign(step.outputs.size(), TensorDesc{DataType::kUndefined, {}, nullptr});
    ResizeContext ctx(step.node, inDescs, inContents, outDescs);
    Status st = runKernelGuarded(step.node, [&] { return step.kernel->resize(ctx); });
    if (!st.isOk()) return st;
    plan.scratchBytes[si] = ctx.scratchBytes();
    for (size_t o = 0; o < step.outputs.size(); ++o) {
      if (outDescs[o].dtype == DataType::kUndefined)
        return Status(StatusCode::kInternal, nodeErrorPrefix(step.node) + "resize left output " +
                                                 std::to_string(o) + " undescribed");
      if (!sizeIsSane(outDescs[o]))
        return Status::error(StatusCode::kLimitExceeded,
                             nodeErrorPrefix(step.node) + "output " + std::to_string(o) +
                                 " would be " + outDescs[o].toString() + ", over the " +
                                 std::to_string(kMaxTensorBytes) + "-byte tensor limit");
      size_t slot = static_cast<size_t>(step.outputs[o]);
      outDescs[o].layout = p.slots[slot].layout;
      plan.descs[slot] = std::move(outDescs[o]);
    }
    if (!step.precomputed) continue;

    // Run the step now, on host memory the plan keeps.
    runInputs.assign(step.inputs.size(), TensorView());
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      if (step.inputs[i] < 0) continue;
      size_t slot = static_cast<size_t>(step.inputs[i]);
      runInputs[i] = TensorView(&plan.descs[slot],
                                contents[static_cast<size_t>(p.slots[slot].contentSource)].raw());
    }
    runOutputs.clear();
    for (int out : step.outputs) {
      size_t slot = static_cast<size_t>(out);
      plan.storage.push_back(std::make_unique<HostBuffer>(plan.descs[slot].byteSize()));
      plan.precomputed[slot] = plan.storage.back()->data();
      contents[slot] = TensorView(&plan.descs[slot], plan.precomputed[slot]);
      runOutputs.push_back(contents[slot]);
    }
    HostBuffer scratch(plan.scratchBytes[si]);
    RunContext run(step.node, runInputs, runOutputs,
                   std::span<std::byte>(scratch.data(), scratch.size()), nullptr);
    st = runKernelGuarded(step.node, [&] { return step.kernel->run(run); });
    if (!st.isOk()) return st;
    plan.report.precomputedBytes += [&] {
      size_t b = 0;
      for (const TensorView& v : runOutputs) b += v.byteSize();
      return b;
    }();
    ++plan.report.numPrecomputedSteps;
  }
  return Status::ok();
}

Status assignAliases(const Program& p, Plan& plan) {
  for (size_t s = 0; s < p.slots.size(); ++s) plan.root[s] = static_cast<int>(s);
  for (size_t si = 0; si < p.steps.size(); ++si) {
    const Step& step = p.steps[si];
    if (step.precomputed || step.isStatic) continue;
    for (size_t o = 0; o < step.outputs.size(); ++o) {
      std::optional<size_t> in = step.kernel->outputAliasesInput(o);
      if (!in || *in >= step.inputs.size() || step.inputs[*in] < 0) continue;
      size_t outSlot = static_cast<size_t>(step.outputs[o]);
      size_t inSlot = static_cast<size_t>(step.inputs[*in]);
      const Slot& a = p.slots[outSlot];
      const Slot& b = p.slots[inSlot];
      if (a.isGraphOutput || a.device != b.device || a.layout || b.layout) continue;
      if (plan.descs[outSlot].byteSize() != plan.descs[inSlot].byteSize()) continue;
      plan.root[outSlot] = plan.root[inSlot];
    }
    // A view never runs: its output is its input's memory, or nothing.
    if (step.isView && plan.root[static_cast<size_t>(step.outputs[0])] !=
                           plan.root[static_cast<size_t>(step.inputs[0])])
      return Status(StatusCode::kInternal, nodeErrorPrefix(step.node) +
                                               "a view of a device value cannot share its memory");
  }
  return Status::ok();
}

// The run step that writes `slot`'s bytes: its producer, or for the output
// of a view (which never runs) the writer of the view's input.
int writerOf(const Program& p, int slot) {
  int producer = p.slots[static_cast<size_t>(slot)].producer;
  while (producer >= 0 && p.steps[static_cast<size_t>(producer)].isView) {
    slot = p.steps[static_cast<size_t>(producer)].inputs[0];
    producer = p.slots[static_cast<size_t>(slot)].producer;
  }
  return producer;
}

Status planMemory(const Program& p, Plan& plan) {
  const size_t numSlots = p.slots.size();
  std::vector<int> pos(p.steps.size(), -1);
  for (size_t i = 0; i < plan.runSteps.size(); ++i)
    pos[static_cast<size_t>(plan.runSteps[i])] = static_cast<int>(i);
  std::vector<int> lastUse(numSlots, -1);
  std::vector<bool> returned(numSlots, false);
  for (size_t s = 0; s < numSlots; ++s) {
    size_t r = static_cast<size_t>(plan.root[s]);
    if (p.slots[s].isGraphOutput) returned[r] = true;
    for (int c : p.slots[s].consumers)
      if (pos[static_cast<size_t>(c)] >= 0)
        lastUse[r] = std::max(lastUse[r], pos[static_cast<size_t>(c)]);
  }
  std::vector<MemoryPlanner> planners(p.devices.size());
  auto deviceOfStep = [&](const Step& step) {
    for (size_t d = 0; d < p.devices.size(); ++d)
      if (p.devices[d] == p.backends[static_cast<size_t>(step.backend)]->device()) return d;
    return static_cast<size_t>(p.hostDevice);
  };
  std::vector<int> released;
  for (size_t i = 0; i < plan.runSteps.size(); ++i) {
    size_t si = static_cast<size_t>(plan.runSteps[i]);
    const Step& step = p.steps[si];
    for (int out : step.outputs) {
      size_t o = static_cast<size_t>(out);
      if (plan.root[o] != out) continue;
      MemoryMode mode =
          p.slots[o].isGraphOutput ? MemoryMode::kDynamicSeparate : MemoryMode::kDynamic;
      plan.slotBuffer[o] =
          static_cast<int>(planners[static_cast<size_t>(p.slots[o].device)].acquire(
              plan.descs[o].byteSize(), mode, p.slots[o].name));
    }
    if (plan.scratchBytes[si] > 0) {
      MemoryPlanner& planner = planners[deviceOfStep(step)];
      auto id =
          planner.acquire(plan.scratchBytes[si], MemoryMode::kDynamic, step.info.name + ":scratch");
      plan.scratchBuffer[si] = static_cast<int>(id);
      planner.release(id);
    }
    released.clear();
    auto releaseRoot = [&](size_t r) {
      if (!isPlanned(p, plan, static_cast<int>(r)) || returned[r] || plan.slotBuffer[r] < 0) return;
      if (std::find(released.begin(), released.end(), static_cast<int>(r)) != released.end())
        return;
      released.push_back(static_cast<int>(r));
      planners[static_cast<size_t>(p.slots[r].device)].release(
          static_cast<MemoryPlanner::BufferId>(plan.slotBuffer[r]));
    };
    for (int in : step.inputs) {
      if (in < 0) continue;
      size_t r = static_cast<size_t>(plan.root[static_cast<size_t>(in)]);
      if (lastUse[r] == static_cast<int>(i)) releaseRoot(r);
    }
    // Outputs nobody reads die at once.
    for (int out : step.outputs) {
      size_t r = static_cast<size_t>(plan.root[static_cast<size_t>(out)]);
      if (lastUse[r] < 0 && plan.root[static_cast<size_t>(out)] == out) releaseRoot(r);
    }
  }
  for (size_t d = 0; d < p.devices.size(); ++d) {
    StatusOr<MemoryPlan> mp = planners[d].plan();
    if (!mp.isOk()) return mp.status();
    plan.memory[d] = std::move(mp).value();
    const MemoryPlan& m = plan.memory[d];
    DeviceMemoryReport rep;
    rep.device = p.devices[d].toString();
    rep.peakDynamicBytes = m.peakDynamicBytes;
    rep.dynamicBlockBytes = m.dynamicBlockBytes;
    rep.separateBytes = m.separateBytes;
    rep.unsharedBytes = m.unsharedBytes;
    rep.numBuffers = m.buffers.size();
    plan.report.devices.push_back(rep);
    plan.frameBytes += m.dynamicBlockBytes + m.separateBytes;
  }
  return Status::ok();
}

void buildEdges(const Program& p, Plan& plan) {
  const size_t numSteps = p.steps.size();
  std::vector<std::set<int>> preds(numSteps);
  std::vector<bool> isRun(numSteps, false);
  for (int s : plan.runSteps) isRun[static_cast<size_t>(s)] = true;
  for (int s : plan.runSteps)
    for (int in : p.steps[static_cast<size_t>(s)].inputs) {
      if (in < 0) continue;
      int producer = writerOf(p, in);
      if (producer >= 0 && isRun[static_cast<size_t>(producer)] && producer != s)
        preds[static_cast<size_t>(s)].insert(producer);
    }

  // Memory edges. Users of a slot buffer: its writer and the readers of
  // every slot aliasing it; of a scratch buffer: its step.
  for (size_t d = 0; d < p.devices.size(); ++d) {
    const MemoryPlan& m = plan.memory[d];
    std::vector<int> writer(m.buffers.size(), -1);
    std::vector<std::vector<int>> users(m.buffers.size());
    for (size_t s = 0; s < p.slots.size(); ++s) {
      size_t r = static_cast<size_t>(plan.root[s]);
      if (p.slots[r].device != static_cast<int>(d) || plan.slotBuffer[r] < 0) continue;
      size_t b = static_cast<size_t>(plan.slotBuffer[r]);
      if (s == r) writer[b] = p.slots[s].producer;
      if (p.slots[s].producer >= 0) users[b].push_back(p.slots[s].producer);
      for (int c : p.slots[s].consumers)
        if (isRun[static_cast<size_t>(c)]) users[b].push_back(c);
    }
    for (int s : plan.runSteps) {
      int b = plan.scratchBuffer[static_cast<size_t>(s)];
      const Step& step = p.steps[static_cast<size_t>(s)];
      if (b < 0 || p.backends[static_cast<size_t>(step.backend)]->device() != p.devices[d])
        continue;
      writer[static_cast<size_t>(b)] = s;
      users[static_cast<size_t>(b)].push_back(s);
    }
    for (size_t a = 0; a < m.buffers.size(); ++a) {
      const BufferPlacement& A = m.buffers[a];
      if (A.mode != MemoryMode::kDynamic) continue;
      for (size_t b = 0; b < m.buffers.size(); ++b) {
        const BufferPlacement& B = m.buffers[b];
        if (a == b || B.mode != MemoryMode::kDynamic || A.releasedAt > B.acquiredAt) continue;
        if (A.offset >= B.offset + B.bytes || B.offset >= A.offset + A.bytes) continue;
        int w = writer[b];
        if (w < 0) continue;
        for (int u : users[a])
          if (u != w && isRun[static_cast<size_t>(u)]) preds[static_cast<size_t>(w)].insert(u);
      }
    }
  }
  plan.successors.assign(numSteps, {});
  plan.numPredecessors.assign(numSteps, 0);
  plan.asyncPredecessors.assign(numSteps, {});
  for (size_t s = 0; s < numSteps; ++s) {
    const WorkQueue& q = p.backends[static_cast<size_t>(p.steps[s].backend)]->workQueue();
    for (int pr : preds[s]) {
      plan.successors[static_cast<size_t>(pr)].push_back(static_cast<int>(s));
      ++plan.numPredecessors[s];
      const WorkQueue& pq =
          p.backends[static_cast<size_t>(p.steps[static_cast<size_t>(pr)].backend)]->workQueue();
      if (&pq != &q && !pq.isSynchronous()) plan.asyncPredecessors[s].push_back(pr);
    }
  }
  plan.hasEdges = true;
}

}  // namespace

HostBuffer::HostBuffer(size_t bytes)
    : data_(static_cast<std::byte*>(
          ::operator new (std::max<size_t>(bytes, 1), std::align_val_t{64}))),
      size_(bytes) {}

HostBuffer::~HostBuffer() { ::operator delete (data_, std::align_val_t{64}); }

namespace {

// Each input's name and desc, plus, for the inputs that decide shapes, what
// `content(text, desc, data)` appends of their data: the plan key and its
// readable form differ only there.
template <typename Content>
std::string describeInputs(const Program& program, std::span<const TensorDesc> inputDescs,
                           std::span<const void* const> inputData, Content&& content) {
  std::string text;
  for (size_t i = 0; i < inputDescs.size(); ++i) {
    if (i) text += "; ";
    text += program.inputNames[i] + "=" + inputDescs[i].toString();
    if (std::find(program.contentInputs.begin(), program.contentInputs.end(),
                  static_cast<int>(i)) != program.contentInputs.end() &&
        inputData[i])
      content(text, inputDescs[i], inputData[i]);
  }
  return text;
}

}  // namespace

std::string signatureText(const Program& program, std::span<const TensorDesc> inputDescs,
                          std::span<const void* const> inputData) {
  return describeInputs(program, inputDescs, inputData,
                        [](std::string& text, const TensorDesc& desc, const void* data) {
                          text += contentText(desc, data);
                        });
}

std::string signatureOf(const Program& program, std::span<const TensorDesc> inputDescs,
                        std::span<const void* const> inputData) {
  return describeInputs(program, inputDescs, inputData, appendContent);
}

StatusOr<std::shared_ptr<Plan>> resizeProgram(const Program& p,
                                              std::span<const TensorDesc> inputDescs,
                                              std::span<const void* const> inputData,
                                              const PlanOptions& options) {
  auto plan = std::make_shared<Plan>();
  const size_t numSlots = p.slots.size();
  plan->signature = signatureOf(p, inputDescs, inputData);
  plan->report.signature = signatureText(p, inputDescs, inputData);
  plan->descs.assign(numSlots, TensorDesc{});
  plan->root.assign(numSlots, -1);
  plan->precomputed.assign(numSlots, nullptr);
  plan->scratchBytes.assign(p.steps.size(), 0);
  plan->slotBuffer.assign(numSlots, -1);
  plan->scratchBuffer.assign(p.steps.size(), -1);
  plan->memory.resize(p.devices.size());
  SUBGRAPH_RETURN_IF_ERROR(resizeSteps(p, *plan, inputDescs, inputData));
  for (size_t s = 0; s < p.steps.size(); ++s)
    if (!p.steps[s].precomputed && !p.steps[s].isStatic && !p.steps[s].isView)
      plan->runSteps.push_back(static_cast<int>(s));
  SUBGRAPH_RETURN_IF_ERROR(assignAliases(p, *plan));
  SUBGRAPH_RETURN_IF_ERROR(planMemory(p, *plan));
  plan->report.staticBytes = p.staticBytes;
  plan->report.frameBytes = plan->frameBytes;
  plan->report.numSteps = plan->runSteps.size();
  uint64_t total = plan->frameBytes + p.staticBytes;
  if (options.memoryLimitBytes != 0 && total > options.memoryLimitBytes)
    return Status::error(StatusCode::kLimitExceeded,
                         "memory plan for graph '" + p.graph->name() + "' needs " +
                             std::to_string(total) + " bytes (" + std::to_string(plan->frameBytes) +
                             " per frame + " + std::to_string(p.staticBytes) +
                             " static), over the memory limit of " +
                             std::to_string(options.memoryLimitBytes) + " bytes (inputs " +
                             plan->report.signature + ")");
  if (options.buildEdges || p.hasAsyncQueues) buildEdges(p, *plan);
  return plan;
}

}  // namespace subgraph::runtime::engine
