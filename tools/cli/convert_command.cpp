//===- tools/cli/convert_command.cpp - `subgraph convert` -----------------===//
//
// Converts a model between the text format (.sg) and ONNX (.onnx), the
// format of each side chosen by its file extension ("-" is text on stdin or
// stdout). `--shape NAME=DIMS` pins dynamic input dims and shape inference
// then propagates them, so the written model carries static shapes
// wherever they follow. The graph is verified before it is written, so a
// broken model is reported here, naming the node, rather than by whichever
// tool loads the output next.
//
//===----------------------------------------------------------------------===//
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

#include "cli_util.h"
#include "command.h"
#include "subgraph/ir/shape_inference.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"
#ifdef SUBGRAPH_CLI_HAVE_ONNX
#include "subgraph/onnx/onnx_export.h"
#endif

namespace subgraph::cli {
namespace {

struct ConvertCommandOptions {
  std::string input;
  std::string output;
  std::vector<std::string> shapes;
  bool allowUnknownOps = false;
  bool noVerify = false;
  bool noValueInfo = false;
  bool inlineConstants = false;
  int64_t opset = 17;
};

void writeOnnx(const Graph& graph, const ConvertCommandOptions& options) {
#ifdef SUBGRAPH_CLI_HAVE_ONNX
  ExportOptions exportOptions;
  exportOptions.defaultOpset = options.opset;
  exportOptions.writeValueInfo = !options.noValueInfo;
  throwIfError(exportOnnxFile(graph, options.output, exportOptions));
#else
  (void)graph;
  throw Error(StatusCode::kUnsupported,
              options.output +
                  ": this subgraph was built without ONNX export; write a .sg text "
                  "graph instead");
#endif
}

void runConvert(const ConvertCommandOptions& options) {
  // Both formats are checked before any work, so a typo in OUT does not
  // cost a long import first.
  ModelFormat inFormat = modelFormatForPath(options.input);
  ModelFormat outFormat = modelFormatForPath(options.output);
  if (options.opset < 1) throw UsageError("--opset must be at least 1");

  LoadOptions load;
  load.inputShapes = parseShapeSpecs(options.shapes);
  load.allowUnknownOps = options.allowUnknownOps;
  load.verify = false;  // verified below, after shape inference, unless --no-verify
  spdlog::debug("loading {}", options.input);
  std::unique_ptr<Graph> graph = loadModel(options.input, load);
  // The ONNX importer already inferred shapes from --shape; a text graph
  // only had its input dims replaced.
  if (inFormat == ModelFormat::kText && !load.inputShapes.empty()) {
    Status inferred = inferShapes(*graph);
    if (!inferred.isOk())
      throw Error(inferred.code(), options.input + ": shape inference: " + inferred.message());
  }
  if (!options.noVerify) {
    Status verdict = verify(*graph, cliVerifyOptions(options.allowUnknownOps));
    if (!verdict.isOk())
      throw Error(verdict.code(), options.input +
                                      ": invalid graph (use --no-verify to convert "
                                      "it anyway): " +
                                      verdict.message());
  }

  if (outFormat == ModelFormat::kOnnx) {
    writeOnnx(*graph, options);
  } else {
    writeTextModel(*graph, options.output, options.inlineConstants);
  }
  if (options.output != "-") spdlog::info("wrote {} ({} nodes)", options.output, graph->numNodes());
}

const CommandRegistration kConvert("convert", [](CLI::App& app) {
  auto options = std::make_shared<ConvertCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Convert a model between the text format (.sg) and ONNX (.onnx)");
  cmd->add_option("IN", options->input, "Input model (.sg text graph, .onnx; - for stdin)")
      ->required();
  cmd->add_option("OUT", options->output, "Output model (.sg, .onnx; - for text on stdout)")
      ->required();
  addShapeOption(*cmd, options->shapes);
  cmd->add_flag("--allow-unknown-ops", options->allowUnknownOps,
                "Keep ops without a schema instead of failing");
  cmd->add_flag("--no-verify", options->noVerify, "Write the model without verifying it first");
  cmd->add_flag("--inline-constants", options->inlineConstants,
                "Writing OUT.sg: keep every constant in the text, instead of those of 1 KiB and "
                "more in OUT.sg.data");
  cmd->add_flag("--no-value-info", options->noValueInfo,
                "ONNX output: leave out value_info for intermediate values");
  cmd->add_option("--opset", options->opset,
                  "ONNX output: ai.onnx opset to declare when the graph declares none")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1000}));
  cmd->callback([options] { runConvert(*options); });
});

}  // namespace
}  // namespace subgraph::cli
