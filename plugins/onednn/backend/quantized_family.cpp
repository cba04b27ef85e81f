//===- plugins/onednn/backend/quantized_family.cpp - Dynamically quantized regions -===//
//
// The dynamically quantized family; see quantized_family.h. The region is
//
//   x -> DynamicQuantizeLinear -> q, s, z
//   ConvInteger(q, W, z, zw) | MatMulInteger(q, W, z, zw) -> Cast(float)
//   Mul(Cast, Mul(s, sw)) [-> Add(bias)] [-> Relu | LeakyRelu | Clip | Max | Min]
//
// with W, zw, sw and the bias constants. What must not fuse, and why:
//  * a quantized x, scale or zero point read by anything else (the region
//    would have to emit it);
//  * a conv with groups, auto_pad, or neither 1-D nor 2-D (the kernel's
//    im2col is for one group with explicit pads);
//  * Sigmoid, Tanh and other activations whose float result depends on the
//    implementation: the next layer quantizes this output again, and a
//    one-ulp difference there moves a value to another level;
//  * a CPU without VNNI, where oneDNN's u8 x s8 product saturates.
// Scales and biases must vary only along the output channels; the kernel
// declines others (the region then runs on the reference backend).
//
//===----------------------------------------------------------------------===//
#include "quantized_family.h"

#include <string>

#include "quantized_gemm.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

bool isInteger8(sdk::DataType t) { return t == sdk::DataType::kUInt8 || t == sdk::DataType::kInt8; }

// The integer product: constant int8/uint8 weights (and weight zero point,
// if any) on a CPU where the int8 GEMM is exact; a conv also needs one
// group, explicit pads, and a 1-D or 2-D kernel.
sdk::OpPattern integerOpPattern(bool conv) {
  sdk::OpPattern m(conv ? "ConvInteger" : "MatMulInteger");
  m.constantInput(1).oneUse().where([conv](const sdk::NodeView& n) {
    if (!hasExactInt8Gemm())
      return sdk::Decision::no("this CPU has no VNNI: oneDNN's int8 GEMM would saturate");
    sdk::ValueView w = n.input(1);
    if (!isInteger8(w.dtype())) return sdk::Decision::no("the weights are not 8-bit integers");
    if (n.numInputs() > 3 && n.input(3) && !isConstant(n.input(3)))
      return sdk::Decision::no("the weights' zero point is not a constant");
    if (!n.input(0) || n.input(0).dtype() != sdk::DataType::kUInt8)
      return sdk::Decision::no("the input is not uint8");
    if (!conv)
      return w.rank() == 2 ? sdk::Decision::yes() : sdk::Decision::no("the weights are not 2-D");
    std::optional<int32_t> rank = w.rank();
    if (!rank || (*rank != 3 && *rank != 4) || n.output(0).rank() != rank)
      return sdk::Decision::no("the conv is neither 1-D nor 2-D");
    if (n.attrInt("group", 1) != 1) return sdk::Decision::no("the conv has groups");
    if (n.attrString("auto_pad", "NOTSET") != "NOTSET")
      return sdk::Decision::no("the conv uses auto_pad");
    return sdk::Decision::yes();
  });
  return m;
}

sdk::OpPattern castToFloatPattern() {
  sdk::OpPattern m("Cast");
  m.oneUse().where([](const sdk::NodeView& n) {
    constexpr int64_t kOnnxFloat = 1;  // TensorProto.FLOAT
    return n.attrInt("to", 0) == kOnnxFloat ? sdk::Decision::yes()
                                            : sdk::Decision::no("the Cast is not to float");
  });
  return m;
}

// A Mul or Add with an f32 constant operand (the weights' scale, the bias).
sdk::OpPattern withConstant(const char* op) {
  sdk::OpPattern m(op);
  m.where([](const sdk::NodeView& n) {
    for (size_t i = 0; i < n.numInputs(); ++i)
      if (isConstant(n.input(i)) && n.input(i).dtype() == sdk::DataType::kFloat32)
        return sdk::Decision::yes();
    return sdk::Decision::no("no operand is an f32 constant");
  });
  return m;
}

