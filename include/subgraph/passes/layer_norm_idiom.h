//===- subgraph/passes/layer_norm_idiom.h - LayerNorm written out -*- C++ -*-===//
//
// Recognises layer normalization written op by op, as PyTorch exports it
// before opset 17, and replaces it with one LayerNormalization node.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Replaces, over the last axis of `x`,
///
///     m = ReduceMean(x)            d = Sub(x, m)
///     v = ReduceMean(Pow(d, 2))    (or ReduceMean(Mul(d, d)))
///     n = Div(d, Sqrt(Add(v, eps)))
///     y = Add(Mul(n, gamma), beta)  (the Mul and the Add each optional)
///
/// with y = LayerNormalization(x, gamma, beta) {axis = -1, epsilon = eps}.
/// Both reductions must keep dims and reduce the last axis alone; eps,
/// gamma and beta must be constants (gamma and beta holding one value or
/// one per element of the last axis; a missing gamma is ones, which needs
/// the last dim to be static). Every intermediate value must be read only
/// inside the pattern (no graph output, no other reader, no nested-graph
/// capture); otherwise the nodes stay as they are. The default-domain
/// opset import is raised to 17 when it is at least 13 and below 17 (the
/// ops that changed between 13 and 17 only gained types or attributes with
/// backward-compatible defaults); a graph on an older opset is left alone.
std::unique_ptr<Pass> createLayerNormIdiomPass();

}  // namespace subgraph
