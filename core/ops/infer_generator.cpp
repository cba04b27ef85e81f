//===- core/ops/infer_generator.cpp - Inference for tensor generators -----===//
//
// Constant's type is its payload's; Shape gives a 1-D i64 tensor whose
// elements (the input's dims) are recorded as a shape value;
// ConstantOfShape takes its dims from the shape input's value; Range's
// length is computed when its three scalars are constant.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>

#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

// Names of Constant's mutually exclusive payload attributes.
constexpr const char* kConstantPayloads[] = {"value",         "value_float", "value_floats",
                                             "value_int",     "value_ints",  "value_string",
                                             "value_strings", "sparse_value"};

}  // namespace

Status inferConstant(InferenceContext& ctx) {
  SUBGRAPH_RETURN_IF_ERROR(verifyConstant(ctx.node()));
  const Attribute& a = *[&] {
    for (const char* name : kConstantPayloads)
      if (const Attribute* found = ctx.node().attr(name)) return found;
    return static_cast<const Attribute*>(nullptr);
  }();
  TensorType out;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Tensor>)
          out = v.type();
        else if constexpr (std::is_same_v<T, int64_t>)
          out = TensorType(DataType::kInt64, Shape{});
        else if constexpr (std::is_same_v<T, float>)
          out = TensorType(DataType::kFloat32, Shape{});
        else if constexpr (std::is_same_v<T, std::string>)
          out = TensorType(DataType::kString, Shape{});
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          out = TensorType(DataType::kInt64, Shape{Dim(static_cast<int64_t>(v.size()))});
        else if constexpr (std::is_same_v<T, std::vector<float>>)
          out = TensorType(DataType::kFloat32, Shape{Dim(static_cast<int64_t>(v.size()))});
        else if constexpr (std::is_same_v<T, std::vector<std::string>>)
          out = TensorType(DataType::kString, Shape{Dim(static_cast<int64_t>(v.size()))});
      },
      a.value());
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyConstant(const Node& node) {
  int count = 0;
  for (const char* name : kConstantPayloads) count += node.hasAttr(name) ? 1 : 0;
  if (count != 1)
    return nodeError(node,
                     "needs exactly one of value, value_float, value_floats, value_int, "
                     "value_ints, value_string, value_strings; it has " +
                         std::to_string(count));
  if (node.hasAttr("sparse_value"))
    return Status(StatusCode::kUnsupported, nodeLabel(node) + ": sparse_value is not supported");
  return Status::ok();
}

Status inferShape(InferenceContext& ctx) {
  const Node& node = ctx.node();
  TensorType out(DataType::kInt64, unknownShape(1));
  const Shape* in = inputShape(ctx, 0);
  if (!in) {
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  // Opset 15 start/end: clamped like a slice, negative from the back.
  const int64_t rank = static_cast<int64_t>(in->size());
  auto clampIndex = [&](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank); };
  const int64_t start = clampIndex(node.getInt("start", 0));
  const Attribute* endAttr = node.attr("end");
  const int64_t end =
      endAttr && endAttr->kind() == AttrKind::kInt ? clampIndex(endAttr->asInt()) : rank;
  ShapeValue dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(ShapeElement::fromDim((*in)[i]));
  out.shape = Shape{Dim(static_cast<int64_t>(dims.size()))};
  ctx.setOutputType(0, std::move(out));
  ctx.setOutputShapeValue(0, std::move(dims));
  return Status::ok();
}

Status inferConstantOfShape(InferenceContext& ctx) {
  SUBGRAPH_RETURN_IF_ERROR(verifyConstantOfShape(ctx.node()));
  const Attribute* valueAttr = ctx.node().attr("value");
  const Tensor* value = valueAttr ? std::get_if<Tensor>(&valueAttr->value()) : nullptr;
  TensorType out(value ? value->dtype() : DataType::kFloat32);
  if (std::optional<ShapeValue> sv = ctx.shapeValueInput(0)) {
    Shape shape;
    for (const ShapeElement& e : *sv) {
      if (e.isKnown() && e.value() < 0)
        return ctx.fail("shape entry " + std::to_string(e.value()) + " is negative");
      shape.push_back(e.toDim());
    }
    // A short 1-D integer fill is itself a shape value (exporters build
    // [1, 1, ...] suffixes of reshape targets this way).
    if (shape.size() == 1 && shape[0].isStatic() && shape[0].size() <= 64 && isInteger(out.dtype)) {
      const int64_t fill = value ? value->elementAsInt(0) : 0;
      ctx.setOutputShapeValue(
          0, ShapeValue(static_cast<size_t>(shape[0].size()), ShapeElement::integer(fill)));
    }
    out.shape = std::move(shape);
  } else if (const Shape* s = inputShape(ctx, 0); s && s->size() == 1 && (*s)[0].isStatic()) {
    out.shape = unknownShape(static_cast<size_t>((*s)[0].size()));
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyConstantOfShape(const Node& node) {
  const Attribute* a = node.attr("value");
  if (a && a->kind() == AttrKind::kTensor && a->asTensor().numElements() != 1)
    return nodeError(node, "value must hold exactly one element, it has " +
                               std::to_string(a->asTensor().numElements()));
  return Status::ok();
}

Status inferRange(InferenceContext& ctx) {
  DataType dtype = ctx.inputType(0).dtype;
  TensorType out(dtype, unknownShape(1));
  for (size_t i = 0; i < 3; ++i) {
    const Shape* s = inputShape(ctx, i);
    std::optional<int64_t> n = s ? staticElementCount(*s) : std::nullopt;
    if (n && *n != 1)
      return ctx.fail(std::string(i == 0   ? "start"
                                  : i == 1 ? "limit"
                                           : "delta") +
                      " must be a scalar, got shape " + shapeToString(*s));
  }
  // Integer bounds may also come from shape values (e.g. Range(axis, rank)).
  auto scalar = [&](size_t i) -> std::optional<double> {
    if (const Tensor* t = ctx.constantInput(i); t && t->numElements() == 1)
      return t->elementAsDouble(0);
    if (std::optional<std::vector<int64_t>> v = constantInts(ctx, i); v && v->size() == 1)
      return static_cast<double>((*v)[0]);
    return std::nullopt;
  };
  std::optional<double> start = scalar(0), limit = scalar(1), delta = scalar(2);
  if (start && limit && delta) {
    if (*delta == 0) return ctx.fail("delta must not be 0");
    const double steps = std::ceil((*limit - *start) / *delta);
    if (!std::isfinite(steps) || steps > 1e15)
      return ctx.fail("the range would have " + std::to_string(steps) + " elements");
    const int64_t count = std::max<int64_t>(0, static_cast<int64_t>(steps));
    out.shape = Shape{Dim(count)};
    const double last = *start + static_cast<double>(count) * *delta;
    if (isInteger(dtype) && count <= 64 && std::abs(*start) < 1e15 && std::abs(last) < 1e15) {
      ShapeValue values;
      for (int64_t i = 0; i < count; ++i)
        values.push_back(ShapeElement::integer(static_cast<int64_t>(*start + i * *delta)));
      ctx.setOutputShapeValue(0, std::move(values));
    }
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferSize(InferenceContext& ctx) {
  ctx.setOutputType(0, TensorType(DataType::kInt64, Shape{}));
  if (const Shape* in = inputShape(ctx, 0))
    ctx.setOutputShapeValue(0, {ShapeElement::fromDim(dimProduct(*in))});
  return Status::ok();
}

}  // namespace subgraph::ops
