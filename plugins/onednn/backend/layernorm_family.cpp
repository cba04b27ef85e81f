//===- plugins/onednn/backend/layernorm_family.cpp - LayerNormalization regions -===//
//
// The LayerNormalization family; see layernorm_family.h. What must not
// fuse: normalization over more than the last axis, a scale or bias that
// is not a constant, and a node whose Mean/InvStdDev outputs are read.
//
//===----------------------------------------------------------------------===//
#include "layernorm_family.h"

#include "normalization.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("layernorm");
  p.add(sdk::OpPattern("LayerNormalization")
            .constantInput(1)
            .constantInput(2)
            .where(predicates::onlyFirstOutputUsed())
            .where(predicates::onlyLastAxis("normalizes over more than the last axis")));
  return std::make_unique<sdk::PatternProperty>("layernorm", std::move(p));
}

class LayerNormRegionKernel final : public RegionKernel {
 public:
  LayerNormRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    const sdk::NodeView& n = body.single("layernorm", "LayerNormalization");
    input_ = body.inputIndex(n.input(0));
    norm_ = std::make_unique<LayerNorm>(floatsOf(n.input(1)), floatsOf(n.input(2)),
                                        n.attrFloat("epsilon", 1e-5f));
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
      norm_->execute(inputs[input_].dims(), inputs[input_].data<float>(), outputs[0].data<float>(),
                     scratch.data());
    });
  }

 private:
  std::unique_ptr<LayerNorm> norm_;
  size_t input_ = 0;
};

}  // namespace

Family layernormFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<LayerNormRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
