//===- plugins/onednn/kernels/concat.h - Concatenation -*- C++ -*-===//
//
// The Concat family of the compute core: plain f32 tensors joined along one
// axis with oneDNN's concat primitive.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "shape_cache.h"

namespace subgraph::onednn {

/// Concatenation along one axis; primitives cached per input shapes.
class Concat {
 public:
  /// `axis` may be negative.
  explicit Concat(int64_t axis) : axis_(axis) {}
  /// Output dims; throws std::invalid_argument if the inputs do not fit.
  std::vector<int64_t> outputDims(std::span<const std::vector<int64_t>> inputs) const;
  /// Creates the primitive once per input shapes; returns scratchpad bytes.
  size_t prepare(std::span<const std::vector<int64_t>> inputs);
  /// Runs on prepared shapes.
  void execute(std::span<const std::vector<int64_t>> inputs, std::span<const float* const> srcs,
               float* dst, void* scratch) const;

 private:
  struct Prepared;
  int64_t normalizedAxis(size_t rank) const;
  static std::vector<int64_t> key(std::span<const std::vector<int64_t>> inputs);

  int64_t axis_;
  ShapeCache<Prepared> cache_;
};

}  // namespace subgraph::onednn
