//===- core/ops/infer_elementwise.cpp - Inference for elementwise ops -----===//
//
// Unary ops keep their input's type; binary and variadic ops broadcast
// (numpy rules over symbolic dims) and take the first input's element type,
// comparisons produce bool, Where broadcasts all three inputs, Cast changes
// only the element type. Integer Add/Sub/Mul/Div, Identity and Cast also
// carry shape values through, since exporters compute reshape targets
// with them.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

// Broadcasts the shapes of inputs [first, numInputs); nullopt shape when any
// rank is unknown. Fails naming the two shapes that do not broadcast.
StatusOr<std::optional<Shape>> broadcastInputs(const InferenceContext& ctx, size_t first) {
  std::optional<Shape> result = Shape();
  for (size_t i = first; i < ctx.numInputs(); ++i) {
    const Shape* s = inputShape(ctx, i);
    if (!s) return std::optional<Shape>();
    std::optional<Shape> b = broadcastShapes(*result, *s);
    if (!b)
      return ctx.fail("cannot broadcast " + shapeToString(*result) + " with input " +
                      std::to_string(i) + " of shape " + shapeToString(*s));
    result = std::move(b);
  }
  return result;
}

// Elementwise integer arithmetic on shape values, e.g. the H * W exporters
// compute before a Reshape. A scalar broadcasts against a list.
std::optional<ShapeValue> foldShapeArithmetic(const InferenceContext& ctx) {
  const std::string& op = ctx.node().opType();
  if (ctx.numInputs() != 2 || !isInteger(ctx.inputType(0).dtype)) return std::nullopt;
  std::optional<ShapeValue> a = ctx.shapeValueInput(0);
  std::optional<ShapeValue> b = ctx.shapeValueInput(1);
  if (!a || !b || a->empty() || b->empty()) return std::nullopt;
  if (a->size() != b->size() && a->size() != 1 && b->size() != 1) return std::nullopt;
  size_t n = std::max(a->size(), b->size());
  ShapeValue out;
  for (size_t i = 0; i < n; ++i) {
    const ShapeElement& x = (*a)[a->size() == 1 ? 0 : i];
    const ShapeElement& y = (*b)[b->size() == 1 ? 0 : i];
    if (x.isKnown() && y.isKnown()) {
      // Overflow (possible with hostile constants) makes the element unknown.
      int64_t v = 0;
      bool overflow = false;
      if (op == "Add")
        overflow = __builtin_add_overflow(x.value(), y.value(), &v);
      else if (op == "Sub")
        overflow = __builtin_sub_overflow(x.value(), y.value(), &v);
      else if (op == "Mul")
        overflow = __builtin_mul_overflow(x.value(), y.value(), &v);
      else if (op == "Div" && y.value() != 0 && !(y.value() == -1 && x.value() == INT64_MIN))
        v = x.value() / y.value();
      else
        return std::nullopt;
      out.push_back(overflow ? ShapeElement() : ShapeElement::integer(v));
    } else if ((op == "Mul" || op == "Div") && y.isKnown() && y.value() == 1) {
      out.push_back(x);  // N * 1 and N / 1 stay N
    } else if (op == "Mul" && x.isKnown() && x.value() == 1) {
      out.push_back(y);
    } else if ((op == "Add" || op == "Sub") && y.isKnown() && y.value() == 0) {
      out.push_back(x);
    } else {
      out.push_back(ShapeElement());
    }
  }
  return out;
}

}  // namespace

Status inferUnary(InferenceContext& ctx) {
  ctx.setOutputType(0, ctx.inputType(0));
  // Exporters negate axes and sizes (e.g. -axis for a suffix length).
  if (ctx.node().opType() == "Neg" || ctx.node().opType() == "Abs")
    if (std::optional<ShapeValue> sv = ctx.shapeValueInput(0)) {
      const bool neg = ctx.node().opType() == "Neg";
      for (ShapeElement& e : *sv)
        e = e.isKnown() && e.value() != INT64_MIN
                ? ShapeElement::integer(neg ? -e.value() : std::abs(e.value()))
                : ShapeElement();
      ctx.setOutputShapeValue(0, std::move(*sv));
    }
  return Status::ok();
}

