//===- subgraph/passes/gelu_idiom.h - GELU written out ----------*- C++ -*-===//
//
// Recognises GELU written op by op, in its exact (erf) and tanh forms, and
// replaces it with one Gelu node.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Replaces
///
///     e = Erf(x / sqrt(2))   (or Erf(x * (1 / sqrt(2))))
///     y = x * 0.5 * (e + 1)
///
/// with y = Gelu(x), and
///
///     t = Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))   (x^3 as Pow(x, 3) or x * x * x)
///     y = x * 0.5 * (t + 1)
///
/// with y = Gelu(x) {approximate = "tanh"}. The final product may be
/// grouped any way ((x * (e + 1)) * 0.5, x * ((e + 1) * 0.5), (x * 0.5) *
/// (e + 1)), with the operands of each Mul and Add in either order; the
/// constants are matched by value within a relative 1e-6 (1e-5 for
/// sqrt(2 / pi), which exporters round to 0.7978846). Every intermediate
/// value must be read only inside the pattern; x may have other readers.
/// The graph's opset import is not changed: ONNX export writes Gelu out
/// again for models older than opset 20.
std::unique_ptr<Pass> createGeluIdiomPass();

}  // namespace subgraph
