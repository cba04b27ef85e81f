//===- core/passes/attention_idiom.cpp - Attention written out -------------===//
//
// Exporters spell attention as a dozen ops: the head split (Reshape,
// Transpose) of Q, K and V, MatMul(Q, K^T), the scale, the mask Add,
// Softmax, MatMul(V) and the head merge. Backends ran each on its own, with
// the head moves as copies on the reference backend. The pass replaces the
// whole of it with one Attention node, which a backend runs as one kernel
// reading the heads with strides. The match starts at each Softmax and
// walks out from it, so the pass is linear in the graph; see
// attention_idiom.h for the exact rule.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/attention_idiom.h"

#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "idiom_match.h"
#include "strided_view.h"
#include "subgraph/ir/captures.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/ir/shape_inference.h"

namespace subgraph {
namespace {

using namespace passes_detail;

// The static dims of `v`, or nullopt.
std::optional<std::vector<int64_t>> staticDims(const Value* v) {
  if (!v || !v->type().hasRank()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const Dim& d : *v->type().shape) {
    if (!d.isStatic()) return std::nullopt;
    dims.push_back(d.size());
  }
  return dims;
}

// True for the ops that only reshape their first input to the output's dims.
bool isReshapeLike(const Node& n) {
  const std::string& op = n.opType();
  return op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten";
}

// Transpose's permutation (reversed dims when absent).
std::vector<int64_t> permOf(const Node& transpose, size_t rank) {
  if (const Attribute* a = transpose.attr("perm")) return a->asInts();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  return perm;
}

// The factor a scalar Mul or Div by a constant applies to its other
// operand `x` (x * c or c * x, x / c), or nullopt.
std::optional<double> scalarFactor(const Node& n, const Value* x) {
  if (n.numInputs() != 2) return std::nullopt;
  if (n.opType() == "Mul") {
    std::optional<double> c = scalarConstant(otherOperand(n, x));
    return c;
  }
  if (n.opType() == "Div" && n.input(0) == x) {
    std::optional<double> c = scalarConstant(n.input(1));
    if (c && *c != 0.0) return 1.0 / *c;
  }
  return std::nullopt;
}

// A step of a chain: the node and the value it reads.
struct Step {
  Node* node;
  Value* in;
};

// Applies `steps` (in data-flow order) to `view`, or nullopt when a step
// is not a pure view.
std::optional<StridedView> applyForward(StridedView view, const std::vector<Step>& steps) {
  for (const Step& s : steps) {
    const std::string& op = s.node->opType();
    if (op == "Transpose") {
      std::optional<StridedView> p = view.permuted(permOf(*s.node, view.dims.size()));
      if (!p) return std::nullopt;
      view = std::move(*p);
    } else if (isReshapeLike(*s.node)) {
      std::optional<std::vector<int64_t>> out = staticDims(s.node->output(0));
      std::optional<StridedView> r = out ? view.reshaped(*out) : std::nullopt;
      if (!r) return std::nullopt;
      view = std::move(*r);
    }  // a scalar Mul or Div moves nothing
  }
  return view;
}

// How Q', K' or V' reads its source.
enum class Role { kQuery, kKeyTransposed, kValue };

// The view an operand of `role` with dims `x` must be of a 3-D source
// [B, S, H * D] (heads split off), or of a 4-D one [B, H, S, D].
std::optional<StridedView> expectedView(Role role, const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& src) {
  if (x.size() != 4) return std::nullopt;
  const bool kt = role == Role::kKeyTransposed;
  const int64_t b = x[0], h = x[1], s = kt ? x[3] : x[2], d = kt ? x[2] : x[3];
  StridedView v;
  v.dims = x;
  if (src.size() == 3) {
    if (src != std::vector<int64_t>{b, s, h * d}) return std::nullopt;
    const int64_t c = h * d;
    v.strides = kt ? std::vector<int64_t>{s * c, d, 1, c} : std::vector<int64_t>{s * c, d, c, 1};
    return v;
  }
  if (src != std::vector<int64_t>{b, h, s, d}) return std::nullopt;
  StridedView c = StridedView::contiguous(src);
  if (!kt) return c;
  return c.permuted({0, 1, 3, 2});
}

// Q', K' or V' traced back to the furthest 3-D and 4-D sources it views.
struct Operand {
  Value* source3 = nullptr;
  std::vector<Node*> chain3;  // nodes from source3 to the operand
  double scale3 = 1.0;
  Value* source4 = nullptr;
  std::vector<Node*> chain4;
  double scale4 = 1.0;
};

Operand traceOperand(Value* x, Role role, const std::set<std::string>& captured) {
  Operand op;
  std::optional<std::vector<int64_t>> xDims = staticDims(x);
  if (!xDims || !usedExactly(x, 1, captured)) return op;
  std::vector<Step> steps;  // from x upwards
  std::vector<double> factors;
  Value* v = x;
  double scale = 1.0;
  for (;;) {
    std::optional<std::vector<int64_t>> dims = staticDims(v);
    if (!dims) break;
    std::vector<Step> forward(steps.rbegin(), steps.rend());
    std::optional<StridedView> view = applyForward(StridedView::contiguous(*dims), forward);
    std::optional<StridedView> want = expectedView(role, *xDims, *dims);
    if (view && want && view->sameAs(*want)) {
      std::vector<Node*> chain;
      for (const Step& s : forward) chain.push_back(s.node);
      (dims->size() == 3 ? op.source3 : op.source4) = v;
      (dims->size() == 3 ? op.chain3 : op.chain4) = chain;
      (dims->size() == 3 ? op.scale3 : op.scale4) = scale;
    }
    Node* p = v->producer();
    if (!p || !p->domain().empty() || p->numOutputs() != 1 || !p->input(0)) break;
    if (v != x && !usedExactly(v, 1, captured)) break;
    Value* in = p->input(0);
    if (p->opType() == "Mul" || p->opType() == "Div") {
      Value* data = scalarConstant(p->input(0)) ? p->input(1) : p->input(0);
      std::optional<double> f = scalarFactor(*p, data);
      if (!f) break;
      scale *= *f;
      in = data;
    } else if (p->opType() != "Transpose" && !isReshapeLike(*p)) {
      break;
    }
    steps.push_back({p, in});
    v = in;
  }
  return op;
}

// The head merge below y ([B, H, Sq, Dv]): the furthest value z whose
// buffer y is the head view of ([B, Sq, H * Dv] in z's element order), with
// the nodes between them.
struct Merge {
  Value* z = nullptr;
  std::vector<Node*> chain;
};

Merge traceMerge(Value* y, const std::vector<int64_t>& yDims,
                 const std::set<std::string>& captured) {
  Merge best;
  std::vector<Step> steps;  // from y downwards
  Value* v = y;
  const std::vector<int64_t> merged{yDims[0], yDims[2], yDims[1] * yDims[3]};
  std::optional<StridedView> want = expectedView(Role::kQuery, yDims, merged);
  while (want && usedExactly(v, 1, captured)) {
    Node* n = v->uses()[0].user;
    if (!n->domain().empty() || n->numOutputs() != 1 || n->input(0) != v) break;
    if (n->opType() != "Transpose" && !isReshapeLike(*n)) break;
    steps.push_back({n, v});
    v = n->output(0);
    std::optional<std::vector<int64_t>> zDims = staticDims(v);
    if (!zDims) break;
    // Walk back from z to y: each step undone on z's buffer.
    StridedView view = StridedView::contiguous(*zDims);
    bool ok = true;
    for (auto it = steps.rbegin(); it != steps.rend() && ok; ++it) {
      std::optional<StridedView> back;
      if (it->node->opType() == "Transpose") {
        std::vector<int64_t> perm = permOf(*it->node, view.dims.size()), inverse(perm.size());
        for (size_t i = 0; i < perm.size(); ++i)
          if (perm[i] >= 0 && perm[i] < static_cast<int64_t>(perm.size()))
            inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
        back = view.permuted(inverse);
      } else if (std::optional<std::vector<int64_t>> in = staticDims(it->in)) {
        back = view.reshaped(*in);
      }
      ok = back.has_value();
      if (ok) view = std::move(*back);
    }
    if (ok && view.sameAs(*want)) {
      best.z = v;
      best.chain.clear();
      for (const Step& s : steps) best.chain.push_back(s.node);
    }
  }
  return best;
}

// The scores side, from the Softmax: what feeds it and what reads it.
struct Scores {
  Node* qk = nullptr;       // MatMul(Q', K')
  Node* pv = nullptr;       // MatMul(p, V')
  Value* mask = nullptr;    // added to the scores, or null
  double scale = 1.0;       // the scalar factors on the scores
  std::vector<Node*> dead;  // every node from qk to pv
};

// True for a constant whose every element is zero.
bool isZeroConstant(const Value* v) {
  if (!v->isInitializer()) return false;
  const Tensor& t = *v->initializer();
  for (int64_t i = 0; i < t.numElements(); ++i)
    if (t.elementAsDouble(i) != 0.0) return false;
  return true;
}

// True when `v` is a MatMul's result, directly or through scalar Mul or
// Div steps each read once: the scores side of a mask Add.
bool leadsToProduct(Value* v, const std::set<std::string>& captured) {
  for (;;) {
    Node* p = v->producer();
    if (!p || !p->domain().empty()) return false;
    if (p->opType() == "MatMul") return true;
    if ((p->opType() != "Mul" && p->opType() != "Div") || !usedExactly(v, 1, captured))
      return false;
    Value* data = scalarConstant(p->input(0)) ? p->input(1) : p->input(0);
    if (!scalarFactor(*p, data)) return false;
    v = data;
  }
}

// Softmax's input back to the MatMul: [Mul/Div by c]* [Add mask] [Mul/Div by c]*.
bool traceScoresIn(Node& softmax, Scores& s, const std::set<std::string>& captured) {
  Value* v = softmax.input(0);
  std::optional<std::vector<int64_t>> dims = staticDims(v);
  if (!dims || dims->size() != 4) return false;
  for (;;) {
    if (!usedExactly(v, 1, captured)) return false;
    Node* p = v->producer();
    if (!p || !p->domain().empty() || p->numOutputs() != 1) return false;
    if (p->opType() == "MatMul") {
      s.qk = p;
      s.dead.push_back(p);
      return true;
    }
    if (p->opType() == "Add" && !s.mask && s.scale == 1.0) {
      // The mask must be the scores' last dim long: Attention pads a
      // shorter one rather than broadcasting it.
      Value* scores = p->input(0);
      Value* mask = p->input(1);
      if (!leadsToProduct(scores, captured)) std::swap(scores, mask);
      if (!leadsToProduct(scores, captured)) return false;
      std::optional<std::vector<int64_t>> m = staticDims(mask);
      if (!m || m->empty() || m->size() > 4 || m->back() != dims->back() ||
          mask->type().dtype != v->type().dtype)
        return false;
      for (size_t i = 0; i + 1 < m->size(); ++i) {
        int64_t d = (*m)[i], want = (*dims)[dims->size() - m->size() + i];
        if (d != 1 && d != want) return false;
      }
      // A constant mask of zeros (ViT's export adds one) is no mask.
      if (!isZeroConstant(mask)) s.mask = mask;
      s.dead.push_back(p);
      v = scores;
      continue;
    }
    if (p->opType() != "Mul" && p->opType() != "Div") return false;
    Value* data = scalarConstant(p->input(0)) ? p->input(1) : p->input(0);
    std::optional<double> f = scalarFactor(*p, data);
    if (!f) return false;
    s.scale *= *f;
    s.dead.push_back(p);
    v = data;
  }
}

// Softmax's output forward to MatMul(p, V'), through the optional guard
// Where(IsNaN(p), 0, p).
bool traceScoresOut(Node& softmax, Scores& s, const std::set<std::string>& captured) {
  Value* p = softmax.output(0);
  s.dead.push_back(&softmax);
  if (usedExactly(p, 2, captured)) {
    Node* isnan = nullptr;
    Node* where = nullptr;
    for (const auto& use : p->uses()) {
      if (use.user->opType() == "IsNaN") isnan = use.user;
      if (use.user->opType() == "Where") where = use.user;
    }
    if (!isnan || !where || !usedExactly(isnan->output(0), 1, captured) ||
        where->input(0) != isnan->output(0) || !isScalar(where->input(1), 0.0) ||
        where->input(2) != p)
      return false;
    s.dead.push_back(isnan);
    s.dead.push_back(where);
    p = where->output(0);
  }
  if (!usedExactly(p, 1, captured)) return false;
  Node* mm = p->uses()[0].user;
  if (!mm->domain().empty() || mm->opType() != "MatMul" || mm->input(0) != p) return false;
  s.pv = mm;
  s.dead.push_back(mm);
  return true;
}

class AttentionIdiomPass final : public Pass {
 public:
  std::string_view name() const override { return "attention-idiom"; }
  std::string_view description() const override {
    return "Replaces attention written out (head split, MatMul, scale, mask, Softmax, MatMul, "
           "head merge) with Attention.";
  }
  std::string lastRunSummary() const override { return summary_; }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    // The chains are proved on static dims; a graph fresh from a parser has
    // no types on its intermediate values yet. A graph that fails inference
    // keeps the types it has, and chains without them are left alone.
    if (!hasCompleteTypes(graph)) (void)inferShapes(graph);
    std::set<std::string> captured = capturedNames(graph);
    std::vector<Node*> softmaxes;
    for (Node* n : graph.nodes())
      if (n->domain().empty() && n->opType() == "Softmax" && n->numOutputs() == 1)
        softmaxes.push_back(n);
    size_t threeD = 0, fourD = 0;
    for (Node* s : softmaxes) {
      int r = rewrite(graph, *s, captured);
      threeD += r == 3 ? 1 : 0;
      fourD += r == 4 ? 1 : 0;
    }
    if (threeD + fourD == 0) return false;
    summary_ = "replaced " + std::to_string(threeD + fourD) + " written-out attention" +
               (threeD + fourD == 1 ? "" : "s") + " with Attention (" + std::to_string(threeD) +
               " on 3-D inputs with the heads as strides, " + std::to_string(fourD) + " on 4-D)";
    return true;
  }

