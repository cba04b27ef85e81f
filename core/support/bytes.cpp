//===- core/support/bytes.cpp - Byte counts for people --------------------===//
//
// See subgraph/support/bytes.h.
//
//===----------------------------------------------------------------------===//
#include "subgraph/support/bytes.h"

#include <fmt/format.h>

#include <iterator>

namespace subgraph {

std::string formatBytes(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

}  // namespace subgraph
