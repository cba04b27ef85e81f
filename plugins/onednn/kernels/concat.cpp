//===- plugins/onednn/kernels/concat.cpp - Concatenation -===//
//
// Plain row copies on the OpenMP team; see concat.h.
//
//===----------------------------------------------------------------------===//
#include "concat.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace subgraph::onednn {

int64_t Concat::normalizedAxis(size_t rank) const {
  auto r = static_cast<int64_t>(rank);
  int64_t axis = axis_ < 0 ? axis_ + r : axis_;
  if (axis < 0 || axis >= r) throw std::invalid_argument("concat: axis out of range");
  return axis;
}

std::vector<int64_t> Concat::outputDims(std::span<const std::vector<int64_t>> inputs) const {
  if (inputs.empty()) throw std::invalid_argument("concat: no inputs");
  auto axis = static_cast<size_t>(normalizedAxis(inputs[0].size()));
  std::vector<int64_t> out = inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].size() != out.size())
      throw std::invalid_argument("concat: inputs differ in rank");
    for (size_t d = 0; d < out.size(); ++d)
      if (d != axis && inputs[i][d] != out[d])
        throw std::invalid_argument("concat: inputs differ outside the axis");
    out[axis] += inputs[i][axis];
  }
  return out;
}

size_t Concat::prepare(std::span<const std::vector<int64_t>> inputs) {
  outputDims(inputs);  // checks the shapes
  return 0;
}

void Concat::execute(std::span<const std::vector<int64_t>> inputs,
                     std::span<const float* const> srcs, float* dst, void*) const {
  const auto axis = static_cast<size_t>(normalizedAxis(inputs[0].size()));
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= inputs[0][d];
  for (size_t d = axis + 1; d < inputs[0].size(); ++d) inner *= inputs[0][d];
  // Each input is `outer` rows of its slice; the output row is their join.
  std::vector<int64_t> rowSize(inputs.size());
  int64_t outRow = 0;
  for (size_t i = 0; i < inputs.size(); ++i) outRow += rowSize[i] = inputs[i][axis] * inner;
  struct Piece {
    const float* src;
    float* dst;
    int64_t count;
  };
  std::vector<Piece> pieces;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t at = o * outRow;
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (int64_t e = 0; e < rowSize[i]; e += kPieceElements)
        pieces.push_back(
            {srcs[i] + o * rowSize[i] + e, dst + at + e, std::min(kPieceElements, rowSize[i] - e)});
      at += rowSize[i];
    }
  }
  const auto count = static_cast<int64_t>(pieces.size());
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < count; ++p)
    std::memcpy(pieces[static_cast<size_t>(p)].dst, pieces[static_cast<size_t>(p)].src,
                static_cast<size_t>(pieces[static_cast<size_t>(p)].count) * sizeof(float));
}

}  // namespace subgraph::onednn
