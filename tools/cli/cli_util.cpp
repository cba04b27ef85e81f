//===- tools/cli/cli_util.cpp - Helpers shared by `subgraph` commands -----===//
//
// Model loading, `--shape` parsing, output files and message cleanup for the
// CLI. Loading checks the file (exists, regular, non-empty, under the size
// limit, text where text is expected) before any parser sees it, so a wrong
// path or a binary file produces one clear line instead of a parse error
// deep inside the file or an attempt to read gigabytes.
//
//===----------------------------------------------------------------------===//
#include "cli_util.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <system_error>

#include "subgraph/ir/text_format.h"
#include "subgraph/ir/types.h"
#include "subgraph/ir/value.h"
#include "subgraph/passes/pass_manager.h"
#include "subgraph/support/file_io.h"

#ifdef SUBGRAPH_CLI_HAVE_ONNX
#include "subgraph/onnx/onnx_export.h"
#include "subgraph/onnx/onnx_import.h"
#endif
#ifdef SUBGRAPH_CLI_HAVE_API
#include "subgraph/api/inference_session.h"
#endif
#ifdef SUBGRAPH_CLI_HAVE_PLUGINS
#include "subgraph/plugins/plugin_loader.h"
#endif

namespace subgraph::cli {
namespace {

namespace fs = std::filesystem;

/// The name used for `path` in messages; stdin has no path of its own.
std::string displayPath(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::string lowerExtension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

/// Checks that `path` names an existing regular file and returns its size.
/// Run before anything else looks at the path, so that a typo or a
/// directory is reported as such rather than as an unknown format, and so
/// that a device such as /dev/zero is never read.
uint64_t statRegularFile(const std::string& path) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found)
    throw Error(StatusCode::kNotFound, fmt::format("{}: no such file", path));
  if (ec)
    throw Error(StatusCode::kNotFound, fmt::format("{}: cannot access: {}", path, ec.message()));
  if (fs::is_directory(status))
    throw Error(fmt::format("{}: is a directory, not a model file", path));
  if (!fs::is_regular_file(status))
    throw Error(fmt::format("{}: not a regular file (a device, pipe or socket)", path));
  uint64_t size = fs::file_size(path, ec);
  if (ec) throw Error(fmt::format("{}: cannot read its size: {}", path, ec.message()));
  return size;
}

/// Fails when a `size`-byte file is over `maxBytes`; `what` ("a text graph",
/// "an ONNX model") says which limit applies.
void checkSizeLimit(const std::string& path, uint64_t size, uint64_t maxBytes,
                    std::string_view what) {
  if (size > maxBytes)
    throw Error(StatusCode::kLimitExceeded,
                fmt::format("{}: file is {}, over the {} limit for {} (raise it with --limit "
                            "model-bytes=N)",
                            path, formatBytes(size), formatBytes(maxBytes), what));
}

/// Reads at most `maxBytes` bytes from `in`, failing if there is more. The
/// size reported by stat is not trusted (files in /proc report 0, and a
/// file may grow while we read), so the cap is enforced on what is read.
std::string readStreamCapped(std::istream& in, const std::string& name, uint64_t maxBytes) {
  std::string data;
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<char> buffer(kChunk);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    size_t got = static_cast<size_t>(in.gcount());
    if (data.size() + got > maxBytes)
      throw Error(StatusCode::kLimitExceeded,
                  fmt::format("{}: more than {}, the limit for a text graph (raise it with --limit "
                              "model-bytes=N)",
                              name, formatBytes(maxBytes)));
    data.append(buffer.data(), got);
  }
  if (in.bad()) throw Error(fmt::format("{}: read error: {}", name, std::strerror(errno)));
  return data;
}

