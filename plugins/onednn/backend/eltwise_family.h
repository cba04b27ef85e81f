//===- plugins/onednn/backend/eltwise_family.h - Element-wise chain regions -*- C++ -*-===//
//
// Internal to the onednn backend: the element-wise family:
// chains of up to four unary activations (Relu, Sigmoid, Tanh, Clip,
// HardSigmoid, HardSwish, LeakyRelu) and scalar Mul/Div/Add steps left over
// by the other families, run as a sequence of in-place eltwise primitives.
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
std::vector<std::pair<std::string, partition::PropertyFactory>> eltwiseProperties();

/// Creates the kernel of the family's regions.
runtime::KernelCreator eltwiseKernelCreator();

}  // namespace subgraph::onednn
