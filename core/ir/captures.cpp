//===- core/ir/captures.cpp - Values nested graphs read by name -----------===//
//
// A name is free in a nested graph when the graph reads it without defining
// it; for a deeper graph, a name that an intermediate graph defines is not
// free further out. One walk over the nested graphs, each value once.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/captures.h"

#include <memory>
#include <variant>
#include <vector>

namespace subgraph {
namespace {

// True if `value` is defined inside its own graph.
bool isDefinedLocally(const Value& value) {
  return value.producer() != nullptr || value.isGraphInput() || value.isInitializer();
}

void collectFreeNames(const Graph& body, std::set<std::string>& out);

// Adds the free names of every graph in `node`'s attributes.
void collectFromAttributes(const Node& node, std::set<std::string>& out) {
  for (const Attribute& attr : node.attributes()) {
    if (const auto* g = std::get_if<std::shared_ptr<Graph>>(&attr.value())) {
      if (*g) collectFreeNames(**g, out);
    } else if (const auto* gs = std::get_if<std::vector<std::shared_ptr<Graph>>>(&attr.value())) {
      for (const auto& g2 : *gs)
        if (g2) collectFreeNames(*g2, out);
    }
  }
}

void collectFreeNames(const Graph& body, std::set<std::string>& out) {
  for (const Value* v : body.values())
    if (!isDefinedLocally(*v) && (v->hasUses() || v->isGraphOutput())) out.insert(v->name());
  for (const Node* n : body.nodes()) {
    if (!holdsNestedGraph(*n)) continue;
    std::set<std::string> inner;
    collectFromAttributes(*n, inner);
    for (const std::string& name : inner) {
      const Value* local = body.findValue(name);
      if (!local || !isDefinedLocally(*local)) out.insert(name);
    }
  }
}

}  // namespace

bool holdsNestedGraph(const Node& node) {
  for (const Attribute& attr : node.attributes())
    if (attr.kind() == AttrKind::kGraph || attr.kind() == AttrKind::kGraphs) return true;
  return false;
}

std::set<std::string> capturedNames(const Node& node) {
  std::set<std::string> out;
  collectFromAttributes(node, out);
  return out;
}

std::set<std::string> capturedNames(const Graph& graph) {
  std::set<std::string> out;
  for (const Node* n : graph.nodes())
    if (holdsNestedGraph(*n)) collectFromAttributes(*n, out);
  return out;
}

void adoptCapturedConstants(Graph& body, std::span<const Graph* const> enclosing) {
  for (Value* v : body.values()) {
    if (isDefinedLocally(*v)) continue;
    for (auto it = enclosing.rbegin(); it != enclosing.rend(); ++it) {
      const Value* outer = (*it)->findValue(v->name());
      if (!outer) continue;
      if (outer->isInitializer() && !outer->isGraphInput())
        body.setInitializer(v, *outer->initializer());
      break;
    }
  }
}

}  // namespace subgraph
