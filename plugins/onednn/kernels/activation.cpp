//===- plugins/onednn/kernels/activation.cpp - Activations as eltwise post-ops -===//
//
// Maps ONNX activations to oneDNN eltwise algorithms; see activation.h.
//
//===----------------------------------------------------------------------===//
#include "activation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "dnnl_context.h"

namespace subgraph::onednn {
namespace {

using Alg = dnnl::algorithm;

struct EltwiseStep {
  Alg alg;
  float alpha;
  float beta;
};

// One or two oneDNN steps per activation; HardSigmoid needs two because
// oneDNN 2.6 has no hardsigmoid algorithm.
int toSteps(const Activation& a, EltwiseStep (&steps)[2]) {
  using K = Activation::Kind;
  switch (a.kind) {
    case K::kRelu: steps[0] = {Alg::eltwise_relu, 0.0f, 0.0f}; return 1;
    case K::kLeakyRelu: steps[0] = {Alg::eltwise_relu, a.alpha, 0.0f}; return 1;
    case K::kClip: steps[0] = {Alg::eltwise_clip, a.alpha, a.beta}; return 1;
    case K::kSigmoid: steps[0] = {Alg::eltwise_logistic, 0.0f, 0.0f}; return 1;
    case K::kHardSwish: steps[0] = {Alg::eltwise_hardswish, 0.0f, 0.0f}; return 1;
    case K::kGeluErf: steps[0] = {Alg::eltwise_gelu_erf, 0.0f, 0.0f}; return 1;
    case K::kGeluTanh: steps[0] = {Alg::eltwise_gelu_tanh, 0.0f, 0.0f}; return 1;
    case K::kTanh: steps[0] = {Alg::eltwise_tanh, 0.0f, 0.0f}; return 1;
    case K::kLinear: steps[0] = {Alg::eltwise_linear, a.alpha, a.beta}; return 1;
    case K::kHardSigmoid:
      steps[0] = {Alg::eltwise_linear, a.alpha, a.beta};
      steps[1] = {Alg::eltwise_clip, 0.0f, 1.0f};
      return 2;
  }
  return 0;
}

// min(max(x, lo), hi) that keeps a NaN x, as ONNX's Clip does.
float clamp(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

// Whether oneDNN's JIT computes `a` as ONNX does for NaN: not where it is
// a max/min instruction (measured on oneDNN 2.6.3: Relu and Clip, alone or
// as post-ops, give the bound for NaN; the others keep NaN).
bool exactInOneDnn(const Activation& a) {
  using K = Activation::Kind;
  return a.kind != K::kRelu && a.kind != K::kClip && a.kind != K::kHardSigmoid;
}

float bf16ToFloat(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest even; NaN stays a quiet NaN.
uint16_t floatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float applyAll(std::span<const Activation> activations, float x) {
  for (const Activation& a : activations) x = a.apply(x);
  return x;
}

// Below this many elements a pass runs on the calling thread: an OpenMP
// team costs more than the pass.
constexpr int64_t kParallelElements = int64_t{1} << 16;

// The tails nearly every fused kernel has, a Relu or a Clip alone, as one
// loop the compiler vectorizes (compare and blend): a full pass over the
// output either way, so it must run at memory speed. False for any other.
bool clampInPlace(std::span<const Activation> activations, float* p, int64_t count) {
  using K = Activation::Kind;
  if (activations.size() != 1 ||
      (activations[0].kind != K::kRelu && activations[0].kind != K::kClip))
    return false;
  const bool relu = activations[0].kind == K::kRelu;
  const float lo = relu ? 0.0f : activations[0].alpha;
  const float hi = relu ? std::numeric_limits<float>::infinity() : activations[0].beta;
#pragma omp parallel for simd schedule(static) if (count >= kParallelElements)
  for (int64_t i = 0; i < count; ++i) p[i] = clamp(p[i], lo, hi);
  return true;
}

// True if `activations` is one Relu, or one Clip whose range holds 0: it
// maps 0 to 0.
bool keepsZero(std::span<const Activation> activations) {
  using K = Activation::Kind;
  if (activations.size() != 1) return false;
  const Activation& a = activations[0];
  return a.kind == K::kRelu || (a.kind == K::kClip && a.alpha <= 0.0f && 0.0f <= a.beta);
}

}  // namespace

float Activation::apply(float x) const {
  switch (kind) {
    // Comparisons that are false for NaN, so NaN passes through each clamp.
    case Kind::kRelu: return x < 0.0f ? 0.0f : x;
    case Kind::kLeakyRelu: return x >= 0 ? x : alpha * x;
    case Kind::kClip: return clamp(x, alpha, beta);
    case Kind::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case Kind::kHardSigmoid: return clamp(alpha * x + beta, 0.0f, 1.0f);
    case Kind::kHardSwish: return x * clamp(x / 6.0f + 0.5f, 0.0f, 1.0f);
    case Kind::kGeluErf: return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
    case Kind::kGeluTanh:
      return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    case Kind::kTanh: return std::tanh(x);
    case Kind::kLinear: return alpha * x + beta;
  }
  return x;
}

std::string Activation::describe() const {
  switch (kind) {
    case Kind::kRelu: return "Relu";
    case Kind::kLeakyRelu: return fmt::format("LeakyRelu({})", alpha);
    case Kind::kClip: return fmt::format("Clip({}, {})", alpha, beta);
    case Kind::kSigmoid: return "Sigmoid";
    case Kind::kHardSigmoid: return fmt::format("HardSigmoid({}, {})", alpha, beta);
    case Kind::kHardSwish: return "HardSwish";
    case Kind::kGeluErf: return "Gelu";
    case Kind::kGeluTanh: return "Gelu(tanh)";
    case Kind::kTanh: return "Tanh";
    case Kind::kLinear: return fmt::format("Linear({}, {})", alpha, beta);
  }
  return "?";
}

void appendEltwise(dnnl::post_ops& ops, const Activation& activation) {
  EltwiseStep steps[2];
  int n = toSteps(activation, steps);
  for (int i = 0; i < n; ++i) ops.append_eltwise(1.0f, steps[i].alg, steps[i].alpha, steps[i].beta);
}

size_t exactPostOps(std::span<const Activation> activations) {
  size_t n = 0;
  while (n < activations.size() && exactInOneDnn(activations[n])) ++n;
  return n;
}

void applyOnHost(std::span<const Activation> activations, std::span<const int64_t> dims,
                 Format format, void* data) {
  if (activations.empty()) return;
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  if (format == Format::kNhwcBf16) {
    auto* p = static_cast<uint16_t*>(data);
#pragma omp parallel for schedule(static) if (count >= kParallelElements)
    for (int64_t i = 0; i < count; ++i)
      p[i] = floatToBf16(applyAll(activations, bf16ToFloat(p[i])));
    return;
  }
  auto* p = static_cast<float*>(data);
  const bool padded = format != Format::kPlain && dims.size() == 4 && dims[1] % 16 != 0;
  // nChw16c's padding channels hold 0 and must keep it: a clamp that maps
  // 0 to 0 (Relu; Clip with lo <= 0 <= hi) runs over the whole padded
  // buffer in the one vectorized loop, not element by element around the
  // padding (openWakeWord's embedding CNN, whose convs have 24 and 72
  // channels: 2.08 to 1.26 ms a request with 2 threads).
  if (padded && keepsZero(activations)) {
    const int64_t blocks = (dims[1] + 15) / 16;
    if (clampInPlace(activations, p, dims[0] * blocks * 16 * dims[2] * dims[3])) return;
  }
  if (!padded) {
    if (clampInPlace(activations, p, count)) return;
#pragma omp parallel for schedule(static) if (count >= kParallelElements)
    for (int64_t i = 0; i < count; ++i) p[i] = applyAll(activations, p[i]);
    return;
  }
  // nChw16c: [N][ceil(C/16)][H][W][16]; the last block's channels past C
  // are padding oneDNN needs left at zero.
  const int64_t blocks = (dims[1] + 15) / 16, pixels = dims[2] * dims[3];
  const int64_t rows = dims[0] * blocks;
#pragma omp parallel for schedule(static) if (count >= kParallelElements)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t valid = std::min<int64_t>(16, dims[1] - (r % blocks) * 16);
    float* block = p + r * pixels * 16;
    for (int64_t px = 0; px < pixels; ++px)
      for (int64_t c = 0; c < valid; ++c)
        block[px * 16 + c] = applyAll(activations, block[px * 16 + c]);
  }
}

dnnl::eltwise_forward::primitive_desc eltwiseDesc(const Activation& activation,
                                                  const dnnl::memory::desc& data) {
  EltwiseStep steps[2];
  int n = toSteps(activation, steps);
  dnnl::primitive_attr attr;
  dnnl::post_ops post;
  for (int i = 1; i < n; ++i)
    post.append_eltwise(1.0f, steps[i].alg, steps[i].alpha, steps[i].beta);
  attr.set_post_ops(post);
  dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, steps[0].alg, data,
                                   steps[0].alpha, steps[0].beta);
  return dnnl::eltwise_forward::primitive_desc(desc, attr, cpuEngine());
}

}  // namespace subgraph::onednn
