//===- api/model_file.cpp - Reading and writing model files ---------------===//
//
// See subgraph/api/model.h. A path is checked before anything reads it, so
// that a typo or a folder is reported as such rather than as an unknown
// format, and a device such as /dev/zero is never read; then the format by
// extension, the reader with its limits, the input shapes and the verifier.
//
//===----------------------------------------------------------------------===//
#include "subgraph/api/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "subgraph/ir/text_format.h"
#include "subgraph/support/bytes.h"
#include "subgraph/support/file_io.h"

#ifdef SUBGRAPH_API_HAVE_ONNX
#include "subgraph/onnx/onnx_export.h"
#include "subgraph/onnx/onnx_import.h"
#endif

namespace subgraph::api {
namespace {

namespace fs = std::filesystem;

// The name of `path` in messages; standard input has none of its own.
std::string displayPath(const std::string& path) { return path == "-" ? "<stdin>" : path; }

// The size of the regular file at `path`, or why it is none.
StatusOr<uint64_t> regularFileSize(const std::string& path) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found)
    return Status(StatusCode::kIo, path + ": no such file");
  if (ec) return Status(StatusCode::kIo, path + ": cannot access: " + ec.message());
  if (fs::is_directory(status))
    return Status(StatusCode::kIo, path + ": is a directory, not a model file");
  if (!fs::is_regular_file(status))
    return Status::invalid(path + ": not a regular file (a device, pipe or socket)");
  uint64_t size = fs::file_size(path, ec);
  if (ec) return Status(StatusCode::kIo, path + ": cannot read its size: " + ec.message());
  return size;
}

Status overLimit(const std::string& name, const std::string& size, uint64_t limit,
                 const char* what) {
  return Status(StatusCode::kLimitExceeded,
                fmt::format("{}: {}, over the {} limit for {} (ModelLimits::modelBytes)", name,
                            size, formatBytes(limit), what));
}

// Standard input, at most `maxBytes` (the cap is on what is read).
StatusOr<std::string> readStdin(uint64_t maxBytes) {
  std::string data;
  std::vector<char> buffer(size_t{1} << 20);
  while (std::cin) {
    std::cin.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    size_t got = static_cast<size_t>(std::cin.gcount());
    if (data.size() + got > maxBytes)
      return overLimit("<stdin>", "more bytes", maxBytes, "a text graph");
    data.append(buffer.data(), got);
  }
  if (std::cin.bad())
    return Status(StatusCode::kIo, std::string("<stdin>: read error: ") + std::strerror(errno));
  return data;
}

StatusOr<std::unique_ptr<Graph>> parseText(std::string_view text, const std::string& name,
                                           const std::string& externalDataDir,
                                           const ModelOptions& options) {
  if (text.empty()) return Status::invalid(name + ": file is empty; expected a text graph");
  // The text format never contains NUL, while every binary format (ONNX
  // included) does within its first bytes; naming that is clearer than
  // whatever token the parser would trip over.
  if (size_t nul = text.find('\0'); nul != std::string_view::npos)
    return Status::invalid(
        fmt::format("{}: binary data at byte {}; not a text graph (.sg)", name, nul));
  ParseOptions parse;
  parse.sourceName = name;
  parse.externalDataDir = externalDataDir;  // empty: external data is refused
  const ModelLimits& limits = options.limits;
  if (limits.tensorBytes) parse.maxConstantBytes = limits.tensorBytes;
  if (limits.nodes) parse.maxNodes = limits.nodes;
  // The parser counts the main graph as level 1; `depth` counts the levels
  // below it, as the ONNX importer's maxSubgraphDepth does.
  if (limits.depth) parse.maxGraphDepth = static_cast<int>(limits.depth) + 1;
  StatusOr<std::unique_ptr<Graph>> g = parseGraph(text, parse);
  if (!g.isOk()) return g.status();
  SUBGRAPH_RETURN_IF_ERROR(applyInputShapes(*g.value(), options.inputShapes));
  return g;
}

