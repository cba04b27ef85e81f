//===- runtime/reference/control_flow.cpp - If and Loop -------------------===//
//
// Control flow runs nested graphs (engine/nested_graph.h), each compiled
// once, for the backends of the program being built (so that regions fused
// inside a branch or a body run on their backends), with the values it
// captures from enclosing scopes as trailing inputs (engine/captures.h);
// the session passes those values as the step's inputs after the node's
// own.
//
// If: the condition is a shape input, so resize knows the branch and its
// output shapes; the chosen branch then runs with its memory carved from the
// If's scratch and writes straight into the If's outputs.
//
// Loop: the trip count, the condition and the loop-carried shapes can all
// depend on data, so every input is a shape input and resize runs the whole
// loop to learn the output shapes; run() runs it again for the data. Each
// iteration resizes the body for its inputs (plans are cached per
// signature). A loop without a trip count stops after kMaxLoopIterations
// rather than never.
//
//===----------------------------------------------------------------------===//
#include <cstring>
#include <numeric>

#include "engine/captures.h"
#include "engine/nested_graph.h"
#include "engine/program.h"
#include "reference/kernel_util.h"
#include "reference/kernels.h"
#include "subgraph/runtime/reference_backend.h"

namespace subgraph::runtime::reference {
namespace {

using engine::NestedGraph;

constexpr int64_t kMaxLoopIterations = 10'000'000;

// A nested graph's failure as the control-flow node's, naming the node and
// `where`, with the failure's own code: a memory limit met in a branch is
// still a limit (the CLI adds how to raise it), not an invalid argument.
template <typename Ctx>
Status failKeepingCode(const Ctx& ctx, const std::string& where, const Status& failure) {
  return Status::error(failure.code(), nodeErrorPrefix(ctx.node()) + where + failure.message());
}

std::unique_ptr<NestedGraph> compileBody(const Node& node, const char* attr,
                                         const std::vector<std::string>& captures) {
  const Attribute* a = node.attr(attr);
  if (!a || a->kind() != AttrKind::kGraph || !a->asGraph())
    throwNodeError(node, std::string("the '") + attr + "' graph attribute is required");
  std::shared_ptr<const Graph> body = engine::withCapturesAsInputs(*a->asGraph(), captures);
  // A body holding regions fused for the session's backends runs on them;
  // a kernel made outside a session's build runs its body on the reference.
  std::vector<std::shared_ptr<Backend>> backends = engine::backendsBeingBuilt();
  if (backends.empty()) backends.push_back(createReferenceBackend());
  StatusOr<std::unique_ptr<NestedGraph>> nested = NestedGraph::compile(body, backends);
  if (nested.isOk()) nested.value()->setLabel(attr);
  if (!nested.isOk())
    throw Error(nested.status().code(),
                nodeErrorPrefix(&node) + attr + ": " + nested.status().message());
  return std::move(nested).value();
}

struct BranchFrames : KernelFrameState {
  std::unique_ptr<engine::Frame> frames[2];
};

class IfKernel final : public Kernel {
 public:
  explicit IfKernel(const Node& node) : captures_(engine::capturedNames(node)) {
    branches_[0] = compileBody(node, "then_branch", captures_);
    branches_[1] = compileBody(node, "else_branch", captures_);
    for (const auto& b : branches_)
      if (b->numOutputs() != node.numOutputs())
        throwNodeError(node, "a branch has " + std::to_string(b->numOutputs()) +
                                 " outputs, the node " + std::to_string(node.numOutputs()));
  }

