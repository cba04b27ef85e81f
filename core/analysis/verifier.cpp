//===- core/analysis/verifier.cpp - Structural and schema checks ----------===//
//
// One Verifier object walks a graph and its attribute bodies, collecting
// problems (or stopping at the first one for verify()). The four steps of the
// header run per graph; each is a separate method so that the order in which
// problems are reported is easy to see.
//
// Safety: a broken graph may hold pointers to freed nodes or values (e.g. a
// node output re-pointed by the two-producer escape hatch and then removed).
// Step 1 therefore tests every pointer for membership in the graph's live
// tables before dereferencing it, and later steps run only when step 1 found
// nothing.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/verifier.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include <boost/container/small_vector.hpp>

#include "subgraph/analysis/algorithms.h"

namespace subgraph {
namespace {

std::string describeNode(const Node& node) {
  return node.qualifiedOpType() + " node '" + node.displayName() + "'";
}

// "1 input", "3 inputs".
std::string countText(size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

// "exactly 2", "at least 1", "1 to 3".
std::string rangeText(size_t lo, size_t hi) {
  if (lo == hi) return "exactly " + std::to_string(lo);
  if (hi == SIZE_MAX) return "at least " + std::to_string(lo);
  return std::to_string(lo) + " to " + std::to_string(hi);
}

bool isDefinedLocally(const Value& value) {
  return value.producer() != nullptr || value.isGraphInput() || value.isInitializer();
}

// The operand spec that covers position `index` of a node's operands, or
// null past the last one. Positions map one-to-one onto single and optional
// operands; a trailing variadic operand takes every remaining position.
const OperandSpec* operandAt(const std::vector<OperandSpec>& specs, size_t index) {
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].arity == Arity::kVariadic) return &specs[i];
    if (i == index) return &specs[i];
  }
  return nullptr;
}

// "input 1 ('W', value 'w')".
std::string operandText(const char* kind, size_t index, const OperandSpec* spec,
                        const Value* value) {
  std::string text = std::string(kind) + " " + std::to_string(index);
  if (spec || value) {
    text += " (";
    if (spec) text += "'" + spec->name + "'";
    if (spec && value) text += ", ";
    if (value) text += "value '" + value->name() + "'";
    text += ")";
  }
  return text;
}

std::string allowedTypesText(const TypeConstraint& constraint) {
  std::string text;
  for (DataType t : constraint.allowed) {
    if (!text.empty()) text += ", ";
    text += dataTypeName(t);
  }
  return text;
}

// A fixed set of addresses, for membership tests of pointers that may
// dangle (they are compared, never followed). Flat open addressing sized
// once: a node-based set cost a heap block per member, two million of them
// to verify a 10^6-node graph, and more memory than the graph's own tables.
class AddressSet {
 public:
  template <typename Range>
  AddressSet(const Range& members, size_t count) {
    size_t capacity = 16;
    while (capacity < count * 2) capacity *= 2;
    slots_.assign(capacity, 0);
    for (const void* p : members) insert(reinterpret_cast<uintptr_t>(p));
  }
  /// True if `p` is a member.
  bool contains(const void* p) const {
    const auto key = reinterpret_cast<uintptr_t>(p);
    if (key == 0) return false;
    for (size_t i = home(key);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == key) return true;
      if (slots_[i] == 0) return false;
    }
  }

 private:
  size_t home(uintptr_t key) const {
    // Fibonacci hashing: heap addresses differ mostly in their middle bits.
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> 32) & (slots_.size() - 1);
  }
  void insert(uintptr_t key) {
    size_t i = home(key);
    while (slots_[i] != 0 && slots_[i] != key) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = key;
  }
  std::vector<uintptr_t> slots_;
};

// The live objects of one graph, for pointer-membership tests, and its link
// to the enclosing graph for outer-scope name lookup.
struct Scope {
  const Graph* graph = nullptr;
  const Scope* parent = nullptr;
  AddressSet nodes;
  AddressSet values;

