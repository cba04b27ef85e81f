//===- core/passes/identity_removal.cpp - Identity removal ----------------===//
//
// Exporters leave Identity nodes behind for naming reasons (to give a graph
// output its name, or where a module returned its input). They cost a copy
// in naive runtimes and split fusion regions, so they go, except where the
// graph's interface needs them (see identity_removal.h for the rule).
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/identity_removal.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "pass_util.h"
#include "subgraph/ir/captures.h"

namespace subgraph {
namespace {

// A Cast to the element type its input already has: an Identity. Exporters
// write them (ViT's Softmax is cast to float32 twice), and they split the
// patterns around them.
bool isNoOpCast(const Node& node) {
  if (node.opType() != "Cast") return false;
  const Attribute* to = node.attr("to");
  const DataType from = node.input(0)->type().dtype;
  return to && to->kind() == AttrKind::kInt && from != DataType::kUndefined &&
         static_cast<int64_t>(from) == to->asInt();
}

class IdentityRemovalPass final : public Pass {
 public:
  std::string_view name() const override { return "identity-removal"; }
  std::string_view description() const override {
    return "Removes Identity nodes (and Casts to their input's own type), keeping graph input "
           "and output names intact.";
  }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    std::set<std::string> captured = capturedNames(graph);
    std::vector<Node*> identities;
    size_t casts = 0;
    for (Node* node : graph.nodes()) {
      if (!node->domain().empty() || node->numInputs() != 1 || !node->input(0) ||
          node->numOutputs() != 1)
        continue;
      if (node->opType() == "Identity") {
        identities.push_back(node);
      } else if (isNoOpCast(*node)) {
        identities.push_back(node);
        ++casts;
      }
    }

    size_t removed = 0, keptForInput = 0, keptForOutput = 0, keptForCapture = 0;
    for (Node* node : identities) {
      Value* in = node->input(0);
      Value* out = node->output(0);
      if (captured.count(out->name())) {
        ++keptForCapture;
        continue;
      }
      if (!out->isGraphOutput()) {
        adoptType(in, out);
        graph.replaceAllUsesWith(out, in);
        graph.removeNode(node);
        ++removed;
        continue;
      }
      // The output's name is part of the graph's interface: the input has
      // to take it over, which is only possible for a value we may rename.
      if (in->isGraphInput()) {
        ++keptForInput;
      } else if (in->isGraphOutput()) {
        ++keptForOutput;
      } else if (captured.count(in->name()) || (!in->producer() && !in->isInitializer())) {
        // The input is named by a nested graph, or is itself a read by name
        // of an enclosing graph's value (a free value of a nested graph):
        // renaming it would break that reference.
        ++keptForCapture;
      } else {
        std::string outName = out->name();
        adoptType(in, out);
        graph.replaceAllUsesWith(out, in);
        graph.removeNode(node);  // deletes `out`, which frees its name
        graph.renameValue(in, std::move(outName));
        ++removed;
      }
    }
    if (removed || keptForInput || keptForOutput || keptForCapture) {
      summary_ = "removed " + std::to_string(removed) + " Identity nodes";
      if (casts)
        summary_ +=
            " (of them, or kept, " + std::to_string(casts) + " Casts to the type their input has)";
      if (keptForInput)
        summary_ +=
            "; kept " + std::to_string(keptForInput) + " passing a graph input to an output";
      if (keptForOutput)
        summary_ += "; kept " + std::to_string(keptForOutput) + " duplicating a graph output";
      if (keptForCapture)
        summary_ += "; kept " + std::to_string(keptForCapture) + " named by a nested graph";
    }
    return removed > 0;
  }

  std::string lastRunSummary() const override { return summary_; }

 private:
  // The Identity's output may carry a type (e.g. declared by an ONNX
  // graph output) that its input lacks; keep that knowledge.
  static void adoptType(Value* in, const Value* out) {
    if (in->type().isUnknown() && !out->type().isUnknown()) in->setType(out->type());
  }

  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createIdentityRemovalPass() {
  return std::make_unique<IdentityRemovalPass>();
}

}  // namespace subgraph
