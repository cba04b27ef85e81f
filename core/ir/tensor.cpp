//===- core/ir/tensor.cpp - Constant tensor data --------------------------===//
//
// Construction checks that data size matches the shape, so every Tensor in
// the IR satisfies its invariant; importers rely on this to reject files whose
// raw data disagrees with their dims.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/tensor.h"

#include <bit>
#include <cmath>
#include <functional>

#include "subgraph/support/half.h"
#include "subgraph/support/status.h"

namespace subgraph {
namespace {

int64_t countElements(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error("tensor dimension " + std::to_string(d) + " is negative");
    if (d != 0 && count > INT64_MAX / d) throw Error("tensor element count overflows int64");
    count *= d;
  }
  return count;
}

template <typename T>
void fill(std::vector<std::byte>& bytes, int64_t n, T value) {
  auto* p = reinterpret_cast<T*>(bytes.data());
  for (int64_t i = 0; i < n; ++i) p[i] = value;
}

}  // namespace

Tensor::Tensor(DataType dtype, std::vector<int64_t> dims, std::vector<std::byte> bytes)
    : dtype_(dtype), dims_(std::move(dims)) {
  if (dtype == DataType::kString || dtype == DataType::kUndefined)
    throw Error("tensor of type " + std::string(dataTypeName(dtype)) + " cannot hold raw bytes");
  int64_t count = countElements(dims_);
  size_t want = static_cast<size_t>(count) * dataTypeSize(dtype);
  if (bytes.size() != want)
    throw Error("tensor data has " + std::to_string(bytes.size()) + " bytes but shape " +
                shapeToString(Shape(dims_.begin(), dims_.end())) + " of " +
                std::string(dataTypeName(dtype)) + " needs " + std::to_string(want));
  // Every bool tensor holds only 0 and 1. Kernels (Not as x ^ 1, And as
  // a & b, Equal, Cast) and the constant folder rely on it, and files can
  // hold any byte: without this, 2 would be "true" to one op and not to
  // another, and folding a constant could change the answer. This
  // constructor is the one way bytes enter a Tensor (ONNX initializers,
  // .npy and .pb inputs, text constants, kernel outputs), so one rule here
  // covers every entry point.
  if (dtype == DataType::kBool)
    for (std::byte& b : bytes) b = b != std::byte{0} ? std::byte{1} : std::byte{0};
  bytes_ = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
}

Tensor::Tensor(std::vector<int64_t> dims, std::vector<std::string> strings)
    : dtype_(DataType::kString), dims_(std::move(dims)) {
  int64_t count = countElements(dims_);
  if (static_cast<int64_t>(strings.size()) != count)
    throw Error("string tensor has " + std::to_string(strings.size()) +
                " strings but shape needs " + std::to_string(count));
  strings_ = std::make_shared<const std::vector<std::string>>(std::move(strings));
}

Tensor Tensor::splat(DataType dtype, std::vector<int64_t> dims, double value) {
  int64_t n = countElements(dims);
  std::vector<std::byte> bytes(static_cast<size_t>(n) * dataTypeSize(dtype));
  switch (dtype) {
    case DataType::kFloat32: fill<float>(bytes, n, static_cast<float>(value)); break;
    case DataType::kFloat64: fill<double>(bytes, n, value); break;
    case DataType::kFloat16:
      fill<uint16_t>(bytes, n, floatToHalfBits(static_cast<float>(value)));
      break;
    case DataType::kBFloat16:
      fill<uint16_t>(bytes, n, floatToBFloat16Bits(static_cast<float>(value)));
      break;
    case DataType::kInt8: fill<int8_t>(bytes, n, static_cast<int8_t>(value)); break;
    case DataType::kUInt8: fill<uint8_t>(bytes, n, static_cast<uint8_t>(value)); break;
    case DataType::kInt16: fill<int16_t>(bytes, n, static_cast<int16_t>(value)); break;
    case DataType::kUInt16: fill<uint16_t>(bytes, n, static_cast<uint16_t>(value)); break;
    case DataType::kInt32: fill<int32_t>(bytes, n, static_cast<int32_t>(value)); break;
    case DataType::kUInt32: fill<uint32_t>(bytes, n, static_cast<uint32_t>(value)); break;
    case DataType::kInt64: fill<int64_t>(bytes, n, static_cast<int64_t>(value)); break;
    case DataType::kUInt64: fill<uint64_t>(bytes, n, static_cast<uint64_t>(value)); break;
    case DataType::kBool: fill<uint8_t>(bytes, n, value != 0.0 ? 1 : 0); break;
    default: throw Error("cannot splat a tensor of type " + std::string(dataTypeName(dtype)));
  }
  return Tensor(dtype, std::move(dims), std::move(bytes));
}

