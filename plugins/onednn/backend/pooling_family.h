//===- plugins/onednn/backend/pooling_family.h - Pooling regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the pooling family. MaxPool,
// AveragePool and their global forms on 4-D tensors, in the blocked layout
// so that a pool between convolutions costs no reorder.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family poolingFamily();

}  // namespace subgraph::onednn
