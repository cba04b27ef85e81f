//===- core/passes/idiom_match.cpp - Matching exporters' idioms -----------===//
//
// See idiom_match.h.
//
//===----------------------------------------------------------------------===//
#include "idiom_match.h"

#include <cmath>

#include "subgraph/ir/op_schema.h"

namespace subgraph::passes_detail {

Node* producerIs(const Value* value, std::string_view op) {
  if (!value) return nullptr;
  Node* p = value->producer();
  return p && p->domain().empty() && p->opType() == op ? p : nullptr;
}

Value* otherOperand(const Node& node, const Value* v) {
  if (node.numInputs() != 2) return nullptr;
  return node.input(0) == v ? node.input(1) : node.input(1) == v ? node.input(0) : nullptr;
}

int64_t intAttr(const Node& node, std::string_view name, int64_t fallback) {
  const Attribute* a = node.attr(name);
  return a && a->kind() == AttrKind::kInt ? a->asInt() : fallback;
}

std::optional<double> scalarConstant(const Value* value) {
  if (!value || !value->isInitializer()) return std::nullopt;
  const Tensor& t = *value->initializer();
  if (!isFloatingPoint(t.dtype()) || t.numElements() != 1) return std::nullopt;
  return t.elementAsDouble(0);
}

bool usedExactly(const Value* value, size_t uses, const std::set<std::string>& captured) {
  return value && value->uses().size() == uses && !value->isGraphOutput() &&
         !captured.count(value->name());
}

bool isScalar(const Value* value, double expected) {
  std::optional<double> v = scalarConstant(value);
  return v && std::abs(*v - expected) <= 1e-6 * std::max(1.0, std::abs(expected));
}

Node* replaceIdiom(Graph& graph, Value* result, std::string_view op, std::vector<Value*> inputs,
                   std::vector<Attribute> attributes, const std::vector<Node*>& dead) {
  Node* last = result->producer();
  std::string name = last->name();
  graph.removeNode(last, /*keepOutputs=*/true);
  Node* made = graph.addNode(OpRegistry::global().intern("", op), std::move(inputs), {result},
                             std::move(attributes), name);
  // Later steps read earlier ones, so removing from the last step back
  // leaves each node unread when its turn comes.
  for (auto it = dead.rbegin(); it != dead.rend(); ++it) graph.removeNode(*it);
  return made;
}

}  // namespace subgraph::passes_detail
