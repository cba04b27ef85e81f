//===- plugins/onednn/kernels/resampling.h - Resize (upsampling) -*- C++ -*-===//
//
// The resampling family of the compute core: ONNX Resize of the two spatial
// dims of an NCHW tensor by constant factors, linear (half_pixel, what
// exporters emit for bilinear upsampling without align_corners) or nearest
// (asymmetric, floor: torch's nearest Upsample). In the activations'
// oneDNN layout, so a Resize between fused convolutions (a segmentation
// head) costs no reorder.
//
// Only whole-number factors: for those, oneDNN's coordinate mapping
// (output size over input size) is exactly ONNX's (the scale as given), and
// every input size has an integer output size, so a dynamic input never
// meets a shape the kernel cannot take.
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

/// What one resampling computes.
struct ResampleSpec {
  /// The interpolation.
  enum class Mode {
    kLinear,   ///< bilinear, half_pixel coordinates
    kNearest,  ///< nearest, asymmetric coordinates rounded down
  };
  Mode mode = Mode::kLinear;
  /// Height and width factors; whole numbers >= 1.
  std::array<int64_t, 2> factors{1, 1};
  Format format = Format::kPlain;
};

/// A ready-to-run resampling; primitives are cached per input shape.
class Resampling {
 public:
  /// Checks the spec; throws std::invalid_argument.
  explicit Resampling(ResampleSpec spec);
  const ResampleSpec& spec() const { return spec_; }
  /// Output dims for NCHW input dims.
  std::vector<int64_t> outputDims(std::span<const int64_t> in) const;
  /// Creates the primitive once per shape; returns scratchpad bytes.
  size_t prepare(std::span<const int64_t> in);
  /// Runs on prepared dims; src and dst are in the spec's format.
  void execute(std::span<const int64_t> in, const void* src, void* dst, void* scratch) const;

 private:
  struct Prepared;
  ResampleSpec spec_;
  ShapeCache<Prepared> cache_;
};

}  // namespace subgraph::onednn
