//===- api/mpi_wire.h - The bytes one pipeline message carries -*- C++ -*-===//
//
// Internal to subgraph::api: how MpiPipelinedSession puts one micro-batch's
// values into one message and back. Little-endian fields in order: a magic
// word, the kind (values, or the end of the session), the micro-batch's
// index, whether it is the last of its run, the tensor count; then per
// tensor its name, element type, dims and bytes. decode() trusts nothing:
// a message that does not parse, or whose sizes disagree, is an error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "stage_runs.h"

namespace subgraph::api::detail {

/// What a message is.
enum class WireKind : uint32_t {
  kValues = 1,  ///< One micro-batch's values.
  kEnd = 2,     ///< Rank 0 closed the session: no more runs.
};

/// One message, decoded.
struct WireMessage {
  WireKind kind = WireKind::kValues;
  uint64_t index = 0;  ///< The micro-batch within its run.
  bool last = false;   ///< The run's last micro-batch.
  Values values;
};

/// The values of `values` named in `keep` as one message; kInvalidArgument
/// for a string tensor or a message past `maxBytes`.
StatusOr<std::vector<std::byte>> encodeWire(WireKind kind, uint64_t index, bool last,
                                            const Values& values, const std::set<std::string>& keep,
                                            size_t maxBytes);

/// A message back; kInvalidArgument naming what is wrong when it does not
/// parse.
StatusOr<WireMessage> decodeWire(std::span<const std::byte> bytes);

}  // namespace subgraph::api::detail
