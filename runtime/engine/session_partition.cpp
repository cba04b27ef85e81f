//===- runtime/engine/session_partition.cpp - Session::partition() --------===//
//
// The built-in partitioning step of a session. It exists only when the
// runtime is built together with the partitioner layer (subgraph::partition);
// otherwise Session::partition() reports that and the session runs the graph
// unpartitioned.
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/session.h"

namespace subgraph::runtime {

bool Session::hasPartitioner() {
#ifdef SUBGRAPH_RUNTIME_HAVE_PARTITION
  return true;
#else
  return false;
#endif
}

Status Session::partition() {
  return Status::error(StatusCode::kUnsupported,
                       "Session::partition: this build of the runtime has no partitioner "
                       "(subgraph::partition was not built)");
}

}  // namespace subgraph::runtime
