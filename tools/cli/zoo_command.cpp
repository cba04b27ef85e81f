//===- tools/cli/zoo_command.cpp - `subgraph zoo` -------------------------===//
//
// Writes a zoo model (subgraph/zoo/zoo.h) with seeded random weights to a
// file: ONNX for `.onnx`, the text format for `.sg` or `-` (stdout). Named
// models are shape-inferred before writing, so the file carries the type of
// every intermediate value; synthetic graphs are typed as they are built.
// Progress goes to stderr; the last line is a one-line summary (on stdout,
// or stderr when the model itself goes to stdout).
//
//===----------------------------------------------------------------------===//
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli_util.h"
#include "command.h"
#include "subgraph/ir/shape_inference.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/zoo/zoo.h"

namespace subgraph::cli {
namespace {

struct ZooCommandOptions {
  std::string model;
  std::string output;
  bool list = false;
  int64_t batch = 1;
  uint64_t seed = 0;
  bool noInfer = false;
  // synthetic only
  int64_t nodes = 0;
  double unsupportedFraction = 0.0;
  std::string shape = "residual";
};

using Clock = std::chrono::steady_clock;

void printModelList() {
  for (const zoo::ModelInfo& m : zoo::listModels())
    std::cout << fmt::format("{:<12} {}\n", m.name, m.description);
}

void logBuilding(const ZooCommandOptions& options) {
  spdlog::info("building {} (batch {}, seed {})", options.model,
               options.batch == 0 ? std::string("N") : std::to_string(options.batch), options.seed);
}

// Checks the options for the model, then builds it.
std::unique_ptr<Graph> buildRequested(const ZooCommandOptions& options, CLI::App& cmd) {
  zoo::ModelOptions model{options.batch, options.seed};
  if (options.model == "synthetic") {
    if (cmd.count("--nodes") == 0) throw UsageError("zoo synthetic: --nodes N is required");
    StatusOr<zoo::SyntheticShape> shape = zoo::parseSyntheticShape(options.shape);
    if (!shape) throw UsageError("zoo synthetic: --shape: " + shape.status().message());
    zoo::SyntheticOptions synthetic;
    synthetic.nodes = options.nodes;
    synthetic.unsupportedFraction = options.unsupportedFraction;
    synthetic.shape = *shape;
    synthetic.model = model;
    logBuilding(options);
    StatusOr<std::unique_ptr<Graph>> graph = zoo::buildSynthetic(synthetic);
    if (!graph) throw UsageError(graph.status().message());
    return std::move(graph).value();
  }
  for (const char* flag : {"--nodes", "--unsupported-fraction", "--shape"})
    if (cmd.count(flag) != 0)
      throw UsageError(
          fmt::format("zoo {}: {} applies to the synthetic model only", options.model, flag));
  bool known = false;
  for (const zoo::ModelInfo& m : zoo::listModels()) known = known || m.name == options.model;
  if (known) logBuilding(options);
  StatusOr<std::unique_ptr<Graph>> graph = zoo::buildModel(options.model, model);
  if (!graph) throw UsageError(graph.status().message());
  return std::move(graph).value();
}

int64_t parameterCount(const Graph& graph) {
  int64_t count = 0;
  for (const Value* v : graph.initializers()) count += v->initializer()->numElements();
  return count;
}

void runZoo(const ZooCommandOptions& options, CLI::App& cmd) {
  if (options.list) {
    printModelList();
    return;
  }
  if (options.model.empty()) throw UsageError("zoo: give a model name, or --list");
  if (options.output.empty()) throw UsageError("zoo: -o FILE (.onnx, .sg, or - for stdout)");
  if (options.batch < 0) throw UsageError("zoo: --batch must be >= 0 (0: symbolic batch N)");
  modelFormatForPath(options.output);  // reject a bad extension before building

  auto start = Clock::now();
  std::unique_ptr<Graph> graph = buildRequested(options, cmd);
  double buildSeconds = secondsSince(start);
  spdlog::info("built {} nodes in {:.2f} s", graph->numNodes(), buildSeconds);

  if (options.model != "synthetic" && !options.noInfer) {
    auto inferStart = Clock::now();
    Status inferred = inferShapes(*graph);
    if (!inferred.isOk())
      throw Error(inferred.code(),
                  "zoo " + options.model + ": shape inference: " + inferred.message());
    spdlog::info("inferred shapes in {:.2f} s", secondsSince(inferStart));
  }

  auto writeStart = Clock::now();
  spdlog::info("writing {}", options.output);
  writeModelFile(*graph, options.output);
  double writeSeconds = secondsSince(writeStart);

  std::string size;
  if (options.output != "-") {
    std::error_code ec;
    uintmax_t bytes = std::filesystem::file_size(options.output, ec);
    size = ec ? "size unknown" : formatBytes(bytes);
  }
  int64_t params = parameterCount(*graph);
  std::string destination = options.output == "-"
                                ? "written to stdout"
                                : fmt::format("wrote {} ({})", options.output, size);
  // Synthetic graphs share a few hundred parameters; "0.00M" would hide them.
  std::string paramText = params >= 100'000
                              ? fmt::format("{:.2f}M", static_cast<double>(params) / 1e6)
                              : std::to_string(params);
  std::string summary = fmt::format(
      "{}: {} nodes, {} params, {} in {:.2f} s (build {:.2f} s, write {:.2f} s)", options.model,
      graph->numNodes(), paramText, destination, secondsSince(start), buildSeconds, writeSeconds);
  // Stdout belongs to the model when it is written there.
  (options.output == "-" ? std::cerr : std::cout) << summary << std::endl;
}

const CommandRegistration kZoo("zoo", [](CLI::App& app) {
  auto options = std::make_shared<ZooCommandOptions>();
  CLI::App* cmd = app.add_subcommand("zoo",
                                     "Write a built-in model (resnet50, mobilenetv2, mobilenetv3, "
                                     "bert, synthetic) with random weights");
  cmd->add_option("NAME", options->model, "Model name (see --list)");
  cmd->add_option("-o,--output", options->output, "Output file: .onnx, .sg, or - for stdout");
  cmd->add_flag("--list", options->list, "List the models and exit");
  // Bounded: the builders multiply these into tensor sizes.
  cmd->add_option("--batch", options->batch, "Batch size; 0 makes it the symbolic dim N")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  cmd->add_option("--seed", options->seed, "Seed of the random weights")->capture_default_str();
  cmd->add_flag("--no-infer", options->noInfer,
                "Do not run shape inference before writing (intermediate values stay untyped)");
  cmd->add_option("--nodes", options->nodes, "synthetic: total number of nodes (at most 10^7)")
      ->check(CLI::Range(int64_t{0}, int64_t{10'000'000}));
  cmd->add_option("--unsupported-fraction", options->unsupportedFraction,
                  "synthetic: share of nodes that are Sin, an op no backend claims (0..1)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--shape", options->shape, "synthetic: residual or transformer blocks")
      ->capture_default_str();
  cmd->callback([options, cmd] { runZoo(*options, *cmd); });
});

}  // namespace
}  // namespace subgraph::cli
