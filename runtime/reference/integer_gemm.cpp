//===- runtime/reference/integer_gemm.cpp - Exact 8-bit GEMM --------------===//
//
// Packed layouts (kp = ceil(k / 2) pairs, odd k padded with a zero):
//   A: strips of kMR rows; strip s holds, for each pair q and row i, one
//      int32 whose low half is a[i][2q] and high half a[i][2q+1];
//   B: strips of kNR columns; for each pair q, kNR (b[2q][j], b[2q+1][j])
//      int16 pairs.
// The micro-kernel then needs one broadcast per row and pair, and one
// multiply-add of pairs per accumulator vector: vpmaddwd computes
// a0*b0 + a1*b1 exactly in int32 (|each product| <= 255 * 255).
//
// Loop order: each 16-column B strip is packed once per call and stays in
// L1 while every A strip runs over it; A (rows x k int16) stays in L2.
//
//===----------------------------------------------------------------------===//
#include "reference/integer_gemm.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SUBGRAPH_INTEGER_GEMM_AVX2 1
#endif

namespace subgraph::runtime::reference {
namespace {

constexpr int64_t kMR = 6;
constexpr int64_t kNR = 16;

int32_t pairOf(int16_t lo, int16_t hi) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(lo)) |
                              (static_cast<uint32_t>(static_cast<uint16_t>(hi)) << 16));
}

// Packs columns [j0, j0 + nr) of b (k x n) into one B strip.
void packBStrip(const int16_t* b, int64_t ldb, int64_t k, int64_t j0, int64_t nr, int16_t* out) {
  const int64_t pairs = (k + 1) / 2;
  for (int64_t q = 0; q < pairs; ++q) {
    const int16_t* r0 = b + 2 * q * ldb + j0;
    const int16_t* r1 = 2 * q + 1 < k ? r0 + ldb : nullptr;
    int16_t* o = out + q * 2 * kNR;
    for (int64_t j = 0; j < nr; ++j) {
      o[2 * j] = r0[j];
      o[2 * j + 1] = r1 ? r1[j] : int16_t{0};
    }
    for (int64_t j = nr; j < kNR; ++j) o[2 * j] = o[2 * j + 1] = 0;
  }
}

// Writes the valid mr x nr corner of a kMR x kNR accumulator block.
void storeBlock(const int32_t (&acc)[kMR][kNR], int64_t mr, int64_t nr, int32_t* c, int64_t ldc) {
  for (int64_t i = 0; i < mr; ++i) std::memcpy(c + i * ldc, acc[i], sizeof(int32_t) * nr);
}

// Portable micro-kernel; unsigned arithmetic wraps as the int32
// accumulator must, and the compiler vectorises the j loop.
void microKernelGeneric(int64_t pairs, const int32_t* ap, const int16_t* bp, int32_t* c,
                        int64_t ldc, int64_t mr, int64_t nr) {
  uint32_t acc[kMR][kNR] = {};
  for (int64_t q = 0; q < pairs; ++q) {
    const int16_t* bq = bp + q * 2 * kNR;
    for (int64_t i = 0; i < kMR; ++i) {
      const auto a0 = static_cast<uint32_t>(static_cast<int16_t>(ap[q * kMR + i] & 0xffff));
      const auto a1 = static_cast<uint32_t>(static_cast<int16_t>(ap[q * kMR + i] >> 16));
      for (int64_t j = 0; j < kNR; ++j)
        acc[i][j] +=
            a0 * static_cast<uint32_t>(bq[2 * j]) + a1 * static_cast<uint32_t>(bq[2 * j + 1]);
    }
  }
  int32_t out[kMR][kNR];
  std::memcpy(out, acc, sizeof(out));
  storeBlock(out, mr, nr, c, ldc);
}

#ifdef SUBGRAPH_INTEGER_GEMM_AVX2
__attribute__((target("avx2"))) void microKernelAvx2(int64_t pairs, const int32_t* ap,
                                                     const int16_t* bp, int32_t* c, int64_t ldc,
                                                     int64_t mr, int64_t nr) {
  __m256i acc[kMR][2];
  for (int64_t i = 0; i < kMR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
  for (int64_t q = 0; q < pairs; ++q) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 2 * kNR));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 2 * kNR + 16));
    for (int64_t i = 0; i < kMR; ++i) {
      const __m256i a = _mm256_set1_epi32(ap[q * kMR + i]);
      acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(a, b0));
      acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(a, b1));
    }
  }
  int32_t out[kMR][kNR];
  for (int64_t i = 0; i < kMR; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[i]), acc[i][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[i] + 8), acc[i][1]);
  }
  storeBlock(out, mr, nr, c, ldc);
}

