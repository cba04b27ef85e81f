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

using partition::Decision;
using partition::OpMatcher;
using partition::PatternBuilder;
using partition::PatternProperty;

// True if `s` can scale `x` channel by channel: x is [N, C, H, W] with
// known dims, s is [N or 1, C, 1, 1].
bool scalesChannels(const TensorType& x, const TensorType& s) {
  if (!x.hasRank() || !s.hasRank() || x.shape->size() != 4 || s.shape->size() != 4) return false;
  if (x.dtype != DataType::kFloat32 || s.dtype != DataType::kFloat32) return false;
  const std::vector<Dim>& xd = *x.shape;
  const std::vector<Dim>& sd = *s.shape;
  for (const Dim& d : xd)
    if (d.isUnknown()) return false;
  const Dim one(1);
  return (sd[0] == xd[0] || sd[0] == one) && sd[1] == xd[1] && sd[2] == one && sd[3] == one;
}

// Which input of a Mul is x (the other is the factor), or nullopt.
std::optional<size_t> activationInput(const Node& n) {
  if (n.numInputs() != 2 || !n.input(0) || !n.input(1)) return std::nullopt;
  for (size_t i : {size_t{0}, size_t{1}}) {
    const Value* x = n.input(i);
    const Value* s = n.input(1 - i);
    if (!constantOf(s) && scalesChannels(x->type(), s->type())) return i;
  }
  return std::nullopt;
}

std::unique_ptr<partition::SubgraphProperty> makeProperty() {
  PatternBuilder b("channel_scale");
  b.add(OpMatcher("Mul").where([](const Node& n) {
    return Decision::noIf(!activationInput(n),
                          "not an activation [N, C, H, W] times a runtime factor [N, C, 1, 1]");
  }));
  return std::make_unique<PatternProperty>("channel_scale", buildPattern(b));
}

class ChannelScaleRegionKernel final : public RegionKernel {
 public:
  explicit ChannelScaleRegionKernel(const Node& region) {
    RegionBody body(region);
    const Node& n = body.single("channel-scale", "Mul");
    std::optional<size_t> x = activationInput(n);
    if (!x) throw Unsupported("the Mul does not scale channels");
    x_ = body.inputIndex(n.input(*x));
    s_ = body.inputIndex(n.input(1 - *x));
    if (x_ == s_) throw Unsupported("the Mul scales a tensor by itself");
    core_ = std::make_unique<ChannelScale>(ChannelScaleSpec{blockedFormat()});
  }

  const runtime::Layout* inputLayout(size_t i) const override {
    return i == x_ || i == s_ ? layoutOf(core_->spec().format) : nullptr;
  }
  const runtime::Layout* outputLayout(size_t) const override {
    return layoutOf(core_->spec().format);
  }

  Status resize(runtime::ResizeContext& ctx) const override {
    return guarded(ctx, [&] {
      const std::vector<int64_t>& x = ctx.inputDesc(x_).dims;
      const std::vector<int64_t>& s = ctx.inputDesc(s_).dims;
      runtime::TensorDesc out;
      out.dims = core_->outputDims(x, s);
      out.layout = layoutOf(core_->spec().format);
      ctx.requestScratch(core_->prepare(x, s));
      ctx.setOutput(0, std::move(out));
    });
  }

  Status run(runtime::RunContext& ctx) const override {
    return guarded(ctx, [&] {
      core_->execute(ctx.input(x_).dims(), ctx.input(s_).dims(), ctx.input(x_).raw(),
                     ctx.input(s_).raw(), ctx.output(0).raw(), ctx.scratch().data());
    });
  }

 private:
  std::unique_ptr<ChannelScale> core_;
  size_t x_ = 0;
  size_t s_ = 1;
};

}  // namespace

std::vector<std::pair<std::string, partition::PropertyFactory>> channelScaleProperties() {
  return {{"channel_scale", makeProperty}};
}

runtime::KernelCreator channelScaleKernelCreator() { return creatorOf<ChannelScaleRegionKernel>(); }

}  // namespace subgraph::onednn
