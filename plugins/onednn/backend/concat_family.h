//===- plugins/onednn/backend/concat_family.h - Concat regions -*- C++ -*-===//
//
// Internal to the onednn backend: the Concat family: one Concat of f32
// tensors per region, plain layout.
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
std::vector<std::pair<std::string, partition::PropertyFactory>> concatProperties();

/// Creates the kernel of the family's regions.
runtime::KernelCreator concatKernelCreator();

}  // namespace subgraph::onednn
