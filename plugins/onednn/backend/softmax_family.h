//===- plugins/onednn/backend/softmax_family.h - Softmax regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the Softmax family: one Softmax
// (opset 13 semantics, one axis) per region, on plain f32 tensors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family softmaxFamily();

}  // namespace subgraph::onednn
