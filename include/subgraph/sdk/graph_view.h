//===- subgraph/sdk/graph_view.h - Read-only graph views for plugins -*- C++ -*-===//
//
// Part of the header-only plugin SDK (see subgraph/sdk/plugin.h). A plugin
// never sees subgraph's C++ IR: it sees nodes, values and graphs through the
// host's C table (SgHostApi), wrapped here in small value types that copy
// the host's answers into ordinary C++ (std::string, std::vector). Each view
// is two pointers, the host table and the opaque handle, so views are cheap
// to pass around and compare; they are valid as long as the handle is (see
// the ownership rules in subgraph/plugin_abi.h).
//
// Nothing here is exported from the plugin and nothing crosses the
// boundary but the C handles, so the SDK and the host may be built with
// different compilers and standard libraries.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "subgraph/plugin_abi.h"

namespace subgraph::sdk {

/// Element types, numbered as in ONNX (and SG_DTYPE_*).
enum class DataType : int32_t {
  kUndefined = SG_DTYPE_UNDEFINED,
  kFloat32 = SG_DTYPE_FLOAT32,
  kUInt8 = SG_DTYPE_UINT8,
  kInt8 = SG_DTYPE_INT8,
  kUInt16 = SG_DTYPE_UINT16,
  kInt16 = SG_DTYPE_INT16,
  kInt32 = SG_DTYPE_INT32,
  kInt64 = SG_DTYPE_INT64,
  kString = SG_DTYPE_STRING,
  kBool = SG_DTYPE_BOOL,
  kFloat16 = SG_DTYPE_FLOAT16,
  kFloat64 = SG_DTYPE_FLOAT64,
  kUInt32 = SG_DTYPE_UINT32,
  kUInt64 = SG_DTYPE_UINT64,
  kBFloat16 = SG_DTYPE_BFLOAT16,
};

/// An error a plugin throws; the SDK turns it into `code` and its message
/// at the boundary. Any other exception becomes SG_ERROR with what().
class Error : public std::runtime_error {
 public:
  /// An error with status `code` (SG_ERROR, SG_INVALID_ARGUMENT, ...).
  explicit Error(const std::string& message, SgStatus code = SG_ERROR)
      : std::runtime_error(message), code_(code) {}
  /// The status code the host receives.
  SgStatus code() const { return code_; }

 private:
  SgStatus code_;
};

/// Thrown by a kernel creator or kernel to decline (SG_UNSUPPORTED): the
/// host then uses its default executor for fused regions.
class Unsupported : public Error {
 public:
  /// Declines, saying why.
  explicit Unsupported(const std::string& why) : Error(why, SG_UNSUPPORTED) {}
};

class NodeView;
class GraphView;

/// A read-only view of one value (tensor) of a graph.
class ValueView {
 public:
  /// A view of `value` through `api`; `value` may be null (an omitted input).
  ValueView(const SgHostApi* api, const SgValue* value) : api_(api), value_(value) {}

