//===- tools/cli/run_command.cpp - `subgraph run` -------------------------===//
//
// Runs a model and writes its outputs:
//
//   subgraph run MODEL [--backend A,B] [--shape NAME=DIMS]...
//       [--input NAME=FILE.npy|FILE.pb]... [--random-inputs SEED]
//       [--output-dir DIR] [--runs N] [--warmup N] [--threads N]
//       [--check] [--tolerance T] [--precision fp32|bf16] [--json] [--profile]
//       [--dynamic-shapes]
//
// Backends come from --backend, else $SUBGRAPH_BACKEND ("NONE", or neither,
// runs unpartitioned): built-in names, plugin names or absolute plugin
// paths, as for `partition`. With backends, the model is partitioned for
// them; a fused region (or a plugin's own node) runs on the plugin's kernel
// or the runtime backend of the same name when there is one, else on the
// reference backend through its body graph. --allow-fallback (or
// SUBGRAPH_BACKEND_FALLBACK=1) skips, with a warning, plugins that cannot
// be used or that fail while partitioning.
//
// Inputs fed from files fix the symbolic dims of their graph inputs, as
// --shape would, unless --dynamic-shapes is given.
//
// Each output is written as DIR/<output name>.npy (random inputs as
// DIR/inputs/<name>.npy, so other runtimes can be fed the same data).
// --runs N times N requests after --warmup ones and reports the median,
// min and max latency and the throughput. --check also runs the graph
// unpartitioned on the reference backend and compares every output: an
// element passes when |a - b| <= T * (1 + |b|); any failing element makes
// the command fail after the report. The report also gives the largest
// error scaled by the output's largest reference magnitude, the figure that
// means something for reduced precision, where outputs near zero make the
// relative error meaningless. --precision asks the backends for a reduced
// precision where they offer it: bf16 (oneDNN on AVX512-BF16/AMX), fp16
// and tf32 (cuDNN's tensor cores); it reaches plugins through their kernel
// context (as --plugin-option does), and makes --check judge each output by
// its scale:
// an element passes when |a-b| <= T*(1+max|b|), T 2e-2 for bf16 and 1e-2
// for fp16 and tf32 by default, because a reduced-precision error grows
// with the magnitudes summed into an element, not with the element (a
// logit near zero carries the same error as a large one). Backends without
// that precision stay in fp32. A model that itself computes in f16 or bf16
// is judged the same way, without --tolerance. --json prints one JSON object
// instead of text; --profile adds a per-node and per-region time table.
//
// The work itself (load, passes, backends, partition, compile, run, the
// reference check) is the library's (subgraph/api/inference_session.h),
// which the Python package calls too; this file is options, inputs,
// outputs and printing.
//
//===----------------------------------------------------------------------===//
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "cli_util.h"
#include "command.h"
#include "subgraph/runtime/session.h"
#include "subgraph/support/checked_int.h"
#include "subgraph/support/half.h"

#include "subgraph/api/inference_session.h"
#include "subgraph/api/mpi_pipeline.h"
#include "subgraph/api/output_check.h"
#include "subgraph/api/pipelined_session.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/runtime/npy.h"
#include "subgraph/runtime/tensor_file.h"

