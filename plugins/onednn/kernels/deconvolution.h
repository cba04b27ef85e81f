//===- plugins/onednn/kernels/deconvolution.h - ConvTranspose + eltwise -*- C++ -*-===//
//
// The transposed-convolution family of the compute core: a 2-D ONNX
// ConvTranspose (plain or grouped; strides, pads, dilations and an
// output_padding no larger than the end pads) with its bias and optional
// activations as eltwise post-ops, on oneDNN's deconvolution. Segmentation
// and decoder heads upsample with it.
//
// Invariants as for FusedConv: the spec is fixed at construction, weights
// are reordered once per input shape into the primitive's layout, and
// execute() is thread-safe and allocates nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "activation.h"
#include "shape_cache.h"
#include "tensor_format.h"

namespace subgraph::onednn {

/// What one fused transposed convolution computes.
struct DeconvSpec {
  int64_t inChannels = 0;   ///< C of the input.
  int64_t outChannels = 0;  ///< C of the output.
  int64_t groups = 1;
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> dilations{1, 1};   ///< ONNX convention: 1 means none.
  std::array<int64_t, 4> pads{0, 0, 0, 0};  ///< top, left, bottom, right.
  /// Extra rows and columns at the end (ONNX output_padding); each at most
  /// the matching end pad.
  std::array<int64_t, 2> outputPadding{0, 0};
  /// ONNX layout: [inChannels, outChannels / groups, kH, kW], row-major.
  std::vector<float> weights;
  /// [outChannels], or empty for none.
  std::vector<float> bias;
  /// Applied in order after the bias.
  std::vector<Activation> activations;
  Format format = Format::kPlain;
};

/// Folds y = scale * (x - mean) / sqrt(var + eps) + shift into the
/// deconvolution's weights and bias (inference BatchNormalization after a
/// ConvTranspose). All spans have outChannels elements; throws
/// std::invalid_argument otherwise.
void foldBatchNorm(DeconvSpec& spec, std::span<const float> scale, std::span<const float> shift,
                   std::span<const float> mean, std::span<const float> var, float epsilon);

/// A ready-to-run transposed convolution; see the file comment.
class Deconvolution {
 public:
  /// Checks the spec; throws std::invalid_argument naming what is wrong.
  explicit Deconvolution(DeconvSpec spec);
  ~Deconvolution();
  const DeconvSpec& spec() const { return spec_; }
  /// Output dims for NCHW input dims; throws std::invalid_argument if the
  /// input does not fit.
  std::vector<int64_t> outputDims(std::span<const int64_t> in) const;
  /// Creates the primitive and reorders the weights, once per input shape;
  /// returns the scratchpad bytes execute() needs.
  size_t prepare(std::span<const int64_t> in);
  /// Runs on prepared dims; src and dst are in the spec's format.
  void execute(std::span<const int64_t> in, const void* src, void* dst, void* scratch) const;

 private:
  struct Prepared;
  DeconvSpec spec_;
  ShapeCache<Prepared> cache_;
};

}  // namespace subgraph::onednn
