//===- core/passes/constant_to_initializer.cpp - Constant nodes -----------===//
//
// ONNX has two spellings of a constant: an initializer, and a Constant node
// (which PyTorch emits for every literal). Backends and the other passes only
// look at initializers, so this pass rewrites the second spelling into the
// first. The Constant's output value itself becomes the initializer, which
// keeps its name, its uses and any graph output slot that holds it.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/constant_to_initializer.h"

#include <limits>
#include <string>
#include <vector>

#include "subgraph/passes/constant_evaluators.h"

namespace subgraph {
namespace {

class ConstantToInitializerPass final : public Pass {
 public:
  std::string_view name() const override { return "constant-to-initializer"; }
  std::string_view description() const override {
    return "Turns Constant nodes into initializers under the same value name.";
  }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    std::vector<Node*> constants;
    for (Node* node : graph.nodes())
      if (node->domain().empty() && node->opType() == "Constant") constants.push_back(node);

    // The Constant evaluator reads exactly the attributes the ONNX spec
    // defines; moving data needs no size limit.
    EvaluationLimits unlimited{std::numeric_limits<int64_t>::max()};
    size_t converted = 0, kept = 0;
    std::string firstProblem;
    for (Node* node : constants) {
      StatusOr<std::vector<Tensor>> value = evaluateConstantNode(*node, {}, unlimited);
      if (!value || node->numOutputs() != 1 || node->numInputs() != 0) {
        ++kept;
        if (firstProblem.empty())
          firstProblem = value ? "Constant node '" + node->displayName() + "' has inputs"
                               : value.status().message();
        continue;
      }
      Value* out = node->output(0);
      graph.removeNode(node, /*keepOutputs=*/true);
      graph.setInitializer(out, std::move(value->front()));
      ++converted;
    }
    if (converted || kept) {
      summary_ = "converted " + std::to_string(converted) + " Constant nodes";
      if (kept) summary_ += "; kept " + std::to_string(kept) + " (first: " + firstProblem + ")";
    }
    return converted > 0;
  }

  std::string lastRunSummary() const override { return summary_; }

 private:
  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createConstantToInitializerPass() {
  return std::make_unique<ConstantToInitializerPass>();
}

}  // namespace subgraph