Status inferIdentity(InferenceContext& ctx) {
  ctx.setOutputType(0, ctx.inputType(0));
  if (std::optional<ShapeValue> sv = ctx.shapeValueInput(0)) ctx.setOutputShapeValue(0, *sv);
  return Status::ok();
}

Status inferBroadcast(InferenceContext& ctx) {
  StatusOr<std::optional<Shape>> shape = broadcastInputs(ctx, 0);
  if (!shape.isOk()) return shape.status();
  TensorType out(ctx.inputType(0).dtype);
  out.shape = std::move(shape.value());
  ctx.setOutputType(0, std::move(out));
  if (std::optional<ShapeValue> sv = foldShapeArithmetic(ctx)) ctx.setOutputShapeValue(0, *sv);
  return Status::ok();
}

Status inferComparison(InferenceContext& ctx) {
  StatusOr<std::optional<Shape>> shape = broadcastInputs(ctx, 0);
  if (!shape.isOk()) return shape.status();
  TensorType out(DataType::kBool);
  out.shape = std::move(shape.value());
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferWhere(InferenceContext& ctx) {
  StatusOr<std::optional<Shape>> shape = broadcastInputs(ctx, 0);
  if (!shape.isOk()) return shape.status();
  DataType dtype = ctx.inputType(1).dtype;
  if (dtype == DataType::kUndefined) dtype = ctx.inputType(2).dtype;
  TensorType out(dtype);
  out.shape = std::move(shape.value());
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyCast(const Node& node) {
  const Attribute* to = node.attr("to");
  if (!to || to->kind() != AttrKind::kInt) return nodeError(node, "attribute 'to' is missing");
  const int64_t code = to->asInt();
  if (code <= 0 || code > 255 || dataTypeName(static_cast<DataType>(code)) == "undef")
    return nodeError(
        node, "attribute 'to' = " + std::to_string(code) + " is not a supported element type");
  return Status::ok();
}

Status inferCast(InferenceContext& ctx) {
  SUBGRAPH_RETURN_IF_ERROR(verifyCast(ctx.node()));
  const DataType dtype = static_cast<DataType>(ctx.node().attr("to")->asInt());
  TensorType out = ctx.inputType(0);
  out.dtype = dtype;
  ctx.setOutputType(0, std::move(out));
  if (isInteger(dtype))
    if (std::optional<ShapeValue> sv = ctx.shapeValueInput(0)) ctx.setOutputShapeValue(0, *sv);
  return Status::ok();
}

Status inferDropout(InferenceContext& ctx) {
  ctx.setOutputType(0, ctx.inputType(0));
  if (ctx.numOutputs() > 1) {
    TensorType mask = ctx.inputType(0);
    mask.dtype = DataType::kBool;
    ctx.setOutputType(1, std::move(mask));
  }
  return Status::ok();
}

Status inferUnaryBool(InferenceContext& ctx) {
  TensorType out = ctx.inputType(0);
  out.dtype = DataType::kBool;
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyMod(const Node& node) {
  const int64_t fmod = node.getInt("fmod", 0);
  if (fmod != 0 && fmod != 1)
    return nodeError(node, "fmod " + std::to_string(fmod) + " must be 0 or 1");
  const Value* a = node.input(0);
  if (a && isFloatingPoint(a->type().dtype) && fmod != 1)
    return nodeError(node, "fmod must be 1 for floating-point inputs");
  return Status::ok();
}

Status inferCastLike(InferenceContext& ctx) {
  TensorType out = ctx.inputType(0);
  out.dtype = ctx.inputType(1).dtype;
  const bool integer = isInteger(out.dtype);
  ctx.setOutputType(0, std::move(out));
  if (integer)
    if (std::optional<ShapeValue> sv = ctx.shapeValueInput(0)) ctx.setOutputShapeValue(0, *sv);
  return Status::ok();
}

}  // namespace subgraph::ops
