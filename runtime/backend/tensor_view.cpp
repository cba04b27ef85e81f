//===- runtime/backend/tensor_view.cpp - Run-time tensor descriptions ----===//
//
// Sizes and printing of TensorDesc; see subgraph/runtime/tensor_view.h.
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/tensor_view.h"

namespace subgraph::runtime {

int64_t TensorDesc::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

size_t TensorDesc::byteSize() const {
  if (layout) return layout->byteSize(dtype, dims);
  return static_cast<size_t>(numElements()) * dataTypeSize(dtype);
}

std::string TensorDesc::toString() const {
  std::string s(dataTypeName(dtype));
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  s += "]";
  if (layout) {
    s += "@";
    s += layout->name();
  }
  return s;
}

std::vector<int64_t> contiguousStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

}  // namespace subgraph::runtime
