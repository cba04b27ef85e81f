//===- examples/emulated_device/region_interpreter.h - Runs a region body -*- C++ -*-===//
//
// The one kernel of backend `emudev` is generic: whatever a property fused,
// the kernel interprets the region's body node by node. This header holds
// the two halves of that:
//  * BodyGraph, the body in plain C++ (op types, attributes, static dims,
//    constant data), read once from the host's views by readBody(). Tests
//    build one by hand, without a host.
//  * RegionProgram, a BodyGraph compiled into steps at kernel creation:
//    attributes checked and resolved against ONNX's defaults, constants
//    prepared (BatchNormalization's scale and shift, Gemm's B transposed),
//    so that run() only computes. run() keeps every intermediate in
//    buffers of its own, so one program serves concurrent runs.
//
// Supported: float32 only, static shapes only, and the ops Conv (2-D,
// group, strides, pads, dilations, bias; auto_pad NOTSET or VALID),
// BatchNormalization (inference), Relu, Sigmoid, Add and Mul (numpy
// broadcasting), MaxPool and AveragePool (2-D, ceil_mode 0),
// GlobalAveragePool, Flatten and Gemm. Anything else is declined with
// sdk::Unsupported, naming the node and the reason.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <subgraph/sdk/graph_view.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace subgraph::emudev {

/// An attribute of a body node, by kind: INT, FLOAT, STRING, INTS, FLOATS.
using AttrValue =
    std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>>;

/// One value of a region body.
struct BodyValue {
  /// The value's name, for messages.
  std::string name;
  /// Static dims (float32 is the only element type).
  std::vector<int64_t> dims;
  /// True for a constant; its elements are then in `data`.
  bool isConstant = false;
  /// A constant's elements, row-major.
  std::vector<float> data;
};

/// One node of a region body.
struct BodyNode {
  /// The ONNX op type, e.g. "Conv".
  std::string opType;
  /// The node's name, for messages.
  std::string name;
  /// Indices into BodyGraph::values; -1 for an omitted optional input.
  std::vector<int> inputs;
  /// Indices into BodyGraph::values; -1 for an omitted optional output.
  std::vector<int> outputs;
  /// The attributes set on the node; ONNX defaults apply to the others.
  std::map<std::string, AttrValue> attrs;
};

/// A region body: the fused node's inputs and outputs, and the nodes that
/// compute one from the other, in topological order.
struct BodyGraph {
  /// Every value the body mentions.
  std::vector<BodyValue> values;
  /// The region's inputs, in the fused node's input order.
  std::vector<int> inputs;
  /// The region's outputs, in the fused node's output order.
  std::vector<int> outputs;
  /// The nodes, in topological order.
  std::vector<BodyNode> nodes;
};

/// Reads the body of fused region node `fused` through the host's views.
/// Throws sdk::Unsupported for a value that is not float32 or whose shape
/// is not static.
BodyGraph readBody(const sdk::NodeView& fused);

namespace detail {
class Step;
}  // namespace detail

/// A region body compiled for the interpreter. Immutable after
/// construction; run() may be called from several threads at once.
class RegionProgram {
 public:
  /// Compiles `body`; throws sdk::Unsupported, naming the node, for an op
  /// or attribute the interpreter does not handle.
  explicit RegionProgram(BodyGraph body);
  ~RegionProgram();
  RegionProgram(const RegionProgram&) = delete;
  RegionProgram& operator=(const RegionProgram&) = delete;

  /// The number of region inputs.
  size_t numInputs() const { return inputs_.size(); }
  /// The number of region outputs.
  size_t numOutputs() const { return outputs_.size(); }
  /// The static dims of region input `i`.
  const std::vector<int64_t>& inputDims(size_t i) const { return values_[inputs_[i]].dims; }
  /// The static dims of region output `o`.
  const std::vector<int64_t>& outputDims(size_t o) const { return values_[outputs_[o]].dims; }

  /// Computes the region: `inputs[i]` holds region input i and
  /// `outputs[o]` receives output o, dense float32 of their static dims.
  /// The buffers must not overlap.
  void run(std::span<const float* const> inputs, std::span<float* const> outputs) const;

 private:
  std::vector<BodyValue> values_;
  std::vector<int> inputs_, outputs_;
  std::vector<std::unique_ptr<const detail::Step>> steps_;
};

/// The number of elements of a tensor with `dims` (1 for a scalar).
int64_t numElements(std::span<const int64_t> dims);

}  // namespace subgraph::emudev
