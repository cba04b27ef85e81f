//===- subgraph/passes/float16_compute.h - f16/bf16 compute in f32 -*- C++ -*-===//
//
// Rewrites the float ops of a graph that compute on f16 or bf16 tensors to
// compute in f32, the way ONNX Runtime's InsertCastTransformer does for
// execution providers without 16-bit kernels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Makes f16/bf16 float compute run in f32.
///
/// Terms:
///  * a *half value* has element type f16 or bf16;
///  * a *rewritten node* is a default-domain node that reads or writes a
///    half value, whose output types are known, that holds no nested graph,
///    and whose result types are not fixed by an attribute or by their own
///    meaning (Cast, CastLike, Constant, ConstantOfShape, EyeLike, the
///    Random* ops, Bernoulli, Multinomial, the quantize ops, Shape, Size).
///
/// Every half value a rewritten node touches gets an f32 twin, and the
/// rewritten nodes read and write the twins:
///  * a half output of a rewritten node becomes f32 in place; readers that
///    are not rewritten (and a graph output or a nested graph naming it)
///    get one Cast back to the half type, which takes over the value's name;
///  * a half initializer becomes f32, converted once (in place when only
///    rewritten nodes read it, else as a new initializer);
///  * a half value made by Cast(to = half) from an f32 value is replaced by
///    that f32 value when nothing else reads the half value, so the
///    f32 -> half -> f32 pairs that converters insert disappear;
///  * any other half value (a graph input, the result of a Cast from
///    another type or of a node that keeps its types) is widened once by an
///    inserted Cast(to = f32).
/// Shape and Size read the twin when there is one, since only the shape
/// matters to them. Afterwards, a Cast(to = f32 or f64) of a Cast(to =
/// half) of a value of the outer Cast's type is folded to that value when
/// every reader of the middle half value is such a Cast and the middle
/// value is not a graph output.
///
/// Numerics: the result is at least as precise as the graph computed in
/// half precision, but not bit-identical to it: rounding to half between
/// two ops is skipped, as ONNX Runtime does. A half value that is still
/// read as half (a graph output, an op that keeps its types) is never
/// replaced by its unrounded source, so two readers of one value always
/// see the same number.
///
/// What the pass does not touch: graph input and output names and types,
/// nodes in other domains, nested graphs, integer Casts, graphs without
/// half values (checked first, so the pass is cheap there).
std::unique_ptr<Pass> createFloat16ComputePass();

}  // namespace subgraph
