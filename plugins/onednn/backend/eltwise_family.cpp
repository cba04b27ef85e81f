//===- plugins/onednn/backend/eltwise_family.cpp - Element-wise chain regions -===//
//
// The element-wise family; see eltwise_family.h. What must not fuse: a
// step whose parameters are not f32 scalar constants (a Clip bound computed
// at run time), a binary op with a tensor operand (that is broadcasting
// arithmetic, not an activation), a step whose output has other readers
// (only the last step may), and a Gelu whose result is re-quantized.
//
//===----------------------------------------------------------------------===//
#include "eltwise_family.h"

#include "eltwise_chain.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

// A step: an activation, or x * c, x / c, x + c, x - c, c - x with a scalar c.
std::optional<Activation> stepOf(const sdk::NodeView& n) {
  if (std::optional<Activation> a = activationOf(n)) return a;
  const std::string_view op = n.opTypeView();
  if (n.numInputs() != 2 || !n.inOnnxDomain()) return std::nullopt;
  std::optional<float> c1 = scalarOf(n.input(1));
  std::optional<float> c0 = scalarOf(n.input(0));
  using K = Activation::Kind;
  if (op == "Mul" && (c1 || c0)) return Activation{K::kLinear, c1 ? *c1 : *c0, 0.0f};
  if (op == "Add" && (c1 || c0)) return Activation{K::kLinear, 1.0f, c1 ? *c1 : *c0};
  if (op == "Div" && c1) return Activation{K::kLinear, 1.0f / *c1, 0.0f};
  if (op == "Sub" && c1) return Activation{K::kLinear, 1.0f, -*c1};
  if (op == "Sub" && c0) return Activation{K::kLinear, -1.0f, *c0};  // c - x (1 - mask)
  return std::nullopt;
}

sdk::OpPattern stepPattern() {
  sdk::OpPattern m(activationOps() + "|Mul|Add|Div|Sub");
  m.where([](const sdk::NodeView& n) {
    if (!stepOf(n)) return sdk::Decision::no("not a unary step with f32 scalar constants");
    sdk::ValueView x = n.input(0);
    if (!x || x.dtype() != sdk::DataType::kFloat32)
      return sdk::Decision::no("the input is not f32");
    return sdk::Decision::yes();
  });
  return m;
}

// A chain of up to kMaxSteps steps as one pattern: the steps after the
// first are optional, and each step but the chain's last is read only by
// the next. Not sdk::Pattern::chain: a step may read the previous one
// through any input (c + x as well as x + c).
std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  constexpr size_t kMaxSteps = 4;
  sdk::Pattern p("eltwise");
  size_t prev = p.add(stepPattern().onlyFeedsNext());
  for (size_t i = 1; i < kMaxSteps; ++i) {
    size_t next = p.add(stepPattern().optional().onlyFeedsNext());
    p.connect(prev, next);
    prev = next;
  }
  return std::make_unique<sdk::PatternProperty>("eltwise", std::move(p));
}

class EltwiseRegionKernel final : public RegionKernel {
 public:
  EltwiseRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    std::vector<Activation> steps;
    std::optional<sdk::ValueView> last;
    for (const sdk::NodeView& n : body.nodes()) {
      std::optional<Activation> s = stepOf(n);
      if (!s) throw Unsupported("unexpected " + n.opType() + " in an element-wise chain");
      sdk::ValueView x = n.input(0);
      if (scalarOf(x) && n.numInputs() == 2) x = n.input(1);
      if (!last)
        input_ = body.inputIndex(x);
      else if (!(x == *last))
        throw Unsupported("the chain is not linear");
      steps.push_back(*s);
      last = n.output(0);
    }
    chain_ = std::make_unique<EltwiseChain>(std::move(steps), Format::kPlain);
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      sdk::Shape out = inputs[input_];
      chain_->prepare(out.dims);
      return std::vector<sdk::Shape>{std::move(out)};
    });
  }

  void run(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs) override {
    guarded(inputs, [&] {
      chain_->execute(inputs[input_].dims(), inputs[input_].raw(), outputs[0].raw());
    });
  }

 private:
  std::unique_ptr<EltwiseChain> chain_;
  size_t input_ = 0;
};

}  // namespace

Family eltwiseFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<EltwiseRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
