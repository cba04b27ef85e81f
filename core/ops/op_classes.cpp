//===- core/ops/op_classes.cpp - Runtime support for generated node classes ===//
//
// The schema-driven halves of the generated members: attribute access with
// kind checks, schema verification, hashing and equality over effective
// attribute values, cloning, printing and the builders' common tail. Keeping
// these here rather than in the generated file keeps one copy of the logic
// and lets plugins' plain nodes share it.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/op_classes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <sstream>

#include "subgraph/ir/shape_inference.h"

namespace subgraph {
namespace {

std::string nodeLabel(const Node& node) {
  return node.qualifiedOpType() + " node '" + node.displayName() + "'";
}

[[noreturn]] void throwKindMismatch(const Node& node, std::string_view name, const Attribute& a,
                                    AttrKind expected) {
  throw Error(nodeLabel(node) + ": attribute '" + std::string(name) + "' is " +
              std::string(attrKindName(a.kind())) + ", expected " +
              std::string(attrKindName(expected)));
}

template <typename T>
constexpr AttrKind kindOf() {
  if constexpr (std::is_same_v<T, int64_t>) return AttrKind::kInt;
  if constexpr (std::is_same_v<T, float>) return AttrKind::kFloat;
  if constexpr (std::is_same_v<T, std::string>) return AttrKind::kString;
  if constexpr (std::is_same_v<T, std::vector<int64_t>>) return AttrKind::kInts;
  if constexpr (std::is_same_v<T, std::vector<float>>) return AttrKind::kFloats;
  if constexpr (std::is_same_v<T, std::vector<std::string>>) return AttrKind::kStrings;
  if constexpr (std::is_same_v<T, Tensor>) return AttrKind::kTensor;
  if constexpr (std::is_same_v<T, std::shared_ptr<Graph>>) return AttrKind::kGraph;
  return AttrKind::kGraphs;
}

template <typename T>
const T* typedAttr(const Node& node, std::string_view name) {
  const Attribute* a = node.attr(name);
  if (!a) return nullptr;
  if (const T* p = std::get_if<T>(&a->value())) return p;
  throwKindMismatch(node, name, *a, kindOf<T>());
}

// Element type of a value, or kUndefined when the value is absent.
DataType dtypeOf(const Value* v) { return v ? v->type().dtype : DataType::kUndefined; }

// Checks one operand list (inputs or outputs) against its specs: counts,
// required slots, and type constraints. `seen` collects the dtype bound to
// each constraint so that operands sharing one must agree.
Status checkOperands(const Node& node, std::span<Value* const> values,
                     const std::vector<OperandSpec>& specs, size_t minCount, size_t maxCount,
                     const std::string& what, std::vector<std::pair<std::string, DataType>>& seen) {
  const OpSchema& schema = *node.schema();
  if (values.size() < minCount || values.size() > maxCount) {
    std::string range = maxCount == SIZE_MAX ? "at least " + std::to_string(minCount)
                        : minCount == maxCount
                            ? std::to_string(minCount)
                            : std::to_string(minCount) + " to " + std::to_string(maxCount);
    return Status::invalid(nodeLabel(node) + ": has " + std::to_string(values.size()) + " " + what +
                           "s, expected " + range);
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const OperandSpec& spec = specs[std::min(i, specs.size() - 1)];
    if (!values[i] && spec.arity != Arity::kOptional)
      return Status::invalid(nodeLabel(node) + ": required " + what + " '" + spec.name +
                             "' is missing");
    DataType dt = dtypeOf(values[i]);
    if (spec.typeConstraint.empty() || dt == DataType::kUndefined) continue;
    const TypeConstraint* tc = schema.findTypeConstraint(spec.typeConstraint);
    if (tc && std::find(tc->allowed.begin(), tc->allowed.end(), dt) == tc->allowed.end())
      return Status::invalid(nodeLabel(node) + ": " + what + " '" + spec.name +
                             "' has element type " + std::string(dataTypeName(dt)) +
                             ", not allowed by type constraint " + spec.typeConstraint);
    auto it = std::find_if(seen.begin(), seen.end(),
                           [&](const auto& p) { return p.first == spec.typeConstraint; });
    if (it == seen.end())
      seen.emplace_back(spec.typeConstraint, dt);
    else if (it->second != dt)
      return Status::invalid(nodeLabel(node) + ": " + what + " '" + spec.name + "' is " +
                             std::string(dataTypeName(dt)) + " but another operand of type " +
                             spec.typeConstraint + " is " + std::string(dataTypeName(it->second)));
  }
  return Status::ok();
}

void printFloat(std::ostream& os, float v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  std::string text = s.str();
  if (std::isfinite(v) && text.find_first_of(".e") == std::string::npos) text += ".0";
  os << text;
}

void printQuoted(std::ostream& os, const std::string& s) {
  os << '"';
  for (char c : s) {
    if (c == '"' || c == '\\') os << '\\';
    os << c;
  }
  os << '"';
}

void printKey(std::ostream& os, bool& first, std::string_view name) {
  os << (first ? " {" : ", ") << name << " = ";
  first = false;
}

template <typename T, typename Fn>
void printList(std::ostream& os, const std::vector<T>& v, Fn each) {
  os << '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) os << ", ";
    each(v[i]);
  }
  os << ']';
}

}  // namespace