namespace subgraph::cli {
namespace {

/// Upper bound of --runs/--warmup (--threads takes runtime::kMaxThreads).
constexpr int kMaxRuns = 1'000'000;

struct RunCommandOptions {
  std::string file;
  std::string backends;
  bool backendsGiven = false;
  std::vector<std::string> shapes;
  std::string passes = "default";
  std::vector<std::string> inputs;
  int64_t randomSeed = -1;
  bool randomGiven = false;
  std::string outputDir;
  int runs = 1;
  int warmup = 0;
  int threads = 0;
  bool check = false;
  double tolerance = 1e-4;
  bool toleranceGiven = false;
  std::string precision;
  std::vector<std::string> pluginOptions;  // "<plugin>.<name>=<value>"
  bool json = false;
  bool profile = false;
  bool allowUnknownOps = false;
  bool allowFallback = false;
  bool dynamicShapes = false;
  size_t stages = 0;         // pipeline stages (0: none)
  std::string devices;       // the stages' devices
  std::string memoryLimits;  // per device
  size_t microBatches = 1;   // parts of dim 0 the pipeline runs
  double mpiTimeout = 60;    // seconds a rank waits for its peers within a run
};

using runtime::NamedTensor;
using runtime::RunResult;

// The backends from --backend or $SUBGRAPH_BACKEND, resolved (plugins
// loaded); nullopt means run unpartitioned.
std::optional<plugins::BackendSelection> chosenSelection(const RunCommandOptions& options) {
  std::string list = options.backends;
  if (!options.backendsGiven) {
    std::optional<std::string> env = plugins::backendListFromEnvironment();
    if (!env) return std::nullopt;
    list = *env;
  }
  plugins::SelectOptions select;
  select.allowFallback = options.allowFallback || plugins::fallbackFromEnvironment();
  warnAboutDroppedPluginDirs();
  auto selection = plugins::selectBackends(list, select);
  if (!selection) throwSelectionError(list, selection.status());
  for (const std::string& warning : selection->warnings()) spdlog::warn("{}", warning);
  if (selection->none()) return std::nullopt;
  return std::move(selection).value();
}

// Random data for one input: floats uniform in [-1, 1), integers in
// [0, 10), booleans fair.
// `budget` is what the memory limit leaves for inputs; the tensor's bytes
// are taken from it, and a tensor that does not fit fails before any
// allocation (a --shape of 10^12 elements must not reach the allocator).
Tensor randomTensor(const std::string& name, DataType dtype, const std::vector<int64_t>& dims,
                    std::mt19937_64& rng, uint64_t& budget) {
  CheckedInt count = 1;
  for (int64_t d : dims) count = count * d;
  const CheckedInt size = count * static_cast<int64_t>(dataTypeSize(dtype));
  if (!size.ok() || static_cast<uint64_t>(size.value()) > budget)
    throw Error(
        StatusCode::kLimitExceeded,
        fmt::format("--random-inputs: input '{}' needs {} bytes, over the memory limit of "
                    "{} bytes left for inputs (raise it with --limit memory=N)",
                    name, size.ok() ? std::to_string(size.value()) : "more than 2^63", budget));
  budget -= static_cast<uint64_t>(size.value());
  const int64_t n = count.value();
  std::vector<std::byte> bytes(static_cast<size_t>(size.value()));
  auto fill = [&](auto tag, auto draw) {
    using T = decltype(tag);
    T* p = reinterpret_cast<T*>(bytes.data());
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(draw());
  };
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  switch (dtype) {
    case DataType::kFloat32: fill(float{}, [&] { return real(rng); }); break;
    case DataType::kFloat64: fill(double{}, [&] { return real(rng); }); break;
    case DataType::kFloat16:
      fill(uint16_t{}, [&] { return floatToHalfBits(static_cast<float>(real(rng))); });
      break;
    case DataType::kBFloat16:
      fill(uint16_t{}, [&] { return floatToBFloat16Bits(static_cast<float>(real(rng))); });
      break;
    case DataType::kInt64: fill(int64_t{}, [&] { return small(rng); }); break;
    case DataType::kInt32: fill(int32_t{}, [&] { return small(rng); }); break;
    case DataType::kInt16: fill(int16_t{}, [&] { return small(rng); }); break;
    case DataType::kInt8: fill(int8_t{}, [&] { return small(rng); }); break;
    case DataType::kUInt8: fill(uint8_t{}, [&] { return small(rng); }); break;
    case DataType::kUInt16: fill(uint16_t{}, [&] { return small(rng); }); break;
    case DataType::kUInt32: fill(uint32_t{}, [&] { return small(rng); }); break;
    case DataType::kUInt64: fill(uint64_t{}, [&] { return small(rng); }); break;
    case DataType::kBool: fill(uint8_t{}, [&] { return small(rng) % 2; }); break;
    default:
      throw Error(StatusCode::kUnsupported,
                  "--random-inputs cannot make " + std::string(dataTypeName(dtype)) + " data");
  }
  return Tensor(dtype, dims, std::move(bytes));
}

// The work limits in force: `--limit loop-iterations`, `loop-seconds` and
// `kernel-work`, each else the runtime's default.
runtime::WorkLimits workLimits() {
  runtime::WorkLimits work;
  const CliLimits& set = cliLimits();
  if (set.loopIterations) work.loopIterations = set.loopIterations;
  if (set.loopSeconds) work.loopSeconds = static_cast<double>(set.loopSeconds);
  if (set.kernelWork) work.kernelWork = set.kernelWork;
  return work;
}

// Inputs from --input files, the rest random when --random-inputs is set.
std::vector<NamedTensor> gatherInputs(const Graph& graph, const RunCommandOptions& options,
                                      std::vector<std::string>& randomNames) {
  std::map<std::string, Tensor> given;
  uint64_t budget = memoryLimit() ? memoryLimit() : std::numeric_limits<uint64_t>::max();
  for (const std::string& spec : options.inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--input '" + spec + "': expected NAME=FILE.npy or NAME=FILE.pb");
    std::string name = spec.substr(0, eq);
    if (given.count(name)) throw UsageError("--input '" + name + "' is given twice");
    StatusOr<NamedTensor> t = runtime::readTensorFile(spec.substr(eq + 1));
    if (!t) throw Error(t.status());
    const uint64_t bytes = t.value().tensor.bytes().size();
    if (bytes > budget)
      throw Error(StatusCode::kLimitExceeded,
                  fmt::format("--input {}: {} bytes, over the memory limit of {} bytes left for "
                              "inputs (raise it with --limit memory=N)",
                              name, bytes, budget));
    budget -= bytes;
    given.emplace(name, std::move(t.value().tensor));
  }
  std::mt19937_64 rng(static_cast<uint64_t>(std::max<int64_t>(options.randomSeed, 0)));
  std::vector<NamedTensor> inputs;
  for (const Value* v : graph.inputs()) {
    if (auto it = given.find(v->name()); it != given.end()) {
      inputs.push_back({v->name(), it->second});
      given.erase(it);
      continue;
    }
    if (v->isInitializer()) continue;  // its constant is the default
    if (!options.randomGiven)
      throw Error(StatusCode::kInvalidArgument, "no data for input '" + v->name() + "' (" +
                                                    v->type().toString() + "): pass --input " +
                                                    v->name() + "=FILE or --random-inputs SEED");
    const TensorType& type = v->type();
    if (!type.shape || !isStaticShape(*type.shape))
      throw Error(StatusCode::kInvalidArgument,
                  "input '" + v->name() + "' has type " + type.toString() +
                      "; give its dims with --shape " + v->name() + "=D1,D2,...");
    std::vector<int64_t> dims;
    for (const Dim& d : *type.shape) dims.push_back(d.size());
    inputs.push_back({v->name(), randomTensor(v->name(), type.dtype, dims, rng, budget)});
    randomNames.push_back(v->name());
  }
  if (!given.empty())
    throw Error(StatusCode::kNotFound,
                "--input names '" + given.begin()->first + "', which is not a graph input");
  return inputs;
}

// Fixes the symbolic or unknown dims of each graph input fed from a file to
// that file's dims, as --shape would: this run feeds nothing else, and with
// static shapes the passes fold the shape arithmetic exporters write
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) and see the static
// head dims the attention idiom needs. Static dims stay as declared (a
// mismatch is the runtime's error); --dynamic-shapes keeps every dim.
void fixShapesFromInputs(Graph& graph, const std::vector<NamedTensor>& inputs,
                         const std::vector<std::string>& randomNames) {
  std::vector<std::string> fixed;
  for (const NamedTensor& in : inputs) {
    if (std::find(randomNames.begin(), randomNames.end(), in.name) != randomNames.end()) continue;
    Value* v = graph.findValue(in.name);
    const std::vector<int64_t>& dims = in.tensor.dims();
    if (!v || !v->type().hasRank() || v->type().rank() != dims.size() ||
        isStaticShape(*v->type().shape))
      continue;
    Shape shape = *v->type().shape;
    for (size_t i = 0; i < dims.size(); ++i)
      if (!shape[i].isStatic()) shape[i] = Dim(dims[i]);
    v->setType(TensorType(v->type().dtype, std::move(shape)));
    fixed.push_back(fmt::format("{}={}", in.name, fmt::join(dims, ",")));
  }
  if (!fixed.empty())
    spdlog::info("input shapes fixed from the input data: {} (--dynamic-shapes keeps them)",
                 fmt::join(fixed, " "));
}

// A file name for a value name: path separators and other awkward
// characters become '_'.
std::string fileNameFor(const std::string& name) {
  std::string out;
  for (char c : name)
    out +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ? c : '_';
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

// File names for values named `names` (fileNameFor + ".npy"), in order. Two different value names
// can map to one file ("a/b" and "a_b"): that is an error before anything is written, never a
// silent overwrite. A value returned twice is the same data and keeps its one file.
std::vector<std::string> uniqueFileNames(const std::vector<std::string>& names) {
  std::map<std::string, std::string> owner;  // file name -> value name
  std::vector<std::string> files;
  for (const std::string& name : names) {
    std::string file = fileNameFor(name) + ".npy";
    auto [it, added] = owner.emplace(file, name);
    if (!added && it->second != name)
      throw Error(StatusCode::kInvalidArgument,
                  fmt::format("values '{}' and '{}' would both be written to {}; rename one",
                              it->second, name, file));
    files.push_back(std::move(file));
  }
  return files;
}

std::vector<std::string> namesOf(const std::vector<NamedTensor>& tensors) {
  std::vector<std::string> names;
  for (const NamedTensor& t : tensors) names.push_back(t.name);
  return names;
}

// f16 or bf16 when some op other than Cast computes on such values: the
// model as written then has only that precision, so --check judges it as
// --precision would (kUndefined otherwise).
DataType halfComputeType(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    if (node->opType() == "Cast") continue;
    for (const Value* in : node->inputs())
      if (in && (in->type().dtype == DataType::kFloat16 || in->type().dtype == DataType::kBFloat16))
        return in->type().dtype;
  }
  return DataType::kUndefined;
}

struct Latency {
  double median = 0, min = 0, max = 0;
};

Latency summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  Latency l;
  if (ms.empty()) return l;
  l.min = ms.front();
  l.max = ms.back();
  size_t n = ms.size();
  l.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  return l;
}

