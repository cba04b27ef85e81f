//===- subgraph/passes/linear_idiom.h - Linear layers as 2-D Gemm -*- C++ -*-===//
//
// Recognises a linear layer written for a 2-D Gemm (flatten the leading
// dims, Gemm, restore them) and replaces it with MatMul on the original
// rank, and an Add for the bias.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Replaces
///
///     a = Reshape(x, [M, K])     (or Flatten(x, axis = rank - 1))
///     g = Gemm(a, B, C)          transA = 0, alpha = beta = 1
///     y = Reshape(g, [d0, ..., N])
///
/// where x is [d0, ..., K] and M is the product of its leading dims, with
/// y = MatMul(x, B) (+ C when there is a bias: C must be [N] or [1, N]).
/// A constant B read with transB = 1 becomes a new transposed constant; a
/// run-time one must not be transposed. Every dim involved must be static,
/// and a and g must be read only inside the pattern. PyTorch's dynamo
/// exporter writes every nn.Linear of a 3-D activation this way; the
/// Reshapes kept the Gemm apart from what follows it (the GELU, the
/// residual Add), which backends fuse with a MatMul.
std::unique_ptr<Pass> createLinearIdiomPass();

}  // namespace subgraph
