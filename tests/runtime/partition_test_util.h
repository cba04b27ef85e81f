//===- tests/runtime/partition_test_util.h - Partitioning for runtime tests -===//
//
// The runtime never partitions (subgraph::api does, before load); tests of
// regions on the runtime partition a loaded session's graph with the
// built-in partitioner through Session::partition's rewrite hook.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "subgraph/partition/backend_registry.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/partition/partitioner.h"
#include "subgraph/runtime/session.h"

namespace subgraph::runtime {

/// Partitions `session`'s loaded graph for the built-in partition backends
/// `names` (highest priority first); the report's JSON into `json` if set.
inline Status partitionWith(Session& session, const std::vector<std::string>& names,
                            std::string* json = nullptr) {
  partition::registerBuiltinBackends();
  return session.partition([&](Graph& graph) -> Status {
    StatusOr<partition::PartitionReport> report = partition::partitionGraph(graph, names);
    if (!report.isOk()) return report.status();
    if (json) *json = partition::reportToJson(report.value());
    return Status::ok();
  });
}

}  // namespace subgraph::runtime