  std::vector<size_t> shapeInputs() const override {
    std::vector<size_t> out = {0};
    for (const auto& b : branches_)
      for (size_t i : b->contentInputs()) out.push_back(1 + i);
    return out;
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorView* cond = ctx.inputContent(0);
    if (!cond || cond->numElements() != 1) return ctx.fail("cond must hold one value");
    const NestedGraph& branch = *branches_[readInts(*cond)[0] != 0 ? 0 : 1];
    std::vector<TensorDesc> descs;
    std::vector<const void*> data;
    for (size_t i = 1; i < ctx.numInputs(); ++i) {
      descs.push_back(ctx.inputDesc(i));
      data.push_back(ctx.inputContent(i) ? ctx.inputContent(i)->raw() : nullptr);
    }
    StatusOr<std::shared_ptr<const engine::Plan>> plan = branch.planFor(descs, data);
    if (!plan.isOk()) return failKeepingCode(ctx, "branch: ", plan.status());
    for (size_t o = 0; o < ctx.numOutputs(); ++o)
      ctx.setOutput(o, branch.outputDesc(*plan.value(), o));
    ctx.requestScratch(branch.memoryBytes(*plan.value()));
    return Status::ok();
  }

  StatusOr<std::unique_ptr<KernelFrameState>> onFramePrologue() const override {
    auto state = std::make_unique<BranchFrames>();
    for (int b = 0; b < 2; ++b) {
      StatusOr<std::unique_ptr<engine::Frame>> f = branches_[b]->newFrame();
      if (!f.isOk()) return f.status();
      state->frames[b] = std::move(f).value();
    }
    return std::unique_ptr<KernelFrameState>(std::move(state));
  }

  Status run(RunContext& ctx) const override {
    const int which = readInts(ctx.input(0))[0] != 0 ? 0 : 1;
    const NestedGraph& branch = *branches_[which];
    std::vector<TensorDesc> descs;
    std::vector<const void*> data;
    for (size_t i = 1; i < ctx.numInputs(); ++i) {
      descs.push_back(ctx.input(i).desc());
      data.push_back(ctx.input(i).raw());
    }
    StatusOr<std::shared_ptr<const engine::Plan>> plan = branch.planFor(descs, data);
    if (!plan.isOk()) return failKeepingCode(ctx, "branch: ", plan.status());
    std::vector<void*> outputs;
    for (size_t o = 0; o < ctx.numOutputs(); ++o) outputs.push_back(ctx.output(o).raw());
    std::unique_ptr<engine::Frame> temporary;
    engine::Frame* frame = nullptr;
    if (auto* state = dynamic_cast<BranchFrames*>(ctx.frameState())) {
      frame = state->frames[which].get();
    } else {
      StatusOr<std::unique_ptr<engine::Frame>> f = branch.newFrame();
      if (!f.isOk()) return f.status();
      temporary = std::move(f).value();
      frame = temporary.get();
    }
    Status st = branch.run(*plan.value(), *frame, ctx.scratch(), data, outputs);
    return st.isOk() ? st : failKeepingCode(ctx, "branch: ", st);
  }

 private:
  std::vector<std::string> captures_;
  std::unique_ptr<NestedGraph> branches_[2];
};

// A tensor the loop owns between iterations.
struct HostTensor {
  TensorDesc desc;
  std::vector<std::byte> bytes;
  HostTensor() = default;
  HostTensor(TensorDesc d) : desc(std::move(d)), bytes(desc.byteSize()) {}
  const void* data() const { return bytes.data(); }
};

class LoopKernel final : public Kernel {
 public:
  explicit LoopKernel(const Node& node)
      : numCarried_(node.numInputs() >= 2 ? node.numInputs() - 2 : 0),
        captures_(engine::capturedNames(node)) {
    if (node.numInputs() < 2)
      throwNodeError(node, "needs the M and cond inputs (either may be empty)");
    body_ = compileBody(node, "body", captures_);
    if (body_->numInputs() != 2 + numCarried_ + captures_.size())
      throwNodeError(node, "body has " + std::to_string(body_->numInputs() - captures_.size()) +
                               " inputs, expected 2 + " + std::to_string(numCarried_) +
                               " loop-carried");
    if (body_->numOutputs() < 1 + numCarried_ || node.numOutputs() != body_->numOutputs() - 1)
      throwNodeError(node, "body outputs do not match the node's outputs");
  }

  std::vector<size_t> shapeInputs() const override {
    std::vector<size_t> all(2 + numCarried_ + captures_.size());
    std::iota(all.begin(), all.end(), 0);
    return all;
  }

