//===- core/ir/node.cpp - Operation nodes ---------------------------------===//
//
// Attribute access with schema defaults, and structural hash/equality used by
// CSE-like passes and by the generated classes.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/node.h"

#include <algorithm>
#include <functional>

#include "subgraph/ir/graph.h"

namespace subgraph {
namespace {

void mix(size_t& h, size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

// Finds the stored attribute or the schema's default for it.
const AttrValue* lookupWithDefault(const Node& node, std::string_view name) {
  if (const Attribute* a = node.attr(name)) return &a->value();
  if (const OpSchema* schema = node.schema())
    if (const AttrSpec* spec = schema->findAttr(name))
      if (spec->defaultValue) return &*spec->defaultValue;
  return nullptr;
}

template <typename T>
T getTyped(const Node& node, std::string_view name, T fallback, AttrKind kind) {
  const AttrValue* v = lookupWithDefault(node, name);
  if (!v) return fallback;
  if (const T* p = std::get_if<T>(v)) return *p;
  throw Error(node.qualifiedOpType() + " node '" + node.displayName() + "': attribute '" +
              std::string(name) + "' is " +
              std::string(attrKindName(static_cast<AttrKind>(v->index()))) + ", expected " +
              std::string(attrKindName(kind)));
}

}  // namespace

bool Value::isGraphOutput() const {
  if (!graph_) return false;
  auto outs = graph_->outputs();
  return std::find(outs.begin(), outs.end(), this) != outs.end();
}

std::string Node::displayName() const { return name_.empty() ? "#" + std::to_string(id_) : name_; }

const Attribute* Node::attr(std::string_view name) const {
  for (const auto& a : attrs_)
    if (a.name() == name) return &a;
  return nullptr;
}

void Node::setAttr(std::string name, AttrValue value) {
  for (auto& a : attrs_)
    if (a.name() == name) {
      a.value() = std::move(value);
      return;
    }
  attrs_.emplace_back(std::move(name), std::move(value));
}

bool Node::removeAttr(std::string_view name) {
  auto it = std::find_if(attrs_.begin(), attrs_.end(),
                         [&](const Attribute& a) { return a.name() == name; });
  if (it == attrs_.end()) return false;
  attrs_.erase(it);
  return true;
}

int64_t Node::getInt(std::string_view name, int64_t fallback) const {
  return getTyped<int64_t>(*this, name, fallback, AttrKind::kInt);
}
float Node::getFloat(std::string_view name, float fallback) const {
  return getTyped<float>(*this, name, fallback, AttrKind::kFloat);
}
std::string Node::getString(std::string_view name, std::string fallback) const {
  return getTyped<std::string>(*this, name, std::move(fallback), AttrKind::kString);
}
std::vector<int64_t> Node::getInts(std::string_view name, std::vector<int64_t> fallback) const {
  return getTyped<std::vector<int64_t>>(*this, name, std::move(fallback), AttrKind::kInts);
}
std::vector<float> Node::getFloats(std::string_view name, std::vector<float> fallback) const {
  return getTyped<std::vector<float>>(*this, name, std::move(fallback), AttrKind::kFloats);
}
std::vector<std::string> Node::getStrings(std::string_view name,
                                          std::vector<std::string> fallback) const {
  return getTyped<std::vector<std::string>>(*this, name, std::move(fallback), AttrKind::kStrings);
}

size_t Node::hash() const {
  size_t h = std::hash<const void*>()(op_);
  for (const Value* v : inputs_) mix(h, std::hash<const void*>()(v));
  mix(h, outputs_.size());
  // Attribute order is not semantic, so combine attribute hashes with a
  // commutative operation.
  size_t attrs = 0;
  for (const auto& a : attrs_) attrs += a.hash();
  mix(h, attrs);
  return h;
}

bool Node::isStructurallyEqual(const Node& other) const {
  if (op_ != other.op_ || inputs_ != other.inputs_ || outputs_.size() != other.outputs_.size() ||
      attrs_.size() != other.attrs_.size())
    return false;
  for (const auto& a : attrs_) {
    const Attribute* b = other.attr(a.name());
    if (!b || !(a == *b)) return false;
  }
  return true;
}

bool isFusedRegion(const Node& node) {
  if (!node.domain().starts_with("subgraph.")) return false;
  const Attribute* body = node.attr("body");
  return body && body->kind() == AttrKind::kGraph && body->asGraph() != nullptr;
}

}  // namespace subgraph
