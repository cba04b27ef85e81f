//===- subgraph/passes/constant_folding.h - Constant folding ----*- C++ -*-===//
//
// Replaces nodes whose inputs are all constants by initializers holding their
// results, including the shape arithmetic that ONNX exporters emit
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape): a Shape node folds when
// its input's shape is static, and a Gather/Slice/Squeeze/Unsqueeze/Concat
// over a partly static shape folds when it picks only static dims.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Options of the constant folding pass.
struct ConstantFoldingOptions {
  /// A node whose result would have more elements than this is left alone,
  /// so that folding never turns a small subgraph (ConstantOfShape, Expand,
  /// Tile, Range) into a large weight in the model file.
  int64_t maxOutputElements = int64_t{1} << 20;
  /// Run shape inference before each sweep so that Shape nodes see the
  /// static shapes that earlier folds made known. When false, the pass
  /// relies on the types already on the values.
  bool inferShapes = true;
  /// Upper bound on internal sweeps (infer, then fold in topological
  /// order); another sweep runs only when the previous one folded something.
  int maxSweeps = 16;
};

/// Folds constant subexpressions into initializers.
///
/// What it folds: default-domain nodes with an evaluator (see
/// constant_evaluators.h) whose inputs are all initializers, including
/// Constant nodes themselves (so a Constant feeding a fold is folded first),
/// plus Shape and Size on statically shaped values. Each folded
/// output keeps its value name, so graph outputs and uses are untouched.
///
/// What it leaves alone: nodes with any non-constant input, results larger
/// than maxOutputElements, nodes in other domains, nodes whose outputs are
/// all unused (dead code is DCE's job) and nodes whose inputs are
/// inconsistent (the summary names the first one). Initializers it creates
/// that end up unused are removed; initializers that already existed are
/// left for DCE.
std::unique_ptr<Pass> createConstantFoldingPass(const ConstantFoldingOptions& options = {});

}  // namespace subgraph
