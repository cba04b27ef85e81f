//===- plugins/onednn/backend/quantized_family.h - Dynamically quantized regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the dynamically quantized family, what
// ONNX Runtime's quantize_dynamic writes for each Conv and MatMul
// (DynamicQuantizeLinear, ConvInteger or MatMulInteger with constant
// weights, the Cast and the two scale Muls, then an optional constant bias
// Add and exact activations) as one int8 region on oneDNN's u8 x s8 GEMM.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family quantizedFamily();

}  // namespace subgraph::onednn
