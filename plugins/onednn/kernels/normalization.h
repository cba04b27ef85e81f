//===- plugins/onednn/kernels/normalization.h - Softmax and LayerNormalization -*- C++ -*-===//
//
// The normalizing families of the compute core, both over one axis of a
// plain f32 tensor: Softmax (opset 13 semantics: along `axis` alone) and
// LayerNormalization over the last axis with constant scale and shift.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "shape_cache.h"

namespace subgraph::onednn {

/// Softmax along one axis; primitives cached per shape.
class Softmax {
 public:
  /// `axis` may be negative (counted from the end).
  explicit Softmax(int64_t axis) : axis_(axis) {}
  /// Creates the primitive once per shape; returns scratchpad bytes.
  size_t prepare(std::span<const int64_t> dims);
  /// Runs on prepared dims (in place is allowed).
  void execute(std::span<const int64_t> dims, const float* src, float* dst, void* scratch) const;

 private:
  struct Prepared;
  int64_t axis_;
  ShapeCache<Prepared> cache_;
};

/// LayerNormalization over the last axis: (x - mean) / sqrt(var + eps) *
/// scale + shift, with constant scale and shift of the last dim's size;
/// optionally of a residual sum (ONNX Runtime's SkipLayerNormalization).
class LayerNorm {
 public:
  /// Throws std::invalid_argument if scale and shift differ in size.
  LayerNorm(std::vector<float> scale, std::vector<float> shift, float epsilon);
  /// Creates the primitive once per shape; returns scratchpad bytes.
  size_t prepare(std::span<const int64_t> dims);
  /// Runs on prepared dims (in place is allowed).
  void execute(std::span<const int64_t> dims, const float* src, float* dst, void* scratch) const;
  /// Normalizes a + b (a residual and the layer's output, both of `dims`):
  /// the sum is written to `dst`, rounded as an Add rounds it, and
  /// normalized there.
  void executeSum(std::span<const int64_t> dims, const float* a, const float* b, float* dst,
                  void* scratch) const;

 private:
  struct Prepared;
  std::vector<float> scale_;
  std::vector<float> shift_;
  float epsilon_;
  ShapeCache<Prepared> cache_;
};

}  // namespace subgraph::onednn
