//===- subgraph/passes/attention_idiom.h - Attention written out -*- C++ -*-===//
//
// Recognises scaled dot-product attention as exporters write it, op by op,
// and replaces it with one Attention node (ONNX opset 23).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "subgraph/passes/pass.h"

namespace subgraph {

/// Replaces
///
///     s = MatMul(Q', K')       Q' [B, H, Sq, D] and K' [B, H, D, Skv]
///     s = s * c  (or / c)      any number of scalar constants, optional
///     s = s + mask             optional; mask broadcasts to s, last dim Skv
///     p = Softmax(s)           over the last axis
///     p = Where(IsNaN(p), 0, p)  optional (the dynamo exporter's guard)
///     y = MatMul(p, V')        V' [B, H, Skv, Dv]
///
/// with one Attention node. Q', K' and V' may be reached from their
/// sources through Reshape, Transpose, Squeeze, Unsqueeze, Flatten and
/// multiplications or divisions by scalar constants (folded into the
/// scale). When every source is a 3-D [B, S, H * D] tensor whose heads the
/// chain splits off, and y's heads are merged back (Transpose, Reshape) into
/// [B, Sq, H * Dv] (or any shape with that element order), the node takes
/// the 3-D tensors and writes the merged one: the head split and merge
/// become strides of the kernel, not copies. Otherwise, when the sources
/// are 4-D [B, H, S, D] (K' their transpose), the node takes those.
///
/// What each chain does is proved with strides (strided_view.h), not
/// matched by spelling, so every exporter's order of Reshape and Transpose
/// is recognised. All dims along the chains must be static, the query and
/// key/value heads equal (grouped-query attention is left alone), and
/// every intermediate value read only inside the pattern (no other reader,
/// no graph output, no nested-graph capture); otherwise the nodes stay as
/// they are. The guard is folded: Attention's fully masked rows are zeros
/// already; a row whose scores hold NaN gives NaN rather than the guard's
/// zeros. The graph's opset import is not changed: ONNX export writes
/// Attention out again for models older than opset 23.
std::unique_ptr<Pass> createAttentionIdiomPass();

}  // namespace subgraph
