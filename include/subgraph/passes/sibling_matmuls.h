//===- subgraph/passes/sibling_matmuls.h - Projections of one input -*- C++ -*-===//
//
// Merges the MatMuls that multiply one input by different constant
// weights (attention's Q, K and V projections) into one MatMul of the
// weights side by side, and a Split.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Replaces, for one input x and constant 2-D weights W1..Wn (n >= 2) of
/// one element type and one row count K,
///
///     yi = MatMul(x, Wi)   [+ a constant 1-D bias bi, when every yi has one]
///
/// with
///
///     y = MatMul(x, [W1 | ... | Wn])   [+ [b1 | ... | bn]]
///     y1, ..., yn = Split(y) along the last axis, sizes N1..Nn
///
/// keeping each yi's value (its name, readers, graph-output slot). A bias
/// Add joins only when it is yi's only reader. One GEMM over all the
/// columns replaces n narrower ones (BERT's three [256, 256] projections
/// become one [256, 768]); backends that read Q, K and V as column slices
/// of the projection (oneDNN's attention) then skip the Split's copies.
std::unique_ptr<Pass> createSiblingMatMulsPass();

}  // namespace subgraph
