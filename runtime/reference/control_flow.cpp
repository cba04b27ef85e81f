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
// signature). A hostile trip count cannot make it run for ever: the
// session's work limits (WorkLimits::loopIterations and loopSeconds) bound
// a Loop and the Loops nested in its body together (LoopBudget), and its
// memory limit bounds what the iterations hold, checked before each
// iteration allocates its outputs.
//
//===----------------------------------------------------------------------===//
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>

#include "engine/captures.h"
#include "engine/nested_graph.h"
#include "engine/program.h"
#include "reference/kernel_util.h"
#include "reference/kernels.h"
#include "subgraph/runtime/reference_backend.h"

namespace subgraph::runtime::reference {
namespace {

using engine::NestedGraph;

// The work one Loop and every Loop nested in its body may spend. Nested
// graphs run serially inside the kernel that runs them, on its thread, so
// the outermost Loop on a thread opens the budget and the nested ones
// charge theirs to it: a nest of six 40-iteration Loops is 40^6 + ... + 40
// iterations, not 40.
class LoopBudget {
 public:
  explicit LoopBudget(const WorkLimits& limits) : outer_(active_) {
    if (!outer_) {
      own_.emplace(State{limits, 0, std::chrono::steady_clock::now()});
      active_ = &*own_;
    }
  }
  ~LoopBudget() {
    if (!outer_) active_ = nullptr;
  }
  LoopBudget(const LoopBudget&) = delete;
  LoopBudget& operator=(const LoopBudget&) = delete;

  // Counts one more iteration of `node`'s body; kLimitExceeded once that
  // passes a limit.
  Status charge(const Node* node, int64_t iteration) {
    State& s = *active_;
    const WorkLimits& l = s.limits;
    if (l.loopIterations != 0 && ++s.iterations > l.loopIterations)
      return Status::error(StatusCode::kLimitExceeded,
                           nodeErrorPrefix(node) + "iteration " + std::to_string(iteration) +
                               " passes the loop iteration limit of " +
                               std::to_string(l.loopIterations) +
                               " (iterations of a Loop and of the Loops nested in it)");
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - s.start;
    if (l.loopSeconds > 0 && spent.count() > l.loopSeconds)
      return Status::error(
          StatusCode::kLimitExceeded,
          nodeErrorPrefix(node) + "still running at iteration " + std::to_string(iteration) +
              " after " + std::to_string(static_cast<int64_t>(spent.count())) +
              " s, over the loop time limit of " + fmt::format("{:g}", l.loopSeconds) +
              " s (a Loop and the Loops nested in it)");
    return Status::ok();
  }

 private:
  struct State {
    WorkLimits limits;
    uint64_t iterations;
    std::chrono::steady_clock::time_point start;
  };
  static thread_local State* active_;
  State* outer_;
  std::optional<State> own_;
};

thread_local LoopBudget::State* LoopBudget::active_ = nullptr;

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
    int64_t tripCount = std::numeric_limits<int64_t>::max();  // none: until cond says stop
    if (inputs[0].valid()) {
      if (inputs[0].numElements() != 1) return ctx.fail("M must hold one value");
      tripCount = readInts(inputs[0])[0];
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
    LoopBudget budget(body_->limits().work);
    for (int64_t i = 0; i < tripCount && cond; ++i) {
      SUBGRAPH_RETURN_IF_ERROR(budget.charge(ctx.node(), i));
      std::vector<HostTensor> outs;
      SUBGRAPH_RETURN_IF_ERROR(
          runIteration(ctx, i, cond, carried, inputs, *frame.value(), held, outs));
      cond = outs[0].bytes[0] != std::byte{0};
      for (size_t v = 0; v < numCarried_; ++v) {
        held = held - carried[v].bytes.size() + outs[1 + v].bytes.size();
        carried[v] = std::move(outs[1 + v]);
      }
      for (size_t s = 0; s < numScans; ++s) {
        HostTensor& t = outs[1 + numCarried_ + s];
        if (!scans[s].empty() && scans[s][0].desc.dims != t.desc.dims)
          return ctx.fail("scan output " + std::to_string(s) + " changes shape between iterations");
        held += t.bytes.size();
        scans[s].push_back(std::move(t));
      }
    }
    finals = std::move(carried);
    return Status::ok();
  }

  // Iteration `i`: the body on (i, cond, carried..., captures...), its
  // outputs (cond first) into `outs`. `held` is what the loop holds so far.
  template <typename Ctx>
  Status runIteration(const Ctx& ctx, int64_t i, bool cond, const std::vector<HostTensor>& carried,
                      const std::vector<TensorView>& inputs, engine::Frame& frame, uint64_t held,
                      std::vector<HostTensor>& outs) const {
    HostTensor iterTensor(TensorDesc{DataType::kInt64, {}, nullptr});
    HostTensor condTensor(TensorDesc{DataType::kBool, {}, nullptr});
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
    const std::string where = "body, iteration " + std::to_string(i) + ": ";
    StatusOr<std::shared_ptr<const engine::Plan>> plan = body_->planFor(descs, data);
    if (!plan.isOk()) return failKeepingCode(ctx, where, plan.status());
    // Checked before anything is allocated: this iteration's outputs may be
    // what no longer fits.
    SUBGRAPH_RETURN_IF_ERROR(checkHeld(ctx, i, *plan.value(), held));
    std::vector<void*> outPtrs;
    for (size_t o = 0; o < body_->numOutputs(); ++o)
      outs.emplace_back(body_->outputDesc(*plan.value(), o));
    for (HostTensor& t : outs) outPtrs.push_back(t.bytes.data());
    std::vector<std::byte> memory(body_->memoryBytes(*plan.value()) + 64);
    // Carve from a 64-byte aligned start inside the buffer.
    auto* base = memory.data() + (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64;
    Status st = body_->run(*plan.value(), frame, std::span<std::byte>(base, memory.size() - 64),
                           data, outPtrs);
    if (!st.isOk()) return failKeepingCode(ctx, where, st);
    if (outs[0].desc.numElements() != 1)
      return ctx.fail("the body's cond output must hold one value");
    return Status::ok();
  }

  // Fails when the carried values and scan outputs held so far (`held`),
  // plus what the next iteration allocates (its outputs and the body's
  // memory under `plan`), would pass the session's memory limit: a Loop's
  // scan outputs and carried values grow with every iteration, past what
  // any one plan of its body shows.
  template <typename Ctx>
  Status checkHeld(const Ctx& ctx, int64_t iteration, const engine::Plan& plan,
                   uint64_t held) const {
    const uint64_t limit = body_->limits().memoryBytes;
    if (limit == 0) return Status::ok();
    uint64_t next = held + body_->memoryBytes(plan);
    for (size_t o = 0; o < body_->numOutputs(); ++o) next += body_->outputDesc(plan, o).byteSize();
    if (next <= limit) return Status::ok();
    return Status::error(StatusCode::kLimitExceeded,
                         nodeErrorPrefix(ctx.node()) + "iteration " + std::to_string(iteration) +
                             " would hold " + std::to_string(next) +
                             " bytes (carried values, scan outputs and the body's memory), over "
                             "the memory limit of " +
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
