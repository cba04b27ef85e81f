//===- core/passes/constant_folding.cpp - Constant folding ----------------===//
//
// Methodology:
//  1. Optionally run shape inference, so that values carry the most precise
//     types known (in particular the static shapes Shape nodes fold from).
//     A graph whose every value already has a dtype and a static shape
//     skips it: inference could only confirm those types.
//  2. Sweep the nodes in topological order. A node folds when every input is
//     a constant, evaluating it with constant_evaluators.h; Shape and Size
//     fold from their input's type instead of its data.
//  3. Shape over a partly static shape (f32[N, 128, 768]) cannot fold, but
//     exporters often pick a static dim out of it (Gather(Shape(x), 1)). Such
//     a Shape result is kept as a "partial" constant: its data, plus a mask
//     marking the unknown elements. Data-movement ops (Gather, Slice,
//     Concat, ...) over partial constants are evaluated twice, once on the
//     data and once on the masks, which move identically; if no unknown
//     element reaches the result, it folds, otherwise the result is partial
//     in turn.
//  4. A fold turns the node's output values themselves into initializers,
//     so names, uses and graph outputs stay as they were.
//  5. If a sweep folded anything, repeat from 1: a folded Reshape shape can
//     make a later Shape static. At most maxSweeps sweeps.
// Each sweep is linear in the graph plus the evaluation work, which the
// element limit bounds per node.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/constant_folding.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pass_util.h"
#include "subgraph/ir/captures.h"
#include "subgraph/ir/shape_inference.h"
#include "subgraph/passes/constant_evaluators.h"

namespace subgraph {
namespace {

/// A small integer tensor some of whose elements are unknown: Shape of a
/// value with symbolic dims, and what data-movement ops make of it.
struct PartialConstant {
  Tensor data;  ///< Unknown elements hold an arbitrary value.
  Tensor mask;  ///< Same dims and type as data; nonzero marks unknown.
};

// For ops that only move elements, the input positions whose elements are
// moved (the others, such as Gather's indices, steer the movement and must
// be fully known). Null for every other op.
const std::vector<size_t>* movedInputs(std::string_view op) {
  static const std::map<std::string_view, std::vector<size_t>> kTable = {
      {"Cast", {0}},     {"Expand", {0}},    {"Flatten", {0}},   {"Gather", {0}},
      {"Identity", {0}}, {"Reshape", {0}},   {"Slice", {0}},     {"Squeeze", {0}},
      {"Tile", {0}},     {"Transpose", {0}}, {"Unsqueeze", {0}}, {"Where", {1, 2}},
  };
  static const std::vector<size_t> kAll;  // Concat: every input
  if (op == "Concat") return &kAll;
  auto it = kTable.find(op);
  return it == kTable.end() ? nullptr : &it->second;
}

bool isMovedInput(const std::vector<size_t>& moved, std::string_view op, size_t i) {
  return op == "Concat" || std::find(moved.begin(), moved.end(), i) != moved.end();
}

bool anyNonzero(const Tensor& t) {
  for (int64_t i = 0; i < t.numElements(); ++i)
    if (t.elementAsDouble(i) != 0.0) return true;
  return false;
}

// True if a folded tensor agrees with the type already declared on the
// value; a disagreement means the graph is inconsistent, and folding would
// silently change it.
bool agreesWithDeclaredType(const Tensor& t, const TensorType& declared) {
  if (declared.dtype != DataType::kUndefined && declared.dtype != t.dtype()) return false;
  if (!declared.shape) return true;
  if (declared.shape->size() != t.dims().size()) return false;
  for (size_t i = 0; i < t.dims().size(); ++i) {
    const Dim& d = (*declared.shape)[i];
    if (d.isStatic() && d.size() != t.dims()[i]) return false;
  }
  return true;
}

class ConstantFoldingPass final : public Pass {
 public:
  explicit ConstantFoldingPass(const ConstantFoldingOptions& options) : options_(options) {}

  std::string_view name() const override { return "constant-folding"; }
  std::string_view description() const override {
    return "Evaluates nodes whose inputs are constant (including Shape of static shapes) "
           "into initializers.";
  }

  StatusOr<bool> run(Graph& graph) override {
    stats_ = Stats{};
    created_.clear();
    bool changed = false;
    for (int sweep = 0; sweep < options_.maxSweeps; ++sweep) {
      if (options_.inferShapes && !hasCompleteTypes(graph)) {
        Status inferred = inferShapes(graph);
        if (!inferred && stats_.inferenceProblem.empty())
          stats_.inferenceProblem = inferred.message();
      }
      if (!mayFold(graph)) break;
      StatusOr<bool> folded = runSweep(graph);
      if (!folded) return folded.status();
      if (!*folded) break;
      changed = true;
    }
    removeUnusedCreatedConstants(graph);
    return changed;
  }

