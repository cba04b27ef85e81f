//===- core/passes/clamp_idiom.cpp - Max/Min by a constant ----------------===//
//
// tf2onnx writes ReLU6-style clamps and "at least c" floors as Max/Min with
// a constant. No backend's activation list has Max or Min, so every such
// node split a fused region and, on a blocked-layout backend, cost a copy
// to the plain layout and back. Clip with constant bounds is what the
// backends take as an activation (oneDNN's eltwise_clip), so the pass
// rewrites to it. See clamp_idiom.h for the exact rule.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/clamp_idiom.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "idiom_match.h"
#include "subgraph/ir/captures.h"

namespace subgraph {
namespace {

using namespace passes_detail;

// A scalar (rank-0) constant holding `v`, as Clip's bounds must be.
Value* scalarValue(Graph& graph, const std::string& hint, DataType dtype, double v) {
  return graph.addInitializer(graph.uniqueValueName(hint), Tensor::splat(dtype, {}, v));
}

// The constant bounds of a Clip (inputs 1 and 2; a missing one is
// unbounded), or nothing if a bound is computed at run time.
std::optional<std::pair<double, double>> clipBounds(const Node& clip) {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  if (clip.hasAttr("min") || clip.hasAttr("max")) return std::nullopt;  // opset < 11
  for (size_t i = 1; i < clip.numInputs() && i < 3; ++i) {
    if (!clip.input(i)) continue;
    std::optional<double> v = scalarConstant(clip.input(i));
    if (!v) return std::nullopt;
    (i == 1 ? lo : hi) = *v;
  }
  return std::make_pair(lo, hi);
}

// Ids of the default-domain nodes of `graph` whose op is one of `ops`.
std::vector<NodeId> nodesOf(const Graph& graph, std::initializer_list<std::string_view> ops) {
  std::vector<NodeId> ids;
  for (const Node* n : graph.nodes())
    if (n->domain().empty() && std::find(ops.begin(), ops.end(), n->opType()) != ops.end())
      ids.push_back(n->id());
  return ids;
}

class ClampIdiomPass final : public Pass {
 public:
  std::string_view name() const override { return "clamp-idiom"; }
  std::string_view description() const override {
    return "Replaces Max/Min with a constant by Clip, and merges nested Clips.";
  }
  std::string lastRunSummary() const override { return summary_; }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    auto opset = graph.opsetImports().find("");
    if (opset != graph.opsetImports().end() && opset->second < 11) return false;  // Clip's attrs
    std::set<std::string> captured = capturedNames(graph);
    // Max/Min first, so that the Clips they make are merged below too. Ids,
    // not pointers: a merge removes an inner Clip that may come later in id
    // order, and removed ids read back as null.
    size_t rewritten = 0;
    for (NodeId id : nodesOf(graph, {"Max", "Min"}))
      if (Node* n = graph.node(id)) rewritten += toClip(graph, *n) ? 1 : 0;
    size_t merged = 0;
    for (NodeId id : nodesOf(graph, {"Clip"}))
      if (Node* n = graph.node(id)) merged += mergeClips(graph, *n, captured) ? 1 : 0;
    if (rewritten == 0 && merged == 0) return false;
    summary_ = "rewrote " + std::to_string(rewritten) + " Max/Min as Clip, merged " +
               std::to_string(merged) + " nested Clips";
    return true;
  }

 private:
  // Max/Min(x, c) -> Clip.
  bool toClip(Graph& graph, Node& n) {
    if (n.numInputs() != 2 || n.numOutputs() != 1) return false;
    for (size_t k = 0; k < 2; ++k) {
      Value* c = n.input(k);
      Value* x = n.input(1 - k);
      std::optional<double> bound = scalarConstant(c);
      if (!bound || !x || x->isInitializer()) continue;
      DataType dtype = c->initializer()->dtype();
      if (x->type().dtype != DataType::kUndefined && x->type().dtype != dtype) return false;
      Value* b = scalarValue(graph, c->name() + "_bound", dtype, *bound);
      std::vector<Value*> inputs = {x, nullptr, nullptr};
      inputs[n.opType() == "Max" ? 1 : 2] = b;
      replaceIdiom(graph, n.output(0), "Clip", std::move(inputs), {}, {});
      return true;
    }
    return false;
  }

  // Clip(Clip(x, a, b), c, d) -> Clip(x, max(a, c), min(b, d)).
  bool mergeClips(Graph& graph, Node& outer, const std::set<std::string>& captured) {
    Node* inner = producerIs(outer.input(0), "Clip");
    if (!inner || !usedExactly(inner->output(0), 1, captured)) return false;
    std::optional<std::pair<double, double>> a = clipBounds(*inner), b = clipBounds(outer);
    if (!a || !b) return false;
    DataType dtype = DataType::kUndefined;
    for (const Node* c : {inner, &outer})
      for (size_t i = 1; i < c->numInputs(); ++i)
        if (c->input(i)) dtype = c->input(i)->initializer()->dtype();
    double lo = std::max(a->first, b->first), hi = std::min(a->second, b->second);
    std::string hint = inner->input(0)->name();
    Value* loV = std::isinf(lo) ? nullptr : scalarValue(graph, hint + "_min", dtype, lo);
    Value* hiV = std::isinf(hi) ? nullptr : scalarValue(graph, hint + "_max", dtype, hi);
    replaceIdiom(graph, outer.output(0), "Clip", {inner->input(0), loV, hiV}, {}, {inner});
    return true;
  }

  std::string summary_;
};

}  // namespace

std::unique_ptr<Pass> createClampIdiomPass() { return std::make_unique<ClampIdiomPass>(); }

}  // namespace subgraph
