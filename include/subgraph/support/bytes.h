//===- subgraph/support/bytes.h - Byte counts for people -----*- C++ -*-===//
//
// One way to print a byte count in messages ("512 B", "1.5 MiB"), for every
// layer that names a size or a limit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace subgraph {

/// `bytes` in B below 1 KiB, else in KiB, MiB, GiB, TiB or PiB with one
/// decimal (powers of 1024): "512 B", "1.5 MiB", "1.0 GiB".
std::string formatBytes(uint64_t bytes);

}  // namespace subgraph
