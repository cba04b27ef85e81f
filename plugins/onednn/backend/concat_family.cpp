//===- plugins/onednn/backend/concat_family.cpp - Concat regions -===//
//
// The Concat family; see concat_family.h. What must not fuse: inputs that
// are not f32, or whose rank is unknown.
//
//===----------------------------------------------------------------------===//
#include "concat_family.h"

#include "concat.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("concat");
  p.add(sdk::OpPattern("Concat").where([](const sdk::NodeView& n) {
    for (size_t i = 0; i < n.numInputs(); ++i) {
      sdk::ValueView in = n.input(i);
      if (!in || in.dtype() != sdk::DataType::kFloat32 || !in.rank())
        return sdk::Decision::no("an input is not f32 of known rank");
    }
    if (n.numInputs() < 1) return sdk::Decision::no("no inputs");
    return sdk::Decision::yes();
  }));
  return std::make_unique<sdk::PatternProperty>("concat", std::move(p));
}

class ConcatRegionKernel final : public RegionKernel {
 public:
  ConcatRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    const sdk::NodeView& n = body.single("concat", "Concat");
    // Merged duplicate inputs map several concat operands to one input.
    for (size_t i = 0; i < n.numInputs(); ++i) inputs_.push_back(body.inputIndex(n.input(i)));
    concat_ = std::make_unique<Concat>(n.attrInt("axis", 0));
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      return std::vector<sdk::Shape>{
          {sdk::DataType::kFloat32, concat_->outputDims(operandDims(inputs))}};
    });
  }

  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] { return concat_->prepare(operandDims(inputs)); });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte> scratch) override {
    guarded(inputs, [&] {
      std::vector<std::vector<int64_t>> dims;
      std::vector<const float*> srcs;
      for (size_t i : inputs_) {
        std::span<const int64_t> d = inputs[i].dims();
        dims.emplace_back(d.begin(), d.end());
        srcs.push_back(inputs[i].data<float>());
      }
      concat_->execute(dims, srcs, outputs[0].data<float>(), scratch.data());
    });
  }

 private:
  // The dims of each concat operand, in operand order.
  std::vector<std::vector<int64_t>> operandDims(const std::vector<sdk::Shape>& inputs) const {
    std::vector<std::vector<int64_t>> dims;
    for (size_t i : inputs_) dims.push_back(inputs[i].dims);
    return dims;
  }

  std::unique_ptr<Concat> concat_;
  std::vector<size_t> inputs_;
};

}  // namespace

Family concatFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<ConcatRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
