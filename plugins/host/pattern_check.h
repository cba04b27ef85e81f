//===- plugins/host/pattern_check.h - A plugin's patterns and seeds ----*- C++ -*-===//
//
// Internal to subgraph::plugins: a plugin's declarative pattern
// (SgPatternDesc) as the host's Pattern, and a selector's declared seed
// ops, each checked against the op registry so that a name that can never
// match is an error at load time, with MXNet's name or a did-you-mean.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "subgraph/partition/pattern_selector.h"
#include "subgraph/plugin_abi.h"
#include "subgraph/plugins/plugin_loader.h"

namespace subgraph::plugins::adapters {

/// The host Pattern for a plugin's declarative pattern. Plugin predicates
/// call into `plugin`, which they keep loaded; with a null `plugin` (the
/// load-time check) they are left out.
StatusOr<partition::Pattern> buildPattern(const SgPatternDesc& desc,
                                          std::shared_ptr<const LoadedPlugin> plugin);

/// The op types a selector property declares for its seeds
/// (SgPropertyDesc::seed_op_types), or none (every node may seed) where
/// the table predates the field or leaves it NULL. An error where they
/// could never seed anything as written: an empty list, an op no registry
/// knows, or seeds on a pattern property.
StatusOr<std::vector<std::string>> seedOpTypes(const SgPropertyDesc& desc);

}  // namespace subgraph::plugins::adapters
