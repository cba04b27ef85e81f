//===- core/passes/opset_lowering.cpp - Newer ops for older opsets --------===//
//
// ONNX export's inverse of the transformer idiom passes: Attention and Gelu
// nodes newer than the graph's opset are written out again as the ops an
// older opset has, so that a partitioned BERT exported at opset 14 stays a
// valid opset-14 model. See opset_lowering.h for what each becomes.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/opset_lowering.h"

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "subgraph/ir/node.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/ir/shape_inference.h"

namespace subgraph {
namespace {

constexpr int64_t kGeluOpset = 20;
constexpr int64_t kAttentionOpset = 23;

bool isNewer(const Node& n, int64_t opset) {
  if (!n.domain().empty()) return false;
  return (n.opType() == "Gelu" && opset < kGeluOpset) ||
         (n.opType() == "Attention" && opset < kAttentionOpset);
}

// Builds the replacement of one node, step by step, under its name.
class Writer {
 public:
  Writer(Graph& graph, const Node& node) : graph_(graph), name_(node.name()) {
    dtype_ = node.input(0)->type().dtype;
  }

  Value* scalar(double v) {
    return graph_.addInitializer(graph_.uniqueValueName(name_ + "_c"),
                                 Tensor::splat(dtype_, {}, v));
  }
  Value* ints(const std::vector<int64_t>& v) {
    return graph_.addInitializer(
        graph_.uniqueValueName(name_ + "_shape"),
        Tensor::fromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v));
  }
  Value* op(std::string_view op, std::vector<Value*> in, std::vector<Attribute> attrs = {}) {
    std::string name = name_ + "/" + std::string(op) + "_" + std::to_string(++count_);
    return graph_.addNode(op, std::move(in), 1, std::move(attrs), name)->output(0);
  }
  // The last step, writing `result` (whose producer was removed).
  void last(std::string_view op, std::vector<Value*> in, Value* result,
            std::vector<Attribute> attrs = {}) {
    graph_.addNode(OpRegistry::global().intern("", op), std::move(in), {result}, std::move(attrs),
                   name_);
  }
  Value* transpose(Value* x, std::vector<int64_t> perm) {
    return op("Transpose", {x}, {Attribute("perm", std::move(perm))});
  }

