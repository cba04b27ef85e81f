//===- subgraph/ir/shape_inference.h - Type and shape inference -*- C++ -*-===//
//
// Every op schema carries an InferFn that computes output TensorTypes from
// input TensorTypes, attributes and (where an op needs them, e.g. Reshape's
// shape input) constant input data. Dims may be symbolic: broadcasting "N"
// against "N" gives "N", against 1 gives "N", against "M" gives unknown.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/ir/node.h"
#include "subgraph/ir/tensor.h"
#include "subgraph/ir/types.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// One element of a tracked shape value (see ShapeValueMap): a known
/// integer, which may be negative like Reshape's -1, or else a symbolic or
/// unknown dim.
class ShapeElement {
 public:
  /// An unknown element.
  ShapeElement() = default;
  /// A known integer.
  static ShapeElement integer(int64_t v) {
    ShapeElement e;
    e.known_ = true;
    e.value_ = v;
    return e;
  }
  /// A dim: static dims become known integers.
  static ShapeElement fromDim(const Dim& d) {
    if (d.isStatic()) return integer(d.size());
    ShapeElement e;
    e.symbol_ = d.symbolName();
    return e;
  }
  bool isKnown() const { return known_; }
  /// The integer; only meaningful when isKnown().
  int64_t value() const { return value_; }
  /// As a dim: a non-negative integer is static, a negative one unknown.
  Dim toDim() const {
    if (known_) return value_ >= 0 ? Dim(value_) : Dim::unknown();
    return symbol_.empty() ? Dim::unknown() : Dim::symbol(symbol_);
  }
  friend bool operator==(const ShapeElement& a, const ShapeElement& b) {
    return a.known_ == b.known_ && a.value_ == b.value_ && a.symbol_ == b.symbol_;
  }

 private:
  bool known_ = false;
  int64_t value_ = 0;
  std::string symbol_;
};

/// The elements of a small 1-D or scalar integer tensor (a scalar has one).
using ShapeValue = std::vector<ShapeElement>;

/// Shape values computed from shapes, e.g. Shape(x) of x: f32[N, 3] is
/// [N, 3]. inferShapes() tracks them so that Reshape(x, Concat(Gather(
/// Shape(x), 0), [-1])), the way exporters flatten, keeps its symbolic dims.
using ShapeValueMap = std::unordered_map<const Value*, ShapeValue>;

/// What an InferFn sees of one node: input types, constant inputs,
/// attributes (through node()) and the output types it must set.
class InferenceContext {
 public:
  explicit InferenceContext(const Node& node);
  /// A context that can read the shape values tracked so far (may be null).
  InferenceContext(const Node& node, const ShapeValueMap* shapeValues);

  const Node& node() const { return node_; }
  size_t numInputs() const { return node_.numInputs(); }
  size_t numOutputs() const { return outputs_.size(); }
  /// True if input `i` exists (not an omitted optional input).
  bool hasInput(size_t i) const { return node_.input(i) != nullptr; }
  /// Type of input `i`; an unknown type if the input is absent.
  const TensorType& inputType(size_t i) const;
  /// Constant data of input `i` if it is an initializer or the output of a
  /// Constant node, else null.
  const Tensor* constantInput(size_t i) const;
  /// The elements of input `i` when it is a small 1-D or scalar integer
  /// tensor: from constant data, or from shape values tracked by
  /// inferShapes(). nullopt when neither is known.
  std::optional<ShapeValue> shapeValueInput(size_t i) const;
  /// Records the elements of output `i` (a 1-D or scalar integer tensor) so
  /// that later nodes can use them; see ShapeValueMap.
  void setOutputShapeValue(size_t i, ShapeValue value) { shapeValuesOut_.at(i) = std::move(value); }
  /// Shape values recorded for the outputs, in order.
  const std::vector<std::optional<ShapeValue>>& outputShapeValues() const {
    return shapeValuesOut_;
  }
  /// The type being inferred for output `i`.
  TensorType& outputType(size_t i) { return outputs_.at(i); }
  void setOutputType(size_t i, TensorType type) { outputs_.at(i) = std::move(type); }
  /// Builds an error naming the node: "<op> node '<name>': <message>".
  Status fail(const std::string& message) const;

  /// All inferred output types, in order.
  const std::vector<TensorType>& outputTypes() const { return outputs_; }

 private:
  const Node& node_;
  const ShapeValueMap* shapeValues_ = nullptr;
  std::vector<TensorType> outputs_;
  std::vector<std::optional<ShapeValue>> shapeValuesOut_;
  // Constant nodes spelled with value_ints and friends have no Tensor to
  // point at; they are materialized here. A deque keeps pointers stable.
  mutable std::deque<Tensor> materialized_;
};

/// Options for inferShapes().
struct InferShapesOptions {
  /// When false, an op without a schema or InferFn is an error; when true
  /// its outputs keep whatever type they already have.
  bool allowUnknownOps = true;
  /// Keep a more precise existing type (e.g. from ONNX value_info) when
  /// inference yields something less specific.
  bool keepExistingWhenLessPrecise = true;
};

/// Runs inference over the graph in topological order and stores the
/// results on the output values. Fails on the first node whose inputs are
/// inconsistent, naming it.
Status inferShapes(Graph& graph, const InferShapesOptions& options = {});

/// True when every value of the graph (not of its nested graphs) has an
/// element type and a static shape. inferShapes() can then only confirm the
/// types (or fail on a conflict): it merges and never replaces a more
/// precise type, so callers that run it for the types may skip it.
bool hasCompleteTypes(const Graph& graph);

/// Multidirectional (numpy) broadcast of two shapes with symbolic dims.
/// Returns nullopt when the static dims are incompatible.
std::optional<Shape> broadcastShapes(const Shape& a, const Shape& b);

/// Combines an existing (declared) type with an inferred one, keeping the
/// more precise information of each: a known dtype or rank over an unknown
/// one, a static dim over a symbolic or unknown one, a declared symbol over
/// an unknown dim. Returns nullopt when they conflict (different dtypes,
/// ranks or static dims).
std::optional<TensorType> mergeTypes(const TensorType& existing, const TensorType& inferred);

/// Runs the op's InferFn on one node and stores the result on its outputs
/// (merged as inferShapes() does). Builders and passes that create nodes
/// use it to type them right away.
Status inferNodeTypes(Node& node, const InferShapesOptions& options = {});

}  // namespace subgraph