int64_t Tensor::numElements() const { return countElements(dims_); }

TensorType Tensor::type() const { return TensorType(dtype_, Shape(dims_.begin(), dims_.end())); }

const std::vector<std::string>& Tensor::strings() const {
  static const std::vector<std::string> kEmpty;
  return strings_ ? *strings_ : kEmpty;
}

double Tensor::elementAsDouble(int64_t i) const {
  const std::byte* p = bytes().data();
  switch (dtype_) {
    case DataType::kFloat32: return reinterpret_cast<const float*>(p)[i];
    case DataType::kFloat64: return reinterpret_cast<const double*>(p)[i];
    case DataType::kFloat16: return halfBitsToFloat(reinterpret_cast<const uint16_t*>(p)[i]);
    case DataType::kBFloat16: return bfloat16BitsToFloat(reinterpret_cast<const uint16_t*>(p)[i]);
    case DataType::kInt8: return reinterpret_cast<const int8_t*>(p)[i];
    case DataType::kUInt8: return reinterpret_cast<const uint8_t*>(p)[i];
    case DataType::kInt16: return reinterpret_cast<const int16_t*>(p)[i];
    case DataType::kUInt16: return reinterpret_cast<const uint16_t*>(p)[i];
    case DataType::kInt32: return reinterpret_cast<const int32_t*>(p)[i];
    case DataType::kUInt32: return reinterpret_cast<const uint32_t*>(p)[i];
    case DataType::kInt64: return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
    case DataType::kUInt64: return static_cast<double>(reinterpret_cast<const uint64_t*>(p)[i]);
    case DataType::kBool: return reinterpret_cast<const uint8_t*>(p)[i] ? 1.0 : 0.0;
    default: throw Error("tensor of type " + std::string(dataTypeName(dtype_)) + " is not numeric");
  }
}

int64_t Tensor::elementAsInt(int64_t i) const {
  const std::byte* p = bytes().data();
  switch (dtype_) {
    case DataType::kInt64: return reinterpret_cast<const int64_t*>(p)[i];
    case DataType::kUInt64: return static_cast<int64_t>(reinterpret_cast<const uint64_t*>(p)[i]);
    case DataType::kInt32: return reinterpret_cast<const int32_t*>(p)[i];
    default: return static_cast<int64_t>(elementAsDouble(i));
  }
}

std::vector<int64_t> Tensor::toInt64Vector() const {
  int64_t n = numElements();
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = elementAsInt(i);
  return out;
}

bool operator==(const Tensor& a, const Tensor& b) {
  if (a.dtype_ != b.dtype_ || a.dims_ != b.dims_) return false;
  if (a.dtype_ == DataType::kString) return a.strings() == b.strings();
  auto x = a.bytes(), y = b.bytes();
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size()) == 0);
}

size_t Tensor::hash() const {
  size_t h = std::hash<int>()(static_cast<int>(dtype_));
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (int64_t d : dims_) mix(std::hash<int64_t>()(d));
  if (dtype_ == DataType::kString) {
    for (const auto& s : strings()) mix(std::hash<std::string>()(s));
  } else {
    auto b = bytes();
    mix(std::hash<std::string_view>()(
        std::string_view(reinterpret_cast<const char*>(b.data()), b.size())));
  }
  return h;
}

}  // namespace subgraph
