//===- runtime/reference/gemm.h - Blocked matrix multiply -------*- C++ -*-===//
//
// Internal to the reference backend: C = alpha * op(A) * op(B) + beta * C on
// row-major matrices with leading dimensions, the workhorse of Conv (after
// im2col), MatMul and Gemm. The f32 version packs panels of A and B and runs
// a 6x16 register-blocked micro-kernel compiled for AVX-512, AVX2+FMA and
// baseline x86-64 (the best is picked at load time); tiles of C run in
// parallel on oneTBB. The f64 version is a plain cache-blocked loop.
//
// beta == 0 means C is not read (it may hold garbage, even NaN).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace subgraph::runtime::reference {

/// Row-major single-precision GEMM; see the file comment.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

/// Row-major double-precision GEMM.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace subgraph::runtime::reference
