//===- plugins/onednn/backend/conv_family.cpp - Conv/BN/sum/activation regions -===//
//
// The convolution family; see conv_family.h. What must not fuse, and why:
//  * BatchNormalization whose parameters are not constants (nothing to
//    fold at session start);
//  * a value read twice inside the chain (a Conv or BN output that also
//    feeds something else): the region would have to emit it too;
//  * an Add that broadcasts: `sum` adds a tensor of the output's shape;
//  * convs that are not 2-D or use auto_pad: the kernel is NCHW-only and
//    reads explicit pads.
// Exporters without a HardSwish op (ONNX before opset 14, hence every
// torch.onnx.export at opset 13) write hardswish as x * HardSigmoid(x)
// with alpha 1/6 and beta 1/2; the `_hswish` properties take that pair
// as one HardSwish post-op. There the value before it is read twice, by
// the HardSigmoid and the Mul, and by nothing else.
//
//===----------------------------------------------------------------------===//
#include "conv_family.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "fused_conv.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

namespace sp = subgraph::partition::predicates;
using partition::OpMatcher;
using partition::PatternBuilder;
using partition::PatternProperty;

// The step matchers say what each op must be; step() adds how many
// readers its output may have, which depends on its place in the chain.
OpMatcher convMatcher() {
  OpMatcher m("Conv");
  m.where(sp::inputIsConstant(1))
      .where(sp::outputRank(4))
      .where(sp::attrEquals("auto_pad", std::string("NOTSET")))
      .where([](const Node& n) {
        return partition::Decision::noIf(n.numInputs() > 2 && n.input(2) && !constantOf(n.input(2)),
                                         "the bias is not a constant");
      });
  return m;
}

OpMatcher addMatcher() {
  OpMatcher m("Add");
  m.where(predicates::sameShapes());
  return m;
}

OpMatcher activationMatcher() {
  return OpMatcher::anyOf(activationOps()).where(predicates::isTranslatableActivation());
}

// x * HardSigmoid(x) is HardSwish when the gate is exactly max(0, min(1,
// x / 6 + 1 / 2)); exporters write alpha as the float nearest 1/6.
bool isHardSwishGate(const Node& n) {
  return n.opType() == "HardSigmoid" &&
         std::fabs(n.getFloat("alpha", 0.2f) - 1.0f / 6.0f) <= 1e-6f &&
         std::fabs(n.getFloat("beta", 0.5f) - 0.5f) <= 1e-6f;
}

OpMatcher hardSwishGateMatcher() {
  OpMatcher m("HardSigmoid");
  m.where([](const Node& n) {
     return partition::Decision::noIf(!isHardSwishGate(n),
                                      "alpha and beta are not 1/6 and 1/2 (not a HardSwish)");
   }).where(sp::hasOneUse());
  return m;
}

// The value feeding a decomposed HardSwish has exactly two readers, its
// gate and the Mul, both in the pattern.
partition::NodePredicate readByGateAndMul() {
  return [](const Node& n) {
    return partition::Decision::noIf(
        n.numOutputs() != 1 || n.output(0)->uses().size() != 2 || n.output(0)->isGraphOutput(),
        "its output is not read by exactly a HardSigmoid and a Mul");
  };
}

enum class Tail { kNone, kActivation, kHardSwish };

// Readers of a step's output: one (the next step) inside the chain and
// before a single activation, exactly the gate and the Mul before a
// decomposed HardSwish, any number at the end of the region.
OpMatcher step(OpMatcher m, bool last, Tail tail) {
  if (!last || tail == Tail::kActivation)
    m.where(sp::hasOneUse());
  else if (tail == Tail::kHardSwish)
    m.where(readByGateAndMul());
  return m;
}

