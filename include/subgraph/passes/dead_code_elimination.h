//===- subgraph/passes/dead_code_elimination.h - DCE ------------*- C++ -*-===//
//
// Removes the nodes and constants that cannot influence any graph output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Options of the dead-code elimination pass.
struct DeadCodeEliminationOptions {
  /// Also delete initializers that no live node reads and that are not
  /// graph inputs or outputs.
  bool removeUnusedInitializers = true;
};

/// Dead-code elimination.
///
/// A node is live if one of its outputs is a graph output, or is read by a
/// live node, or is named by a nested graph (If/Loop body) of a live node as
/// an outer-scope value. Every other node is dead and is removed with its
/// outputs, whatever its op: ONNX ops have no side effects. Graph inputs are
/// never removed, even when unused, because they are the graph's interface;
/// initializers that are also graph inputs count as inputs. Values with no
/// producer, no uses and no constant data that are not graph inputs or
/// outputs (left behind by importers) are removed too.
std::unique_ptr<Pass> createDeadCodeEliminationPass(const DeadCodeEliminationOptions& options = {});

}  // namespace subgraph
