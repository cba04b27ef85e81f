//===- core/passes/hard_swish_idiom.cpp - HardSigmoid/HardSwish -----------===//
//
// MobileNetV3-style networks use hard-swish after most convolutions, and
// exporters that predate the HardSwish op write it as a ReLU6 of x + 3, a
// product and a division. Left as four ops, each step but the Clip is a
// binary op that backends do not fuse after a convolution; as HardSwish it
// becomes one eltwise post-op. See hard_swish_idiom.h for the rule.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/hard_swish_idiom.h"

#include <cmath>
#include <optional>
#include <vector>

#include "idiom_match.h"
#include "pass_util.h"
#include "subgraph/ir/captures.h"

namespace subgraph {
namespace {

using namespace passes_detail;

constexpr int64_t kHardSwishOpset = 14;

// True if `node` divides `v` by 6 (Div by 6, or Mul by 1/6).
bool dividesBySix(const Node& node, const Value* v) {
  if (!node.domain().empty() || node.numOutputs() != 1) return false;
  if (node.opType() == "Div") return node.input(0) == v && isScalar(node.input(1), 6.0);
  return node.opType() == "Mul" && isScalar(otherOperand(node, v), 1.0 / 6.0);
}

// The single reader of `v`, if `v` is read once and only inside the graph.
Node* soleReader(const Value* v, const std::set<std::string>& captured) {
  return usedExactly(v, 1, captured) ? v->uses()[0].user : nullptr;
}

// x when `clip` is Clip(Add(x, 3), 0, 6) and the Add is read only there.
Value* reluSixInput(const Node& clip, const std::set<std::string>& captured) {
  if (clip.numInputs() != 3 || !isScalar(clip.input(1), 0.0) || !isScalar(clip.input(2), 6.0))
    return nullptr;
  Node* add = producerIs(clip.input(0), "Add");
  if (!add || !usedExactly(add->output(0), 1, captured)) return nullptr;
  for (size_t k = 0; k < 2; ++k)
    if (isScalar(add->input(k), 3.0) && add->input(1 - k) && !add->input(1 - k)->isInitializer())
      return add->input(1 - k);
  return nullptr;
}

bool isHardSigmoidSixth(const Node& n) {
  const Attribute* alpha = n.attr("alpha");
  const Attribute* beta = n.attr("beta");
  return alpha && beta && std::abs(alpha->asFloat() - 1.0 / 6.0) < 1e-6 &&
         std::abs(beta->asFloat() - 0.5) < 1e-6;
}

class HardSwishIdiomPass final : public Pass {
 public:
  std::string_view name() const override { return "hardswish-idiom"; }
  std::string_view description() const override {
    return "Replaces hard-sigmoid and hard-swish written with Clip by HardSigmoid and HardSwish.";
  }
  std::string lastRunSummary() const override { return summary_; }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    auto opset = graph.opsetImports().find("");
    int64_t version = opset == graph.opsetImports().end() ? kHardSwishOpset : opset->second;
    if (version < 11) return false;  // Clip's bounds were attributes
    captured_ = capturedNames(graph);
    swishAllowed_ = version >= 13;
    madeSwish_ = false;
    OpCounter made;
    std::vector<NodeId> clips;
    for (Node* n : graph.nodes())
      if (n->domain().empty() && n->opType() == "Clip") clips.push_back(n->id());
    for (NodeId id : clips)
      if (Node* clip = graph.node(id)) rewriteClip(graph, *clip, made);
    if (swishAllowed_) {
      std::vector<NodeId> sigmoids;
      for (Node* n : graph.nodes())
        if (n->domain().empty() && n->opType() == "HardSigmoid") sigmoids.push_back(n->id());
      for (NodeId id : sigmoids)
        if (Node* hs = graph.node(id)) rewriteGate(graph, *hs, made);
    }
    if (made.total() == 0) return false;
    if (opset != graph.opsetImports().end() && madeSwish_ && version < kHardSwishOpset)
      graph.setOpsetImport("", kHardSwishOpset);
    summary_ = "made " + made.describe();
    return true;
  }

 private:
  // r / 6 -> HardSigmoid; (x * r) / 6 -> HardSwish.
  void rewriteClip(Graph& graph, Node& clip, OpCounter& made) {
    Value* x = reluSixInput(clip, captured_);
    Node* reader = x ? soleReader(clip.output(0), captured_) : nullptr;
    if (!reader) return;
    Node* add = clip.input(0)->producer();
    if (dividesBySix(*reader, clip.output(0))) {
      std::vector<Attribute> attrs = {Attribute("alpha", 1.0f / 6.0f), Attribute("beta", 0.5f)};
      replaceIdiom(graph, reader->output(0), "HardSigmoid", {x}, std::move(attrs), {add, &clip});
      made.add("HardSigmoid");
      return;
    }
    bool product = swishAllowed_ && reader->domain().empty() && reader->opType() == "Mul" &&
                   otherOperand(*reader, clip.output(0)) == x;
    Node* scale = product ? soleReader(reader->output(0), captured_) : nullptr;
    if (!scale || !dividesBySix(*scale, reader->output(0))) return;
    replaceIdiom(graph, scale->output(0), "HardSwish", {x}, {}, {add, &clip, reader});
    made.add("HardSwish");
    madeSwish_ = true;
  }

  // x * HardSigmoid(x) {1/6, 1/2} -> HardSwish.
  void rewriteGate(Graph& graph, Node& hs, OpCounter& made) {
    Value* x = hs.input(0);
    Node* mul = isHardSigmoidSixth(hs) ? soleReader(hs.output(0), captured_) : nullptr;
    if (!mul || !mul->domain().empty() || mul->opType() != "Mul" ||
        otherOperand(*mul, hs.output(0)) != x)
      return;
    replaceIdiom(graph, mul->output(0), "HardSwish", {x}, {}, {&hs});
    made.add("HardSwish");
    madeSwish_ = true;
  }

  std::set<std::string> captured_;
  bool swishAllowed_ = false;
  bool madeSwish_ = false;  // the last run made a HardSwish (opset 14)
  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createHardSwishIdiomPass() { return std::make_unique<HardSwishIdiomPass>(); }

}  // namespace subgraph
