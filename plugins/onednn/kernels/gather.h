//===- plugins/onednn/kernels/gather.h - Gather and embedding lookups -*- C++ -*-===//
//
// Gather along one axis: the row copies of an embedding lookup (a table
// [vocabulary, hidden] read at run-time token ids), of ViT's pooler (the
// first token of each sequence), and, with a DequantizeLinear after it, of
// a dynamically quantized model's 8-bit embedding tables. Plain loops on
// the OpenMP team: oneDNN 2.6 has no gather primitive. Out-of-range
// indices are an error, never a read past the table.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace subgraph::onednn {

/// What one Gather computes.
struct GatherSpec {
  int64_t axis = 0;         ///< May be negative (from the back).
  size_t elementBytes = 4;  ///< Of the data.
  bool indices64 = true;    ///< int64 indices, else int32.
  /// Dequantize the gathered 8-bit elements: (q - zero) * scale in f32.
  bool dequantize = false;
  bool dataSigned = false;  ///< int8 data, else uint8 (with dequantize).
  float scale = 1.0f;
  int32_t zero = 0;
};

/// Output dims of gathering `data` at `indices`; throws
/// std::invalid_argument for an axis out of range.
std::vector<int64_t> gatherDims(const GatherSpec& spec, std::span<const int64_t> data,
                                std::span<const int64_t> indices);

/// Gathers; throws std::out_of_range naming the first index outside
/// [-n, n) of the axis.
void runGather(const GatherSpec& spec, std::span<const int64_t> dataDims, const void* data,
               std::span<const int64_t> indexDims, const void* indices, void* out);

}  // namespace subgraph::onednn
