//===- plugins/host/plugin_adapters.h - Plugin tables as in-process APIs --===//
//
// Internal to subgraph::plugins: turns a plugin's C tables into the
// in-process interfaces the partitioner and the runtime already drive, so
// neither layer knows plugins exist.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/partition/pattern_selector.h"
#include "subgraph/plugin_abi.h"
#include "subgraph/plugins/plugin_loader.h"

namespace subgraph::plugins::adapters {

/// The host Pattern for a plugin's declarative pattern. Plugin predicates
/// call into `plugin`, which they keep loaded; with a null `plugin` (the
/// load-time check) they are left out.
StatusOr<partition::Pattern> buildPattern(const SgPatternDesc& desc,
                                          std::shared_ptr<const LoadedPlugin> plugin);

}  // namespace subgraph::plugins::adapters
