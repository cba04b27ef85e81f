//===- runtime/reference/gemm.cpp - Blocked matrix multiply ---------------===//
//
// Goto-style f32 GEMM: C is cut into MC x NC tiles that run in parallel; for
// each KC slice a tile packs its A rows into MR-row strips and its B columns
// into NR-column strips (zero padded), so the micro-kernel reads both
// sequentially. Each tile packs its own panels: that repeats a little packing
// (about 1/MC + 1/NC of the traffic) but keeps tiles independent.
//
//===----------------------------------------------------------------------===//
#include "reference/gemm.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "reference/kernel_util.h"

namespace subgraph::runtime::reference {
namespace {

constexpr int64_t kMR = 6;
constexpr int64_t kNR = 16;
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 96;   // multiple of kMR
constexpr int64_t kNC = 256;  // multiple of kNR

// 16 floats: one zmm on AVX-512, two ymm on AVX2, four xmm otherwise.
typedef float Vec16 __attribute__((vector_size(64)));

// acc[MR][NR] = sum over p of a[p][0..MR) (outer) b[p][0..NR); then
// writes alpha*acc (+ beta*C or + C) into the valid mr x nr corner of C.
SUBGRAPH_ISA_CLONES
void microKernel(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, int64_t mr,
                 int64_t nr, float alpha, float beta, bool first) {
  Vec16 acc[kMR];
  for (int64_t i = 0; i < kMR; ++i) acc[i] = Vec16{};
  for (int64_t p = 0; p < kc; ++p) {
    Vec16 bv;
    std::memcpy(&bv, bp + p * kNR, sizeof(bv));
    const float* av = ap + p * kMR;
    for (int64_t i = 0; i < kMR; ++i) acc[i] += av[i] * bv;
  }
  for (int64_t i = 0; i < mr; ++i) {
    float row[kNR];
    std::memcpy(row, &acc[i], sizeof(row));
    float* ci = c + i * ldc;
    if (first && beta == 0.0f) {
      for (int64_t j = 0; j < nr; ++j) ci[j] = alpha * row[j];
    } else if (first && beta != 1.0f) {
      for (int64_t j = 0; j < nr; ++j) ci[j] = alpha * row[j] + beta * ci[j];
    } else {
      for (int64_t j = 0; j < nr; ++j) ci[j] += alpha * row[j];
    }
  }
}

// Packs rows [0, mc) x cols [0, kc) of op(A) into MR-row strips.
void packA(bool transA, const float* a, int64_t lda, int64_t mc, int64_t kc, float* out) {
  for (int64_t i0 = 0; i0 < mc; i0 += kMR) {
    int64_t mr = std::min(kMR, mc - i0);
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t i = 0; i < mr; ++i)
        out[p * kMR + i] = transA ? a[p * lda + (i0 + i)] : a[(i0 + i) * lda + p];
      for (int64_t i = mr; i < kMR; ++i) out[p * kMR + i] = 0.0f;
    }
    out += kc * kMR;
  }
}

// Packs rows [0, kc) x cols [0, nc) of op(B) into NR-column strips.
void packB(bool transB, const float* b, int64_t ldb, int64_t kc, int64_t nc, float* out) {
  for (int64_t j0 = 0; j0 < nc; j0 += kNR) {
    int64_t nr = std::min(kNR, nc - j0);
    for (int64_t p = 0; p < kc; ++p) {
      float* o = out + p * kNR;
      if (!transB && nr == kNR) {
        std::memcpy(o, b + p * ldb + j0, kNR * sizeof(float));
        continue;
      }
      for (int64_t j = 0; j < nr; ++j) o[j] = transB ? b[(j0 + j) * ldb + p] : b[p * ldb + j0 + j];
      for (int64_t j = nr; j < kNR; ++j) o[j] = 0.0f;
    }
    out += kc * kNR;
  }
}

void scaleC(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
}

}  // namespace

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.0f) {
    scaleC(m, n, beta, c, ldc);
    return;
  }
  int64_t tilesM = (m + kMC - 1) / kMC;
  int64_t tilesN = (n + kNC - 1) / kNC;
  auto tile = [&](int64_t t) {
    int64_t i0 = (t / tilesN) * kMC, j0 = (t % tilesN) * kNC;
    int64_t mc = std::min(kMC, m - i0), nc = std::min(kNC, n - j0);
    // Pack buffers are per thread and reused: tiles are short-lived and
    // allocating per tile would cost more than the packing.
    thread_local std::vector<float> abuf, bbuf;
    abuf.resize(static_cast<size_t>(kMC * kKC));
    bbuf.resize(static_cast<size_t>(kKC * kNC));
    for (int64_t p0 = 0; p0 < k; p0 += kKC) {
      int64_t kc = std::min(kKC, k - p0);
      packA(transA, transA ? a + p0 * lda + i0 : a + i0 * lda + p0, lda, mc, kc, abuf.data());
      packB(transB, transB ? b + j0 * ldb + p0 : b + p0 * ldb + j0, ldb, kc, nc, bbuf.data());
      for (int64_t jj = 0; jj < nc; jj += kNR)
        for (int64_t ii = 0; ii < mc; ii += kMR)
          microKernel(kc, abuf.data() + ii * kc, bbuf.data() + jj * kc,
                      c + (i0 + ii) * ldc + j0 + jj, ldc, std::min(kMR, mc - ii),
                      std::min(kNR, nc - jj), alpha, beta, p0 == 0);
    }
  };
  int64_t tiles = tilesM * tilesN;
  if (tiles == 1 || m * n * k < (int64_t{1} << 16)) {
    for (int64_t t = 0; t < tiles; ++t) tile(t);
    return;
  }
  tbb::parallel_for(int64_t{0}, tiles, tile);
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  tbb::parallel_for(int64_t{0}, m, [&](int64_t i) {
    double* ci = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) ci[j] = beta == 0.0 ? 0.0 : beta * ci[j];
    for (int64_t p = 0; p < k; ++p) {
      double av = alpha * (transA ? a[p * lda + i] : a[i * lda + p]);
      if (!transB) {
        const double* bp = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) ci[j] += av * bp[j];
      } else {
        for (int64_t j = 0; j < n; ++j) ci[j] += av * b[j * ldb + p];
      }
    }
  });
}

}  // namespace subgraph::runtime::reference
