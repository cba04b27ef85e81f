//===- subgraph/ir/value.h - SSA values (the edges of the graph) -*- C++ -*-===//
//
// A Value is a tensor flowing between nodes: it has a name, a TensorType, at
// most one producer and a list of uses. Graph inputs and initializers
// (constants) are Values without a producer. Only Graph mutates the
// producer/use links, which keeps them consistent after every call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "subgraph/ir/tensor.h"
#include "subgraph/ir/types.h"

namespace subgraph {

class Graph;
class Node;

/// Stable identifier of a value within its graph.
using ValueId = uint32_t;

/// One use of a value: `user`'s input number `inputIndex`.
struct Use {
  Node* user = nullptr;
  uint32_t inputIndex = 0;

  friend bool operator==(const Use& a, const Use& b) {
    return a.user == b.user && a.inputIndex == b.inputIndex;
  }
};

/// A value's use list, with room for one use inside the value: most values
/// have one reader, and a pass over a large graph then finds it in the
/// value's own cache lines instead of a heap block of its own (see Value's
/// fields).
using UseList = boost::container::small_vector<Use, 1>;

/// A tensor-valued edge of the graph.
class Value {
 public:
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  ValueId id() const { return id_; }
  /// Unique within the graph; used by the text format and ONNX.
  const std::string& name() const { return name_; }
  Graph* graph() const { return graph_; }

  const TensorType& type() const { return type_; }
  void setType(TensorType type) { type_ = std::move(type); }

  /// The node that computes this value; null for graph inputs, initializers
  /// and dangling values.
  Node* producer() const { return producer_; }
  /// Which output of the producer this is.
  uint32_t producerIndex() const { return producerIndex_; }

  /// Every (node, input index) that reads this value, in insertion order.
  std::span<const Use> uses() const { return {uses_.data(), uses_.size()}; }
  bool hasUses() const { return !uses_.empty(); }

  /// True if this value is in the graph's input list.
  bool isGraphInput() const { return isGraphInput_; }
  /// True if this value carries constant data (an ONNX initializer).
  bool isInitializer() const { return initializer_ != nullptr; }
  /// The constant data, or null.
  const Tensor* initializer() const { return initializer_.get(); }
  /// The constant data as a shared handle (null if none), for graphs that
  /// reuse it without copying, e.g. region bodies.
  const std::shared_ptr<const Tensor>& sharedInitializer() const { return initializer_; }
  /// True if this value is in the graph's output list.
  bool isGraphOutput() const;

 private:
  friend class Graph;
  Value() = default;

  Graph* graph_ = nullptr;
  ValueId id_ = 0;
  // One word for both: graphs hold millions of values, and the padding
  // after a separate bool would make room for the shared initializer.
  uint32_t producerIndex_ : 31 = 0;
  bool isGraphInput_ : 1 = false;
  std::string name_;
  TensorType type_;
  Node* producer_ = nullptr;
  // 16 bytes, which keeps a value at 128 bytes, as AttributeList does a
  // node (node.h).
  UseList uses_;
  // Shared: tensors are immutable, and clones and region bodies reuse them.
  std::shared_ptr<const Tensor> initializer_;
};

}  // namespace subgraph
