//===- core/passes/sibling_matmuls.cpp - Projections of one input ---------===//
//
// Exporters write attention's Q, K and V projections as three MatMuls of one
// activation (BERT, RoBERTa, ViT; GPT-2 already fuses them into one
// projection and a Split). One GEMM with three times the columns runs
// closer to the machine's peak than three, and the attention kernels can
// then read Q, K and V as column slices of one tensor. See
// sibling_matmuls.h for the exact rule.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/sibling_matmuls.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "idiom_match.h"
#include "subgraph/ir/captures.h"
#include "subgraph/ir/op_schema.h"

namespace subgraph {
namespace {

using namespace passes_detail;

// One projection: the MatMul, its weights and its bias Add, if any.
struct Branch {
  Node* matmul = nullptr;
  const Tensor* weights = nullptr;
  Node* bias = nullptr;
  Value* biasValue = nullptr;
};

// The MatMul's weights when they are a 2-D constant.
const Tensor* constantWeights(const Node& mm) {
  const Value* w = mm.input(1);
  if (!w || !w->isInitializer() || w->initializer()->dims().size() != 2) return nullptr;
  return w->initializer();
}

// The constant 1-D bias Add reading the MatMul's result as its only reader.
void findBias(Branch& b, const std::set<std::string>& captured) {
  Value* y = b.matmul->output(0);
  if (!usedExactly(y, 1, captured)) return;
  Node* add = y->uses()[0].user;
  if (!add->domain().empty() || add->opType() != "Add" || add->numInputs() != 2) return;
  Value* c = otherOperand(*add, y);
  const int64_t n = b.weights->dims()[1];
  if (c && c->isInitializer() && c->initializer()->dims() == std::vector<int64_t>{n} &&
      c->initializer()->dtype() == b.weights->dtype()) {
    b.bias = add;
    b.biasValue = c;
  }
}

// The tensors side by side along their last axis: [K, sum N] or [sum N].
Tensor sideBySide(const std::vector<const Tensor*>& parts) {
  const DataType t = parts[0]->dtype();
  const size_t size = dataTypeSize(t);
  const int64_t rows = parts[0]->dims().size() == 2 ? parts[0]->dims()[0] : 1;
  int64_t cols = 0;
  for (const Tensor* p : parts) cols += p->dims().back();
  std::vector<std::byte> out(static_cast<size_t>(rows * cols) * size);
  int64_t at = 0;
  for (const Tensor* p : parts) {
    const int64_t n = p->dims().back();
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(&out[static_cast<size_t>(r * cols + at) * size],
                  &p->bytes()[static_cast<size_t>(r * n) * size], static_cast<size_t>(n) * size);
    at += n;
  }
  std::vector<int64_t> dims =
      parts[0]->dims().size() == 2 ? std::vector<int64_t>{rows, cols} : std::vector<int64_t>{cols};
  return Tensor(t, std::move(dims), std::move(out));
}

// A one-element or [n] constant as n elements (a scalar repeated).
Tensor perColumn(const Tensor& t, int64_t n) {
  if (t.numElements() == n && t.dims().size() == 1) return t;
  const size_t size = dataTypeSize(t.dtype());
  std::vector<std::byte> out(static_cast<size_t>(n) * size);
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(&out[static_cast<size_t>(i) * size], t.bytes().data(), size);
  return Tensor(t.dtype(), {n}, std::move(out));
}

// The one-element or [n] constant `v`, or null.
const Tensor* scalarOrColumns(const Value* v, int64_t n) {
  if (!v || !v->isInitializer()) return nullptr;
  const Tensor* t = v->initializer();
  bool fits = t->numElements() == 1 || (t->dims().size() == 1 && t->dims()[0] == n);
  return fits ? t : nullptr;
}

// ONNX Runtime's quantize_dynamic writes each projection of one
// DynamicQuantizeLinear(x) -> q, s, z as
//   MatMulInteger(q, W, z, zw) -> Cast(float) -> Mul(., Mul(s, sw)) [-> Add(b)].
struct QuantizedBranch {
  Node* product = nullptr;  // MatMulInteger
  Node* cast = nullptr;
  Node* scale = nullptr;  // Mul(s, sw)
  Node* scaled = nullptr;
  Node* bias = nullptr;  // Add(b), or null
  const Tensor* weights = nullptr;
  const Tensor* weightZero = nullptr;  // null: none
  const Tensor* weightScale = nullptr;
  const Tensor* biasValue = nullptr;
  Value* inputScale = nullptr;  // s
};

// The one node reading `v`, when `v` is read once.
Node* onlyReader(const Value* v, const std::set<std::string>& captured) {
  return usedExactly(v, 1, captured) ? v->uses()[0].user : nullptr;
}

bool isOp(const Node* n, std::string_view op) {
  return n && n->domain().empty() && n->opType() == op;
}

// The branch from `mmi`, or nullopt when it is not ORT's chain.
std::optional<QuantizedBranch> quantizedBranch(Node& mmi, const std::set<std::string>& captured) {
  QuantizedBranch b;
  b.product = &mmi;
  b.weights = constantWeights(mmi);
  if (!b.weights || mmi.numOutputs() != 1) return std::nullopt;
  const int64_t n = b.weights->dims()[1];
  if (mmi.numInputs() > 3 && mmi.input(3)) {
    b.weightZero = scalarOrColumns(mmi.input(3), n);
    if (!b.weightZero) return std::nullopt;
  }
  b.cast = onlyReader(mmi.output(0), captured);
  if (!isOp(b.cast, "Cast") || intAttr(*b.cast, "to", 0) != 1) return std::nullopt;
  b.scaled = onlyReader(b.cast->output(0), captured);
  if (!isOp(b.scaled, "Mul") || b.scaled->numInputs() != 2) return std::nullopt;
  Value* scale = otherOperand(*b.scaled, b.cast->output(0));
  b.scale = scale ? scale->producer() : nullptr;
  if (!isOp(b.scale, "Mul") || !usedExactly(scale, 1, captured)) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    if (const Tensor* ws = scalarOrColumns(b.scale->input(i), n);
        ws && ws->dtype() == DataType::kFloat32) {
      b.weightScale = ws;
      b.inputScale = b.scale->input(1 - i);
    }
  }
  if (!b.weightScale || !b.inputScale) return std::nullopt;
  if (Node* add = onlyReader(b.scaled->output(0), captured); isOp(add, "Add")) {
    Value* c = otherOperand(*add, b.scaled->output(0));
    const Tensor* t = c && c->isInitializer() ? c->initializer() : nullptr;
    if (t && t->dtype() == DataType::kFloat32 && t->dims() == std::vector<int64_t>{n}) {
      b.bias = add;
      b.biasValue = t;
    }
  }
  return b;
}

class SiblingMatMulsPass final : public Pass {
 public:
  std::string_view name() const override { return "sibling-matmuls"; }
  std::string_view description() const override {
    return "Merges MatMuls (and ONNX Runtime's quantized MatMulInteger chains) of one input by "
           "constant weights (Q, K, V) into one and a Split.";
  }
  std::string lastRunSummary() const override { return summary_; }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    std::set<std::string> captured = capturedNames(graph);
    std::map<Value*, std::vector<Branch>> groups;
    std::vector<Value*> order;
    for (Node* n : graph.nodes()) {
      if (!n->domain().empty() || n->opType() != "MatMul" || n->numInputs() != 2 || !n->input(0) ||
          n->numOutputs() != 1)
        continue;
      const Tensor* w = constantWeights(*n);
      if (!w) continue;
      auto [it, fresh] = groups.try_emplace(n->input(0));
      if (fresh) order.push_back(n->input(0));
      it->second.push_back({n, w});
    }
    size_t merged = 0, into = 0;
    mergeQuantized(graph, captured, merged, into);
    for (Value* x : order) {
      std::vector<Branch> same = compatible(groups[x]);
      if (same.size() < 2) continue;
      for (Branch& b : same) findBias(b, captured);
      write(graph, x, same);
      merged += same.size();
      ++into;
    }
    if (into == 0) return false;
    summary_ = "merged " + std::to_string(merged) + " MatMuls into " + std::to_string(into) +
               " (each with a Split)";
    return true;
  }

