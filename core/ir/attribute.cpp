//===- core/ir/attribute.cpp - Typed node attributes ----------------------===//
//
// Checked accessors and structural equality/hash for attributes. Equality is
// what node hashing, CSE and the generated classes' isEqual build on.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/attribute.h"

#include <cstring>
#include <functional>

#include "subgraph/support/status.h"

namespace subgraph {
namespace {

template <typename T>
const T& getAs(const Attribute& attr, AttrKind want) {
  if (const T* p = std::get_if<T>(&attr.value())) return *p;
  throw Error("attribute '" + attr.name() + "' is " + std::string(attrKindName(attr.kind())) +
              ", not " + std::string(attrKindName(want)));
}

void mix(size_t& h, size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

}  // namespace

std::string_view attrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kString: return "string";
    case AttrKind::kInts: return "ints";
    case AttrKind::kFloats: return "floats";
    case AttrKind::kStrings: return "strings";
    case AttrKind::kTensor: return "tensor";
    case AttrKind::kGraph: return "graph";
    case AttrKind::kGraphs: return "graphs";
  }
  return "unknown";
}

int64_t Attribute::asInt() const { return getAs<int64_t>(*this, AttrKind::kInt); }
float Attribute::asFloat() const { return getAs<float>(*this, AttrKind::kFloat); }
const std::string& Attribute::asString() const {
  return getAs<std::string>(*this, AttrKind::kString);
}
const std::vector<int64_t>& Attribute::asInts() const {
  return getAs<std::vector<int64_t>>(*this, AttrKind::kInts);
}
const std::vector<float>& Attribute::asFloats() const {
  return getAs<std::vector<float>>(*this, AttrKind::kFloats);
}
const std::vector<std::string>& Attribute::asStrings() const {
  return getAs<std::vector<std::string>>(*this, AttrKind::kStrings);
}
const Tensor& Attribute::asTensor() const { return getAs<Tensor>(*this, AttrKind::kTensor); }
const std::shared_ptr<Graph>& Attribute::asGraph() const {
  return getAs<std::shared_ptr<Graph>>(*this, AttrKind::kGraph);
}
const std::vector<std::shared_ptr<Graph>>& Attribute::asGraphs() const {
  return getAs<std::vector<std::shared_ptr<Graph>>>(*this, AttrKind::kGraphs);
}

bool operator==(const Attribute& a, const Attribute& b) {
  if (a.name_ != b.name_ || a.value_.index() != b.value_.index()) return false;
  // Floats compare bitwise so that NaN attributes equal themselves and
  // -0.0 differs from 0.0, as the text round-trip requires.
  if (const float* x = std::get_if<float>(&a.value_)) {
    float y = std::get<float>(b.value_);
    return std::memcmp(x, &y, sizeof(float)) == 0;
  }
  if (const auto* x = std::get_if<std::vector<float>>(&a.value_)) {
    const auto& y = std::get<std::vector<float>>(b.value_);
    return x->size() == y.size() &&
           (x->empty() || std::memcmp(x->data(), y.data(), x->size() * sizeof(float)) == 0);
  }
  return a.value_ == b.value_;
}

size_t Attribute::hash() const {
  size_t h = std::hash<std::string>()(name_);
  mix(h, value_.index());
  std::visit(
      [&h](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          mix(h, std::hash<int64_t>()(v));
        } else if constexpr (std::is_same_v<T, float>) {
          uint32_t bits;
          std::memcpy(&bits, &v, sizeof bits);
          mix(h, bits);
        } else if constexpr (std::is_same_v<T, std::string>) {
          mix(h, std::hash<std::string>()(v));
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          for (int64_t x : v) mix(h, std::hash<int64_t>()(x));
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          for (float x : v) {
            uint32_t bits;
            std::memcpy(&bits, &x, sizeof bits);
            mix(h, bits);
          }
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          for (const auto& x : v) mix(h, std::hash<std::string>()(x));
        } else if constexpr (std::is_same_v<T, Tensor>) {
          mix(h, v.hash());
        } else if constexpr (std::is_same_v<T, std::shared_ptr<Graph>>) {
          mix(h, std::hash<const void*>()(v.get()));
        } else {
          for (const auto& g : v) mix(h, std::hash<const void*>()(g.get()));
        }
      },
      value_);
  return h;
}

}  // namespace subgraph
