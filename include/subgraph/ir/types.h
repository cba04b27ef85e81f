//===- subgraph/ir/types.h - Element types, dims and tensor types -*- C++ -*-===//
//
// The type of an IR value: an element type plus an optional shape whose dims
// are static, symbolic (a name such as "N") or unknown. Element type numbers
// match ONNX's TensorProto.DataType so import and export are a cast.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace subgraph {

/// Element type of a tensor. Values equal ONNX TensorProto.DataType.
enum class DataType : uint8_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
};

/// Size of one element in bytes; 0 for kUndefined and kString.
size_t dataTypeSize(DataType type);
/// Short text name used by the text format, e.g. "f32", "i64", "bool".
std::string_view dataTypeName(DataType type);
/// Parses a short text name; returns nullopt for an unknown name.
std::optional<DataType> parseDataType(std::string_view name);
/// True for f16, bf16, f32 and f64.
bool isFloatingPoint(DataType type);
/// True for the signed and unsigned integer types (not bool).
bool isInteger(DataType type);

/// One dimension of a shape: a static size, a named symbol, or unknown.
///
/// Two words: graphs hold millions of shaped values, and a std::string per
/// dim made a 4-D shape 160 bytes. Symbol names are interned process-wide
/// (there are few of them: "N", "seq_len", ...), so a symbolic dim holds a
/// pointer to its name and equal symbols compare by pointer.
class Dim {
 public:
  /// An unknown dimension.
  Dim() = default;
  /// A static dimension; `size` must be >= 0.
  Dim(int64_t size) : size_(size) {}  // NOLINT: implicit from an integer
  /// A symbolic dimension such as "N" or "seq_len"; an empty name makes an
  /// unknown dimension.
  static Dim symbol(std::string_view name) {
    Dim d;
    d.symbol_ = intern(name);
    return d;
  }
  static Dim unknown() { return Dim(); }

  bool isStatic() const { return size_ >= 0; }
  bool isSymbolic() const { return size_ < 0 && symbol_ != nullptr; }
  bool isUnknown() const { return size_ < 0 && symbol_ == nullptr; }
  /// The static size; only meaningful when isStatic().
  int64_t size() const { return size_; }
  /// The symbol name; empty unless isSymbolic().
  const std::string& symbolName() const { return symbol_ ? *symbol_ : emptyName(); }

  /// "3", "N" or "?".
  std::string toString() const;

  friend bool operator==(const Dim& a, const Dim& b) {
    return a.size_ == b.size_ && a.symbol_ == b.symbol_;
  }
  friend bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }

 private:
  // The interned copy of `name` (stable for the life of the process), or
  // null for an empty name. Thread-safe.
  static const std::string* intern(std::string_view name);
  static const std::string& emptyName();

  int64_t size_ = -1;
  const std::string* symbol_ = nullptr;
};

/// A shape: a list of dims. A TensorType with no shape has unknown rank.
using Shape = std::vector<Dim>;

/// Number of elements of a fully static shape, or nullopt if any dim is not
/// static or the product overflows int64.
std::optional<int64_t> staticElementCount(const Shape& shape);
/// True if every dim is static.
bool isStaticShape(const Shape& shape);
/// "[1, 3, N, ?]".
std::string shapeToString(const Shape& shape);

/// An optional shape, interned: every OptionalShape holding the same dims
/// points at one immutable process-wide copy. Reading it works as with
/// std::optional<Shape> (`has_value()`, `*`, `->`); changing it means
/// assigning a new Shape, which is interned in turn.
///
/// Why: graphs hold millions of values but few distinct shapes. A Shape of
/// its own per value was a heap block of 64 bytes (4-D) that every copy of
/// a type allocated and every read of a large graph brought in from memory;
/// copying an interned shape copies a pointer, and comparing two compares
/// pointers. Interned shapes are never freed, like Dim's symbol names: the
/// table holds each distinct shape a process has seen once.
class OptionalShape {
 public:
  /// Rank unknown.
  OptionalShape() = default;
  OptionalShape(std::nullopt_t) {}                  // NOLINT: as std::optional
  OptionalShape(const Shape& shape);                // NOLINT: as std::optional
  OptionalShape(const std::optional<Shape>& shape)  // NOLINT: as std::optional
      : OptionalShape(shape ? OptionalShape(*shape) : OptionalShape()) {}
  OptionalShape(std::initializer_list<Dim> dims) : OptionalShape(Shape(dims)) {}

  bool has_value() const { return shape_ != nullptr; }
  explicit operator bool() const { return shape_ != nullptr; }
  /// The dims; the shape must be present.
  const Shape& operator*() const { return *shape_; }
  const Shape* operator->() const { return shape_; }
  /// The dims; throws std::bad_optional_access when the rank is unknown.
  const Shape& value() const {
    if (!shape_) throw std::bad_optional_access();
    return *shape_;
  }
  /// Makes the rank unknown.
  void reset() { shape_ = nullptr; }
  /// A copy as a std::optional, for code that edits the dims.
  std::optional<Shape> toOptional() const {
    return shape_ ? std::optional<Shape>(*shape_) : std::nullopt;
  }

  friend bool operator==(const OptionalShape& a, const OptionalShape& b) {
    return a.shape_ == b.shape_;
  }
  friend bool operator==(const OptionalShape& a, std::nullopt_t) { return !a.shape_; }
  friend bool operator==(const OptionalShape& a, const Shape& b) {
    return a.shape_ && *a.shape_ == b;
  }

 private:
  const Shape* shape_ = nullptr;  // interned; null: rank unknown
};

/// The type of a value: element type and an optional (ranked) shape.
struct TensorType {
  DataType dtype = DataType::kUndefined;
  OptionalShape shape;  ///< empty: rank unknown.

  TensorType() = default;
  TensorType(DataType t) : dtype(t) {}  // NOLINT: implicit from a dtype
  TensorType(DataType t, Shape s) : dtype(t), shape(std::move(s)) {}

  bool hasRank() const { return shape.has_value(); }
  size_t rank() const { return shape ? shape->size() : 0; }
  /// True when neither dtype nor shape is known.
  bool isUnknown() const { return dtype == DataType::kUndefined && !shape; }

  /// "f32[1, 3, N, ?]", "f32" (unknown rank) or "?" (nothing known).
  std::string toString() const;

  friend bool operator==(const TensorType& a, const TensorType& b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  }
  friend bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }
};

}  // namespace subgraph
