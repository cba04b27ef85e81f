//===- plugins/onednn/kernels/fused_conv.cpp - Conv + BN + sum + eltwise -===//
//
// BatchNormalization folding and the cached oneDNN convolution with sum and
// eltwise post-ops; see fused_conv.h.
//
//===----------------------------------------------------------------------===//
#include "fused_conv.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "dnnl_context.h"
#include "fused_matmul.h"

namespace subgraph::onednn {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

void foldBatchNorm(ConvSpec& spec, std::span<const float> scale, std::span<const float> shift,
                   std::span<const float> mean, std::span<const float> var, float epsilon) {
  auto out = static_cast<size_t>(spec.outChannels);
  if (scale.size() != out || shift.size() != out || mean.size() != out || var.size() != out)
    throw std::invalid_argument(
        fmt::format("BatchNormalization parameters must have {} elements (one per filter)", out));
  if (spec.bias.empty()) spec.bias.assign(out, 0.0f);
  size_t perFilter = spec.weights.size() / out;
  for (size_t o = 0; o < out; ++o) {
    // Fold in double: the factor multiplies every weight of the filter, and
    // the reference computes BN separately, so rounding here shows up.
    double factor = scale[o] / std::sqrt(static_cast<double>(var[o]) + epsilon);
    for (size_t i = 0; i < perFilter; ++i) {
      float& w = spec.weights[o * perFilter + i];
      w = static_cast<float>(w * factor);
    }
    spec.bias[o] = static_cast<float>((spec.bias[o] - mean[o]) * factor + shift[o]);
  }
}

bool winogradShape(const ConvSpec& spec) {
  return spec.kernel[0] == 3 && spec.kernel[1] == 3 && spec.strides[0] == 1 &&
         spec.strides[1] == 1 && spec.dilations[0] == 1 && spec.dilations[1] == 1 &&
         spec.groups == 1 && spec.dstFormat != Format::kNhwcBf16;
}

// Where the primitive reads and writes activations in layouts of its own
// (see chooseFormulation), the reorders that take the caller's source and
// residual in and the output back, through buffers in the scratch memory.
struct Relayout {
  dnnl::memory::desc convSrc;
  dnnl::memory::desc convDst;
  dnnl::reorder srcIn;
  dnnl::reorder residualIn;
  dnnl::reorder dstOut;
  size_t srcOffset = 0;
  size_t dstOffset = 0;
};

// A convolution run as its patches times its weights (see
// usePatchMatMul): the patches [pixels][k] and the product [pixels][out]
// in the scratch after the matmul's own.
struct PatchMatMul {
  std::unique_ptr<FusedMatMul> matmul;
  int64_t pixels = 0, k = 0;
  size_t colsOffset = 0, productOffset = 0;
};

struct FusedConv::Prepared {
  std::optional<PatchMatMul> patches;  // set: runs as patches x weights
  dnnl::convolution_forward primitive;
  dnnl::memory::desc srcDesc;
  dnnl::memory::desc dstDesc;
  dnnl::memory weights;
  dnnl::memory bias;
  std::vector<int64_t> outDims;
  size_t scratchBytes = 0;
  dnnl::memory::desc scratchDesc;
  std::string implementation;
  std::optional<Relayout> relayout;
};

namespace {

constexpr size_t kScratchAlign = 64;

size_t alignUp(size_t bytes) { return (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign; }

// oneDNN names its naive loops "ref:any" (and "ref:..." variants); they
// run 100x and more slower than the JIT kernels.
bool isReference(const dnnl::convolution_forward::primitive_desc& pd) {
  return std::string_view(pd.impl_info_str()).starts_with("ref");
}

// oneDNN's gemm-based convolution runs a grouped one as one small sgemm per
// group: a depthwise 1-D conv over 258 channels of 8 frames took 50-85 us
// for 10^4 multiply-adds, where a JIT depthwise kernel in a blocked layout
// takes a few.
bool isSlowFor(const ConvSpec& s, const dnnl::convolution_forward::primitive_desc& pd) {
  if (isReference(pd)) return true;
  return s.groups > 1 &&
         std::string_view(pd.impl_info_str()).find("gemm") != std::string_view::npos;
}

dnnl::reorder makeReorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  return dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), from, cpuEngine(), to));
}

// The patches beyond which the copy costs more than repacking saves.
constexpr size_t kMaxPatchBytes = size_t{8} << 20;

