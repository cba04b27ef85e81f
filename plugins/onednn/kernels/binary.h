//===- plugins/onednn/kernels/binary.h - Broadcasting binary ops -*- C++ -*-===//
//
// Add, Sub, Mul, Div, Max and Min of two f32 tensors with numpy
// broadcasting, as one oneDNN `binary` primitive: the residual and
// embedding Adds of a transformer that no matmul could take as a post-op.
// oneDNN's binary writes the first source's dims and broadcasts the second
// (each dim equal or 1); the operand that is broadcast goes second, which
// for Sub and Div must be the divisor or subtrahend.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "shape_cache.h"

namespace subgraph::onednn {

/// A broadcasting binary op: what it computes and which operand oneDNN
/// reads as its (non-broadcast) first source.
class Binary {
 public:
  /// `algorithm` is binary_add, _sub, _mul, _div, _max or _min.
  explicit Binary(dnnl::algorithm algorithm) : algorithm_(algorithm) {}
  /// The broadcast of a and b; throws std::invalid_argument when they do
  /// not broadcast, or when the first operand of a Sub or Div is the one
  /// broadcast, or both are.
  std::vector<int64_t> outputDims(std::span<const int64_t> a, std::span<const int64_t> b) const;
  /// Creates the primitive once per shape pair; returns scratchpad bytes.
  size_t prepare(std::span<const int64_t> a, std::span<const int64_t> b);
  /// Runs on prepared dims; plain f32 tensors.
  void execute(std::span<const int64_t> aDims, std::span<const int64_t> bDims, const float* a,
               const float* b, float* y, void* scratch) const;

 private:
  struct Prepared;
  dnnl::algorithm algorithm_;
  ShapeCache<Prepared> cache_;
};

}  // namespace subgraph::onednn
