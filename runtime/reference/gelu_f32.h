//===- runtime/reference/gelu_f32.h - GELU on f32, vectorized -*- C++ -*-===//
//
// Internal to the reference backend. GELU is a transformer's one
// transcendental op per element of its widest activation (BERT's
// [seq, 4 * hidden]); with libm's erff, one per element, it took longer
// than the matmul before it (RoBERTa quantized: 0.55 ms a layer). These
// loops compute it with a rational approximation of erf (fitted for
// subgraph; within 5 ulp of erf in f32) and Cephes' exponential, written
// without calls or branches so that each ISA clone vectorizes them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace subgraph::runtime::reference {

/// y[i] = x[i] / 2 * (1 + erf(x[i] / sqrt 2)) for i in [0, n).
void geluErfF32(const float* x, float* y, int64_t n);

/// y[i] = x[i] / 2 * (1 + tanh(sqrt(2 / pi) * (x[i] + 0.044715 x[i]^3))),
/// computed as x[i] / (1 + e^(-2 * that tanh argument)).
void geluTanhF32(const float* x, float* y, int64_t n);

}  // namespace subgraph::runtime::reference
