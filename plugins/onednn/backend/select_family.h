//===- plugins/onednn/backend/select_family.h - Mask regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the select family. Where(cond, a, b) with
// scalar f32 constants a and b, taking the Expand, the reshape and the
// Cast to bool before it when they are there: the attention mask
// HuggingFace's mask helpers make from the input's padding mask
// (kernels/select.h), read straight from the int64 input.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family selectFamily();

}  // namespace subgraph::onednn
