//===- plugins/onednn/kernels/deconvolution.cpp - ConvTranspose + eltwise -===//
//
// The cached oneDNN deconvolution; see deconvolution.h. ONNX stores
// ConvTranspose weights input-channel first ([C_in, C_out/g, kH, kW]);
// oneDNN names that layout iohw (giohw with groups), so the user weights
// are described, not transposed, and one reorder brings them to the
// primitive's layout.
//
//===----------------------------------------------------------------------===//
#include "deconvolution.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "dnnl_context.h"

namespace subgraph::onednn {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct Deconvolution::Prepared {
  dnnl::deconvolution_forward primitive;
  dnnl::memory::desc srcDesc, dstDesc, scratchDesc;
  dnnl::memory weights, bias;
  size_t scratchBytes = 0;
};

void foldBatchNorm(DeconvSpec& spec, std::span<const float> scale, std::span<const float> shift,
                   std::span<const float> mean, std::span<const float> var, float epsilon) {
  const auto out = static_cast<size_t>(spec.outChannels);
  const auto in = static_cast<size_t>(spec.inChannels);
  const auto groups = static_cast<size_t>(spec.groups);
  if (scale.size() != out || shift.size() != out || mean.size() != out || var.size() != out)
    throw std::invalid_argument(fmt::format(
        "BatchNormalization parameters must have {} elements (one per output channel)", out));
  if (groups == 0 || in % groups != 0 || out % groups != 0 ||
      spec.weights.size() != in * (out / groups) * static_cast<size_t>(spec.kernel[0]) *
                                 static_cast<size_t>(spec.kernel[1]))
    throw std::invalid_argument("the weights do not match the deconvolution's channels");
  // Fold in double, as for convolutions: the factor multiplies every
  // weight of its output channel.
  std::vector<double> factor(out);
  for (size_t o = 0; o < out; ++o)
    factor[o] = scale[o] / std::sqrt(static_cast<double>(var[o]) + epsilon);
  // ONNX ConvTranspose weights are [in, out / groups, kH, kW]: the output
  // channel of weight (i, j) is j in the group of input channel i.
  const size_t inPerGroup = in / groups, outPerGroup = out / groups;
  const auto taps = static_cast<size_t>(spec.kernel[0] * spec.kernel[1]);
  for (size_t i = 0; i < in; ++i)
    for (size_t j = 0; j < outPerGroup; ++j) {
      const double f = factor[(i / inPerGroup) * outPerGroup + j];
      float* w = spec.weights.data() + (i * outPerGroup + j) * taps;
      for (size_t t = 0; t < taps; ++t) w[t] = static_cast<float>(w[t] * f);
    }
  if (spec.bias.empty()) spec.bias.assign(out, 0.0f);
  for (size_t o = 0; o < out; ++o)
    spec.bias[o] = static_cast<float>((spec.bias[o] - mean[o]) * factor[o] + shift[o]);
}

Deconvolution::Deconvolution(DeconvSpec spec) : spec_(std::move(spec)) {
  const DeconvSpec& s = spec_;
  if (s.inChannels < 1 || s.outChannels < 1 || s.groups < 1 || s.inChannels % s.groups != 0 ||
      s.outChannels % s.groups != 0)
    throw std::invalid_argument(
        fmt::format("conv transpose: {} input and {} output channels do not split into {} groups",
                    s.inChannels, s.outChannels, s.groups));
  size_t expected =
      static_cast<size_t>(s.inChannels * (s.outChannels / s.groups) * s.kernel[0] * s.kernel[1]);
  if (s.weights.size() != expected)
    throw std::invalid_argument(fmt::format("conv transpose: weights have {} elements, expected {}",
                                            s.weights.size(), expected));
  if (!s.bias.empty() && s.bias.size() != static_cast<size_t>(s.outChannels))
    throw std::invalid_argument("conv transpose: bias must have one element per output channel");
  for (int i = 0; i < 2; ++i) {
    if (s.kernel[i] < 1 || s.strides[i] < 1 || s.dilations[i] < 1)
      throw std::invalid_argument("conv transpose: kernel, strides and dilations must be positive");
    if (s.outputPadding[i] < 0 || s.outputPadding[i] > s.pads[2 + i])
      throw std::invalid_argument(
          "conv transpose: output_padding must be between 0 and the end pad");
  }
  for (int64_t p : s.pads)
    if (p < 0) throw std::invalid_argument("conv transpose: pads must not be negative");
}

Deconvolution::~Deconvolution() = default;

std::vector<int64_t> Deconvolution::outputDims(std::span<const int64_t> in) const {
  if (in.size() != 4)
    throw std::invalid_argument(
        fmt::format("conv transpose: input has rank {}, expected 4", in.size()));
  if (in[1] != spec_.inChannels)
    throw std::invalid_argument(
        fmt::format("conv transpose: input has {} channels, expected {}", in[1], spec_.inChannels));
  std::vector<int64_t> out{in[0], spec_.outChannels, 0, 0};
  for (size_t i = 0; i < 2; ++i) {
    int64_t extent = spec_.dilations[i] * (spec_.kernel[i] - 1) + 1;
    out[2 + i] = spec_.strides[i] * (in[2 + i] - 1) + spec_.outputPadding[i] + extent -
                 spec_.pads[i] - spec_.pads[2 + i];
    if (out[2 + i] < 1) throw std::invalid_argument("conv transpose: the output would be empty");
  }
  return out;
}

size_t Deconvolution::prepare(std::span<const int64_t> in) {
  std::vector<int64_t> key(in.begin(), in.end());
  if (auto p = cache_.find(key)) return p->scratchBytes;
  const DeconvSpec& s = spec_;
  auto p = std::make_shared<Prepared>();
  std::vector<int64_t> out = outputDims(in);
  p->srcDesc = formatDesc(in, s.format);
  p->dstDesc = formatDesc(out, s.format);
  bool bf16 = s.format == Format::kNhwcBf16;

  dnnl::memory::dims weightDims =
      groupedWeightDims(s.groups, s.outChannels, s.inChannels, s.kernel[0], s.kernel[1]);
  tag userTag = s.groups == 1 ? tag::iohw : tag::giohw;
  dnnl::memory::desc anyWeights(weightDims, bf16 ? dt::bf16 : dt::f32, tag::any);
  dnnl::memory::desc biasDesc({s.outChannels}, dt::f32, tag::a);
  dnnl::memory::dims strides{s.strides[0], s.strides[1]};
  dnnl::memory::dims dilations{s.dilations[0] - 1, s.dilations[1] - 1};
  dnnl::memory::dims padL{s.pads[0], s.pads[1]};
  // output_padding adds rows at the end: the same as that much less end
  // padding (the constructor keeps it no larger than the pad).
  dnnl::memory::dims padR{s.pads[2] - s.outputPadding[0], s.pads[3] - s.outputPadding[1]};

  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  // Only those oneDNN applies to NaN as ONNX does; execute() applies the
  // rest (activation.h).
  for (size_t i = 0; i < exactPostOps(s.activations); ++i) appendEltwise(ops, s.activations[i]);
  attr.set_post_ops(ops);
  dnnl::deconvolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, p->srcDesc,
      anyWeights, biasDesc, p->dstDesc, strides, dilations, padL, padR);
  dnnl::deconvolution_forward::primitive_desc pd(desc, attr, cpuEngine());
  p->primitive = dnnl::deconvolution_forward(pd);
  p->scratchDesc = pd.scratchpad_desc();
  p->scratchBytes = p->scratchDesc.get_size();