std::unique_ptr<Graph> loadTextGraph(const std::string& path, const LoadOptions& options) {
  std::string name = displayPath(path);
  const CliLimits& limits = cliLimits();
  uint64_t maxBytes = options.maxTextBytes;
  if (limits.modelBytes) maxBytes = limits.modelBytes;
  std::string text = readFileCapped(path, maxBytes);
  if (text.empty()) throw Error(fmt::format("{}: file is empty; expected a text graph", name));
  // The text format never contains NUL, while every binary format (ONNX
  // included) does within its first bytes; naming that is clearer than
  // whatever token the parser would trip over.
  if (size_t nul = text.find('\0'); nul != std::string::npos)
    throw Error(fmt::format("{}: binary data at byte {}; not a text graph (.sg)", name, nul));
  ParseOptions parse;
  parse.sourceName = name;
  if (path != "-") {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    parse.externalDataDir = parent.empty() ? "." : parent.string();
  }
  if (limits.tensorBytes) parse.maxConstantBytes = limits.tensorBytes;
  if (limits.nodes) parse.maxNodes = limits.nodes;
  // The parser counts the main graph as level 1; `depth` counts the levels
  // of subgraphs below it, as the ONNX importer's maxSubgraphDepth does.
  if (limits.depth) parse.maxGraphDepth = static_cast<int>(limits.depth) + 1;
  auto parsed = parseGraph(text, parse);
  if (!parsed.isOk()) throw Error(parsed.status().code(), withLimitHint(parsed.status()));
  std::unique_ptr<Graph> graph = std::move(parsed).value();
  applyInputShapes(*graph, options.inputShapes);
  return graph;
}

#ifdef SUBGRAPH_CLI_HAVE_ONNX
std::unique_ptr<Graph> loadOnnxModel(const std::string& path, const LoadOptions& options) {
  const CliLimits& limits = cliLimits();
  uint64_t maxBytes = limits.modelBytes ? limits.modelBytes : options.maxOnnxBytes;
  uint64_t size = statRegularFile(path);
  checkSizeLimit(path, size, maxBytes, "an ONNX model");
  if (size == 0) throw Error(fmt::format("{}: file is empty; expected an ONNX model", path));
  ImportOptions importOptions;
  importOptions.maxModelBytes = maxBytes;
  if (limits.tensorBytes) importOptions.maxTensorBytes = limits.tensorBytes;
  if (limits.nodes) importOptions.maxNodes = limits.nodes;
  if (limits.depth) importOptions.maxSubgraphDepth = static_cast<int>(limits.depth);
  importOptions.allowUnknownOps = options.allowUnknownOps;
  importOptions.inputShapes = options.inputShapes;
  importOptions.sourceName = path;
  auto imported = importOnnxFile(path, importOptions);
  if (!imported.isOk()) throw Error(imported.status().code(), withLimitHint(imported.status()));
  return std::move(imported).value();
}
#endif

/// Parses one non-negative dim of a `--shape` value.
int64_t parseDim(std::string_view token, std::string_view spec) {
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  int64_t dim = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), dim);
  if (token.empty() || ec != std::errc() || end != token.data() + token.size() || dim < 0)
    throw UsageError(
        fmt::format("invalid --shape '{}': '{}' is not a non-negative integer (expected NAME=DIMS, "
                    "e.g. input=1,3,224,224)",
                    spec, token));
  return dim;
}

}  // namespace

CliLimits& cliLimits() {
  static CliLimits limits;
  return limits;
}

uint64_t defaultMemoryLimit() {
#ifdef SUBGRAPH_CLI_HAVE_API
  return api::defaultMemoryLimitBytes();  // the Python package's default too
#else
  return 0;  // nothing here runs a model
#endif
}

uint64_t memoryLimit() { return cliLimits().memory ? cliLimits().memory : defaultMemoryLimit(); }

