//===- subgraph/api/model.h - Reading and writing model files -*- C++ -*-===//
//
// The one model reader of every front end (the program's commands, the
// Python package, InferenceSession::open): the file checked before it is
// read, the format by extension, the importers' resource limits, input
// shapes fixed, and the model verified. Errors are one line naming the
// file, with a kind the front ends map to exit codes and exceptions.
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
#include "subgraph/ir/verifier.h"
#include "subgraph/support/status.h"

namespace subgraph::api {

/// Static sizes for graph inputs by name (replacing symbolic dims).
using InputShapes = std::map<std::string, std::vector<int64_t>>;

/// Largest text graph read by default. Text graphs with every constant
/// spelled out reach a few hundred MiB for the biggest zoo models; anything
/// beyond this is a mistake and would only exhaust memory while parsing.
inline constexpr uint64_t kMaxTextModelBytes = uint64_t{1} << 30;
/// Largest ONNX file read by default: protobuf cannot parse a single
/// message over 2 GiB, so a larger file fails anyway, only later and less
/// clearly.
inline constexpr uint64_t kMaxOnnxModelBytes = (uint64_t{2} << 30) - 1;

/// Resource limits for reading a model; 0 keeps each reader's default.
/// A limit hit fails with kLimitExceeded and a message naming the field.
struct ModelLimits {
  /// The file's size (kMaxTextModelBytes or kMaxOnnxModelBytes).
  uint64_t modelBytes = 0;
  /// One constant tensor's bytes.
  uint64_t tensorBytes = 0;
  /// Nodes in the model, nested graphs included.
  uint64_t nodes = 0;
  /// Levels of nested graphs below the main graph.
  uint64_t depth = 0;
};

/// How a model file is read.
struct ModelOptions {
  /// Fixed input shapes; ONNX files hand them to the importer.
  InputShapes inputShapes;
  /// Keep ops without a schema instead of failing.
  bool allowUnknownOps = false;
  /// Verify the model (modelVerifyOptions()) before returning it, so that
  /// no pass, partitioner or kernel sees a malformed one. Off only for a
  /// tool that reports the verdict itself.
  bool verify = true;
  /// Resource limits; the readers' defaults where 0.
  ModelLimits limits;
};

/// The extension of `path`, lower case (".onnx", ".sg"; "" for none): what
/// loadModel and saveModel choose the format by.
std::string modelFileExtension(const std::string& path);

/// The verifier's options every front end loads with, so that the program's
/// commands and the Python package accept the same models: unknown
/// attributes allowed (older opsets carry attributes the schemas do not
/// model), unknown ops only when `allowUnknownOps`.
VerifyOptions modelVerifyOptions(bool allowUnknownOps);

/// Fixes the dims of the named graph inputs: a size fills in a symbolic or
/// unknown dim, never changes a static one (kInvalidArgument); an unknown
/// name is kNotFound, with the graph's inputs listed.
Status applyInputShapes(Graph& graph, const InputShapes& shapes);

/// Reads a model and verifies it: `path` is a `.onnx` or `.sg` file (by
/// extension; another is kUsage), or "-" for a text graph on standard
/// input. The file is read as hostile input: a regular file only (never a
/// FIFO or a device, also through a symlink), within `options.limits`.
/// One-line errors name the file; a file that is missing or cannot be read
/// is kIo.
StatusOr<std::unique_ptr<Graph>> loadModel(const std::string& path,
                                           const ModelOptions& options = {});

/// Reads a model from memory (ONNX Runtime's InferenceSession takes bytes
/// too): a serialized ONNX ModelProto, or a text graph (bytes that begin,
/// after blank space and comments, with `graph`), then verifies it. No
/// external data: a model that refers to any fails. Errors name
/// `sourceName`.
StatusOr<std::unique_ptr<Graph>> loadModelBytes(std::string_view bytes,
                                                const ModelOptions& options = {},
                                                const std::string& sourceName = "<bytes>");

/// Writes `graph` (a partitioned one too) as an ONNX model (.onnx) or a
/// text graph (.sg, with its constants of 1 KiB and more in `path`.data
/// unless `inlineConstants`). Both files of a text graph are replaced
/// together or not at all.
Status saveModel(const Graph& graph, const std::string& path, bool inlineConstants = false);

}  // namespace subgraph::api
