//===- plugins/onednn/backend/deconv_family.h - ConvTranspose regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the transposed-convolution family.
// ConvTranspose -> optional activation, with the activation as an eltwise
// post-op, on 4-D tensors in the activations' oneDNN layout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family deconvFamily();

}  // namespace subgraph::onednn
