//===- subgraph/passes/hard_swish_idiom.h - HardSigmoid/HardSwish -*- C++ -*-===//
//
// Recognises hard-sigmoid and hard-swish written out with Clip (ReLU6) and
// replaces them with HardSigmoid and HardSwish.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// With r = Clip(Add(x, 3), 0, 6) (the Add's operands in either order) and
/// "/ 6" written as Div by 6 or Mul by 1/6:
///  * r / 6                -> HardSigmoid(x) {alpha = 1/6, beta = 1/2};
///  * (x * r) / 6          -> HardSwish(x) (PaddlePaddle's export);
///  * x * (r / 6), and x * HardSigmoid(x) {alpha = 1/6, beta = 1/2}
///                         -> HardSwish(x) (PyTorch before opset 14).
/// Every replaced intermediate must be read only inside the pattern;
/// HardSwish needs opset 14, so a graph on opset 13 is raised to 14 (no op
/// changed meaning between them) and one on an older opset keeps the
/// HardSigmoid form.
std::unique_ptr<Pass> createHardSwishIdiomPass();

}  // namespace subgraph
