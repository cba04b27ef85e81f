//===- core/ops/infer_quantization.cpp - Inference for linear quantization ===//
//
// QuantizeLinear and DequantizeLinear keep x's shape. The quantized type is
// the zero point's (u8 when it is omitted); the dequantized type is the
// scale's. A 1-D scale (per-axis quantization) must match x's `axis` dim.
//
//===----------------------------------------------------------------------===//
#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

// Checks a per-axis scale and zero point against x's `axis` dim.
Status checkScale(const InferenceContext& ctx, const char* scaleName) {
  const Shape* x = inputShape(ctx, 0);
  for (size_t i = 1; i < 3; ++i) {
    const Shape* s = inputShape(ctx, i);
    if (!s || s->empty()) continue;
    const std::string name = i == 1 ? scaleName : "zero point";
    if (s->size() != 1)
      return ctx.fail(name + " must be a scalar or 1-D, got " + shapeToString(*s));
    if (!x) continue;
    StatusOr<int64_t> axis =
        normalizeAxis(ctx, ctx.node().getInt("axis", 1), static_cast<int64_t>(x->size()), "axis");
    if (!axis.isOk()) return axis.status();
    const Dim& d = (*x)[axis.value()];
    if (d.isStatic() && (*s)[0].isStatic() && (*s)[0] != d && (*s)[0] != Dim(1))
      return ctx.fail(name + " " + shapeToString(*s) + " does not match axis " +
                      std::to_string(axis.value()) + " of x " + shapeToString(*x));
  }
  return Status::ok();
}

}  // namespace

Status inferQuantizeLinear(InferenceContext& ctx) {
  SUBGRAPH_RETURN_IF_ERROR(checkScale(ctx, "y_scale"));
  TensorType out = ctx.inputType(0);
  out.dtype = ctx.hasInput(2) ? ctx.inputType(2).dtype : DataType::kUInt8;
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferDequantizeLinear(InferenceContext& ctx) {
  SUBGRAPH_RETURN_IF_ERROR(checkScale(ctx, "x_scale"));
  TensorType out = ctx.inputType(0);
  out.dtype = ctx.inputType(1).dtype;
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status inferQLinearConv(InferenceContext& ctx) {
  return inferConvLike(ctx, 0, 3, std::nullopt, ctx.inputType(7).dtype);
}

Status inferConvInteger(InferenceContext& ctx) {
  return inferConvLike(ctx, 0, 1, std::nullopt, DataType::kInt32);
}

Status inferQLinearMatMul(InferenceContext& ctx) {
  return inferMatMulLike(ctx, 0, 3, ctx.inputType(7).dtype);
}

Status inferMatMulInteger(InferenceContext& ctx) {
  return inferMatMulLike(ctx, 0, 1, DataType::kInt32);
}

Status inferDynamicQuantizeLinear(InferenceContext& ctx) {
  TensorType y = ctx.inputType(0);
  y.dtype = DataType::kUInt8;
  ctx.setOutputType(0, std::move(y));
  ctx.setOutputType(1, TensorType(DataType::kFloat32, Shape{}));
  ctx.setOutputType(2, TensorType(DataType::kUInt8, Shape{}));
  return Status::ok();
}

}  // namespace subgraph::ops