// oneDNN runs a convolution without a direct kernel for its shape (the 1-D
// convolutions of audio models: an STFT written as a conv over one channel
// with a 256- or 512-wide kernel, a 3-tap conv over a few frames) as an
// im2col and an sgemm that packs the weights again on every call, which is
// most of the run for these small problems. A matmul primitive takes the
// weights reordered once, so the plugin runs such a conv as its patches
// times its weights itself (plain layouts, one group, no residual).
bool usePatchMatMul(const ConvSpec& s, const dnnl::convolution_forward::primitive_desc& pd,
                    std::span<const int64_t> outDims) {
  if (std::string_view(pd.impl_info_str()).find("gemm") == std::string_view::npos) return false;
  if (s.groups != 1 || s.sumResidual || s.srcFormat != Format::kPlain ||
      s.dstFormat != Format::kPlain)
    return false;
  const auto patchBytes =
      static_cast<size_t>(outDims[2] * outDims[3] * s.inChannels * s.kernel[0] * s.kernel[1]) *
      sizeof(float);
  return patchBytes <= kMaxPatchBytes;
}

}  // namespace

FusedConv::FusedConv(ConvSpec spec) : spec_(std::move(spec)) {
  const ConvSpec& s = spec_;
  if (s.inChannels < 1 || s.outChannels < 1 || s.groups < 1 || s.inChannels % s.groups != 0 ||
      s.outChannels % s.groups != 0)
    throw std::invalid_argument(
        fmt::format("conv: {} input and {} output channels do not split "
                    "into {} groups",
                    s.inChannels, s.outChannels, s.groups));
  size_t expected =
      static_cast<size_t>(s.outChannels * (s.inChannels / s.groups) * s.kernel[0] * s.kernel[1]);
  if (s.weights.size() != expected)
    throw std::invalid_argument(
        fmt::format("conv: weights have {} elements, expected {}", s.weights.size(), expected));
  if (!s.bias.empty() && s.bias.size() != static_cast<size_t>(s.outChannels))
    throw std::invalid_argument("conv: bias must have one element per filter");
  for (int i = 0; i < 2; ++i)
    if (s.kernel[i] < 1 || s.strides[i] < 1 || s.dilations[i] < 1)
      throw std::invalid_argument("conv: kernel, strides and dilations must be positive");
  for (int64_t p : s.pads)
    if (p < 0) throw std::invalid_argument("conv: pads must not be negative");
}

FusedConv::~FusedConv() = default;

std::vector<int64_t> FusedConv::outputDims(std::span<const int64_t> in) const {
  if (in.size() != 4)
    throw std::invalid_argument(fmt::format("conv: input has rank {}, expected 4", in.size()));
  if (in[1] != spec_.inChannels)
    throw std::invalid_argument(
        fmt::format("conv: input has {} channels, expected {}", in[1], spec_.inChannels));
  std::vector<int64_t> out{in[0], spec_.outChannels, 0, 0};
  for (int i = 0; i < 2; ++i) {
    int64_t extent = spec_.dilations[i] * (spec_.kernel[i] - 1) + 1;
    int64_t padded = in[2 + i] + spec_.pads[i] + spec_.pads[2 + i];
    if (padded < extent)
      throw std::invalid_argument("conv: the kernel is larger than the padded input");
    out[2 + i] = (padded - extent) / spec_.strides[i] + 1;
  }
  return out;
}

namespace {

// Everything of a convolution primitive but its activations' layouts: the
// formulations chooseFormulation() tries differ only in those.
struct ConvProblem {
  dnnl::memory::desc weights;
  dnnl::memory::desc bias;
  dnnl::memory::dims strides, dilations, padL, padR;
  dnnl::primitive_attr attr;
  bool winograd = false;

  dnnl::convolution_forward::primitive_desc describe(const dnnl::memory::desc& src,
                                                     const dnnl::memory::desc& dst) const {
    auto make = [&](dnnl::algorithm algorithm) {
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, src,
                                           weights, bias, dst, strides, dilations, padL, padR);
      return dnnl::convolution_forward::primitive_desc(desc, attr, cpuEngine());
    };
    if (winograd) {
      // oneDNN 2.6 has Winograd kernels for AVX-512 only, and not for every
      // channel count or post-op; it says so by failing to create the
      // descriptor, which leaves the direct algorithm.
      try {
        return make(dnnl::algorithm::convolution_winograd);
      } catch (const dnnl::error&) {
      }
    }
    return make(dnnl::algorithm::convolution_direct);
  }
};