 private:
  Graph& graph_;
  std::string name_;
  DataType dtype_ = DataType::kFloat32;
  int count_ = 0;
};

// The static last dim of `v`, or nullopt.
std::optional<int64_t> lastDim(const Value* v) {
  const TensorType& t = v->type();
  if (!t.hasRank() || t.rank() == 0 || !(*t.shape)[t.rank() - 1].isStatic()) return std::nullopt;
  return (*t.shape)[t.rank() - 1].size();
}

Status lowerGelu(Graph& graph, Node* gelu) {
  Value* x = gelu->input(0);
  Value* y = gelu->output(0);
  const bool tanh = gelu->getString("approximate", "none") == "tanh";
  Writer w(graph, *gelu);
  graph.removeNode(gelu, /*keepOutputs=*/true);
  Value* inner;
  if (tanh) {
    Value* cube = w.op("Mul", {w.op("Mul", {x, x}), x});
    Value* sum = w.op("Add", {x, w.op("Mul", {cube, w.scalar(0.044715)})});
    inner = w.op("Tanh", {w.op("Mul", {sum, w.scalar(std::sqrt(2.0 / M_PI))})});
  } else {
    inner = w.op("Erf", {w.op("Div", {x, w.scalar(std::sqrt(2.0))})});
  }
  Value* half = w.op("Mul", {x, w.scalar(0.5)});
  w.last("Mul", {half, w.op("Add", {inner, w.scalar(1.0)})}, y);
  return Status::ok();
}

// Why `attention` has no written-out form here, or "".
std::string unsupportedAttention(const Node& a) {
  if (a.getInt("is_causal", 0) != 0) return "is_causal";
  if (a.numInputs() > 4 && a.input(4)) return "past keys";
  if (a.getFloat("softcap", 0.0f) != 0.0f) return "a softcap";
  for (size_t i = 1; i < a.numOutputs(); ++i)
    if (a.output(i) && !a.output(i)->uses().empty()) return "present or qk outputs";
  if (a.getInt("q_num_heads", 0) != a.getInt("kv_num_heads", 0)) return "grouped heads";
  return "";
}

Status lowerAttention(Graph& graph, Node* a) {
  if (std::string why = unsupportedAttention(*a); !why.empty())
    return Status::error(StatusCode::kUnsupported,
                         a->displayName() + ": Attention with " + why +
                             " cannot be written for this model's opset; export at opset 23");
  Value* q = a->input(0);
  Value* k = a->input(1);
  Value* v = a->input(2);
  Value* mask = a->numInputs() > 3 ? a->input(3) : nullptr;
  Value* y = a->output(0);
  const bool threeD = q->type().hasRank() && q->type().rank() == 3;
  const int64_t heads = a->getInt("q_num_heads", 0);
  std::optional<int64_t> qh = lastDim(q), vh = lastDim(v);
  if (!qh || !vh || (threeD && (heads <= 0 || *qh % heads || *vh % heads)))
    return Status::error(StatusCode::kUnsupported, a->displayName() +
                                                       ": Attention needs a static head size to be "
                                                       "written for this model's opset");
  const int64_t d = threeD ? *qh / heads : *qh, dv = threeD ? *vh / heads : *vh;
  std::optional<double> scale;
  if (const Attribute* s = a->attr("scale")) scale = s->asFloat();
  Writer w(graph, *a);
  std::vector<Value*> unused(a->outputs().begin() + 1, a->outputs().end());
  graph.removeNode(a, /*keepOutputs=*/true);
  for (Value* out : unused)
    if (out) graph.removeValue(out);
  Value *q4 = q, *kt, *v4 = v;
  if (threeD) {
    q4 = w.transpose(w.op("Reshape", {q, w.ints({0, 0, heads, d})}), {0, 2, 1, 3});
    kt = w.transpose(w.op("Reshape", {k, w.ints({0, 0, heads, d})}), {0, 2, 3, 1});
    v4 = w.transpose(w.op("Reshape", {v, w.ints({0, 0, heads, dv})}), {0, 2, 1, 3});
  } else {
    kt = w.transpose(k, {0, 1, 3, 2});
  }
  Value* s = w.op("MatMul", {q4, kt});
  s = w.op("Mul", {s, w.scalar(scale ? *scale : 1.0 / std::sqrt(static_cast<double>(d)))});
  if (mask && mask->type().dtype == DataType::kBool)
    s = w.op("Where", {mask, s, w.scalar(-std::numeric_limits<double>::infinity())});
  else if (mask)
    s = w.op("Add", {s, mask});
  Value* p = w.op("Softmax", {s}, {Attribute("axis", int64_t{-1})});
  if (mask) p = w.op("Where", {w.op("IsNaN", {p}), w.scalar(0.0), p});
  if (!threeD) {
    w.last("MatMul", {p, v4}, y);
    return Status::ok();
  }
  Value* o = w.transpose(w.op("MatMul", {p, v4}), {0, 2, 1, 3});
  w.last("Reshape", {o, w.ints({0, 0, heads * dv})}, y);
  return Status::ok();
}

}  // namespace

bool hasOpsNewerThan(const Graph& graph, int64_t opset) {
  for (const Node* n : graph.nodes()) {
    if (isNewer(*n, opset)) return true;
    for (const Attribute& attr : n->attributes())
      if (attr.kind() == AttrKind::kGraph && attr.asGraph() &&
          hasOpsNewerThan(*attr.asGraph(), opset))
        return true;
  }
  return false;
}

Status lowerOpsNewerThan(Graph& graph, int64_t opset) {
  std::vector<Node*> newer;
  for (Node* n : graph.nodes()) {
    if (isNewer(*n, opset)) newer.push_back(n);
    // Nested graphs are shared by every clone of their graph: lower a copy.
    std::vector<Attribute> attrs(n->attributes().begin(), n->attributes().end());
    for (const Attribute& attr : attrs) {
      if (attr.kind() != AttrKind::kGraph || !attr.asGraph() ||
          !hasOpsNewerThan(*attr.asGraph(), opset))
        continue;
      std::shared_ptr<Graph> copy = attr.asGraph()->clone();
      SUBGRAPH_RETURN_IF_ERROR(lowerOpsNewerThan(*copy, opset));
      n->setAttr(attr.name(), std::move(copy));
    }
  }
  if (newer.empty()) return Status::ok();
  // The written-out form needs element types for its constants; a graph
  // fresh from a parser has none on its intermediate values yet.
  if (!hasCompleteTypes(graph)) (void)inferShapes(graph);
  for (Node* n : newer) {
    if (!isFloatingPoint(n->input(0)->type().dtype))
      return Status::error(StatusCode::kUnsupported,
                           n->displayName() + ": the element type of its input is unknown, so " +
                               n->opType() + " cannot be written for this model's opset");
    SUBGRAPH_RETURN_IF_ERROR(n->opType() == "Gelu" ? lowerGelu(graph, n)
                                                   : lowerAttention(graph, n));
  }
  return Status::ok();
}

}  // namespace subgraph
