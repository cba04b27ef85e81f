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
  std::vector<int64_t> dims = parts[0]->dims().size() == 2 ? std::vector<int64_t>{rows, cols}
                                                           : std::vector<int64_t>{cols};
  return Tensor(t, std::move(dims), std::move(out));
}

class SiblingMatMulsPass final : public Pass {
 public:
  std::string_view name() const override { return "sibling-matmuls"; }
  std::string_view description() const override {
    return "Merges MatMuls of one input by constant weights (Q, K, V) into one MatMul and a "
           "Split.";
  }
  std::string lastRunSummary() const override { return summary_; }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    std::set<std::string> captured = capturedNames(graph);
    std::map<Value*, std::vector<Branch>> groups;
    std::vector<Value*> order;
    for (Node* n : graph.nodes()) {
      if (!n->domain().empty() || n->opType() != "MatMul" || n->numInputs() != 2 ||
          !n->input(0) || n->numOutputs() != 1)
        continue;
      const Tensor* w = constantWeights(*n);
      if (!w) continue;
      auto [it, fresh] = groups.try_emplace(n->input(0));
      if (fresh) order.push_back(n->input(0));
      it->second.push_back({n, w});
    }
    size_t merged = 0, into = 0;
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
    Value* w = graph.addInitializer(graph.uniqueValueName(hint + "_merged_weights"),
                                    sideBySide(weights));
    Node* mm = graph.addNode("MatMul", {x, w}, 1, {}, hint + "_merged");
    Value* y = mm->output(0);
    if (allBiased) {
      Value* b = graph.addInitializer(graph.uniqueValueName(hint + "_merged_bias"),
                                      sideBySide(biases));
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
    std::vector<Attribute> attrs{Attribute("axis", int64_t{-1})};
    std::vector<Value*> inputs{y};
    auto opset = graph.opsetImports().find("");
    if (opset != graph.opsetImports().end() && opset->second < 13) {
      attrs.emplace_back("split", sizes);
    } else {
      inputs.push_back(graph.addInitializer(
          graph.uniqueValueName(hint + "_split"),
          Tensor::fromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(sizes.size())},
                                      sizes)));
    }
    graph.addNode(OpRegistry::global().intern("", "Split"), std::move(inputs), outputs,
                  std::move(attrs), hint + "_split");
    graph.removeNodes(dead);
  }

  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createSiblingMatMulsPass() { return std::make_unique<SiblingMatMulsPass>(); }

}  // namespace subgraph
