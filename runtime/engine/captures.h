//===- runtime/engine/captures.h - Outer-scope values of nested graphs -*- C++ -*-===//
//
// Internal to the runtime. ONNX subgraphs (If branches, Loop bodies) read
// values of enclosing graphs by name; the importer keeps such a read as a
// "free" value in the nested graph (no producer, not an input, not an
// initializer). The session passes every value a node's nested graphs
// capture as extra step inputs after the node's own inputs, in the order
// capturedNames() gives, and the kernel compiles each nested graph with those
// values turned into trailing graph inputs (withCapturesAsInputs()).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"

namespace subgraph::runtime::engine {

/// Names that the graph attributes of `node` read from enclosing scopes,
/// at any depth of nesting, sorted and without duplicates.
std::vector<std::string> capturedNames(const Node& node);

/// A copy of `body` whose free values named in `names` are graph inputs,
/// appended after the body's own inputs in the order of `names`. A name the
/// body does not mention becomes an input nobody reads, so every nested
/// graph of a node has the same trailing inputs.
std::unique_ptr<Graph> withCapturesAsInputs(const Graph& body,
                                            const std::vector<std::string>& names);

}  // namespace subgraph::runtime::engine