sdk::OpPattern exactActivationPattern() {
  sdk::OpPattern m(activationOps());
  m.where([](const sdk::NodeView& n) {
    std::optional<Activation> a = activationOf(n);
    if (!a) return sdk::Decision::no("activation parameters are not f32 scalar constants");
    if (!isExactActivation(*a))
      return sdk::Decision::no(a->describe() + " is not computed exactly as the reference does");
    return sdk::Decision::yes();
  });
  return m;
}

// The region: see the file comment. The bias Add and the activation are
// optional steps, taken when there; only the variant's last node may have
// other readers.
std::unique_ptr<sdk::SubgraphProperty> makeProperty(bool conv) {
  std::string name = std::string("int8_") + (conv ? "conv" : "matmul");
  sdk::Pattern p(name);
  size_t integer = p.add(integerOpPattern(conv));
  size_t quantize = p.add(sdk::OpPattern("DynamicQuantizeLinear").oneUse());
  p.connect(quantize, integer, 0, 0).connect(quantize, integer, 2, 2);
  size_t cast = p.add(castToFloatPattern());
  p.connect(integer, cast, 0);
  size_t scales = p.add(withConstant("Mul").oneUse());
  p.connect(quantize, scales, sdk::Pattern::kAnyInput, 1);
  size_t scaled = p.add(sdk::OpPattern("Mul").onlyFeedsNext());
  p.connect(cast, scaled).connect(scales, scaled);
  size_t bias = p.add(withConstant("Add").optional().onlyFeedsNext());
  p.connect(scaled, bias);
  size_t act = p.add(exactActivationPattern().optional());
  p.connect(bias, act);
  return std::make_unique<sdk::PatternProperty>(name, std::move(p));
}

// The operand of binary `n` that is not `from`.
sdk::ValueView otherInput(const sdk::NodeView& n, const sdk::ValueView& from) {
  return n.input(0) == from ? n.input(1) : n.input(0);
}

// A constant that broadcasts against an output of rank `rank` along the
// channel axis only: one element, or `channels` of them.
std::vector<float> perChannel(const sdk::ValueView& v, size_t rank, size_t channelAxis,
                              int64_t channels, const std::string& what) {
  std::vector<int64_t> d = v.dims();
  if (!v.hasStaticShape() || d.size() > rank)
    throw Unsupported(what + " has a rank above the output's");
  for (size_t i = 0; i < d.size(); ++i) {
    size_t axis = rank - d.size() + i;
    if (d[i] != 1 && !(axis == channelAxis && d[i] == channels))
      throw Unsupported(what + " varies along another axis than the output channels");
  }
  return floatsOf(v);
}

// The weights' zero points as int32: {0} when absent.
std::vector<int32_t> zeroPoints(const sdk::NodeView& integer) {
  if (integer.numInputs() < 4 || !integer.input(3)) return {0};
  sdk::ValueView z = integer.input(3);
  std::vector<int32_t> out;
  if (z.dtype() == sdk::DataType::kInt8)
    for (int8_t v : z.constantData<int8_t>()) out.push_back(v);
  else if (z.dtype() == sdk::DataType::kUInt8)
    for (uint8_t v : z.constantData<uint8_t>()) out.push_back(v);
  else
    throw Unsupported("the weights' zero point is not 8-bit");
  return out;
}

// The product's geometry and weights: conv weights [M, C, (kH,) kW], or
// MatMul's [K, N].
QuantizedGemmSpec productSpec(const sdk::NodeView& integer, bool conv) {
  QuantizedGemmSpec spec;
  spec.conv = conv;
  sdk::ValueView w = integer.input(1);
  std::vector<int64_t> d = w.dims();
  const bool isSigned = w.dtype() == sdk::DataType::kInt8;
  if (!conv) {
    spec.weights = quantizedWeights(w.constantBytes(), isSigned, d[0], d[1], false,
                                    zeroPoints(integer), false);
    return spec;
  }
  const bool oneD = d.size() == 3;
  if (oneD) d.insert(d.begin() + 2, 1);
  spec.inChannels = d[1];
  spec.kernel = {d[2], d[3]};
  spec.weights = quantizedWeights(w.constantBytes(), isSigned, d[1] * d[2] * d[3], d[0], true,
                                  zeroPoints(integer), true);
  const ConvGeometry g = convGeometryOf(integer, oneD);
  spec.strides = g.strides;
  spec.dilations = g.dilations;
  spec.pads = g.pads;
  return spec;
}

