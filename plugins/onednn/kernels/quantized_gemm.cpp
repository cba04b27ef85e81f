//===- plugins/onednn/kernels/quantized_gemm.cpp - Dynamically quantized conv/matmul -===//
//
// See quantized_gemm.h. The quantization loops are written as the ONNX
// reference (and the host's reference backend) computes them: a division
// per element, rounding half to even, saturation; ISO C++ keeps floating-
// point contraction off, so the epilogue's multiply and add round apart,
// as the Mul and Add nodes they replace do.
//
//===----------------------------------------------------------------------===//
#include "quantized_gemm.h"

#include <immintrin.h>

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "dnnl_context.h"

// The quantization loop divides per element; clones for AVX-512 and AVX2
// vectorize it (every clone rounds the same way). ThreadSanitizer cannot
// instrument the ifunc resolver behind target_clones.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define SUBGRAPH_ONEDNN_ISA_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SUBGRAPH_ONEDNN_ISA_CLONES
#endif

namespace subgraph::onednn {
namespace {

// Bytes of a tile's patches: a tile of this size stays in a core's L2 cache
// between the im2col that writes it and the GEMM that reads it.
constexpr int64_t kTileBytes = 512 * 1024;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

size_t alignUp(size_t bytes) { return (bytes + 63) / 64 * 64; }

// std::nearbyint for |v| <= 2^22 in the default rounding mode: adding
// 1.5 * 2^23 leaves no fraction bits, so the addition rounds half to even.
inline float roundHalfEven(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  return (v + kMagic) - kMagic;
}

// `flip` 0x80 stores q - 128 as int8 bytes instead of q (see the header).
SUBGRAPH_ONEDNN_ISA_CLONES
void quantizeU8(const float* px, uint8_t* py, int64_t n, float scale, float zero, uint8_t flip) {
  for (int64_t i = 0; i < n; ++i) {
    // |x / scale| <= 255 for every finite x of the range, so the clamp only
    // keeps the rounding trick exact; NaN passes it and becomes 0.
    float q = roundHalfEven(std::clamp(px[i] / scale, -512.0f, 512.0f)) + zero;
    if (!(q == q)) q = 0;
    py[i] = static_cast<uint8_t>(static_cast<uint8_t>(std::clamp(q, 0.0f, 255.0f)) ^ flip);
  }
}

// The range of x[0, n) widened to include 0, into lo and hi. NaN compares
// false both ways and so leaves it alone (x86's min and max return their
// second operand then), in any order of the chunks.
void rangeChunkPortable(const float* x, int64_t n, float& lo, float& hi) {
  for (int64_t i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
}

#if defined(__GNUC__) && defined(__x86_64__)
// The same, 16 lanes at a time (GCC does not vectorize a float min or max
// reduction by itself).
[[gnu::target("avx512f")]] void rangeChunkAvx512(const float* x, int64_t n, float& lo, float& hi) {
  __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    vlo = _mm512_min_ps(v, vlo);
    vhi = _mm512_max_ps(v, vhi);
  }
  // Through memory: GCC 12's _mm512_reduce_min_ps warns about its own code.
  float los[16], his[16];
  _mm512_storeu_ps(los, vlo);
  _mm512_storeu_ps(his, vhi);
  rangeChunkPortable(los, 16, lo, hi);
  rangeChunkPortable(his, 16, lo, hi);
  rangeChunkPortable(x + i, n - i, lo, hi);
}
#endif

void rangeChunk(const float* x, int64_t n, float& lo, float& hi) {
#if defined(__GNUC__) && defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return rangeChunkAvx512(x, n, lo, hi);
#endif
  rangeChunkPortable(x, n, lo, hi);
}

std::pair<float, float> rangeWithZero(const float* x, int64_t n) {
  const int team = omp_get_max_threads();
  std::vector<std::pair<float, float>> partial(static_cast<size_t>(team), {0.0f, 0.0f});
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t begin = n * t / nt, end = n * (t + 1) / nt;
    float lo = 0, hi = 0;
    rangeChunk(x + begin, end - begin, lo, hi);
    partial[static_cast<size_t>(t)] = {lo, hi};
  }
  float lo = 0, hi = 0;
  for (const auto& [l, h] : partial) {
    lo = std::min(lo, l);
    hi = std::max(hi, h);
  }
  return {lo, hi};
}

// DynamicQuantizeLinear of x[0, n) into q (flipped by `flip`); returns the
// scale and the zero point (not flipped).
std::pair<float, uint8_t> quantize(const float* x, int64_t n, uint8_t* q, uint8_t flip) {
  const auto [lo, hi] = rangeWithZero(x, n);
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  float zero = std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f));
  if (std::isnan(zero)) zero = 0;  // an infinite range
  constexpr int64_t kChunk = 1 << 14;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < ceilDiv(n, kChunk); ++c)
    quantizeU8(x + c * kChunk, q + c * kChunk, std::min(kChunk, n - c * kChunk), scale, zero, flip);
  return {scale, static_cast<uint8_t>(zero)};
}

