//===- core/ops/op_schema_builder.cpp - Defining ops at run time ----------===//
//
// The builder records the first mistake and keeps going, so that a long
// fluent chain in a plugin's registration function reports one clear error
// from build() instead of throwing from the middle of an expression.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/op_schema_builder.h"

#include <algorithm>

namespace subgraph {

OpSchemaBuilder::OpSchemaBuilder(std::string domain, std::string name) {
  schema_.domain = std::string(canonicalDomain(domain));
  schema_.name = std::move(name);
  if (schema_.name.empty()) error("the op name is empty");
}

void OpSchemaBuilder::error(std::string message) {
  if (firstError_.empty()) firstError_ = std::move(message);
}

OpSchemaBuilder& OpSchemaBuilder::since(int version) {
  if (version < 1) error("since(" + std::to_string(version) + ") must be >= 1");
  schema_.sinceVersion = version;
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::doc(std::string text) {
  schema_.doc = std::move(text);
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::dataParallel(bool value) {
  schema_.dataParallel = value;
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::operand(std::vector<OperandSpec>& list, std::string name,
                                          Arity arity, std::string typeConstraint, int minCount,
                                          std::string doc) {
  if (name.empty()) error("an operand has an empty name");
  for (const OperandSpec& o : list)
    if (o.name == name) error("operand '" + name + "' is declared twice");
  if (!list.empty() && list.back().arity == Arity::kVariadic)
    error("operand '" + name + "' follows variadic operand '" + list.back().name +
          "'; only the last operand may be variadic");
  if (minCount < 0) error("operand '" + name + "' has a negative minimum count");
  list.push_back({std::move(name), arity, std::move(typeConstraint), std::move(doc), minCount});
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::input(std::string name, std::string typeConstraint,
                                        std::string doc) {
  return operand(schema_.inputs, std::move(name), Arity::kSingle, std::move(typeConstraint), 1,
                 std::move(doc));
}
OpSchemaBuilder& OpSchemaBuilder::optionalInput(std::string name, std::string typeConstraint,
                                                std::string doc) {
  return operand(schema_.inputs, std::move(name), Arity::kOptional, std::move(typeConstraint), 1,
                 std::move(doc));
}
OpSchemaBuilder& OpSchemaBuilder::variadicInput(std::string name, std::string typeConstraint,
                                                int minCount, std::string doc) {
  return operand(schema_.inputs, std::move(name), Arity::kVariadic, std::move(typeConstraint),
                 minCount, std::move(doc));
}
OpSchemaBuilder& OpSchemaBuilder::output(std::string name, std::string typeConstraint,
                                         std::string doc) {
  return operand(schema_.outputs, std::move(name), Arity::kSingle, std::move(typeConstraint), 1,
                 std::move(doc));
}
OpSchemaBuilder& OpSchemaBuilder::optionalOutput(std::string name, std::string typeConstraint,
                                                 std::string doc) {
  return operand(schema_.outputs, std::move(name), Arity::kOptional, std::move(typeConstraint), 1,
                 std::move(doc));
}
OpSchemaBuilder& OpSchemaBuilder::variadicOutput(std::string name, std::string typeConstraint,
                                                 int minCount, std::string doc) {
  return operand(schema_.outputs, std::move(name), Arity::kVariadic, std::move(typeConstraint),
                 minCount, std::move(doc));
}

OpSchemaBuilder& OpSchemaBuilder::addAttr(AttrSpec spec) {
  if (spec.name.empty()) error("an attribute has an empty name");
  if (schema_.findAttr(spec.name)) error("attribute '" + spec.name + "' is declared twice");
  schema_.attributes.push_back(std::move(spec));
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::attr(std::string name, AttrKind kind, AttrValue defaultValue,
                                       std::string doc) {
  // attr("alpha", kFloat, 0) is a natural spelling; honour it.
  if (kind == AttrKind::kFloat && std::holds_alternative<int64_t>(defaultValue))
    defaultValue = static_cast<float>(std::get<int64_t>(defaultValue));
  const AttrKind given = static_cast<AttrKind>(defaultValue.index());
  if (given != kind)
    error("attribute '" + name + "' is " + std::string(attrKindName(kind)) +
          " but its default is " + std::string(attrKindName(given)));
  return addAttr({std::move(name), kind, false, std::move(defaultValue), std::move(doc)});
}

OpSchemaBuilder& OpSchemaBuilder::optionalAttr(std::string name, AttrKind kind, std::string doc) {
  return addAttr({std::move(name), kind, false, std::nullopt, std::move(doc)});
}

OpSchemaBuilder& OpSchemaBuilder::requiredAttr(std::string name, AttrKind kind, std::string doc) {
  return addAttr({std::move(name), kind, true, std::nullopt, std::move(doc)});
}

OpSchemaBuilder& OpSchemaBuilder::attributesFrom(std::string_view op, std::string_view domain) {
  const OpSchema* source = OpRegistry::global().lookup(domain, op);
  if (!source) {
    error("attributesFrom: op '" + std::string(op) + "' is not registered");
    return *this;
  }
  for (const AttrSpec& spec : source->attributes) addAttr(spec);
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::typeConstraint(std::string name, std::vector<DataType> allowed) {
  if (schema_.findTypeConstraint(name)) error("type constraint '" + name + "' is declared twice");
  if (allowed.empty()) error("type constraint '" + name + "' allows no element type");
  schema_.typeConstraints.push_back({std::move(name), std::move(allowed)});
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::infer(InferFn fn) {
  schema_.infer = std::move(fn);
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::inferFrom(std::string_view op, std::string_view domain) {
  const OpSchema* source = OpRegistry::global().lookup(domain, op);
  if (!source || !source->infer) {
    error("inferFrom: op '" + std::string(op) +
          (source ? "' has no shape inference" : "' is not registered"));
    return *this;
  }
  schema_.infer = source->infer;
  return *this;
}

OpSchemaBuilder& OpSchemaBuilder::verify(VerifyFn fn) {
  schema_.verify = std::move(fn);
  return *this;
}

StatusOr<OpSchema> OpSchemaBuilder::build() const {
  if (!firstError_.empty())
    return Status::invalid("op schema '" + schema_.qualifiedName() + "': " + firstError_);
  if (schema_.outputs.empty())
    return Status::invalid("op schema '" + schema_.qualifiedName() + "': it declares no outputs");
  for (const auto* list : {&schema_.inputs, &schema_.outputs})
    for (const OperandSpec& o : *list)
      if (!o.typeConstraint.empty() && !schema_.findTypeConstraint(o.typeConstraint))
        return Status::invalid("op schema '" + schema_.qualifiedName() + "': operand '" + o.name +
                               "' names undefined type constraint '" + o.typeConstraint + "'");
  return schema_;
}

Status OpSchemaBuilder::registerIn(OpRegistry& registry) const {
  StatusOr<OpSchema> schema = build();
  if (!schema.isOk()) return schema.status();
  return registry.registerSchema(std::move(schema.value()));
}

}  // namespace subgraph