 private:
  // The branches with the first branch's element type and row count.
  static std::vector<Branch> compatible(const std::vector<Branch>& all) {
    std::vector<Branch> out;
    for (const Branch& b : all)
      if (b.weights->dtype() == all[0].weights->dtype() &&
          b.weights->dims()[0] == all[0].weights->dims()[0])
        out.push_back(b);
    return out;
  }

  // Groups ORT's quantized projections by their quantized input, zero point
  // and input scale, and merges each group of two or more.
  void mergeQuantized(Graph& graph, const std::set<std::string>& captured, size_t& merged,
                      size_t& into) {
    std::map<std::vector<Value*>, std::vector<QuantizedBranch>> groups;
    std::vector<std::vector<Value*>> order;
    for (Node* n : graph.nodes()) {
      if (!isOp(n, "MatMulInteger") || n->numInputs() < 2 || !n->input(0)) continue;
      std::optional<QuantizedBranch> b = quantizedBranch(*n, captured);
      if (!b) continue;
      std::vector<Value*> key{n->input(0), n->numInputs() > 2 ? n->input(2) : nullptr,
                              b->inputScale};
      auto [it, fresh] = groups.try_emplace(key);
      if (fresh) order.push_back(key);
      it->second.push_back(*b);
    }
    for (const auto& key : order) {
      std::vector<QuantizedBranch> same;
      for (const QuantizedBranch& b : groups[key])
        if (b.weights->dtype() == groups[key][0].weights->dtype() &&
            b.weights->dims()[0] == groups[key][0].weights->dims()[0] &&
            (b.weightZero != nullptr) == (groups[key][0].weightZero != nullptr) &&
            (!b.weightZero || b.weightZero->dtype() == groups[key][0].weightZero->dtype()))
          same.push_back(b);
      if (same.size() < 2) continue;
      writeQuantized(graph, same);
      merged += same.size();
      ++into;
    }
  }