  Status resize(ResizeContext& ctx) const override {
    std::vector<TensorView> inputs(ctx.numInputs());
    for (size_t i = 0; i < ctx.numInputs(); ++i)
      if (ctx.hasInput(i)) inputs[i] = *ctx.inputContent(i);
    std::vector<HostTensor> finals;
    std::vector<std::vector<HostTensor>> scans;
    SUBGRAPH_RETURN_IF_ERROR(iterate(ctx, inputs, finals, scans));
    for (size_t o = 0; o < finals.size(); ++o) ctx.setOutput(o, finals[o].desc);
    for (size_t s = 0; s < scans.size(); ++s)
      ctx.setOutput(finals.size() + s, stackedDesc(scans[s]));
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    std::vector<TensorView> inputs(ctx.numInputs());
    for (size_t i = 0; i < ctx.numInputs(); ++i)
      if (ctx.hasInput(i)) inputs[i] = ctx.input(i);
    std::vector<HostTensor> finals;
    std::vector<std::vector<HostTensor>> scans;
    SUBGRAPH_RETURN_IF_ERROR(iterate(ctx, inputs, finals, scans));
    for (size_t o = 0; o < finals.size(); ++o)
      if (!finals[o].bytes.empty())
        std::memcpy(ctx.output(o).raw(), finals[o].data(), finals[o].bytes.size());
    for (size_t s = 0; s < scans.size(); ++s) {
      auto* dst = static_cast<std::byte*>(ctx.output(finals.size() + s).raw());
      for (const HostTensor& t : scans[s]) {
        if (!t.bytes.empty()) std::memcpy(dst, t.data(), t.bytes.size());
        dst += t.bytes.size();
      }
    }
    return Status::ok();
  }

 private:
  static TensorDesc stackedDesc(const std::vector<HostTensor>& parts) {
    TensorDesc d;
    if (parts.empty()) {
      d.dims = {0};
      return d;
    }
    d = parts[0].desc;
    d.dims.insert(d.dims.begin(), static_cast<int64_t>(parts.size()));
    return d;
  }