// Median time per step over the profiled runs, keyed by scope and step
// index; a nested step run several times in one request (a Loop body's)
// counts their sum for that run.
struct StepTime {
  runtime::StepInfo step;
  std::vector<double> ms;
  size_t bytes = 0;  // a copy's bytes
};
using StepKey = std::pair<std::string, size_t>;

// The node column of a profile row: a nested step's scope, then its name.
std::string scopedName(const runtime::StepInfo& step) {
  return step.scope.empty() ? step.name : step.scope + "/" + step.name;
}

// A failure with the --limit that raises the limit it names, if any.
void throwWithHint(const Status& status) {
  if (!status.isOk()) throw Error(status.code(), withLimitHint(status));
}

// How --check judges the outputs.
struct CheckRule {
  double tolerance = 1e-4;
  api::ToleranceOf of = api::ToleranceOf::kElement;
};

// The option mistakes found before any work, and the rule --check follows.
CheckRule validateOptions(const RunCommandOptions& options) {
  if (options.runs < 1) throw UsageError("--runs must be at least 1");
  if (options.warmup < 0) throw UsageError("--warmup must not be negative");
  if (options.threads < 0) throw UsageError("--threads must not be negative");
  if (!(options.tolerance >= 0)) throw UsageError("--tolerance must not be negative");
  if (Status st = api::checkPrecision(options.precision); !st.isOk())
    throw UsageError("--" + st.message());
  CheckRule rule{options.tolerance, api::ToleranceOf::kElement};
  // Reduced precision is judged against each output's scale (file
  // comment). bf16 keeps 8 mantissa bits and the errors compound over a
  // network's depth: zoo models land at 0.3-0.9% of their scale. fp16
  // keeps 11 and tf32 11 (10 stored); both accumulate in fp32.
  if (!options.precision.empty() && options.precision != "fp32") {
    rule.of = api::ToleranceOf::kScale;
    if (!options.toleranceGiven) rule.tolerance = options.precision == "bf16" ? 2e-2 : 1e-2;
  }
  return rule;
}

// Everything a run needs, read and built as the options say.
struct Prepared {
  std::unique_ptr<api::InferenceSession> session;
  std::vector<NamedTensor> inputs;
  std::vector<std::string> randomNames;
  std::unique_ptr<Graph> original;  // as loaded, for --check
  std::vector<std::string> backends;
  CheckRule rule;
};

// A model that computes in f16 or bf16 itself is judged by its outputs'
// scale: the reference rounds to half between ops, backends compute in f32.
void adjustRuleForHalfModels(const Graph& graph, const RunCommandOptions& options,
                             CheckRule& rule) {
  DataType half = halfComputeType(graph);
  if (!options.check || options.toleranceGiven || half == DataType::kUndefined ||
      rule.of != api::ToleranceOf::kElement)
    return;
  rule.of = api::ToleranceOf::kScale;
  rule.tolerance = half == DataType::kBFloat16 ? 2e-2 : 1e-2;
  spdlog::info("--check: the model computes in {}; judging by the output scale, tolerance {}",
               half == DataType::kBFloat16 ? "bf16" : "f16", rule.tolerance);
}

