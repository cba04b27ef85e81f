//===- plugins/onednn/backend/resize_family.h - Resize regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the resize family. 4-D ONNX Resize by
// constant whole-number factors on the spatial dims, linear (half_pixel) or
// nearest (asymmetric, floor), kept in the activations' oneDNN layout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family resizeFamily();

}  // namespace subgraph::onednn