// A text graph of at most `maxBytes` (the file's size checked already).
StatusOr<std::unique_ptr<Graph>> readTextFile(const std::string& path, uint64_t maxBytes,
                                              const ModelOptions& options) {
  if (path == "-") {
    StatusOr<std::string> text = readStdin(maxBytes);
    if (!text.isOk()) return text.status();
    return parseText(*text, "<stdin>", "", options);
  }
  // Read through a descriptor checked to be a regular file: the path may
  // have become a FIFO or a device since the check above.
  StatusOr<std::string> text = readRegularFile(path, maxBytes, "text graph");
  if (!text.isOk()) return text.status();
  fs::path parent = fs::path(path).parent_path();
  return parseText(*text, path, parent.empty() ? "." : parent.string(), options);
}

// An ONNX model of `size` bytes, at most `maxBytes` (checked already).
StatusOr<std::unique_ptr<Graph>> readOnnxFile(const std::string& path, uint64_t size,
                                              uint64_t maxBytes, const ModelOptions& options) {
#ifdef SUBGRAPH_API_HAVE_ONNX
  const ModelLimits& limits = options.limits;
  if (size == 0) return Status::invalid(path + ": file is empty; expected an ONNX model");
  ImportOptions import;
  import.maxModelBytes = maxBytes;
  if (limits.tensorBytes) import.maxTensorBytes = limits.tensorBytes;
  if (limits.nodes) import.maxNodes = limits.nodes;
  if (limits.depth) import.maxSubgraphDepth = static_cast<int>(limits.depth);
  import.allowUnknownOps = options.allowUnknownOps;
  import.inputShapes = options.inputShapes;
  import.sourceName = path;
  return importOnnxFile(path, import);
#else
  (void)size, (void)maxBytes, (void)options;
  return Status::error(StatusCode::kUnsupported,
                       path +
                           ": this subgraph was built without the ONNX importer; convert "
                           "the model to a .sg text graph");
#endif
}

// `graph` verified, or why it is not a valid model; `source` names it.
StatusOr<std::unique_ptr<Graph>> verified(StatusOr<std::unique_ptr<Graph>> graph,
                                          const std::string& source, const ModelOptions& options) {
  if (!graph.isOk() || !options.verify) return graph;
  if (Status verdict = verify(*graph.value(), modelVerifyOptions(options.allowUnknownOps));
      !verdict.isOk())
    return Status(verdict.code(), source + ": invalid graph: " + verdict.message());
  return graph;
}

// True when `bytes` begin, after blank space and '#' comments, with the
// word `graph`: a text graph. No serialized ModelProto starts that way (its
// first byte is a field tag, and none of those bytes is a valid tag there).
bool looksLikeTextGraph(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    char c = bytes[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '#') {
      size_t eol = bytes.find('\n', i);
      i = eol == std::string_view::npos ? bytes.size() : eol + 1;
    } else {
      break;
    }
  }
  return bytes.substr(i).starts_with("graph");
}

}  // namespace

std::string modelFileExtension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

VerifyOptions modelVerifyOptions(bool allowUnknownOps) {
  VerifyOptions options;
  options.allowUnknownOps = allowUnknownOps;
  options.allowUnknownAttributes = true;
  return options;
}

Status applyInputShapes(Graph& graph, const InputShapes& shapes) {
  for (const auto& [name, dims] : shapes) {
    Value* input = graph.findValue(name);
    if (!input || !input->isGraphInput()) {
      std::string inputs;
      for (const Value* v : graph.inputs()) inputs += (inputs.empty() ? "" : ", ") + v->name();
      return Status::error(StatusCode::kNotFound,
                           fmt::format("graph '{}' has no input named '{}' (inputs: {})",
                                       graph.name(), name, inputs.empty() ? "none" : inputs));
    }
    const TensorType& type = input->type();
    if (type.hasRank() && type.rank() != dims.size())
      return Status::invalid(fmt::format("input '{}' has rank {}, but {} dims were given", name,
                                         type.rank(), dims.size()));
    for (size_t i = 0; type.hasRank() && i < dims.size(); ++i)
      if (const Dim& old = (*type.shape)[i]; old.isStatic() && old.size() != dims[i])
        return Status::invalid(
            fmt::format("dim {} of input '{}' is {}, not {}", i, name, old.size(), dims[i]));
    input->setType(TensorType(type.dtype, Shape(dims.begin(), dims.end())));
  }
  return Status::ok();
}

