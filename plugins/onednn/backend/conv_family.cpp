//===- plugins/onednn/backend/conv_family.cpp - Conv/BN/sum/activation regions -===//
//
// The convolution family; see conv_family.h. What must not fuse, and why:
//  * BatchNormalization whose parameters are not constants (nothing to
//    fold at session start);
//  * a value read twice inside the chain (a Conv or BN output that also
//    feeds something else): the region would have to emit it too;
//  * an Add that broadcasts: `sum` adds a tensor of the output's shape;
//  * convs that are neither 1-D nor 2-D, or use auto_pad: the kernel is
//    NCHW-only and reads explicit pads.
// A 1-D conv (input [N, C, L], as audio models and STFTs written as Conv
// have) runs as a 2-D one over [N, C, 1, L], which is the same bytes in
// plain layout; its activations stay plain (the plugin's blocked layouts
// hold 4-D tensors only).
// Exporters without a HardSwish op (ONNX before opset 14, hence every
// torch.onnx.export at opset 13) write hardswish as x * HardSigmoid(x)
// with alpha 1/6 and beta 1/2; the `conv_hswish` property takes that pair
// as one HardSwish post-op. There the value before it is read twice, by
// the HardSigmoid and the Mul, and by nothing else.
//
//===----------------------------------------------------------------------===//
#include "conv_family.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "fused_conv.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

// The step patterns say what each op must be; addStep() makes a step
// optional and lets only the next step read it.
sdk::OpPattern convPattern() { return convLikePattern("Conv", {3, 4}); }

sdk::OpPattern addPattern() {
  sdk::OpPattern m("Add");
  m.where(predicates::sameShapes());
  return m;
}

// x * HardSigmoid(x) is HardSwish when the gate is exactly max(0, min(1,
// x / 6 + 1 / 2)); exporters write alpha as the float nearest 1/6.
bool isHardSwishGate(const sdk::NodeView& n) {
  return n.is("HardSigmoid") && std::fabs(n.attrFloat("alpha", 0.2f) - 1.0f / 6.0f) <= 1e-6f &&
         std::fabs(n.attrFloat("beta", 0.5f) - 0.5f) <= 1e-6f;
}

sdk::OpPattern hardSwishGatePattern() {
  sdk::OpPattern m("HardSigmoid");
  m.where([](const sdk::NodeView& n) {
     if (!isHardSwishGate(n))
       return sdk::Decision::no("alpha and beta are not 1/6 and 1/2 (not a HardSwish)");
     return sdk::Decision::yes();
   }).oneUse();
  return m;
}

// What may follow the optional steps: up to two activations (tf2onnx
// writes Max(LeakyRelu(x), c), both of which are eltwise post-ops), or a
// decomposed HardSwish.
enum class Tail { kActivations, kHardSwish };

// Which optional steps the family offers (the benchmark's fusion
// ablation, $SUBGRAPH_ONEDNN_FUSION, turns some off).
struct Steps {
  bool bn = true;
  bool add = true;
  bool act = true;
};

// Adds `m` as an optional step reading `prev` (through input `input`) and
// returns its index. Every step only feeds the next one unless it ends
// the region: the fused kernel emits its last value only.
size_t addStep(sdk::Pattern& pattern, size_t prev, sdk::OpPattern m,
               int32_t input = sdk::Pattern::kAnyInput) {
  size_t node = pattern.add(std::move(m.optional().onlyFeedsNext()));
  pattern.connect(prev, node, input);
  return node;
}

// Conv -> [BN] -> [Add], then the tail. A skipped step passes its input
// through, so one pattern covers each variant (Conv+Relu, Conv+BN+Add,
// ...); the match takes every step that is there, BN first, then Add,
// then the activations, which is the order the family's longest-first
// properties had when there was one per variant.
std::unique_ptr<sdk::SubgraphProperty> makeProperty(const std::string& name, Steps steps,
                                                    Tail tail) {
  sdk::Pattern pattern(name);
  size_t prev = pattern.add(convPattern().onlyFeedsNext());
  if (steps.bn) prev = addStep(pattern, prev, foldableBatchNormPattern(), 0);
  if (steps.add) prev = addStep(pattern, prev, addPattern());
  if (tail == Tail::kActivations && steps.act) {
    // Any input: Max(c, x) reads the chain through input 1. An
    // activation's other inputs are constants, so the chain cannot be one
    // of them.
    prev = addStep(pattern, prev, activationPattern());
    addStep(pattern, prev, activationPattern());
  }
  if (tail == Tail::kHardSwish) {
    // The value before the gate is read by the gate and the Mul, both in
    // the match, and by nothing else (onlyFeedsNext on the steps).
    size_t gate = pattern.add(hardSwishGatePattern());
    pattern.connect(prev, gate, 0);
    size_t mul = pattern.add(sdk::OpPattern("Mul"));
    pattern.connect(prev, mul).connect(gate, mul);
  }
  // Folding BN statistics into weights is valid for inference only.
  return std::make_unique<sdk::PatternProperty>(name, std::move(pattern),
                                                sdk::PropertyOptions{.inferenceOnly = steps.bn});
}

