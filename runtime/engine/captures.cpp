//===- runtime/engine/captures.cpp - Outer-scope values of nested graphs --===//
//
// See engine/captures.h.
//
//===----------------------------------------------------------------------===//
#include "engine/captures.h"

#include <set>

namespace subgraph::runtime::engine {
namespace {

bool isFree(const Value* v) { return !v->producer() && !v->isGraphInput() && !v->isInitializer(); }

void freeNames(const Graph& g, std::set<std::string>& out);

// Free names of the nested graphs of `node`, as seen from its graph.
void nestedFreeNames(const Node& node, std::set<std::string>& out) {
  for (const Attribute& a : node.attributes()) {
    if (a.kind() == AttrKind::kGraph && a.asGraph()) freeNames(*a.asGraph(), out);
    if (a.kind() == AttrKind::kGraphs)
      for (const auto& g : a.asGraphs())
        if (g) freeNames(*g, out);
  }
}

// Names `g` reads without defining them: its own free values, plus what its
// nodes' nested graphs read that `g` does not define.
void freeNames(const Graph& g, std::set<std::string>& out) {
  for (const Value* v : g.values())
    if (isFree(v) && (v->hasUses() || v->isGraphOutput())) out.insert(v->name());
  for (const Node* n : g.nodes()) {
    std::set<std::string> inner;
    nestedFreeNames(*n, inner);
    for (const std::string& name : inner) {
      const Value* local = g.findValue(name);
      if (!local || isFree(local)) out.insert(name);
    }
  }
}

}  // namespace

std::vector<std::string> capturedNames(const Node& node) {
  std::set<std::string> names;
  nestedFreeNames(node, names);
  return {names.begin(), names.end()};
}

std::unique_ptr<Graph> withCapturesAsInputs(const Graph& body,
                                            const std::vector<std::string>& names) {
  std::unique_ptr<Graph> g = body.clone();
  for (const std::string& name : names) {
    Value* v = g->findValue(name);
    if (v && !isFree(v)) v = g->createValue(g->uniqueValueName(name + ".unused"), v->type());
    if (!v) v = g->createValue(name);
    g->appendInput(v);
  }
  return g;
}

}  // namespace subgraph::runtime::engine
