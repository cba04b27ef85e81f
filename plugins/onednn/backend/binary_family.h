//===- plugins/onednn/backend/binary_family.h - Broadcasting binary regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the binary family. An Add, Sub, Mul, Div,
// Max or Min of two f32 tensors (run-time or constant, numpy broadcasting)
// that no other family took as a post-op: a transformer's embedding sums,
// a residual Add after a region with no sum post-op, ViT's position
// embedding. One oneDNN `binary` primitive (kernels/binary.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family binaryFamily();

}  // namespace subgraph::onednn
