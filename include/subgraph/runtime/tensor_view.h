//===- subgraph/runtime/tensor_view.h - Run-time tensor descriptions -*- C++ -*-===//
//
// What a kernel sees of a tensor while a graph runs: a TensorDesc (element
// type, concrete dims, memory layout) and a TensorView (a desc plus a pointer
// into memory the runtime owns). Views never own memory; the memory plan of a
// frame does. Layouts other than plain row-major (e.g. a backend's blocked
// NCHW16c) are objects a backend defines, so the runtime can compute their
// sizes and insert layout-converting copies without knowing what they mean.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/types.h"

namespace subgraph::runtime {

/// A memory layout other than plain row-major. Backends define their own
/// (one static instance per layout) and compare layouts by address.
class Layout {
 public:
  virtual ~Layout() = default;
  /// A short stable name used in messages, e.g. "nchw4c".
  virtual std::string_view name() const = 0;
  /// Bytes that a tensor of `dtype` and logical `dims` occupies in this
  /// layout (blocked layouts pad a dim up to the block size).
  virtual size_t byteSize(DataType dtype, std::span<const int64_t> dims) const = 0;
};

/// The concrete type of a run-time tensor.
struct TensorDesc {
  DataType dtype = DataType::kFloat32;
  /// Logical dims (for a blocked layout, the dims of the plain tensor).
  std::vector<int64_t> dims;
  /// Null means plain row-major.
  const Layout* layout = nullptr;

  /// Product of dims; 1 for a scalar.
  int64_t numElements() const;
  /// Bytes the tensor occupies in its layout.
  size_t byteSize() const;
  bool isPlain() const { return layout == nullptr; }
  /// "f32[1, 3, 224, 224]", with "@<layout>" appended when not plain.
  std::string toString() const;

  friend bool operator==(const TensorDesc& a, const TensorDesc& b) {
    return a.dtype == b.dtype && a.dims == b.dims && a.layout == b.layout;
  }
};

/// A non-owning view of one tensor in memory. Inputs of a kernel are
/// read-only by contract; only outputs and scratch may be written.
class TensorView {
 public:
  TensorView() = default;
  TensorView(const TensorDesc* desc, void* data) : desc_(desc), data_(data) {}

  /// False for a default-constructed view (an omitted optional input).
  bool valid() const { return desc_ != nullptr; }
  const TensorDesc& desc() const { return *desc_; }
  DataType dtype() const { return desc_->dtype; }
  const std::vector<int64_t>& dims() const { return desc_->dims; }
  size_t rank() const { return desc_->dims.size(); }
  /// Dim `i`; negative `i` counts from the end.
  int64_t dim(int64_t i) const {
    return desc_->dims[static_cast<size_t>(i < 0 ? i + static_cast<int64_t>(rank()) : i)];
  }
  int64_t numElements() const { return desc_->numElements(); }
  size_t byteSize() const { return desc_->byteSize(); }

  /// Elements as T for reading; the caller must match dtype().
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }
  /// Elements as T for writing; only for outputs and scratch.
  template <typename T>
  T* mutableData() const {
    return static_cast<T*>(data_);
  }
  void* raw() const { return data_; }

 private:
  const TensorDesc* desc_ = nullptr;
  void* data_ = nullptr;
};

/// Row-major strides (in elements) of `dims`.
std::vector<int64_t> contiguousStrides(std::span<const int64_t> dims);

}  // namespace subgraph::runtime
