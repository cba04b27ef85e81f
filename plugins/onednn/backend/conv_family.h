//===- plugins/onednn/backend/conv_family.h - Conv/BN/sum/activation regions -*- C++ -*-===//
//
// Internal to the onednn plugin: the convolution fusion family. Its two
// properties, one pattern with optional steps each, propose Conv ->
// [BatchNormalization] -> [Add residual] -> [one or two activations]
// (`conv`) or -> decomposed HardSwish (`conv_hswish`) regions (2-D or 1-D;
// plain, grouped and depthwise convs alike), taking every step that is
// there; its kernel runs such a region as
// one oneDNN convolution with the BN folded into the weights, the residual
// as a `sum` post-op and the activations as eltwise post-ops, in blocked
// layout (1-D: plain).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "region_support.h"

namespace subgraph::onednn {

/// The family's properties in registration (priority) order, and the
/// creator of the kernel of any of its regions, for a session whose
/// option `fusion` (all, act, bn, none) limits the steps a region takes.
Family convFamily(const sdk::KernelContext& session);

}  // namespace subgraph::onednn
