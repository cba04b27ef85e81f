//===- tools/cli/inspect_command.cpp - `subgraph inspect` -----------------===//
//
// Summarizes a model: name, node and value counts, opsets, an op histogram,
// graph inputs and outputs with their types, constants and their total size,
// and whether the verifier accepts the graph. The same report prints as
// aligned text or, with --json, as one JSON object for scripts.
//
// The report is built in two steps, summarize() then a printer, so that
// more sections (e.g. the graph after simplification passes, next to the
// graph as loaded) are a new field in InspectReport plus a few lines in
// each printer, without touching how a graph is summarized.
//
//===----------------------------------------------------------------------===//
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_util.h"
#include "command.h"
#include "subgraph/ir/graph.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/passes/pass_manager.h"

namespace subgraph::cli {
namespace {

/// A graph input or output as the report shows it.
struct ValueSummary {
  std::string name;
  TensorType type;
};

/// How many nodes run one op.
struct OpCount {
  std::string op;  ///< Qualified op type: "Conv", "onednn.ConvRelu".
  size_t count = 0;
};

/// Everything the report says about one graph.
struct GraphSummary {
  std::string name;
  size_t numNodes = 0;
  size_t numValues = 0;
  std::map<std::string, int64_t> opsets;
  std::vector<ValueSummary> inputs;
  std::vector<ValueSummary> outputs;
  size_t numConstants = 0;
  uint64_t constantBytes = 0;
  /// Sorted by count, most frequent first, then by op name.
  std::vector<OpCount> histogram;
};

/// The graph after a pass pipeline (`--passes`), shown next to the graph as
/// loaded so users see what simplification would do before partitioning.
struct AfterPasses {
  GraphSummary graph;
  PipelineReport pipeline;
};

/// The whole `inspect` report.
struct InspectReport {
  std::string file;
  GraphSummary graph;
  /// Set when --passes asked for the simplified graph too.
  std::optional<AfterPasses> afterPasses;
  /// The verifier's verdict; nullopt when --no-verify skipped it.
  std::optional<Status> verification;
};

GraphSummary summarize(const Graph& graph) {
  GraphSummary summary;
  summary.name = graph.name();
  summary.numNodes = graph.numNodes();
  summary.numValues = graph.numValues();
  summary.opsets = graph.opsetImports();
  // An omitted output (`return _` in the text format) is a null slot.
  auto describe = [](const Value* v) {
    return v ? ValueSummary{v->name(), v->type()} : ValueSummary{"_", TensorType()};
  };
  for (const Value* v : graph.inputs()) summary.inputs.push_back(describe(v));
  for (const Value* v : graph.outputs()) summary.outputs.push_back(describe(v));
  for (const Value* v : graph.initializers()) {
    ++summary.numConstants;
    const Tensor& data = *v->initializer();
    if (data.dtype() == DataType::kString) {
      for (const std::string& s : data.strings()) summary.constantBytes += s.size();
    } else {
      summary.constantBytes += data.bytes().size();
    }
  }
  std::map<std::string, size_t> counts;
  for (const Node* node : graph.nodes()) ++counts[node->qualifiedOpType()];
  for (const auto& [op, count] : counts) summary.histogram.push_back({op, count});
  // std::map already ordered the names, so a stable sort by count keeps
  // equal counts in name order.
  std::stable_sort(summary.histogram.begin(), summary.histogram.end(),
                   [](const OpCount& a, const OpCount& b) { return a.count > b.count; });
  return summary;
}

std::string opsetDomainName(const std::string& domain) {
  return domain.empty() ? "ai.onnx" : domain;
}

//===--- Text -------------------------------------------------------------===//

void printValues(std::ostream& os, const char* heading, const std::vector<ValueSummary>& values) {
  os << fmt::format("{:<11}{}\n", heading, values.size());
  size_t width = 0;
  for (const ValueSummary& v : values) width = std::max(width, v.name.size());
  for (const ValueSummary& v : values)
    os << fmt::format("  {:<{}}  {}\n", v.name, width, v.type.toString());
}

void printAfterPasses(const AfterPasses& after, std::ostream& os) {
  const GraphSummary& g = after.graph;
  os << fmt::format("\nafter passes ({} round{}{}):\n", after.pipeline.rounds,
                    after.pipeline.rounds == 1 ? "" : "s",
                    after.pipeline.reachedFixedPoint ? ", fixed point" : "");
  os << after.pipeline.toString();
  if (!after.pipeline.toString().ends_with('\n')) os << '\n';
  os << fmt::format("{:<11}{} -> {}\n", "nodes", after.pipeline.nodesBefore(), g.numNodes);
  os << fmt::format("{:<11}{}, {} ({} bytes)\n", "constants", g.numConstants,
                    formatBytes(g.constantBytes), g.constantBytes);
  size_t width = g.histogram.empty() ? 1 : std::to_string(g.histogram.front().count).size();
  os << fmt::format("{:<11}{} {}\n", "ops", g.histogram.size(),
                    g.histogram.size() == 1 ? "kind" : "kinds");
  for (const OpCount& entry : g.histogram)
    os << fmt::format("  {:>{}}  {}\n", entry.count, width, entry.op);
}

void printText(const InspectReport& report, std::ostream& os) {
  const GraphSummary& g = report.graph;
  os << fmt::format("{:<11}{}\n", "file", report.file);
  os << fmt::format("{:<11}{}\n", "graph", g.name);
  os << fmt::format("{:<11}{}\n", "nodes", g.numNodes);
  os << fmt::format("{:<11}{}\n", "values", g.numValues);
  std::string opsets;
  for (const auto& [domain, version] : g.opsets)
    opsets += fmt::format("{}{} {}", opsets.empty() ? "" : ", ", opsetDomainName(domain), version);
  os << fmt::format("{:<11}{}\n", "opsets", opsets.empty() ? "none" : opsets);
  printValues(os, "inputs", g.inputs);
  printValues(os, "outputs", g.outputs);
  os << fmt::format("{:<11}{}, {} ({} bytes)\n", "constants", g.numConstants,
                    formatBytes(g.constantBytes), g.constantBytes);
  os << fmt::format("{:<11}{} {}\n", "ops", g.histogram.size(),
                    g.histogram.size() == 1 ? "kind" : "kinds");
  size_t width = g.histogram.empty() ? 1 : std::to_string(g.histogram.front().count).size();
  for (const OpCount& entry : g.histogram)
    os << fmt::format("  {:>{}}  {}\n", entry.count, width, entry.op);
  std::string verdict = "skipped (--no-verify)";
  if (report.verification)
    verdict = report.verification->isOk() ? "OK" : "FAILED: " + report.verification->message();
  os << fmt::format("{:<11}{}\n", "verify", oneLine(verdict));
  if (report.afterPasses) printAfterPasses(*report.afterPasses, os);
}

//===--- JSON -------------------------------------------------------------===//

nlohmann::ordered_json typeToJson(const TensorType& type) {
  nlohmann::ordered_json json;
  json["dtype"] = std::string(dataTypeName(type.dtype));
  if (type.shape) {
    // Static dims are numbers, symbolic dims their name, unknown dims null.
    nlohmann::ordered_json dims = nlohmann::ordered_json::array();
    for (const Dim& d : *type.shape) {
      if (d.isStatic())
        dims.push_back(d.size());
      else if (d.isSymbolic())
        dims.push_back(d.symbolName());
      else
        dims.push_back(nullptr);
    }
    json["shape"] = std::move(dims);
  } else {
    json["shape"] = nullptr;  // Rank unknown.
  }
  json["text"] = type.toString();
  return json;
}

nlohmann::ordered_json valuesToJson(const std::vector<ValueSummary>& values) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ValueSummary& v : values)
    list.push_back({{"name", v.name}, {"type", typeToJson(v.type)}});
  return list;
}