  std::string lastRunSummary() const override {
    std::string text;
    auto append = [&text](const std::string& part) { text += (text.empty() ? "" : "; ") + part; };
    if (stats_.folded.total()) append("folded " + stats_.folded.describe());
    if (stats_.tooLarge)
      append("left " + std::to_string(stats_.tooLarge) + " over " +
             std::to_string(options_.maxOutputElements) + " elements");
    if (stats_.inconsistent)
      append("left " + std::to_string(stats_.inconsistent) +
             " with inconsistent inputs (first: " + stats_.firstInconsistency + ")");
    if (!stats_.inferenceProblem.empty())
      append("shape inference failed, used existing types: " + stats_.inferenceProblem);
    return text;
  }

 private:
  struct Stats {
    passes_detail::OpCounter folded;
    size_t tooLarge = 0;
    size_t inconsistent = 0;
    std::string firstInconsistency;
    std::string inferenceProblem;
  };

  // How a sweep evaluates `node`, if at all: Shape and Size from their
  // input's type, other default-domain ops from constant (or partial)
  // inputs when an evaluator exists.
  enum class Evaluation { kNone, kShapeLike, kOnConstants };
  static Evaluation evaluationOf(const Node& node,
                                 const std::unordered_map<const Value*, PartialConstant>& partial) {
    if (!node.domain().empty()) return Evaluation::kNone;
    if (node.opType() == "Shape" || node.opType() == "Size") return Evaluation::kShapeLike;
    if (readsOnlyConstants(node, partial) && hasConstantEvaluator("", node.opType()))
      return Evaluation::kOnConstants;
    return Evaluation::kNone;
  }

  // Whether a sweep could fold anything: some Shape or Size, or some node
  // that reads only constants and has an evaluator. A scan in id order
  // answers it without the topological order, and on most graphs the
  // answer, after the first sweep, is no. Partial constants start at Shape
  // nodes and new constants at folds, so a graph without either kind of
  // node folds nothing.
  static bool mayFold(const Graph& graph) {
    const std::unordered_map<const Value*, PartialConstant> none;
    for (const Node* node : graph.nodes())
      if (evaluationOf(*node, none) != Evaluation::kNone) return true;
    return false;
  }

  // One topological sweep; returns whether anything folded.
  StatusOr<bool> runSweep(Graph& graph) {
    StatusOr<std::vector<Node*>> order = graph.topologicalOrder();
    if (!order) return order.status();
    std::unordered_set<const Value*> graphOutputs(graph.outputs().begin(), graph.outputs().end());
    std::unordered_map<const Value*, PartialConstant> partial;
    bool folded = false;
    for (Node* node : *order) {
      const Evaluation how = evaluationOf(*node, partial);
      if (how == Evaluation::kNone) continue;
      bool needed = false;
      for (Value* out : node->outputs())
        needed = needed || out->hasUses() || graphOutputs.count(out);
      if (!needed) continue;  // dead: DCE removes it, folding would only add a constant
      std::optional<std::vector<Tensor>> results = how == Evaluation::kShapeLike
                                                       ? evaluateShapeLike(*node, partial)
                                                       : evaluateOnConstants(*node, partial);
      if (results && replaceByConstants(graph, node, std::move(*results))) folded = true;
    }
    return folded;
  }

  // What evaluateOnConstants() needs at least: every input present is a
  // constant or a partial one. Most nodes read a computed value, and this
  // turns them away before any lookup by op name.
  static bool readsOnlyConstants(const Node& node,
                                 const std::unordered_map<const Value*, PartialConstant>& partial) {
    for (const Value* in : node.inputs())
      if (in && !in->isInitializer() && !partial.count(in)) return false;
    return true;
  }

  // Shape and Size read only their input's type. A partly static Shape
  // result is recorded as a partial constant instead of folding.
  std::optional<std::vector<Tensor>> evaluateShapeLike(
      const Node& node, std::unordered_map<const Value*, PartialConstant>& partial) {
    const Value* x = node.input(0);
    if (!x || !x->type().hasRank() || node.numOutputs() != 1) return std::nullopt;
    const Shape& shape = *x->type().shape;
    if (node.opType() == "Size") {
      std::optional<int64_t> count = staticElementCount(shape);
      if (!count) return std::nullopt;
      return std::vector<Tensor>{Tensor::fromVector<int64_t>(DataType::kInt64, {}, {*count})};
    }
    auto rank = static_cast<int64_t>(shape.size());
    auto clampIndex = [rank](int64_t i) {
      return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
    };
    int64_t start = clampIndex(node.getInt("start", 0));
    int64_t end = std::max(start, clampIndex(node.getInt("end", rank)));
    std::vector<int64_t> data, mask;
    for (int64_t i = start; i < end; ++i) {
      const Dim& d = shape[static_cast<size_t>(i)];
      data.push_back(d.isStatic() ? d.size() : 1);
      mask.push_back(d.isStatic() ? 0 : 1);
    }
    std::vector<int64_t> dims{end - start};
    Tensor dataTensor = Tensor::fromVector<int64_t>(DataType::kInt64, dims, data);
    if (std::find(mask.begin(), mask.end(), 1) == mask.end())
      return std::vector<Tensor>{std::move(dataTensor)};
    partial.emplace(node.output(0),
                    PartialConstant{std::move(dataTensor),
                                    Tensor::fromVector<int64_t>(DataType::kInt64, dims, mask)});
    return std::nullopt;
  }

