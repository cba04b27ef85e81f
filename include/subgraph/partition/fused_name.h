//===- subgraph/partition/fused_name.h - Default fused-node naming -*- C++ -*-===//
//
// The defaults every fused node falls back on when its property names
// nothing: op `<property>` in domain `subgraph.<backend>`, and node name
// `<backend>_<property>_<id>`. The partitioner, defaultFusedNode() and the
// plugin host (the defaults a plugin's CreateSubgraphNode starts from) all
// build them here, so a fused node reads the same whichever made it: the
// ONNX exporter, the runtime and reports recognize fused ops by the domain
// prefix, and tests and users find regions by these names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace subgraph::partition {

/// The prefix of every fused op's domain; a node whose domain starts with
/// it is a fused node, and fused nodes are never fused again.
inline constexpr std::string_view kFusedDomainPrefix = "subgraph.";

/// The domain of `backend`'s fused ops: `subgraph.<backend>`. The op type
/// is the property's name.
std::string fusedDomain(std::string_view backend);

/// The default name of the fused node of region `regionId`, made by
/// `property` of `backend`: `<backend>_<property>_<id>`. Region ids are
/// unique across one partitionGraph() call, nested graphs included, so the
/// names are too.
std::string fusedNodeName(std::string_view backend, std::string_view property, int regionId);

}  // namespace subgraph::partition
