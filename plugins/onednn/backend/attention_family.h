//===- plugins/onednn/backend/attention_family.h - Attention regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the Attention family. Attention (opset
// 23, as the attention idiom pass writes it for every exporter's spelling)
// runs as one fused kernel (kernels/attention.h), the heads read through
// strides; `attention_packed` also takes the Split that cuts Q, K and V
// out of one projection, so they are read as column slices of it and the
// Split's copies go.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family attentionFamily();

}  // namespace subgraph::onednn
