//===- api/inference_session.cpp - Load, partition, run -------------------===//
//
// See subgraph/api/inference_session.h. The steps of build() are the order
// every front end needs: options first (a mistake costs nothing), then the
// backends (a plugin that cannot load fails before any work), then the
// passes, the partition and the compile.
//
//===----------------------------------------------------------------------===//
#include "subgraph/api/inference_session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "subgraph/api/output_check.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/passes/pass_manager.h"
#include "subgraph/support/did_you_mean.h"
#include "subgraph/support/file_io.h"

#ifdef SUBGRAPH_API_HAVE_ONNX
#include "subgraph/onnx/onnx_export.h"
#include "subgraph/onnx/onnx_import.h"
#endif

namespace subgraph::api {
namespace {

std::string lowerExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

// Largest text graph read, as the CLI's default: a bigger one is a
// mistake and would only exhaust memory while parsing.
constexpr uint64_t kMaxTextModelBytes = uint64_t{1} << 30;

// A text graph read as hostile input: a regular file only (never a FIFO or
// a device, also through a symlink), at most kMaxTextModelBytes, no binary.
StatusOr<std::unique_ptr<Graph>> readTextGraph(const std::string& path,
                                               const ModelOptions& options) {
  StatusOr<std::string> text = readRegularFile(path, kMaxTextModelBytes, "text graph");
  if (!text.isOk()) return text.status();
  if (size_t nul = text->find('\0'); nul != std::string::npos)
    return Status::invalid(path + ": binary data at byte " + std::to_string(nul) +
                           "; not a text graph (.sg)");
  ParseOptions parse;
  parse.sourceName = path;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  parse.externalDataDir = parent.empty() ? "." : parent.string();
  StatusOr<std::unique_ptr<Graph>> g = parseGraph(*text, parse);
  if (!g.isOk()) return g.status();
  SUBGRAPH_RETURN_IF_ERROR(applyInputShapes(*g.value(), options.inputShapes));
  return g;
}

StatusOr<std::unique_ptr<Graph>> readModel(const std::string& path, const ModelOptions& options) {
  const std::string ext = lowerExtension(path);
  if (ext == ".sg") return readTextGraph(path, options);
  if (ext == ".onnx") {
#ifdef SUBGRAPH_API_HAVE_ONNX
    ImportOptions import;
    import.allowUnknownOps = options.allowUnknownOps;
    import.inputShapes = options.inputShapes;
    return importOnnxFile(path, import);
#else
    return Status::error(StatusCode::kUnsupported,
                         path + ": this subgraph was built without the ONNX importer");
#endif
  }
  return Status::invalid(path + ": unknown model file extension '" + ext +
                         "' (expected .onnx or .sg)");
}

// The selection of `options`, resolved when the caller did not.
StatusOr<plugins::BackendSelection> resolveSelection(InferenceOptions& options) {
  if (options.selection) return std::move(*options.selection);
  plugins::SelectOptions select;
  select.allowFallback = options.allowFallback;
  select.searchPath = options.pluginSearchPath;
  std::string list = options.backends.empty() ? "NONE" : options.backends;
  return plugins::selectBackends(list, select);
}

}  // namespace

// Text graphs get fixed input sizes after parsing (the ONNX importer takes
// them itself); Python sessions and the CLI's --input data too.
Status applyInputShapes(Graph& graph, const InputShapes& shapes) {
  for (const auto& [name, dims] : shapes) {
    Value* input = graph.findValue(name);
    if (!input || !input->isGraphInput())
      return Status::error(StatusCode::kNotFound,
                           "graph '" + graph.name() + "' has no input named '" + name + "'");
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

namespace {

// `graph` verified, or why it is not a valid model; `source` names it.
StatusOr<std::unique_ptr<Graph>> verified(StatusOr<std::unique_ptr<Graph>> graph,
                                          const std::string& source, const ModelOptions& options) {
  if (!graph.isOk()) return graph.status();
  VerifyOptions verifyOptions;
  verifyOptions.allowUnknownOps = options.allowUnknownOps;
  verifyOptions.allowUnknownAttributes = true;
  if (Status verdict = verify(*graph.value(), verifyOptions); !verdict.isOk())
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

StatusOr<std::unique_ptr<Graph>> loadModel(const std::string& path, const ModelOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return Status::error(StatusCode::kNotFound, path + ": no such file");
  return verified(readModel(path, options), path, options);
}

StatusOr<std::unique_ptr<Graph>> loadModelBytes(std::string_view bytes, const ModelOptions& options,
                                                const std::string& sourceName) {
  if (bytes.empty()) return Status::invalid(sourceName + ": no bytes; not a model");
  if (looksLikeTextGraph(bytes)) {
    if (bytes.size() > kMaxTextModelBytes)
      return Status::invalid(sourceName + ": a text graph of over 1 GiB");
    if (size_t nul = bytes.find('\0'); nul != std::string_view::npos)
      return Status::invalid(sourceName + ": binary data at byte " + std::to_string(nul) +
                             "; not a text graph");
    ParseOptions parse;
    parse.sourceName = sourceName;  // no external data: there is no folder
    StatusOr<std::unique_ptr<Graph>> g = parseGraph(bytes, parse);
    if (g.isOk()) SUBGRAPH_RETURN_IF_ERROR(applyInputShapes(*g.value(), options.inputShapes));
    return verified(std::move(g), sourceName, options);
  }
#ifdef SUBGRAPH_API_HAVE_ONNX
  ImportOptions import;
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
  const std::string ext = lowerExtension(path);
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
    return Status::invalid(path + ": unknown model format '" +
                           (ext.empty() ? "(no extension)" : ext) +
                           "'; expected a .sg text graph or an .onnx model");
  return writeGraphFile(graph, path, inlineConstants);
}

uint64_t defaultMemoryLimitBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  uint64_t kib = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemTotal:") return kib / 4 * 3 * 1024;
  return 0;
}

Status checkPrecision(const std::string& precision) {
  if (precision.empty() || precision == "fp32" || precision == "bf16" || precision == "fp16" ||
      precision == "tf32")
    return Status::ok();
  return Status::invalid("precision must be fp32, bf16, fp16 or tf32, not '" + precision + "'");
}

StatusOr<std::map<std::string, std::string>> parsePluginOptions(
    const std::vector<std::string>& entries, const std::vector<std::string>& backends) {
  std::map<std::string, std::string> out;
  for (const std::string& e : entries) {
    size_t eq = e.find('='), dot = e.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 >= eq)
      return Status::invalid("plugin option '" + e + "' is not PLUGIN.NAME=VALUE");
    std::string plugin = e.substr(0, dot);
    if (std::find(backends.begin(), backends.end(), plugin) == backends.end())
      return Status::invalid(fmt::format(
          "plugin option '{}' is for backend '{}', which is not chosen ({}){}", e, plugin,
          backends.empty() ? std::string("none") : fmt::format("{}", fmt::join(backends, ",")),
          didYouMean(plugin, backends)));
    out[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return out;
}

StatusOr<std::unique_ptr<InferenceSession>> InferenceSession::create(std::unique_ptr<Graph> model,
                                                                     InferenceOptions options) {
  if (!model) return Status::invalid("InferenceSession::create: no model");
  std::unique_ptr<InferenceSession> s(new InferenceSession());
  SUBGRAPH_RETURN_IF_ERROR(s->build(std::move(model), options));
  return s;
}

StatusOr<std::unique_ptr<InferenceSession>> InferenceSession::open(const std::string& path,
                                                                   InferenceOptions options,
                                                                   const ModelOptions& model) {
  StatusOr<std::unique_ptr<Graph>> graph = loadModel(path, model);
  if (!graph.isOk()) return graph.status();
  return create(std::move(graph).value(), std::move(options));
}

InferenceSession::~InferenceSession() = default;

Status InferenceSession::build(std::unique_ptr<Graph> model, InferenceOptions& options) {
  SUBGRAPH_RETURN_IF_ERROR(checkPrecision(options.precision));
  SUBGRAPH_RETURN_IF_ERROR(runtime::checkThreadCount(options.threads));
  StatusOr<plugins::BackendSelection> selection = resolveSelection(options);
  if (!selection.isOk()) return selection.status();
  for (const std::string& w : selection->warnings()) warnings_.push_back(w);
  backends_ = selection->none() ? std::vector<std::string>{} : selection->names();
  // One precision and one set of options, decided here, for selection and
  // kernels alike; unknown names and values stop the session now.
  plugins::PluginRunOptions run;
  run.threads = options.threads;
  run.precision = options.precision;
  run.options = options.pluginOptions;
  SUBGRAPH_RETURN_IF_ERROR(selection->setRunOptions(run));
  passNodes_ = {model->numNodes(), model->numNodes()};
  if (!backends_.empty() && options.passes != "none") {
    StatusOr<PassManager> pipeline =
        parsePassPipeline(options.passes, PassManagerOptions{.runToFixedPoint = true});
    if (!pipeline.isOk()) return Status::invalid("passes: " + pipeline.status().message());
    StatusOr<PipelineReport> ran = pipeline.value().run(*model);
    if (!ran.isOk()) return ran.status();
    passNodes_.second = model->numNodes();
  }
  runtime::SessionOptions so;
  so.threads = options.threads;
  so.maxConcurrentRuns = options.maxConcurrentRuns;
  so.batching = options.batching;
  so.memoryLimitBytes = options.memoryLimitBytes;
  so.work = options.work;
  if (!backends_.empty()) {
    auto instances = selection->runtimeBackends(run);
    if (!instances.isOk()) return instances.status();
    so.backendInstances = std::move(instances).value();
  }
  // The session receives the partitioned graph; selectors see only a
  // graph that passed the checks the session would make.
  SUBGRAPH_RETURN_IF_ERROR(runtime::verifyForRun(*model));
  if (!backends_.empty()) {
    std::vector<std::string> dropped;
    auto report = selection->partitionWithFallback(model, dropped);
    for (std::string& w : dropped) warnings_.push_back(std::move(w));
    if (!report.isOk()) return report.status();
    report_ = std::move(report).value();
    if (!model) return Status(StatusCode::kInternal, "partitioning left no graph");
  }
  session_ = std::make_unique<runtime::Session>(so);
  SUBGRAPH_RETURN_IF_ERROR(session_->load(std::move(model)));
  return session_->compile();
}

StatusOr<runtime::RunResult> InferenceSession::run(const std::vector<runtime::NamedTensor>& inputs,
                                                   const runtime::RunOptions& options) const {
  return session_->run(inputs, options);
}

StatusOr<runtime::RunResult> InferenceSession::runInPlace(
    const std::vector<runtime::InputView>& inputs, const runtime::RunOptions& options) const {
  return session_->runInPlace(inputs, options);
}

StatusOr<std::vector<Comparison>> compareWithReference(
    const Graph& original, const std::vector<runtime::NamedTensor>& inputs,
    const std::vector<runtime::NamedTensor>& outputs, double tolerance, ToleranceOf of,
    uint64_t memoryLimitBytes, const runtime::WorkLimits& work) {
  runtime::SessionOptions so;
  so.memoryLimitBytes = memoryLimitBytes;
  so.work = work;
  runtime::Session oracle(so);
  SUBGRAPH_RETURN_IF_ERROR(oracle.load(original));
  SUBGRAPH_RETURN_IF_ERROR(oracle.compile());
  StatusOr<runtime::RunResult> want = oracle.run(inputs);
  if (!want.isOk()) return want.status();
  std::vector<Comparison> out;
  for (const runtime::NamedTensor& got : outputs) {
    auto it = std::find_if(want->outputs.begin(), want->outputs.end(),
                           [&](const runtime::NamedTensor& w) { return w.name == got.name; });
    if (it == want->outputs.end())
      return Status::error(StatusCode::kNotFound, "the reference has no output '" + got.name + "'");
    out.push_back(compareOutput(got.name, got.tensor, it->tensor, tolerance, of));
  }
  return out;
}

}  // namespace subgraph::api
