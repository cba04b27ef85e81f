//===- runtime/engine/captures.cpp - Outer-scope values of nested graphs --===//
//
// See engine/captures.h.
//
//===----------------------------------------------------------------------===//
#include "engine/captures.h"

#include "subgraph/ir/captures.h"

#include <set>

namespace subgraph::runtime::engine {
namespace {

bool isFree(const Value* v) { return !v->producer() && !v->isGraphInput() && !v->isInitializer(); }

}  // namespace

std::vector<std::string> capturedNames(const Node& node) {
  std::set<std::string> names = subgraph::capturedNames(node);
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