nlohmann::ordered_json toJson(const InspectReport& report) {
  const GraphSummary& g = report.graph;
  nlohmann::ordered_json json;
  json["file"] = report.file;
  json["graph"] = g.name;
  json["nodes"] = g.numNodes;
  json["values"] = g.numValues;
  nlohmann::ordered_json opsets = nlohmann::ordered_json::object();
  for (const auto& [domain, version] : g.opsets) opsets[opsetDomainName(domain)] = version;
  json["opsets"] = std::move(opsets);
  json["inputs"] = valuesToJson(g.inputs);
  json["outputs"] = valuesToJson(g.outputs);
  json["constants"] = {{"count", g.numConstants}, {"bytes", g.constantBytes}};
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const OpCount& entry : g.histogram)
    ops.push_back({{"op", entry.op}, {"count", entry.count}});
  json["ops"] = std::move(ops);
  if (!report.verification) {
    json["verify"] = {{"ran", false}};
  } else if (report.verification->isOk()) {
    json["verify"] = {{"ran", true}, {"ok", true}};
  } else {
    json["verify"] = {{"ran", true},
                      {"ok", false},
                      {"code", statusCodeName(report.verification->code())},
                      {"error", report.verification->message()}};
  }
  if (report.afterPasses) {
    const AfterPasses& after = *report.afterPasses;
    nlohmann::ordered_json passes = nlohmann::ordered_json::array();
    for (const PassReport& pass : after.pipeline.passes)
      passes.push_back({{"pass", pass.passName},
                        {"round", pass.round},
                        {"changed", pass.changed},
                        {"ms", pass.milliseconds},
                        {"nodes_before", pass.nodesBefore},
                        {"nodes_after", pass.nodesAfter},
                        {"summary", pass.summary}});
    nlohmann::ordered_json afterOps = nlohmann::ordered_json::array();
    for (const OpCount& entry : after.graph.histogram)
      afterOps.push_back({{"op", entry.op}, {"count", entry.count}});
    json["after_passes"] = {
        {"rounds", after.pipeline.rounds},
        {"fixed_point", after.pipeline.reachedFixedPoint},
        {"passes", std::move(passes)},
        {"nodes", after.graph.numNodes},
        {"constants", {{"count", after.graph.numConstants}, {"bytes", after.graph.constantBytes}}},
        {"ops", std::move(afterOps)}};
  }
  return json;
}