// Conv, then the optional steps that are present, each reading the previous
// one's output; only the last node may have other readers.
std::unique_ptr<partition::SubgraphProperty> makeProperty(const std::string& name, bool bn,
                                                          bool add, Tail tail) {
  const bool act = tail == Tail::kActivation;
  PatternBuilder builder(name);
  size_t prev = builder.add(step(convMatcher(), !bn && !add, tail));
  if (bn) {
    size_t node = builder.add(step(foldableBatchNormMatcher(), !add, tail));
    builder.connect(prev, node, 0);
    prev = node;
  }
  if (add) {
    size_t node = builder.add(step(addMatcher(), true, tail));
    builder.connect(prev, node);
    prev = node;
  }
  if (act) {
    size_t node = builder.add(activationMatcher());
    builder.connect(prev, node, 0);
  }
  if (tail == Tail::kHardSwish) {
    size_t gate = builder.add(hardSwishGateMatcher());
    builder.connect(prev, gate, 0);
    size_t mul = builder.add(OpMatcher("Mul"));
    builder.connect(prev, mul).connect(gate, mul);
  }
  partition::PropertyOptions options;
  // Folding BN statistics into weights is valid for inference only.
  options.inferenceOnly = bn;
  return std::make_unique<PatternProperty>(name, buildPattern(builder), options);
}

// Reads a conv-family body into a spec; see the file comment for what the
// selector has already guaranteed.
class ConvRegionKernel final : public RegionKernel {
 public:
  explicit ConvRegionKernel(const Node& region) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    const Node* conv = body.find("Conv");
    if (!conv) throw Unsupported("no Conv in the region");
    ConvSpec spec;
    std::vector<float> weights = floatsOf(conv->input(1));
    const Tensor* w = constantOf(conv->input(1));
    if (w->dims().size() != 4) throw Unsupported("the conv is not 2-D");
    spec.outChannels = w->dims()[0];
    spec.groups = conv->getInt("group", 1);
    spec.inChannels = w->dims()[1] * spec.groups;
    spec.kernel = {w->dims()[2], w->dims()[3]};
    spec.weights = std::move(weights);
    if (conv->numInputs() > 2 && conv->input(2)) spec.bias = floatsOf(conv->input(2));
    std::vector<int64_t> strides = conv->getInts("strides", {1, 1});
    std::vector<int64_t> dilations = conv->getInts("dilations", {1, 1});
    std::vector<int64_t> pads = conv->getInts("pads", {0, 0, 0, 0});
    if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
      throw Unsupported("strides, dilations or pads do not describe a 2-D conv");
    spec.strides = {strides[0], strides[1]};
    spec.dilations = {dilations[0], dilations[1]};
    spec.pads = {pads[0], pads[1], pads[2], pads[3]};
    srcInput_ = body.inputIndex(conv->input(0));

