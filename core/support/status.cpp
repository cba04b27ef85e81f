//===- core/support/status.cpp - Status code names ------------------------===//
//
// Stable names for StatusCode, used in CLI messages and JSON reports.
//
//===----------------------------------------------------------------------===//
#include "subgraph/support/status.h"

namespace subgraph {

const char* statusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid-argument";
    case StatusCode::kNotFound: return "not-found";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kLimitExceeded: return "limit-exceeded";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kUsage: return "usage";
    case StatusCode::kIo: return "io";
    case StatusCode::kPluginFailure: return "plugin-failure";
  }
  return "unknown";
}

}  // namespace subgraph