//===--- Command ----------------------------------------------------------===//

struct InspectOptions {
  std::string file;
  bool json = false;
  bool noVerify = false;
  bool allowUnknownOps = false;
  std::vector<std::string> shapes;
  /// Pass pipeline to show the graph after ("default", or names); empty: none.
  std::string passes;
};

void runInspect(const InspectOptions& options) {
  LoadOptions load;
  load.inputShapes = parseShapeSpecs(options.shapes);
  load.allowUnknownOps = options.allowUnknownOps;
  load.verify = false;  // inspect reports the verdict instead of failing on it
  spdlog::debug("loading {}", options.file);
  std::unique_ptr<Graph> graph = loadModel(options.file, load);

  InspectReport report;
  report.file = options.file;
  report.graph = summarize(*graph);
  // Passes only ever see a graph that verifies, --no-verify or not: they
  // index operands the schema promises.
  Status verdict = verify(*graph, cliVerifyOptions(options.allowUnknownOps));
  if (!options.noVerify) report.verification = verdict;
  if (!verdict.isOk() && !options.passes.empty())
    spdlog::warn("--passes skipped: passes only run on a graph that verifies");
  if (!options.passes.empty() && verdict.isOk()) {
    // The passes run on a copy so the "before" summary and the verifier
    // describe the file exactly as loaded.
    StatusOr<PassManager> pipeline =
        parsePassPipeline(options.passes, PassManagerOptions{.runToFixedPoint = true});
    if (!pipeline.isOk()) throw Error(pipeline.status());
    std::unique_ptr<Graph> simplified = graph->clone();
    StatusOr<PipelineReport> ran = pipeline.value().run(*simplified);
    if (!ran.isOk()) throw Error(ran.status());
    report.afterPasses = AfterPasses{summarize(*simplified), std::move(ran.value())};
  }

  if (options.json) {
    // error_handler::replace: a non-UTF-8 name from a hostile file must
    // not turn a report into an exception.
    std::cout << toJson(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    printText(report, std::cout);
  }
  std::cout.flush();
  if (!std::cout) throw Error("<stdout>: write failed");
  if (report.verification && !report.verification->isOk())
    throw Error(
        report.verification->code(),
        fmt::format("{}: verification failed: {}", options.file, report.verification->message()));
}

const CommandRegistration kInspect("inspect", [](CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Summarize a model: ops, inputs, outputs, constants, and verify it");
  cmd->add_option("FILE", options->file, "Model file (.sg text graph, .onnx; - for stdin)")
      ->required();
  cmd->add_flag("--json", options->json, "Print the report as one JSON object");
  cmd->add_flag("--no-verify", options->noVerify,
                "Do not run the verifier (a broken graph then exits 0)");
  cmd->add_flag("--allow-unknown-ops", options->allowUnknownOps,
                "Accept ops without a schema when loading and verifying");
  cmd->add_option("--passes", options->passes,
                  "Also show the graph after these passes: 'default' (Constant->initializer, "
                  "Identity removal, constant folding, the exporters' idioms, DCE) or a comma "
                  "list of pass names");
  addShapeOption(*cmd, options->shapes);
  cmd->callback([options] { runInspect(*options); });
});

}  // namespace
}  // namespace subgraph::cli
