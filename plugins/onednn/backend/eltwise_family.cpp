//===- plugins/onednn/backend/eltwise_family.cpp - Element-wise chain regions -===//
//
// The element-wise family; see eltwise_family.h. What must not fuse: a
// step whose parameters are not f32 scalar constants (a Clip bound computed
// at run time), a binary op with a tensor operand (that is broadcasting
// arithmetic, not an activation), and a step whose output has other readers
// (only the last step may).
//
//===----------------------------------------------------------------------===//
#include "eltwise_family.h"

#include "eltwise_chain.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

namespace sp = subgraph::partition::predicates;
using partition::Decision;
using partition::OpMatcher;
using partition::PatternBuilder;
using partition::PatternProperty;

// A step: an activation, or x * c, x / c, x + c, x - c with a scalar c.
std::optional<Activation> stepOf(const Node& n) {
  if (std::optional<Activation> a = activationOf(n)) return a;
  const std::string& op = n.opType();
  if (n.numInputs() != 2 || !n.domain().empty()) return std::nullopt;
  std::optional<float> c1 = scalarOf(n.input(1));
  std::optional<float> c0 = scalarOf(n.input(0));
  using K = Activation::Kind;
  if (op == "Mul" && (c1 || c0)) return Activation{K::kLinear, c1 ? *c1 : *c0, 0.0f};
  if (op == "Add" && (c1 || c0)) return Activation{K::kLinear, 1.0f, c1 ? *c1 : *c0};
  if (op == "Div" && c1) return Activation{K::kLinear, 1.0f / *c1, 0.0f};
  if (op == "Sub" && c1) return Activation{K::kLinear, 1.0f, -*c1};
  return std::nullopt;
}

OpMatcher stepMatcher(bool interior) {
  std::vector<std::string> ops = activationOps();
  ops.insert(ops.end(), {"Mul", "Add", "Div", "Sub"});
  OpMatcher m = OpMatcher::anyOf(ops).where([](const Node& n) {
    if (!stepOf(n)) return Decision::no("not a unary step with f32 scalar constants");
    const Value* x = n.input(0);
    return Decision::noIf(!x || x->type().dtype != DataType::kFloat32, "the input is not f32");
  });
  if (interior) m.where(sp::hasOneUse());
  return m;
}

std::unique_ptr<partition::SubgraphProperty> makeProperty(size_t length) {
  std::string name = "eltwise" + std::to_string(length);
  PatternBuilder b(name);
  size_t prev = b.add(stepMatcher(length > 1));
  for (size_t i = 1; i < length; ++i) {
    size_t next = b.add(stepMatcher(i + 1 < length));
    b.connect(prev, next);
    prev = next;
  }
  return std::make_unique<PatternProperty>(name, buildPattern(b));
}

class EltwiseRegionKernel final : public RegionKernel {
 public:
  explicit EltwiseRegionKernel(const Node& region) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    std::vector<Activation> steps;
    const Value* last = nullptr;
    for (const Node* n : body.nodes()) {
      std::optional<Activation> s = stepOf(*n);
      if (!s) throw Unsupported("unexpected " + n->opType() + " in an element-wise chain");
      const Value* x = n->input(0);
      if (scalarOf(x) && n->numInputs() == 2) x = n->input(1);
      if (!last)
        input_ = body.inputIndex(x);
      else if (x != last)
        throw Unsupported("the chain is not linear");
      steps.push_back(*s);
      last = n->output(0);
    }
    chain_ = std::make_unique<EltwiseChain>(std::move(steps), Format::kPlain);
  }

  Status resize(runtime::ResizeContext& ctx) const override {
    return guarded(ctx, [&] {
      runtime::TensorDesc out = ctx.inputDesc(input_);
      chain_->prepare(out.dims);
      ctx.setOutput(0, std::move(out));
    });
  }

  Status run(runtime::RunContext& ctx) const override {
    return guarded(ctx, [&] {
      chain_->execute(ctx.input(input_).dims(), ctx.input(input_).raw(), ctx.output(0).raw());
    });
  }

 private:
  std::unique_ptr<EltwiseChain> chain_;
  size_t input_ = 0;
};

}  // namespace

std::vector<std::pair<std::string, partition::PropertyFactory>> eltwiseProperties() {
  std::vector<std::pair<std::string, partition::PropertyFactory>> out;
  // Longest first, so that a chain is one region rather than several.
  for (size_t length = 4; length >= 1; --length)
    out.emplace_back("eltwise" + std::to_string(length), [length] { return makeProperty(length); });
  return out;
}

runtime::KernelCreator eltwiseKernelCreator() { return creatorOf<EltwiseRegionKernel>(); }

}  // namespace subgraph::onednn