 private:
  // 3 or 4 for the form written, 0 when the Softmax heads no attention.
  int rewrite(Graph& graph, Node& softmax, const std::set<std::string>& captured) {
    const int64_t axis = intAttr(softmax, "axis", -1);
    if (axis != -1 && axis != 3) return 0;
    Scores s;
    if (!traceScoresIn(softmax, s, captured) || !traceScoresOut(softmax, s, captured)) return 0;
    Operand q = traceOperand(s.qk->input(0), Role::kQuery, captured);
    Operand k = traceOperand(s.qk->input(1), Role::kKeyTransposed, captured);
    Operand v = traceOperand(s.pv->input(1), Role::kValue, captured);
    std::optional<std::vector<int64_t>> y = staticDims(s.pv->output(0));
    std::optional<std::vector<int64_t>> qd = staticDims(s.qk->input(0));
    std::optional<std::vector<int64_t>> kd = staticDims(s.qk->input(1));
    if (!y || y->size() != 4 || !qd || !kd || (*qd)[1] != (*kd)[1]) return 0;
    const DataType t = s.qk->input(0)->type().dtype;
    if (!isFloatingPoint(t) || s.qk->input(1)->type().dtype != t ||
        s.pv->input(1)->type().dtype != t)
      return 0;
    Merge merge = traceMerge(s.pv->output(0), *y, captured);
    // A factor on V scales the output, not the scores: it is not a scale.
    if (q.source3 && k.source3 && v.source3 && v.scale3 == 1.0 && merge.z) {
      write(graph, s, {q.source3, k.source3, v.source3}, q.scale3 * k.scale3,
            {q.chain3, k.chain3, v.chain3, merge.chain}, (*y)[1], merge.z);
      return 3;
    }
    if (q.source4 && k.source4 && v.source4 && v.scale4 == 1.0) {
      write(graph, s, {q.source4, k.source4, v.source4}, q.scale4 * k.scale4,
            {q.chain4, k.chain4, v.chain4}, 0, s.pv->output(0));
      return 4;
    }
    return 0;
  }