// The value at `i` of a constant with one element or one per channel.
float at(const std::vector<float>& v, int64_t i) { return v.size() == 1 ? v[0] : v[i]; }

int32_t weightAt(std::span<const std::byte> w, bool isSigned, size_t i) {
  return isSigned ? static_cast<int32_t>(static_cast<int8_t>(w[i]))
                  : static_cast<int32_t>(static_cast<uint8_t>(w[i]));
}

}  // namespace

QuantizedWeights quantizedWeights(std::span<const std::byte> w, bool isSigned, int64_t k, int64_t n,
                                  bool rowsAreOutputs, std::span<const int32_t> zeros, bool left) {
  if (static_cast<int64_t>(w.size()) != k * n || zeros.empty() ||
      (zeros.size() != 1 && static_cast<int64_t>(zeros.size()) != n))
    throw std::invalid_argument("quantized weights: sizes do not match");
  const bool perChannel =
      std::any_of(zeros.begin(), zeros.end(), [&](int32_t z) { return z != zeros[0]; });
  // The shift to the operand's type (the header's change of variables);
  // per-channel zero points are subtracted here instead, and the result
  // shifted, so the gemm's one offset is the shift itself.
  const int32_t shift = left ? (isSigned ? 128 : 0) : (isSigned ? 0 : -128);
  const int32_t lo = left ? 0 : -128, hi = left ? 255 : 127;
  QuantizedWeights out;
  out.k = k;
  out.n = n;
  out.left = left;
  out.zero = perChannel ? (left ? 128 : 0) : zeros[0] + shift;
  out.data.resize(static_cast<size_t>(k * n));
  for (int64_t col = 0; col < n; ++col) {
    const int32_t add = perChannel ? out.zero - zeros[static_cast<size_t>(col)] : shift;
    for (int64_t row = 0; row < k; ++row) {
      size_t from = static_cast<size_t>(rowsAreOutputs ? col * k + row : row * n + col);
      int32_t v = weightAt(w, isSigned, from) + add;
      if (v < lo || v > hi)
        throw std::invalid_argument("per-channel weight zero points leave differences outside " +
                                    std::string(left ? "uint8" : "int8"));
      out.data[static_cast<size_t>(left ? col * k + row : row * n + col)] = static_cast<uint8_t>(v);
    }
  }
  return out;
}

bool isExactActivation(const Activation& a) {
  return a.kind == Activation::Kind::kRelu || a.kind == Activation::Kind::kLeakyRelu ||
         a.kind == Activation::Kind::kClip;
}

bool hasExactInt8Gemm() {
  // Before VNNI, oneDNN multiplies u8 x s8 pairs with vpmaddubsw, which
  // saturates their int16 sum. The ISA is fixed for the process; the
  // pattern predicate asks once per candidate node.
  static const bool exact = [] {
    dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core_vnni || isa == dnnl::cpu_isa::avx512_core_bf16 ||
           isa == dnnl::cpu_isa::avx512_core_amx || isa == dnnl::cpu_isa::avx2_vnni;
  }();
  return exact;
}

struct QuantizedGemm::Geometry {
  int64_t batch = 1;  // images (conv) or rows of the product (matmul)
  int64_t height = 1, width = 1;
  int64_t outHeight = 1, outWidth = 1;
  int64_t tile = 0;  // output pixels per conv tile
};

// oneDNN's int8 matmul for one row count: uint8 activations with a run-time
// zero point by int8 weights (packed into the primitive's layout once),
// int32 products written where their floats will be.
struct QuantizedGemm::Primitive {
  dnnl::matmul matmul;
  dnnl::memory::desc src, dst, scratch;
  dnnl::memory weights;
  size_t scratchBytes = 0;
};

