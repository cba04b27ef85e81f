//===- plugins/onednn/backend/conv_family.h - Conv/BN/sum/activation regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the convolution fusion family. Its
// properties propose Conv -> [BatchNormalization] -> [Add residual] ->
// [activation] regions (plain, grouped and depthwise convs alike), longest
// first; its kernel runs such a region as one oneDNN convolution with the BN
// folded into the weights, the residual as a `sum` post-op and the
// activation as eltwise post-ops, in blocked layout.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions.
Family convFamily();

}  // namespace subgraph::onednn
