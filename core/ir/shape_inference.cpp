//===- core/ir/shape_inference.cpp - Type and shape inference driver -------===//
//
// The graph-level half of inference: the InferenceContext an op's InferFn
// sees, the walk in topological order that stores results on values, the
// merge with types a model already declares, and numpy broadcasting over
// symbolic dims. The per-op rules live in core/ops/infer_*.cpp.
//
// Besides types, the walk tracks "shape values": the known elements of small
// integer tensors computed from shapes (see ShapeValueMap), so that the
// Shape -> Gather -> Concat -> Reshape chains exporters emit keep their dims.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/shape_inference.h"

#include <algorithm>
#include <cstdint>

namespace subgraph {
namespace {

// Shape values are for shape-sized tensors; bigger integer constants are
// data, and copying them into dims would only cost time.
constexpr int64_t kMaxShapeValueElements = 64;

std::string nodeLabel(const Node& node) {
  return node.qualifiedOpType() + " node '" + node.displayName() + "'";
}

// A Constant node's payload as a tensor, materializing the list forms.
std::optional<Tensor> constantNodeTensor(const Node& node) {
  for (const Attribute& a : node.attributes()) {
    const AttrValue& v = a.value();
    if (a.name() == "value") {
      if (const Tensor* t = std::get_if<Tensor>(&v)) return *t;
    } else if (a.name() == "value_int") {
      if (const int64_t* i = std::get_if<int64_t>(&v))
        return Tensor::fromVector<int64_t>(DataType::kInt64, {}, {*i});
    } else if (a.name() == "value_ints") {
      if (const auto* is = std::get_if<std::vector<int64_t>>(&v))
        return Tensor::fromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(is->size())},
                                           *is);
    } else if (a.name() == "value_float") {
      if (const float* f = std::get_if<float>(&v))
        return Tensor::fromVector<float>(DataType::kFloat32, {}, {*f});
    } else if (a.name() == "value_floats") {
      if (const auto* fs = std::get_if<std::vector<float>>(&v))
        return Tensor::fromVector<float>(DataType::kFloat32, {static_cast<int64_t>(fs->size())},
                                         *fs);
    }
  }
  return std::nullopt;
}

// A placeholder tensor (e.g. a default-constructed attribute) has no bytes;
// InferFns read elements, so only tensors whose data is all there count.
bool hasData(const Tensor& t) {
  if (t.dtype() == DataType::kString)
    return static_cast<int64_t>(t.strings().size()) == t.numElements();
  return dataTypeSize(t.dtype()) != 0 &&
         t.bytes().size() == static_cast<size_t>(t.numElements()) * dataTypeSize(t.dtype());
}

bool isConstantNode(const Node* node) {
  return node && node->domain().empty() && node->opType() == "Constant";
}

// Static dims beat symbolic ones, which beat unknown ones; two different
// static dims conflict (nullopt). Between two symbols the declared one stays.
std::optional<Dim> mergeDim(const Dim& existing, const Dim& inferred) {
  if (existing.isStatic() && inferred.isStatic())
    return existing.size() == inferred.size() ? std::optional<Dim>(existing) : std::nullopt;
  if (existing.isStatic()) return existing;
  if (inferred.isStatic()) return inferred;
  if (existing.isSymbolic()) return existing;
  return inferred;
}

}  // namespace

//===--- InferenceContext -------------------------------------------------===//

InferenceContext::InferenceContext(const Node& node) : InferenceContext(node, nullptr) {}

InferenceContext::InferenceContext(const Node& node, const ShapeValueMap* shapeValues)
    : node_(node),
      shapeValues_(shapeValues),
      outputs_(node.numOutputs()),
      shapeValuesOut_(node.numOutputs()) {}

const TensorType& InferenceContext::inputType(size_t i) const {
  static const TensorType kUnknown;
  const Value* v = node_.input(i);
  return v ? v->type() : kUnknown;
}