QuantizedGemm::QuantizedGemm(QuantizedGemmSpec spec)
    : spec_(std::move(spec)), primitives_(std::make_shared<ShapeCache<Primitive>>()) {
  const QuantizedGemmSpec& s = spec_;
  const int64_t n = s.weights.n;
  auto sized = [n](const std::vector<float>& v) {
    return v.size() == 1 || static_cast<int64_t>(v.size()) == n;
  };
  if (n <= 0 || s.weights.k <= 0 || !sized(s.weightScale) || (!s.bias.empty() && !sized(s.bias)))
    throw std::invalid_argument("quantized gemm: scale or bias sizes do not match the weights");
  if (s.conv && s.inChannels * s.kernel[0] * s.kernel[1] != s.weights.k)
    throw std::invalid_argument("quantized conv: the weights do not match the geometry");
  for (const Activation& a : s.activations)
    if (!isExactActivation(a))
      throw std::invalid_argument("quantized gemm: " + a.describe() + " is not exact here");
}

QuantizedGemm::Geometry QuantizedGemm::geometry(std::span<const int64_t> x) const {
  const QuantizedGemmSpec& s = spec_;
  Geometry g;
  if (!s.conv) {
    if (x.empty() || x.back() != s.weights.k)
      throw std::invalid_argument("quantized matmul: the input's last dim is not K");
    for (size_t i = 0; i + 1 < x.size(); ++i) g.batch *= x[i];
    return g;
  }
  if (x.size() != 4 || x[1] != s.inChannels)
    throw std::invalid_argument("quantized conv: the input is not [N, C, H, W] with C inputs");
  g.batch = x[0];
  g.height = x[2];
  g.width = x[3];
  const int64_t extentH = s.dilations[0] * (s.kernel[0] - 1) + 1;
  const int64_t extentW = s.dilations[1] * (s.kernel[1] - 1) + 1;
  const int64_t spanH = g.height + s.pads[0] + s.pads[2] - extentH;
  const int64_t spanW = g.width + s.pads[1] + s.pads[3] - extentW;
  if (spanH < 0 || spanW < 0)
    throw std::invalid_argument("quantized conv: the kernel is larger than the padded input");
  g.outHeight = spanH / s.strides[0] + 1;
  g.outWidth = spanW / s.strides[1] + 1;
  g.tile = std::clamp<int64_t>(kTileBytes / s.weights.k / 64 * 64, 64, 4096);
  return g;
}

std::vector<int64_t> QuantizedGemm::outputDims(std::span<const int64_t> x) const {
  Geometry g = geometry(x);
  if (!spec_.conv) {
    std::vector<int64_t> out(x.begin(), x.end());
    out.back() = spec_.weights.n;
    return out;
  }
  return {g.batch, spec_.weights.n, g.outHeight, g.outWidth};
}

// A 1x1 conv with stride 1 and no pads reads its input as its patches.
bool QuantizedGemm::pointwise() const {
  const QuantizedGemmSpec& s = spec_;
  return s.conv && s.kernel == std::array<int64_t, 2>{1, 1} &&
         s.strides == std::array<int64_t, 2>{1, 1} && s.pads == std::array<int64_t, 4>{0, 0, 0, 0};
}

bool QuantizedGemm::usesPrimitive() const {
  return !spec_.conv && !spec_.weights.left && spec_.weights.zero == 0;
}

std::shared_ptr<const QuantizedGemm::Primitive> QuantizedGemm::primitive(int64_t rows) const {
  if (auto found = primitives_->find({rows})) return found;
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const QuantizedWeights& w = spec_.weights;
  auto p = std::make_shared<Primitive>();
  p->src = dnnl::memory::desc({rows, w.k}, dt::u8, tag::ab);
  p->dst = dnnl::memory::desc({rows, w.n}, dt::s32, tag::ab);
  dnnl::memory::desc anyWeights({w.k, w.n}, dt::s8, tag::any);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p->src, anyWeights, p->dst), attr,
                                  cpuEngine());
  p->matmul = dnnl::matmul(pd);
  p->scratch = pd.scratchpad_desc();
  p->scratchBytes = alignUp(p->scratch.get_size());
  dnnl::memory user({{w.k, w.n}, dt::s8, tag::ab}, cpuEngine(),
                    const_cast<uint8_t*>(w.data.data()));
  p->weights = dnnl::memory(pd.weights_desc(), cpuEngine());
  dnnl::stream& stream = threadStream();
  dnnl::reorder(user, p->weights).execute(stream, user, p->weights);
  stream.wait();
  return primitives_->insert({rows}, std::move(p));
}

