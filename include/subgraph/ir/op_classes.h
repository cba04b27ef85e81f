//===- subgraph/ir/op_classes.h - Typed node classes for built-in ops -*- C++ -*-===//
//
// The stable include for the generated typed node classes (ConvNode,
// ReluNode, ...) and their builders (createConv, createRelu, ...). The
// classes themselves are generated at build time from core/ops/*.json into
// <build>/generated/include/subgraph/ops/onnx_ops.h; see docs/ops.md.
//
//   Value* y = createConv(g, x, w, b, {.pads = {{1, 1, 1, 1}}})->getY();
//   if (auto* conv = dyn_cast<ConvNode>(node)) group = conv->getGroup();
//
// This file also holds the small runtime helpers the generated code calls
// (namespace detail); they are schema-driven, so that the generated code
// stays short and plugins' plain nodes get the same behaviour.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/ir/node.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// Options shared by every generated builder (createConv, createRelu, ...).
///
/// Every member has a default member initializer, which keeps GCC's
/// -Wmissing-field-initializers quiet for designated initializers such as
/// {.numOutputs = 2}.
struct NodeBuildOptions {
  /// The node's name; empty for none.
  std::string name = {};
  /// Number of outputs to create; 0 means the op's minimum (e.g. 1 for
  /// Split, which needs it set to the number of parts).
  size_t numOutputs = 0;
  /// Run the op's shape inference right away and set the output types.
  /// An inconsistent node then throws `Error` (and is not added).
  bool inferTypes = true;
};

/// Checks a node against its schema: operand counts, required operands,
/// attribute names, kinds and presence, and element types against type
/// constraints (including that operands sharing a constraint agree). Does
/// not run the op's own VerifyFn. Errors read "<op> node '<name>': ...".
Status verifyAgainstSchema(const Node& node);

namespace detail {

/// Operands from position `start` on (empty if there are fewer).
inline std::span<Value* const> operandTail(std::span<Value* const> all, size_t start) {
  return start < all.size() ? all.subspan(start) : std::span<Value* const>();
}

/// Attribute accessors used by generated getters. Each throws `Error`
/// naming the node and attribute when the stored kind is wrong.
const Tensor* tensorAttr(const Node& node, std::string_view name);
std::shared_ptr<Graph> graphAttr(const Node& node, std::string_view name);
std::vector<std::shared_ptr<Graph>> graphsAttr(const Node& node, std::string_view name);
/// Throws `Error` naming the node when the attribute is absent.
template <typename T>
T requiredAttr(const Node& node, std::string_view name);
/// nullopt when the attribute is absent.
template <typename T>
std::optional<T> optionalAttr(const Node& node, std::string_view name);

/// True if every declared attribute stored on `node` has its declared kind
/// and every required one is present, i.e. the typed getters cannot throw.
bool attrsWellTyped(const Node& node);

/// Hash building blocks for the generated hash() members.
void hashMix(size_t& seed, size_t value);
size_t hashOperands(const Node& node);
size_t hashAttr(int64_t v);
size_t hashAttr(float v);
size_t hashAttr(const std::string& v);
size_t hashAttr(const std::vector<int64_t>& v);
size_t hashAttr(const std::vector<float>& v);
size_t hashAttr(const std::vector<std::string>& v);
size_t hashAttr(const Tensor* v);
size_t hashAttr(const std::shared_ptr<Graph>& v);
size_t hashAttr(const std::vector<std::shared_ptr<Graph>>& v);
template <typename T>
size_t hashAttr(const std::optional<T>& v) {
  return v ? hashAttr(*v) * 31 + 1 : 0;
}
/// Hash of attributes that the schema does not declare.
size_t hashUndeclaredAttrs(const Node& node);

/// Equality building blocks for the generated isEqual() members.
bool sameOperands(const Node& a, const Node& b);
template <typename T>
bool sameAttr(const T& a, const T& b) {
  return a == b;
}
/// Floats compare bitwise, as Attribute's operator== does, so that a NaN
/// attribute equals itself.
bool sameAttr(float a, float b);
bool sameAttr(const std::vector<float>& a, const std::vector<float>& b);
bool sameAttr(const Tensor* a, const Tensor* b);
template <typename T>
bool sameAttr(const std::optional<T>& a, const std::optional<T>& b) {
  if (!a || !b) return !a && !b;
  return sameAttr(*a, *b);
}
bool sameUndeclaredAttrs(const Node& a, const Node& b);

/// Copies `node` into `graph` with new inputs; see the generated clone().
Node* cloneNode(const Node& node, Graph& graph, std::vector<Value*> inputs);

/// Printing building blocks for the generated print() members:
/// "%y: f32[1, 8] = Conv(%x, %w, _) {group = 1} @name".
void printNodeHead(const Node& node, std::ostream& os);
void printAttr(std::ostream& os, bool& first, std::string_view name, int64_t v);
void printAttr(std::ostream& os, bool& first, std::string_view name, float v);
void printAttr(std::ostream& os, bool& first, std::string_view name, const std::string& v);
void printAttr(std::ostream& os, bool& first, std::string_view name, const std::vector<int64_t>& v);
void printAttr(std::ostream& os, bool& first, std::string_view name, const std::vector<float>& v);
void printAttr(std::ostream& os, bool& first, std::string_view name,
               const std::vector<std::string>& v);
void printAttr(std::ostream& os, bool& first, std::string_view name, const Tensor* v);
void printAttr(std::ostream& os, bool& first, std::string_view name,
               const std::shared_ptr<Graph>& v);
void printAttr(std::ostream& os, bool& first, std::string_view name,
               const std::vector<std::shared_ptr<Graph>>& v);
template <typename T>
void printAttr(std::ostream& os, bool& first, std::string_view name, const std::optional<T>& v) {
  if (v) printAttr(os, first, name, *v);
}
/// Prints the attributes not printed through typed getters (all of them
/// when `typedPrinted` is false), then the node name.
void printNodeTail(const Node& node, std::ostream& os, bool noAttrsPrinted, bool typedPrinted);

/// Throws `Error` ("createConv: required input 'X' is null") for a null
/// required input of a builder.
void requireInput(const Value* value, std::string_view op, std::string_view operand);
/// Adds the node for a generated builder: drops trailing omitted inputs,
/// picks the output count, runs inference if asked. Throws `Error`.
Node* buildNode(Graph& graph, const OpKey* op, std::vector<Value*> inputs,
                std::vector<Attribute> attrs, const NodeBuildOptions& options);

}  // namespace detail
}  // namespace subgraph

// The generated classes use the helpers above; with #pragma once in both
// files, either may be included first.
#include "subgraph/ops/onnx_ops.h"
