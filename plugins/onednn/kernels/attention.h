//===- plugins/onednn/kernels/attention.h - Fused attention ------*- C++ -*-===//
//
// Scaled dot-product attention as one kernel: Q, K and V are gathered from
// their strided layouts (3-D [B, S, H * D], possibly column slices of one
// packed [B, S, 3 * H * D] projection, or 4-D) into dense [B, H, S, D]
// blocks, oneDNN's batched matmul (brgemm) computes Q x K^T * scale for
// every head at once, one pass adds the mask and takes the Softmax of each
// row, and a second batched matmul writes P x V straight into the output's
// layout: the head merge is the output's strides, not a copy. (oneDNN 2.6
// falls back to its slower gemm:jit for strided Q, K and V, which the
// gather avoids; it keeps brgemm for a strided output.)
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace subgraph::onednn {

/// Where element (b, h, s, d) of an operand is: offset b * batch +
/// h * head + s * row + d, in floats (d is contiguous).
struct HeadStrides {
  int64_t batch = 0;
  int64_t head = 0;
  int64_t row = 0;
  int64_t offset(int64_t b, int64_t h, int64_t s) const { return b * batch + h * head + s * row; }
};

/// One attention problem; every operand f32.
struct AttentionProblem {
  int64_t batch = 0, heads = 0, qSeq = 0, kvSeq = 0, headSize = 0, vHeadSize = 0;
  float scale = 1.0f;
  HeadStrides q, k, v, y;
  /// The additive mask's element (b, h, i, j) at mask.offset(b, h, i) +
  /// j * maskColumn for j < maskLength (keys past it are -inf), when there
  /// is a mask.
  bool hasMask = false;
  HeadStrides mask;
  int64_t maskColumn = 1;
  int64_t maskLength = 0;
};

/// The 3-D layout [B, S, heads * size] whose rows are `rowStride` floats
/// apart (heads * size, or more for a slice of a packed projection).
HeadStrides stridesOf3d(int64_t seq, int64_t size, int64_t rowStride);
/// The 4-D layout [B, heads, S, size].
HeadStrides stridesOf4d(int64_t heads, int64_t seq, int64_t size);

/// A ready-to-run attention; primitives are created once per problem size.
class FusedAttention {
 public:
  FusedAttention();
  ~FusedAttention();
  /// Creates the primitives for `p`'s sizes on the calling thread's team
  /// (once per size); returns the scratch bytes a run needs.
  size_t prepare(const AttentionProblem& p);
  /// Runs a prepared `p` on the calling thread's OpenMP team. A query row
  /// whose every key is masked (-inf) gives zeros; a row whose scores hold
  /// NaN or +inf gives NaN.
  void execute(const AttentionProblem& p, const float* q, const float* k, const float* v,
               const float* mask, float* y, void* scratch) const;

 private:
  struct Prepared;
  struct Cache;
  std::unique_ptr<Cache> cache_;
};

}  // namespace subgraph::onednn
