//===- subgraph/ir/tensor.h - Constant tensor data --------------*- C++ -*-===//
//
// A dense, immutable tensor: initializers, tensor attributes and the results of
// constant folding. The byte buffer is shared between copies because weights
// are large and graphs are cloned often (partitioning keeps the region body).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "subgraph/ir/types.h"

namespace subgraph {

/// A dense tensor with a static shape and immutable, shared data.
///
/// Invariant: for numeric types, bytes().size() == numElements() *
/// dataTypeSize(dtype()); for kString, strings().size() == numElements().
class Tensor {
 public:
  /// An empty f32 scalar placeholder with no data.
  Tensor() = default;
  /// Takes ownership of raw little-endian bytes. Throws `Error` if the size
  /// does not match the shape.
  Tensor(DataType dtype, std::vector<int64_t> dims, std::vector<std::byte> bytes);
  /// A string tensor.
  Tensor(std::vector<int64_t> dims, std::vector<std::string> strings);

  /// Builds a tensor from typed values, e.g. Tensor::fromVector<float>({2}, {1, 2}).
  template <typename T>
  static Tensor fromVector(DataType dtype, std::vector<int64_t> dims,
                           const std::vector<T>& values) {
    std::vector<std::byte> bytes(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return Tensor(dtype, std::move(dims), std::move(bytes));
  }
  /// A tensor of `dims` where every element is `value` (converted to dtype).
  static Tensor splat(DataType dtype, std::vector<int64_t> dims, double value);

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t numElements() const;
  /// The tensor's type as an IR TensorType with a static shape.
  TensorType type() const;

  /// Raw bytes (empty for string tensors).
  std::span<const std::byte> bytes() const {
    return bytes_ ? std::span<const std::byte>(*bytes_) : std::span<const std::byte>();
  }
  /// Elements reinterpreted as T; the caller must match dtype().
  template <typename T>
  std::span<const T> data() const {
    auto b = bytes();
    return {reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T)};
  }
  /// Strings of a kString tensor.
  const std::vector<std::string>& strings() const;

  /// Element `i` converted to double (numeric types only).
  double elementAsDouble(int64_t i) const;
  /// Element `i` converted to int64 (numeric types only).
  int64_t elementAsInt(int64_t i) const;
  /// All elements as int64 (numeric types only); handy for shape tensors.
  std::vector<int64_t> toInt64Vector() const;

  /// Byte-wise equality of dtype, dims and data.
  friend bool operator==(const Tensor& a, const Tensor& b);
  /// Hash of dtype, dims and data.
  size_t hash() const;

 private:
  DataType dtype_ = DataType::kFloat32;
  std::vector<int64_t> dims_;
  std::shared_ptr<const std::vector<std::byte>> bytes_;
  std::shared_ptr<const std::vector<std::string>> strings_;
};

}  // namespace subgraph
