//===- subgraph/passes/identity_removal.h - Identity removal ----*- C++ -*-===//
//
// Removes Identity nodes by rewiring their uses to the Identity's input.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Removes default-domain Identity nodes, and Casts to the element type
/// their input already has (which compute an Identity).
///
/// An Identity whose output is not a graph output disappears: its uses read
/// its input instead. When the output is a graph output, the graph must keep
/// that output name, so the Identity's input is renamed to it instead; that
/// is safe only when the input is computed by a node or is an initializer,
/// and is not itself a graph input or output. Otherwise the Identity is kept:
///  * input is a graph input: renaming would change the graph's interface;
///  * input is also a graph output: two output names need two values;
///  * input or output is named by a nested graph (If/Loop body) as an
///    outer-scope value, or the input is itself such a read (a value of a
///    nested graph that no node there computes): renaming would break that
///    reference.
std::unique_ptr<Pass> createIdentityRemovalPass();

}  // namespace subgraph
