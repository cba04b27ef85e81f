//===- plugins/onednn/backend/concat_family.h - Concat regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the Concat family: one Concat of f32
// tensors per region, plain layout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family concatFamily();

}  // namespace subgraph::onednn
