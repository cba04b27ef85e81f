//===- plugins/onednn/kernels/attention.cpp - Fused attention -------------===//
//
// See attention.h. The gathers and the Softmax are the loops here that are
// not oneDNN's. The Softmax has an AVX-512 version (intrinsics, its
// exponential Cephes' polynomial), picked at run time where the CPU has
// AVX-512, and a portable one (std::exp) elsewhere.
//
//===----------------------------------------------------------------------===//
#include "attention.h"

#include <immintrin.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "dnnl_context.h"
#include "shape_cache.h"

namespace subgraph::onednn {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The Softmax of one row, and the scalar pieces the AVX-512 version shares.
// A fully masked row (every score -inf) becomes zeros; a row holding NaN or
// +inf becomes NaN.

// Handles the two special rows; false when the row is an ordinary one.
bool specialRow(float* row, int64_t n, float max, bool bad) {
  if (!bad && max != -kInf) return false;
  std::fill(row, row + n, bad ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
  return true;
}

void softmaxRowPortable(float* row, int64_t n) {
  float m = -kInf;
  bool bad = false;
  for (int64_t j = 0; j < n; ++j) {
    bad |= !(row[j] < kInf);
    m = std::max(m, row[j]);
  }
  if (specialRow(row, n, m, bad)) return;
  float sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += row[j] = std::exp(row[j] - m);
  for (int64_t j = 0; j < n; ++j) row[j] /= sum;
}

#if defined(__GNUC__) && defined(__x86_64__)
#define SUBGRAPH_ONEDNN_AVX512 1

// e^x for x <= 0: Cephes' single-precision polynomial (within 2 ulp) after
// x = n ln 2 + r, n rounded to nearest; exactly 0 below the smallest
// normal float's logarithm, -inf included.
[[gnu::target("avx512f")]] inline __m512 expNonPositive(__m512 x) {
  const __m512 floor = _mm512_set1_ps(-87.33654f);
  const __mmask16 underflow = _mm512_cmp_ps_mask(x, floor, _CMP_LT_OQ);
  x = _mm512_max_ps(x, floor);
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  __m512i bits =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mul_ps(static_cast<__mmask16>(~underflow), p, _mm512_castsi512_ps(bits));
}

// The same row, 16 lanes at a time; the tail is masked (-inf lanes add
// nothing).
[[gnu::target("avx512f")]] void softmaxRowAvx512(float* row, int64_t n) {
  const __m512 inf = _mm512_set1_ps(kInf);
  __m512 m = _mm512_set1_ps(-kInf);
  __mmask16 bad = 0;
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = n - j >= 16 ? 0xffff : static_cast<__mmask16>((1u << (n - j)) - 1);
    __m512 x = _mm512_mask_loadu_ps(_mm512_set1_ps(-kInf), k, row + j);
    bad |= _mm512_cmp_ps_mask(x, inf, _CMP_NLT_UQ);  // NaN or +inf
    m = _mm512_max_ps(m, x);
  }
  // Through memory: GCC 12's _mm512_reduce_max_ps warns about its own code.
  float lanes[16];
  _mm512_storeu_ps(lanes, m);
  const float max = *std::max_element(lanes, lanes + 16);
  if (specialRow(row, n, max, bad != 0)) return;
  const __m512 shift = _mm512_set1_ps(max);
  __m512 sum = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = n - j >= 16 ? 0xffff : static_cast<__mmask16>((1u << (n - j)) - 1);
    __m512 e = expNonPositive(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, row + j), shift));
    e = _mm512_maskz_mov_ps(k, e);
    _mm512_mask_storeu_ps(row + j, k, e);
    sum = _mm512_add_ps(sum, e);
  }
  _mm512_storeu_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  const __m512 inverse = _mm512_set1_ps(1.0f / total);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = n - j >= 16 ? 0xffff : static_cast<__mmask16>((1u << (n - j)) - 1);
    _mm512_mask_storeu_ps(row + j, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, row + j), inverse));
  }
}
#endif

// AVX-512 where the CPU has it (checked once), else the portable loop.
void softmaxRow(float* row, int64_t n) {
#ifdef SUBGRAPH_ONEDNN_AVX512
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return softmaxRowAvx512(row, n);
#endif
  softmaxRowPortable(row, n);
}

// Copies operand `x` (element (b, h, s, d) at x + strides.offset(b, h, s)
// + d) into a dense [B, H, S, size] block, unless it is dense already.
const float* gather(const float* x, const HeadStrides& strides, int64_t batch, int64_t heads,
                    int64_t seq, int64_t size, float* dense) {
  const HeadStrides want{heads * seq * size, seq * size, size};
  if ((batch == 1 || strides.batch == want.batch) && (heads == 1 || strides.head == want.head) &&
      (seq == 1 || strides.row == want.row))
    return x;
  const int64_t rows = batch * heads * seq;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / (heads * seq), h = r / seq % heads, i = r % seq;
    std::memcpy(dense + r * size, x + strides.offset(b, h, i),
                static_cast<size_t>(size) * sizeof(float));
  }
  return dense;
}

// Adds each row's mask (keys past its length are -inf) and takes the
// Softmax of every row of the scores [B, H, Sq, T].
void maskedSoftmax(const AttentionProblem& p, const float* mask, float* s) {
  const int64_t rows = p.batch * p.heads * p.qSeq, t = p.kvSeq;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float* row = s + r * t;
    if (p.hasMask) {
      const int64_t b = r / (p.heads * p.qSeq), h = r / p.qSeq % p.heads, i = r % p.qSeq;
      const float* m = mask + p.mask.offset(b, h, i);
      const int64_t len = std::min(p.maskLength, t);
      for (int64_t j = 0; j < len; ++j) row[j] += m[j * p.maskColumn];
      std::fill(row + len, row + t, -kInf);
    }
    softmaxRow(row, t);
  }
}