  p->weights = reorderedWeights(dnnl::memory::desc(weightDims, dt::f32, userTag), s.weights.data(),
                                pd.weights_desc());
  p->bias = biasMemory(s.bias, s.outChannels);
  return cache_.insert(key, std::move(p))->scratchBytes;
}

void Deconvolution::execute(std::span<const int64_t> in, const void* src, void* dst,
                            void* scratch) const {
  std::shared_ptr<const Prepared> p =
      cache_.get(std::vector<int64_t>(in.begin(), in.end()), "conv transpose");
  dnnl::engine& engine = cpuEngine();
  dnnl::memory srcMem(p->srcDesc, engine, const_cast<void*>(src));
  dnnl::memory dstMem(p->dstDesc, engine, dst);
  dnnl::memory scratchMem(p->scratchDesc, engine, scratch);
  dnnl::stream& stream = threadStream();
  p->primitive.execute(stream, {{DNNL_ARG_SRC, srcMem},
                                {DNNL_ARG_WEIGHTS, p->weights},
                                {DNNL_ARG_BIAS, p->bias},
                                {DNNL_ARG_DST, dstMem},
                                {DNNL_ARG_SCRATCHPAD, scratchMem}});
  stream.wait();
  const std::span<const Activation> acts = spec_.activations;
  applyOnHost(acts.subspan(exactPostOps(acts)), outputDims(in), spec_.format, dst);
}

}  // namespace subgraph::onednn
