//===- core/passes/layer_norm_idiom.cpp - LayerNorm written out -----------===//
//
// PyTorch exports nn.LayerNorm before opset 17 as seven to nine element-wise
// and reduction ops. Backends fuse LayerNormalization (oneDNN's
// layer_normalization primitive) but not the spelled-out form, whose
// Sub and Div between two tensors no backend's element-wise family takes,
// so the whole normalization ran on the reference backend with a copy on
// each side. The match starts at each Div and walks up, so the pass is
// linear in the graph. See layer_norm_idiom.h for the exact rule.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/layer_norm_idiom.h"

#include <optional>
#include <vector>

#include "idiom_match.h"
#include "subgraph/ir/captures.h"

namespace subgraph {
namespace {

using namespace passes_detail;

constexpr int64_t kLayerNormOpset = 17;

// True if `reduce` is a ReduceMean of `x` over its last axis alone, keeping
// dims (axes from the attribute, or from a constant second input as in
// opset 18).
bool reducesLastAxis(const Node& reduce, const Value& x) {
  if (intAttr(reduce, "keepdims", 1) != 1) return false;
  std::vector<int64_t> axes;
  if (const Attribute* a = reduce.attr("axes")) {
    axes = a->asInts();
  } else if (reduce.numInputs() > 1 && reduce.input(1) && reduce.input(1)->isInitializer()) {
    axes = reduce.input(1)->initializer()->toInt64Vector();
  }
  if (axes.size() != 1) return false;
  if (axes[0] == -1) return true;
  const TensorType& t = x.type();
  return t.hasRank() && axes[0] == static_cast<int64_t>(t.rank()) - 1;
}

// The static size of `x`'s last dim, or nothing.
std::optional<int64_t> lastDim(const Value& x) {
  const TensorType& t = x.type();
  if (!t.hasRank() || t.rank() == 0) return std::nullopt;
  const Dim& d = (*t.shape)[t.rank() - 1];
  return d.isStatic() ? std::optional<int64_t>(d.size()) : std::nullopt;
}

// True if the constant `c` can be LayerNormalization's scale or bias: one
// value per element of the last axis (1-D), or one value to repeat.
bool fitsPerChannel(const Value* c, std::optional<int64_t> channels, DataType dtype) {
  if (!c || !c->isInitializer() || c->initializer()->dtype() != dtype) return false;
  const Tensor& t = *c->initializer();
  if (t.dims().size() == 1 && channels && t.dims()[0] == *channels) return true;
  return t.numElements() == 1 && channels;
}

// `c` itself when it is 1-D per channel, else a new [C] constant of
// `fill` (c's single value, or 1 for a missing gamma).
Value* perChannel(Graph& graph, Value* c, int64_t channels, DataType dtype, double fill,
                  const std::string& hint) {
  if (c && c->initializer()->dims().size() == 1 && c->initializer()->dims()[0] == channels)
    return c;
  if (c) fill = c->initializer()->elementAsDouble(0);
  return graph.addInitializer(graph.uniqueValueName(hint), Tensor::splat(dtype, {channels}, fill));
}

// The constant input of a binary `node` whose other input is `v`, or null.
Value* otherConstant(const Node& node, const Value* v) {
  Value* other = otherOperand(node, v);
  return other && other->isInitializer() ? other : nullptr;
}

struct Match {
  Value* x = nullptr;
  double epsilon = 0;
  Value* gamma = nullptr;
  Value* beta = nullptr;
  Value* result = nullptr;
  std::vector<Node*> steps;  // in order; all but the node computing `result`
};

// Matches the normalization core ending at `div`: Div(d, Sqrt(Add(v, eps))).
std::optional<Match> matchCore(Node& div, const std::set<std::string>& captured) {
  Node* sub = producerIs(div.input(0), "Sub");
  Node* sqrt = producerIs(div.input(1), "Sqrt");
  if (!sub || !sqrt || !usedExactly(sqrt->output(0), 1, captured)) return std::nullopt;
  Value* x = sub->input(0);
  Node* mean = producerIs(sub->input(1), "ReduceMean");
  if (!x || !mean || mean->input(0) != x || !reducesLastAxis(*mean, *x) ||
      !usedExactly(mean->output(0), 1, captured))
    return std::nullopt;
  Node* addEps = producerIs(sqrt->input(0), "Add");
  if (!addEps || !usedExactly(addEps->output(0), 1, captured)) return std::nullopt;
  Node* var = nullptr;
  for (Value* in : addEps->inputs())
    if (Node* r = producerIs(in, "ReduceMean")) var = r;
  Value* eps = var ? otherConstant(*addEps, var->output(0)) : nullptr;
  if (!var || !scalarConstant(eps) || !reducesLastAxis(*var, *x) ||
      !usedExactly(var->output(0), 1, captured))
    return std::nullopt;
  Value* d = sub->output(0);
  Node* square = producerIs(var->input(0), "Pow");
  bool squares = square && square->input(0) == d && isScalar(square->input(1), 2.0);
  if (!squares) {
    square = producerIs(var->input(0), "Mul");
    squares = square && square->input(0) == d && square->input(1) == d;
  }
  size_t dReads = square && square->opType() == "Mul" ? 3 : 2;
  if (!squares || !usedExactly(square->output(0), 1, captured) || !usedExactly(d, dReads, captured))
    return std::nullopt;
  Match m;
  m.x = x;
  m.epsilon = *scalarConstant(eps);
  m.steps = {mean, sub, square, var, addEps, sqrt};
  m.result = div.output(0);
  return m;
}

// Extends `m` through an optional Mul by gamma and an optional Add of beta.
void matchAffine(Match& m, const std::set<std::string>& captured) {
  auto next = [&](std::string_view op) -> Node* {
    if (!usedExactly(m.result, 1, captured)) return nullptr;
    Node* user = m.result->uses()[0].user;
    bool ok = user->domain().empty() && user->opType() == op && user->numOutputs() == 1;
    return ok && otherConstant(*user, m.result) ? user : nullptr;
  };
  if (Node* mul = next("Mul")) {
    m.gamma = otherConstant(*mul, m.result);
    m.steps.push_back(m.result->producer());
    m.result = mul->output(0);
  }
  if (Node* add = next("Add")) {
    m.beta = otherConstant(*add, m.result);
    m.steps.push_back(m.result->producer());
    m.result = add->output(0);
  }
}

class LayerNormIdiomPass final : public Pass {
 public:
  std::string_view name() const override { return "layernorm-idiom"; }
  std::string_view description() const override {
    return "Replaces layer normalization written out op by op with LayerNormalization.";
  }
  std::string lastRunSummary() const override { return summary_; }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    auto opset = graph.opsetImports().find("");
    if (opset != graph.opsetImports().end() && opset->second < 13) return false;
    std::set<std::string> captured = capturedNames(graph);
    std::vector<Node*> divs;
    for (Node* n : graph.nodes())
      if (n->domain().empty() && n->opType() == "Div" && n->numInputs() == 2) divs.push_back(n);
    size_t replaced = 0;
    for (Node* div : divs) replaced += rewrite(graph, *div, captured) ? 1 : 0;
    if (replaced == 0) return false;
    if (opset != graph.opsetImports().end() && opset->second < kLayerNormOpset)
      graph.setOpsetImport("", kLayerNormOpset);
    summary_ = "replaced " + std::to_string(replaced) + " written-out layer norm" +
               (replaced == 1 ? "" : "s") + " with LayerNormalization";
    return true;
  }

