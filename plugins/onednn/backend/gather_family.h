//===- plugins/onednn/backend/gather_family.h - Gather regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the gather family. A Gather of f32 data
// (an embedding table, or a run-time tensor as ViT's pooler gathers its
// first token), or of an 8-bit constant table followed by its
// DequantizeLinear (a dynamically quantized model's embeddings): row
// copies on the OpenMP team (kernels/gather.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family gatherFamily();

}  // namespace subgraph::onednn