  // Writes Attention(q, k, v, mask) computing `result`, 3-D when `heads` >
  // 0 (with a Reshape to result's dims when they are not [B, Sq, H * Dv]),
  // then removes the pattern's nodes.
  void write(Graph& graph, const Scores& s, std::vector<Value*> inputs, double operandScale,
             const std::vector<std::vector<Node*>>& chains, int64_t heads, Value* result) {
    std::vector<Node*> dead = s.dead;
    for (const auto& chain : chains) dead.insert(dead.end(), chain.begin(), chain.end());
    if (s.mask) inputs.push_back(s.mask);
    std::vector<Attribute> attrs;
    if (heads > 0) {
      attrs.emplace_back("q_num_heads", heads);
      attrs.emplace_back("kv_num_heads", heads);
    }
    attrs.emplace_back("scale", static_cast<float>(s.scale * operandScale));
    Node* last = result->producer();
    std::string name = last->name();
    std::vector<int64_t> rd = *staticDims(result);
    std::vector<int64_t> yd = *staticDims(s.pv->output(0));
    std::vector<int64_t> merged{yd[0], yd[2], yd[1] * yd[3]};
    Value* out = result;
    graph.removeNode(last, /*keepOutputs=*/true);
    std::erase(dead, last);
    Value* shape = nullptr;
    if (heads > 0 && rd != merged) {
      out =
          graph.createValue(graph.uniqueValueName(result->name() + "_heads"),
                            TensorType(result->type().dtype, Shape(merged.begin(), merged.end())));
      shape = graph.addInitializer(
          graph.uniqueValueName(result->name() + "_shape"),
          Tensor::fromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(rd.size())}, rd));
    }
    graph.addNode(OpRegistry::global().intern("", "Attention"), std::move(inputs), {out},
                  std::move(attrs), name);
    if (shape)
      graph.addNode(OpRegistry::global().intern("", "Reshape"), {out, shape}, {result}, {},
                    name.empty() ? name : name + "_reshape");
    graph.removeNodes(dead);
  }

  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createAttentionIdiomPass() { return std::make_unique<AttentionIdiomPass>(); }

}  // namespace subgraph
