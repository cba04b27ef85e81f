//===- plugins/onednn/kernels/select.h - Masks from conditions -*- C++ -*-===//
//
// Where(cond, a, b) with constant a and b: an attention mask made from the
// input's padding mask (0 where attended, a large negative elsewhere),
// reading the condition as the integers, bools or floats it came in (the
// Cast to bool before it is `!= 0`) and broadcasting it to the output, so
// the Expand before it costs no copy. A plain loop on the OpenMP team.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace subgraph::onednn {

/// How the condition's elements are read.
enum class ConditionType { kBool, kInt32, kInt64, kFloat32 };

/// y[i] = cond[broadcast(i)] != 0 ? whenTrue : whenFalse over `outDims`;
/// `condDims` broadcasts to them (right-aligned). Throws
/// std::invalid_argument when it does not.
void runSelect(ConditionType type, std::span<const int64_t> condDims, const void* cond,
               std::span<const int64_t> outDims, float whenTrue, float whenFalse, float* y);

/// The broadcast of `condDims` (and the scalars') over `targetDims`, or
/// throws std::invalid_argument.
std::vector<int64_t> selectDims(std::span<const int64_t> condDims,
                                std::span<const int64_t> targetDims);

}  // namespace subgraph::onednn
