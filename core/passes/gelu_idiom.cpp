//===- core/passes/gelu_idiom.cpp - GELU written out ----------------------===//
//
// PyTorch exports nn.GELU before opset 20 as Div, Erf, Add, Mul and Mul (or,
// for the tanh approximation GPT-2 uses, as eight ops with a Pow). Each
// backend then had to learn each spelling (oneDNN's matmul family matched
// the erf form, nothing matched the tanh form: GPT-2's Pow ran on the
// reference backend, 46% of its time). The pass recognises both once and
// leaves Gelu, which backends fuse as one activation. The match starts at
// each Erf or Tanh and walks out from it, so the pass is linear in the
// graph; see gelu_idiom.h for the exact rule.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/gelu_idiom.h"

#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "idiom_match.h"
#include "subgraph/ir/captures.h"

namespace subgraph {
namespace {

using namespace passes_detail;

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kCubeCoefficient = 0.044715;

// The operand of binary `n` (op `op`) that is not the scalar constant
// `c` (within `tolerance`), when the other is.
Value* byScalar(const Node* n, std::string_view op, double c, double tolerance = 1e-6) {
  if (!n || !n->domain().empty() || n->opType() != op || n->numInputs() != 2) return nullptr;
  for (int i = 0; i < 2; ++i) {
    std::optional<double> v = scalarConstant(n->input(i));
    if (v && isCoefficient(*v, c, tolerance)) return n->input(1 - i);
  }
  return nullptr;
}

// The one node reading `v`, when `v` is read exactly once.
Node* onlyReader(const Value* v, const std::set<std::string>& captured) {
  return usedExactly(v, 1, captured) ? v->uses()[0].user : nullptr;
}

bool isMul(const Node* n) { return n && n->domain().empty() && n->opType() == "Mul"; }

// y = 0.5 * x * a1 grouped any way, starting from a1 = (e + 1), read once.
// Returns the nodes of the product (the last computes y) or empty.
std::vector<Node*> matchHalfProduct(Value* a1, Value* x, const std::set<std::string>& captured) {
  Node* m1 = onlyReader(a1, captured);
  if (!isMul(m1)) return {};
  if (Value* other = otherOperand(*m1, a1)) {
    if (other == x) {  // (x * a1) * 0.5
      Node* m2 = onlyReader(m1->output(0), captured);
      if (byScalar(m2, "Mul", 0.5) == m1->output(0)) return {m1, m2};
    } else if (isScalar(other, 0.5)) {  // x * (a1 * 0.5)
      Node* m2 = onlyReader(m1->output(0), captured);
      if (isMul(m2) && otherOperand(*m2, m1->output(0)) == x) return {m1, m2};
    } else if (Node* half = other->producer();
               byScalar(half, "Mul", 0.5) == x && usedExactly(other, 1, captured)) {
      return {half, m1};  // (x * 0.5) * a1
    }
  }
  return {};
}

// The x of x^3 written as Pow(x, 3), x * (x * x) or (x * x) * x.
Value* cubed(Value* v, const std::set<std::string>& captured) {
  Node* n = v ? v->producer() : nullptr;
  if (!n || !n->domain().empty() || !usedExactly(v, 1, captured)) return nullptr;
  if (n->opType() == "Pow" && isScalar(n->input(1), 3.0)) return n->input(0);
  if (!isMul(n)) return nullptr;
  for (int i = 0; i < 2; ++i) {
    Node* sq = n->input(i)->producer();
    Value* x = n->input(1 - i);
    if (isMul(sq) && sq->input(0) == x && sq->input(1) == x &&
        usedExactly(sq->output(0), 1, captured))
      return x;
  }
  return nullptr;
}

struct Match {
  Value* x = nullptr;
  bool tanh = false;
  Value* result = nullptr;
  std::vector<Node*> steps;  // every node but result's producer, in order
};

// From Erf(x / sqrt 2): the exact form.
std::optional<Match> matchErf(Node& erf, const std::set<std::string>& captured) {
  Value* in = erf.input(0);
  Node* scale = in ? in->producer() : nullptr;
  Value* x = byScalar(scale, "Div", kSqrt2);
  if (!x) x = byScalar(scale, "Mul", 1.0 / kSqrt2);
  if (!x || (scale->opType() == "Div" && scale->input(0) != x) || !usedExactly(in, 1, captured))
    return std::nullopt;
  Node* plus = onlyReader(erf.output(0), captured);
  if (byScalar(plus, "Add", 1.0) != erf.output(0)) return std::nullopt;
  std::vector<Node*> product = matchHalfProduct(plus->output(0), x, captured);
  if (product.empty()) return std::nullopt;
  Match m{x, false, product.back()->output(0), {scale, &erf, plus}};
  m.steps.insert(m.steps.end(), product.begin(), product.end() - 1);
  return m;
}

// From Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)): the tanh form.
std::optional<Match> matchTanh(Node& tanh, const std::set<std::string>& captured) {
  Value* in = tanh.input(0);
  Node* scale = in ? in->producer() : nullptr;
  Value* inner = byScalar(scale, "Mul", kSqrt2OverPi, 1e-5);
  Node* sum = inner ? inner->producer() : nullptr;
  if (!inner || !usedExactly(in, 1, captured) || !usedExactly(inner, 1, captured) || !sum ||
      !sum->domain().empty() || sum->opType() != "Add" || sum->numInputs() != 2)
    return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    Value* x = sum->input(i);
    Node* coef = sum->input(1 - i)->producer();
    Value* cube = byScalar(coef, "Mul", kCubeCoefficient);
    if (!cube || cubed(cube, captured) != x || !usedExactly(sum->input(1 - i), 1, captured))
      continue;
    Node* plus = onlyReader(tanh.output(0), captured);
    if (byScalar(plus, "Add", 1.0) != tanh.output(0)) return std::nullopt;
    std::vector<Node*> product = matchHalfProduct(plus->output(0), x, captured);
    if (product.empty()) return std::nullopt;
    Match m{x, true, product.back()->output(0), {}};
    Node* power = cube->producer();
    if (power->opType() == "Mul" && power->input(0) != x)
      m.steps.push_back(power->input(0)->producer());
    if (power->opType() == "Mul" && power->input(1) != x)
      m.steps.push_back(power->input(1)->producer());
    m.steps.insert(m.steps.end(), {power, coef, sum, scale, &tanh, plus});
    m.steps.insert(m.steps.end(), product.begin(), product.end() - 1);
    return m;
  }
  return std::nullopt;
}

class GeluIdiomPass final : public Pass {
 public:
  std::string_view name() const override { return "gelu-idiom"; }
  std::string_view description() const override {
    return "Replaces GELU written out (erf and tanh forms) with Gelu.";
  }
  std::string lastRunSummary() const override { return summary_; }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    std::set<std::string> captured = capturedNames(graph);
    std::vector<Node*> starts;
    for (Node* n : graph.nodes())
      if (n->domain().empty() && (n->opType() == "Erf" || n->opType() == "Tanh") &&
          n->numInputs() == 1 && n->numOutputs() == 1)
        starts.push_back(n);
    size_t exact = 0, approx = 0;
    for (Node* n : starts) {
      std::optional<Match> m =
          n->opType() == "Erf" ? matchErf(*n, captured) : matchTanh(*n, captured);
      if (!m || !isFloatingPoint(m->x->type().dtype)) continue;
      std::vector<Attribute> attrs;
      if (m->tanh) attrs.emplace_back("approximate", std::string("tanh"));
      replaceIdiom(graph, m->result, "Gelu", {m->x}, std::move(attrs), m->steps);
      ++(m->tanh ? approx : exact);
    }
    if (exact + approx == 0) return false;
    summary_ = "replaced " + std::to_string(exact + approx) + " written-out GELU" +
               (exact + approx == 1 ? "" : "s") + " with Gelu (" + std::to_string(exact) +
               " exact, " + std::to_string(approx) + " tanh)";
    return true;
  }

 private:
  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createGeluIdiomPass() { return std::make_unique<GeluIdiomPass>(); }

}  // namespace subgraph