  // Runs the loop on `inputs` (M, cond, carried..., captures...), collecting
  // the final carried values and each scan output's per-iteration values.
  template <typename Ctx>
  Status iterate(const Ctx& ctx, const std::vector<TensorView>& inputs,
                 std::vector<HostTensor>& finals,
                 std::vector<std::vector<HostTensor>>& scans) const {
    const size_t numScans = body_->numOutputs() - 1 - numCarried_;
    int64_t tripCount = kMaxLoopIterations;
    bool bounded = false;
    if (inputs[0].valid()) {
      if (inputs[0].numElements() != 1) return ctx.fail("M must hold one value");
      tripCount = readInts(inputs[0])[0];
      bounded = true;
    }
    bool cond = true;
    if (inputs[1].valid()) {
      if (inputs[1].numElements() != 1) return ctx.fail("cond must hold one value");
      cond = readInts(inputs[1])[0] != 0;
    }
    std::vector<HostTensor> carried;
    for (size_t v = 0; v < numCarried_; ++v) {
      const TensorView& in = inputs[2 + v];
      if (!in.valid()) return ctx.fail("loop-carried input " + std::to_string(v) + " is missing");
      HostTensor t(in.desc());
      if (!t.bytes.empty()) std::memcpy(t.bytes.data(), in.raw(), t.bytes.size());
      carried.push_back(std::move(t));
    }
    scans.assign(numScans, {});
    uint64_t held = 0;  // bytes of the carried values and scan outputs so far
    for (const HostTensor& t : carried) held += t.bytes.size();
    StatusOr<std::unique_ptr<engine::Frame>> frame = body_->newFrame();
    if (!frame.isOk()) return frame.status();
    HostTensor iterTensor(TensorDesc{DataType::kInt64, {}, nullptr});
    HostTensor condTensor(TensorDesc{DataType::kBool, {}, nullptr});
    int64_t i = 0;
    for (; i < tripCount && cond; ++i) {
      std::memcpy(iterTensor.bytes.data(), &i, sizeof(i));
      condTensor.bytes[0] = std::byte{static_cast<unsigned char>(cond)};
      std::vector<TensorDesc> descs = {iterTensor.desc, condTensor.desc};
      std::vector<const void*> data = {iterTensor.data(), condTensor.data()};
      for (const HostTensor& t : carried) {
        descs.push_back(t.desc);
        data.push_back(t.data());
      }
      for (size_t c = 0; c < captures_.size(); ++c) {
        descs.push_back(inputs[2 + numCarried_ + c].desc());
        data.push_back(inputs[2 + numCarried_ + c].raw());
      }
      StatusOr<std::shared_ptr<const engine::Plan>> plan = body_->planFor(descs, data);
      if (!plan.isOk())
        return failKeepingCode(ctx, "body, iteration " + std::to_string(i) + ": ", plan.status());
      std::vector<HostTensor> outs;
      std::vector<void*> outPtrs;
      for (size_t o = 0; o < body_->numOutputs(); ++o)
        outs.emplace_back(body_->outputDesc(*plan.value(), o));
      for (HostTensor& t : outs) outPtrs.push_back(t.bytes.data());
      std::vector<std::byte> memory(body_->memoryBytes(*plan.value()) + 64);
      // Carve from a 64-byte aligned start inside the buffer.
      auto* base = memory.data() + (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64;
      Status st = body_->run(*plan.value(), *frame.value(),
                             std::span<std::byte>(base, memory.size() - 64), data, outPtrs);
      if (!st.isOk())
        return failKeepingCode(ctx, "body, iteration " + std::to_string(i) + ": ", st);
      if (outs[0].desc.numElements() != 1)
        return ctx.fail("the body's cond output must hold one value");
      cond = outs[0].bytes[0] != std::byte{0};
      SUBGRAPH_RETURN_IF_ERROR(checkHeld(ctx, i, carried, outs, held));
      for (size_t v = 0; v < numCarried_; ++v) carried[v] = std::move(outs[1 + v]);
      for (size_t s = 0; s < numScans; ++s) {
        HostTensor& t = outs[1 + numCarried_ + s];
        if (!scans[s].empty() && scans[s][0].desc.dims != t.desc.dims)
          return ctx.fail("scan output " + std::to_string(s) + " changes shape between iterations");
        scans[s].push_back(std::move(t));
      }
    }
    if (!bounded && cond && i >= kMaxLoopIterations)
      return ctx.fail("stopped after " + std::to_string(kMaxLoopIterations) +
                      " iterations without a trip count");
    finals = std::move(carried);
    return Status::ok();
  }

  // Counts this iteration's carried values and scan outputs into `held`
  // (carried ones replace the last iteration's) and fails once it passes
  // the session's memory limit: a Loop's scan outputs grow with every
  // iteration, past what any one plan of its body shows.
  template <typename Ctx>
  Status checkHeld(const Ctx& ctx, int64_t iteration, const std::vector<HostTensor>& carried,
                   const std::vector<HostTensor>& outs, uint64_t& held) const {
    for (size_t v = 0; v < numCarried_; ++v)
      held = held - carried[v].bytes.size() + outs[1 + v].bytes.size();
    for (size_t o = 1 + numCarried_; o < outs.size(); ++o) held += outs[o].bytes.size();
    const uint64_t limit = body_->memoryLimitBytes();
    if (limit == 0 || held <= limit) return Status::ok();
    return Status::error(StatusCode::kLimitExceeded,
                         nodeErrorPrefix(ctx.node()) + "after iteration " +
                             std::to_string(iteration) + " its carried values and scan outputs " +
                             "hold " + std::to_string(held) + " bytes, over the memory limit of " +
                             std::to_string(limit) + " bytes");
  }

  size_t numCarried_;
  std::vector<std::string> captures_;
  std::unique_ptr<NestedGraph> body_;
};

}  // namespace

void registerControlFlowKernels(Provider& p) {
  p.add("If", creatorFor<IfKernel>());
  p.add("Loop", creatorFor<LoopKernel>());
}

}  // namespace subgraph::runtime::reference
