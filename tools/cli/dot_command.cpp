//===- tools/cli/dot_command.cpp - `subgraph dot` -------------------------===//
//
// Draws a model as Graphviz DOT (writeDot from subgraph/analysis/graphviz.h)
// for `dot -Tsvg`. The graph is not verified first: a broken graph is
// exactly the kind one wants to look at.
//
//===----------------------------------------------------------------------===//
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli_util.h"
#include "command.h"
#include "subgraph/analysis/graphviz.h"

namespace subgraph::cli {
namespace {

struct DotCommandOptions {
  std::string file;
  std::string output = "-";
  bool noConstants = false;
  bool noTypes = false;
  std::string rankdir = "TB";
  bool allowUnknownOps = false;
  std::vector<std::string> shapes;
};

void runDot(const DotCommandOptions& options) {
  LoadOptions load;
  load.inputShapes = parseShapeSpecs(options.shapes);
  load.allowUnknownOps = options.allowUnknownOps;
  // Drawing only walks the structure and marks what is broken (a dangling
  // value, a missing operand), so a graph the verifier rejects can still
  // be drawn to see why; no pass, partition or kernel runs here.
  load.verify = false;
  spdlog::debug("loading {}", options.file);
  std::unique_ptr<Graph> graph = loadModel(options.file, load);

  DotOptions dot;
  dot.showConstants = !options.noConstants;
  dot.showTypes = !options.noTypes;
  dot.rankdir = options.rankdir;
  writeOutput(options.output, [&](std::ostream& os) { writeDot(*graph, os, dot); });
  if (options.output != "-") {
    std::string svg = std::filesystem::path(options.output).replace_extension(".svg").string();
    spdlog::info("wrote {} ({} nodes); render it with: dot -Tsvg {} -o {}", options.output,
                 graph->numNodes(), options.output, svg);
  }
}

const CommandRegistration kDot("dot", [](CLI::App& app) {
  auto options = std::make_shared<DotCommandOptions>();
  CLI::App* cmd = app.add_subcommand("dot", "Draw a model as a Graphviz DOT graph");
  cmd->add_option("FILE", options->file, "Model file (.sg text graph, .onnx; - for stdin)")
      ->required();
  cmd->add_option("-o,--output", options->output, "Output .dot file; - for stdout")
      ->type_name("OUT")
      ->capture_default_str();
  cmd->add_flag("--no-constants", options->noConstants,
                "Leave out constants (weights) and their edges");
  cmd->add_flag("--no-types", options->noTypes, "Leave value types off the edge labels");
  cmd->add_option("--rankdir", options->rankdir, "Layout direction: TB (top-bottom) or LR")
      ->check(CLI::IsMember({"TB", "LR", "BT", "RL"}))
      ->capture_default_str();
  cmd->add_flag("--allow-unknown-ops", options->allowUnknownOps,
                "Accept ops without a schema when loading an ONNX model");
  addShapeOption(*cmd, options->shapes);
  cmd->callback([options] { runDot(*options); });
});

}  // namespace
}  // namespace subgraph::cli