  // One MatMulInteger of the weights side by side (zero points per
  // column), its Cast, Mul(s, the weight scales per column), the Mul, the
  // biases side by side, and a Split into the branches' values.
  void writeQuantized(Graph& graph, const std::vector<QuantizedBranch>& branches) {
    const bool allBiased = std::all_of(branches.begin(), branches.end(),
                                       [](const QuantizedBranch& b) { return b.bias; });
    std::vector<const Tensor*> weights;
    std::vector<Tensor> zeros, scales;
    std::vector<const Tensor*> zeroParts, scaleParts, biases;
    std::vector<int64_t> sizes;
    zeros.reserve(branches.size());
    scales.reserve(branches.size());
    for (const QuantizedBranch& b : branches) {
      const int64_t n = b.weights->dims()[1];
      weights.push_back(b.weights);
      sizes.push_back(n);
      if (b.weightZero) zeros.push_back(perColumn(*b.weightZero, n));
      scales.push_back(perColumn(*b.weightScale, n));
      if (allBiased) biases.push_back(b.biasValue);
    }
    for (const Tensor& t : zeros) zeroParts.push_back(&t);
    for (const Tensor& t : scales) scaleParts.push_back(&t);
    const Node& first = *branches[0].product;
    const std::string hint = first.name().empty() ? first.input(0)->name() : first.name();
    auto constant = [&](const char* suffix, Tensor t) {
      return graph.addInitializer(graph.uniqueValueName(hint + suffix), std::move(t));
    };
    std::vector<Value*> in{first.input(0), constant("_merged_weights", sideBySide(weights))};
    in.push_back(first.numInputs() > 2 ? first.input(2) : nullptr);
    if (!zeroParts.empty()) in.push_back(constant("_merged_zero", sideBySide(zeroParts)));
    Value* y = graph.addNode("MatMulInteger", std::move(in), 1, {}, hint + "_merged")->output(0);
    y = graph.addNode("Cast", {y}, 1, {Attribute("to", int64_t{1})}, hint + "_merged_cast")
            ->output(0);
    Value* s =
        graph
            .addNode("Mul",
                     {branches[0].inputScale, constant("_merged_scale", sideBySide(scaleParts))}, 1,
                     {}, hint + "_merged_scale")
            ->output(0);
    y = graph.addNode("Mul", {y, s}, 1, {}, hint + "_merged_scaled")->output(0);
    if (allBiased)
      y = graph
              .addNode("Add", {y, constant("_merged_bias", sideBySide(biases))}, 1, {},
                       hint + "_merged_bias")
              ->output(0);
    std::vector<Value*> outputs;
    std::vector<Node*> dead;
    for (const QuantizedBranch& b : branches) {
      Node* last = allBiased ? b.bias : b.scaled;
      outputs.push_back(last->output(0));
      graph.removeNode(last, /*keepOutputs=*/true);
      dead.insert(dead.end(), {b.product, b.cast, b.scale});
      if (allBiased) dead.push_back(b.scaled);
    }
    split(graph, y, sizes, outputs, hint);
    graph.removeNodes(dead);
  }