  // Evaluates a node whose inputs are all constants, or (for data-movement
  // ops) partial constants in the moved positions.
  std::optional<std::vector<Tensor>> evaluateOnConstants(
      const Node& node, std::unordered_map<const Value*, PartialConstant>& partial) {
    const std::vector<size_t>* moved = movedInputs(node.opType());
    std::vector<const Tensor*> data(node.numInputs(), nullptr);
    bool anyPartial = false;
    for (size_t i = 0; i < node.numInputs(); ++i) {
      const Value* in = node.input(i);
      if (!in) continue;
      if (const Tensor* constant = in->initializer()) {
        data[i] = constant;
      } else if (auto it = partial.find(in);
                 it != partial.end() && moved && isMovedInput(*moved, node.opType(), i)) {
        data[i] = &it->second.data;
        anyPartial = true;
      } else {
        return std::nullopt;
      }
    }
    EvaluationLimits limits{options_.maxOutputElements};
    StatusOr<std::vector<Tensor>> results = evaluateConstantNode(node, data, limits);
    if (!results) {
      noteFailure(results.status());
      return std::nullopt;
    }
    if (!anyPartial) return std::move(results).value();

    // Move the unknown-element masks the same way as the data.
    std::vector<Tensor> zeroMasks;
    zeroMasks.reserve(node.numInputs());
    std::vector<const Tensor*> masks = data;
    for (size_t i = 0; i < node.numInputs(); ++i) {
      const Value* in = node.input(i);
      if (!in || !isMovedInput(*moved, node.opType(), i)) continue;
      if (auto it = partial.find(in); it != partial.end()) {
        masks[i] = &it->second.mask;
      } else if (data[i]->dtype() != DataType::kString) {
        zeroMasks.push_back(Tensor::splat(data[i]->dtype(), data[i]->dims(), 0.0));
        masks[i] = &zeroMasks.back();
      } else {
        return std::nullopt;
      }
    }
    StatusOr<std::vector<Tensor>> maskResults = evaluateConstantNode(node, masks, limits);
    if (!maskResults || maskResults->size() != 1 || results->size() != 1) return std::nullopt;
    if (!anyNonzero(maskResults->front())) return std::move(results).value();
    partial.emplace(node.output(0),
                    PartialConstant{std::move(results->front()), std::move(maskResults->front())});
    return std::nullopt;
  }

  void noteFailure(const Status& status) {
    if (status.code() == StatusCode::kLimitExceeded) {
      ++stats_.tooLarge;
    } else if (status.code() == StatusCode::kInvalidArgument) {
      if (stats_.inconsistent++ == 0) stats_.firstInconsistency = status.message();
    }
    // kUnsupported: an op or element type the evaluators do not cover is
    // simply not folded, which is not worth reporting.
  }

  // Turns the node's outputs into initializers holding `results`; returns
  // false (changing nothing) if they disagree with declared types.
  bool replaceByConstants(Graph& graph, Node* node, std::vector<Tensor> results) {
    if (results.size() != node->numOutputs()) return false;
    for (size_t i = 0; i < results.size(); ++i) {
      if (!agreesWithDeclaredType(results[i], node->output(i)->type())) {
        if (stats_.inconsistent++ == 0)
          stats_.firstInconsistency = node->qualifiedOpType() + " node '" + node->displayName() +
                                      "': computed " + results[i].type().toString() +
                                      " but its output is declared " +
                                      node->output(i)->type().toString();
        return false;
      }
    }
    stats_.folded.add(node->opType());
    std::vector<Value*> outputs(node->outputs().begin(), node->outputs().end());
    graph.removeNode(node, /*keepOutputs=*/true);
    for (size_t i = 0; i < outputs.size(); ++i) {
      graph.setInitializer(outputs[i], std::move(results[i]));
      created_.push_back(outputs[i]->id());
    }
    return true;
  }

  // Intermediate results of a folded chain (Shape -> Gather -> ...) are
  // unused once the chain's end folds; they were made by this pass, so this
  // pass cleans them up. Constants that were there before are DCE's call.
  void removeUnusedCreatedConstants(Graph& graph) {
    std::unordered_set<const Value*> graphOutputs(graph.outputs().begin(), graph.outputs().end());
    std::set<std::string> captured = capturedNames(graph);
    for (ValueId id : created_) {
      Value* v = graph.value(id);
      if (v && v->isInitializer() && !v->producer() && !v->hasUses() && !v->isGraphInput() &&
          !graphOutputs.count(v) && !captured.count(v->name()))
        graph.removeValue(v);
    }
    created_.clear();
  }

  ConstantFoldingOptions options_;
  Stats stats_;
  std::vector<ValueId> created_;
};

}  // namespace

std::unique_ptr<Pass> createConstantFoldingPass(const ConstantFoldingOptions& options) {
  return std::make_unique<ConstantFoldingPass>(options);
}

}  // namespace subgraph
