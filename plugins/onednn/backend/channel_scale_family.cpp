//===- plugins/onednn/backend/channel_scale_family.cpp - Channel scaling -===//
//
// The channel-scale family; see channel_scale_family.h. What must not
// fuse, and why:
//  * a constant factor: that is a per-channel affine op a convolution or
//    BatchNormalization folds better, and a scalar one is the eltwise
//    family's;
//  * any other broadcast (over H or W, a scalar tensor, a rank other than
//    4): oneDNN's binary takes it, but nothing here needs it yet, and each
//    broadcast kind is its own kernel choice;
//  * unknown dims, or a factor batch that is neither x's (the same number
//    or symbol) nor 1: the kernel could not be sure the shapes pair up
//    until run time.
//
//===----------------------------------------------------------------------===//
#include "channel_scale_family.h"

#include <optional>
#include <string>

#include "channel_scale.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

// True if dim `i` of `a` and dim `j` of `b` are the same size: the same
// static number, or the same symbol. An unknown dim equals nothing known.
bool sameDim(const sdk::ValueView& a, int32_t i, const sdk::ValueView& b, int32_t j) {
  std::optional<std::string> sa = a.dimSymbol(i), sb = b.dimSymbol(j);
  return sa && sb && *sa == *sb && a.dims()[i] == b.dims()[j];
}

// True if `s` can scale `x` channel by channel: x is [N, C, H, W] with
// known dims, s is [N or 1, C, 1, 1].
bool scalesChannels(const sdk::ValueView& x, const sdk::ValueView& s) {
  if (x.rank() != 4 || s.rank() != 4) return false;
  if (x.dtype() != sdk::DataType::kFloat32 || s.dtype() != sdk::DataType::kFloat32) return false;
  const std::vector<int64_t> sd = s.dims();
  // Static and symbolic dims are known; only an unknown one has no symbol.
  for (int32_t i = 0; i < 4; ++i)
    if (!x.dimSymbol(i)) return false;
  return (sameDim(s, 0, x, 0) || sd[0] == 1) && sameDim(s, 1, x, 1) && sd[2] == 1 && sd[3] == 1;
}

// Which input of a Mul is x (the other is the factor), or nullopt.
std::optional<size_t> activationInput(const sdk::NodeView& n) {
  if (n.numInputs() != 2 || !n.input(0) || !n.input(1)) return std::nullopt;
  for (size_t i : {size_t{0}, size_t{1}}) {
    sdk::ValueView x = n.input(i);
    sdk::ValueView s = n.input(1 - i);
    if (!isConstant(s) && scalesChannels(x, s)) return i;
  }
  return std::nullopt;
}

std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("channel_scale");
  p.add(sdk::OpPattern("Mul").where([](const sdk::NodeView& n) {
    if (!activationInput(n))
      return sdk::Decision::no(
          "not an activation [N, C, H, W] times a runtime factor [N, C, 1, 1]");
    return sdk::Decision::yes();
  }));
  return std::make_unique<sdk::PatternProperty>("channel_scale", std::move(p));
}

class ChannelScaleRegionKernel final : public RegionKernel {
 public:
  ChannelScaleRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    const sdk::NodeView& n = body.single("channel-scale", "Mul");
    std::optional<size_t> x = activationInput(n);
    if (!x) throw Unsupported("the Mul does not scale channels");
    x_ = body.inputIndex(n.input(*x));
    s_ = body.inputIndex(n.input(1 - *x));
    if (x_ == s_) throw Unsupported("the Mul scales a tensor by itself");
    core_ = std::make_unique<ChannelScale>(ChannelScaleSpec{blockedFormat(region, context)});
  }

  const sdk::Layout* inputLayout(size_t i) const override {
    return i == x_ || i == s_ ? layoutOf(core_->spec().format) : nullptr;
  }
  const sdk::Layout* outputLayout(size_t) const override { return layoutOf(core_->spec().format); }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      return std::vector<sdk::Shape>{
          {sdk::DataType::kFloat32, core_->outputDims(inputs[x_].dims, inputs[s_].dims)}};
    });
  }

  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] { return core_->prepare(inputs[x_].dims, inputs[s_].dims); });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte> scratch) override {
    guarded(inputs, [&] {
      core_->execute(inputs[x_].dims(), inputs[s_].dims(), inputs[x_].raw(), inputs[s_].raw(),
                     outputs[0].raw(), scratch.data());
    });
  }

 private:
  std::unique_ptr<ChannelScale> core_;
  size_t x_ = 0;
  size_t s_ = 1;
};

}  // namespace

Family channelScaleFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<ChannelScaleRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
