//===- core/passes/float16_compute.cpp - f16/bf16 compute in f32 ----------===//
//
// Models exported in f16 or bf16 (by onnxconverter-common, PyTorch autocast)
// ask every float op for a 16-bit kernel. CPU backends rarely have one and
// compute in f32 anyway, so the pass makes that explicit once for the whole
// graph instead of converting at every op: rewritten nodes read and write f32
// twins of the half values, weights are converted once, and the f32 -> half
// -> f32 Cast pairs of the converters fold away. The rule set is in
// float16_compute.h; it follows ONNX Runtime's InsertCastTransformer.
//
// Work is linear in the graph: one sweep classifies nodes, one visits each
// half value a rewritten node touches, one folds Cast pairs.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/float16_compute.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "pass_util.h"
#include "subgraph/ir/captures.h"
#include "subgraph/ir/shape_inference.h"

namespace subgraph {
namespace {

bool isHalf(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }
bool isHalfValue(const Value* v) { return v && isHalf(v->type().dtype); }

bool isOp(const Node* node, std::string_view op) {
  return node && node->domain().empty() && node->opType() == op;
}

// Ops whose result types an attribute or their meaning fixes, so that
// widening their inputs or outputs would change what they compute.
bool keepsItsTypes(const Node& node) {
  static const std::unordered_set<std::string_view> kPinned = {
      "Cast",         "CastLike",       "Constant",         "ConstantOfShape",       "EyeLike",
      "RandomNormal", "RandomUniform",  "RandomNormalLike", "RandomUniformLike",     "Bernoulli",
      "Multinomial",  "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "Shape",
      "Size"};
  return kPinned.count(node.opType()) != 0;
}

bool holdsGraph(const Node& node) {
  for (const Attribute& attr : node.attributes())
    if (attr.kind() == AttrKind::kGraph || attr.kind() == AttrKind::kGraphs) return true;
  return false;
}

// The rewritten-node test of float16_compute.h.
bool computesInF32(const Node& node) {
  if (!node.domain().empty() || keepsItsTypes(node) || holdsGraph(node)) return false;
  bool touchesHalf = false;
  for (const Value* in : node.inputs()) touchesHalf = touchesHalf || isHalfValue(in);
  for (const Value* out : node.outputs()) {
    // An output of unknown type might be half without saying so; leaving
    // the node as it is is always correct.
    if (out->type().dtype == DataType::kUndefined && !out->hasUses() && !out->isGraphOutput())
      continue;
    if (out->type().dtype == DataType::kUndefined) return false;
    touchesHalf = touchesHalf || isHalfValue(out);
  }
  return touchesHalf;
}

TensorType withDtype(TensorType type, DataType dtype) {
  type.dtype = dtype;
  return type;
}

// One f16 or bf16 element as f32; exact, since f32 holds every such value.
float halfBitsToF32(uint16_t h, DataType dtype) {
  if (dtype == DataType::kBFloat16) return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -v : v;
  }
  const uint32_t wideExp = exp == 31 ? 0xffu : exp + 112;  // infinity and NaN stay so
  return std::bit_cast<float>(sign | (wideExp << 23) | (mant << 13));
}

// `half` (f16 or bf16 elements) as an f32 tensor of the same shape. Weights
// of a whole model pass through here, so it converts bits directly
// (Tensor::elementAsDouble per element took two seconds on a 44M-weight
// model).
Tensor widenTensor(const Tensor& half) {
  const size_t n = static_cast<size_t>(half.numElements());
  std::span<const std::byte> in = half.bytes();
  std::vector<std::byte> out(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, in.data() + 2 * i, sizeof bits);
    const float wide = halfBitsToF32(bits, half.dtype());
    std::memcpy(out.data() + sizeof(float) * i, &wide, sizeof wide);
  }
  return Tensor(DataType::kFloat32, half.dims(), std::move(out));
}

Attribute castTo(DataType dtype) { return Attribute("to", static_cast<int64_t>(dtype)); }

class Float16ComputePass final : public Pass {
 public:
  std::string_view name() const override { return "float16-compute"; }
  std::string_view description() const override {
    return "Makes float ops on f16/bf16 tensors compute in f32: weights are converted once, "
           "f32->f16->f32 Cast pairs fold, and graph inputs and outputs keep their types.";
  }

  StatusOr<bool> run(Graph& graph) override {
    summary_.clear();
    stats_ = {};
    if (!hasHalfValue(graph)) return false;
    // Best effort: types make the rewrite possible, and a graph whose
    // inference fails keeps the types it has (nodes with unknown output
    // types are left alone).
    (void)inferShapes(graph);
    captured_ = capturedNames(graph);
    rewritten_.clear();
    passes_detail::OpCounter ops;
    for (Node* node : graph.nodes())
      if (computesInF32(*node)) {
        rewritten_.insert(node);
        ops.add(node->opType());
      }
    for (Value* value : touchedHalfValues(graph)) {
      if (value->producer() && rewritten_.count(value->producer()))
        widenOutput(graph, value);
      else
        widenSource(graph, value);
    }
    foldCastPairs(graph);
    describe(ops);
    return ops.total() > 0 || stats_.foldedPairs > 0;
  }

