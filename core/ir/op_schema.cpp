//===- core/ir/op_schema.cpp - Op definitions and their registry ----------===//
//
// The registry interns (domain, op) keys and owns schemas. Both live until
// process exit so that nodes may hold raw pointers to them, including nodes
// created before a plugin registered the schema they use.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/op_schema.h"

#include <algorithm>
#include <cstdint>

namespace subgraph {
namespace {

std::string keyString(std::string_view domain, std::string_view name) {
  std::string key(canonicalDomain(domain));
  key += '\x1f';  // unit separator: cannot occur in a sane op or domain name
  key += name;
  return key;
}

}  // namespace

std::string_view canonicalDomain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string_view() : domain;
}

std::string OpSchema::qualifiedName() const { return domain.empty() ? name : domain + "." + name; }

const AttrSpec* OpSchema::findAttr(std::string_view attrName) const {
  for (const auto& spec : attributes)
    if (spec.name == attrName) return &spec;
  return nullptr;
}

const TypeConstraint* OpSchema::findTypeConstraint(std::string_view constraint) const {
  for (const auto& tc : typeConstraints)
    if (tc.name == constraint) return &tc;
  return nullptr;
}

// Inputs are positional: an optional operand before a required one still
// occupies a (null) slot, so the minimum is the slot count up to the last
// required operand.
static size_t minCount(const std::vector<OperandSpec>& specs) {
  size_t slots = 0, required = 0;
  for (const auto& s : specs) {
    size_t width = s.arity == Arity::kVariadic ? static_cast<size_t>(std::max(s.minCount, 0)) : 1;
    slots += width;
    if (s.arity == Arity::kSingle || (s.arity == Arity::kVariadic && s.minCount > 0))
      required = slots;
  }
  return required;
}

static size_t maxCount(const std::vector<OperandSpec>& specs) {
  for (const auto& s : specs)
    if (s.arity == Arity::kVariadic) return SIZE_MAX;
  return specs.size();
}

size_t OpSchema::minInputs() const { return minCount(inputs); }
size_t OpSchema::maxInputs() const { return maxCount(inputs); }
size_t OpSchema::minOutputs() const { return minCount(outputs); }
size_t OpSchema::maxOutputs() const { return maxCount(outputs); }

OpRegistry& OpRegistry::global() {
  // Built-in ops are registered on first use; the static's initialization
  // is thread-safe, and registration happens exactly once.
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    registerBuiltinOps(*r);
    return r;
  }();
  return *registry;
}

Status OpRegistry::registerSchema(OpSchema schema) {
  schema.domain = std::string(canonicalDomain(schema.domain));
  if (schema.name.empty()) return Status::invalid("op schema has an empty name");
  for (const auto* list : {&schema.inputs, &schema.outputs})
    for (size_t i = 0; i + 1 < list->size(); ++i)
      if ((*list)[i].arity == Arity::kVariadic)
        return Status::invalid("op '" + schema.qualifiedName() + "': variadic operand '" +
                               (*list)[i].name + "' must be the last one");
  for (const auto* list : {&schema.inputs, &schema.outputs})
    for (const auto& operand : *list)
      if (!operand.typeConstraint.empty() && !schema.findTypeConstraint(operand.typeConstraint))
        return Status::invalid("op '" + schema.qualifiedName() + "': operand '" + operand.name +
                               "' names undefined type constraint '" + operand.typeConstraint +
                               "'");

  std::lock_guard<std::mutex> lock(mutex_);
  std::string key = keyString(schema.domain, schema.name);
  auto& slot = keys_[key];
  if (!slot) {
    slot = std::make_unique<OpKey>();
    slot->domain = schema.domain;
    slot->name = schema.name;
  }
  if (slot->schema.load(std::memory_order_acquire))
    return Status(StatusCode::kInvalidArgument,
                  "op '" + schema.qualifiedName() + "' is already defined");
  schemas_.push_back(std::make_unique<OpSchema>(std::move(schema)));
  slot->schema.store(schemas_.back().get(), std::memory_order_release);
  return Status::ok();
}

const OpSchema* OpRegistry::lookup(std::string_view domain, std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = keys_.find(keyString(domain, name));
  return it == keys_.end() ? nullptr : it->second->schema.load(std::memory_order_acquire);
}

const OpKey* OpRegistry::intern(std::string_view domain, std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = keys_[keyString(domain, name)];
  if (!slot) {
    slot = std::make_unique<OpKey>();
    slot->domain = std::string(canonicalDomain(domain));
    slot->name = std::string(name);
  }
  return slot.get();
}

std::vector<const OpSchema*> OpRegistry::schemas() const {
  std::vector<const OpSchema*> out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& s : schemas_) out.push_back(s.get());
  }
  std::sort(out.begin(), out.end(), [](const OpSchema* a, const OpSchema* b) {
    return a->qualifiedName() < b->qualifiedName();
  });
  return out;
}

}  // namespace subgraph
