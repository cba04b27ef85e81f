//===- plugins/onednn/backend/layout_copies.h - oneDNN's formats as plugin layouts -*- C++ -*-===//
//
// Internal to the onednn plugin: registers the compute core's activation
// formats (nChw16c, and nhwc bf16 for the bf16 mode) as the plugin's own
// layouts, with the reorders between them and plain row-major as the
// plugin's copies. The host then keeps a value in a blocked format from
// one oneDNN region to the next and reorders it only where it enters or
// leaves oneDNN.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <subgraph/sdk/plugin.h>

namespace subgraph::onednn {

/// Adds the layouts and the six reorders (plain, nChw16c and nhwc bf16,
/// each to each other) to `plugin`, and hands the layouts to
/// region_support's layoutOf().
void registerLayouts(sdk::Plugin& plugin);

}  // namespace subgraph::onednn
