//===- plugins/onednn/kernels/activation.h - Activations as eltwise post-ops -*- C++ -*-===//
//
// The activations the fused kernels append to a convolution or matmul, in
// ONNX terms, and their translation to oneDNN eltwise post-ops. Some ONNX
// activations need two post-ops (HardSigmoid is a linear step and a clip,
// since oneDNN 2.6 has no hardsigmoid).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <string>

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

  /// Applies the activation to one value; the oracle of the tests.
  float apply(float x) const;
  /// "Relu", "Clip(0, 6)", ... for names and messages.
  std::string describe() const;
};

/// Appends `activation` to `ops` as one or two eltwise post-ops.
void appendEltwise(dnnl::post_ops& ops, const Activation& activation);

/// A standalone eltwise primitive applying `activation` to tensors of
/// `data`'s desc (in place is allowed); for element-wise chains.
dnnl::eltwise_forward::primitive_desc eltwiseDesc(const Activation& activation,
                                                  const dnnl::memory::desc& data);

}  // namespace subgraph::onednn