 private:
  bool rewrite(Graph& graph, Node& div, const std::set<std::string>& captured) {
    std::optional<Match> m = matchCore(div, captured);
    if (!m) return false;
    matchAffine(*m, captured);
    DataType dtype = m->x->type().dtype;
    std::optional<int64_t> channels = lastDim(*m->x);
    bool fits = isFloatingPoint(dtype) &&
                (m->gamma ? fitsPerChannel(m->gamma, channels, dtype) : channels.has_value());
    if (!fits || (m->beta && !fitsPerChannel(m->beta, channels, dtype))) return false;
    const std::string& x = m->x->name();
    Value* scale = perChannel(graph, m->gamma, *channels, dtype, 1.0, x + "_ln_scale");
    Value* bias =
        m->beta ? perChannel(graph, m->beta, *channels, dtype, 0.0, x + "_ln_bias") : nullptr;
    std::vector<Attribute> attrs = {Attribute("axis", int64_t{-1}),
                                    Attribute("epsilon", static_cast<float>(m->epsilon))};
    replaceIdiom(graph, m->result, "LayerNormalization", {m->x, scale, bias}, std::move(attrs),
                 m->steps);
    return true;
  }

  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createLayerNormIdiomPass() { return std::make_unique<LayerNormIdiomPass>(); }

}  // namespace subgraph
