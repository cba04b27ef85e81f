//===- plugins/onednn/backend/softmax_family.h - Softmax regions -*- C++ -*-===//
//
// Internal to the onednn backend: the Softmax family: one Softmax
// (opset 13 semantics, one axis) per region, on plain f32 tensors.
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
std::vector<std::pair<std::string, partition::PropertyFactory>> softmaxProperties();

/// Creates the kernel of the family's regions.
runtime::KernelCreator softmaxKernelCreator();

}  // namespace subgraph::onednn