// A model that quantizes at run time (DynamicQuantizeLinear) is judged by
// its outputs' scale too: a one-ulp difference in a float before a
// quantization (oneDNN's LayerNorm or attention against the reference's)
// moves that element one quantization level, and such moves add up layer
// after layer; 2e-3 of the scale is what ONNX Runtime's own fused and
// unfused runs of RoBERTa quantized differ by.
void adjustRuleForRequantizingModels(const Graph& graph, const RunCommandOptions& options,
                                     CheckRule& rule) {
  if (!options.check || options.toleranceGiven || rule.of != api::ToleranceOf::kElement) return;
  const bool requantizes = std::any_of(graph.nodes().begin(), graph.nodes().end(), [](Node* n) {
    return n->domain().empty() && n->opType() == "DynamicQuantizeLinear";
  });
  if (!requantizes) return;
  rule.of = api::ToleranceOf::kScale;
  rule.tolerance = 2e-3;
  spdlog::info(
      "--check: the model quantizes at run time; judging by the output scale, "
      "tolerance {}",
      rule.tolerance);
}

// The backends as `run` resolves them (--backend or $SUBGRAPH_BACKEND,
// plugins loaded once); the session gives them its options.
api::InferenceOptions sessionOptions(const RunCommandOptions& options) {
  std::optional<plugins::BackendSelection> selection = chosenSelection(options);
  auto pluginOptions = api::parsePluginOptions(
      options.pluginOptions, selection ? selection->names() : std::vector<std::string>{});
  if (!pluginOptions.isOk()) throw Error(pluginOptions.status());
  api::InferenceOptions io;
  io.selection = std::move(selection);
  io.threads = options.threads;
  io.precision = options.precision;
  io.pluginOptions = std::move(pluginOptions).value();
  io.passes = options.passes.empty() ? "default" : options.passes;
  io.memoryLimitBytes = memoryLimit();  // 0: none known
  io.work = workLimits();
  return io;
}

// The session through the library front end (api::InferenceSession): the
// CLI resolves the backend list itself only to report list mistakes as
// usage errors, and passes precision and plugin options through the ABI.
Prepared prepare(const RunCommandOptions& options) {
  Prepared p;
  p.rule = validateOptions(options);
  // The library's errors here are of kind kUsage: main() exits 2.
  api::InferenceOptions io = sessionOptions(options);
  p.backends = io.selection ? io.selection->names() : std::vector<std::string>{};
  if (io.selection) {
    // An option the plugin does not declare, or a value it does not take,
    // is a mistyped command line: say so before loading the model.
    plugins::PluginRunOptions run;
    run.precision = options.precision;
    run.options = io.pluginOptions;
    if (Status st = io.selection->setRunOptions(run); !st.isOk()) throw Error(st);
  }

  LoadOptions load;
  load.inputShapes = parseShapeSpecs(options.shapes);
  load.allowUnknownOps = options.allowUnknownOps;
  std::unique_ptr<Graph> graph = loadModel(options.file, load);
  adjustRuleForHalfModels(*graph, options, p.rule);
  adjustRuleForRequantizingModels(*graph, options, p.rule);
  p.inputs = gatherInputs(*graph, options, p.randomNames);
  if (!options.dynamicShapes) fixShapesFromInputs(*graph, p.inputs, p.randomNames);
  if (!options.outputDir.empty()) {
    // A file-name clash fails now, not after a long run.
    std::vector<std::string> outputNames;
    for (const Value* v : graph->outputs())
      if (v) outputNames.push_back(v->name());
    uniqueFileNames(outputNames);
    uniqueFileNames(p.randomNames);
  }
  // Cloned before the passes: --check then also checks them, against the
  // model exactly as written.
  if (options.check) p.original = graph->clone();

  auto made = api::InferenceSession::create(std::move(graph), std::move(io));
  if (!made.isOk()) throwWithHint(made.status());
  p.session = std::move(made).value();
  for (const std::string& warning : p.session->warnings()) spdlog::warn("{}", oneLine(warning));
  if (auto [before, after] = p.session->passNodes(); before != after)
    spdlog::info("passes before partitioning: nodes {} -> {}", before, after);
  return p;
}

// What the timed runs measured.
struct Measured {
  Latency latency;
  std::vector<StepTime> steps;  // slowest first
  RunResult last;
};

Measured measure(const Prepared& p, const RunCommandOptions& options) {
  runtime::RunOptions runOptions;
  runOptions.profile = options.profile || options.json;
  for (int i = 0; i < options.warmup; ++i) {
    StatusOr<RunResult> r = p.session->run(p.inputs);
    if (!r) throwWithHint(r.status());
  }
  std::vector<double> latencies;
  std::map<StepKey, StepTime> stepTimes;
  Measured m;
  for (int i = 0; i < options.runs; ++i) {
    StatusOr<RunResult> r = p.session->run(p.inputs, runOptions);
    if (!r) throwWithHint(r.status());
    latencies.push_back(r.value().wallMs);
    std::map<StepKey, double> thisRun;
    for (const runtime::StepTiming& t : r.value().steps) {
      StepKey key{t.step.scope, t.step.index};
      thisRun[key] += t.ms;
      stepTimes[key].step = t.step;
      stepTimes[key].bytes = t.bytes;
    }
    for (const auto& [key, ms] : thisRun) stepTimes[key].ms.push_back(ms);
    m.last = std::move(r).value();
  }
  m.latency = summarize(latencies);
  for (auto& [key, st] : stepTimes) m.steps.push_back(st);
  std::stable_sort(m.steps.begin(), m.steps.end(), [](const StepTime& a, const StepTime& b) {
    return summarize(a.ms).median > summarize(b.ms).median;
  });
  return m;
}

