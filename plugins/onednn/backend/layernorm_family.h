//===- plugins/onednn/backend/layernorm_family.h - LayerNormalization regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the LayerNormalization
// family: normalization over the last axis with constant scale and bias,
// taking the residual Add before it (ONNX Runtime's SkipLayerNormalization)
// when no matmul took that Add as its `sum` post-op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family layernormFamily();

}  // namespace subgraph::onednn
