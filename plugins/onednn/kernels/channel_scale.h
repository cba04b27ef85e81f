//===- plugins/onednn/kernels/channel_scale.h - x * per-channel s -*- C++ -*-===//
//
// The channel-scale family of the compute core: y = x * s where x is an
// NCHW activation and s holds one factor per (image, channel), [N, C, 1, 1]
// or [1, C, 1, 1]: the multiply that ends a squeeze-and-excitation block
// (MobileNetV3, EfficientNet). s is computed at run time from x itself
// (global pool, two 1x1 convs, a gate), so it cannot be a post-op of the
// convolution that made x; it is a oneDNN `binary_mul` with src1
// broadcast over H and W, reading x and writing y in the activations'
// layout so the block costs no reorder.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "shape_cache.h"
#include "tensor_format.h"

namespace subgraph::onednn {

/// What one channel scaling computes.
struct ChannelScaleSpec {
  /// The layout of x, s and y. s comes in the activations' layout too: in
  /// a squeeze-excite block it is the gate a fused 1x1 convolution wrote.
  Format format = Format::kPlain;
};

/// A ready-to-run channel scaling; primitives are cached per shape pair.
class ChannelScale {
 public:
  explicit ChannelScale(ChannelScaleSpec spec) : spec_(spec) {}
  const ChannelScaleSpec& spec() const { return spec_; }
  /// y's dims (x's); throws std::invalid_argument unless x is 4-D and s is
  /// [N or 1, C, 1, 1].
  std::vector<int64_t> outputDims(std::span<const int64_t> x, std::span<const int64_t> s) const;
  /// Creates the primitive once per shape pair; returns scratchpad bytes.
  size_t prepare(std::span<const int64_t> x, std::span<const int64_t> s);
  /// Runs on prepared dims; x, s and y in the spec's format. y may be x.
  void execute(std::span<const int64_t> xDims, std::span<const int64_t> sDims, const void* x,
               const void* s, void* y, void* scratch) const;

 private:
  struct Prepared;
  ChannelScaleSpec spec_;
  ShapeCache<Prepared> cache_;
};

}  // namespace subgraph::onednn