const Tensor* InferenceContext::constantInput(size_t i) const {
  const Value* v = node_.input(i);
  if (!v) return nullptr;
  if (const Tensor* t = v->initializer()) return hasData(*t) ? t : nullptr;
  const Node* producer = v->producer();
  if (!isConstantNode(producer)) return nullptr;
  if (const Attribute* a = producer->attr("value"))
    if (const Tensor* t = std::get_if<Tensor>(&a->value())) return hasData(*t) ? t : nullptr;
  std::optional<Tensor> t = constantNodeTensor(*producer);
  if (!t) return nullptr;
  materialized_.push_back(std::move(*t));
  return &materialized_.back();
}

std::optional<ShapeValue> InferenceContext::shapeValueInput(size_t i) const {
  const Value* v = node_.input(i);
  if (!v) return std::nullopt;
  if (const Tensor* t = constantInput(i)) {
    if (!isInteger(t->dtype()) || t->dims().size() > 1 || t->numElements() > kMaxShapeValueElements)
      return std::nullopt;
    ShapeValue out;
    for (int64_t e : t->toInt64Vector()) out.push_back(ShapeElement::integer(e));
    return out;
  }
  if (shapeValues_) {
    auto it = shapeValues_->find(v);
    if (it != shapeValues_->end()) return it->second;
  }
  return std::nullopt;
}

Status InferenceContext::fail(const std::string& message) const {
  return Status::invalid(nodeLabel(node_) + ": " + message);
}

//===--- Broadcasting and merging -----------------------------------------===//

std::optional<Shape> broadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the back; a missing dim acts as 1.
    const Dim one(1);
    const Dim& x = i < rank - a.size() ? one : a[i - (rank - a.size())];
    const Dim& y = i < rank - b.size() ? one : b[i - (rank - b.size())];
    Dim& r = out[i];
    if (x.isStatic() && y.isStatic()) {
      if (x.size() == y.size() || y.size() == 1)
        r = x;
      else if (x.size() == 1)
        r = y;
      else
        return std::nullopt;
    } else if (x.isStatic() && x.size() == 1) {
      r = y;
    } else if (y.isStatic() && y.size() == 1) {
      r = x;
    } else if (x.isStatic()) {
      r = x;  // y must be x or 1 at run time; either way the result is x.
    } else if (y.isStatic()) {
      r = y;
    } else if (x.isSymbolic() && x == y) {
      r = x;
    } else {
      r = Dim::unknown();  // N vs M, or N vs ?: either could be 1 at run time.
    }
  }
  return out;
}

std::optional<TensorType> mergeTypes(const TensorType& existing, const TensorType& inferred) {
  // Interned shapes compare by pointer: a graph whose values are typed
  // already (a text graph) merges each output with itself, and building
  // and interning the same shape again cost most of a 10^6-node inference.
  if (existing == inferred) return existing;
  TensorType out;
  if (existing.dtype != DataType::kUndefined && inferred.dtype != DataType::kUndefined &&
      existing.dtype != inferred.dtype)
    return std::nullopt;
  out.dtype = existing.dtype != DataType::kUndefined ? existing.dtype : inferred.dtype;
  if (!existing.shape || !inferred.shape) {
    out.shape = existing.shape ? existing.shape : inferred.shape;
    return out;
  }
  if (existing.shape->size() != inferred.shape->size()) return std::nullopt;
  Shape shape;
  for (size_t i = 0; i < existing.shape->size(); ++i) {
    std::optional<Dim> d = mergeDim((*existing.shape)[i], (*inferred.shape)[i]);
    if (!d) return std::nullopt;
    shape.push_back(std::move(*d));
  }
  out.shape = std::move(shape);
  return out;
}

//===--- The graph walk ---------------------------------------------------===//

