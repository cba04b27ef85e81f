//===- plugins/onednn/backend/deconv_family.h - ConvTranspose regions -*- C++ -*-===//
//
// Internal to the onednn backend: the transposed-convolution family.
// ConvTranspose -> optional activation, with the activation as an eltwise
// post-op, on 4-D tensors in the activations' oneDNN layout.
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
std::vector<std::pair<std::string, partition::PropertyFactory>> deconvProperties();

/// Creates the kernel of the family's regions.
runtime::KernelCreator deconvKernelCreator();

}  // namespace subgraph::onednn