// Writes each output (and the random inputs) under --output-dir; returns
// the output files written.
std::vector<std::string> writeOutputs(const Prepared& p, const Measured& m,
                                      const RunCommandOptions& options) {
  std::vector<std::string> written;
  if (options.outputDir.empty()) return written;
  std::error_code ec;
  std::filesystem::create_directories(options.outputDir, ec);
  if (ec) throw Error(options.outputDir + ": cannot create the output folder: " + ec.message());
  std::vector<std::string> files = uniqueFileNames(namesOf(m.last.outputs));
  for (size_t o = 0; o < m.last.outputs.size(); ++o) {
    std::string path = (std::filesystem::path(options.outputDir) / files[o]).string();
    throwIfError(runtime::writeNpyFile(path, m.last.outputs[o].tensor));
    written.push_back(path);
  }
  if (p.randomNames.empty()) return written;
  std::filesystem::path dir = std::filesystem::path(options.outputDir) / "inputs";
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot create the folder: " + ec.message());
  std::vector<NamedTensor> random;
  for (const NamedTensor& in : p.inputs)
    if (std::find(p.randomNames.begin(), p.randomNames.end(), in.name) != p.randomNames.end())
      random.push_back(in);
  std::vector<std::string> inputFiles = uniqueFileNames(namesOf(random));
  for (size_t i = 0; i < random.size(); ++i)
    throwIfError(runtime::writeNpyFile((dir / inputFiles[i]).string(), random[i].tensor));
  return written;
}

nlohmann::ordered_json outputsJson(const Measured& m, const std::vector<std::string>& written,
                                   const std::vector<api::Comparison>& comparisons,
                                   const CheckRule& rule) {
  nlohmann::ordered_json outs = nlohmann::ordered_json::array();
  for (size_t o = 0; o < m.last.outputs.size(); ++o) {
    const NamedTensor& out = m.last.outputs[o];
    nlohmann::ordered_json entry = {{"name", out.name},
                                    {"dtype", std::string(dataTypeName(out.tensor.dtype()))},
                                    {"shape", out.tensor.dims()}};
    if (o < written.size()) entry["file"] = written[o];
    if (o < comparisons.size())
      entry["check"] = {{"max_abs_error", comparisons[o].maxAbs},
                        {"max_rel_error", comparisons[o].maxRel},
                        {"scaled_error", api::scaledError(comparisons[o])},
                        {"tolerance", rule.tolerance},
                        {"tolerance_of", rule.of == api::ToleranceOf::kScale ? "scale" : "element"},
                        {"ok", comparisons[o].failing == 0}};
    outs.push_back(std::move(entry));
  }
  return outs;
}

nlohmann::ordered_json stepsJson(const Measured& m, const RunCommandOptions& options,
                                 nlohmann::ordered_json& json) {
  nlohmann::ordered_json regions = nlohmann::ordered_json::array();
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  // Every copy the session runs per request (between devices or layouts),
  // with its bytes, and where the host waited for a device mid-run.
  nlohmann::ordered_json copies = nlohmann::ordered_json::array();
  for (const StepTime& st : m.steps) {
    nlohmann::ordered_json entry = {{"name", scopedName(st.step)},
                                    {"op", st.step.op},
                                    {"backend", st.step.backend},
                                    {"provider", st.step.provider},
                                    {"ms", summarize(st.ms).median}};
    (st.step.isRegion ? regions : nodes).push_back(entry);
    if (st.step.isCopy)
      copies.push_back({{"name", scopedName(st.step)},
                        {"backend", st.step.backend},
                        {"bytes", st.bytes},
                        {"ms", summarize(st.ms).median}});
  }
  json["regions"] = std::move(regions);
  if (options.profile) json["nodes"] = std::move(nodes);
  json["copies"] = std::move(copies);
  nlohmann::ordered_json waits = nlohmann::ordered_json::array();
  for (const runtime::HostWait& w : m.last.hostWaits)
    waits.push_back({{"step", w.step}, {"waited_for", w.waitedFor}});
  return waits;
}

nlohmann::ordered_json memoryJson(const runtime::PlanReport& plan) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const runtime::DeviceMemoryReport& d : plan.devices)
    devices.push_back({{"device", d.device},
                       {"peak_dynamic_bytes", d.peakDynamicBytes},
                       {"dynamic_block_bytes", d.dynamicBlockBytes},
                       {"separate_bytes", d.separateBytes}});
  return {{"frame_bytes", plan.frameBytes},
          {"static_bytes", plan.staticBytes},
          {"precomputed_bytes", plan.precomputedBytes},
          {"devices", std::move(devices)}};
}