  /// False for an omitted optional input.
  explicit operator bool() const { return value_ != nullptr; }
  /// The value's name, unique in its graph.
  std::string name() const { return api_->value_name(value_); }
  /// The element type.
  DataType dtype() const { return static_cast<DataType>(api_->value_dtype(value_)); }
  /// The rank, or nullopt if unknown.
  std::optional<int32_t> rank() const {
    int32_t r = api_->value_rank(value_);
    return r < 0 ? std::nullopt : std::optional<int32_t>(r);
  }
  /// Dims; -1 marks a symbolic or unknown dim. Empty if the rank is unknown.
  std::vector<int64_t> dims() const {
    std::vector<int64_t> out;
    for (int32_t i = 0, r = api_->value_rank(value_); i < r; ++i)
      out.push_back(api_->value_dim(value_, i));
    return out;
  }
  /// The name of dim `i` when it is symbolic ("N"; equal names are
  /// equal sizes at run time), "" when static, nullopt when unknown.
  std::optional<std::string> dimSymbol(int32_t i) const {
    // A slot since ABI 2, always there: the SDK's entry point refuses a
    // host whose table is shorter than this header's.
    const char* s = api_->value_dim_symbol(value_, i);
    return s ? std::optional<std::string>(s) : std::nullopt;
  }
  /// True if every dim is known.
  bool hasStaticShape() const {
    if (api_->value_rank(value_) < 0) return false;
    for (int64_t d : dims())
      if (d < 0) return false;
    return true;
  }
  /// True for a constant (an initializer that is not a graph input).
  bool isConstant() const { return api_->value_is_constant(value_) != 0; }
  /// A constant's bytes (dense, row-major); empty if not a constant.
  std::span<const std::byte> constantBytes() const {
    size_t bytes = 0;
    const void* data = api_->value_constant_data(value_, &bytes);
    return data ? std::span<const std::byte>(static_cast<const std::byte*>(data), bytes)
                : std::span<const std::byte>();
  }
  /// A constant's elements as `T` (which must match dtype()); empty if not
  /// a constant.
  template <typename T>
  std::span<const T> constantData() const {
    std::span<const std::byte> b = constantBytes();
    return {reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T)};
  }
  /// The producing node, or nullopt for graph inputs and constants.
  std::optional<NodeView> producer() const;
  /// Distinct nodes reading this value, in use order.
  std::vector<NodeView> consumers() const;
  /// True if the value is an output of its graph.
  bool isGraphOutput() const { return api_->value_is_graph_output(value_) != 0; }

  /// The C handle, for the host table.
  const SgValue* handle() const { return value_; }
  friend bool operator==(const ValueView& a, const ValueView& b) { return a.value_ == b.value_; }

 private:
  const SgHostApi* api_;
  const SgValue* value_;
};

/// A read-only view of one node: op type, domain, name, attributes, inputs
/// and outputs with their types and (for constants) their data.
class NodeView {
 public:
  /// A view of `node` through `api`.
  NodeView(const SgHostApi* api, const SgNode* node) : api_(api), node_(node) {}

  /// The op type, e.g. "Conv".
  std::string opType() const { return api_->node_op_type(node_); }
  /// The domain; empty for ONNX ops.
  std::string domain() const { return api_->node_domain(node_); }
  /// "Conv", or "<domain>.<op>" outside the ONNX domain.
  std::string qualifiedOpType() const {
    std::string d = domain();
    return d.empty() ? opType() : d + "." + opType();
  }
  /// The node's name; may be empty.
  std::string name() const { return api_->node_name(node_); }
  /// The op type, without a copy; valid as long as the node is. For
  /// predicates that compare it against several names per node.
  std::string_view opTypeView() const { return api_->node_op_type(node_); }
  /// True if the node's op is in the ONNX domain (its domain is empty).
  bool inOnnxDomain() const { return api_->node_domain(node_)[0] == '\0'; }
  /// True if this node's op type is `opType` in the ONNX domain.
  bool is(const char* opType) const { return inOnnxDomain() && opTypeView() == opType; }

  /// Number of input slots (omitted optional inputs included).
  size_t numInputs() const { return api_->node_num_inputs(node_); }
  /// Input `i`; test it with `if (v)` for omitted optional inputs.
  ValueView input(size_t i) const { return {api_, api_->node_input(node_, i)}; }
  /// Number of outputs.
  size_t numOutputs() const { return api_->node_num_outputs(node_); }
  /// Output `i`.
  ValueView output(size_t i) const { return {api_, api_->node_output(node_, i)}; }
  /// Distinct nodes reading any output, in use order.
  std::vector<NodeView> consumers() const {
    std::vector<NodeView> out;
    for (size_t o = 0; o < numOutputs(); ++o)
      for (const NodeView& c : output(o).consumers())
        if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    return out;
  }

