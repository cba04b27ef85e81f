//===- runtime/engine/session_partition.cpp - Session::partition(names) ---===//
//
// The session's built-in partitioning step, which calls the partitioner
// layer (subgraph::partition) when the runtime is built with it. Without it,
// partition(names) reports that plainly and the session runs unpartitioned.
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/session.h"

#ifdef SUBGRAPH_RUNTIME_HAVE_PARTITION
#include "subgraph/partition/backend_registry.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/partition/partitioner.h"
#endif

namespace subgraph::runtime {

bool Session::hasPartitioner() {
#ifdef SUBGRAPH_RUNTIME_HAVE_PARTITION
  return true;
#else
  return false;
#endif
}

Status Session::partition(const std::vector<std::string>& backendNames) {
#ifdef SUBGRAPH_RUNTIME_HAVE_PARTITION
  ::subgraph::partition::registerBuiltinBackends();
  std::string json;
  Status st = partition([&](Graph& graph) -> Status {
    StatusOr<::subgraph::partition::PartitionReport> report =
        ::subgraph::partition::partitionGraph(graph, backendNames);
    if (!report.isOk()) return report.status();
    json = ::subgraph::partition::reportToJson(report.value());
    return Status::ok();
  });
  if (st.isOk()) setPartitionReportJson(std::move(json));
  return st;
#else
  (void)backendNames;
  return Status::error(StatusCode::kUnsupported,
                       "Session::partition: this build of the runtime has no partitioner "
                       "(subgraph::partition was not built)");
#endif
}

}  // namespace subgraph::runtime
