//===- subgraph/ir/node.h - Operation nodes ---------------------*- C++ -*-===//
//
// A Node applies one op to input Values and defines output Values. Built-in
// ops are allocated as their generated typed class (ConvNode, ReluNode, ...),
// which adds typed accessors but no data, so `isa<ConvNode>(n)` and
// `dyn_cast<ConvNode>(n)` work on any node. Only Graph mutates a node's
// inputs and outputs, which keeps use lists consistent.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/container/small_vector.hpp>
#include <boost/container/vector.hpp>

#include "subgraph/ir/attribute.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/ir/value.h"

namespace subgraph {

/// Stable identifier of a node within its graph; never reused.
using NodeId = uint32_t;

/// A node's attribute list: a vector with 32-bit size and capacity, 16
/// bytes instead of std::vector's 24, which keeps Node at 128 bytes (see its
/// fields).
using AttributeList = boost::container::vector<
    Attribute, void, boost::container::vector_options_t<boost::container::stored_size<uint32_t>>>;

/// A node's input list: a vector with 32-bit size and capacity, 16 bytes
/// (see Node's fields).
using InputList = boost::container::vector<
    Value*, void, boost::container::vector_options_t<boost::container::stored_size<uint32_t>>>;

/// A node's output list, with room for one output inside the node: nearly
/// every node has one, and a pass over a large graph then finds it in the
/// node's own cache lines instead of a heap block of its own.
using OutputList = boost::container::small_vector<Value*, 1>;

/// An operation in the graph.
class Node {
 public:
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  NodeId id() const { return id_; }
  Graph* graph() const { return graph_; }

  /// The interned (domain, op) key of this node.
  const OpKey& opKey() const { return *op_; }
  /// The op name, e.g. "Conv".
  const std::string& opType() const { return op_->name; }
  /// The op domain; "" for ONNX's default domain.
  const std::string& domain() const { return op_->domain; }
  /// "Conv" or "onednn.ConvBnRelu".
  std::string qualifiedOpType() const { return op_->qualifiedName(); }
  /// The op's schema, or null for an op nobody has defined.
  const OpSchema* schema() const { return op_->schema.load(std::memory_order_acquire); }

  /// Human-given name (ONNX node name); may be empty.
  const std::string& name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }
  /// The name if set, else "#<id>"; for messages.
  std::string displayName() const;

  /// Inputs in order; an omitted optional input is null.
  std::span<Value* const> inputs() const { return {inputs_.data(), inputs_.size()}; }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t numInputs() const { return inputs_.size(); }
  /// Outputs in order; never null.
  std::span<Value* const> outputs() const { return {outputs_.data(), outputs_.size()}; }
  Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }
  size_t numOutputs() const { return outputs_.size(); }

  /// Attributes in insertion order.
  std::span<const Attribute> attributes() const { return {attrs_.data(), attrs_.size()}; }
  /// The attribute named `name`, or null.
  const Attribute* attr(std::string_view name) const;
  bool hasAttr(std::string_view name) const { return attr(name) != nullptr; }
  /// Adds or replaces an attribute.
  void setAttr(std::string name, AttrValue value);
  /// Removes an attribute; returns whether it existed.
  bool removeAttr(std::string_view name);

  /// Attribute value, else the schema default, else `fallback`. Throw
  /// `Error` naming node and attribute when the stored kind differs.
  int64_t getInt(std::string_view name, int64_t fallback = 0) const;
  float getFloat(std::string_view name, float fallback = 0.0f) const;
  std::string getString(std::string_view name, std::string fallback = {}) const;
  std::vector<int64_t> getInts(std::string_view name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> getFloats(std::string_view name, std::vector<float> fallback = {}) const;
  std::vector<std::string> getStrings(std::string_view name,
                                      std::vector<std::string> fallback = {}) const;

  /// Structural hash of op, attributes and input identities.
  size_t hash() const;
  /// Same op, attributes (order-insensitive) and the very same input values.
  bool isStructurallyEqual(const Node& other) const;

 protected:
  Node() = default;

 private:
  friend class Graph;

  Graph* graph_ = nullptr;
  NodeId id_ = 0;
  const OpKey* op_ = nullptr;
  std::string name_;
  InputList inputs_;
  OutputList outputs_;
  // 128 bytes in all, two cache lines and the allocator's 128-byte size
  // class. With a std::vector here a node was 136 bytes, in the 160-byte
  // class, whose blocks straddle three lines half the time; a pass over a
  // graph larger than the cache pays for every line it brings in, and
  // 10^6-node partitions ran 5-14% slower (docs/partitioning.md).
  AttributeList attrs_;
};

/// True for a fused region node, as the partitioner makes them: its domain
/// starts with "subgraph." and it carries a graph attribute named "body"
/// that computes its outputs from its inputs. Such a node needs no op
/// schema: the verifier checks it against its body, and the runtime runs
/// the body where no backend has a kernel for it.
bool isFusedRegion(const Node& node);

/// LLVM-style RTTI over generated node classes: each class T provides
/// `static bool classof(const Node*)`.
template <typename T>
bool isa(const Node* node) {
  return node != nullptr && T::classof(node);
}
template <typename T>
T* dyn_cast(Node* node) {
  return isa<T>(node) ? static_cast<T*>(node) : nullptr;
}
template <typename T>
const T* dyn_cast(const Node* node) {
  return isa<T>(node) ? static_cast<const T*>(node) : nullptr;
}

}  // namespace subgraph