void printJson(const Prepared& p, const Measured& m, const std::vector<std::string>& written,
               const std::vector<api::Comparison>& comparisons, const RunCommandOptions& options) {
  nlohmann::ordered_json json;
  json["model"] = options.file;
  json["backends"] = p.backends;
  json["threads"] = options.threads;
  json["runs"] = options.runs;
  json["latency_ms"] = {
      {"median", m.latency.median}, {"min", m.latency.min}, {"max", m.latency.max}};
  json["throughput_per_s"] = m.latency.median > 0 ? 1000.0 / m.latency.median : 0;
  json["outputs"] = outputsJson(m, written, comparisons, p.rule);
  json["host_waits"] = stepsJson(m, options, json);
  if (auto plan = p.session->session().planReport()) json["memory"] = memoryJson(*plan);
  std::cout << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void printProfile(const Measured& m) {
  // Nested steps are part of their If or Loop step's time.
  double total = 0;
  for (const StepTime& st : m.steps)
    if (st.step.scope.empty()) total += summarize(st.ms).median;
  std::cout << fmt::format("{:>10}  {:>6}  {:<10}  {:<28}  {}\n", "ms", "%", "backend", "op",
                           "node");
  for (const StepTime& st : m.steps) {
    double ms = summarize(st.ms).median;
    std::string note = st.step.isRegion ? " [region]"
                       : st.step.isCopy ? fmt::format(" [{} bytes]", st.bytes)
                                        : "";
    std::cout << fmt::format("{:>10.3f}  {:>5.1f}%  {:<10}  {:<28}  {}{}\n", ms,
                             total > 0 ? 100 * ms / total : 0, st.step.backend, st.step.op,
                             scopedName(st.step), note);
  }
  std::cout << fmt::format("host waits mid-run: {}\n", m.last.hostWaits.size());
  for (const runtime::HostWait& w : m.last.hostWaits)
    std::cout << fmt::format("  {} waited for {}\n", w.step, w.waitedFor);
}

void printText(const Prepared& p, const Measured& m, const std::vector<std::string>& written,
               const std::vector<api::Comparison>& comparisons, const RunCommandOptions& options) {
  const char* ofScale = p.rule.of == api::ToleranceOf::kScale ? " of the output scale" : "";
  for (const NamedTensor& out : m.last.outputs)
    std::cout << fmt::format("output {}: {}[{}]\n", out.name, dataTypeName(out.tensor.dtype()),
                             fmt::join(out.tensor.dims(), ", "));
  for (const std::string& path : written) std::cout << "wrote " << path << "\n";
  if (options.runs > 1 || options.warmup > 0)
    std::cout << fmt::format(
                     "latency: median {:.3f} ms, min {:.3f} ms, max {:.3f} ms over {} runs\n",
                     m.latency.median, m.latency.min, m.latency.max, options.runs)
              << fmt::format("throughput: {:.2f} inferences/s\n",
                             m.latency.median > 0 ? 1000.0 / m.latency.median : 0);
  for (const api::Comparison& c : comparisons) {
    if (c.shapeMismatch)
      std::cout << fmt::format("check {}: shape or type differs from the reference\n", c.name);
    else
      std::cout << fmt::format(
          "check {}: max abs error {:.3g}, max rel error {:.3g}, max abs error / max "
          "|reference| {:.3g}, {}\n",
          c.name, c.maxAbs, c.maxRel, api::scaledError(c),
          c.failing
              ? fmt::format("{} elements past tolerance {}{}", c.failing, p.rule.tolerance, ofScale)
              : "ok");
  }
  if (options.profile) printProfile(m);
}

void failOnCheck(const std::vector<api::Comparison>& comparisons, const CheckRule& rule) {
  const char* ofScale = rule.of == api::ToleranceOf::kScale ? " of the output scale" : "";
  for (const api::Comparison& c : comparisons)
    if (c.failing)
      throw Error(
          StatusCode::kInvalidArgument,
          c.shapeMismatch
              ? fmt::format("check failed: output '{}' differs in shape or type", c.name)
              : fmt::format("check failed: output '{}' has {} elements past tolerance {}{} "
                            "(max abs error {:.3g}, max rel error {:.3g})",
                            c.name, c.failing, rule.tolerance, ofScale, c.maxAbs, c.maxRel));
}

// What a pipelined run (in one process or across ranks) starts from: the
// session's options, the inputs, and one micro-batch's input dims.
struct PipelineStart {
  api::InferenceOptions io;
  std::vector<NamedTensor> inputs;
  api::InputShapes microBatch;
};

// The inputs (random or from --input) and one micro-batch's dims. The
// model keeps its free batch dim (the micro-batches split it); --shape
// sizes only the random inputs.
PipelineStart pipelineStart(const RunCommandOptions& options, const Graph& graph) {
  PipelineStart start;
  std::unique_ptr<Graph> sized = graph.clone();
  throwIfError(api::applyInputShapes(*sized, parseShapeSpecs(options.shapes)));
  std::vector<std::string> randomNames;
  start.inputs = gatherInputs(*sized, options, randomNames);
  for (const NamedTensor& in : start.inputs) {
    std::vector<int64_t> dims = in.tensor.dims();
    if (!dims.empty() && options.microBatches > 0)
      dims[0] /= static_cast<int64_t>(options.microBatches);
    start.microBatch[in.name] = std::move(dims);
  }
  return start;
}

void writeNpyOutputs(const RunCommandOptions& options, const std::vector<NamedTensor>& outputs) {
  if (options.outputDir.empty()) return;
  std::filesystem::create_directories(options.outputDir);
  for (const NamedTensor& out : outputs)
    throwIfError(runtime::writeNpyFile(
        (std::filesystem::path(options.outputDir) / (fileNameFor(out.name) + ".npy")).string(),
        out.tensor));
}

// `subgraph run`: everything but I/O and printing is the library's.
// --stages: the model cut into pipeline stages, each a session of its own,
// run on micro-batches of the input batch, pipelined and, to compare, the
// stages in turn; both must give the same outputs.
void runPipelined(const RunCommandOptions& options, std::vector<api::StageDevice> devices) {
  if (options.check || options.profile || options.json)
    throw UsageError("--stages runs the pipeline: --check, --profile and --json are not taken");
  api::InferenceOptions io = sessionOptions(options);
  LoadOptions load;
  load.allowUnknownOps = options.allowUnknownOps;
  std::unique_ptr<Graph> graph = loadModel(options.file, load);
  PipelineStart begun = pipelineStart(options, *graph);
  const std::vector<NamedTensor>& inputs = begun.inputs;
  const api::InputShapes& microBatch = begun.microBatch;
  auto made = api::PipelinedSession::create(std::move(graph), std::move(io), std::move(devices),
                                            microBatch);
  if (!made.isOk()) throwWithHint(made.status());
  const api::PipelinedSession& session = **made;
  std::cout << api::stagesSummary(session.plan());
  std::vector<double> pipelined, inTurn;
  std::vector<NamedTensor> last, turned;
  // Timed alternately, which goes first swapping each run, so that neither
  // always follows the other.
  auto timed = [&](bool piped, std::vector<NamedTensor>& out) {
    auto start = std::chrono::steady_clock::now();
    StatusOr<std::vector<NamedTensor>> got = piped
                                                 ? session.run(inputs, options.microBatches)
                                                 : session.runInTurn(inputs, options.microBatches);
    if (!got.isOk()) throwWithHint(got.status());
    out = std::move(got).value();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  for (int r = 0; r < options.warmup + options.runs; ++r) {
    const bool pipedFirst = r % 2 == 0;
    double first = timed(pipedFirst, pipedFirst ? last : turned);
    double second = timed(!pipedFirst, pipedFirst ? turned : last);
    if (r < options.warmup) continue;
    pipelined.push_back(pipedFirst ? first : second);
    inTurn.push_back(pipedFirst ? second : first);
  }
  bool same = last.size() == turned.size();
  for (size_t o = 0; same && o < last.size(); ++o)
    same = last[o].tensor.dims() == turned[o].tensor.dims() &&
           std::equal(last[o].tensor.bytes().begin(), last[o].tensor.bytes().end(),
                      turned[o].tensor.bytes().begin(), turned[o].tensor.bytes().end());
  if (!same)
    throw Error(StatusCode::kInternal, "the pipelined outputs differ from the stages' in turn");
  Latency p = summarize(pipelined), t = summarize(inTurn);
  std::cout << fmt::format(
      "{} micro-batches over {} stages, {} runs: pipelined median {:.3f} ms, the stages in turn "
      "{:.3f} ms ({:.2f}x); outputs equal\n",
      options.microBatches, session.plan().stages.size(), options.runs, p.median, t.median,
      p.median > 0 ? t.median / p.median : 0.0);
  writeNpyOutputs(options, last);
}

// One error line, as main() prints it.
void printErrorLine(const std::string& message) {
  std::string line = "subgraph: error: " + oneLine(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

// What a rank that mpirun ends (SIGTERM: another rank died) prints; set
// before the handler is installed, read only by it.
char terminatedLine[256];

extern "C" void onTerminated(int) {
  ssize_t ignored = write(STDERR_FILENO, terminatedLine, std::strlen(terminatedLine));
  (void)ignored;
  _exit(1);
}

// Rank 0's part of a run on ranks: the timed runs, the summary and the
// outputs.
void runOnRankZero(const RunCommandOptions& options, api::MpiPipelinedSession& session,
                   const std::vector<NamedTensor>& inputs) {
  std::cout << api::stagesSummary(session.plan()) << std::flush;
  std::vector<double> ms;
  std::vector<NamedTensor> last;
  for (int r = 0; r < options.warmup + options.runs; ++r) {
    auto began = std::chrono::steady_clock::now();
    StatusOr<std::vector<NamedTensor>> got = session.run(inputs, options.microBatches);
    if (!got.isOk()) throwWithHint(got.status());
    last = std::move(got).value();
    if (r >= options.warmup)
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began)
              .count());
  }
  throwIfError(session.close());
  std::cout << fmt::format("{} micro-batches over {} ranks, {} runs: median {:.3f} ms\n",
                           options.microBatches, session.ranks(), options.runs,
                           summarize(ms).median);
  writeNpyOutputs(options, last);
}

// Under mpirun with --stages: one stage per rank (api::MpiPipelinedSession).
// Every rank loads the model and plans the same stages; rank 0 feeds the
// inputs, times the runs, prints and writes the outputs, and the others
// serve their stage. Only rank 0 prints an error: the one line names the
// rank and stage that failed. A rank that cannot load its model still
// joins the setup, so the others hear why instead of waiting.
void runOnRanks(const RunCommandOptions& options, std::vector<api::StageDevice> devices) {
  if (options.check || options.profile || options.json)
    throw UsageError("--stages runs the pipeline: --check, --profile and --json are not taken");
  const int rank = api::mpiLaunchedRank();
  std::snprintf(terminatedLine, sizeof terminatedLine,
                "subgraph: error: rank %d (stage %d on %s): ended by mpirun, after another rank "
                "of the job failed\n",
                rank, rank,
                rank >= 0 && size_t(rank) < devices.size() ? devices[rank].name.c_str() : "?");
  std::signal(SIGTERM, onTerminated);
  api::InferenceOptions io = sessionOptions(options);
  StatusOr<std::unique_ptr<Graph>> graph = Status(StatusCode::kInternal, "not loaded");
  PipelineStart start;
  try {
    LoadOptions load;
    load.allowUnknownOps = options.allowUnknownOps;
    graph = loadModel(options.file, load);
    start = pipelineStart(options, **graph);
  } catch (const Error& e) {
    graph = Status(e.code(), e.what());
  }
  auto made = api::MpiPipelinedSession::create(std::move(graph), std::move(io), std::move(devices),
                                               start.microBatch, {options.mpiTimeout});
  if (!made.isOk()) {
    // Every rank has the same error. Rank 0 prints it before MPI ends: the
    // others cannot leave MPI_Finalize before it arrives there, so mpirun
    // cannot end rank 0 (on another rank's exit status) before the line.
    std::signal(SIGTERM, SIG_DFL);
    if (rank == 0) printErrorLine(made.status().message());
    api::mpiFinalize();
    requestedExitCode() = made.status().code() == StatusCode::kUsage ? 2 : 1;
    return;
  }
  api::MpiPipelinedSession& session = **made;
  if (session.rank() != 0) {
    StatusOr<size_t> served = session.serve();
    if (served.isOk()) return api::mpiFinalize();
    // Rank 0 has the error and prints it; this rank lingers so that its
    // exit status does not make mpirun end rank 0 first. The job ends
    // with rank 0, mpirun ending this rank then.
    std::signal(SIGTERM, SIG_DFL);
    std::this_thread::sleep_for(std::chrono::seconds(5));
    return void(requestedExitCode() = 1);
  }
  runOnRankZero(options, session, start.inputs);
  api::mpiFinalize();
}

void runModel(const RunCommandOptions& options) {
  std::vector<api::StageDevice> devices =
      parseStageDevices(options.stages, options.devices, options.memoryLimits);
  if (!devices.empty() && api::mpiLaunchedRanks() > 1)
    return runOnRanks(options, std::move(devices));
  if (!devices.empty()) return runPipelined(options, std::move(devices));
  if (options.microBatches != 1) throw UsageError("--micro-batches needs --stages or --devices");
  Prepared p = prepare(options);
  Measured m = measure(p, options);
  std::vector<std::string> written = writeOutputs(p, m, options);
  std::vector<api::Comparison> comparisons;
  if (options.check) {
    auto compared =
        api::compareWithReference(*p.original, p.inputs, m.last.outputs, p.rule.tolerance,
                                  p.rule.of, memoryLimit(), workLimits());
    if (!compared.isOk()) throwWithHint(compared.status());
    comparisons = std::move(compared).value();
  }
  if (options.json)
    printJson(p, m, written, comparisons, options);
  else
    printText(p, m, written, comparisons, options);
  std::cout.flush();
  failOnCheck(comparisons, p.rule);
}

const CommandRegistration kRun("run", [](CLI::App& app) {
  auto options = std::make_shared<RunCommandOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model on the runtime and write its outputs");
  cmd->add_option("MODEL", options->file, "Model file (.sg text graph, .onnx)")->required();
  cmd->add_option("--stages", options->stages,
                  "Run the model cut into N pipeline stages (see partition --stages), pipelined "
                  "over --micro-batches parts of the input batch")
      ->type_name("N")
      ->check(CLI::Range(size_t{1}, size_t{4096}));
  cmd->add_option("--devices", options->devices, "The stages' devices, one stage each")
      ->type_name("LIST");
  cmd->add_option("--memory-limit", options->memoryLimits,
                  "Memory of each stage's device: one size for all or one each")
      ->type_name("SIZE[,SIZE...]");
  cmd->add_option("--micro-batches", options->microBatches,
                  "With --stages: parts of dim 0 the pipeline runs (default 1)")
      ->type_name("M")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  if (api::mpiBuilt())
    cmd->add_option("--mpi-timeout", options->mpiTimeout,
                    "Under mpirun: seconds a rank waits for the next message within a run (and "
                    "for the others at setup) before it ends the job with an error (default 60)")
        ->type_name("SECONDS")
        ->check(CLI::Range(0.001, 86400.0));
  cmd->add_option("--backend", options->backends,
                  "Partition for these backends (A,B; default $SUBGRAPH_BACKEND; NONE for none)")
      ->each([options](const std::string&) { options->backendsGiven = true; });
  addShapeOption(*cmd, options->shapes);
  addPassesOption(*cmd, options->passes);
  cmd->add_option("--input", options->inputs,
                  "Feed input NAME from a .npy or .pb file (NAME=FILE)");
  cmd->add_option("--random-inputs", options->randomSeed,
                  "Fill inputs not given by --input from this seed")
      ->check(CLI::NonNegativeNumber)
      ->each([options](const std::string&) { options->randomGiven = true; });
  cmd->add_option("--output-dir", options->outputDir, "Write each output as DIR/<name>.npy");
  // Bounded so that a typo cannot ask for a billion runs or threads
  // (oneTBB crashes on an arena of 2^31 slots); docs/cli.md lists them.
  cmd->add_option("--runs", options->runs, "Timed runs (reports latency when > 1)")
      ->check(CLI::Range(1, kMaxRuns));
  cmd->add_option("--warmup", options->warmup, "Untimed runs before the timed ones")
      ->check(CLI::Range(0, kMaxRuns));
  cmd->add_option("--threads", options->threads, "Worker threads (0: one per core)")
      ->check(CLI::Range(0, static_cast<int>(runtime::kMaxThreads)));
  cmd->add_flag("--check", options->check,
                "Compare with the unpartitioned graph on the reference backend");
  cmd->add_option("--tolerance", options->tolerance,
                  "Allowed |a-b| <= T*(1+|b|) for --check (default 1e-4); with --precision "
                  "bf16, fp16 or tf32, |a-b| <= T*(1+max|b|) over the output (default 2e-2 bf16, "
                  "1e-2 fp16 and tf32)")
      ->each([options](const std::string&) { options->toleranceGiven = true; });
  cmd->add_option("--precision", options->precision,
                  "fp32, bf16, fp16 or tf32: compute precision for backends that offer it "
                  "(onednn: bf16 on AVX512-BF16/AMX CPUs; cudnn: fp16, tf32); passed to plugins "
                  "in their kernel context");
  cmd->add_option("--plugin-option", options->pluginOptions,
                  "PLUGIN.NAME=VALUE: an option of one chosen plugin, for its selection and "
                  "kernels (repeatable), e.g. onednn.precision=fp32; `subgraph plugins` lists "
                  "each plugin's options");
  cmd->add_flag("--dynamic-shapes", options->dynamicShapes,
                "Keep the symbolic dims of inputs fed by --input (by default they are fixed to "
                "the data's dims, so that the passes fold the shape arithmetic)");
  cmd->add_flag("--json", options->json, "Print one JSON object");
  cmd->add_flag("--profile", options->profile, "Print per-node and per-region times");
  cmd->add_flag("--allow-unknown-ops", options->allowUnknownOps,
                "Accept ops without a schema when loading");
  cmd->add_flag("--allow-fallback", options->allowFallback,
                "Skip a backend plugin that cannot be used or fails while partitioning (with a "
                "warning) instead of failing; also SUBGRAPH_BACKEND_FALLBACK=1");
  cmd->callback([options] { runModel(*options); });
});

}  // namespace
}  // namespace subgraph::cli
