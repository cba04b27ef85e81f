//===- plugins/host/host_api.cpp - The host table plugins call ------------===//
//
// Implements SgHostApi over the IR. Every slot is noexcept in effect: the
// IR calls that could throw (attribute kind mismatches, graph edits) are
// guarded, because an exception must not unwind into plugin code, which
// may have been built without unwind tables.
//
//===----------------------------------------------------------------------===//
#include "host_api.h"

#include <algorithm>
#include <exception>
#include <vector>

#include "subgraph/ir/attribute.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/ir/shape_inference.h"
#include "subgraph/ir/tensor.h"
#include "subgraph/passes/dead_code_elimination.h"

namespace subgraph::plugins::host {
namespace {

void messageSet(SgMessage* message, const char* text) {
  if (!message) return;
  std::string t = text ? text : "";
  if (t.size() > kMaxMessageBytes) t.resize(kMaxMessageBytes);
  message->text = std::move(t);
}

const char* messageGet(const SgMessage* message) { return message ? message->text.c_str() : ""; }

// The attribute set on the node, else its schema default, else null.
const AttrValue* attrOrDefault(const SgNode* node, const char* name) {
  if (!node || !name) return nullptr;
  const Node* n = fromC(node);
  if (const Attribute* a = n->attr(name)) return &a->value();
  if (const OpSchema* schema = n->schema())
    if (const AttrSpec* spec = schema->findAttr(name))
      if (spec->defaultValue) return &*spec->defaultValue;
  return nullptr;
}

template <typename T>
const T* attrAs(const SgNode* node, const char* name) {
  const AttrValue* v = attrOrDefault(node, name);
  return v ? std::get_if<T>(v) : nullptr;
}

const char* nodeOpType(const SgNode* node) { return fromC(node)->opType().c_str(); }
const char* nodeDomain(const SgNode* node) { return fromC(node)->domain().c_str(); }
const char* nodeName(const SgNode* node) { return fromC(node)->name().c_str(); }
size_t nodeNumInputs(const SgNode* node) { return fromC(node)->numInputs(); }
const SgValue* nodeInput(const SgNode* node, size_t i) { return toC(fromC(node)->input(i)); }
size_t nodeNumOutputs(const SgNode* node) { return fromC(node)->numOutputs(); }
const SgValue* nodeOutput(const SgNode* node, size_t i) { return toC(fromC(node)->output(i)); }
size_t nodeNumAttrs(const SgNode* node) { return fromC(node)->attributes().size(); }
const char* nodeAttrName(const SgNode* node, size_t i) {
  auto attrs = fromC(node)->attributes();
  return i < attrs.size() ? attrs[i].name().c_str() : "";
}
SgAttrKind nodeAttrKind(const SgNode* node, const char* name) {
  const AttrValue* v = attrOrDefault(node, name);
  return v ? static_cast<SgAttrKind>(v->index() + 1) : SG_ATTR_NONE;
}
int32_t nodeAttrInt(const SgNode* node, const char* name, int64_t* out) {
  const int64_t* v = attrAs<int64_t>(node, name);
  if (!v || !out) return 0;
  *out = *v;
  return 1;
}
int32_t nodeAttrFloat(const SgNode* node, const char* name, float* out) {
  const float* v = attrAs<float>(node, name);
  if (!v || !out) return 0;
  *out = *v;
  return 1;
}
int32_t nodeAttrString(const SgNode* node, const char* name, const char** out) {
  const std::string* v = attrAs<std::string>(node, name);
  if (!v || !out) return 0;
  *out = v->c_str();
  return 1;
}
int32_t nodeAttrInts(const SgNode* node, const char* name, const int64_t** data, size_t* count) {
  const auto* v = attrAs<std::vector<int64_t>>(node, name);
  if (!v || !data || !count) return 0;
  *data = v->data();
  *count = v->size();
  return 1;
}
int32_t nodeAttrFloats(const SgNode* node, const char* name, const float** data, size_t* count) {
  const auto* v = attrAs<std::vector<float>>(node, name);
  if (!v || !data || !count) return 0;
  *data = v->data();
  *count = v->size();
  return 1;
}
const SgGraph* nodeAttrGraph(const SgNode* node, const char* name) {
  const auto* v = attrAs<std::shared_ptr<Graph>>(node, name);
  return v && *v ? toC(v->get()) : nullptr;
}

const char* valueName(const SgValue* value) { return fromC(value)->name().c_str(); }
SgDataType valueDtype(const SgValue* value) {
  return static_cast<SgDataType>(fromC(value)->type().dtype);
}
int32_t valueRank(const SgValue* value) {
  const auto& shape = fromC(value)->type().shape;
  return shape ? static_cast<int32_t>(shape->size()) : -1;
}
// Dim `i` of the value's shape, or null without a shape or past its rank.
const Dim* dimAt(const SgValue* value, int32_t i) {
  const auto& shape = fromC(value)->type().shape;
  if (!shape || i < 0 || static_cast<size_t>(i) >= shape->size()) return nullptr;
  return &(*shape)[static_cast<size_t>(i)];
}
int64_t valueDim(const SgValue* value, int32_t i) {
  const Dim* d = dimAt(value, i);
  return d && d->isStatic() ? d->size() : -1;
}
const char* valueDimSymbol(const SgValue* value, int32_t i) {
  const Dim* d = dimAt(value, i);
  if (!d || d->isUnknown()) return nullptr;
  return d->isSymbolic() ? d->symbolName().c_str() : "";
}
bool isConstant(const Value* v) { return v->isInitializer() && !v->isGraphInput(); }
int32_t valueIsConstant(const SgValue* value) { return isConstant(fromC(value)) ? 1 : 0; }
const void* valueConstantData(const SgValue* value, size_t* bytes) {
  const Value* v = fromC(value);
  if (!isConstant(v)) return nullptr;
  const Tensor* t = v->initializer();
  if (t->dtype() == DataType::kString) return nullptr;
  if (bytes) *bytes = t->bytes().size();
  return t->bytes().data();
}
const SgNode* valueProducer(const SgValue* value) { return toC(fromC(value)->producer()); }

// Distinct readers in use order; a node reading a value twice counts once.
std::vector<const Node*> consumersOf(const Value* v) {
  std::vector<const Node*> out;
  for (const Use& u : v->uses())
    if (std::find(out.begin(), out.end(), u.user) == out.end()) out.push_back(u.user);
  return out;
}
size_t valueNumConsumers(const SgValue* value) { return consumersOf(fromC(value)).size(); }
const SgNode* valueConsumer(const SgValue* value, size_t i) {
  std::vector<const Node*> c = consumersOf(fromC(value));
  return i < c.size() ? toC(c[i]) : nullptr;
}
int32_t valueIsGraphOutput(const SgValue* value) { return fromC(value)->isGraphOutput() ? 1 : 0; }

// graph_node(i) walks a topological order; the SDK reads all nodes of one
// graph in a row, so one cached order per thread makes that linear. The
// key changes whenever a node is added or removed. graph_num_nodes, which a
// plugin calls before walking, always recomputes: a graph freed and another
// allocated at the same address with the same counts must not hit the
// stale order (that crashed PluginConcurrencyTest).
struct OrderCache {
  const Graph* graph = nullptr;
  NodeId bound = 0;
  size_t count = 0;
  std::vector<const Node*> order;
};

const std::vector<const Node*>& topoOrder(const Graph* g, bool refresh = false) {
  thread_local OrderCache cache;
  if (refresh || cache.graph != g || cache.bound != g->nodeIdBound() ||
      cache.count != g->numNodes()) {
    cache.graph = g;
    cache.bound = g->nodeIdBound();
    cache.count = g->numNodes();
    cache.order.clear();
    StatusOr<std::vector<Node*>> order = g->topologicalOrder();
    if (order.isOk())
      cache.order.assign(order.value().begin(), order.value().end());
    else
      for (const Node* n : g->nodes()) cache.order.push_back(n);
  }
  return cache.order;
}

size_t graphNumNodes(const SgGraph* graph) {
  return topoOrder(reinterpret_cast<const Graph*>(graph), /*refresh=*/true).size();
}
const SgNode* graphNode(const SgGraph* graph, size_t i) {
  const auto& order = topoOrder(reinterpret_cast<const Graph*>(graph));
  return i < order.size() ? toC(order[i]) : nullptr;
}
size_t graphNumInputs(const SgGraph* graph) {
  return reinterpret_cast<const Graph*>(graph)->inputs().size();
}
const SgValue* graphInput(const SgGraph* graph, size_t i) {
  auto in = reinterpret_cast<const Graph*>(graph)->inputs();
  return i < in.size() ? toC(in[i]) : nullptr;
}
size_t graphNumOutputs(const SgGraph* graph) {
  return reinterpret_cast<const Graph*>(graph)->outputs().size();
}
const SgValue* graphOutput(const SgGraph* graph, size_t i) {
  auto out = reinterpret_cast<const Graph*>(graph)->outputs();
  return i < out.size() ? toC(out[i]) : nullptr;
}

// An attribute from its C form; false for a kind the ABI cannot carry.
bool toAttribute(const SgAttrValue& a, Attribute& out) {
  if (!a.name || !*a.name) return false;
  switch (a.kind) {
    case SG_ATTR_INT: out = Attribute(a.name, a.i); return true;
    case SG_ATTR_FLOAT: out = Attribute(a.name, static_cast<float>(a.f)); return true;
    case SG_ATTR_STRING: out = Attribute(a.name, std::string(a.s ? a.s : "")); return true;
    case SG_ATTR_INTS:
      if (a.count && !a.ints) return false;
      out = Attribute(a.name, std::vector<int64_t>(a.ints, a.ints + a.count));
      return true;
    case SG_ATTR_FLOATS:
      if (a.count && !a.floats) return false;
      out = Attribute(a.name, std::vector<float>(a.floats, a.floats + a.count));
      return true;
    default: return false;
  }
}

void fusedSetOp(SgFusedNode* fused, const char* domain, const char* op) {
  if (!fused || !fused->node) return;
  std::string d = domain ? domain : fused->defaultDomain;
  std::string o = op ? op : fused->defaultOp;
  fused->node->op = OpRegistry::global().intern(d, o);
}
void fusedSetName(SgFusedNode* fused, const char* name) {
  if (fused && fused->node && name) fused->node->name = name;
}
void fusedAddAttr(SgFusedNode* fused, const SgAttrValue* attr) {
  if (!fused || !fused->node || !attr) return;
  Attribute a;
  if (!toAttribute(*attr, a) || a.name() == "body") return;
  auto& attrs = fused->node->attrs;
  auto it = std::find_if(attrs.begin(), attrs.end(),
                         [&](const Attribute& x) { return x.name() == a.name(); });
  if (it != attrs.end())
    *it = std::move(a);
  else
    attrs.push_back(std::move(a));
}

SgStatus fail(SgMessage* message, const std::string& text) {
  messageSet(message, text.c_str());
  return SG_INVALID_ARGUMENT;
}

SgStatus graphReplaceNode(SgGraph* graph, const SgNode* node, const char* domain,
                          const char* opType, const SgValue* const* inputs, size_t numInputs,
                          const SgAttrValue* attrs, size_t numAttrs, SgMessage* message) {
  try {
    Graph* g = reinterpret_cast<Graph*>(graph);
    if (!g || !node || !opType) return fail(message, "graph_replace_node: null argument");
    Node* old = g->node(fromC(node)->id());
    if (old != fromC(node))
      return fail(message, "graph_replace_node: the node is not in this graph");
    std::string d = domain ? domain : "";
    const OpSchema* schema = OpRegistry::global().lookup(d, opType);
    std::string qualified = d.empty() ? opType : d + "." + opType;
    if (!schema)
      return fail(message, "graph_replace_node: op '" + qualified +
                               "' is not defined (add an op "
                               "definition to the plugin)");
    if (numInputs < schema->minInputs() || numInputs > schema->maxInputs())
      return fail(message, "graph_replace_node: op '" + qualified + "' takes " +
                               std::to_string(schema->minInputs()) + " to " +
                               std::to_string(schema->maxInputs()) + " inputs, not " +
                               std::to_string(numInputs));
    std::vector<Value*> in;
    for (size_t i = 0; i < numInputs; ++i) {
      const Value* v = inputs ? fromC(inputs[i]) : nullptr;
      if (v && v->graph() != g)
        return fail(message, "graph_replace_node: input " + std::to_string(i) +
                                 " is not a value of this graph");
      in.push_back(const_cast<Value*>(v));
    }
    for (const Value* v : in)
      for (size_t o = 0; o < old->numOutputs(); ++o)
        if (v && v == old->output(o))
          return fail(message, "graph_replace_node: the new node would read its own output");
    std::vector<Attribute> attributes;
    for (size_t i = 0; i < numAttrs; ++i) {
      Attribute a;
      if (!toAttribute(attrs[i], a))
        return fail(message, "graph_replace_node: attribute " + std::to_string(i) +
                                 " has no name or an unsupported kind");
      attributes.push_back(std::move(a));
    }
    std::vector<Value*> outputs(old->outputs().begin(), old->outputs().end());
    std::string name = old->name();
    g->removeNode(old, /*keepOutputs=*/true);
    Node* made = g->addNode(OpRegistry::global().intern(d, opType), std::move(in),
                            std::move(outputs), std::move(attributes), std::move(name));
    Status st = inferNodeTypes(*made);
    if (!st.isOk()) return fail(message, "graph_replace_node: " + st.message());
    return SG_OK;
  } catch (const std::exception& e) {
    return fail(message, std::string("graph_replace_node: ") + e.what());
  }
}

SgStatus graphRemoveDeadNodes(SgGraph* graph, SgMessage* message) {
  try {
    StatusOr<bool> changed = createDeadCodeEliminationPass()->run(*reinterpret_cast<Graph*>(graph));
    if (!changed.isOk()) return fail(message, changed.status().message());
    return SG_OK;
  } catch (const std::exception& e) {
    return fail(message, std::string("graph_remove_dead_nodes: ") + e.what());
  }
}

SgHostApi makeApi() {
  SgHostApi api{};
  api.abi_version = SG_PLUGIN_ABI_VERSION;
  api.struct_size = sizeof(SgHostApi);
  api.message_set = &messageSet;
  api.message_get = &messageGet;
  api.node_op_type = &nodeOpType;
  api.node_domain = &nodeDomain;
  api.node_name = &nodeName;
  api.node_num_inputs = &nodeNumInputs;
  api.node_input = &nodeInput;
  api.node_num_outputs = &nodeNumOutputs;
  api.node_output = &nodeOutput;
  api.node_num_attrs = &nodeNumAttrs;
  api.node_attr_name = &nodeAttrName;
  api.node_attr_kind = &nodeAttrKind;
  api.node_attr_int = &nodeAttrInt;
  api.node_attr_float = &nodeAttrFloat;
  api.node_attr_string = &nodeAttrString;
  api.node_attr_ints = &nodeAttrInts;
  api.node_attr_floats = &nodeAttrFloats;
  api.node_attr_graph = &nodeAttrGraph;
  api.value_name = &valueName;
  api.value_dtype = &valueDtype;
  api.value_rank = &valueRank;
  api.value_dim = &valueDim;
  api.value_dim_symbol = &valueDimSymbol;
  api.value_is_constant = &valueIsConstant;
  api.value_constant_data = &valueConstantData;
  api.value_producer = &valueProducer;
  api.value_num_consumers = &valueNumConsumers;
  api.value_consumer = &valueConsumer;
  api.value_is_graph_output = &valueIsGraphOutput;
  api.graph_num_nodes = &graphNumNodes;
  api.graph_node = &graphNode;
  api.graph_num_inputs = &graphNumInputs;
  api.graph_input = &graphInput;
  api.graph_num_outputs = &graphNumOutputs;
  api.graph_output = &graphOutput;
  api.fused_node_set_op = &fusedSetOp;
  api.fused_node_set_name = &fusedSetName;
  api.fused_node_add_attr = &fusedAddAttr;
  api.graph_replace_node = &graphReplaceNode;
  api.graph_remove_dead_nodes = &graphRemoveDeadNodes;
  return api;
}

}  // namespace

const SgHostApi* hostApi() {
  static const SgHostApi api = makeApi();
  return &api;
}

std::string messageOr(const SgMessage& message, const std::string& fallback) {
  return message.text.empty() ? fallback : message.text;
}

}  // namespace subgraph::plugins::host
