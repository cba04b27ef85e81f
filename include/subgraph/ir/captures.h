//===- subgraph/ir/captures.h - Values nested graphs read by name -*- C++ -*-===//
//
// ONNX subgraphs (If branches, Loop and Scan bodies) read values of their
// enclosing graphs by name: the importer keeps such a read as a "free"
// value of the nested graph (no producer, not an input, not an
// initializer). These reads are uses that no use list shows, so every
// transformation that removes, renames or moves a value of an enclosing
// graph asks capturedNames() first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <set>
#include <string>

#include "subgraph/ir/graph.h"
#include "subgraph/ir/node.h"

namespace subgraph {

/// True if `node` holds a graph (or a list of graphs) in an attribute.
bool holdsNestedGraph(const Node& node);

/// Names that the graphs held in `node`'s attributes read from enclosing
/// scopes, at any depth of nesting, sorted and without duplicates.
std::set<std::string> capturedNames(const Node& node);

/// capturedNames() of every node of `graph`: the names of its values (or of
/// values further out) that its nested graphs read. Empty, after one look at
/// each node's attributes, for a graph without control flow.
std::set<std::string> capturedNames(const Graph& graph);

}  // namespace subgraph
