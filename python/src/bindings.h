//===- python/src/bindings.h - The Python package's C++ side -*- C++ -*-===//
//
// Shared by the binding files of module `subgraph._subgraph`: views of
// graphs, nodes and values, and the one-line error conversion. A Graph
// handle owns its graph (shared); a Node or Value handle keeps that owner
// alive, or borrows for the duration of a selector callback (the graph
// being partitioned is the partitioner's own copy).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "subgraph/ir/graph.h"
#include "subgraph/support/status.h"

namespace subgraph::python {

namespace py = pybind11;

/// A Python-side graph: the graph it names can be replaced (partition()
/// works on a copy and swaps it in), so handles share this box.
struct GraphBox {
  std::shared_ptr<Graph> graph;
};

/// A node of a graph; `owner` is null for a borrowed view.
struct NodeHandle {
  std::shared_ptr<Graph> owner;
  const Node* node = nullptr;
};

/// A value of a graph; `owner` is null for a borrowed view.
struct ValueHandle {
  std::shared_ptr<Graph> owner;
  const Value* value = nullptr;
};

/// The exception type every failure raises (subgraph.Error).
py::object errorType();
/// Raises subgraph.Error with the status's one-line message.
[[noreturn]] void raise(const Status& status);
/// Raises when `status` is not OK.
inline void check(const Status& status) {
  if (!status.isOk()) raise(status);
}

/// The dtype name subgraph uses ("float32", ...) for numpy.
std::string numpyDtypeName(DataType dtype);

void bindGraph(py::module_& m);
void bindSelectors(py::module_& m);
void bindSession(py::module_& m);

}  // namespace subgraph::python
