//===- plugins/onednn/backend/eltwise_family.h - Element-wise chain regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the element-wise family:
// chains of up to four unary activations (Relu, Sigmoid, Tanh, Clip,
// HardSigmoid, HardSwish, LeakyRelu) and scalar Mul/Div/Add steps left over
// by the other families, run as a sequence of in-place eltwise primitives.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family eltwiseFamily();

}  // namespace subgraph::onednn
