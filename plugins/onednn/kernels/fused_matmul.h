//===- plugins/onednn/kernels/fused_matmul.h - MatMul/Gemm + bias + eltwise -*- C++ -*-===//
//
// The matmul family of the compute core: A x B, where B is either constant
// weights (MatMul by an initializer, Gemm) reordered once into oneDNN's
// preferred layout, or a second run-time tensor (batched, as attention's
// Q x K^T); then an optional bias, an optional residual added through the
// `sum` post-op, and optional activations (GELU, Relu, a scalar scale) as
// eltwise post-ops. Leading dims of A are batch dims: with constant
// weights they are folded into M; with a run-time B both operands must have
// the same batch dims.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "activation.h"
#include "shape_cache.h"

namespace subgraph::onednn {

/// What one fused matmul computes.
struct MatMulSpec {
  /// Constant B as [K, N] row-major, or empty when B is a run-time input.
  std::vector<float> weights;
  int64_t k = 0;  ///< Rows of constant B.
  int64_t n = 0;  ///< Columns of constant B.
  /// [N], or empty for none.
  std::vector<float> bias;
  /// Add a residual of the output's dims before the activations.
  bool sumResidual = false;
  /// Applied in order after the bias and the sum.
  std::vector<Activation> activations;
  /// Multiply in bf16 (AVX512-BF16/AMX): weights are stored bf16, A (and a
  /// run-time B) are converted into scratch per run; accumulation and the
  /// output stay f32.
  bool bf16 = false;
};

/// A ready-to-run fused matmul; primitives are cached per input shape.
class FusedMatMul {
 public:
  /// Checks the spec; throws std::invalid_argument.
  explicit FusedMatMul(MatMulSpec spec);

  const MatMulSpec& spec() const { return spec_; }
  /// Output dims for A's dims (and B's, when B is a run-time input).
  std::vector<int64_t> outputDims(std::span<const int64_t> a, std::span<const int64_t> b) const;
  /// Creates the primitive once per shape; returns scratchpad bytes.
  size_t prepare(std::span<const int64_t> a, std::span<const int64_t> b);
  /// Runs on prepared dims; all tensors plain f32. `b` is ignored with
  /// constant weights; `residual` is read when the spec sums one.
  void execute(std::span<const int64_t> aDims, std::span<const int64_t> bDims, const float* a,
               const float* b, const float* residual, float* dst, void* scratch) const;

 private:
  struct Prepared;
  std::vector<int64_t> key(std::span<const int64_t> a, std::span<const int64_t> b) const;

  MatMulSpec spec_;
  ShapeCache<Prepared> cache_;
};

}  // namespace subgraph::onednn
