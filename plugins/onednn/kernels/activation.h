//===- plugins/onednn/kernels/activation.h - Activations as eltwise post-ops -*- C++ -*-===//
//
// The activations the fused kernels append to a convolution or matmul, in
// ONNX terms, and their translation to oneDNN eltwise post-ops. Some ONNX
// activations need two post-ops (HardSigmoid is a linear step and a clip,
// since oneDNN 2.6 has no hardsigmoid).
//
// NaN and infinities must come out as on every other backend. oneDNN 2.6's
// JIT computes Relu and Clip (and HardSigmoid's clip) with max/min
// instructions, which return the bound for a NaN: Relu(NaN) would be 0,
// where ONNX's max(0, x), the reference and the other backends give NaN.
// So a kernel takes oneDNN's post-ops only up to the first such activation
// (exactPostOps) and applies that one and the rest itself (applyOnHost),
// which reads each element once more. Its other activations (Sigmoid,
// Tanh, GELU, HardSwish, LeakyRelu, linear steps) keep NaN in oneDNN
// (tests/plugins/nan_inf_backends_test.cpp holds every backend to it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tensor_format.h"

namespace subgraph::onednn {

/// An ONNX activation with its parameters.
struct Activation {
  /// Which function.
  enum class Kind {
    kRelu,         ///< max(x, 0)
    kLeakyRelu,    ///< x >= 0 ? x : alpha * x
    kClip,         ///< min(max(x, alpha), beta)
    kSigmoid,      ///< 1 / (1 + exp(-x))
    kHardSigmoid,  ///< max(0, min(1, alpha * x + beta))
    kHardSwish,    ///< x * max(0, min(1, x / 6 + 1 / 2))
    kGeluErf,      ///< x / 2 * (1 + erf(x / sqrt(2)))
    kGeluTanh,     ///< x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
    kTanh,         ///< tanh(x)
    kLinear,       ///< alpha * x + beta (a Mul/Div/Add by a scalar)
  };
  Kind kind = Kind::kRelu;
  float alpha = 0.0f;
  float beta = 0.0f;

  /// Applies the activation to one value, as ONNX defines it (a NaN stays
  /// NaN); the oracle of the tests and the host part of a kernel.
  float apply(float x) const;
  /// "Relu", "Clip(0, 6)", ... for names and messages.
  std::string describe() const;
};

/// Appends `activation` to `ops` as one or two eltwise post-ops.
void appendEltwise(dnnl::post_ops& ops, const Activation& activation);

/// How many of `activations`, from the front, oneDNN applies as ONNX does
/// to NaN: the kernel appends those as post-ops and applies the rest with
/// applyOnHost.
size_t exactPostOps(std::span<const Activation> activations);

/// Applies `activations` in order, in place, to the tensor of `dims` at
/// `data` in `format` (f32, or bf16 for kNhwcBf16), skipping the zero
/// padding of nChw16c's last channel block. Parallel over OpenMP's threads,
/// as oneDNN's kernels are.
void applyOnHost(std::span<const Activation> activations, std::span<const int64_t> dims,
                 Format format, void* data);

/// A standalone eltwise primitive applying `activation` to tensors of
/// `data`'s desc (in place is allowed); for element-wise chains.
dnnl::eltwise_forward::primitive_desc eltwiseDesc(const Activation& activation,
                                                  const dnnl::memory::desc& data);

}  // namespace subgraph::onednn
