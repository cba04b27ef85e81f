//===- plugins/onednn/backend/layernorm_family.cpp - LayerNormalization regions -===//
//
// The LayerNormalization family; see layernorm_family.h. What must not
// fuse: normalization over more than the last axis, a scale or bias that
// is not a constant, and a node whose Mean/InvStdDev outputs are read; a
// sum before it whose operands broadcast, one of which is a constant, or
// whose result is read elsewhere too.
//
//===----------------------------------------------------------------------===//
#include "layernorm_family.h"

#include <algorithm>

#include "normalization.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

// Both operands computed at run time: an Add of a constant is a bias, the
// binary family's (or a matmul's) to take.
sdk::Decision notConstantOperand(const sdk::NodeView& n) {
  for (size_t i = 0; i < n.numInputs(); ++i)
    if (isConstant(n.input(i))) return sdk::Decision::no("an operand is a constant");
  return sdk::Decision::yes();
}

std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("layernorm");
  size_t norm =
      p.add(sdk::OpPattern("LayerNormalization")
                .constantInput(1)
                .constantInput(2)
                .where(predicates::onlyFirstOutputUsed())
                .where(predicates::onlyLastAxis("normalizes over more than the last axis")));
  // The residual sum before it, when no matmul took it as a post-op (an
  // embedding sum, a residual after a region without a sum).
  size_t sum = p.add(sdk::OpPattern("Add")
                         .where(predicates::sameShapes())
                         .where(notConstantOperand)
                         .onlyFeedsNext()
                         .optional());
  p.connect(sum, norm, 0);
  return std::make_unique<sdk::PatternProperty>("layernorm", std::move(p));
}

class LayerNormRegionKernel final : public RegionKernel {
 public:
  LayerNormRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    std::optional<sdk::NodeView> n = body.find("LayerNormalization");
    if (!n || body.numOutputs() != 1)
      throw Unsupported("a layernorm region holds one LayerNormalization");
    if (std::optional<sdk::NodeView> add = body.find("Add")) {
      input_ = body.inputIndex(add->input(0));
      residual_ = body.inputIndex(add->input(1));
    } else {
      input_ = body.inputIndex(n->input(0));
    }
    norm_ = std::make_unique<LayerNorm>(floatsOf(n->input(1)), floatsOf(n->input(2)),
                                        n->attrFloat("epsilon", 1e-5f));
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      return std::vector<sdk::Shape>{{sdk::DataType::kFloat32, inputs[input_].dims}};
    });
  }

  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] { return norm_->prepare(inputs[input_].dims); });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte> scratch) override {
    guarded(inputs, [&] {
      const sdk::Tensor& x = inputs[input_];
      if (residual_ == kNone) {
        norm_->execute(x.dims(), x.data<float>(), outputs[0].data<float>(), scratch.data());
        return;
      }
      const sdk::Tensor& r = inputs[residual_];
      if (!std::ranges::equal(x.dims(), r.dims()))
        throw std::invalid_argument("layernorm: the residual's dims differ from the input's");
      norm_->executeSum(x.dims(), x.data<float>(), r.data<float>(), outputs[0].data<float>(),
                        scratch.data());
    });
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  std::unique_ptr<LayerNorm> norm_;
  size_t input_ = 0;
  size_t residual_ = kNone;  // the Add's second operand, when the region sums
};

}  // namespace

Family layernormFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<LayerNormRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
