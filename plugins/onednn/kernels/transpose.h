//===- plugins/onednn/kernels/transpose.h - Transpose as a reorder -*- C++ -*-===//
//
// Transpose of an f32 tensor as one oneDNN reorder: the source described
// with its strides permuted, the destination dense. ViT's patch embedding
// moves its channels last this way ([1, C, 196] -> [1, 196, C]).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "shape_cache.h"

namespace subgraph::onednn {

/// A ready-to-run transpose by `perm` (output dim k is input dim perm[k]).
class Transpose {
 public:
  /// Throws std::invalid_argument unless `perm` is a permutation.
  explicit Transpose(std::vector<int64_t> perm);
  /// The permuted dims; throws std::invalid_argument for another rank.
  std::vector<int64_t> outputDims(std::span<const int64_t> x) const;
  /// Creates the reorder once per shape.
  void prepare(std::span<const int64_t> x);
  /// Runs on prepared dims; plain f32.
  void execute(std::span<const int64_t> x, const float* src, float* dst) const;

 private:
  struct Prepared;
  std::vector<int64_t> perm_;
  ShapeCache<Prepared> cache_;
};

}  // namespace subgraph::onednn