  // Split(y) along the last axis into `outputs`, sized `sizes`.
  static void split(Graph& graph, Value* y, const std::vector<int64_t>& sizes,
                    const std::vector<Value*>& outputs, const std::string& hint) {
    std::vector<Attribute> attrs{Attribute("axis", int64_t{-1})};
    std::vector<Value*> inputs{y};
    auto opset = graph.opsetImports().find("");
    if (opset != graph.opsetImports().end() && opset->second < 13) {
      attrs.emplace_back("split", sizes);
    } else {
      inputs.push_back(
          graph.addInitializer(graph.uniqueValueName(hint + "_split"),
                               Tensor::fromVector<int64_t>(
                                   DataType::kInt64, {static_cast<int64_t>(sizes.size())}, sizes)));
    }
    graph.addNode(OpRegistry::global().intern("", "Split"), std::move(inputs), outputs,
                  std::move(attrs), hint + "_split");
  }

  void write(Graph& graph, Value* x, const std::vector<Branch>& branches) {
    bool allBiased = true;
    std::vector<const Tensor*> weights, biases;
    std::vector<int64_t> sizes;
    for (const Branch& b : branches) {
      weights.push_back(b.weights);
      sizes.push_back(b.weights->dims()[1]);
      allBiased = allBiased && b.bias;
      if (b.bias) biases.push_back(b.biasValue->initializer());
    }
    const std::string& base = branches[0].matmul->name();
    const std::string hint = base.empty() ? x->name() : base;
    Value* w =
        graph.addInitializer(graph.uniqueValueName(hint + "_merged_weights"), sideBySide(weights));
    Node* mm = graph.addNode("MatMul", {x, w}, 1, {}, hint + "_merged");
    Value* y = mm->output(0);
    if (allBiased) {
      Value* b =
          graph.addInitializer(graph.uniqueValueName(hint + "_merged_bias"), sideBySide(biases));
      y = graph.addNode("Add", {y, b}, 1, {}, hint + "_merged_bias")->output(0);
    }
    // The values the branches computed keep their names and readers.
    std::vector<Value*> outputs;
    std::vector<Node*> dead;
    for (const Branch& b : branches) {
      Node* last = allBiased ? b.bias : b.matmul;
      outputs.push_back(last->output(0));
      graph.removeNode(last, /*keepOutputs=*/true);
      if (allBiased) dead.push_back(b.matmul);
    }
    split(graph, y, sizes, outputs, hint);
    graph.removeNodes(dead);
  }

  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createSiblingMatMulsPass() { return std::make_unique<SiblingMatMulsPass>(); }

}  // namespace subgraph
