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
#include <optional>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/ir/node.h"
#include "subgraph/ir/tensor.h"
#include "subgraph/ir/types.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// What an InferFn sees of one node: input types, constant inputs,
/// attributes (through node()) and the output types it must set.
class InferenceContext {
 public:
  explicit InferenceContext(const Node& node);

  const Node& node() const { return node_; }
  size_t numInputs() const { return node_.numInputs(); }
  size_t numOutputs() const { return outputs_.size(); }
  /// True if input `i` exists (not an omitted optional input).
  bool hasInput(size_t i) const { return node_.input(i) != nullptr; }
  /// Type of input `i`; an unknown type if the input is absent.
  const TensorType& inputType(size_t i) const;
  /// Constant data of input `i` if it is an initializer, else null.
  const Tensor* constantInput(size_t i) const;
  /// The type being inferred for output `i`.
  TensorType& outputType(size_t i) { return outputs_.at(i); }
  void setOutputType(size_t i, TensorType type) { outputs_.at(i) = std::move(type); }
  /// Builds an error naming the node: "<op> node '<name>': <message>".
  Status fail(const std::string& message) const;

  /// All inferred output types, in order.
  const std::vector<TensorType>& outputTypes() const { return outputs_; }

 private:
  const Node& node_;
  std::vector<TensorType> outputs_;
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

/// Multidirectional (numpy) broadcast of two shapes with symbolic dims.
/// Returns nullopt when the static dims are incompatible.
std::optional<Shape> broadcastShapes(const Shape& a, const Shape& b);

}  // namespace subgraph
