//===- subgraph/onnx/onnx_import.h - Reading ONNX models --------*- C++ -*-===//
//
// Turns an ONNX ModelProto into a subgraph Graph. ONNX files come from users
// and from the internet, so the importer treats every byte as hostile: every
// allocation is bounded by a limit in ImportOptions, every size in the file is
// checked against the data actually present, and external tensor data is only
// read from inside the model's own folder. Failures are one line naming the
// node, tensor, file or limit involved; bad input never crashes.
//
// What is kept: nodes (in file order) with all attribute kinds, including
// If/Loop/Scan subgraphs parsed into nested Graphs; initializers; Constant
// nodes (as nodes, not folded); graph inputs and outputs in order; value_info
// types; opset imports; static, symbolic (dim_param) and unknown dims.
// docs/onnx.md describes the mapping and the limits in full.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// How to read an ONNX model, and the resource limits that keep a hostile
/// file from exhausting memory. Each limit, when exceeded, fails the import
/// with a kLimitExceeded status naming the limit and its configured value.
struct ImportOptions {
  /// Largest model file (the .onnx itself, not its external data) accepted.
  /// Protobuf cannot parse messages over 2 GiB, so this is also the ceiling.
  uint64_t maxModelBytes = (uint64_t{2} << 30) - 1;
  /// Largest single tensor (initializer, tensor attribute or external-data
  /// blob), in bytes of decoded data.
  uint64_t maxTensorBytes = uint64_t{4} << 30;
  /// Largest sum of all initializer and tensor-attribute bytes in the model,
  /// nested subgraphs included.
  uint64_t maxTotalInitializerBytes = uint64_t{16} << 30;
  /// Most nodes in the model, counting nodes in nested subgraphs.
  uint64_t maxNodes = 1'000'000;
  /// Deepest nesting of subgraph attributes (If inside Loop inside ...). The
  /// main graph is depth 0.
  int maxSubgraphDepth = 32;
  /// Largest static dim accepted in any shape (tensor dims and value types).
  /// A dim above it is treated as hostile rather than as a real size.
  int64_t maxDimSize = int64_t{1} << 40;

  /// When false, a node whose (domain, op) has no schema in
  /// OpRegistry::global() fails the import with one line naming the op, its
  /// domain and opset version, and the node. When true such nodes are kept
  /// as schema-less nodes.
  bool allowUnknownOps = false;

  /// Fixes the dims of named graph inputs at load time, e.g.
  /// {"input", {1, 3, 224, 224}}; the rank must match a ranked input's
  /// declared rank. A name that is not a graph input is an error. When any
  /// shape is given, shape inference runs after import to propagate it.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Run shape inference after import even when inputShapes is empty.
  bool runShapeInference = false;

  /// Folder that external tensor data is resolved against and confined to.
  /// importOnnxFile() sets it to the model's own folder; for
  /// importOnnxBytes() an empty value means external data is refused.
  std::string externalDataDir;
  /// Name used for the model in error messages; importOnnxFile() uses the
  /// path when this is empty.
  std::string sourceName;
};

/// Reads the ONNX model at `path`. External data is confined to the folder
/// that holds `path`.
StatusOr<std::unique_ptr<Graph>> importOnnxFile(const std::string& path,
                                                const ImportOptions& options = {});

/// Reads an ONNX model from serialized ModelProto bytes.
StatusOr<std::unique_ptr<Graph>> importOnnxBytes(std::string_view bytes,
                                                 const ImportOptions& options = {});

/// Parses "NAME=1,3,224,224" (the CLI's --shape syntax) into an entry for
/// ImportOptions::inputShapes. Fails on an empty name, an empty or negative
/// dim, or anything that is not an integer.
StatusOr<std::pair<std::string, std::vector<int64_t>>> parseInputShapeSpec(std::string_view spec);

}  // namespace subgraph
