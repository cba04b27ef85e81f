//===- plugins/onednn/kernels/gather.cpp - Gather and embedding lookups ---===//
//
// See gather.h. The output is [before axis][index][after axis]; each
// (outer, index) pair is one contiguous copy of the elements after the
// axis (an embedding's row), or its dequantization.
//
//===----------------------------------------------------------------------===//
#include "gather.h"

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

namespace subgraph::onednn {
namespace {

int64_t product(std::span<const int64_t> dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

size_t axisOf(const GatherSpec& spec, size_t rank) {
  const int64_t axis = spec.axis < 0 ? spec.axis + static_cast<int64_t>(rank) : spec.axis;
  if (axis < 0 || axis >= static_cast<int64_t>(rank))
    throw std::invalid_argument("gather: the axis is out of range");
  return static_cast<size_t>(axis);
}

int64_t indexAt(const GatherSpec& spec, const void* indices, int64_t j) {
  return spec.indices64 ? static_cast<const int64_t*>(indices)[j]
                        : static_cast<const int32_t*>(indices)[j];
}

void dequantizeRow(const GatherSpec& spec, const uint8_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t q = spec.dataSigned ? static_cast<int32_t>(static_cast<int8_t>(src[i]))
                                      : static_cast<int32_t>(src[i]);
    // q - zero is exact in float, so one rounding, as the reference's.
    dst[i] = static_cast<float>(q - spec.zero) * spec.scale;
  }
}

}  // namespace

std::vector<int64_t> gatherDims(const GatherSpec& spec, std::span<const int64_t> data,
                                std::span<const int64_t> indices) {
  const size_t axis = axisOf(spec, data.size());
  std::vector<int64_t> out(data.begin(), data.begin() + static_cast<ptrdiff_t>(axis));
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + static_cast<ptrdiff_t>(axis) + 1, data.end());
  return out;
}

void runGather(const GatherSpec& spec, std::span<const int64_t> dataDims, const void* data,
               std::span<const int64_t> indexDims, const void* indices, void* out) {
  const size_t axis = axisOf(spec, dataDims.size());
  const int64_t outer = product(dataDims, 0, axis), length = dataDims[axis];
  const int64_t inner = product(dataDims, axis + 1, dataDims.size());
  const int64_t count = product(indexDims, 0, indexDims.size());
  const size_t rowBytes = static_cast<size_t>(inner) * spec.elementBytes;
  const size_t outBytes = spec.dequantize ? static_cast<size_t>(inner) * sizeof(float) : rowBytes;
  std::atomic<int64_t> bad{INT64_MIN};
#pragma omp parallel for schedule(static) if (outer * count * inner > (1 << 15))
  for (int64_t t = 0; t < outer * count; ++t) {
    const int64_t o = t / count, j = t % count;
    int64_t k = indexAt(spec, indices, j);
    if (k < 0) k += length;
    if (k < 0 || k >= length) {
      bad = indexAt(spec, indices, j);
      continue;
    }
    const auto* src =
        static_cast<const uint8_t*>(data) + static_cast<size_t>(o * length + k) * rowBytes;
    auto* dst = static_cast<uint8_t*>(out) + static_cast<size_t>(t) * outBytes;
    if (spec.dequantize)
      dequantizeRow(spec, src, reinterpret_cast<float*>(dst), inner);
    else
      std::memcpy(dst, src, rowBytes);
  }
  if (bad != INT64_MIN)
    throw std::out_of_range("gather: index " + std::to_string(bad.load()) +
                            " is out of range for an axis of " + std::to_string(length));
}

}  // namespace subgraph::onednn
