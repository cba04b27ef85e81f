//===- plugins/onednn/backend/transpose_family.h - Transpose regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the transpose family. A Transpose of an
// f32 tensor that no attention took as strides (ViT's patch embedding,
// [1, C, 196] -> [1, 196, C]): one oneDNN reorder (kernels/transpose.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family transposeFamily();

}  // namespace subgraph::onednn