void parseLimitSpecs(const std::vector<std::string>& specs) {
  struct LimitName {
    std::string_view name;
    uint64_t CliLimits::*field;
    uint64_t max;  ///< The largest value the layers below can honour.
  };
  static constexpr uint64_t kAny = std::numeric_limits<uint64_t>::max();
  static constexpr LimitName kNames[] = {{"model-bytes", &CliLimits::modelBytes, kAny},
                                         {"tensor-bytes", &CliLimits::tensorBytes, kAny},
                                         {"nodes", &CliLimits::nodes, kAny},
                                         {"depth", &CliLimits::depth, kMaxDepthLimit},
                                         {"memory", &CliLimits::memory, kAny},
                                         {"loop-iterations", &CliLimits::loopIterations, kAny},
                                         {"loop-seconds", &CliLimits::loopSeconds, kAny},
                                         {"kernel-work", &CliLimits::kernelWork, kAny}};
  auto known = [] {
    std::string names;
    for (const auto& [name, field, max] : kNames)
      names += (names.empty() ? "" : ", ") + std::string(name);
    return names;
  };
  CliLimits parsed;
  std::vector<std::string_view> seen;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos)
      throw UsageError(
          fmt::format("invalid --limit '{}': expected NAME=VALUE, e.g. nodes=100000 "
                      "(names: {})",
                      spec, known()));
    std::string_view name = std::string_view(spec).substr(0, eq);
    std::string_view value = std::string_view(spec).substr(eq + 1);
    uint64_t CliLimits::*field = nullptr;
    uint64_t max = kAny;
    for (const auto& [n, f, m] : kNames)
      if (n == name) field = f, max = m;
    if (!field)
      throw UsageError(
          fmt::format("invalid --limit '{}': unknown limit '{}' (names: {})", spec, name, known()));
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      throw UsageError(fmt::format("--limit {} is given twice", name));
    seen.push_back(name);
    uint64_t scale = 1;
    if (!value.empty()) {
      switch (value.back()) {
        case 'K':
        case 'k': scale = uint64_t{1} << 10; break;
        case 'M':
        case 'm': scale = uint64_t{1} << 20; break;
        case 'G':
        case 'g': scale = uint64_t{1} << 30; break;
        default: break;
      }
      if (scale != 1) value.remove_suffix(1);
    }
    uint64_t number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() || number == 0 ||
        number > std::numeric_limits<uint64_t>::max() / scale)
      throw UsageError(fmt::format(
          "invalid --limit '{}': the value must be a positive integer, optionally with a K, M or "
          "G suffix",
          spec));
    if (number * scale > max)
      throw UsageError(fmt::format("invalid --limit '{}': {} can be at most {}", spec, name, max));
    parsed.*field = number * scale;
  }
  cliLimits() = parsed;
}

std::string withLimitHint(const Status& status) {
  // Each layer names its own option or limit in its message; these are the
  // phrases, mapped to the CLI's name for the same limit.
  static constexpr std::pair<std::string_view, std::string_view> kPhrases[] = {
      {"maxNodes limit", "nodes"},
      {"more nodes than the limit", "nodes"},
      {"maxSubgraphDepth limit", "depth"},
      {"nested deeper than the limit", "depth"},
      {"maxModelBytes limit", "model-bytes"},
      {"maxTensorBytes limit", "tensor-bytes"},
      {"exceeds the limit of", "tensor-bytes"},
      {"over the memory limit", "memory"},
      {"loop iteration limit", "loop-iterations"},
      {"loop time limit", "loop-seconds"},
      {"kernel work limit", "kernel-work"},
  };
  const std::string& message = status.message();
  for (const auto& [phrase, name] : kPhrases)
    if (message.find(phrase) != std::string::npos)
      return fmt::format("{} (raise it with --limit {}=N)", message, name);
  return message;
}

ModelFormat modelFormatForPath(const std::string& path) {
  if (path == "-") return ModelFormat::kText;
  std::string ext = lowerExtension(path);
  if (ext == ".sg") return ModelFormat::kText;
  if (ext == ".onnx") return ModelFormat::kOnnx;
  // A name the command line chose: a usage mistake, before any work.
  throw UsageError(
      fmt::format("{}: unknown model format '{}'; expected a .sg text graph or an .onnx model",
                  path, ext.empty() ? "(no extension)" : ext));
}

bool onnxImportAvailable() {
#ifdef SUBGRAPH_CLI_HAVE_ONNX
  return true;
#else
  return false;
#endif
}

VerifyOptions cliVerifyOptions(bool allowUnknownOps) {
  VerifyOptions options;
  options.allowUnknownOps = allowUnknownOps;
  options.allowUnknownAttributes = true;
  return options;
}

