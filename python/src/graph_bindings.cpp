//===- python/src/graph_bindings.cpp - Graphs, nodes, values -------------===//
//
// Read-only views for inspecting a model from Python: a Graph's nodes,
// inputs and outputs; a Node's op, name, operands and attributes; a
// Value's name, element type, shape, producer and consumers. Printing a
// graph gives the text format, so what Python shows is what `subgraph
// convert` writes.
//
//===----------------------------------------------------------------------===//
#include <pybind11/stl.h>

#include "bindings.h"
#include "subgraph/ir/text_format.h"

namespace subgraph::python {
namespace {

py::object attributeValue(const Attribute& a) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          return py::str("<tensor " + std::string(dataTypeName(v.dtype())) + ">");
        } else if constexpr (std::is_same_v<T, std::shared_ptr<Graph>>) {
          return py::cast(GraphBox{v});
        } else if constexpr (std::is_same_v<T, std::vector<std::shared_ptr<Graph>>>) {
          py::list out;
          for (const auto& g : v) out.append(py::cast(GraphBox{g}));
          return out;
        } else {
          return py::cast(v);
        }
      },
      a.value());
}

py::object shapeOf(const TensorType& type) {
  if (!type.shape) return py::none();
  py::list dims;
  for (const Dim& d : *type.shape) {
    if (d.isStatic())
      dims.append(d.size());
    else if (d.isSymbolic())
      dims.append(d.symbolName());
    else
      dims.append(py::none());
  }
  return dims;
}

// Views reached from a view share its owner or its lease.
py::list valuesOf(const std::shared_ptr<Graph>& owner, const std::shared_ptr<Lease>& lease,
                  std::span<Value* const> values) {
  py::list out;
  for (const Value* v : values) {
    if (v)
      out.append(py::cast(ValueHandle{owner, lease, v}));
    else
      out.append(py::none());
  }
  return out;
}

void bindValue(py::module_& m) {
  py::class_<ValueHandle>(m, "Value", "A value (tensor) of a graph.")
      .def_property_readonly("name", [](const ValueHandle& v) { return v.get().name(); })
      .def_property_readonly(
          "dtype", [](const ValueHandle& v) { return numpyDtypeName(v.get().type().dtype); },
          "Element type as numpy names it ('float32', ...).")
      .def_property_readonly(
          "shape", [](const ValueHandle& v) { return shapeOf(v.get().type()); },
          "Dims: ints, symbol names for symbolic dims, None for unknown; None if unranked.")
      .def_property_readonly("is_constant",
                             [](const ValueHandle& v) { return v.get().isInitializer(); })
      .def_property_readonly("producer",
                             [](const ValueHandle& v) -> py::object {
                               if (!v.get().producer()) return py::none();
                               return py::cast(NodeHandle{v.owner, v.lease, v.get().producer()});
                             })
      .def_property_readonly("consumers",
                             [](const ValueHandle& v) {
                               py::list out;
                               for (const Use& u : v.get().uses())
                                 out.append(py::cast(NodeHandle{v.owner, v.lease, u.user}));
                               return out;
                             })
      .def("__repr__", [](const ValueHandle& v) {
        return "<Value '" + v.get().name() + "' " + v.get().type().toString() + ">";
      });
}

void bindNode(py::module_& m) {
  py::class_<NodeHandle>(m, "Node", "A node of a graph.")
      .def_property_readonly("op", [](const NodeHandle& n) { return n.get().opType(); })
      .def_property_readonly("domain", [](const NodeHandle& n) { return n.get().domain(); })
      .def_property_readonly("name", [](const NodeHandle& n) { return n.get().displayName(); })
      .def_property_readonly(
          "inputs",
          [](const NodeHandle& n) { return valuesOf(n.owner, n.lease, n.get().inputs()); },
          "Input values; None for an omitted optional input.")
      .def_property_readonly(
          "outputs",
          [](const NodeHandle& n) { return valuesOf(n.owner, n.lease, n.get().outputs()); })
      .def_property_readonly("attrs",
                             [](const NodeHandle& n) {
                               py::dict out;
                               for (const Attribute& a : n.get().attributes())
                                 out[py::str(a.name())] = attributeValue(a);
                               return out;
                             })
      .def("is_", [](const NodeHandle& n, const std::string& op) { return n.get().opType() == op; })
      // Identity needs no read of the node, so a stale view still compares.
      .def("__eq__", [](const NodeHandle& a, const NodeHandle& b) { return a.node == b.node; })
      .def("__hash__", [](const NodeHandle& n) { return std::hash<const void*>()(n.node); })
      .def("__repr__", [](const NodeHandle& n) {
        return "<Node " + n.get().qualifiedOpType() + " '" + n.get().displayName() + "'>";
      });
}

}  // namespace

void checkAlive(const std::shared_ptr<Graph>& owner, const std::shared_ptr<Lease>& lease,
                const char* kind) {
  if (owner || (lease && lease->active)) return;
  raise(Status::invalid(std::string("this ") + kind +
                        " view was lent to a selector callback that has returned; views of the "
                        "graph being partitioned are valid only during the call (keep names, "
                        "not views)"));
}

void bindGraph(py::module_& m) {
  bindValue(m);
  bindNode(m);
  py::class_<GraphBox>(m, "Graph", "A model's graph, loaded with subgraph.load().")
      .def_property_readonly("name", [](const GraphBox& g) { return g.graph->name(); })
      .def_property_readonly("nodes",
                             [](const GraphBox& g) {
                               py::list out;
                               for (const Node* n : g.graph->nodes())
                                 out.append(py::cast(NodeHandle{g.graph, nullptr, n}));
                               return out;
                             })
      .def_property_readonly(
          "inputs", [](const GraphBox& g) { return valuesOf(g.graph, nullptr, g.graph->inputs()); })
      .def_property_readonly(
          "outputs",
          [](const GraphBox& g) { return valuesOf(g.graph, nullptr, g.graph->outputs()); })
      .def_property_readonly(
          "ops",
          [](const GraphBox& g) {
            std::map<std::string, int> count;
            for (const Node* n : g.graph->nodes()) ++count[n->qualifiedOpType()];
            return count;
          },
          "How many nodes of each op.")
      .def(
          "value",
          [](const GraphBox& g, const std::string& name) -> py::object {
            const Value* v = g.graph->findValue(name);
            if (!v) return py::none();
            return py::cast(ValueHandle{g.graph, nullptr, v});
          },
          py::arg("name"), "The value named `name`, or None.")
      .def(
          "to_text", [](const GraphBox& g) { return printGraph(*g.graph); },
          "The graph in subgraph's text format (constants spelled out).")
      .def("__len__", [](const GraphBox& g) { return g.graph->numNodes(); })
      .def("__repr__", [](const GraphBox& g) {
        return "<Graph '" + g.graph->name() + "': " + std::to_string(g.graph->numNodes()) +
               " nodes>";
      });
}

}  // namespace subgraph::python
