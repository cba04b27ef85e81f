//===- subgraph/passes/redundant_ops.h - Ops that move nothing -*- C++ -*-===//
//
// Removes or shortens ops that compute their input, or a reshape of it:
// what exporters leave around attention masks once the shapes are fixed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Rewrites, when the dims involved are static:
///
///  * Gather(x, indices) whose constant indices list 0, 1, ..., n - 1 of
///    an axis of n elements, in order: a Reshape of x to the result's dims
///    (HuggingFace's mask helpers index every key this way);
///  * Reshape, Flatten, Squeeze or Unsqueeze of a value that such an op
///    made and nothing else reads: one Reshape from the first input; and
///    any of them to the input's own dims: nothing;
///  * And(x, c) with a constant c of all true, Or(x, c) with c all false:
///    x, or Expand(x) to the result's dims where c broadcasts it;
///  * Expand(Expand(x)) where nothing else reads the inner one: one Expand.
///
/// Each keeps the result's value (its name, readers, graph-output slot).
std::unique_ptr<Pass> createRedundantOpsPass();

}  // namespace subgraph