  std::string lastRunSummary() const override { return summary_; }

 private:
  struct Stats {
    size_t convertedInitializers = 0, foldedSources = 0, insertedWidening = 0;
    size_t insertedNarrowing = 0, foldedPairs = 0;
  };

  static bool hasHalfValue(const Graph& graph) {
    for (const Value* v : graph.values())
      if (isHalfValue(v)) return true;
    return false;
  }

  // Half values read or written by rewritten nodes, each once, in a stable
  // (node, slot) order.
  std::vector<Value*> touchedHalfValues(const Graph& graph) const {
    std::vector<Value*> values;
    std::unordered_set<const Value*> seen;
    auto visit = [&](Value* v) {
      if (isHalfValue(v) && seen.insert(v).second) values.push_back(v);
    };
    for (Node* node : graph.nodes()) {
      if (!rewritten_.count(node)) continue;
      for (Value* in : node->inputs()) visit(in);
      for (Value* out : node->outputs()) visit(out);
    }
    return values;
  }

  // True if something other than a rewritten node, Shape or Size needs
  // `value` as it is: another reader, a graph output slot, a nested graph.
  bool readAsHalfElsewhere(const Value* value) const {
    if (value->isGraphOutput() || captured_.count(value->name())) return true;
    for (const Use& use : value->uses())
      if (!rewritten_.count(use.user) && !readsOnlyShape(use.user)) return true;
    return false;
  }

  static bool readsOnlyShape(const Node* node) { return isOp(node, "Shape") || isOp(node, "Size"); }

  // Points the rewritten readers of `from` (and Shape/Size) at `to`.
  void moveF32Readers(Graph& graph, Value* from, Value* to) const {
    std::vector<Use> uses(from->uses().begin(), from->uses().end());
    for (const Use& use : uses)
      if (rewritten_.count(use.user) || readsOnlyShape(use.user))
        graph.setNodeInput(use.user, use.inputIndex, to);
  }

  void widenOutput(Graph& graph, Value* value);
  void widenSource(Graph& graph, Value* value);
  Value* f32Twin(Graph& graph, Value* value, bool exclusive);
  void foldCastPairs(Graph& graph);
  size_t foldCastPair(Graph& graph, Node* inner);
  void removeIfDead(Graph& graph, Value* value) const;
  void describe(const passes_detail::OpCounter& ops);

  std::unordered_set<const Node*> rewritten_;
  std::set<std::string> captured_;
  Stats stats_;
  std::string summary_;
};

// A rewritten node's half output becomes f32 where it stands. Readers that
// still want half get Cast(to = half) of it, and that Cast's output takes
// the original name, so graph outputs and nested graphs keep name and type.
void Float16ComputePass::widenOutput(Graph& graph, Value* value) {
  const TensorType halfType = value->type();
  value->setType(withDtype(halfType, DataType::kFloat32));
  if (!readAsHalfElsewhere(value)) return;
  std::string name = value->name();
  graph.renameValue(value, graph.uniqueValueName(name + "_f32"));
  Node* cast = graph.addNode("Cast", {value}, 1, {castTo(halfType.dtype)});
  Value* half = cast->output(0);
  half->setType(halfType);
  graph.renameValue(half, std::move(name));
  std::vector<Use> uses(value->uses().begin(), value->uses().end());
  for (const Use& use : uses)
    if (use.user != cast && !rewritten_.count(use.user) && !readsOnlyShape(use.user))
      graph.setNodeInput(use.user, use.inputIndex, half);
  for (size_t i = 0; i < graph.outputs().size(); ++i)
    if (graph.outputs()[i] == value) graph.setOutput(i, half);
  ++stats_.insertedNarrowing;
}

// A half value made outside the rewritten nodes: its rewritten readers move
// to its f32 twin, and it goes when nobody reads it any more.
void Float16ComputePass::widenSource(Graph& graph, Value* value) {
  const bool exclusive = !readAsHalfElsewhere(value);
  Value* twin = f32Twin(graph, value, exclusive);
  if (twin != value) moveF32Readers(graph, value, twin);
  removeIfDead(graph, value);
}

