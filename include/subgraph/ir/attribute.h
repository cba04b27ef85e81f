//===- subgraph/ir/attribute.h - Typed node attributes ----------*- C++ -*-===//
//
// Node attributes are typed values (int, float, string, their lists, a tensor,
// a subgraph or a list of subgraphs), mirroring ONNX's AttributeProto. The kind
// is explicit so that an empty list still knows its element type, which the
// text format and ONNX export both need to round-trip exactly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "subgraph/ir/tensor.h"

namespace subgraph {

class Graph;

/// The kind of an attribute value. Order matches the AttrValue variant.
enum class AttrKind : uint8_t {
  kInt,
  kFloat,
  kString,
  kInts,
  kFloats,
  kStrings,
  kTensor,
  kGraph,
  kGraphs,
};

/// "int", "float", "string", "ints", "floats", "strings", "tensor", "graph",
/// "graphs".
std::string_view attrKindName(AttrKind kind);

/// The payload of an attribute. Subgraphs are shared and treated as immutable
/// once attached; mutate a clone instead.
using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, Tensor,
                               std::shared_ptr<Graph>, std::vector<std::shared_ptr<Graph>>>;

/// A named, typed attribute value.
class Attribute {
 public:
  Attribute() = default;
  Attribute(std::string name, AttrValue value) : name_(std::move(name)), value_(std::move(value)) {}

  const std::string& name() const { return name_; }
  AttrKind kind() const { return static_cast<AttrKind>(value_.index()); }
  const AttrValue& value() const { return value_; }
  AttrValue& value() { return value_; }

  /// Typed accessors; each throws `Error` naming the attribute if the kind
  /// does not match.
  int64_t asInt() const;
  float asFloat() const;
  const std::string& asString() const;
  const std::vector<int64_t>& asInts() const;
  const std::vector<float>& asFloats() const;
  const std::vector<std::string>& asStrings() const;
  const Tensor& asTensor() const;
  const std::shared_ptr<Graph>& asGraph() const;
  const std::vector<std::shared_ptr<Graph>>& asGraphs() const;

  /// Structural equality; subgraphs compare by identity.
  friend bool operator==(const Attribute& a, const Attribute& b);
  /// Hash consistent with operator==.
  size_t hash() const;

 private:
  std::string name_;
  AttrValue value_;
};

}  // namespace subgraph