    const Value* last = conv->output(0);
    const Node* gate = nullptr;  // a HardSwish gate waiting for its Mul
    for (const Node* n : body.nodes()) {
      if (n == conv) continue;
      if (gate) {
        if (n->opType() != "Mul" || !(n->input(0) == last || n->input(1) == last) ||
            !(n->input(0) == gate->output(0) || n->input(1) == gate->output(0)))
          throw Unsupported("a HardSigmoid gate is not followed by its Mul");
        spec.activations.push_back(Activation{Activation::Kind::kHardSwish});
        gate = nullptr;
      } else if (isHardSwishGate(*n) && n->output(0)->uses().size() == 1 &&
                 n->output(0)->uses()[0].user->opType() == "Mul") {
        gate = n;
        continue;  // `last` stays the gate's input, the Mul's other operand
      } else if (n->opType() == "BatchNormalization") {
        foldBatchNorm(spec, floatsOf(n->input(1)), floatsOf(n->input(2)), floatsOf(n->input(3)),
                      floatsOf(n->input(4)), n->getFloat("epsilon", 1e-5f));
      } else if (n->opType() == "Add") {
        const Value* other = n->input(0) == last ? n->input(1) : n->input(0);
        if (!body.isInput(other)) throw Unsupported("the Add's residual is not a region input");
        spec.sumResidual = true;
        residualInput_ = body.inputIndex(other);
      } else if (std::optional<Activation> a = activationOf(*n)) {
        spec.activations.push_back(*a);
      } else {
        throw Unsupported("unexpected " + n->opType() + " in a conv region");
      }
      last = n->output(0);
    }
    if (gate) throw Unsupported("a HardSigmoid gate without its Mul");
    Format blocked = blockedFormat();
    // The stem (few input channels) reads plain NCHW: oneDNN has direct
    // kernels for it, and blocking 3 channels to 16 would waste 5x work.
    bool plainSrc = spec.groups == 1 && spec.inChannels < 16 && blocked == Format::kBlocked16;
    // x + conv(x) reads one region input as both source and residual, and
    // the residual must be in the output's layout.
    if (spec.sumResidual && residualInput_ == srcInput_) plainSrc = false;
    spec.srcFormat = plainSrc ? Format::kPlain : blocked;
    spec.dstFormat = blocked;
    spec.winograd = winogradAllowed();
    conv_ = std::make_unique<FusedConv>(std::move(spec));
  }

  const runtime::Layout* inputLayout(size_t i) const override {
    if (i == srcInput_) return layoutOf(conv_->spec().srcFormat);
    if (i == residualInput_) return layoutOf(conv_->spec().dstFormat);
    return nullptr;
  }
  const runtime::Layout* outputLayout(size_t) const override {
    return layoutOf(conv_->spec().dstFormat);
  }

  Status resize(runtime::ResizeContext& ctx) const override {
    return guarded(ctx, [&] {
      const std::vector<int64_t>& in = ctx.inputDesc(srcInput_).dims;
      runtime::TensorDesc out;
      out.dims = conv_->outputDims(in);
      // The partitioner matched the Add on equal (possibly symbolic)
      // shapes; the sum post-op reads the residual as the output's shape.
      if (conv_->spec().sumResidual && ctx.inputDesc(residualInput_).dims != out.dims)
        throw std::invalid_argument("conv: the residual's dims differ from the output's");
      out.layout = layoutOf(conv_->spec().dstFormat);
      ctx.requestScratch(conv_->prepare(in));
      ctx.setOutput(0, std::move(out));
    });
  }

  Status run(runtime::RunContext& ctx) const override {
    return guarded(ctx, [&] {
      const void* residual = conv_->spec().sumResidual ? ctx.input(residualInput_).raw() : nullptr;
      conv_->execute(ctx.input(srcInput_).dims(), ctx.input(srcInput_).raw(), residual,
                     ctx.output(0).raw(), ctx.scratch().data());
    });
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  // The core prepares lazily per shape from the const resize(); its cache
  // is internally synchronized.
  std::unique_ptr<FusedConv> conv_;
  size_t srcInput_ = kNone;
  size_t residualInput_ = kNone;
};

// The fusion ablation of the benchmark: $SUBGRAPH_ONEDNN_FUSION limits the
// family to bare convs ("none"), BN folding ("bn"), BN and activation
// ("act"); unset or "all" fuses everything.
bool fusionAllowed(bool bn, bool add, bool act) {
  const char* env = std::getenv("SUBGRAPH_ONEDNN_FUSION");
  std::string level = env ? env : "all";
  if (level == "none") return !bn && !add && !act;
  if (level == "bn") return !add && !act;
  if (level == "act") return !add;
  return true;
}

}  // namespace

std::vector<std::pair<std::string, partition::PropertyFactory>> convProperties() {
  std::vector<std::pair<std::string, partition::PropertyFactory>> out;
  // Longest chains first: each property is a full pass, and a shorter one
  // must not take the Conv a longer one would have fused further.
  // A decomposed HardSwish comes before a single activation: conv_act
  // would take the HardSigmoid alone only if the Mul were not there, but
  // the shorter conv (or conv_bn) would stop before both.
  for (int bn : {1, 0})
    for (int add : {1, 0})
      for (Tail tail : {Tail::kHardSwish, Tail::kActivation, Tail::kNone}) {
        if (!fusionAllowed(bn, add, tail != Tail::kNone)) continue;
        std::string name = std::string("conv") + (bn ? "_bn" : "") + (add ? "_add" : "") +
                           (tail == Tail::kActivation  ? "_act"
                            : tail == Tail::kHardSwish ? "_hswish"
                                                       : "");
        out.emplace_back(name, [name, bn, add, tail] { return makeProperty(name, bn, add, tail); });
      }
  return out;
}

runtime::KernelCreator convKernelCreator() { return creatorOf<ConvRegionKernel>(); }

}  // namespace subgraph::onednn