// The f32 version of a half value that no rewritten node produces.
Value* Float16ComputePass::f32Twin(Graph& graph, Value* value, bool exclusive) {
  const TensorType f32Type = withDtype(value->type(), DataType::kFloat32);
  if (value->isInitializer() && !value->isGraphInput()) {
    ++stats_.convertedInitializers;
    Tensor wide = widenTensor(*value->initializer());
    if (exclusive) {
      graph.setInitializer(value, std::move(wide));
      value->setType(f32Type);
      return value;
    }
    return graph.addInitializer(graph.uniqueValueName(value->name() + "_f32"), std::move(wide));
  }
  Node* producer = value->producer();
  if (exclusive && isOp(producer, "Cast") && producer->input(0) &&
      producer->input(0)->type().dtype == DataType::kFloat32) {
    ++stats_.foldedSources;
    return producer->input(0);
  }
  ++stats_.insertedWidening;
  Node* cast = graph.addNode("Cast", {value}, 1, {castTo(DataType::kFloat32)});
  graph.renameValue(cast->output(0), graph.uniqueValueName(value->name() + "_f32"));
  cast->output(0)->setType(f32Type);
  return cast->output(0);
}

// Removes `value` once unread: an initializer, or a Cast that made it.
void Float16ComputePass::removeIfDead(Graph& graph, Value* value) const {
  if (value->hasUses() || value->isGraphOutput() || value->isGraphInput() ||
      captured_.count(value->name()))
    return;
  Node* producer = value->producer();
  if (!producer) {
    if (value->isInitializer()) graph.removeValue(value);
    return;
  }
  if (isOp(producer, "Cast") && producer->numOutputs() == 1) {
    Value* source = producer->input(0);
    graph.removeNode(producer);
    // A chain of converter Casts dies link by link.
    if (source && isHalfValue(source)) removeIfDead(graph, source);
  }
}

void Float16ComputePass::foldCastPairs(Graph& graph) {
  std::vector<Node*> inners;
  for (Node* node : graph.nodes())
    if (isOp(node, "Cast") && isHalfValue(node->output(0))) inners.push_back(node);
  // Folding removes only the inner Cast and its readers, which are never
  // inner Casts themselves (they make f32 or f64), so the list stays valid.
  for (Node* inner : inners) stats_.foldedPairs += foldCastPair(graph, inner);
}

// Folds wide -> half -> wide (see float16_compute.h) at `inner`, the
// wide -> half Cast: every reader of the half value must be a Cast back to
// the wide type, and they all read the wide source instead. Returns the
// number of pairs folded.
size_t Float16ComputePass::foldCastPair(Graph& graph, Node* inner) {
  Value* middle = inner->output(0);
  Value* source = inner->input(0);
  const DataType wide = source ? source->type().dtype : DataType::kUndefined;
  if ((wide != DataType::kFloat32 && wide != DataType::kFloat64) || !middle->hasUses() ||
      middle->isGraphOutput() || captured_.count(middle->name()))
    return 0;
  // Another kind of reader of the rounded value would see a different
  // number from the readers that now skip the rounding.
  std::vector<Node*> outers;
  Node* namesOutput = nullptr;
  for (const Use& use : middle->uses()) {
    Node* outer = use.user;
    Value* result = outer->output(0);
    if (!isOp(outer, "Cast") || outer->getInt("to", 0) != static_cast<int64_t>(wide) ||
        result->type().dtype != wide || captured_.count(result->name()))
      return 0;
    if (std::find(outers.begin(), outers.end(), outer) != outers.end()) continue;
    if (result->isGraphOutput()) {
      // The result's name must move onto the source: possible once, and
      // only for a source we may rename.
      if (namesOutput || source->isGraphInput() || source->isGraphOutput() ||
          source->isInitializer() || captured_.count(source->name()))
        return 0;
      namesOutput = outer;
    }
    outers.push_back(outer);
  }
  std::string name = namesOutput ? namesOutput->output(0)->name() : std::string();
  for (Node* outer : outers) {
    graph.replaceAllUsesWith(outer->output(0), source);
    graph.removeNode(outer);
  }
  graph.removeNode(inner);
  if (namesOutput) graph.renameValue(source, std::move(name));
  return outers.size();
}

void Float16ComputePass::describe(const passes_detail::OpCounter& ops) {
  std::vector<std::string> parts;
  if (ops.total()) parts.push_back("computed " + ops.describe() + " in f32");
  auto add = [&](size_t n, const char* what) {
    if (n) parts.push_back(std::to_string(n) + " " + what);
  };
  add(stats_.convertedInitializers, "initializers converted");
  add(stats_.foldedSources, "Casts to half folded into their f32 source");
  add(stats_.insertedWidening, "Casts to f32 inserted");
  add(stats_.insertedNarrowing, "Casts back to half inserted");
  add(stats_.foldedPairs, "Cast pairs folded");
  for (size_t i = 0; i < parts.size(); ++i) summary_ += (i ? "; " : "") + parts[i];
}

}  // namespace

std::unique_ptr<Pass> createFloat16ComputePass() { return std::make_unique<Float16ComputePass>(); }

}  // namespace subgraph