std::unique_ptr<Graph> loadModel(const std::string& path, const LoadOptions& options) {
  if (path != "-") statRegularFile(path);
  std::unique_ptr<Graph> graph;
  switch (modelFormatForPath(path)) {
    case ModelFormat::kText: graph = loadTextGraph(path, options); break;
    case ModelFormat::kOnnx:
#ifdef SUBGRAPH_CLI_HAVE_ONNX
      graph = loadOnnxModel(path, options);
      break;
#else
      throw Error(StatusCode::kUnsupported,
                  fmt::format("{}: this subgraph was built without the ONNX importer; "
                              "convert the model to a .sg text graph",
                              path));
#endif
  }
  if (!graph) throw Error(StatusCode::kInternal, fmt::format("{}: unhandled model format", path));
  if (options.verify) {
    // Every command verifies before any pass, partition or kernel sees
    // the graph: a node missing a required input or with no outputs would
    // otherwise reach code that indexes them.
    Status verdict = verify(*graph, cliVerifyOptions(options.allowUnknownOps));
    if (!verdict.isOk())
      throw Error(verdict.code(),
                  fmt::format("{}: invalid graph: {}", displayPath(path), verdict.message()));
  }
  return graph;
}

void applyInputShapes(Graph& graph, const InputShapes& shapes) {
  for (const auto& [name, dims] : shapes) {
    Value* input = graph.findValue(name);
    if (input == nullptr || !input->isGraphInput()) {
      std::string inputs;
      for (const Value* v : graph.inputs()) inputs += (inputs.empty() ? "" : ", ") + v->name();
      throw Error(StatusCode::kNotFound,
                  fmt::format("--shape {}: graph '{}' has no input named '{}' (inputs: {})", name,
                              graph.name(), name, inputs.empty() ? "none" : inputs));
    }
    const TensorType& type = input->type();
    if (type.hasRank() && type.rank() != dims.size())
      throw Error(fmt::format("--shape {}: input '{}' has rank {}, but {} dims were given", name,
                              name, type.rank(), dims.size()));
    Shape shape(dims.begin(), dims.end());
    if (type.hasRank()) {
      for (size_t i = 0; i < dims.size(); ++i) {
        const Dim& old = (*type.shape)[i];
        if (old.isStatic() && old.size() != dims[i])
          throw Error(fmt::format("--shape {}: dim {} of input '{}' is {}, not {}", name, i, name,
                                  old.size(), dims[i]));
      }
    }
    input->setType(TensorType(type.dtype, std::move(shape)));
  }
}

std::string readFileCapped(const std::string& path, uint64_t maxBytes) {
  if (path == "-") return readStreamCapped(std::cin, displayPath(path), maxBytes);
  checkSizeLimit(path, statRegularFile(path), maxBytes, "a text graph");
  // Read through a descriptor checked to be a regular file: the path may
  // have become a FIFO or a device since the stat above.
  StatusOr<std::string> data = readRegularFile(path, maxBytes, "text graph");
  if (!data.isOk()) throw Error(data.status().code(), withLimitHint(data.status()));
  return std::move(data).value();
}

std::pair<std::string, std::vector<int64_t>> parseShapeSpec(std::string_view spec) {
  size_t eq = spec.rfind('=');
  if (eq == std::string_view::npos || eq == 0)
    throw UsageError(
        fmt::format("invalid --shape '{}': expected NAME=DIMS, e.g. input=1,3,224,224", spec));
  std::string name(spec.substr(0, eq));
  std::string_view rest = spec.substr(eq + 1);
  std::vector<int64_t> dims;
  if (rest.empty()) return {name, dims};  // A scalar input.
  // Both "1,3,224,224" and "1x3x224x224" are common spellings; accept
  // either, but one per value so that "1x3,224" is not silently read.
  char separator = rest.find(',') != std::string_view::npos ? ',' : 'x';
  while (true) {
    size_t next = rest.find(separator);
    dims.push_back(parseDim(rest.substr(0, next), spec));
    if (next == std::string_view::npos) break;
    rest.remove_prefix(next + 1);
  }
  return {name, dims};
}

InputShapes parseShapeSpecs(const std::vector<std::string>& specs) {
  InputShapes shapes;
  for (const std::string& spec : specs) {
    auto [name, dims] = parseShapeSpec(spec);
    if (!shapes.emplace(name, std::move(dims)).second)
      throw UsageError(fmt::format("--shape gives input '{}' twice", name));
  }
  return shapes;
}

CLI::Option* addShapeOption(CLI::App& command, std::vector<std::string>& specs) {
  return command
      .add_option("--shape", specs,
                  "Fix the shape of a graph input, e.g. --shape input=1,3,224,224 "
                  "(repeatable; replaces symbolic dims)")
      ->type_name("NAME=DIMS")
      ->take_all();
}

