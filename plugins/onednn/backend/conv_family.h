//===- plugins/onednn/backend/conv_family.h - Conv/BN/sum/activation regions -*- C++ -*-===//
//
// Internal to the onednn backend: the convolution fusion family. Its
// properties propose Conv -> [BatchNormalization] -> [Add residual] ->
// [activation] regions (plain, grouped and depthwise convs alike), longest
// first; its kernel runs such a region as one oneDNN convolution with the BN
// folded into the weights, the residual as a `sum` post-op and the
// activation as eltwise post-ops, in blocked layout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "subgraph/partition/backend_registry.h"
#include "subgraph/runtime/backend.h"

namespace subgraph::onednn {

/// The family's property names, in registration (priority) order, each
/// paired with its factory.
std::vector<std::pair<std::string, partition::PropertyFactory>> convProperties();

/// Creates the kernel of any of the family's regions.
runtime::KernelCreator convKernelCreator();

}  // namespace subgraph::onednn
