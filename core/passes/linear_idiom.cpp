//===- core/passes/linear_idiom.cpp - Linear layers as 2-D Gemm -----------===//
//
// PyTorch's dynamo exporter writes nn.Linear on a [B, S, K] activation as a
// Reshape to [B*S, K], a Gemm and a Reshape back (GPT-2's every
// projection). Between the Gemm and its GELU or residual Add stands a
// Reshape, so no backend fused them, and each GELU and Add ran on its own.
// The pass writes the layer as MatMul on the original rank (and an Add
// for the bias), the form the matmul fusions take. The match starts at
// each Gemm. See linear_idiom.h for the exact rule.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/linear_idiom.h"

#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "idiom_match.h"
#include "subgraph/ir/captures.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/ir/shape_inference.h"

namespace subgraph {
namespace {

using namespace passes_detail;

std::optional<std::vector<int64_t>> staticDims(const Value* v) {
  if (!v || !v->type().hasRank()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const Dim& d : *v->type().shape) {
    if (!d.isStatic()) return std::nullopt;
    dims.push_back(d.size());
  }
  return dims;
}

bool isFlattening(const Node* n) {
  return n && n->domain().empty() && (n->opType() == "Reshape" || n->opType() == "Flatten");
}

// The pattern around one Gemm.
struct Match {
  Node* flatten = nullptr;
  Node* gemm = nullptr;
  Node* restore = nullptr;
  Value* x = nullptr;
};

std::optional<Match> match(Node& gemm, const std::set<std::string>& captured) {
  if (intAttr(gemm, "transA", 0) != 0 || gemm.getFloat("alpha", 1.0f) != 1.0f ||
      gemm.getFloat("beta", 1.0f) != 1.0f || gemm.numOutputs() != 1)
    return std::nullopt;
  Value* a = gemm.input(0);
  Node* flatten = a ? a->producer() : nullptr;
  if (!isFlattening(flatten) || !usedExactly(a, 1, captured) ||
      !usedExactly(gemm.output(0), 1, captured))
    return std::nullopt;
  Node* restore = gemm.output(0)->uses()[0].user;
  if (!restore->domain().empty() || restore->opType() != "Reshape" ||
      restore->input(0) != gemm.output(0))
    return std::nullopt;
  std::optional<std::vector<int64_t>> x = staticDims(flatten->input(0));
  std::optional<std::vector<int64_t>> ad = staticDims(a);
  std::optional<std::vector<int64_t>> g = staticDims(gemm.output(0));
  std::optional<std::vector<int64_t>> y = staticDims(restore->output(0));
  if (!x || !ad || !g || !y || x->size() < 3 || ad->size() != 2 || g->size() != 2)
    return std::nullopt;
  std::vector<int64_t> lead(x->begin(), x->end() - 1);
  int64_t m = 1;
  for (int64_t d : lead) m *= d;
  std::vector<int64_t> want = lead;
  want.push_back((*g)[1]);
  if (*ad != std::vector<int64_t>{m, x->back()} || *y != want) return std::nullopt;
  return Match{flatten, &gemm, restore, flatten->input(0)};
}

// B as MatMul reads it: a transposed copy of a constant B for transB = 1.
Value* weightsFor(Graph& graph, Node& gemm) {
  Value* b = gemm.input(1);
  if (intAttr(gemm, "transB", 0) == 0) return b;
  if (!b || !b->isInitializer() || b->initializer()->dims().size() != 2) return nullptr;
  const Tensor& t = *b->initializer();
  const int64_t rows = t.dims()[0], cols = t.dims()[1];
  const size_t size = dataTypeSize(t.dtype());
  std::vector<std::byte> out(t.bytes().size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(&out[static_cast<size_t>(c * rows + r) * size],
                  &t.bytes()[static_cast<size_t>(r * cols + c) * size], size);
  return graph.addInitializer(graph.uniqueValueName(b->name() + "_t"),
                              Tensor(t.dtype(), {cols, rows}, std::move(out)));
}

// C as a bias of the MatMul's result: [N] or [1, N]; nullopt for another shape.
std::optional<Value*> biasFor(const Node& gemm, int64_t n) {
  if (gemm.numInputs() < 3 || !gemm.input(2)) return nullptr;
  std::optional<std::vector<int64_t>> c = staticDims(gemm.input(2));
  if (c && (*c == std::vector<int64_t>{n} || *c == std::vector<int64_t>{1, n}))
    return gemm.input(2);
  return std::nullopt;
}

class LinearIdiomPass final : public Pass {
 public:
  std::string_view name() const override { return "linear-idiom"; }
  std::string_view description() const override {
    return "Replaces a linear layer written as Reshape, 2-D Gemm, Reshape with MatMul and Add on "
           "the original rank.";
  }
  std::string lastRunSummary() const override { return summary_; }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    // The pattern is proved on static dims; a graph fresh from a parser has
    // no types on its intermediate values yet.
    if (!hasCompleteTypes(graph)) (void)inferShapes(graph);
    std::set<std::string> captured = capturedNames(graph);
    std::vector<Node*> gemms;
    for (Node* n : graph.nodes())
      if (n->domain().empty() && n->opType() == "Gemm") gemms.push_back(n);
    size_t replaced = 0;
    for (Node* g : gemms) replaced += rewrite(graph, *g, captured) ? 1 : 0;
    if (replaced == 0) return false;
    summary_ = "replaced " + std::to_string(replaced) + " Reshape-Gemm-Reshape linear layer" +
               (replaced == 1 ? "" : "s") + " with MatMul";
    return true;
  }

 private:
  bool rewrite(Graph& graph, Node& gemm, const std::set<std::string>& captured) {
    std::optional<Match> m = match(gemm, captured);
    if (!m) return false;
    const int64_t n = (*staticDims(gemm.output(0)))[1];
    std::optional<Value*> bias = biasFor(gemm, n);
    if (!bias) return false;
    Value* b = weightsFor(graph, gemm);
    if (!b) return false;
    Value* y = m->restore->output(0);
    std::string name = gemm.name();
    graph.removeNode(m->restore, /*keepOutputs=*/true);
    Value* product = y;
    if (*bias) {
      product = graph.createValue(graph.uniqueValueName(y->name() + "_mm"), y->type());
    }
    graph.addNode(OpRegistry::global().intern("", "MatMul"), {m->x, b}, {product}, {}, name);
    if (*bias)
      graph.addNode(OpRegistry::global().intern("", "Add"), {product, *bias}, {y}, {},
                    name.empty() ? name : name + "_bias");
    graph.removeNode(&gemm);
    graph.removeNode(m->flatten);
    return true;
  }

  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createLinearIdiomPass() { return std::make_unique<LinearIdiomPass>(); }

}  // namespace subgraph