  Scope(const Graph& g, const Scope* enclosing)
      : graph(&g),
        parent(enclosing),
        nodes(g.nodes(), g.numNodes()),
        values(g.values(), g.numValues()) {}
  // True if an enclosing graph defines a value named `name`.
  bool capturesFromOuter(const std::string& name) const {
    for (const Scope* s = parent; s; s = s->parent)
      if (const Value* v = s->graph->findValue(name); v && isDefinedLocally(*v)) return true;
    return false;
  }
  // The enclosing graph that owns `value`, or null.
  const Graph* outerOwner(const Value* value) const {
    for (const Scope* s = parent; s; s = s->parent)
      if (s->values.contains(value)) return s->graph;
    return nullptr;
  }
};

class Verifier {
 public:
  Verifier(const VerifyOptions& options, bool stopAtFirst)
      : options_(options), stopAtFirst_(stopAtFirst) {}

  // Verifies `graph`, whose problems are prefixed with `prefix`.
  void verifyGraph(const Graph& graph, const Scope* enclosing, const std::string& prefix) {
    if (done()) return;
    Scope scope(graph, enclosing);
    std::string saved = std::exchange(prefix_, prefix);
    linksBroken_ = false;
    checkLinks(scope);
    bool linksOk = !linksBroken_;
    if (linksOk) checkDefinitions(scope);
    if (linksOk && !done()) checkAcyclic(graph);
    if (linksOk && options_.checkSchemas)
      for (Node* n : graph.nodes()) checkSchema(*n);
    if (options_.recurseIntoSubgraphs) verifyBodies(graph, scope, prefix);
    prefix_ = std::move(saved);
  }

  std::vector<Status> takeProblems() { return std::move(problems_); }

 private:
  bool done() const { return stopAtFirst_ && !problems_.empty(); }

  // Internal-invariant problems mean links may dangle, which stops the later
  // steps for the current graph.
  void report(StatusCode code, const std::string& message) {
    if (code == StatusCode::kInternal) linksBroken_ = true;
    if (done()) return;
    problems_.emplace_back(code, prefix_ + message);
  }
  void reportUnprefixed(StatusCode code, const std::string& message) {
    if (done()) return;
    problems_.emplace_back(code, message);
  }

  //===--- Step 1: links ------------------------------------------------===//

  void checkLinks(const Scope& scope) {
    const Graph& g = *scope.graph;
    // How many input slots read each value, to compare with use-list sizes
    // below. Comparing counts (rather than searching each use list for each
    // slot) keeps this linear even for a weight shared by thousands of nodes.
    std::vector<uint32_t> slotsReading(g.valueIdBound(), 0);
    for (Node* n : g.nodes()) {
      if (n->graph() != &g)
        report(StatusCode::kInternal, describeNode(*n) + " is stored in graph '" + g.name() +
                                          "' but believes it belongs to another graph");
      for (size_t i = 0; i < n->numInputs(); ++i) {
        Value* v = n->input(i);
        if (!v) continue;
        if (isLive(scope, v))
          ++slotsReading[v->id()];
        else
          reportForeignValue(scope, v, describeNode(*n) + " input " + std::to_string(i));
      }
      checkNodeOutputLinks(scope, *n);
    }
    for (Value* v : g.values()) checkValueLinks(scope, *v, slotsReading[v->id()]);
    checkGraphInputLinks(scope);
    checkGraphOutputLinks(scope);
  }

  static bool isLive(const Scope& scope, const Value* v) { return scope.values.contains(v); }

  // Reports a pointer to a value that is not live in this graph; such a
  // pointer must not be followed any further.
  void reportForeignValue(const Scope& scope, const Value* v, const std::string& where) {
    linksBroken_ = true;
    if (const Graph* owner = scope.outerOwner(v))
      report(StatusCode::kInvalidArgument,
             where + " reads value '" + v->name() + "' of enclosing graph '" + owner->name() +
                 "' directly; a body graph must capture outer values by name");
    else
      report(StatusCode::kInternal, where + " points at a value that is not in graph '" +
                                        scope.graph->name() + "' (removed, or from another graph)");
  }