StatusOr<std::unique_ptr<Graph>> loadModel(const std::string& path, const ModelOptions& options) {
  // A missing file or a folder is named as such before its extension is.
  uint64_t size = 0;
  if (path != "-") {
    StatusOr<uint64_t> found = regularFileSize(path);
    if (!found.isOk()) return found.status();
    size = *found;
  }
  const std::string ext = path == "-" ? ".sg" : modelFileExtension(path);
  if (ext != ".sg" && ext != ".onnx")
    return Status(StatusCode::kUsage,
                  fmt::format("{}: unknown model format '{}'; expected a .sg text graph or an "
                              ".onnx model",
                              path, ext.empty() ? "(no extension)" : ext));
  const bool text = ext == ".sg";
  const uint64_t maxBytes = options.limits.modelBytes ? options.limits.modelBytes
                            : text                    ? kMaxTextModelBytes
                                                      : kMaxOnnxModelBytes;
  if (size > maxBytes)
    return overLimit(path, "file is " + formatBytes(size), maxBytes,
                     text ? "a text graph" : "an ONNX model");
  StatusOr<std::unique_ptr<Graph>> graph =
      text ? readTextFile(path, maxBytes, options) : readOnnxFile(path, size, maxBytes, options);
  return verified(std::move(graph), displayPath(path), options);
}

StatusOr<std::unique_ptr<Graph>> loadModelBytes(std::string_view bytes, const ModelOptions& options,
                                                const std::string& sourceName) {
  if (bytes.empty()) return Status::invalid(sourceName + ": no bytes; not a model");
  const uint64_t limit = options.limits.modelBytes;
  if (looksLikeTextGraph(bytes)) {
    const uint64_t maxBytes = limit ? limit : kMaxTextModelBytes;
    if (bytes.size() > maxBytes)
      return overLimit(sourceName, formatBytes(bytes.size()), maxBytes, "a text graph");
    return verified(parseText(bytes, sourceName, "", options), sourceName, options);
  }
#ifdef SUBGRAPH_API_HAVE_ONNX
  ImportOptions import;
  import.maxModelBytes = limit ? limit : kMaxOnnxModelBytes;
  if (options.limits.tensorBytes) import.maxTensorBytes = options.limits.tensorBytes;
  if (options.limits.nodes) import.maxNodes = options.limits.nodes;
  if (options.limits.depth) import.maxSubgraphDepth = static_cast<int>(options.limits.depth);
  import.allowUnknownOps = options.allowUnknownOps;
  import.inputShapes = options.inputShapes;
  import.sourceName = sourceName;  // externalDataDir empty: external data is refused
  return verified(importOnnxBytes(bytes, import), sourceName, options);
#else
  return Status::error(StatusCode::kUnsupported,
                       sourceName + ": this subgraph was built without the ONNX importer");
#endif
}

Status saveModel(const Graph& graph, const std::string& path, bool inlineConstants) {
  const std::string ext = modelFileExtension(path);
  if (ext == ".onnx") {
#ifdef SUBGRAPH_API_HAVE_ONNX
    return exportOnnxFile(graph, path);
#else
    return Status::error(StatusCode::kUnsupported,
                         path +
                             ": this subgraph was built without ONNX export; write a .sg "
                             "text graph");
#endif
  }
  if (ext != ".sg")
    return Status(StatusCode::kUsage, path + ": unknown model format '" +
                                          (ext.empty() ? "(no extension)" : ext) +
                                          "'; expected a .sg text graph or an .onnx model");
  return writeGraphFile(graph, path, inlineConstants);
}

}  // namespace subgraph::api