  /// Names of the attributes set on the node (defaults are not listed).
  std::vector<std::string> attrNames() const {
    std::vector<std::string> out;
    for (size_t i = 0, n = api_->node_num_attrs(node_); i < n; ++i)
      out.emplace_back(api_->node_attr_name(node_, i));
    return out;
  }
  /// True if attribute `name` is set or has a schema default.
  bool hasAttr(const std::string& name) const {
    return api_->node_attr_kind(node_, name.c_str()) != SG_ATTR_NONE;
  }
  /// Integer attribute (or default), or `fallback`.
  int64_t attrInt(const std::string& name, int64_t fallback = 0) const {
    int64_t v = fallback;
    api_->node_attr_int(node_, name.c_str(), &v);
    return v;
  }
  /// Float attribute (or default), or `fallback`.
  float attrFloat(const std::string& name, float fallback = 0.0f) const {
    float v = fallback;
    api_->node_attr_float(node_, name.c_str(), &v);
    return v;
  }
  /// String attribute (or default), or `fallback`.
  std::string attrString(const std::string& name, std::string fallback = {}) const {
    const char* v = nullptr;
    return api_->node_attr_string(node_, name.c_str(), &v) && v ? std::string(v) : fallback;
  }
  /// Integer-list attribute (or default), or `fallback`.
  std::vector<int64_t> attrInts(const std::string& name, std::vector<int64_t> fallback = {}) const {
    const int64_t* data = nullptr;
    size_t n = 0;
    if (!api_->node_attr_ints(node_, name.c_str(), &data, &n)) return fallback;
    return std::vector<int64_t>(data, data + n);
  }
  /// Float-list attribute (or default), or `fallback`.
  std::vector<float> attrFloats(const std::string& name, std::vector<float> fallback = {}) const {
    const float* data = nullptr;
    size_t n = 0;
    if (!api_->node_attr_floats(node_, name.c_str(), &data, &n)) return fallback;
    return std::vector<float>(data, data + n);
  }
  /// A graph attribute, e.g. body("body") of a fused region node.
  std::optional<GraphView> attrGraph(const std::string& name) const;
  /// The body of a fused region node (its "body" graph attribute).
  std::optional<GraphView> body() const;

  /// The C handle, for the host table.
  const SgNode* handle() const { return node_; }
  /// The host table this view reads through.
  const SgHostApi* api() const { return api_; }
  friend bool operator==(const NodeView& a, const NodeView& b) { return a.node_ == b.node_; }

 private:
  const SgHostApi* api_;
  const SgNode* node_;
};

/// A read-only view of a graph: a fused region's body, or the model inside
/// a transform.
class GraphView {
 public:
  /// A view of `graph` through `api`.
  GraphView(const SgHostApi* api, const SgGraph* graph) : api_(api), graph_(graph) {}

  /// Nodes in topological order.
  std::vector<NodeView> nodes() const {
    std::vector<NodeView> out;
    for (size_t i = 0, n = api_->graph_num_nodes(graph_); i < n; ++i)
      out.emplace_back(api_, api_->graph_node(graph_, i));
    return out;
  }
  /// Graph inputs (for a region body: the fused node's inputs, in order).
  std::vector<ValueView> inputs() const {
    std::vector<ValueView> out;
    for (size_t i = 0, n = api_->graph_num_inputs(graph_); i < n; ++i)
      out.emplace_back(api_, api_->graph_input(graph_, i));
    return out;
  }
  /// Graph outputs (for a region body: the fused node's outputs, in order).
  std::vector<ValueView> outputs() const {
    std::vector<ValueView> out;
    for (size_t i = 0, n = api_->graph_num_outputs(graph_); i < n; ++i)
      out.emplace_back(api_, api_->graph_output(graph_, i));
    return out;
  }
  /// The C handle, for the host table.
  const SgGraph* handle() const { return graph_; }
  /// The host table this view reads through.
  const SgHostApi* api() const { return api_; }

 private:
  const SgHostApi* api_;
  const SgGraph* graph_;
};

/// One attribute of a node a plugin asks the host for (a fused node's extra
/// attributes, a transform's replacement node).
struct Attr {
  std::string name;
  SgAttrKind kind = SG_ATTR_INT;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;