  // Called when every use of `v` names a live node whose input reads `v`,
  // yet the use count differs from the number of input slots reading `v`:
  // some slot is unrecorded or some use is recorded twice. Finds which, by a
  // scan that only this error path pays for.
  void diagnoseUseCount(const Scope& scope, const Value& v) {
    std::multiset<std::pair<const Node*, uint32_t>> recorded;
    for (const Use& use : v.uses()) recorded.insert({use.user, use.inputIndex});
    for (const Node* n : scope.graph->nodes())
      for (size_t i = 0; i < n->numInputs(); ++i) {
        if (n->input(i) != &v) continue;
        size_t times = recorded.count({n, static_cast<uint32_t>(i)});
        if (times != 1)
          report(StatusCode::kInternal, "value '" + v.name() + "' is input " + std::to_string(i) +
                                            " of " + describeNode(*n) +
                                            " but its use list records that use " +
                                            std::to_string(times) + " times");
      }
  }

  void checkNodeOutputLinks(const Scope& scope, const Node& n) {
    for (size_t j = 0; j < n.numOutputs(); ++j) {
      Value* v = n.output(j);
      if (!v)
        report(StatusCode::kInternal,
               describeNode(n) + " output " + std::to_string(j) + " is null");
      else if (!isLive(scope, v))
        reportForeignValue(scope, v, describeNode(n) + " output " + std::to_string(j));
    }
  }

  void checkValueLinks(const Scope& scope, const Value& v, size_t slotsReading) {
    const Graph& g = *scope.graph;
    if (v.graph() != &g)
      report(StatusCode::kInternal, "value '" + v.name() + "' is stored in graph '" + g.name() +
                                        "' but believes it belongs to another graph");
    size_t matching = 0;
    for (const Use& use : v.uses()) {
      if (!scope.nodes.contains(use.user)) {
        report(StatusCode::kInternal, "value '" + v.name() +
                                          "' lists a use by a node that is not in graph '" +
                                          g.name() + "' (removed?)");
        continue;
      }
      if (use.user->input(use.inputIndex) == &v)
        ++matching;
      else
        report(StatusCode::kInternal, "value '" + v.name() + "' lists a use as input " +
                                          std::to_string(use.inputIndex) + " of " +
                                          describeNode(*use.user) + ", which reads another value");
    }
    if (matching == v.uses().size() && matching != slotsReading) diagnoseUseCount(scope, v);
    if (Node* p = v.producer()) {
      if (!scope.nodes.contains(p))
        report(StatusCode::kInternal, "value '" + v.name() + "' names a producer that is not in " +
                                          "graph '" + g.name() + "' (removed?)");
      else if (p->output(v.producerIndex()) != &v)
        report(StatusCode::kInternal, "value '" + v.name() + "' claims to be output " +
                                          std::to_string(v.producerIndex()) + " of " +
                                          describeNode(*p) + ", which does not list it there");
    }
    if (v.isGraphInput()) {
      auto ins = g.inputs();
      if (std::find(ins.begin(), ins.end(), &v) == ins.end())
        report(StatusCode::kInternal, "value '" + v.name() +
                                          "' is flagged as a graph input but is not in the " +
                                          "input list of graph '" + g.name() + "'");
    }
  }

  void checkGraphInputLinks(const Scope& scope) {
    const Graph& g = *scope.graph;
    std::unordered_set<const Value*> seen;
    for (size_t k = 0; k < g.inputs().size(); ++k) {
      Value* v = g.inputs()[k];
      std::string where = "graph input " + std::to_string(k);
      if (!v) {
        report(StatusCode::kInternal, where + " is null");
        continue;
      }
      if (!scope.values.contains(v)) {
        report(StatusCode::kInternal, where + " is not a value of graph '" + g.name() + "'");
        continue;
      }
      if (!seen.insert(v).second)
        report(StatusCode::kInvalidArgument,
               "value '" + v->name() + "' is listed twice as a " + "graph input");
      if (!v->isGraphInput())
        report(StatusCode::kInternal, where + " ('" + v->name() + "') is not flagged as an input");
    }
  }

  void checkGraphOutputLinks(const Scope& scope) {
    const Graph& g = *scope.graph;
    for (size_t k = 0; k < g.outputs().size(); ++k) {
      Value* v = g.outputs()[k];
      if (!v)
        report(StatusCode::kInvalidArgument, "graph output " + std::to_string(k) + " is null");
      else if (!isLive(scope, v))
        reportForeignValue(scope, v, "graph output " + std::to_string(k));
    }
  }

  //===--- Step 2: definitions ------------------------------------------===//

