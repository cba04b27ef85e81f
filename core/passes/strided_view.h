//===- core/passes/strided_view.h - Data movement as strides ----*- C++ -*-===//
//
// Private to core/passes. Exporters move the heads of attention in and out
// of the batch dims with chains of Reshape and Transpose, spelled a
// different way by each exporter. Rather than matching each spelling, the
// attention idiom pass describes what a chain does: which element of the
// source buffer each element of the result reads, as dims and strides
// (numpy's view model). A chain that is not a pure view (a Reshape that
// would have to copy) has no description.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace subgraph::passes_detail {

/// Element [i0, i1, ...] reads the source buffer at sum(i_k * strides[k]).
struct StridedView {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;

  /// The row-major view of a buffer of `dims`.
  static StridedView contiguous(std::vector<int64_t> dims);
  /// The same elements as `dims` without a copy, or nullopt when the
  /// element counts differ or the reshape would have to copy.
  std::optional<StridedView> reshaped(const std::vector<int64_t>& newDims) const;
  /// Dims and strides permuted: result dim k is this view's dim perm[k];
  /// nullopt for an invalid permutation.
  std::optional<StridedView> permuted(const std::vector<int64_t>& perm) const;
  /// True when both read the same elements in the same order (strides of
  /// dims of size 1 do not matter).
  bool sameAs(const StridedView& other) const;
};

}  // namespace subgraph::passes_detail
