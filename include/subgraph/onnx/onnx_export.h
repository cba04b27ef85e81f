//===- subgraph/onnx/onnx_export.h - Writing ONNX models --------*- C++ -*-===//
//
// Turns a subgraph Graph into an ONNX ModelProto that ONNX Runtime and the
// ONNX checker accept: ir_version 8, the graph's opset imports (default
// ai.onnx 17), value_info for every typed intermediate value, initializers
// as raw_data, nested subgraph attributes as GraphProtos.
//
// Fused regions survive export whole. By convention with the partitioner, a
// node whose op domain starts with "subgraph." and that carries a graph
// attribute named "body" becomes a call to an ONNX local function: the body
// is written once as a FunctionProto in ModelProto.functions (in the node's
// domain, which is also added to the opset imports), its graph inputs and
// outputs become the function's inputs and outputs, its initializers become
// Constant nodes inside the function, and the node's other attributes are
// kept on the call node.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

#include "subgraph/ir/graph.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// How to write an ONNX model.
struct ExportOptions {
  /// ModelProto.ir_version. 8 is what ONNX 1.10+ and ONNX Runtime 1.10+ read.
  int64_t irVersion = 8;
  /// ai.onnx opset written when the graph imports none.
  int64_t defaultOpset = 17;
  /// ModelProto.producer_name.
  std::string producerName = "subgraph";
  /// Write value_info for intermediate values whose type is known.
  bool writeValueInfo = true;
  /// Write fused "subgraph.*" nodes with a "body" attribute as local
  /// function calls. When false they are written as plain nodes of a custom
  /// domain with the body kept as a graph attribute.
  bool fusedRegionsAsFunctions = true;
};

/// Serializes `graph` as an ONNX model and writes it to `path`. The file is
/// written only if serialization succeeds.
Status exportOnnxFile(const Graph& graph, const std::string& path,
                      const ExportOptions& options = {});

/// Serializes `graph` as ONNX ModelProto bytes.
StatusOr<std::string> exportOnnxBytes(const Graph& graph, const ExportOptions& options = {});

}  // namespace subgraph