  void checkDefinitions(const Scope& scope) {
    const Graph& g = *scope.graph;
    std::unordered_set<const Value*> reported;
    for (Node* n : g.nodes()) {
      for (size_t i = 0; i < n->numInputs(); ++i) {
        Value* v = n->input(i);
        if (!v || isDefinedLocally(*v) || scope.capturesFromOuter(v->name())) continue;
        if (reported.insert(v).second)
          report(StatusCode::kInvalidArgument,
                 describeNode(*n) + " reads value '" + v->name() + "' (input " + std::to_string(i) +
                     "), which has no producer and is neither a graph input nor a constant");
      }
      for (size_t j = 0; j < n->numOutputs(); ++j) checkProducedValue(*n, j);
    }
    for (size_t k = 0; k < g.outputs().size(); ++k) {
      Value* v = g.outputs()[k];
      if (!v || isDefinedLocally(*v) || scope.capturesFromOuter(v->name())) continue;
      report(StatusCode::kInvalidArgument,
             "graph output " + std::to_string(k) + " ('" + v->name() +
                 "') has no producer and is neither a graph input nor a constant");
    }
  }

  void checkProducedValue(const Node& n, size_t j) {
    Value* v = n.output(j);
    std::string slot = "output " + std::to_string(j);
    if (v->producer() != &n) {
      if (v->producer())
        report(StatusCode::kInvalidArgument,
               "value '" + v->name() + "' has two producers: " + describeNode(*v->producer()) +
                   " and " + describeNode(n) + " (its " + slot + ")");
      else
        report(StatusCode::kInvalidArgument, describeNode(n) + " lists value '" + v->name() +
                                                 "' as its " + slot +
                                                 ", but the value records no producer");
      return;
    }
    if (v->isGraphInput())
      report(StatusCode::kInvalidArgument, "graph input '" + v->name() + "' is also computed by " +
                                               describeNode(n) + " (" + slot + ")");
    if (v->isInitializer())
      report(StatusCode::kInvalidArgument, "constant '" + v->name() + "' is also computed by " +
                                               describeNode(n) + " (" + slot + ")");
  }

  //===--- Step 3: cycles -----------------------------------------------===//

  void checkAcyclic(const Graph& g) {
    std::vector<Node*> cycle = findCycle(g);
    if (!cycle.empty())
      report(StatusCode::kInvalidArgument,
             "graph '" + g.name() + "' has a cycle: " + describeCycle(cycle));
  }

  //===--- Step 4: schemas ----------------------------------------------===//

  // A fused region (a partitioned model read back) has no schema; its body
  // says what it takes and gives.
  void checkFusedRegion(const Node& n) {
    const Graph& body = *n.attr("body")->asGraph();
    if (body.inputs().size() != n.inputs().size() || body.outputs().size() != n.numOutputs())
      report(StatusCode::kInvalidArgument,
             describeNode(n) + " is a fused region whose body takes " +
                 std::to_string(body.inputs().size()) + " inputs and gives " +
                 std::to_string(body.outputs().size()) + " outputs, but the node has " +
                 std::to_string(n.inputs().size()) + " and " + std::to_string(n.numOutputs()));
  }

  void checkSchema(const Node& n) {
    if (done()) return;
    const OpSchema* schema = n.schema();
    if (!schema && isFusedRegion(n)) {
      checkFusedRegion(n);
      return;
    }
    if (!schema) {
      if (!options_.allowUnknownOps)
        report(StatusCode::kNotFound,
               describeNode(n) + " uses unknown op '" + n.qualifiedOpType() +
                   "' (no schema is registered for it; is a plugin not loaded?)");
      return;
    }
    size_t before = problems_.size();
    checkOperandCounts(n, *schema);
    checkRequiredInputs(n, *schema);
    checkAttributes(n, *schema);
    checkTypeConstraints(n, *schema);
    if (problems_.size() == before && schema->verify) runOpVerifier(n, *schema);
  }

