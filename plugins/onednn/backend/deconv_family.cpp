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
//    foldable (foldableBatchNormMatcher) or whose output an activation
//    shares with other readers.
//
//===----------------------------------------------------------------------===//
#include "deconv_family.h"

#include "deconvolution.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

namespace sp = subgraph::partition::predicates;
using partition::Decision;
using partition::OpMatcher;
using partition::PatternBuilder;
using partition::PatternProperty;

OpMatcher deconvMatcher(bool interior) {
  OpMatcher m("ConvTranspose");
  m.where(sp::inputIsConstant(1))
      .where(sp::outputRank(4))
      .where(sp::attrEquals("auto_pad", std::string("NOTSET")))
      .where([](const Node& n) {
        if (n.numInputs() > 2 && n.input(2) && !constantOf(n.input(2)))
          return Decision::no("the bias is not a constant");
        if (n.attr("output_shape")) return Decision::no("output_shape is not supported");
        std::vector<int64_t> pads = n.getInts("pads", {0, 0, 0, 0});
        std::vector<int64_t> outPad = n.getInts("output_padding", {0, 0});
        if (pads.size() != 4 || outPad.size() != 2) return Decision::no("not a 2-D ConvTranspose");
        for (size_t i = 0; i < 2; ++i)
          if (outPad[i] < 0 || outPad[i] > pads[2 + i])
            return Decision::no("output_padding is larger than the end pad");
        return Decision::yes();
      });
  if (interior) m.where(sp::hasOneUse());
  return m;
}

// ConvTranspose [-> BatchNormalization] [-> activation]; every node but
// the last must have its output read only by the next.
std::unique_ptr<partition::SubgraphProperty> makeProperty(const std::string& name, bool bn,
                                                          bool act) {
  PatternBuilder b(name);
  size_t last = b.add(deconvMatcher(bn || act));
  if (bn) {
    OpMatcher m = foldableBatchNormMatcher();
    if (act) m.where(sp::hasOneUse());
    size_t node = b.add(std::move(m));
    b.connect(last, node, 0);
    last = node;
  }
  if (act) {
    size_t node =
        b.add(OpMatcher::anyOf(activationOps()).where(predicates::isTranslatableActivation()));
    b.connect(last, node, 0);
  }
  return std::make_unique<PatternProperty>(name, buildPattern(b));
}

class DeconvRegionKernel final : public UnaryRegionKernel<Deconvolution> {
 public:
  explicit DeconvRegionKernel(const Node& region) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    const Node* deconv = body.find("ConvTranspose");
    if (!deconv) throw Unsupported("no ConvTranspose in the region");
    const Tensor* w = constantOf(deconv->input(1));
    if (!w || w->dims().size() != 4) throw Unsupported("the ConvTranspose is not 2-D");
    DeconvSpec spec;
    spec.groups = deconv->getInt("group", 1);
    spec.inChannels = w->dims()[0];
    spec.outChannels = w->dims()[1] * spec.groups;
    spec.kernel = {w->dims()[2], w->dims()[3]};
    spec.weights = floatsOf(deconv->input(1));
    if (deconv->numInputs() > 2 && deconv->input(2)) spec.bias = floatsOf(deconv->input(2));
    std::vector<int64_t> strides = deconv->getInts("strides", {1, 1});
    std::vector<int64_t> dilations = deconv->getInts("dilations", {1, 1});
    std::vector<int64_t> pads = deconv->getInts("pads", {0, 0, 0, 0});
    std::vector<int64_t> outPad = deconv->getInts("output_padding", {0, 0});
    if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 || outPad.size() != 2)
      throw Unsupported("strides, dilations or pads do not describe a 2-D ConvTranspose");
    spec.strides = {strides[0], strides[1]};
    spec.dilations = {dilations[0], dilations[1]};
    spec.pads = {pads[0], pads[1], pads[2], pads[3]};
    spec.outputPadding = {outPad[0], outPad[1]};
    for (const Node* n : body.nodes()) {
      if (n == deconv) continue;
      if (n->opType() == "BatchNormalization") {
        if (!spec.activations.empty())
          throw Unsupported("a BatchNormalization after the activation");
        foldBatchNorm(spec, floatsOf(n->input(1)), floatsOf(n->input(2)), floatsOf(n->input(3)),
                      floatsOf(n->input(4)), n->getFloat("epsilon", 1e-5f));
        continue;
      }
      std::optional<Activation> a = activationOf(*n);
      if (!a) throw Unsupported("unexpected " + n->opType() + " in a ConvTranspose region");
      spec.activations.push_back(*a);
    }
    spec.format = blockedFormat();
    input_ = body.inputIndex(deconv->input(0));
    core_ = std::make_unique<Deconvolution>(std::move(spec));
  }
};

}  // namespace

std::vector<std::pair<std::string, partition::PropertyFactory>> deconvProperties() {
  // The longer fusions first, so the BatchNormalization and the activation
  // are not left behind.
  return {{"deconv_bn_act", [] { return makeProperty("deconv_bn_act", true, true); }},
          {"deconv_bn", [] { return makeProperty("deconv_bn", true, false); }},
          {"deconv_act", [] { return makeProperty("deconv_act", false, true); }},
          {"deconv", [] { return makeProperty("deconv", false, false); }}};
}

runtime::KernelCreator deconvKernelCreator() { return creatorOf<DeconvRegionKernel>(); }

}  // namespace subgraph::onednn