ConvProblem convProblem(const ConvSpec& s, std::span<const int64_t> inputDims,
                        std::span<const int64_t> outDims) {
  ConvProblem p;
  dnnl::memory::dims weightDims =
      groupedWeightDims(s.groups, s.outChannels, s.inChannels, s.kernel[0], s.kernel[1]);
  bool bf16 = s.dstFormat == Format::kNhwcBf16;
  p.weights = dnnl::memory::desc(weightDims, bf16 ? dt::bf16 : dt::f32, tag::any);
  p.bias = dnnl::memory::desc({s.outChannels}, dt::f32, tag::a);
  p.strides = {s.strides[0], s.strides[1]};
  // oneDNN counts dilation from 0 (no gaps); ONNX from 1.
  p.dilations = {s.dilations[0] - 1, s.dilations[1] - 1};
  p.padL = {s.pads[0], s.pads[1]};
  p.padR = {s.pads[2], s.pads[3]};
  // oneDNN wants the right padding that makes the output size exact.
  for (size_t i = 0; i < 2; ++i) {
    int64_t extent = s.dilations[i] * (s.kernel[i] - 1) + 1;
    p.padR[i] = (outDims[2 + i] - 1) * s.strides[i] + extent - inputDims[2 + i] - p.padL[i];
  }
  p.attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  if (s.sumResidual) ops.append_sum(1.0f);
  // Only those oneDNN applies to NaN as ONNX does; execute() applies the
  // rest (activation.h).
  for (size_t i = 0; i < exactPostOps(s.activations); ++i) appendEltwise(ops, s.activations[i]);
  p.attr.set_post_ops(ops);
  p.winograd = s.winograd && winogradShape(s);
  return p;
}

}  // namespace

// The first formulation whose implementation is not one of oneDNN's
// reference loops, nor (for a grouped conv) its per-group gemm: the
// activations in the caller's layouts (no copies);
// then in the layout oneDNN prefers for the shape (`any`: 2.6 answers
// ref:any for some dilated convolutions on nChw16c, e.g. 3x3 dilation 8
// with 128 channels on 32x32, and brgconv on channels-last for the same
// problem); then plain NCHW, whose gemm-based convolution takes any shape.
// The other layouts cost a reorder of the source in and of the output
// (and residual) out, small beside the reference loops' 100x.
dnnl::convolution_forward::primitive_desc FusedConv::chooseFormulation(
    Prepared& prepared, std::span<const int64_t> inputDims) const {
  ConvProblem problem = convProblem(spec_, inputDims, prepared.outDims);
  dnnl::convolution_forward::primitive_desc pd =
      problem.describe(prepared.srcDesc, prepared.dstDesc);
  if (!isSlowFor(spec_, pd)) return pd;
  for (tag layout : {tag::any, tag::nchw}) {
    dnnl::memory::data_type type = prepared.srcDesc.data_type();
    dnnl::memory::desc src(toDnnlDims(inputDims), type, layout);
    dnnl::memory::desc dst(toDnnlDims(prepared.outDims), type, layout);
    dnnl::convolution_forward::primitive_desc candidate;
    try {
      candidate = problem.describe(src, dst);
    } catch (const dnnl::error&) {
      continue;
    }
    if (isSlowFor(spec_, candidate)) continue;
    Relayout r;
    r.convSrc = candidate.src_desc();
    r.convDst = candidate.dst_desc();
    r.srcIn = makeReorder(prepared.srcDesc, r.convSrc);
    r.dstOut = makeReorder(r.convDst, prepared.dstDesc);
    if (spec_.sumResidual) r.residualIn = makeReorder(prepared.dstDesc, r.convDst);
    r.srcOffset = alignUp(candidate.scratchpad_desc().get_size());
    r.dstOffset = r.srcOffset + alignUp(r.convSrc.get_size());
    prepared.relayout = std::move(r);
    return candidate;
  }
  // Nothing better: run the reference loops rather than fail; the
  // implementation string says so to tests and profiles.
  return pd;
}