namespace {

// InferFns read attributes through typed getters, which throw on an
// attribute of the wrong kind; that is bad input, not a crash, so it comes
// back as a Status naming the node like every other inference error.
Status runInferFn(const OpSchema& schema, InferenceContext& ctx) {
  try {
    return schema.infer(ctx);
  } catch (const Error& e) {
    std::string message = e.what();
    const std::string label = nodeLabel(ctx.node());
    if (message.rfind(label, 0) != 0) message = label + ": " + message;
    return Status(e.code(), message);
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal,
                  nodeLabel(ctx.node()) + ": shape inference failed: " + e.what());
  }
}

// InferFns index operands by position, so a node whose operand counts do
// not fit its schema, or that lacks a required input, is rejected first.
Status checkOperandCounts(const Node& node, const OpSchema& schema) {
  auto range = [](size_t lo, size_t hi) {
    if (hi == SIZE_MAX) return "at least " + std::to_string(lo);
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
  };
  if (node.numInputs() < schema.minInputs() || node.numInputs() > schema.maxInputs())
    return Status::invalid(nodeLabel(node) + ": has " + std::to_string(node.numInputs()) +
                           " inputs, expected " + range(schema.minInputs(), schema.maxInputs()));
  if (node.numOutputs() < schema.minOutputs() || node.numOutputs() > schema.maxOutputs())
    return Status::invalid(nodeLabel(node) + ": has " + std::to_string(node.numOutputs()) +
                           " outputs, expected " + range(schema.minOutputs(), schema.maxOutputs()));
  for (size_t i = 0; i < node.numInputs() && i < schema.inputs.size(); ++i)
    if (!node.input(i) && schema.inputs[i].arity == Arity::kSingle)
      return Status::invalid(nodeLabel(node) + ": required input '" + schema.inputs[i].name +
                             "' is missing");
  return Status::ok();
}

// Runs one node's InferFn and stores merged types (and shape values).
Status inferOne(Node& node, const InferShapesOptions& options, ShapeValueMap* shapeValues) {
  const OpSchema* schema = node.schema();
  if (!schema || !schema->infer) {
    if (options.allowUnknownOps) return Status::ok();
    return Status(StatusCode::kUnsupported,
                  nodeLabel(node) + ": " +
                      (schema ? "op has no shape inference" : "op has no registered schema"));
  }
  SUBGRAPH_RETURN_IF_ERROR(checkOperandCounts(node, *schema));
  InferenceContext ctx(node, shapeValues);
  SUBGRAPH_RETURN_IF_ERROR(runInferFn(*schema, ctx));
  for (size_t i = 0; i < node.numOutputs(); ++i) {
    Value* out = node.output(i);
    const TensorType& inferred = ctx.outputTypes()[i];
    if (!options.keepExistingWhenLessPrecise) {
      if (!inferred.isUnknown()) out->setType(inferred);
    } else {
      std::optional<TensorType> merged = mergeTypes(out->type(), inferred);
      if (!merged)
        return Status::invalid(nodeLabel(node) + ": inferred type " + inferred.toString() +
                               " for output '" + out->name() +
                               "' conflicts with its declared type " + out->type().toString());
      out->setType(std::move(*merged));
    }
    if (shapeValues && ctx.outputShapeValues()[i])
      (*shapeValues)[out] = *ctx.outputShapeValues()[i];
  }
  return Status::ok();
}

}  // namespace

Status inferNodeTypes(Node& node, const InferShapesOptions& options) {
  return inferOne(node, options, nullptr);
}

Status inferShapes(Graph& graph, const InferShapesOptions& options) {
  StatusOr<std::vector<Node*>> order = graph.topologicalOrder();
  if (!order.isOk()) return order.status();
  ShapeValueMap shapeValues;
  for (Node* node : order.value()) SUBGRAPH_RETURN_IF_ERROR(inferOne(*node, options, &shapeValues));
  return Status::ok();
}

bool hasCompleteTypes(const Graph& graph) {
  for (const Value* v : graph.values()) {
    const TensorType& type = v->type();
    if (type.dtype == DataType::kUndefined || !type.hasRank() || !isStaticShape(*type.shape))
      return false;
  }
  return true;
}

}  // namespace subgraph
