//===- plugins/onednn/backend/pooling_family.h - Pooling regions -*- C++ -*-===//
//
// Internal to the onednn backend: the pooling family. MaxPool,
// AveragePool and their global forms on 4-D tensors, in the blocked layout
// so that a pool between convolutions costs no reorder.
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
std::vector<std::pair<std::string, partition::PropertyFactory>> poolingProperties();

/// Creates the kernel of the family's regions.
runtime::KernelCreator poolingKernelCreator();

}  // namespace subgraph::onednn
