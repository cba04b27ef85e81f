//===- plugins/onednn/backend/matmul_family.h - MatMul/Gemm + bias + activation regions -*- C++
//-*-===//
//
// Internal to the onednn plugin: the matmul fusion family. Its properties
// propose, longest first: MatMul by constant weights -> Add bias ->
// [Add residual] -> [activation] (Gelu included: the gelu-idiom pass makes
// one op of every exporter's spelling); Gemm -> [activation];
// MatMul (constant or run-time B) -> [Div or Mul by a scalar]. Its kernel
// runs each as one oneDNN matmul with bias, `sum` and eltwise post-ops.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family matmulFamily();

}  // namespace subgraph::onednn