size_t QuantizedGemm::scratchBytes(std::span<const int64_t> x) const {
  Geometry g = geometry(x);
  size_t elements = 1;
  for (int64_t d : x) elements *= static_cast<size_t>(d);
  size_t bytes = alignUp(elements);  // the quantized input
  if (usesPrimitive()) bytes += primitive(g.batch)->scratchBytes;
  // Per thread, a tile's patches.
  if (spec_.conv && !pointwise())
    bytes += alignUp(static_cast<size_t>(g.tile * spec_.weights.k)) *
             static_cast<size_t>(omp_get_max_threads());
  return bytes;
}

namespace {

// Patches of output pixels [p0, p1) of one image (`plane0` its channel 0)
// as the K x T matrix `cols` (T = p1 - p0; row k = (c, i, j) in the weights'
// order); taps in the padding read `pad`, the zero point, which contributes
// 0.
struct Im2col {
  const QuantizedGemmSpec& s;
  int64_t height, width, outWidth;
  uint8_t pad;

  void operator()(const uint8_t* plane0, int64_t p0, int64_t p1, uint8_t* cols) const {
    const int64_t t = p1 - p0;
    int64_t k = 0;
    for (int64_t c = 0; c < s.inChannels; ++c)
      for (int64_t i = 0; i < s.kernel[0]; ++i)
        for (int64_t j = 0; j < s.kernel[1]; ++j, ++k)
          row(plane0 + c * height * width, i, j, p0, p1, cols + k * t);
  }

 private:
  void row(const uint8_t* plane, int64_t i, int64_t j, int64_t p0, int64_t p1, uint8_t* out) const {
    const int64_t sh = s.strides[0], sw = s.strides[1];
    const int64_t offW = j * s.dilations[1] - s.pads[1];
    // Output columns whose input column is inside [0, width).
    const int64_t firstIn = offW >= 0 ? 0 : ceilDiv(-offW, sw);
    const int64_t endIn = width - 1 - offW < 0 ? 0 : (width - 1 - offW) / sw + 1;
    for (int64_t p = p0; p < p1;) {
      const int64_t oh = p / outWidth, ow0 = p % outWidth;
      const int64_t ow1 = std::min(outWidth, ow0 + (p1 - p));
      const int64_t ih = oh * sh + i * s.dilations[0] - s.pads[0];
      uint8_t* dst = out + (p - p0);
      if (ih < 0 || ih >= height) {
        std::memset(dst, pad, static_cast<size_t>(ow1 - ow0));
      } else {
        const int64_t lo = std::clamp(firstIn, ow0, ow1), hi = std::clamp(endIn, lo, ow1);
        std::memset(dst, pad, static_cast<size_t>(lo - ow0));
        const uint8_t* src = plane + ih * width + offW;
        if (sw == 1)
          std::memcpy(dst + (lo - ow0), src + lo, static_cast<size_t>(hi - lo));
        else
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow - ow0] = src[ow * sw];
        std::memset(dst + (hi - ow0), pad, static_cast<size_t>(ow1 - hi));
      }
      p += ow1 - ow0;
    }
  }
};

// c[m][n] = sum_k (a[m][k] - aZero) * (b[k][n] - bZero), a uint8 and b
// int8, row-major with leading dimensions lda, ldb, ldc; on the calling
// thread when called inside an OpenMP team.
void gemm(int64_t m, int64_t n, int64_t k, const uint8_t* a, int64_t lda, int32_t aZero,
          const uint8_t* b, int64_t ldb, int32_t bZero, int32_t* c, int64_t ldc) {
  static const int32_t kNoOffset = 0;
  dnnl_status_t st =
      dnnl_gemm_u8s8s32('N', 'N', 'F', m, n, k, 1.0f, a, lda, static_cast<uint8_t>(aZero),
                        reinterpret_cast<const int8_t*>(b), ldb, static_cast<int8_t>(bZero), 0.0f,
                        c, ldc, &kNoOffset);
  if (st != dnnl_success)
    throw std::runtime_error("oneDNN's u8 x s8 gemm failed (status " + std::to_string(st) + ")");
}