Status verifyAgainstSchema(const Node& node) {
  const OpSchema* schema = node.schema();
  if (!schema)
    return Status(StatusCode::kNotFound, nodeLabel(node) + ": op '" + node.qualifiedOpType() +
                                             "' has no registered schema");
  std::vector<std::pair<std::string, DataType>> seen;
  SUBGRAPH_RETURN_IF_ERROR(checkOperands(node, node.inputs(), schema->inputs, schema->minInputs(),
                                         schema->maxInputs(), "input", seen));
  SUBGRAPH_RETURN_IF_ERROR(checkOperands(node, node.outputs(), schema->outputs,
                                         schema->minOutputs(), schema->maxOutputs(), "output",
                                         seen));
  for (const Attribute& a : node.attributes()) {
    const AttrSpec* spec = schema->findAttr(a.name());
    if (!spec) return Status::invalid(nodeLabel(node) + ": unknown attribute '" + a.name() + "'");
    if (spec->kind != a.kind())
      return Status::invalid(nodeLabel(node) + ": attribute '" + a.name() + "' is " +
                             std::string(attrKindName(a.kind())) + ", expected " +
                             std::string(attrKindName(spec->kind)));
  }
  for (const AttrSpec& spec : schema->attributes)
    if (spec.required && !node.hasAttr(spec.name))
      return Status::invalid(nodeLabel(node) + ": required attribute '" + spec.name +
                             "' is missing");
  return Status::ok();
}

