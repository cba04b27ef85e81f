//===- plugins/onednn/kernels/concat.h - Concatenation -*- C++ -*-===//
//
// The Concat family of the compute core: plain f32 tensors joined along one
// axis. A plain concat is rows of contiguous copies, which the plugin runs
// itself in pieces on the OpenMP team: oneDNN 2.6's concat primitive
// ("simple:any") copied them an element per call, at a third of memcpy's
// speed on the large activations of segmentation networks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace subgraph::onednn {

/// Concatenation along one axis.
class Concat {
 public:
  /// `axis` may be negative.
  explicit Concat(int64_t axis) : axis_(axis) {}
  /// Output dims; throws std::invalid_argument if the inputs do not fit.
  std::vector<int64_t> outputDims(std::span<const std::vector<int64_t>> inputs) const;
  /// Checks the shapes; returns scratch bytes (none).
  size_t prepare(std::span<const std::vector<int64_t>> inputs);
  /// Runs on shapes outputDims accepted.
  void execute(std::span<const std::vector<int64_t>> inputs, std::span<const float* const> srcs,
               float* dst, void* scratch) const;

 private:
  /// Elements per copy: pieces small enough to share among the team.
  static constexpr int64_t kPieceElements = 1 << 16;
  int64_t normalizedAxis(size_t rank) const;

  int64_t axis_;
};

}  // namespace subgraph::onednn