// Rows of int32 products at y (columns are channels) into
// float(acc) * scale[c] + bias[c] in place, each step rounded as the Mul and
// Add nodes round it; compiled for AVX-512 and AVX2 too (no contraction, so
// every clone gives the same bits).
SUBGRAPH_ONEDNN_ISA_CLONES
void scaleColumns(float* y, int64_t rows, int64_t cols, int64_t ldY, const float* scale,
                  const float* bias) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = y + r * ldY;
    for (int64_t c = 0; c < cols; ++c) {
      int32_t acc;
      std::memcpy(&acc, row + c, sizeof acc);
      float v = static_cast<float>(acc) * scale[c];
      row[c] = bias ? v + bias[c] : v;
    }
  }
}

// The int32 at `p` of memory that is being turned into floats in place.
inline int32_t loadInt(const float* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

// The float steps after the product, for one run (x's scale is known):
// out = act(float(acc) * (xScale * wScale[c]) + bias[c]), each operation
// rounded to float as the Mul and Add nodes round it. The products are in
// the output's own memory; each becomes its float in place.
class QuantizedGemm::Epilogue {
 public:
  Epilogue(const QuantizedGemmSpec& spec, float xScale) : spec_(spec) {
    const int64_t n = spec.weights.n;
    scale_.resize(static_cast<size_t>(n));
    for (int64_t c = 0; c < n; ++c)
      scale_[static_cast<size_t>(c)] = xScale * at(spec.weightScale, c);
    if (!spec.bias.empty())
      for (int64_t c = 0; c < n; ++c) bias_.push_back(at(spec.bias, c));
  }

  /// `rows` x `cols` products at y (leading dimension ldY); channel c is
  /// row c (conv: [channels][pixels]) or column c (matmul: [rows][n]).
  void operator()(float* y, int64_t rows, int64_t cols, int64_t ldY, bool channelRows) const {
    const std::vector<Activation>& acts = spec_.activations;
    if (acts.empty() && !channelRows)
      scaleColumns(y, rows, cols, ldY, scale_.data(), bias_.empty() ? nullptr : bias_.data());
    else if (acts.empty())
      withBias(y, rows, cols, ldY, channelRows, [](float v) { return v; });
    else if (acts.size() == 1 && acts[0].kind == Activation::Kind::kRelu)
      withBias(y, rows, cols, ldY, channelRows, [](float v) { return std::max(v, 0.0f); });
    else
      withBias(y, rows, cols, ldY, channelRows, [&acts](float v) {
        for (const Activation& a : acts) v = a.apply(v);
        return v;
      });
  }

 private:
  template <typename Act>
  void withBias(float* y, int64_t rows, int64_t cols, int64_t ldY, bool channelRows,
                Act act) const {
    if (bias_.empty())
      loop<false>(y, rows, cols, ldY, channelRows, act);
    else
      loop<true>(y, rows, cols, ldY, channelRows, act);
  }

  template <bool kBias, typename Act>
  void loop(float* y, int64_t rows, int64_t cols, int64_t ldY, bool channelRows, Act act) const {
    for (int64_t r = 0; r < rows; ++r) {
      float* row = y + r * ldY;
      if (channelRows) {
        const float s = scale_[static_cast<size_t>(r)];
        const float b = kBias ? bias_[static_cast<size_t>(r)] : 0.0f;
        for (int64_t c = 0; c < cols; ++c) {
          float v = static_cast<float>(loadInt(row + c)) * s;
          if constexpr (kBias) v = v + b;
          row[c] = act(v);
        }
      } else {
        for (int64_t c = 0; c < cols; ++c) {
          float v = static_cast<float>(loadInt(row + c)) * scale_[static_cast<size_t>(c)];
          if constexpr (kBias) v = v + bias_[static_cast<size_t>(c)];
          row[c] = act(v);
        }
      }
    }
  }

  const QuantizedGemmSpec& spec_;
  std::vector<float> scale_, bias_;
};

void QuantizedGemm::runConv(const Geometry& g, const uint8_t* q, uint8_t zero,
                            const Epilogue& epilogue, float* y, std::byte* scratch) const {
  const QuantizedGemmSpec& s = spec_;
  const QuantizedWeights& w = s.weights;
  const int64_t pixels = g.outHeight * g.outWidth;
  const int64_t tilesPerImage = ceilDiv(pixels, g.tile);
  const size_t colsBytes = alignUp(static_cast<size_t>(g.tile * w.k));
  const bool direct = pointwise();
  // The patches are int8 bytes (quantize() flipped them): zero - 128.
  const int32_t patchZero = static_cast<int32_t>(zero) - 128;
  const Im2col im2col{s, g.height, g.width, g.outWidth, static_cast<uint8_t>(zero ^ 0x80)};
#pragma omp parallel
  {
    uint8_t* cols =
        reinterpret_cast<uint8_t*>(scratch + colsBytes * static_cast<size_t>(omp_get_thread_num()));
#pragma omp for schedule(dynamic)
    for (int64_t t = 0; t < g.batch * tilesPerImage; ++t) {
      const int64_t b = t / tilesPerImage;
      const int64_t p0 = t % tilesPerImage * g.tile, p1 = std::min(pixels, p0 + g.tile);
      const uint8_t* image = q + b * s.inChannels * g.height * g.width;
      float* out = y + b * w.n * pixels + p0;
      // Each GEMM runs on its own thread of the team.
      if (direct) {
        gemm(w.n, p1 - p0, w.k, w.data.data(), w.k, w.zero, image + p0, pixels, patchZero,
             reinterpret_cast<int32_t*>(out), pixels);
      } else {
        im2col(image, p0, p1, cols);
        gemm(w.n, p1 - p0, w.k, w.data.data(), w.k, w.zero, cols, p1 - p0, patchZero,
             reinterpret_cast<int32_t*>(out), pixels);
      }
      epilogue(out, w.n, p1 - p0, pixels, true);
    }
  }
}

void QuantizedGemm::runMatMul(const Geometry& g, const uint8_t* q, uint8_t zero,
                              const Epilogue& epilogue, float* y, std::byte* scratch) const {
  const QuantizedWeights& w = spec_.weights;
  // The int32 products go where their floats will: same size, same place.
  if (usesPrimitive()) {
    std::shared_ptr<const Primitive> p = primitives_->get({g.batch}, "quantized matmul");
    dnnl::engine& engine = cpuEngine();
    int32_t srcZero = zero;
    dnnl::memory zeroMem({{1}, dnnl::memory::data_type::s32, dnnl::memory::format_tag::x}, engine,
                         &srcZero);
    dnnl::stream& stream = threadStream();
    p->matmul.execute(stream,
                      {{DNNL_ARG_SRC, dnnl::memory(p->src, engine, const_cast<uint8_t*>(q))},
                       {DNNL_ARG_WEIGHTS, p->weights},
                       {DNNL_ARG_DST, dnnl::memory(p->dst, engine, y)},
                       {DNNL_ARG_SCRATCHPAD, dnnl::memory(p->scratch, engine, scratch)},
                       {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zeroMem}});
    stream.wait();
  } else {
    gemm(g.batch, w.n, w.k, q, w.k, zero, w.data.data(), w.n, w.zero, reinterpret_cast<int32_t*>(y),
         w.n);
  }
  constexpr int64_t kRows = 64;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < ceilDiv(g.batch, kRows); ++r)
    epilogue(y + r * kRows * w.n, std::min(kRows, g.batch - r * kRows), w.n, w.n, false);
}

void QuantizedGemm::execute(std::span<const int64_t> xDims, const float* x, float* y,
                            std::byte* scratch) const {
  Geometry g = geometry(xDims);
  int64_t elements = 1;
  for (int64_t d : xDims) elements *= d;
  uint8_t* q = reinterpret_cast<uint8_t*>(scratch);
  // A conv's activations are the int8 (right) operand, a matmul's the
  // uint8 (left) one.
  const auto [scale, zero] = quantize(x, elements, q, spec_.conv ? 0x80 : 0);
  const Epilogue epilogue(spec_, scale);
  std::byte* rest = scratch + alignUp(static_cast<size_t>(elements));
  if (spec_.conv)
    runConv(g, q, zero, epilogue, y, rest);
  else
    runMatMul(g, q, zero, epilogue, y, rest);
}

}  // namespace subgraph::onednn