// The same block on AVX-512 VNNI: one zmm holds a row's 16 accumulators,
// and vpdpwssd fuses the pair multiply-add with the accumulation.
__attribute__((target("avx512f,avx512vnni"))) void microKernelVnni(int64_t pairs, const int32_t* ap,
                                                                   const int16_t* bp, int32_t* c,
                                                                   int64_t ldc, int64_t mr,
                                                                   int64_t nr) {
  __m512i acc[kMR];
  for (int64_t i = 0; i < kMR; ++i) acc[i] = _mm512_setzero_si512();
  for (int64_t q = 0; q < pairs; ++q) {
    const __m512i b = _mm512_loadu_si512(bp + q * 2 * kNR);
    for (int64_t i = 0; i < kMR; ++i)
      acc[i] = _mm512_dpwssd_epi32(acc[i], _mm512_set1_epi32(ap[q * kMR + i]), b);
  }
  int32_t out[kMR][kNR];
  for (int64_t i = 0; i < kMR; ++i) _mm512_storeu_si512(out[i], acc[i]);
  storeBlock(out, mr, nr, c, ldc);
}

enum class Isa { kGeneric, kAvx2, kAvx512Vnni };

Isa bestIsa() {
  static const Isa isa = [] {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni"))
      return Isa::kAvx512Vnni;
    return __builtin_cpu_supports("avx2") ? Isa::kAvx2 : Isa::kGeneric;
  }();
  return isa;
}
#endif

void microKernel(int64_t pairs, const int32_t* ap, const int16_t* bp, int32_t* c, int64_t ldc,
                 int64_t mr, int64_t nr) {
#ifdef SUBGRAPH_INTEGER_GEMM_AVX2
  switch (bestIsa()) {
    case Isa::kAvx512Vnni: return microKernelVnni(pairs, ap, bp, c, ldc, mr, nr);
    case Isa::kAvx2: return microKernelAvx2(pairs, ap, bp, c, ldc, mr, nr);
    case Isa::kGeneric: break;
  }
#endif
  microKernelGeneric(pairs, ap, bp, c, ldc, mr, nr);
}

}  // namespace

PackedIntegerA::PackedIntegerA(const int16_t* a, int64_t lda, int64_t rows, int64_t k)
    : rows_(rows), k_(k) {
  const int64_t pairs = (k + 1) / 2, strips = (rows + kMR - 1) / kMR;
  data_.assign(static_cast<size_t>(strips * pairs * kMR), 0);
  for (int64_t s = 0; s < strips; ++s) {
    int32_t* out = data_.data() + s * pairs * kMR;
    for (int64_t i = 0; i < kMR && s * kMR + i < rows; ++i) {
      const int16_t* row = a + (s * kMR + i) * lda;
      for (int64_t q = 0; q < pairs; ++q)
        out[q * kMR + i] = pairOf(row[2 * q], 2 * q + 1 < k ? row[2 * q + 1] : int16_t{0});
    }
  }
}

void integerGemm(const PackedIntegerA& a, int64_t n, const int16_t* b, int64_t ldb, int32_t* c,
                 int64_t ldc) {
  const int64_t rows = a.rows(), k = a.k(), pairs = (k + 1) / 2;
  if (rows <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < rows; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0);
    return;
  }
  // One B strip at a time, reused per thread: allocation would cost more
  // than packing a strip.
  thread_local std::vector<int16_t> strip;
  strip.resize(static_cast<size_t>(pairs * 2 * kNR));
  for (int64_t j0 = 0; j0 < n; j0 += kNR) {
    const int64_t nr = std::min(kNR, n - j0);
    packBStrip(b, ldb, k, j0, nr, strip.data());
    for (int64_t i0 = 0; i0 < rows; i0 += kMR)
      microKernel(pairs, a.data() + i0 * pairs, strip.data(), c + i0 * ldc + j0, ldc,
                  std::min(kMR, rows - i0), nr);
  }
}

}  // namespace subgraph::runtime::reference
