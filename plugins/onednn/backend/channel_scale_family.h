//===- plugins/onednn/backend/channel_scale_family.h - Channel scaling -*- C++ -*-===//
//
// Internal to the onednn plugin: the channel-scale family. Mul of a 4-D
// f32 activation [N, C, H, W] by a runtime per-channel factor
// [N or 1, C, 1, 1] (the end of a squeeze-and-excitation block), kept in
// the activations' oneDNN layout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family channelScaleFamily();

}  // namespace subgraph::onednn