  void checkOperandCounts(const Node& n, const OpSchema& schema) {
    if (n.numInputs() < schema.minInputs() || n.numInputs() > schema.maxInputs())
      report(StatusCode::kInvalidArgument, describeNode(n) + " has " +
                                               countText(n.numInputs(), "input") + ", but " +
                                               schema.qualifiedName() + " takes " +
                                               rangeText(schema.minInputs(), schema.maxInputs()));
    if (n.numOutputs() < schema.minOutputs() || n.numOutputs() > schema.maxOutputs())
      report(StatusCode::kInvalidArgument, describeNode(n) + " has " +
                                               countText(n.numOutputs(), "output") + ", but " +
                                               schema.qualifiedName() + " produces " +
                                               rangeText(schema.minOutputs(), schema.maxOutputs()));
  }

  void checkRequiredInputs(const Node& n, const OpSchema& schema) {
    for (size_t i = 0; i < n.numInputs(); ++i) {
      if (n.input(i)) continue;
      const OperandSpec* spec = operandAt(schema.inputs, i);
      if (!spec || spec->arity == Arity::kOptional) continue;
      report(StatusCode::kInvalidArgument, describeNode(n) + ": required input " +
                                               std::to_string(i) + " ('" + spec->name +
                                               "') is missing");
    }
  }

  void checkAttributes(const Node& n, const OpSchema& schema) {
    for (const AttrSpec& spec : schema.attributes)
      if (spec.required && !n.hasAttr(spec.name))
        report(StatusCode::kInvalidArgument, describeNode(n) + " is missing required attribute '" +
                                                 spec.name + "' (" +
                                                 std::string(attrKindName(spec.kind)) + ")");
    auto attrs = n.attributes();
    // Nodes carry a handful of attributes, so a scan of the earlier ones
    // finds duplicates without allocating; a hostile file can give one node
    // hundreds of thousands, where that scan is quadratic (72 s for 200k),
    // so past a few a hash set takes over.
    constexpr size_t kScanLimit = 16;
    std::unordered_set<std::string_view> names;
    if (attrs.size() > kScanLimit) names.reserve(attrs.size());
    for (size_t k = 0; k < attrs.size(); ++k) {
      const Attribute& attr = attrs[k];
      bool repeated =
          attrs.size() > kScanLimit
              ? !names.insert(attr.name()).second
              : std::any_of(attrs.begin(), attrs.begin() + static_cast<std::ptrdiff_t>(k),
                            [&](const Attribute& a) { return a.name() == attr.name(); });
      if (repeated)
        report(StatusCode::kInvalidArgument,
               describeNode(n) + " has attribute '" + attr.name() + "' twice");
      const AttrSpec* spec = schema.findAttr(attr.name());
      if (!spec) {
        if (!options_.allowUnknownAttributes)
          report(StatusCode::kInvalidArgument, describeNode(n) + " has attribute '" + attr.name() +
                                                   "', which " + schema.qualifiedName() +
                                                   " does not define");
        continue;
      }
      if (attr.kind() != spec->kind)
        report(StatusCode::kInvalidArgument,
               describeNode(n) + ": attribute '" + attr.name() + "' is " +
                   std::string(attrKindName(attr.kind())) + ", but " + schema.qualifiedName() +
                   " defines it as " + std::string(attrKindName(spec->kind)));
    }
  }

  // One operand that has bound a type constraint to an element type; the
  // text naming it is built only if a clash needs it.
  struct Binding {
    const TypeConstraint* constraint;
    DataType dtype;
    const char* kind;
    size_t index;
    const OperandSpec* spec;
    const Value* value;
  };

  using Bindings = boost::container::small_vector<Binding, 4>;

  void checkTypeConstraints(const Node& n, const OpSchema& schema) {
    // Ops have at most a few constraints, so a small vector scanned linearly
    // is cheaper than a map keyed by constraint name; on the stack, as this
    // runs for every node of every graph loaded.
    Bindings bound;
    for (size_t i = 0; i < n.numInputs(); ++i)
      checkOperandType(
          n, schema,
          {nullptr, DataType::kUndefined, "input", i, operandAt(schema.inputs, i), n.input(i)},
          bound);
    for (size_t j = 0; j < n.numOutputs(); ++j)
      checkOperandType(
          n, schema,
          {nullptr, DataType::kUndefined, "output", j, operandAt(schema.outputs, j), n.output(j)},
          bound);
  }

