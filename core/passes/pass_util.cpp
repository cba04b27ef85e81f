//===- core/passes/pass_util.cpp - Helpers shared by the passes -----------===//
//
// capturedNames() walks nested graphs collecting free names: a name read
// inside a body but defined neither in the body nor (for deeper bodies) in an
// intermediate body is a capture from further out.
//
//===----------------------------------------------------------------------===//
#include "pass_util.h"

#include <algorithm>
#include <memory>
#include <variant>
#include <vector>

namespace subgraph::passes_detail {
namespace {

// True if `value` is defined inside its own graph.
bool isDefinedLocally(const Value& value) {
  return value.producer() != nullptr || value.isGraphInput() || value.isInitializer();
}

void collectFreeNames(const Graph& body, std::unordered_set<std::string>& out);

// Adds the free names of every graph in `node`'s attributes.
void collectFromAttributes(const Node& node, std::unordered_set<std::string>& out) {
  for (const Attribute& attr : node.attributes()) {
    std::vector<const Graph*> bodies;
    if (const auto* g = std::get_if<std::shared_ptr<Graph>>(&attr.value())) {
      if (*g) bodies.push_back(g->get());
    } else if (const auto* gs = std::get_if<std::vector<std::shared_ptr<Graph>>>(&attr.value())) {
      for (const auto& g2 : *gs)
        if (g2) bodies.push_back(g2.get());
    }
    for (const Graph* body : bodies) collectFreeNames(*body, out);
  }
}

void collectFreeNames(const Graph& body, std::unordered_set<std::string>& out) {
  for (const Value* v : body.values())
    if (!isDefinedLocally(*v) && (v->hasUses() || v->isGraphOutput())) out.insert(v->name());
  // Deeper bodies may capture names this body defines; only the rest are
  // free here.
  for (const Node* n : body.nodes()) {
    std::unordered_set<std::string> inner;
    collectFromAttributes(*n, inner);
    for (const std::string& name : inner) {
      const Value* local = body.findValue(name);
      if (!local || !isDefinedLocally(*local)) out.insert(name);
    }
  }
}

}  // namespace

std::unordered_set<std::string> capturedNames(const Node& node) {
  std::unordered_set<std::string> out;
  collectFromAttributes(node, out);
  return out;
}

std::unordered_set<std::string> capturedNames(const Graph& graph) {
  std::unordered_set<std::string> out;
  for (const Node* n : graph.nodes()) {
    bool hasBody = false;
    for (const Attribute& attr : n->attributes())
      hasBody = hasBody || attr.kind() == AttrKind::kGraph || attr.kind() == AttrKind::kGraphs;
    if (hasBody) collectFromAttributes(*n, out);
  }
  return out;
}

std::string OpCounter::describe() const {
  std::vector<std::pair<std::string, size_t>> ops(counts_.begin(), counts_.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text = std::to_string(total_) + (total_ == 1 ? " node (" : " nodes (");
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i) text += ", ";
    text += total_ == 1 ? ops[i].first : std::to_string(ops[i].second) + " " + ops[i].first;
  }
  return text + ")";
}

}  // namespace subgraph::passes_detail
