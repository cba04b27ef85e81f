//===- core/ir/types.cpp - Element types, dims and tensor types -----------===//
//
// Names and helpers for DataType, Dim and TensorType. The short dtype names
// ("f32", "i64") are the text format's spelling.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/types.h"

#include <array>
#include <limits>
#include <mutex>
#include <unordered_set>

namespace subgraph {
namespace {

struct DataTypeInfo {
  DataType type;
  std::string_view name;
  size_t size;
};

constexpr std::array<DataTypeInfo, 15> kDataTypes = {{
    {DataType::kUndefined, "undef", 0},
    {DataType::kFloat32, "f32", 4},
    {DataType::kUInt8, "u8", 1},
    {DataType::kInt8, "i8", 1},
    {DataType::kUInt16, "u16", 2},
    {DataType::kInt16, "i16", 2},
    {DataType::kInt32, "i32", 4},
    {DataType::kInt64, "i64", 8},
    {DataType::kString, "str", 0},
    {DataType::kBool, "bool", 1},
    {DataType::kFloat16, "f16", 2},
    {DataType::kFloat64, "f64", 8},
    {DataType::kUInt32, "u32", 4},
    {DataType::kUInt64, "u64", 8},
    {DataType::kBFloat16, "bf16", 2},
}};

const DataTypeInfo* findInfo(DataType type) {
  for (const auto& info : kDataTypes)
    if (info.type == type) return &info;
  return nullptr;
}

}  // namespace

size_t dataTypeSize(DataType type) {
  const DataTypeInfo* info = findInfo(type);
  return info ? info->size : 0;
}

std::string_view dataTypeName(DataType type) {
  const DataTypeInfo* info = findInfo(type);
  return info ? info->name : std::string_view("undef");
}

std::optional<DataType> parseDataType(std::string_view name) {
  for (const auto& info : kDataTypes)
    if (info.name == name) return info.type;
  return std::nullopt;
}

bool isFloatingPoint(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat16 || type == DataType::kBFloat16 ||
         type == DataType::kFloat64;
}

bool isInteger(DataType type) {
  switch (type) {
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kUInt16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUInt32:
    case DataType::kUInt64: return true;
    default: return false;
  }
}

const std::string* Dim::intern(std::string_view name) {
  if (name.empty()) return nullptr;
  // Never destroyed: dims in static objects may outlive any destructor
  // order. Set elements never move, so the pointers stay valid; lookups of
  // a name already interned still lock, but only Dim::symbol() interns,
  // which parsers and shape inference call, not graph copies.
  static std::mutex* mutex = new std::mutex;
  static auto* names = new std::unordered_set<std::string>;
  std::lock_guard<std::mutex> lock(*mutex);
  return &*names->emplace(name).first;
}

namespace {
struct ShapeHash {
  size_t operator()(const Shape& shape) const {
    size_t h = shape.size();
    for (const Dim& d : shape) {
      size_t x = d.isSymbolic() ? std::hash<const void*>()(&d.symbolName())
                                : std::hash<int64_t>()(d.size());
      h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    }
    return h;
  }
};
}  // namespace

OptionalShape::OptionalShape(const Shape& shape) {
  // As Dim::intern: never destroyed, elements never move. Only building a
  // type interns; copying one does not.
  static std::mutex* mutex = new std::mutex;
  static auto* shapes = new std::unordered_set<Shape, ShapeHash>;
  std::lock_guard<std::mutex> lock(*mutex);
  shape_ = &*shapes->insert(shape).first;
}

const std::string& Dim::emptyName() {
  static const std::string* empty = new std::string;
  return *empty;
}

std::string Dim::toString() const {
  if (isStatic()) return std::to_string(size_);
  if (isSymbolic()) return *symbol_;
  return "?";
}

std::optional<int64_t> staticElementCount(const Shape& shape) {
  int64_t count = 1;
  for (const Dim& d : shape) {
    if (!d.isStatic()) return std::nullopt;
    if (d.size() != 0 && count > std::numeric_limits<int64_t>::max() / d.size())
      return std::nullopt;
    count *= d.size();
  }
  return count;
}

bool isStaticShape(const Shape& shape) {
  for (const Dim& d : shape)
    if (!d.isStatic()) return false;
  return true;
}

std::string shapeToString(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += shape[i].toString();
  }
  out += "]";
  return out;
}

std::string TensorType::toString() const {
  if (isUnknown()) return "?";
  std::string out(dataTypeName(dtype));
  if (shape) out += shapeToString(*shape);
  return out;
}

}  // namespace subgraph
