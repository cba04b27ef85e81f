//===- plugins/onednn/kernels/quantized_gemm.h - Dynamically quantized conv/matmul -*- C++ -*-===//
//
// The int8 core of the compute core: what ONNX Runtime's quantize_dynamic
// writes for every Conv and MatMul,
//
//   q, s, z = DynamicQuantizeLinear(x)
//   acc     = ConvInteger(q, W, z, zw)  or  MatMulInteger(q, W, z, zw)
//   y       = act(float(acc) * (s * sw) + bias)
//
// in one pass over the activations: x's range, its uint8 quantization, an
// integer product on oneDNN's u8 x s8 GEMM (VNNI or AMX), and the float
// epilogue. Every step computes what the ONNX ops compute, in the same
// order and precision, so the result equals the unfused graph's bit for
// bit (a one-ulp difference would move the next layer's quantization).
//
// oneDNN's integer GEMM multiplies a uint8 matrix by an int8 one, each
// with an offset (zero point) subtracted; the product keeps its exactness
// by a change of variables instead of a narrower type: a uint8 value v with
// zero point z is the int8 value v - 128 with zero point z - 128 (the same
// difference), and an int8 one is v + 128 as uint8. Convolutions are
// weights (uint8, left) by patches (int8, right): an im2col per tile of
// output pixels, on one thread per tile, whose products land in the output
// itself as [channels][pixels] and become floats in place. A matmul is
// the activations (uint8, left) by the weights (int8, right).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "activation.h"
#include "shape_cache.h"

namespace subgraph::onednn {

/// The weights of a quantized product as oneDNN's u8 x s8 gemm reads them:
/// the left operand (u8, [n][k]: a conv's output channels by its patches)
/// or the right one (int8 bytes, [k][n]: MatMul's B).
struct QuantizedWeights {
  /// The elements, each as the operand's type (uint8 or int8 bytes).
  std::vector<uint8_t> data;
  /// Subtracted from every element; the operand's type too.
  int32_t zero = 0;
  bool left = true;
  int64_t k = 0;  ///< Inputs per output.
  int64_t n = 0;  ///< Outputs (channels or columns).
};

/// Converts ONNX integer weights into QuantizedWeights for the `left` or
/// right operand. `w` holds n rows of k elements ([n][k] row-major, as Conv
/// weights [M, C, kH, kW]) when `rowsAreOutputs`, else k rows of n ([k][n],
/// as MatMul's B). `zeros` has one element, or one per output. Throws
/// std::invalid_argument when per-channel zero points leave a difference
/// the operand's type cannot hold.
QuantizedWeights quantizedWeights(std::span<const std::byte> w, bool isSigned, int64_t k, int64_t n,
                                  bool rowsAreOutputs, std::span<const int32_t> zeros, bool left);

/// What one dynamically quantized conv or matmul computes.
struct QuantizedGemmSpec {
  /// A 2-D convolution over NCHW (a 1-D one has H = 1; group 1), or a
  /// matmul of [..., M, K] by [K, N].
  bool conv = true;
  QuantizedWeights weights;
  /// Conv geometry; `inChannels * kernel[0] * kernel[1]` is weights.k.
  int64_t inChannels = 0;
  std::array<int64_t, 2> kernel{1, 1}, strides{1, 1}, dilations{1, 1};
  std::array<int64_t, 4> pads{0, 0, 0, 0};  ///< top, left, bottom, right
  /// The weights' scale: one element or one per output channel. The
  /// output scale is x's scale times it, rounded to float.
  std::vector<float> weightScale;
  /// Empty, one element or one per output channel.
  std::vector<float> bias;
  /// Applied in order; only the exactly computable ones (Relu, LeakyRelu,
  /// Clip).
  std::vector<Activation> activations;
};

/// True for the activations a quantized gemm applies (Relu, LeakyRelu,
/// Clip): their float result is the same in any implementation, which the
/// next layer's re-quantization needs.
bool isExactActivation(const Activation& activation);

/// True if oneDNN's u8 x s8 GEMM runs without intermediate saturation on
/// this CPU (AVX512-VNNI, AVX-VNNI or AMX). Without it the product would be
/// silently wrong for large operands, so the family declines.
bool hasExactInt8Gemm();

/// A ready-to-run dynamically quantized conv or matmul.
class QuantizedGemm {
 public:
  /// Checks the spec; throws std::invalid_argument.
  explicit QuantizedGemm(QuantizedGemmSpec spec);

  const QuantizedGemmSpec& spec() const { return spec_; }
  /// Output dims for input dims `x`; throws std::invalid_argument.
  std::vector<int64_t> outputDims(std::span<const int64_t> x) const;
  /// Scratch bytes for a run on `x` with the calling thread's OpenMP team.
  size_t scratchBytes(std::span<const int64_t> x) const;
  /// Runs on plain f32 tensors.
  void execute(std::span<const int64_t> xDims, const float* x, float* y, std::byte* scratch) const;

 private:
  struct Geometry;
  class Epilogue;
  Geometry geometry(std::span<const int64_t> x) const;
  void runConv(const Geometry& g, const uint8_t* q, uint8_t zero, const Epilogue& epilogue,
               float* y, std::byte* scratch) const;
  void runMatMul(const Geometry& g, const uint8_t* q, uint8_t zero, const Epilogue& epilogue,
                 float* y, std::byte* scratch) const;
  bool pointwise() const;
  /// A matmul whose weights need no zero point runs on oneDNN's matmul
  /// primitive (brgemm, weights packed once per row count), whose threads
  /// split the columns; the others on the BLAS-style gemm.
  bool usesPrimitive() const;
  struct Primitive;
  std::shared_ptr<const Primitive> primitive(int64_t rows) const;

  QuantizedGemmSpec spec_;
  std::shared_ptr<ShapeCache<Primitive>> primitives_;
};

}  // namespace subgraph::onednn
