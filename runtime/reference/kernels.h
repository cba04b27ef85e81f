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

/// elementwise_unary.cpp: activations, math functions, Not, Clip, IsNaN,
/// IsInf.
void registerUnaryKernels(Provider& provider);
/// elementwise_binary.cpp: arithmetic, comparisons, logic, Max, Min, Sum,
/// Mean, PRelu, Where.
void registerBinaryKernels(Provider& provider);
/// conv.cpp: Conv.
void registerConvKernels(Provider& provider);
/// conv_transpose.cpp: ConvTranspose.
void registerConvTransposeKernels(Provider& provider);
/// matmul.cpp: MatMul, Gemm.
void registerMatMulKernels(Provider& provider);
/// pooling.cpp: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
void registerPoolingKernels(Provider& provider);
/// normalization.cpp: BatchNormalization, LayerNormalization,
/// InstanceNormalization, MeanVarianceNormalization, LRN.
void registerNormalizationKernels(Provider& provider);
/// softmax.cpp: Softmax, LogSoftmax, Hardmax.
void registerSoftmaxKernels(Provider& provider);
/// reduce.cpp: the Reduce* family, ArgMax, ArgMin, CumSum.
void registerReduceKernels(Provider& provider);
/// shape_ops.cpp: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout,
/// Shape, Size.
void registerShapeKernels(Provider& provider);
/// data_movement.cpp: Transpose, Concat, Split, Slice, Gather, Expand,
/// Tile, Pad, DepthToSpace, SpaceToDepth, Trilu.
void registerDataMovementKernels(Provider& provider);
/// generators.cpp: Constant, ConstantOfShape, Range, EyeLike.
void registerGeneratorKernels(Provider& provider);
/// cast.cpp: Cast, CastLike.
void registerCastKernels(Provider& provider);
/// resize.cpp: Resize, Upsample.
void registerResizeKernels(Provider& provider);
/// indexing.cpp: GatherElements, GatherND, ScatterElements, ScatterND,
/// OneHot, NonZero.
void registerIndexingKernels(Provider& provider);
/// topk.cpp: TopK.
void registerTopKKernels(Provider& provider);
/// quantize.cpp: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.
void registerQuantizeKernels(Provider& provider);
/// quantized_linear.cpp: MatMulInteger, QLinearMatMul, ConvInteger,
/// QLinearConv.
void registerQuantizedLinearKernels(Provider& provider);
/// bitwise.cpp: BitShift.
void registerBitwiseKernels(Provider& provider);
/// compress.cpp: Compress.
void registerCompressKernels(Provider& provider);
/// reverse_sequence.cpp: ReverseSequence.
void registerReverseSequenceKernels(Provider& provider);
/// unique.cpp: Unique.
void registerUniqueKernels(Provider& provider);
/// determinant.cpp: Det.
void registerDeterminantKernels(Provider& provider);
/// einsum.cpp: Einsum.
void registerEinsumKernels(Provider& provider);
/// recurrent.cpp: RNN, GRU, LSTM.
void registerRecurrentKernels(Provider& provider);
/// grid_sample.cpp: GridSample.
void registerGridSampleKernels(Provider& provider);
/// object_detection.cpp: NonMaxSuppression, RoiAlign.
void registerObjectDetectionKernels(Provider& provider);
/// control_flow.cpp: If, Loop.
void registerControlFlowKernels(Provider& provider);
/// attention.cpp: Attention (opset 23).
void registerAttentionKernels(Provider& provider);

}  // namespace subgraph::runtime::reference
