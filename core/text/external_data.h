//===- core/text/external_data.h - Constants kept beside a .sg file -*- C++ -*-===//
//
// A large constant in a text graph can live in a binary file beside it,
// written `const f32[768, 768] external("bert.sg.data", 4096, 2359296)`:
// the file, the byte offset and the byte count. The printer appends such
// constants to one data file; the parser reads them back. The rules that
// keep a hostile .sg from reading what it should not follow ONNX's external
// data: a location is a relative path inside the .sg's directory (no
// absolute path, no ".."), it must be a regular file (never a FIFO or a
// device, which could block), every offset and count is checked against
// the file's size before anything is allocated, and a graph may not read
// more bytes than its data files hold (overlapping ranges).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "subgraph/support/status.h"

namespace subgraph::text {

/// Alignment of each constant in a data file, so a reader may map it.
inline constexpr uint64_t kExternalDataAlignment = 64;

/// Checks a location as written in a .sg file; "" if acceptable, else why
/// not (absolute, "..", empty, a control character).
std::string externalLocationProblem(const std::string& location);

/// Reads external constants for one parse, keeping the last file open.
class ExternalDataReader {
 public:
  /// `dir` is the .sg file's directory; empty refuses external data (a
  /// graph parsed from memory or stdin has no directory to read from).
  explicit ExternalDataReader(std::string dir) : dir_(std::move(dir)) {}

  /// The `bytes` bytes at `offset` of `location`, or a one-line error.
  StatusOr<std::vector<std::byte>> read(const std::string& location, uint64_t offset,
                                        uint64_t bytes);

 private:
  std::string dir_;
  // Bytes read so far, and the sizes of the distinct files opened: reading
  // more than the files hold means ranges overlap, which a hostile text
  // could repeat to multiply memory; the printer never writes that.
  uint64_t bytesRead_ = 0;
  uint64_t bytesAvailable_ = 0;
  std::set<std::string> seen_;
  std::string openLocation_;
  std::ifstream file_;
  uint64_t fileSize_ = 0;
};

}  // namespace subgraph::text
