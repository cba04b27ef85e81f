//===- plugins/onednn/backend/channel_scale_family.h - Channel scaling -*- C++ -*-===//
//
// Internal to the onednn backend: the channel-scale family. Mul of a 4-D
// f32 activation [N, C, H, W] by a runtime per-channel factor
// [N or 1, C, 1, 1] (the end of a squeeze-and-excitation block), kept in
// the activations' oneDNN layout.
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
std::vector<std::pair<std::string, partition::PropertyFactory>> channelScaleProperties();

/// Creates the kernel of the family's regions.
runtime::KernelCreator channelScaleKernelCreator();

}  // namespace subgraph::onednn
