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
#include <span>
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

/// Gives `body` its own reference to each constant of an enclosing graph that
/// it reads by name, searching `enclosing` from the innermost (last) graph
/// out; an enclosing graph input (an overridable initializer) is not a
/// constant. Passes and backends act only on what they can see is constant:
/// an If branch that slices and concatenates the weights its enclosing graph
/// holds folds to a constant only once the body holds them. The tensor data
/// is shared, not copied.
void adoptCapturedConstants(Graph& body, std::span<const Graph* const> enclosing);

}  // namespace subgraph
