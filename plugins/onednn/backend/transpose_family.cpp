//===- plugins/onednn/backend/transpose_family.cpp - Transpose regions ---===//
//
// The transpose family; see transpose_family.h. What must not fuse: data
// other than f32 and an input of unknown rank.
//
//===----------------------------------------------------------------------===//
#include "transpose_family.h"

#include "region_support.h"
#include "transpose.h"

namespace subgraph::onednn {
namespace {

std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("transpose");
  p.add(sdk::OpPattern("Transpose").where([](const sdk::NodeView& n) {
    if (!n.input(0) || n.input(0).dtype() != sdk::DataType::kFloat32)
      return sdk::Decision::no("the data is not f32");
    if (!n.input(0).rank()) return sdk::Decision::no("the data has no known rank");
    return sdk::Decision::yes();
  }));
  return std::make_unique<sdk::PatternProperty>("transpose", std::move(p));
}

// The permutation: the attribute, else the dims reversed.
std::vector<int64_t> permOf(const sdk::NodeView& n) {
  std::vector<int64_t> perm = n.attrInts("perm");
  if (!perm.empty()) return perm;
  const int32_t rank = n.input(0).rank().value_or(0);
  for (int32_t i = rank; i-- > 0;) perm.push_back(i);
  return perm;
}

class TransposeRegionKernel final : public RegionKernel {
 public:
  TransposeRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    const sdk::NodeView& n = body.single("transpose", "Transpose");
    input_ = body.inputIndex(n.input(0));
    transpose_.emplace(permOf(n));
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      return std::vector<sdk::Shape>{
          {sdk::DataType::kFloat32, transpose_->outputDims(inputs[input_].dims)}};
    });
  }

  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      transpose_->prepare(inputs[input_].dims);
      return size_t{0};
    });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte>) override {
    guarded(inputs, [&] {
      transpose_->execute(inputs[input_].dims(), inputs[input_].data<float>(),
                          outputs[0].data<float>());
    });
  }

 private:
  std::optional<Transpose> transpose_;
  size_t input_ = 0;
};

}  // namespace

Family transposeFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<TransposeRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
