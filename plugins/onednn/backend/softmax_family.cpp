//===- plugins/onednn/backend/softmax_family.cpp - Softmax regions -===//
//
// The Softmax family; see softmax_family.h. What must not fuse: a Softmax
// of an op set older than 13, whose axis means "flatten from here" rather
// than one axis, and inputs of unknown rank.
//
//===----------------------------------------------------------------------===//
#include "softmax_family.h"

#include "normalization.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("softmax");
  // Old semantics coerce to 2-D at `axis`; that is one axis only when it
  // is the last one.
  p.add(sdk::OpPattern("Softmax").where(
      predicates::onlyLastAxis("only the last axis (opset 13 and older forms agree there)")));
  return std::make_unique<sdk::PatternProperty>("softmax", std::move(p));
}

class SoftmaxRegionKernel final : public RegionKernel {
 public:
  SoftmaxRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context), softmax_(-1) {
    RegionBody body(region);
    input_ = body.inputIndex(body.single("softmax", "Softmax").input(0));
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      return std::vector<sdk::Shape>{{sdk::DataType::kFloat32, inputs[input_].dims}};
    });
  }

  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] { return softmax_.prepare(inputs[input_].dims); });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte> scratch) override {
    guarded(inputs, [&] {
      softmax_.execute(inputs[input_].dims(), inputs[input_].data<float>(),
                       outputs[0].data<float>(), scratch.data());
    });
  }

 private:
  Softmax softmax_;
  size_t input_ = 0;
};

}  // namespace

Family softmaxFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<SoftmaxRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
