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

namespace {

// `x` rounded to nearest-even with `bits` significant bits (11 for f16, 8
// for bf16); the coefficients are far from the formats' ranges' ends.
double roundToBits(double x, int bits) {
  int e = 0;
  const double m = std::frexp(x, &e);
  return std::ldexp(std::nearbyint(std::ldexp(m, bits)), e - bits);
}

}  // namespace

bool isCoefficient(double v, double expected, double tolerance) {
  if (std::abs(v - expected) <= tolerance * std::max(1.0, std::abs(expected))) return true;
  const auto f = static_cast<float>(v);
  return f == static_cast<float>(roundToBits(expected, 11)) ||
         f == static_cast<float>(roundToBits(expected, 8));
}

bool isScalar(const Value* value, double expected) {
  std::optional<double> v = scalarConstant(value);
  return v && isCoefficient(*v, expected);
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