  /// An integer attribute.
  static Attr Int(std::string name, int64_t value) {
    Attr a;
    a.name = std::move(name);
    a.kind = SG_ATTR_INT;
    a.i = value;
    return a;
  }
  /// A float attribute.
  static Attr Float(std::string name, double value) {
    Attr a;
    a.name = std::move(name);
    a.kind = SG_ATTR_FLOAT;
    a.f = value;
    return a;
  }
  /// A string attribute.
  static Attr String(std::string name, std::string value) {
    Attr a;
    a.name = std::move(name);
    a.kind = SG_ATTR_STRING;
    a.s = std::move(value);
    return a;
  }
  /// An integer-list attribute.
  static Attr Ints(std::string name, std::vector<int64_t> value) {
    Attr a;
    a.name = std::move(name);
    a.kind = SG_ATTR_INTS;
    a.ints = std::move(value);
    return a;
  }
  /// A float-list attribute.
  static Attr Floats(std::string name, std::vector<float> value) {
    Attr a;
    a.name = std::move(name);
    a.kind = SG_ATTR_FLOATS;
    a.floats = std::move(value);
    return a;
  }

  /// The C form; points into this Attr, which must outlive it.
  SgAttrValue toC() const {
    SgAttrValue v{};
    v.name = name.c_str();
    v.kind = kind;
    v.i = i;
    v.f = f;
    v.s = s.c_str();
    v.ints = ints.data();
    v.floats = floats.data();
    v.count = kind == SG_ATTR_INTS ? ints.size() : kind == SG_ATTR_FLOATS ? floats.size() : 0;
    return v;
  }
};

/// The model as a transform may edit it: a GraphView plus the host's edit
/// slots. Edits throw sdk::Error with the host's reason when refused.
class MutableGraph : public GraphView {
 public:
  /// A view of `graph` through `api`; `scratch` is the host message the
  /// host writes edit errors into (the transform call's own).
  MutableGraph(const SgHostApi* api, SgGraph* graph, SgMessage* scratch)
      : GraphView(api, graph), graph_(graph), scratch_(scratch) {}

  /// Replaces `node` by op `domain`.`opType` reading `inputs` and defining
  /// `node`'s outputs, with `attrs`.
  void replaceNode(const NodeView& node, const std::string& domain, const std::string& opType,
                   const std::vector<ValueView>& inputs, const std::vector<Attr>& attrs = {}) {
    std::vector<const SgValue*> in;
    for (const ValueView& v : inputs) in.push_back(v.handle());
    std::vector<SgAttrValue> a;
    for (const Attr& attr : attrs) a.push_back(attr.toC());
    check(api()->graph_replace_node(graph_, node.handle(), domain.c_str(), opType.c_str(),
                                    in.data(), in.size(), a.data(), a.size(), scratch_));
  }
  /// Removes nodes nobody reads and unread constants.
  void removeDeadNodes() { check(api()->graph_remove_dead_nodes(graph_, scratch_)); }

 private:
  void check(SgStatus st) const {
    if (st != SG_OK) throw Error(api()->message_get(scratch_), st);
  }

  SgGraph* graph_;
  SgMessage* scratch_;
};

inline std::optional<NodeView> ValueView::producer() const {
  const SgNode* p = api_->value_producer(value_);
  return p ? std::optional<NodeView>(NodeView(api_, p)) : std::nullopt;
}

inline std::vector<NodeView> ValueView::consumers() const {
  std::vector<NodeView> out;
  for (size_t i = 0, n = api_->value_num_consumers(value_); i < n; ++i)
    out.emplace_back(api_, api_->value_consumer(value_, i));
  return out;
}

inline std::optional<GraphView> NodeView::attrGraph(const std::string& name) const {
  const SgGraph* g = api_->node_attr_graph(node_, name.c_str());
  return g ? std::optional<GraphView>(GraphView(api_, g)) : std::nullopt;
}

inline std::optional<GraphView> NodeView::body() const { return attrGraph("body"); }

}  // namespace subgraph::sdk
