//===- plugins/onednn/backend/layernorm_family.h - LayerNormalization regions -*- C++ -*-===//
//
// Internal to the onednn backend: the LayerNormalization
// family: normalization over the last axis with constant scale and bias.
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
std::vector<std::pair<std::string, partition::PropertyFactory>> layernormProperties();

/// Creates the kernel of the family's regions.
runtime::KernelCreator layernormKernelCreator();

}  // namespace subgraph::onednn
