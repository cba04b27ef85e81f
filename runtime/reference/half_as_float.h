//===- runtime/reference/half_as_float.h - f16/bf16 through f32 kernels -*- C++ -*-===//
//
// Internal to the reference backend: a kernel decorator that lets an
// f32-only kernel run nodes whose float tensors are f16 or bf16. It widens
// the half inputs into scratch, runs the wrapped kernel on f32 views, and
// rounds its f32 outputs back to the half type, so the result is the f32
// computation rounded once, which is what a graph rewritten by the
// float16-compute pass computes too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "subgraph/runtime/backend.h"

namespace subgraph::runtime::reference {

/// A creator whose kernels run like `f32Creator`'s on f32/f64 inputs and,
/// on f16/bf16 inputs, compute in f32 as described in the file comment.
/// For ops whose float inputs and outputs share one element type (Conv,
/// ConvTranspose): every f32 output is returned in the half type of the
/// first half input.
KernelCreator halfAsFloat(KernelCreator f32Creator);

}  // namespace subgraph::runtime::reference
