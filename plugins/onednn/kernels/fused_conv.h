//===- plugins/onednn/kernels/fused_conv.h - Conv + BN + sum + eltwise -*- C++ -*-===//
//
// The convolution family of the compute core: a 2-D convolution (plain,
// grouped or depthwise; any strides, pads and dilations) with its
// BatchNormalization folded into weights and bias, then an optional
// residual added through oneDNN's `sum` post-op, then optional activations
// as eltwise post-ops. It takes plain descriptions (dims, attributes, float
// weights) so that it does not depend on the graph IR or the plugin SDK.
//
// No silent slow kernels: where oneDNN would run a shape in the spec's
// formats only with its reference loops (`ref:any`), prepare() picks
// another layout for the activations that gets a JIT kernel, and reorders
// into and out of it inside execute() (chooseFormulation). Where it would
// run its gemm-based convolution (an sgemm that packs the weights on every
// call), a small plain convolution runs as an im2col and a matmul with the
// weights reordered once.
//
// Invariants: the spec is fixed at construction; weights are reordered to
// the primitive's preferred (blocked) layout and primitives created once per
// input shape, on the first prepare() for that shape, and cached; execute()
// is thread-safe and allocates nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "activation.h"
#include "tensor_format.h"

namespace subgraph::onednn {

/// What one fused convolution computes.
struct ConvSpec {
  int64_t inChannels = 0;   ///< C of the input.
  int64_t outChannels = 0;  ///< Number of filters.
  int64_t groups = 1;       ///< 1: plain, inChannels: depthwise.
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> dilations{1, 1};   ///< ONNX convention: 1 means none.
  std::array<int64_t, 4> pads{0, 0, 0, 0};  ///< ONNX order: top, left, bottom, right.
  /// [outChannels, inChannels / groups, kH, kW], row-major.
  std::vector<float> weights;
  /// [outChannels], or empty for none.
  std::vector<float> bias;
  /// Add a residual (in the output's format) before the activations.
  bool sumResidual = false;
  /// Applied in order after the sum.
  std::vector<Activation> activations;
  Format srcFormat = Format::kPlain;
  Format dstFormat = Format::kBlocked16;
  /// Let an fp32 3x3 stride-1 undilated ungrouped convolution use oneDNN's
  /// Winograd algorithm (F(2x2, 3x3) on AVX-512): about 2.25x fewer
  /// multiplications for slightly larger rounding error. Where oneDNN has
  /// no Winograd kernel for the shape, prepare() uses the direct one.
  bool winograd = false;
};

/// True when `spec` has the shape oneDNN's fp32 Winograd convolution takes
/// (3x3 kernel, stride 1, no dilation, one group, fp32 activations).
bool winogradShape(const ConvSpec& spec);

/// Folds y = scale * (x - mean) / sqrt(var + eps) + shift into the conv's
/// weights and bias (inference BatchNormalization). All spans have
/// outChannels elements.
void foldBatchNorm(ConvSpec& spec, std::span<const float> scale, std::span<const float> shift,
                   std::span<const float> mean, std::span<const float> var, float epsilon);

/// A ready-to-run fused convolution; see the file comment.
class FusedConv {
 public:
  /// Checks the spec; throws std::invalid_argument naming what is wrong.
  explicit FusedConv(ConvSpec spec);
  ~FusedConv();

  /// The spec.
  const ConvSpec& spec() const { return spec_; }
  /// Output dims for NCHW input dims; throws std::invalid_argument if the
  /// input does not fit (wrong rank or channels, empty output).
  std::vector<int64_t> outputDims(std::span<const int64_t> inputDims) const;
  /// Creates the primitive for `inputDims` and reorders the weights for it,
  /// once per distinct dims; returns the scratchpad bytes execute() needs.
  /// Throws dnnl::error if oneDNN cannot take the shape.
  size_t prepare(std::span<const int64_t> inputDims);
  /// The oneDNN implementation prepare() chose for `inputDims` (e.g.
  /// "jit_fp32_wino_2x3:avx512_core"), for tests and profiles; empty if
  /// the dims were not prepared. It starts with "ref" only where no
  /// layout of the activations gets oneDNN off its reference loops, and
  /// ends with "(activations reordered to its layout)" where the primitive
  /// runs in a layout other than the spec's formats.
  std::string implementation(std::span<const int64_t> inputDims) const;
  /// Runs on prepared dims. `residual` (in dstFormat) is read when the spec
  /// sums one; it may equal `dst`. `scratch` holds prepare()'s bytes.
  void execute(std::span<const int64_t> inputDims, const void* src, const void* residual, void* dst,
               void* scratch) const;

 private:
  struct Prepared;
  std::shared_ptr<const Prepared> find(std::span<const int64_t> inputDims) const;
  /// The primitive descriptor for `inputDims` that avoids oneDNN's
  /// reference implementation where a layout change can (see the .cpp);
  /// records the reorders that layout change needs in `prepared`.
  dnnl::convolution_forward::primitive_desc chooseFormulation(
      Prepared& prepared, std::span<const int64_t> inputDims) const;
  /// Prepares the conv as patches x weights (see the .cpp's
  /// usePatchMatMul) instead of `pd`.
  size_t preparePatches(std::span<const int64_t> inputDims, std::shared_ptr<Prepared> prepared,
                        const dnnl::convolution_forward::primitive_desc& pd);
  void runPatches(const Prepared& p, std::span<const int64_t> inputDims, const float* src,
                  float* dst, std::byte* scratch) const;
  /// Caches `prepared` for `inputDims`; returns its scratch bytes.
  size_t store(std::span<const int64_t> inputDims, std::shared_ptr<Prepared> prepared);

  ConvSpec spec_;
  mutable std::mutex mutex_;
  std::map<std::vector<int64_t>, std::shared_ptr<const Prepared>> prepared_;
};

}  // namespace subgraph::onednn
