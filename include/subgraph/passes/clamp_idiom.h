//===- subgraph/passes/clamp_idiom.h - Max/Min by a constant ----*- C++ -*-===//
//
// Recognises clamping written as Max or Min with a constant and replaces it
// with Clip, the form backends fuse as an activation.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Replaces Max(x, c) with Clip(x, c, none) and Min(x, c) with
/// Clip(x, none, c), for c a floating-point constant holding one value and x
/// not a constant (either operand order); and merges Clip(Clip(x, a, b),
/// c, d) into Clip(x, max(a, c), min(b, d)) when the inner Clip's bounds are
/// constants and nothing else reads its output. Max and Min with more than
/// two operands, or whose constant has more than one element, stay as they
/// are, as do integer ones.
std::unique_ptr<Pass> createClampIdiomPass();

}  // namespace subgraph