// A 1-D conv's input as 2-D; a matmul's unchanged.
std::vector<int64_t> kernelDims(std::span<const int64_t> dims, bool oneD) {
  return oneD ? as2d(dims) : std::vector<int64_t>(dims.begin(), dims.end());
}

class QuantizedRegionKernel final : public RegionKernel {
 public:
  QuantizedRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    std::optional<sdk::NodeView> integer = body.find("ConvInteger");
    const bool conv = integer.has_value();
    if (!conv) integer = body.find("MatMulInteger");
    std::optional<sdk::NodeView> quantize = body.find("DynamicQuantizeLinear");
    if (!integer || !quantize) throw Unsupported("not a dynamically quantized product");
    QuantizedGemmSpec spec = productSpec(*integer, conv);
    oneD_ = conv && integer->input(1).dims().size() == 3;
    input_ = body.inputIndex(quantize->input(0));
    readEpilogue(body, *integer, *quantize, spec);
    gemm_ = std::make_unique<QuantizedGemm>(std::move(spec));
  }

  double workOf(std::span<const std::span<const int64_t>> dims) const override {
    const QuantizedGemmSpec& s = gemm_->spec();
    if (!s.conv) return elementsOf(dims[input_]) * static_cast<double>(s.weights.n);
    // Each input element meets n * kH * kW weights per output it falls
    // under (1 / stride of them).
    return elementsOf(dims[input_]) * static_cast<double>(s.weights.n * s.kernel[0] * s.kernel[1]) /
           static_cast<double>(s.strides[0] * s.strides[1]);
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      const std::vector<int64_t>& in = inputs[input_].dims;
      if (oneD_ && in.size() != 3)
        throw std::invalid_argument("quantized conv: the input's rank does not match the weights'");
      std::vector<int64_t> out = gemm_->outputDims(kernelDims(in, oneD_));
      if (oneD_) out.erase(out.begin() + 2);
      return std::vector<sdk::Shape>{{sdk::DataType::kFloat32, std::move(out)}};
    });
  }

  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs,
                   [&] { return gemm_->scratchBytes(kernelDims(inputs[input_].dims, oneD_)); });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte> scratch) override {
    guarded(inputs, [&] {
      const sdk::Tensor& x = inputs[input_];
      gemm_->execute(kernelDims(x.dims(), oneD_), x.data<float>(), outputs[0].data<float>(),
                     scratch.data());
    });
  }

 private:
  // The weights' scale (the Mul that reads the quantizer's scale), the bias
  // and the activations after the Cast; the selector has guaranteed the
  // chain, the kernel checks the constants' shapes.
  void readEpilogue(const RegionBody& body, const sdk::NodeView& integer,
                    const sdk::NodeView& quantize, QuantizedGemmSpec& spec) const {
    const size_t rank = static_cast<size_t>(integer.output(0).rank().value_or(0));
    const size_t channelAxis = spec.conv ? 1 : rank - 1;
    auto channels = [&](const sdk::ValueView& v, const std::string& what) {
      return perChannel(v, rank, channelAxis, spec.weights.n, what);
    };
    std::optional<sdk::ValueView> last;
    for (const sdk::NodeView& n : body.nodes()) {
      if (n == integer || n == quantize || n.is("Cast")) continue;
      if (n.is("Mul") && (n.input(0) == quantize.output(1) || n.input(1) == quantize.output(1))) {
        spec.weightScale = channels(otherInput(n, quantize.output(1)), "the weights' scale");
      } else if (n.is("Mul")) {
        last = n.output(0);
      } else if (n.is("Add") && last) {
        spec.bias = channels(otherInput(n, *last), "the bias");
        last = n.output(0);
      } else if (std::optional<Activation> a = activationOf(n); a && isExactActivation(*a)) {
        spec.activations.push_back(*a);
      } else {
        throw Unsupported("unexpected " + n.opType() + " in a quantized region");
      }
    }
    if (spec.weightScale.empty()) throw Unsupported("no scale for the weights");
  }

  std::unique_ptr<QuantizedGemm> gemm_;
  size_t input_ = 0;
  bool oneD_ = false;
};

}  // namespace

Family quantizedFamily() {
  Family family;
  family.properties.push_back(makeProperty(true));
  family.properties.push_back(makeProperty(false));
  family.creator = creatorOf<QuantizedRegionKernel>();
  return family;
}

}  // namespace subgraph::onednn
