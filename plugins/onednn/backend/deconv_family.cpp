//===- plugins/onednn/backend/deconv_family.cpp - ConvTranspose regions -===//
//
// The transposed-convolution family; see deconv_family.h. What must not
// fuse, and why:
//  * weights or a bias that are not constants: they are reordered once, at
//    session start;
//  * ConvTranspose that is not 2-D, uses auto_pad or output_shape: the
//    kernel reads explicit pads (output_shape would make them depend on the
//    input size);
//  * an output_padding larger than the matching end pad: oneDNN expresses
//    output_padding as less end padding, which cannot go below zero;
//  * a ConvTranspose output read by anything besides the BatchNormalization
//    or activation that follows it, and a BatchNormalization that is not
//    foldable (foldableBatchNormPattern) or whose output an activation
//    shares with other readers.
//
//===----------------------------------------------------------------------===//
#include "deconv_family.h"

#include "deconvolution.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

sdk::OpPattern deconvPattern() {
  sdk::OpPattern m = convLikePattern("ConvTranspose");
  m.where([](const sdk::NodeView& n) {
    if (n.hasAttr("output_shape")) return sdk::Decision::no("output_shape is not supported");
    std::vector<int64_t> pads = n.attrInts("pads", {0, 0, 0, 0});
    std::vector<int64_t> outPad = n.attrInts("output_padding", {0, 0});
    if (pads.size() != 4 || outPad.size() != 2) return sdk::Decision::no("not a 2-D ConvTranspose");
    for (size_t i = 0; i < 2; ++i)
      if (outPad[i] < 0 || outPad[i] > pads[2 + i])
        return sdk::Decision::no("output_padding is larger than the end pad");
    return sdk::Decision::yes();
  });
  return m;
}

// ConvTranspose -> [BatchNormalization] -> [activation], one pattern for
// the four variants: every step is taken when it is there, and only the
// last one may have readers outside the region.
std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("deconv");
  size_t deconv = p.add(deconvPattern().onlyFeedsNext());
  size_t bn = p.add(foldableBatchNormPattern().optional().onlyFeedsNext());
  p.connect(deconv, bn, 0);
  size_t act = p.add(activationPattern().optional());
  p.connect(bn, act, 0);
  return std::make_unique<sdk::PatternProperty>("deconv", std::move(p));
}

class DeconvRegionKernel final : public UnaryRegionKernel<Deconvolution> {
 public:
  DeconvRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : UnaryRegionKernel<Deconvolution>(context) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    std::optional<sdk::NodeView> deconv = body.find("ConvTranspose");
    if (!deconv) throw Unsupported("no ConvTranspose in the region");
    sdk::ValueView w = deconv->input(1);
    if (!isConstant(w) || w.dims().size() != 4) throw Unsupported("the ConvTranspose is not 2-D");
    std::vector<int64_t> wDims = w.dims();
    DeconvSpec spec;
    spec.groups = deconv->attrInt("group", 1);
    spec.inChannels = wDims[0];
    spec.outChannels = wDims[1] * spec.groups;
    spec.kernel = {wDims[2], wDims[3]};
    spec.weights = floatsOf(w);
    if (deconv->numInputs() > 2 && deconv->input(2)) spec.bias = floatsOf(deconv->input(2));
    std::vector<int64_t> strides = deconv->attrInts("strides", {1, 1});
    std::vector<int64_t> dilations = deconv->attrInts("dilations", {1, 1});
    std::vector<int64_t> pads = deconv->attrInts("pads", {0, 0, 0, 0});
    std::vector<int64_t> outPad = deconv->attrInts("output_padding", {0, 0});
    if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 || outPad.size() != 2)
      throw Unsupported("strides, dilations or pads do not describe a 2-D ConvTranspose");
    spec.strides = {strides[0], strides[1]};
    spec.dilations = {dilations[0], dilations[1]};
    spec.pads = {pads[0], pads[1], pads[2], pads[3]};
    spec.outputPadding = {outPad[0], outPad[1]};
    for (const sdk::NodeView& n : body.nodes()) {
      if (n == *deconv) continue;
      if (n.opType() == "BatchNormalization") {
        if (!spec.activations.empty())
          throw Unsupported("a BatchNormalization after the activation");
        foldBatchNorm(spec, floatsOf(n.input(1)), floatsOf(n.input(2)), floatsOf(n.input(3)),
                      floatsOf(n.input(4)), n.attrFloat("epsilon", 1e-5f));
        continue;
      }
      std::optional<Activation> a = activationOf(n);
      if (!a) throw Unsupported("unexpected " + n.opType() + " in a ConvTranspose region");
      spec.activations.push_back(*a);
    }
    spec.format = blockedFormat(region, context);
    input_ = body.inputIndex(deconv->input(0));
    core_ = std::make_unique<Deconvolution>(std::move(spec));
  }
};

}  // namespace

Family deconvFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<DeconvRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
