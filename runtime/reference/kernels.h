//===- runtime/reference/kernels.h - Reference kernel families --*- C++ -*-===//
//
// Internal to the reference backend: one registration function per kernel
// family (one family per file); reference_backend.cpp calls them all to fill
// the reference provider.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "subgraph/runtime/backend.h"

namespace subgraph::runtime::reference {

/// elementwise_unary.cpp: Relu ... Cos, Not, Clip.
void registerUnaryKernels(Provider& provider);
/// elementwise_binary.cpp: Add, Sub, Mul, Div, Pow, Max, Min, Sum, Equal,
/// Less, Greater, PRelu, Where.
void registerBinaryKernels(Provider& provider);
/// conv.cpp: Conv.
void registerConvKernels(Provider& provider);
/// conv_transpose.cpp: ConvTranspose.
void registerConvTransposeKernels(Provider& provider);
/// matmul.cpp: MatMul, Gemm.
void registerMatMulKernels(Provider& provider);
/// pooling.cpp: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
void registerPoolingKernels(Provider& provider);
/// normalization.cpp: BatchNormalization, LayerNormalization.
void registerNormalizationKernels(Provider& provider);
/// softmax.cpp: Softmax.
void registerSoftmaxKernels(Provider& provider);
/// reduce.cpp: ReduceMean, ReduceSum, ReduceMax.
void registerReduceKernels(Provider& provider);
/// shape_ops.cpp: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout,
/// Shape.
void registerShapeKernels(Provider& provider);
/// data_movement.cpp: Transpose, Concat, Split, Slice, Gather, Expand,
/// Tile, Pad.
void registerDataMovementKernels(Provider& provider);
/// generators.cpp: Constant, ConstantOfShape, Range.
void registerGeneratorKernels(Provider& provider);
/// cast.cpp: Cast.
void registerCastKernels(Provider& provider);
/// resize.cpp: Resize.
void registerResizeKernels(Provider& provider);
/// control_flow.cpp: If, Loop.
void registerControlFlowKernels(Provider& provider);

}  // namespace subgraph::runtime::reference
