//===- core/passes/idiom_match.h - Matching exporters' idioms ---*- C++ -*-===//
//
// Private to core/passes. The idiom passes (layer_norm_idiom.cpp,
// clamp_idiom.cpp, hard_swish_idiom.cpp) recognise what exporters write
// out op by op and replace it with one op. They share these predicates: a
// step of an idiom may be replaced only when nothing outside the idiom
// reads it, and constants are matched by value.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/ir/node.h"

namespace subgraph::passes_detail {

/// The default-domain node computing `value` if its op is `op`, else null.
Node* producerIs(const Value* value, std::string_view op);

/// The other operand of binary `node` when one operand is `v`, else null.
Value* otherOperand(const Node& node, const Value* v);

/// The int attribute `name` of `node`, or `fallback` when it is absent.
int64_t intAttr(const Node& node, std::string_view name, int64_t fallback);

/// The value of a constant (initializer) holding one floating-point element
/// (any shape of one element), else nothing.
std::optional<double> scalarConstant(const Value* value);

/// True if `value` is read exactly `uses` times (counting each input slot),
/// is not a graph output, and no nested graph reads it by name.
bool usedExactly(const Value* value, size_t uses, const std::set<std::string>& captured);

/// True if `v` is the coefficient `expected`: within a relative `tolerance`
/// (exporters write 1/6 as 0.16666667 or 0.1666666716), or `expected`
/// rounded to f16 or bf16 (a model exported in half precision writes
/// sqrt(2) as 1.4140625; the float16-compute pass widens it unchanged).
bool isCoefficient(double v, double expected, double tolerance = 1e-6);

/// True if the scalar constant `value` is the coefficient `expected`
/// (isCoefficient).
bool isScalar(const Value* value, double expected);

/// Replaces the node computing `result` by `op` reading `inputs`, keeping the
/// `result` value (its name, uses and graph-output slot), then removes the
/// idiom's other nodes, `dead`, which nothing else may read. Returns the
/// new node.
Node* replaceIdiom(Graph& graph, Value* result, std::string_view op, std::vector<Value*> inputs,
                   std::vector<Attribute> attributes, const std::vector<Node*>& dead);

}  // namespace subgraph::passes_detail