size_t aligned(size_t bytes) { return (bytes + 63) / 64 * 64; }

std::vector<int64_t> keyOf(const AttentionProblem& p) {
  return {p.batch,     p.heads,   p.qSeq,   p.kvSeq, p.headSize,
          p.vHeadSize, p.y.batch, p.y.head, p.y.row, std::bit_cast<int32_t>(p.scale)};
}

}  // namespace

HeadStrides stridesOf3d(int64_t seq, int64_t size, int64_t rowStride) {
  return {seq * rowStride, size, rowStride};
}

HeadStrides stridesOf4d(int64_t heads, int64_t seq, int64_t size) {
  return {heads * seq * size, seq * size, size};
}

// The primitives and the scratch layout of one problem size.
struct FusedAttention::Prepared {
  dnnl::matmul qk, pv;
  dnnl::memory::desc q, kt, scores, v, y, qkScratch, pvScratch;
  size_t denseQ = 0, denseK = 0, denseV = 0, scoresAt = 0, qkScratchAt = 0, pvScratchAt = 0;
  size_t bytes = 0;
};

struct FusedAttention::Cache : ShapeCache<FusedAttention::Prepared> {};

FusedAttention::FusedAttention() : cache_(std::make_unique<Cache>()) {}
FusedAttention::~FusedAttention() = default;

size_t FusedAttention::prepare(const AttentionProblem& p) {
  std::vector<int64_t> key = keyOf(p);
  if (auto found = cache_->find(key)) return found->bytes;
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  auto e = std::make_shared<Prepared>();
  const int64_t b = p.batch, h = p.heads;
  e->q = dnnl::memory::desc({b, h, p.qSeq, p.headSize}, dt::f32, tag::abcd);
  e->kt = dnnl::memory::desc({b, h, p.headSize, p.kvSeq}, dt::f32, tag::abdc);
  e->scores = dnnl::memory::desc({b, h, p.qSeq, p.kvSeq}, dt::f32, tag::abcd);
  e->v = dnnl::memory::desc({b, h, p.kvSeq, p.vHeadSize}, dt::f32, tag::abcd);
  e->y = dnnl::memory::desc({b, h, p.qSeq, p.vHeadSize}, dt::f32,
                            dnnl::memory::dims{p.y.batch, p.y.head, p.y.row, 1});
  dnnl::primitive_attr scaled;
  scaled.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  scaled.set_output_scales(0, {p.scale});
  dnnl::matmul::primitive_desc qk(dnnl::matmul::desc(e->q, e->kt, e->scores), scaled, cpuEngine());
  dnnl::primitive_attr plain;
  plain.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::matmul::primitive_desc pv(dnnl::matmul::desc(e->scores, e->v, e->y), plain, cpuEngine());
  e->qk = dnnl::matmul(qk);
  e->pv = dnnl::matmul(pv);
  e->qkScratch = qk.scratchpad_desc();
  e->pvScratch = pv.scratchpad_desc();
  size_t at = 0;
  auto take = [&](size_t bytes) {
    size_t here = at;
    at += aligned(bytes);
    return here;
  };
  e->denseQ = take(e->q.get_size());
  e->denseK = take(e->kt.get_size());
  e->denseV = take(e->v.get_size());
  e->scoresAt = take(e->scores.get_size());
  e->qkScratchAt = take(e->qkScratch.get_size());
  e->pvScratchAt = take(e->pvScratch.get_size());
  e->bytes = at;
  return cache_->insert(key, std::move(e))->bytes;
}

void FusedAttention::execute(const AttentionProblem& p, const float* q, const float* k,
                             const float* v, const float* mask, float* y, void* scratch) const {
  std::shared_ptr<const Prepared> e = cache_->get(keyOf(p), "attention");
  auto* base = static_cast<std::byte*>(scratch);
  auto at = [&](size_t offset) { return reinterpret_cast<float*>(base + offset); };
  const float* dq = gather(q, p.q, p.batch, p.heads, p.qSeq, p.headSize, at(e->denseQ));
  const float* dk = gather(k, p.k, p.batch, p.heads, p.kvSeq, p.headSize, at(e->denseK));
  const float* dv = gather(v, p.v, p.batch, p.heads, p.kvSeq, p.vHeadSize, at(e->denseV));
  float* scores = at(e->scoresAt);
  dnnl::engine& engine = cpuEngine();
  dnnl::stream& stream = threadStream();
  auto mem = [&](const dnnl::memory::desc& d, const void* data) {
    return dnnl::memory(d, engine, const_cast<void*>(data));
  };
  e->qk.execute(stream, {{DNNL_ARG_SRC, mem(e->q, dq)},
                         {DNNL_ARG_WEIGHTS, mem(e->kt, dk)},
                         {DNNL_ARG_DST, mem(e->scores, scores)},
                         {DNNL_ARG_SCRATCHPAD, mem(e->qkScratch, at(e->qkScratchAt))}});
  stream.wait();
  maskedSoftmax(p, mask, scores);
  e->pv.execute(stream, {{DNNL_ARG_SRC, mem(e->scores, scores)},
                         {DNNL_ARG_WEIGHTS, mem(e->v, dv)},
                         {DNNL_ARG_DST, mem(e->y, y)},
                         {DNNL_ARG_SCRATCHPAD, mem(e->pvScratch, at(e->pvScratchAt))}});
  stream.wait();
}

}  // namespace subgraph::onednn