// The Conv's geometry and constants as a 2-D spec; a 1-D conv gets H = 1
// (kernel 1, stride 1, dilation 1, no pads on H).
ConvSpec convSpecOf(const sdk::NodeView& conv, bool& oneD) {
  ConvSpec spec;
  std::vector<int64_t> w = conv.input(1).dims();
  if (w.size() != 3 && w.size() != 4) throw Unsupported("the conv is neither 1-D nor 2-D");
  oneD = w.size() == 3;
  if (oneD) w.insert(w.begin() + 2, 1);
  spec.outChannels = w[0];
  spec.groups = conv.attrInt("group", 1);
  spec.inChannels = w[1] * spec.groups;
  spec.kernel = {w[2], w[3]};
  spec.weights = floatsOf(conv.input(1));
  if (conv.numInputs() > 2 && conv.input(2)) spec.bias = floatsOf(conv.input(2));
  const ConvGeometry g = convGeometryOf(conv, oneD);
  spec.strides = g.strides;
  spec.dilations = g.dilations;
  spec.pads = g.pads;
  return spec;
}

// Reads a conv-family body into a spec; see the file comment for what the
// selector has already guaranteed.
class ConvRegionKernel final : public RegionKernel {
 public:
  ConvRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    std::optional<sdk::NodeView> conv = body.find("Conv");
    if (!conv) throw Unsupported("no Conv in the region");
    ConvSpec spec = convSpecOf(*conv, oneD_);
    srcInput_ = body.inputIndex(conv->input(0));
    readPostOps(body, *conv, spec);
    Format blocked = oneD_ ? Format::kPlain : blockedFormat(region, context);
    // The stem (few input channels) reads plain NCHW: oneDNN has direct
    // kernels for it, and blocking 3 channels to 16 would waste 5x work.
    bool plainSrc = spec.groups == 1 && spec.inChannels < 16 && blocked == Format::kBlocked16;
    // x + conv(x) reads one region input as both source and residual, and
    // the residual must be in the output's layout.
    if (spec.sumResidual && residualInput_ == srcInput_) plainSrc = false;
    spec.srcFormat = plainSrc ? Format::kPlain : blocked;
    spec.dstFormat = blocked;
    spec.winograd = winogradAllowed(context);
    conv_ = std::make_unique<FusedConv>(std::move(spec));
  }

  // Each source element meets (outChannels / groups) * kH * kW weights,
  // once per output position it falls under (1 / stride of them).
  double workOf(std::span<const std::span<const int64_t>> dims) const override {
    const ConvSpec& s = conv_->spec();
    double perElement = static_cast<double>(s.outChannels / s.groups * s.kernel[0] * s.kernel[1]) /
                        static_cast<double>(s.strides[0] * s.strides[1]);
    return elementsOf(dims[srcInput_]) * perElement;
  }

  const sdk::Layout* inputLayout(size_t i) const override {
    if (i == srcInput_) return layoutOf(conv_->spec().srcFormat);
    if (i == residualInput_) return layoutOf(conv_->spec().dstFormat);
    return nullptr;
  }
  const sdk::Layout* outputLayout(size_t) const override {
    return layoutOf(conv_->spec().dstFormat);
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      const std::vector<int64_t>& in = inputs[srcInput_].dims;
      if (in.size() != (oneD_ ? 3u : 4u))
        throw std::invalid_argument("conv: the input's rank does not match the weights'");
      std::vector<int64_t> out = conv_->outputDims(as2d(in));
      if (oneD_) out.erase(out.begin() + 2);
      // The partitioner matched the Add on equal (possibly symbolic)
      // shapes; the sum post-op reads the residual as the output's shape.
      if (conv_->spec().sumResidual && inputs[residualInput_].dims != out)
        throw std::invalid_argument("conv: the residual's dims differ from the output's");
      return std::vector<sdk::Shape>{{sdk::DataType::kFloat32, std::move(out)}};
    });
  }

  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      std::vector<int64_t> dims = as2d(inputs[srcInput_].dims);
      size_t bytes = conv_->prepare(dims);
      warnIfReference(dims);
      return bytes;
    });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte> scratch) override {
    guarded(inputs, [&] {
      const void* residual = conv_->spec().sumResidual ? inputs[residualInput_].raw() : nullptr;
      const sdk::Tensor& src = inputs[srcInput_];
      if (oneD_) {
        std::span<const int64_t> d = src.dims();
        const std::array<int64_t, 4> dims{d[0], d[1], 1, d[2]};
        conv_->execute(dims, src.raw(), residual, outputs[0].raw(), scratch.data());
      } else {
        conv_->execute(src.dims(), src.raw(), residual, outputs[0].raw(), scratch.data());
      }
    });
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  // The core moves a conv off oneDNN's reference loops wherever another
  // layout allows; where none does, the run is 100x slower than it should
  // be, and the plugin ABI has no channel to the host's log or profile, so
  // it says so on stderr once per shape.
  void warnIfReference(std::span<const int64_t> dims) const {
    std::string impl = conv_->implementation(dims);
    if (!impl.starts_with("ref")) return;
    std::string shape;
    for (int64_t d : dims) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    std::fprintf(stderr,
                 "subgraph: warning: onednn: a convolution over [%s] runs oneDNN's reference "
                 "implementation (%s)\n",
                 shape.c_str(), impl.c_str());
  }

  // The steps after the Conv, in body order: BN folded into `spec`, the
  // residual Add, activations and decomposed HardSwish pairs.
  void readPostOps(const RegionBody& body, const sdk::NodeView& conv, ConvSpec& spec) {
    sdk::ValueView last = conv.output(0);
    std::optional<sdk::NodeView> gate;  // a HardSwish gate waiting for its Mul
    for (const sdk::NodeView& n : body.nodes()) {
      if (n == conv) continue;
      if (gate) {
        if (!n.is("Mul") || !(n.input(0) == last || n.input(1) == last) ||
            !(n.input(0) == gate->output(0) || n.input(1) == gate->output(0)))
          throw Unsupported("a HardSigmoid gate is not followed by its Mul");
        spec.activations.push_back(Activation{Activation::Kind::kHardSwish});
        gate.reset();
      } else if (isHardSwishGate(n) && numUses(n.output(0)) == 1 &&
                 n.output(0).consumers()[0].is("Mul")) {
        gate = n;
        continue;  // `last` stays the gate's input, the Mul's other operand
      } else if (n.is("BatchNormalization")) {
        foldBatchNorm(spec, floatsOf(n.input(1)), floatsOf(n.input(2)), floatsOf(n.input(3)),
                      floatsOf(n.input(4)), n.attrFloat("epsilon", 1e-5f));
      } else if (n.is("Add")) {
        sdk::ValueView other = n.input(0) == last ? n.input(1) : n.input(0);
        if (!body.isInput(other)) throw Unsupported("the Add's residual is not a region input");
        spec.sumResidual = true;
        residualInput_ = body.inputIndex(other);
      } else if (std::optional<Activation> a = activationOf(n)) {
        spec.activations.push_back(*a);
      } else {
        throw Unsupported("unexpected " + n.opType() + " in a conv region");
      }
      last = n.output(0);
    }
    if (gate) throw Unsupported("a HardSigmoid gate without its Mul");
  }

  // The core prepares lazily per shape; its cache is internally
  // synchronized.
  std::unique_ptr<FusedConv> conv_;
  bool oneD_ = false;
  size_t srcInput_ = kNone;
  size_t residualInput_ = kNone;
};

// The fusion ablation of the benchmark, plugin option `fusion`: bare convs
// ("none"), BN folding ("bn"), BN and activation ("act"); "all" (the
// default) fuses everything.
Steps allowedSteps(const std::string& level) {
  if (level == "none") return {.bn = false, .add = false, .act = false};
  if (level == "bn") return {.bn = true, .add = false, .act = false};
  if (level == "act") return {.bn = true, .add = false, .act = true};
  return {};
}

}  // namespace

Family convFamily(const sdk::KernelContext& session) {
  Family family;
  // Two properties, each one pattern with optional steps (the report's
  // region variant says which steps a region took). A decomposed
  // HardSwish comes first: its value before the gate has two readers, so
  // `conv` would stop before both and leave the pair.
  const Steps steps = allowedSteps(session.option("fusion", "all"));
  if (steps.act) family.properties.push_back(makeProperty("conv_hswish", steps, Tail::kHardSwish));
  family.properties.push_back(makeProperty("conv", steps, Tail::kActivations));
  family.creator = creatorOf<ConvRegionKernel>();
  return family;
}

}  // namespace subgraph::onednn