size_t FusedConv::prepare(std::span<const int64_t> inputDims) {
  if (auto p = find(inputDims)) return p->scratchBytes;
  const ConvSpec& s = spec_;
  auto prepared = std::make_shared<Prepared>();
  prepared->outDims = outputDims(inputDims);
  prepared->srcDesc = formatDesc(inputDims, s.srcFormat);
  prepared->dstDesc = formatDesc(prepared->outDims, s.dstFormat);

  dnnl::convolution_forward::primitive_desc pd = chooseFormulation(*prepared, inputDims);
  if (usePatchMatMul(s, pd, prepared->outDims))
    return preparePatches(inputDims, std::move(prepared), pd);
  prepared->primitive = dnnl::convolution_forward(pd);
  prepared->scratchDesc = pd.scratchpad_desc();
  prepared->implementation = pd.impl_info_str();
  prepared->scratchBytes = pd.scratchpad_desc().get_size();
  if (const std::optional<Relayout>& r = prepared->relayout) {
    prepared->scratchBytes = r->dstOffset + r->convDst.get_size();
    prepared->implementation += " (activations reordered to its layout)";
  }

  // The weights are reordered once, here, into the layout the primitive
  // chose; execute() never touches the plain copy again.
  dnnl::memory::dims weightDims =
      groupedWeightDims(s.groups, s.outChannels, s.inChannels, s.kernel[0], s.kernel[1]);
  tag userWeightTag = s.groups == 1 ? tag::oihw : tag::goihw;
  prepared->weights = reorderedWeights(dnnl::memory::desc(weightDims, dt::f32, userWeightTag),
                                       s.weights.data(), pd.weights_desc());
  prepared->bias = biasMemory(s.bias, s.outChannels);

  return store(inputDims, std::move(prepared));
}

size_t FusedConv::store(std::span<const int64_t> inputDims, std::shared_ptr<Prepared> prepared) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = prepared_.emplace(std::vector<int64_t>(inputDims.begin(), inputDims.end()),
                              std::move(prepared));
  return it.first->second->scratchBytes;
}

size_t FusedConv::preparePatches(std::span<const int64_t> inputDims,
                                 std::shared_ptr<Prepared> prepared,
                                 const dnnl::convolution_forward::primitive_desc& pd) {
  const ConvSpec& s = spec_;
  PatchMatMul pm;
  pm.pixels = prepared->outDims[2] * prepared->outDims[3];
  pm.k = s.inChannels * s.kernel[0] * s.kernel[1];
  MatMulSpec mm;
  mm.k = pm.k;
  mm.n = s.outChannels;
  // Weights [out][k] as B = [k][out].
  mm.weights.resize(s.weights.size());
  for (int64_t o = 0; o < mm.n; ++o)
    for (int64_t k = 0; k < mm.k; ++k)
      mm.weights[static_cast<size_t>(k * mm.n + o)] = s.weights[static_cast<size_t>(o * mm.k + k)];
  mm.bias = s.bias;
  mm.activations = s.activations;
  pm.matmul = std::make_unique<FusedMatMul>(std::move(mm));
  const std::vector<int64_t> aDims{pm.pixels, pm.k};
  pm.colsOffset = alignUp(pm.matmul->prepare(aDims, {}));
  pm.productOffset = pm.colsOffset + alignUp(static_cast<size_t>(pm.pixels * pm.k) * sizeof(float));
  prepared->scratchBytes =
      pm.productOffset + static_cast<size_t>(pm.pixels * s.outChannels) * sizeof(float);
  prepared->implementation = std::string("im2col + matmul (oneDNN offered ") + pd.impl_info_str() +
                             ", which repacks the weights per call)";
  prepared->patches = std::move(pm);
  return store(inputDims, std::move(prepared));
}

std::string FusedConv::implementation(std::span<const int64_t> inputDims) const {
  std::shared_ptr<const Prepared> p = find(inputDims);
  return p ? p->implementation : std::string();
}

std::shared_ptr<const FusedConv::Prepared> FusedConv::find(
    std::span<const int64_t> inputDims) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = prepared_.find(std::vector<int64_t>(inputDims.begin(), inputDims.end()));
  return it == prepared_.end() ? nullptr : it->second;
}

