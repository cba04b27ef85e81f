//===- plugins/onednn/kernels/pooling.h - Max and average pooling -*- C++ -*-===//
//
// The pooling family of the compute core: 2-D MaxPool, AveragePool (with or
// without the padding counted) and their global forms, on NCHW tensors in
// plain or blocked format, so that a pool between two fused convolutions
// keeps the blocked layout. A max over a window that holds a NaN is NaN,
// as on every other backend (pooling.cpp says how).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "shape_cache.h"
#include "tensor_format.h"

namespace subgraph::onednn {

/// What one pooling computes.
struct PoolSpec {
  /// The reduction.
  enum class Kind { kMax, kAverageIncludePad, kAverageExcludePad };
  Kind kind = Kind::kMax;
  /// Pool over the whole spatial extent (GlobalMaxPool, GlobalAveragePool).
  bool global = false;
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> dilations{1, 1};   ///< ONNX convention: 1 means none.
  std::array<int64_t, 4> pads{0, 0, 0, 0};  ///< top, left, bottom, right.
  /// Round the output size up (ONNX ceil_mode).
  bool ceilMode = false;
  Format format = Format::kPlain;
};

/// A ready-to-run pooling; primitives are cached per input shape.
class Pooling {
 public:
  /// Checks the spec; throws std::invalid_argument.
  explicit Pooling(PoolSpec spec);
  const PoolSpec& spec() const { return spec_; }
  /// Output dims for NCHW input dims.
  std::vector<int64_t> outputDims(std::span<const int64_t> in) const;
  /// Creates the primitive once per shape; returns scratchpad bytes.
  size_t prepare(std::span<const int64_t> in);
  /// Runs on prepared dims; src and dst are in the spec's format.
  void execute(std::span<const int64_t> in, const void* src, void* dst, void* scratch) const;

 private:
  struct Prepared;
  /// Sets NaN in `dst` wherever the window holds a NaN of `src`.
  void markNanWindows(std::span<const int64_t> in, const void* src, void* dst) const;
  PoolSpec spec_;
  ShapeCache<Prepared> cache_;
};

}  // namespace subgraph::onednn