  void checkOperandType(const Node& n, const OpSchema& schema, Binding operand, Bindings& bound) {
    if (!operand.spec || !operand.value || operand.spec->typeConstraint.empty()) return;
    operand.dtype = operand.value->type().dtype;
    if (operand.dtype == DataType::kUndefined) return;
    operand.constraint = schema.findTypeConstraint(operand.spec->typeConstraint);
    const TypeConstraint* constraint = operand.constraint;
    if (!constraint) return;  // registerSchema rejects this; nothing to check against
    auto describe = [](const Binding& b) { return operandText(b.kind, b.index, b.spec, b.value); };
    if (!constraint->allowed.empty() &&
        std::find(constraint->allowed.begin(), constraint->allowed.end(), operand.dtype) ==
            constraint->allowed.end()) {
      report(StatusCode::kInvalidArgument,
             describeNode(n) + ": " + describe(operand) + " has element type " +
                 std::string(dataTypeName(operand.dtype)) + ", but type constraint " +
                 constraint->name + " allows only " + allowedTypesText(*constraint));
      return;
    }
    auto first = std::find_if(bound.begin(), bound.end(),
                              [&](const Binding& b) { return b.constraint == constraint; });
    if (first == bound.end()) {
      bound.push_back(operand);
      return;
    }
    if (first->dtype != operand.dtype)
      report(StatusCode::kInvalidArgument,
             describeNode(n) + ": " + describe(operand) + " has element type " +
                 std::string(dataTypeName(operand.dtype)) + ", but " + describe(*first) +
                 " already bound type constraint " + constraint->name + " to " +
                 std::string(dataTypeName(first->dtype)));
  }

  void runOpVerifier(const Node& n, const OpSchema& schema) {
    Status status;
    try {
      status = schema.verify(n);
    } catch (const std::exception& e) {
      status = Status::invalid(describeNode(n) + ": the " + schema.qualifiedName() +
                               " verifier failed: " + e.what());
    }
    if (status.isOk()) return;
    // Op verifiers are asked to name the node; make sure the message does.
    std::string message = status.message();
    if (message.find("'" + n.displayName() + "'") == std::string::npos)
      message = describeNode(n) + ": " + message;
    report(status.code(), message);
  }

  //===--- Attribute bodies ---------------------------------------------===//

  void verifyBodies(const Graph& g, const Scope& scope, const std::string& prefix) {
    for (Node* n : g.nodes()) {
      for (const Attribute& attr : n->attributes()) {
        std::string where = prefix + "in " + describeNode(*n) + " attribute '" + attr.name() + "'";
        if (attr.kind() == AttrKind::kGraph) {
          verifyBody(attr.asGraph().get(), scope, where);
        } else if (attr.kind() == AttrKind::kGraphs) {
          const auto& bodies = attr.asGraphs();
          for (size_t k = 0; k < bodies.size(); ++k)
            verifyBody(bodies[k].get(), scope, where + "[" + std::to_string(k) + "]");
        }
        if (done()) return;
      }
    }
  }

  // `where` already carries the enclosing prefix.
  void verifyBody(const Graph* body, const Scope& scope, const std::string& where) {
    if (!body) {
      reportUnprefixed(StatusCode::kInvalidArgument, where + " holds no graph");
      return;
    }
    // A body that contains one of its enclosing graphs would recurse forever.
    for (const Scope* s = &scope; s; s = s->parent)
      if (s->graph == body) {
        reportUnprefixed(StatusCode::kInvalidArgument, where + " holds graph '" + body->name() +
                                                           "', which encloses that attribute");
        return;
      }
    verifyGraph(*body, &scope, where + ": ");
  }

  const VerifyOptions& options_;
  bool stopAtFirst_;
  std::string prefix_;
  bool linksBroken_ = false;
  std::vector<Status> problems_;
};

}  // namespace

Status verify(const Graph& graph, const VerifyOptions& options) {
  Verifier verifier(options, /*stopAtFirst=*/true);
  verifier.verifyGraph(graph, nullptr, "");
  std::vector<Status> problems = verifier.takeProblems();
  return problems.empty() ? Status::ok() : problems.front();
}

std::vector<Status> verifyAll(const Graph& graph, const VerifyOptions& options) {
  Verifier verifier(options, /*stopAtFirst=*/false);
  verifier.verifyGraph(graph, nullptr, "");
  return verifier.takeProblems();
}

}  // namespace subgraph
