//===- subgraph/passes/opset_lowering.h - Newer ops for older opsets -*- C++ -*-===//
//
// The idiom passes write ops newer than a model's opset (Attention, opset
// 23, into a BERT exported at opset 14; Gelu, opset 20): subgraph's IR
// holds every op whatever the graph imports, but an ONNX file must not. ONNX
// export therefore writes such ops out again as the ops of the graph's own
// opset, the same computation the exporter had spelled out.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

#include "subgraph/ir/graph.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// True when `graph`, or a graph one of its nodes holds (If branches, Loop
/// bodies, fused region bodies), has a default-domain Attention or Gelu
/// node and `opset` is older than the op.
bool hasOpsNewerThan(const Graph& graph, int64_t opset);

/// Rewrites each Attention (opset 23) and Gelu (opset 20) newer than
/// `opset` into ops every opset from 13 has, in `graph` and, through
/// copies, in the graphs its nodes hold:
///
///  * Gelu(x) becomes x * 0.5 * (1 + Erf(x / sqrt 2)), or the tanh form;
///  * Attention becomes Reshape and Transpose to split the heads (3-D
///    inputs), MatMul, Mul by the scale, the mask (a float mask added, a
///    bool one through Where with -inf), Softmax, Where(IsNaN(p), 0, p) so
///    that fully masked rows stay zeros, MatMul and the head merge.
///
/// Attention with is_causal, past keys, a softcap, extra outputs, grouped
/// heads or 3-D inputs of unknown hidden size has no such spelling here
/// and is an error naming the node.
Status lowerOpsNewerThan(Graph& graph, int64_t opset);

}  // namespace subgraph