CLI::Option* addPassesOption(CLI::App& command, std::string& spec) {
  return command
      .add_option(
          "--passes", spec,
          "Passes run before partitioning: 'default' (Constant->initializer, f16/bf16 "
          "compute in f32, Identity removal, constant folding, exporters' idioms as "
          "single ops (clamp, hard-swish, layer norm, GELU, attention), DCE), a comma list of "
          "pass names, "
          "or 'none'")
      ->type_name("SPEC")
      ->default_val("default")
      // Checked while parsing the command line, so that a misspelt pass
      // fails before a large model is read.
      ->check([](const std::string& value) -> std::string {
        if (value == "none") return "";
        StatusOr<PassManager> pipeline = parsePassPipeline(value);
        return pipeline.isOk() ? "" : pipeline.status().message();
      });
}

void simplifyBeforePartition(Graph& graph, const std::string& spec) {
  if (spec == "none") return;
  StatusOr<PassManager> pipeline =
      parsePassPipeline(spec, PassManagerOptions{.runToFixedPoint = true});
  if (!pipeline.isOk()) throw UsageError("--passes: " + pipeline.status().message());
  StatusOr<PipelineReport> ran = pipeline.value().run(graph);
  if (!ran.isOk()) throw Error(ran.status());
  if (ran.value().changed())
    spdlog::info("passes before partitioning: nodes {} -> {} in {:.2f} ms",
                 ran.value().nodesBefore(), ran.value().nodesAfter(),
                 ran.value().totalMilliseconds());
  else
    spdlog::debug("passes before partitioning changed nothing, in {:.2f} ms",
                  ran.value().totalMilliseconds());
  spdlog::trace("passes before partitioning:\n{}", ran.value().toString());
}

void writeOutput(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw Error(fmt::format("<stdout>: write failed: {}", std::strerror(errno)));
    return;
  }
  // A new file renamed over the target: a failed write (a full disk)
  // leaves the old file, which may be this command's own input, intact.
  throwIfError(writeFileAtomically(path, write));
}

void writeTextModel(const Graph& graph, const std::string& path, bool inlineConstants) {
  if (path == "-") {
    writeOutput(path, [&](std::ostream& os) { printGraph(graph, os); });
    return;
  }
  throwIfError(writeGraphFile(graph, path, inlineConstants));
}

void writeModelFile(const Graph& graph, const std::string& path, bool inlineConstants) {
  if (modelFormatForPath(path) == ModelFormat::kText) {
    writeTextModel(graph, path, inlineConstants);
    return;
  }
#ifdef SUBGRAPH_CLI_HAVE_ONNX
  throwIfError(exportOnnxFile(graph, path));
#else
  throw Error(StatusCode::kUnsupported,
              path + ": this subgraph was built without ONNX export; write a .sg text graph");
#endif
}

std::string oneLine(std::string_view message) {
  std::string line;
  line.reserve(message.size());
  for (size_t i = 0; i < message.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(message[i]);
    if (c == '\r' && i + 1 < message.size() && message[i + 1] == '\n') continue;
    if (c == '\n' || c == '\r') {
      if (i + 1 < message.size()) line += "; ";
    } else if (c == '\t') {
      line += ' ';
    } else if (c < 0x20 || c == 0x7f) {
      line += '?';
    } else {
      line += static_cast<char>(c);
    }
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == ';')) line.pop_back();
  return line;
}

std::string formatBytes(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

void warnAboutDroppedPluginDirs() {
#ifdef SUBGRAPH_CLI_HAVE_PLUGINS
  static bool warned = false;
  if (warned) return;
  warned = true;
  for (const std::string& line : plugins::resolvePluginSearchPath().dropped)
    spdlog::warn("{}", oneLine(line));
#endif
}

void throwSelectionError(std::string_view list, const Status& status) {
  bool usage = status.code() == StatusCode::kNotFound;
#ifdef SUBGRAPH_CLI_HAVE_PLUGINS
  usage = usage || !plugins::checkBackendList(list).isOk();
#else
  (void)list;
#endif
  if (usage) throw UsageError(status.message());
  throw Error(status);
}

}  // namespace subgraph::cli
