//===- subgraph/passes/constant_evaluators.h - Evaluating constant nodes -*- C++ -*-===//
//
// Compact reference evaluators for the ops that constant folding meets in
// exported models: shape arithmetic (Shape, Gather, Concat, Slice, Squeeze,
// Unsqueeze, Reshape, Range, ConstantOfShape, ...), casts and elementwise
// math. They favour obvious correctness over speed: floating-point math is
// done in double and rounded once to the element type, integer math in
// int64 with wrap-around. They are not a runtime: anything they do not
// handle returns kUnsupported and is simply not folded.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "subgraph/ir/node.h"
#include "subgraph/ir/tensor.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// Bounds for one evaluation.
struct EvaluationLimits {
  /// Results with more elements than this are refused with kLimitExceeded
  /// before any memory is allocated for them.
  int64_t maxOutputElements = int64_t{1} << 20;
};

/// True if evaluateConstantNode() has an evaluator for this op (default
/// domain only). It may still refuse particular element types.
bool hasConstantEvaluator(std::string_view domain, std::string_view opType);

/// The ops that have an evaluator, sorted; for docs and `--help`.
std::vector<std::string_view> constantEvaluatorOps();

/// Computes `node`'s outputs from constant inputs; `inputs[i]` is null for
/// an omitted optional input. Attributes are read from `node`. Errors:
/// kUnsupported (op or element type not handled), kLimitExceeded (result too
/// large) or kInvalidArgument naming the node (inconsistent inputs, such as
/// a Reshape to a different element count).
StatusOr<std::vector<Tensor>> evaluateConstantNode(const Node& node,
                                                   std::span<const Tensor* const> inputs,
                                                   const EvaluationLimits& limits = {});

}  // namespace subgraph
