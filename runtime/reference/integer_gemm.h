//===- runtime/reference/integer_gemm.h - Exact 8-bit GEMM ------*- C++ -*-===//
//
// Internal to the reference backend: the integer matrix product behind
// ConvInteger, MatMulInteger, QLinearConv and QLinearMatMul. Operands are
// 8-bit values with their zero points already subtracted, held as int16
// (|v| <= 255); products sum into int32 accumulators that wrap modulo 2^32,
// which is exactly the low 32 bits of the mathematically exact sum, i.e.
// what the ONNX int32 accumulator holds.
//
// Both operands are packed into register-block strips: A as 6-row strips of
// int16 pairs (two consecutive k), B as 16-column strips of int16 pairs, so
// that the micro-kernel multiplies a pair of k at once (vpdpwssd on AVX-512
// VNNI, vpmaddwd on AVX2, an auto-vectorised loop elsewhere; the best is
// picked at load time) into a 6x16 block of accumulators.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <vector>

namespace subgraph::runtime::reference {

/// A packed left operand (rows x k), reusable across many right operands
/// (a Conv's weights across column tiles and images).
class PackedIntegerA {
 public:
  /// Packs `rows` x `k` int16 elements of the row-major matrix `a` (leading
  /// dimension `lda`).
  PackedIntegerA(const int16_t* a, int64_t lda, int64_t rows, int64_t k);

  int64_t rows() const { return rows_; }
  int64_t k() const { return k_; }
  /// The packed strips; layout described in integer_gemm.cpp.
  const int32_t* data() const { return data_.data(); }

 private:
  int64_t rows_, k_;
  std::vector<int32_t> data_;
};

/// c[i][j] = sum_p a[i][p] * b[p][j] for i < a.rows(), j < n, with int32
/// wrap-around (file comment). `b` is row-major k x n with leading dimension
/// `ldb`; `c` has leading dimension `ldc`. Runs on the calling thread: the
/// callers parallelise over independent tiles.
void integerGemm(const PackedIntegerA& a, int64_t n, const int16_t* b, int64_t ldb, int32_t* c,
                 int64_t ldc);

}  // namespace subgraph::runtime::reference
