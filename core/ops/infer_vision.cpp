//===- core/ops/infer_vision.cpp - Inference for detection and sampling ---===//
//
// NonMaxSuppression returns a data-dependent number of [batch, class, box]
// triples; RoiAlign pools each region to the output size; GridSample takes
// its spatial output size from the grid.
//
//===----------------------------------------------------------------------===//
#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {

Status inferNonMaxSuppression(InferenceContext& ctx) {
  const Shape* boxes = inputShape(ctx, 0);
  if (boxes && (boxes->size() != 3 || ((*boxes)[2].isStatic() && (*boxes)[2] != Dim(4))))
    return ctx.fail("boxes must be [batch, spatial, 4], got " + shapeToString(*boxes));
  ctx.setOutputType(0, TensorType(DataType::kInt64, Shape{Dim::unknown(), 3}));
  return Status::ok();
}

Status inferRoiAlign(InferenceContext& ctx) {
  const Shape* x = inputShape(ctx, 0);
  const Shape* rois = inputShape(ctx, 1);
  if (x && x->size() != 4) return ctx.fail("X must be [N, C, H, W], got " + shapeToString(*x));
  if (rois && (rois->size() != 2 || ((*rois)[1].isStatic() && (*rois)[1] != Dim(4))))
    return ctx.fail("rois must be [num_rois, 4], got " + shapeToString(*rois));
  const int64_t h = ctx.node().getInt("output_height", 1);
  const int64_t w = ctx.node().getInt("output_width", 1);
  if (h < 1 || w < 1) return ctx.fail("output_height and output_width must be >= 1");
  Dim count = rois ? (*rois)[0] : Dim();
  if (const Shape* idx = inputShape(ctx, 2); idx && idx->size() == 1 && !count.isStatic())
    count = (*idx)[0];
  ctx.setOutputType(
      0, TensorType(ctx.inputType(0).dtype, Shape{count, x ? (*x)[1] : Dim(), Dim(h), Dim(w)}));
  return Status::ok();
}

Status inferGridSample(InferenceContext& ctx) {
  const Shape* x = inputShape(ctx, 0);
  const Shape* grid = inputShape(ctx, 1);
  TensorType out(ctx.inputType(0).dtype);
  if (x && x->size() < 3) return ctx.fail("X must have rank >= 3, got " + shapeToString(*x));
  if (x && grid) {
    if (grid->size() != x->size() ||
        (grid->back().isStatic() && grid->back().size() != static_cast<int64_t>(x->size()) - 2))
      return ctx.fail("grid " + shapeToString(*grid) + " does not match X " + shapeToString(*x));
    Shape shape = {(*x)[0].isStatic() ? (*x)[0] : (*grid)[0], (*x)[1]};
    shape.insert(shape.end(), grid->begin() + 1, grid->end() - 1);
    out.shape = std::move(shape);
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

}  // namespace subgraph::ops
