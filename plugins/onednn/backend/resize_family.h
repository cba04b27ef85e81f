//===- plugins/onednn/backend/resize_family.h - Resize regions -*- C++ -*-===//
//
// Internal to the onednn backend: the resize family. 4-D ONNX Resize by
// constant whole-number factors on the spatial dims, linear (half_pixel) or
// nearest (asymmetric, floor), kept in the activations' oneDNN layout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "subgraph/partition/backend_registry.h"
#include "subgraph/runtime/backend.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order.
std::vector<std::pair<std::string, partition::PropertyFactory>> resizeProperties();

/// Creates the kernel of the family's regions.
runtime::KernelCreator resizeKernelCreator();

}  // namespace subgraph::onednn
