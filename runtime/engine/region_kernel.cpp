//===- runtime/engine/region_kernel.cpp - Default executor of fused regions -===//
//
// A kernel running a fused region's body graph on the reference backend; see
// engine/region_kernel.h.
//
//===----------------------------------------------------------------------===//
#include "engine/region_kernel.h"

#include "engine/nested_graph.h"
#include "engine/plan.h"

namespace subgraph::runtime::engine {
namespace {

class GraphKernel final : public Kernel {
 public:
  explicit GraphKernel(std::unique_ptr<NestedGraph> body) : body_(std::move(body)) {}

  std::vector<size_t> shapeInputs() const override { return body_->contentInputs(); }

  Status resize(ResizeContext& ctx) const override {
    std::vector<TensorDesc> descs(ctx.numInputs());
    std::vector<const void*> data(ctx.numInputs(), nullptr);
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      if (!ctx.hasInput(i)) return ctx.fail("region input " + std::to_string(i) + " is missing");
      descs[i] = ctx.inputDesc(i);
      if (const TensorView* c = ctx.inputContent(i)) data[i] = c->raw();
    }
    StatusOr<std::shared_ptr<const Plan>> plan = body_->planFor(descs, data);
    if (!plan.isOk()) return ctx.fail("body: " + plan.status().message());
    for (size_t o = 0; o < ctx.numOutputs(); ++o)
      ctx.setOutput(o, body_->outputDesc(*plan.value(), o));
    ctx.requestScratch(body_->memoryBytes(*plan.value()));
    return Status::ok();
  }

  StatusOr<std::unique_ptr<KernelFrameState>> onFramePrologue() const override {
    auto state = std::make_unique<NestedFrameState>();
    StatusOr<std::unique_ptr<Frame>> frame = body_->newFrame();
    if (!frame.isOk()) return frame.status();
    state->frame = std::move(frame).value();
    return std::unique_ptr<KernelFrameState>(std::move(state));
  }

  Status run(RunContext& ctx) const override {
    std::vector<TensorDesc> descs(ctx.numInputs());
    std::vector<const void*> data(ctx.numInputs(), nullptr);
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      descs[i] = ctx.input(i).desc();
      data[i] = ctx.input(i).raw();
    }
    StatusOr<std::shared_ptr<const Plan>> plan = body_->planFor(descs, data);
    if (!plan.isOk()) return ctx.fail("body: " + plan.status().message());
    std::vector<void*> outputs(ctx.numOutputs());
    for (size_t o = 0; o < ctx.numOutputs(); ++o) outputs[o] = ctx.output(o).raw();
    // Precomputed steps run without a frame; make a temporary one then.
    std::unique_ptr<Frame> temporary;
    Frame* frame = nullptr;
    if (auto* state = dynamic_cast<NestedFrameState*>(ctx.frameState())) {
      frame = state->frame.get();
    } else {
      StatusOr<std::unique_ptr<Frame>> made = body_->newFrame();
      if (!made.isOk()) return made.status();
      temporary = std::move(made).value();
      frame = temporary.get();
    }
    Status st = body_->run(*plan.value(), *frame, ctx.scratch(), data, outputs);
    if (!st.isOk()) return ctx.fail("body: " + st.message());
    return Status::ok();
  }

 private:
  std::unique_ptr<NestedGraph> body_;
};

}  // namespace

StatusOr<std::unique_ptr<Kernel>> makeGraphKernel(const Node& node, std::shared_ptr<Graph> body,
                                                  std::shared_ptr<Backend> reference) {
  if (body->inputs().size() != node.numInputs() || body->outputs().size() != node.numOutputs())
    return Status::invalid(
        nodeErrorPrefix(&node) + "body graph has " + std::to_string(body->inputs().size()) +
        " inputs and " + std::to_string(body->outputs().size()) + " outputs but the node has " +
        std::to_string(node.numInputs()) + " and " + std::to_string(node.numOutputs()));
  StatusOr<std::unique_ptr<NestedGraph>> nested = NestedGraph::compile(body, std::move(reference));
  if (!nested.isOk())
    return Status(nested.status().code(),
                  nodeErrorPrefix(&node) + "body: " + nested.status().message());
  return std::unique_ptr<Kernel>(std::make_unique<GraphKernel>(std::move(nested).value()));
}

StatusOr<std::unique_ptr<Kernel>> makeRegionKernel(const Node& node,
                                                   std::shared_ptr<Backend> reference) {
  const Attribute* body = node.attr("body");
  if (!body || body->kind() != AttrKind::kGraph || !body->asGraph())
    return Status::invalid(nodeErrorPrefix(&node) + "fused region has no 'body' graph attribute");
  return makeGraphKernel(node, body->asGraph(), std::move(reference));
}

}  // namespace subgraph::runtime::engine
