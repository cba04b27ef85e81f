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

#include "subgraph/api/inference_session.h"
#include "subgraph/plugins/plugin_loader.h"

namespace subgraph::cli {
namespace {

namespace fs = std::filesystem;

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
  return api::defaultMemoryLimitBytes();  // the Python package's default too
}

uint64_t memoryLimit() { return cliLimits().memory ? cliLimits().memory : defaultMemoryLimit(); }

std::optional<uint64_t> parseByteCount(std::string_view value) {
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
    return std::nullopt;
  return number * scale;
}

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
    std::optional<uint64_t> number = parseByteCount(value);
    if (!number)
      throw UsageError(fmt::format(
          "invalid --limit '{}': the value must be a positive integer, optionally with a K, M or "
          "G suffix",
          spec));
    if (*number > max)
      throw UsageError(fmt::format("invalid --limit '{}': {} can be at most {}", spec, name, max));
    parsed.*field = *number;
  }
  cliLimits() = parsed;
}

std::vector<std::string> splitCommas(std::string_view list) {
  std::vector<std::string> items;
  for (size_t start = 0; !list.empty() && start <= list.size();) {
    size_t comma = list.find(',', start);
    items.emplace_back(list.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

std::vector<api::StageDevice> parseStageDevices(size_t stages, const std::string& deviceList,
                                                const std::string& memoryLimits) {
  std::vector<std::string> names = splitCommas(deviceList);
  for (const std::string& name : names)
    if (name.empty()) throw UsageError("--devices '" + deviceList + "' has an empty name");
  if (stages && !names.empty() && names.size() != stages)
    throw UsageError(
        fmt::format("--stages {} but --devices names {} devices", stages, names.size()));
  for (size_t k = names.size(); k < stages; ++k) names.push_back("dev:" + std::to_string(k));
  if (names.empty() && !memoryLimits.empty())
    throw UsageError("--memory-limit needs --stages or --devices");
  std::vector<uint64_t> limits;
  for (const std::string& value : splitCommas(memoryLimits)) {
    std::optional<uint64_t> bytes = parseByteCount(value);
    if (!bytes)
      throw UsageError("--memory-limit '" + value +
                       "': a positive number of bytes, optionally with a K, M or G suffix");
    limits.push_back(*bytes);
  }
  StatusOr<std::vector<api::StageDevice>> devices =
      api::stageDevices(names, limits, "--memory-limit");
  if (!devices.isOk()) throw Error(devices.status());
  return std::move(devices).value();
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
      {"ModelLimits::modelBytes", "model-bytes"},
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
  std::string ext = api::modelFileExtension(path);
  if (ext == ".sg") return ModelFormat::kText;
  if (ext == ".onnx") return ModelFormat::kOnnx;
  // A name the command line chose: a usage mistake, before any work.
  throw UsageError(
      fmt::format("{}: unknown model format '{}'; expected a .sg text graph or an .onnx model",
                  path, ext.empty() ? "(no extension)" : ext));
}

VerifyOptions cliVerifyOptions(bool allowUnknownOps) {
  return api::modelVerifyOptions(allowUnknownOps);
}

std::unique_ptr<Graph> loadModel(const std::string& path, const LoadOptions& options) {
  api::ModelOptions model;
  model.inputShapes = options.inputShapes;
  model.allowUnknownOps = options.allowUnknownOps;
  model.verify = options.verify;
  const CliLimits& limits = cliLimits();
  model.limits = {limits.modelBytes, limits.tensorBytes, limits.nodes, limits.depth};
  StatusOr<std::unique_ptr<Graph>> graph = api::loadModel(path, model);
  if (!graph.isOk()) throw Error(graph.status().code(), withLimitHint(graph.status()));
  return std::move(graph).value();
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
  modelFormatForPath(path);  // an unknown extension is a usage error, before any work
  throwIfError(api::saveModel(graph, path, inlineConstants));
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

void warnAboutDroppedPluginDirs() {
  static bool warned = false;
  if (warned) return;
  warned = true;
  for (const std::string& line : plugins::resolvePluginSearchPath().dropped)
    spdlog::warn("{}", oneLine(line));
}

void throwSelectionError(std::string_view list, const Status& status) {
  bool usage = status.code() == StatusCode::kNotFound;
  usage = usage || !plugins::checkBackendList(list).isOk();
  if (usage) throw UsageError(status.message());
  throw Error(status);
}

}  // namespace subgraph::cli
