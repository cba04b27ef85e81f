//===- plugins/onednn/kernels/select.cpp - Masks from conditions ----------===//
//
// See select.h. The output is walked as rows of its last dim; each row's
// condition row starts where the broadcast strides say (0 on a broadcast
// dim) and advances by 1, or by 0 when the last dim itself is broadcast.
//
//===----------------------------------------------------------------------===//
#include "select.h"

#include <algorithm>
#include <stdexcept>

namespace subgraph::onednn {
namespace {

template <typename T>
bool truthAt(const void* cond, int64_t i) {
  return static_cast<const T*>(cond)[i] != T(0);  // NaN != 0: true, as Cast to bool
}

bool truth(ConditionType type, const void* cond, int64_t i) {
  switch (type) {
    case ConditionType::kBool: return static_cast<const uint8_t*>(cond)[i] != 0;
    case ConditionType::kInt32: return truthAt<int32_t>(cond, i);
    case ConditionType::kInt64: return truthAt<int64_t>(cond, i);
    case ConditionType::kFloat32: return truthAt<float>(cond, i);
  }
  return false;
}

}  // namespace

std::vector<int64_t> selectDims(std::span<const int64_t> condDims,
                                std::span<const int64_t> targetDims) {
  const size_t rank = std::max(condDims.size(), targetDims.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t c = i + condDims.size() < rank ? 1 : condDims[i + condDims.size() - rank];
    const int64_t t = i + targetDims.size() < rank ? 1 : targetDims[i + targetDims.size() - rank];
    if (c != t && c != 1 && t != 1) throw std::invalid_argument("select: dims do not broadcast");
    out[i] = std::max(c, t);
  }
  return out;
}

void runSelect(ConditionType type, std::span<const int64_t> condDims, const void* cond,
               std::span<const int64_t> outDims, float whenTrue, float whenFalse, float* y) {
  const size_t rank = outDims.size();
  if (condDims.size() > rank) throw std::invalid_argument("select: the condition is larger");
  if (rank == 0) {
    y[0] = truth(type, cond, 0) ? whenTrue : whenFalse;
    return;
  }
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = condDims.size(); i-- > 0;) {
    const size_t o = i + rank - condDims.size();
    if (condDims[i] != outDims[o] && condDims[i] != 1)
      throw std::invalid_argument("select: the condition does not broadcast to the output");
    strides[o] = condDims[i] == 1 ? 0 : stride;
    stride *= condDims[i];
  }
  const int64_t inner = outDims[rank - 1];
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= outDims[i];
  const int64_t step = strides[rank - 1];
#pragma omp parallel for schedule(static) if (rows * inner > (1 << 16))
  for (int64_t r = 0; r < rows; ++r) {
    int64_t at = 0, rest = r;
    for (size_t i = rank - 1; i-- > 0;) {
      at += rest % outDims[i] * strides[i];
      rest /= outDims[i];
    }
    float* out = y + r * inner;
    for (int64_t j = 0; j < inner; ++j)
      out[j] = truth(type, cond, at + j * step) ? whenTrue : whenFalse;
  }
}

}  // namespace subgraph::onednn