namespace {

// Row p of `cols` ([pixels][k]) is output position p's patch of the image
// `x` ([C][H][W]), in the weights' order (c, i, j); taps in the padding
// are 0.
void patchesOf(const ConvSpec& s, std::span<const int64_t> in, std::span<const int64_t> out,
               const float* x, float* cols) {
  const int64_t height = in[2], width = in[3];
  for (int64_t oh = 0; oh < out[2]; ++oh)
    for (int64_t ow = 0; ow < out[3]; ++ow) {
      float* row = cols + (oh * out[3] + ow) * s.inChannels * s.kernel[0] * s.kernel[1];
      for (int64_t c = 0; c < s.inChannels; ++c)
        for (int64_t i = 0; i < s.kernel[0]; ++i) {
          const int64_t ih = oh * s.strides[0] + i * s.dilations[0] - s.pads[0];
          const float* line = x + (c * height + ih) * width;
          for (int64_t j = 0; j < s.kernel[1]; ++j) {
            const int64_t iw = ow * s.strides[1] + j * s.dilations[1] - s.pads[1];
            *row++ = ih >= 0 && ih < height && iw >= 0 && iw < width ? line[iw] : 0.0f;
          }
        }
    }
}

}  // namespace

void FusedConv::runPatches(const Prepared& p, std::span<const int64_t> inputDims, const float* src,
                           float* dst, std::byte* scratch) const {
  const PatchMatMul& pm = *p.patches;
  auto* cols = reinterpret_cast<float*>(scratch + pm.colsOffset);
  auto* product = reinterpret_cast<float*>(scratch + pm.productOffset);
  const int64_t out = spec_.outChannels;
  const std::vector<int64_t> aDims{pm.pixels, pm.k};
  for (int64_t n = 0; n < inputDims[0]; ++n) {
    patchesOf(spec_, inputDims, p.outDims, src + n * inputDims[1] * inputDims[2] * inputDims[3],
              cols);
    pm.matmul->execute(aDims, {}, cols, nullptr, nullptr, product, scratch);
    // [pixels][out] -> the image's [out][pixels].
    float* image = dst + n * out * pm.pixels;
    for (int64_t pixel = 0; pixel < pm.pixels; ++pixel)
      for (int64_t o = 0; o < out; ++o) image[o * pm.pixels + pixel] = product[pixel * out + o];
  }
}

void FusedConv::execute(std::span<const int64_t> inputDims, const void* src, const void* residual,
                        void* dst, void* scratch) const {
  std::shared_ptr<const Prepared> p = find(inputDims);
  if (!p) throw std::logic_error("conv: execute() before prepare() for these input dims");
  if (p->patches)
    return runPatches(*p, inputDims, static_cast<const float*>(src), static_cast<float*>(dst),
                      static_cast<std::byte*>(scratch));
  dnnl::engine& engine = cpuEngine();
  dnnl::stream& stream = threadStream();
  dnnl::memory srcMem(p->srcDesc, engine, const_cast<void*>(src));
  dnnl::memory dstMem(p->dstDesc, engine, dst);
  dnnl::memory scratchMem(p->scratchDesc, engine, scratch);
  dnnl::memory convSrc = srcMem, convDst = dstMem;
  if (const std::optional<Relayout>& r = p->relayout) {
    auto* base = static_cast<std::byte*>(scratch);
    convSrc = dnnl::memory(r->convSrc, engine, base + r->srcOffset);
    convDst = dnnl::memory(r->convDst, engine, base + r->dstOffset);
    r->srcIn.execute(stream, srcMem, convSrc);
    if (spec_.sumResidual) {
      dnnl::memory residualMem(p->dstDesc, engine, const_cast<void*>(residual));
      r->residualIn.execute(stream, residualMem, convDst);
    }
  } else if (spec_.sumResidual && residual != dst) {
    std::memcpy(dst, residual, formatBytes(p->outDims, spec_.dstFormat));
  }
  p->primitive.execute(stream, {{DNNL_ARG_SRC, convSrc},
                                {DNNL_ARG_WEIGHTS, p->weights},
                                {DNNL_ARG_BIAS, p->bias},
                                {DNNL_ARG_DST, convDst},
                                {DNNL_ARG_SCRATCHPAD, scratchMem}});
  if (p->relayout) p->relayout->dstOut.execute(stream, convDst, dstMem);
  stream.wait();
  const std::span<const Activation> acts = spec_.activations;
  applyOnHost(acts.subspan(exactPostOps(acts)), p->outDims, spec_.dstFormat, dst);
}

}  // namespace subgraph::onednn