namespace detail {

const Tensor* tensorAttr(const Node& node, std::string_view name) {
  return typedAttr<Tensor>(node, name);
}

std::shared_ptr<Graph> graphAttr(const Node& node, std::string_view name) {
  const auto* g = typedAttr<std::shared_ptr<Graph>>(node, name);
  return g ? *g : nullptr;
}

std::vector<std::shared_ptr<Graph>> graphsAttr(const Node& node, std::string_view name) {
  const auto* g = typedAttr<std::vector<std::shared_ptr<Graph>>>(node, name);
  return g ? *g : std::vector<std::shared_ptr<Graph>>();
}

template <typename T>
T requiredAttr(const Node& node, std::string_view name) {
  if (const T* p = typedAttr<T>(node, name)) return *p;
  throw Error(nodeLabel(node) + ": required attribute '" + std::string(name) + "' is missing");
}

template <typename T>
std::optional<T> optionalAttr(const Node& node, std::string_view name) {
  if (const T* p = typedAttr<T>(node, name)) return *p;
  return std::nullopt;
}

// The generated getters use exactly these kinds.
template int64_t requiredAttr<int64_t>(const Node&, std::string_view);
template float requiredAttr<float>(const Node&, std::string_view);
template std::string requiredAttr<std::string>(const Node&, std::string_view);
template std::vector<int64_t> requiredAttr<std::vector<int64_t>>(const Node&, std::string_view);
template std::vector<float> requiredAttr<std::vector<float>>(const Node&, std::string_view);
template std::vector<std::string> requiredAttr<std::vector<std::string>>(const Node&,
                                                                         std::string_view);
template std::optional<int64_t> optionalAttr<int64_t>(const Node&, std::string_view);
template std::optional<float> optionalAttr<float>(const Node&, std::string_view);
template std::optional<std::string> optionalAttr<std::string>(const Node&, std::string_view);
template std::optional<std::vector<int64_t>> optionalAttr<std::vector<int64_t>>(const Node&,
                                                                                std::string_view);
template std::optional<std::vector<float>> optionalAttr<std::vector<float>>(const Node&,
                                                                            std::string_view);
template std::optional<std::vector<std::string>> optionalAttr<std::vector<std::string>>(
    const Node&, std::string_view);

void hashMix(size_t& seed, size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

size_t hashOperands(const Node& node) {
  size_t h = std::hash<const void*>()(&node.opKey());
  for (const Value* v : node.inputs()) hashMix(h, std::hash<const void*>()(v));
  hashMix(h, node.numOutputs());
  return h;
}

size_t hashAttr(int64_t v) { return std::hash<int64_t>()(v); }
// -0.0f == 0.0f, so both must hash alike.
size_t hashAttr(float v) { return std::hash<float>()(v == 0.0f ? 0.0f : v); }
size_t hashAttr(const std::string& v) { return std::hash<std::string>()(v); }
size_t hashAttr(const std::vector<int64_t>& v) {
  size_t h = v.size();
  for (int64_t x : v) hashMix(h, hashAttr(x));
  return h;
}
size_t hashAttr(const std::vector<float>& v) {
  size_t h = v.size();
  for (float x : v) hashMix(h, hashAttr(x));
  return h;
}
size_t hashAttr(const std::vector<std::string>& v) {
  size_t h = v.size();
  for (const auto& x : v) hashMix(h, hashAttr(x));
  return h;
}
size_t hashAttr(const Tensor* v) { return v ? v->hash() : 0; }
// Subgraphs compare by identity (as Attribute's operator== does).
size_t hashAttr(const std::shared_ptr<Graph>& v) { return std::hash<const void*>()(v.get()); }
size_t hashAttr(const std::vector<std::shared_ptr<Graph>>& v) {
  size_t h = v.size();
  for (const auto& g : v) hashMix(h, hashAttr(g));
  return h;
}

bool attrsWellTyped(const Node& node) {
  const OpSchema* schema = node.schema();
  if (!schema) return false;
  for (const Attribute& a : node.attributes())
    if (const AttrSpec* spec = schema->findAttr(a.name()); spec && spec->kind != a.kind())
      return false;
  for (const AttrSpec& spec : schema->attributes)
    if (spec.required && !node.hasAttr(spec.name)) return false;
  return true;
}

size_t hashUndeclaredAttrs(const Node& node) {
  const OpSchema* schema = node.schema();
  // Attribute order is not semantic: combine with a commutative sum.
  size_t sum = 0;
  for (const Attribute& a : node.attributes())
    if (!schema || !schema->findAttr(a.name())) sum += a.hash();
  return sum;
}

bool sameOperands(const Node& a, const Node& b) {
  return &a.opKey() == &b.opKey() && a.numOutputs() == b.numOutputs() &&
         std::equal(a.inputs().begin(), a.inputs().end(), b.inputs().begin(), b.inputs().end());
}

bool sameAttr(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

bool sameAttr(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

bool sameAttr(const Tensor* a, const Tensor* b) {
  if (!a || !b) return a == b;
  return *a == *b;
}

bool sameUndeclaredAttrs(const Node& a, const Node& b) {
  auto undeclared = [](const Node& n) {
    std::vector<const Attribute*> out;
    for (const Attribute& attr : n.attributes())
      if (!n.schema() || !n.schema()->findAttr(attr.name())) out.push_back(&attr);
    return out;
  };
  auto ua = undeclared(a);
  auto ub = undeclared(b);
  if (ua.size() != ub.size()) return false;
  for (const Attribute* x : ua) {
    const Attribute* y = b.attr(x->name());
    if (!y || !(*x == *y)) return false;
  }
  return true;
}

Node* cloneNode(const Node& node, Graph& graph, std::vector<Value*> inputs) {
  if (inputs.size() != node.numInputs())
    throw Error(nodeLabel(node) + ": clone needs " + std::to_string(node.numInputs()) +
                " inputs, got " + std::to_string(inputs.size()));
  std::vector<Value*> outputs;
  for (const Value* out : node.outputs())
    outputs.push_back(graph.createValue(graph.uniqueValueName(out->name()), out->type()));
  std::vector<Attribute> attrs(node.attributes().begin(), node.attributes().end());
  return graph.addNode(&node.opKey(), std::move(inputs), std::move(outputs), std::move(attrs),
                       node.name());
}

void printNodeHead(const Node& node, std::ostream& os) {
  for (size_t i = 0; i < node.numOutputs(); ++i) {
    const Value* out = node.output(i);
    os << (i ? ", %" : "%") << out->name();
    if (!out->type().isUnknown()) os << ": " << out->type().toString();
  }
  if (node.numOutputs()) os << " = ";
  os << node.qualifiedOpType() << '(';
  for (size_t i = 0; i < node.numInputs(); ++i) {
    if (i) os << ", ";
    const Value* in = node.input(i);
    if (in)
      os << '%' << in->name();
    else
      os << '_';
  }
  os << ')';
}

void printAttr(std::ostream& os, bool& first, std::string_view name, int64_t v) {
  printKey(os, first, name);
  os << v;
}
void printAttr(std::ostream& os, bool& first, std::string_view name, float v) {
  printKey(os, first, name);
  printFloat(os, v);
}
void printAttr(std::ostream& os, bool& first, std::string_view name, const std::string& v) {
  printKey(os, first, name);
  printQuoted(os, v);
}
void printAttr(std::ostream& os, bool& first, std::string_view name,
               const std::vector<int64_t>& v) {
  printKey(os, first, name);
  printList(os, v, [&](int64_t x) { os << x; });
}
void printAttr(std::ostream& os, bool& first, std::string_view name, const std::vector<float>& v) {
  printKey(os, first, name);
  printList(os, v, [&](float x) { printFloat(os, x); });
}
void printAttr(std::ostream& os, bool& first, std::string_view name,
               const std::vector<std::string>& v) {
  printKey(os, first, name);
  printList(os, v, [&](const std::string& x) { printQuoted(os, x); });
}
void printAttr(std::ostream& os, bool& first, std::string_view name, const Tensor* v) {
  if (!v) return;
  printKey(os, first, name);
  // Tensor payloads can be large; the type is what a reader of a node needs.
  os << "tensor<" << v->type().toString() << '>';
}
void printAttr(std::ostream& os, bool& first, std::string_view name,
               const std::shared_ptr<Graph>& v) {
  if (!v) return;
  printKey(os, first, name);
  os << "graph @" << v->name();
}
void printAttr(std::ostream& os, bool& first, std::string_view name,
               const std::vector<std::shared_ptr<Graph>>& v) {
  if (v.empty()) return;
  printKey(os, first, name);
  printList(os, v,
            [&](const std::shared_ptr<Graph>& g) { os << "graph @" << (g ? g->name() : ""); });
}

void printNodeTail(const Node& node, std::ostream& os, bool noAttrsPrinted, bool typedPrinted) {
  // Attributes the schema does not declare are printed too, so that the
  // output never hides what is on the node.
  bool first = noAttrsPrinted;
  const OpSchema* schema = node.schema();
  for (const Attribute& a : node.attributes()) {
    if (typedPrinted && schema && schema->findAttr(a.name())) continue;
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, Tensor>)
            printAttr(os, first, a.name(), &v);
          else
            printAttr(os, first, a.name(), v);
        },
        a.value());
  }
  if (!first) os << '}';
  if (!node.name().empty()) os << " @" << node.name();
}

void requireInput(const Value* value, std::string_view op, std::string_view operand) {
  if (!value)
    throw Error("create" + std::string(op) + ": required input '" + std::string(operand) +
                "' is null");
}

Node* buildNode(Graph& graph, const OpKey* op, std::vector<Value*> inputs,
                std::vector<Attribute> attrs, const NodeBuildOptions& options) {
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();
  const OpSchema* schema = op->schema.load(std::memory_order_acquire);
  size_t numOutputs = options.numOutputs;
  if (schema) {
    if (numOutputs == 0) numOutputs = std::max<size_t>(schema->minOutputs(), 1);
    if (numOutputs < schema->minOutputs() || numOutputs > schema->maxOutputs())
      throw Error("create" + op->name + ": " + std::to_string(numOutputs) +
                  " outputs requested, the op allows " + std::to_string(schema->minOutputs()) +
                  (schema->maxOutputs() == SIZE_MAX
                       ? " or more"
                       : " to " + std::to_string(schema->maxOutputs())));
  } else if (numOutputs == 0) {
    numOutputs = 1;
  }
  Node* node = graph.addNode(op->qualifiedName(), std::move(inputs), numOutputs, std::move(attrs),
                             options.name);
  if (options.inferTypes) {
    Status status = inferNodeTypes(*node);
    if (!status.isOk()) {
      graph.removeNode(node);
      throw Error(status);
    }
  }
  return node;
}

}  // namespace detail
}  // namespace subgraph
