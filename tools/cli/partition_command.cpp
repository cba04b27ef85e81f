//===- tools/cli/partition_command.cpp - `subgraph partition` -------------===//
//
// Partitions a model for one or more backends and reports what was fused
// and why the rest was not:
//
//   subgraph partition MODEL [--backend A,B] [--report FILE.json]
//                            [--dot FILE.dot] [--svg FILE.svg] [-o OUT]
//
// Backends come from --backend, else from $SUBGRAPH_BACKEND ("NONE" turns
// partitioning off): names of built-in backends (convbn, convbnrelu,
// convaddrelu), names of plugins on the plugin search path, or absolute
// paths of plugin .so files (subgraph/plugins/plugin_loader.h). A plugin
// that cannot be used, or that fails while partitioning, is an error
// unless --allow-fallback (or SUBGRAPH_BACKEND_FALLBACK=1) skips it with a
// warning.
//
// The picture is the model as loaded, each region drawn as a coloured
// cluster labelled with its backend, so a reader sees which original nodes
// each fused node stands for; nodes left out for a reason other than "no
// selector matched" carry that reason.
//
//===----------------------------------------------------------------------===//
#include <fmt/format.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "allocator.h"
#include "cli_util.h"
#include "command.h"
#include "subgraph/analysis/graphviz.h"
#include "subgraph/api/inference_session.h"
#include "subgraph/api/pipeline.h"
#include "subgraph/api/stages.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/partition/partitioner.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/support/file_io.h"

extern char** environ;

namespace subgraph::cli {
namespace {

using partition::PartitionReport;

// What loading, simplifying and partitioning `file` may allocate, for
// HeapPrefault: a text graph holds about 5 bytes of objects per byte of
// text after loading and as much again after partitioning (10^6 nodes:
// 82 MB of text, 440 MB loaded, 950 MB at the end); an ONNX file is mostly
// weights, held once. An overestimate costs address space only, so the
// factors are generous; 0 (no helper) for standard input or a missing file.
size_t heapEstimate(const std::string& file) {
  std::error_code ec;
  if (file == "-") return 0;
  const uintmax_t bytes = std::filesystem::file_size(file, ec);
  if (ec) return 0;
  const uintmax_t factor = std::filesystem::path(file).extension() == ".onnx" ? 2 : 16;
  constexpr uintmax_t kCap = uintmax_t{4} << 30;
  return static_cast<size_t>(std::min(bytes * factor, kCap));
}

struct PartitionCommandOptions {
  std::string file;
  std::string backends;
  bool backendsGiven = false;
  std::string report;
  std::string dot;
  std::string svg;
  std::string output;
  bool json = false;
  bool training = false;
  bool allowUnknownOps = false;
  bool allowFallback = false;
  bool inlineConstants = false;
  std::vector<std::string> shapes;
  std::string passes = "default";
  std::string traversal = "per-backend";
  std::string precision;
  std::vector<std::string> pluginOptions;  // "<plugin>.<name>=<value>"
  size_t stages = 0;                       // pipeline stages (0: none)
  std::string devices;                     // "emu:0,emu:1": one stage each
  std::string memoryLimits;                // "512M" or one per device
  std::string stageModels;                 // folder for stage<k>.sg
};

// The drawing's clusters by stage: a fused node's region and every other
// node go where the plan put them.
DotOptions stagePicture(const Graph& original, const PartitionReport& report,
                        const api::StagePlan& plan) {
  std::map<std::string, int> stageOf;
  for (size_t k = 0; k < plan.stages.size(); ++k)
    for (const std::string& node : plan.stages[k].nodes) stageOf[node] = static_cast<int>(k);
  std::map<NodeId, std::string> placedAs;
  for (const partition::RegionReport& region : report.regions)
    if (region.scope.empty())
      for (NodeId id : region.nodeIds) placedAs[id] = region.fusedNode;
  DotOptions dot;
  dot.showConstants = false;
  for (const Node* node : original.nodes()) {
    auto as = placedAs.find(node->id());
    auto stage = stageOf.find(as == placedAs.end() ? node->displayName() : as->second);
    if (stage == stageOf.end()) continue;
    const api::Stage& s = plan.stages[static_cast<size_t>(stage->second)];
    dot.clusters[node->id()] = DotCluster{
        stage->second,
        fmt::format("stage {} on {}: {}", stage->second, s.device, formatBytes(s.memoryBytes())),
        dotPaletteColor(static_cast<size_t>(stage->second))};
  }
  return dot;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The backend list: --backend, else $SUBGRAPH_BACKEND (read with
// secure_getenv, so a setuid context ignores it), else a usage error that
// lists what there is to choose from.
std::string backendList(const PartitionCommandOptions& options, std::string& origin) {
  origin = "--backend";
  if (options.backendsGiven) return options.backends;
  const char* env = secure_getenv("SUBGRAPH_BACKEND");
  if (!env || !*env)
    throw UsageError(
        "no backend chosen: pass --backend A,B or set SUBGRAPH_BACKEND (NONE "
        "for none); available: " +
        joined(partition::BackendRegistry::global().names()) +
        ", or a plugin name (see `subgraph plugins`)");
  origin = "SUBGRAPH_BACKEND";
  return env;
}

DotOptions regionPicture(const PartitionReport& report) {
  DotOptions dot;
  dot.showConstants = false;
  for (const partition::RegionReport& region : report.regions) {
    if (!region.scope.empty()) continue;  // the drawing shows the top-level graph
    DotCluster cluster{
        region.id, fmt::format("region {}: {} ({})", region.id, region.backend, region.property),
        dotPaletteColor(static_cast<size_t>(region.id))};
    for (NodeId id : region.nodeIds) dot.clusters[id] = cluster;
  }
  for (const partition::RejectedNode& node : report.rejected)
    if (node.kind != "no-selector" && node.nodeId != partition::RejectedNode::kNoId)
      dot.notes[node.nodeId] = node.reason;
  return dot;
}

// Fills `fd`, an anonymous file (no name anyone could replace or point
// elsewhere), with `bytes` and rewinds it; for Graphviz's stdin.
void fillAnonymousFile(const UniqueFd& fd, const std::string& bytes) {
  if (fd.get() < 0) throw Error(std::string("cannot make a file for Graphviz: ") + strerror(errno));
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(std::string("cannot write a file for Graphviz: ") + strerror(errno));
    done += static_cast<size_t>(n);
  }
  ::lseek(fd.get(), 0, SEEK_SET);
}

// Runs `dot -Tsvg` on `dotText` and returns the SVG. Graphviz reads and
// writes anonymous files, never a path: `-o svg` would open the target
// itself and follow a symlink planted there, so the SVG reaches its file
// through the atomic writer like every other output. posix_spawnp rather
// than system(): no shell.
std::string renderSvg(const std::string& dotText, const std::string& svg) {
  UniqueFd in(::memfd_create("subgraph-dot", MFD_CLOEXEC));
  UniqueFd out(::memfd_create("subgraph-svg", MFD_CLOEXEC));
  fillAnonymousFile(in, dotText);
  fillAnonymousFile(out, "");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out.get(), 1);
  std::vector<std::string> args = {"dot", "-Tsvg"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "dot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc == ENOENT)
    throw Error(StatusCode::kNotFound, svg +
                                           ": Graphviz 'dot' is not installed; write --dot "
                                           "FILE.dot and render it elsewhere");
  if (rc != 0) throw Error(svg + ": cannot run Graphviz 'dot': " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(svg + ": waiting for Graphviz 'dot' failed");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(svg + ": Graphviz 'dot' failed" +
                (WIFEXITED(status) ? " with exit status " + std::to_string(WEXITSTATUS(status))
                                   : std::string(" (killed)")));
  std::string picture;
  char chunk[1 << 16];
  for (off_t at = 0;;) {
    ssize_t n = ::pread(out.get(), chunk, sizeof chunk, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(svg + ": cannot read Graphviz's output: " + strerror(errno));
    if (n == 0) break;
    picture.append(chunk, static_cast<size_t>(n));
    at += n;
  }
  return picture;
}

void writePicture(const Graph& original, const PartitionReport& report,
                  const PartitionCommandOptions& options, const api::StagePlan* stages) {
  DotOptions dot = stages ? stagePicture(original, report, *stages) : regionPicture(report);
  std::ostringstream dotText;
  writeDot(original, dotText, dot);
  if (!options.dot.empty()) {
    writeOutput(options.dot, [&](std::ostream& os) { os << dotText.str(); });
    spdlog::info("wrote {}", options.dot);
  }
  if (options.svg.empty()) return;
  const std::string picture = renderSvg(dotText.str(), options.svg);
  writeOutput(options.svg, [&](std::ostream& os) { os << picture; });
  spdlog::info("wrote {}", options.svg);
}

// The session `run` would make: its precision and plugin options reach the
// plugins' selection, so the regions reported are the regions that run.
// A mistyped option is a usage error, before the model is read.
void setSessionOptions(plugins::BackendSelection& selection,
                       const PartitionCommandOptions& options) {
  auto parsed = api::parsePluginOptions(options.pluginOptions, selection.names());
  plugins::PluginRunOptions run;
  run.precision = options.precision;
  Status st = parsed.isOk() ? Status::ok() : parsed.status();
  if (st.isOk()) {
    run.options = std::move(parsed).value();
    st = selection.setRunOptions(run);
  }
  if (!st.isOk()) throw Error(st);  // of kind kUsage: exit 2
}

void runPartition(const PartitionCommandOptions& options) {
  partition::registerBuiltinBackends();
  if (options.dot == "-" && (options.json || options.output == "-"))
    throw UsageError("--dot - and the report or model on stdout would interleave");
  // Resolve (and load plugins) before loading the model: an unknown
  // backend or a broken plugin fails in milliseconds, not after a large
  // model has been read.
  std::string origin;
  plugins::SelectOptions select;
  select.allowFallback = options.allowFallback || plugins::fallbackFromEnvironment();
  std::string list = backendList(options, origin);
  warnAboutDroppedPluginDirs();
  auto selection = plugins::selectBackends(list, select);
  if (!selection) throwSelectionError(list, selection.status());
  for (const std::string& warning : selection->warnings()) spdlog::warn("{}", warning);
  setSessionOptions(*selection, options);

  const std::vector<api::StageDevice> devices =
      parseStageDevices(options.stages, options.devices, options.memoryLimits);
  LoadOptions load;
  load.inputShapes = parseShapeSpecs(options.shapes);
  load.allowUnknownOps = options.allowUnknownOps;
  auto phase = std::chrono::steady_clock::now();
  // Loading, the passes and partitioning allocate most of the command's
  // memory; its fresh pages are faulted in on the other core meanwhile.
  std::optional<HeapPrefault> prefault(std::in_place, heapEstimate(options.file));
  std::unique_ptr<Graph> graph = loadModel(options.file, load);
  spdlog::debug("loaded {}: {} nodes in {:.2f} s", options.file, graph->numNodes(),
                secondsSince(phase));
  StatusOr<PipelineReport> simplified = api::simplify(*graph, options.passes);
  if (!simplified.isOk()) throw Error(simplified.status());
  if (simplified->changed())
    spdlog::info("passes before partitioning: nodes {} -> {} in {:.2f} ms",
                 simplified->nodesBefore(), simplified->nodesAfter(),
                 simplified->totalMilliseconds());
  else if (options.passes != "none")
    spdlog::debug("passes before partitioning changed nothing, in {:.2f} ms",
                  simplified->totalMilliseconds());
  if (options.passes != "none")
    spdlog::trace("passes before partitioning:\n{}", simplified->toString());
  std::unique_ptr<Graph> original =
      options.dot.empty() && options.svg.empty() ? nullptr : graph->clone();
  phase = std::chrono::steady_clock::now();

  partition::PartitionOptions partitionOptions;
  partitionOptions.forTraining = options.training;
  partitionOptions.traversal = options.traversal == "per-property"
                                   ? partition::Traversal::kPerProperty
                                   : partition::Traversal::kPerBackend;
  StatusOr<api::Partitioned> parts = api::partition(*selection, graph, partitionOptions);
  if (parts.isOk())
    for (const std::string& warning : parts->warnings) spdlog::warn("{}", oneLine(warning));
  StatusOr<PartitionReport> report = parts.isOk()
                                         ? StatusOr<PartitionReport>(std::move(parts->report))
                                         : StatusOr<PartitionReport>(parts.status());
  if (!report) throw Error(report.status());
  spdlog::debug("partitioned in {:.2f} s ({:.1f} ms in the partitioner)", secondsSince(phase),
                report->partitionMs);
  if (prefault->active())
    spdlog::trace("heap prefault: {} MiB faulted in on a helper thread",
                  prefault->populatedBytes() >> 20);
  prefault.reset();
  const partition::PartitionPhases& phases = report->phases;
  spdlog::trace(
      "partitioner phases: rank {:.1f} ms, walk {:.1f} ms, surgery {:.1f} ms, acyclicity proof "
      "{:.1f} ms, report {:.1f} ms",
      phases.rankMs, phases.walkMs, phases.surgeryMs, phases.proofMs, phases.reportMs);
  phase = std::chrono::steady_clock::now();

  // Pipeline stages of the partitioned graph, one per device.
  std::optional<api::StagePlan> stages;
  if (!devices.empty()) {
    StatusOr<api::StagePlan> planned = api::planStages(*graph, devices);
    if (!planned.isOk()) throw Error(planned.status());
    stages = std::move(planned).value();
    // Each stage as a model of its own, fed what the stages before it send.
    if (!options.stageModels.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(options.stageModels, ec);
      if (ec) throw Error(StatusCode::kIo, options.stageModels + ": " + ec.message());
      for (size_t k = 0; k < stages->stages.size(); ++k) {
        StatusOr<std::unique_ptr<Graph>> part = api::stageGraph(*graph, *stages, k);
        if (!part.isOk()) throw Error(part.status());
        const std::string path =
            (std::filesystem::path(options.stageModels) / fmt::format("stage{}.sg", k)).string();
        throwIfError(api::saveModel(**part, path));
        spdlog::info("wrote {}", path);
      }
    }
  } else if (!options.stageModels.empty()) {
    throw UsageError("--stage-models needs --stages or --devices");
  }
  // Streamed: the report of a large graph is never held as one string
  // (with stages, the report gains a "stages" member). writeOutput() fails
  // the command on a write error (a full disk), on stdout as in a file.
  auto writeJson = [&](std::ostream& os) {
    if (stages) {
      std::ostringstream text;
      partition::writeReportJson(*report, text);
      nlohmann::ordered_json json = nlohmann::ordered_json::parse(text.str());
      json["stages"] = nlohmann::ordered_json::parse(api::stagesToJson(*stages));
      os << json.dump();
    } else {
      partition::writeReportJson(*report, os);
    }
    os << "\n";
  };
  if (options.json) {
    writeOutput("-", writeJson);
  } else if (options.output != "-" && options.dot != "-") {
    partition::printReportSummary(*report, std::cout);
    if (stages) std::cout << api::stagesSummary(*stages);
  }
  if (!options.report.empty()) {
    writeOutput(options.report, writeJson);
    if (options.report != "-") spdlog::info("wrote {}", options.report);
  }
  spdlog::debug("report written in {:.2f} s", secondsSince(phase));
  if (original) writePicture(*original, *report, options, stages ? &*stages : nullptr);
  if (!options.output.empty()) {
    writeModelFile(*graph, options.output, options.inlineConstants);
    if (options.output != "-") spdlog::info("wrote {}", options.output);
  }
  // Freeing the partitioned graph and its report took ~0.5 s of a 10^6-node
  // command's wall time; the process is about to end.
  keepUntilExit(std::move(graph));
  keepUntilExit(std::make_unique<partition::PartitionReport>(std::move(report).value()));
}

const CommandRegistration kPartition("partition", [](CLI::App& app) {
  auto options = std::make_shared<PartitionCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "partition", "Fuse regions of a model for backends and report what was fused and why not");
  cmd->add_option("MODEL", options->file, "Model file (.sg text graph, .onnx; - for stdin)")
      ->required();
  cmd->add_option_function<std::string>(
         "-b,--backend",
         [options](const std::string& value) {
           options->backends = value;
           options->backendsGiven = true;
         },
         "Backends in priority order, comma-separated (default: $SUBGRAPH_BACKEND; NONE: no "
         "partitioning)")
      ->type_name("A,B");
  cmd->add_option("--report", options->report, "Write the partition report as JSON (- : stdout)")
      ->type_name("FILE.json");
  cmd->add_option("--dot", options->dot, "Draw the model with regions as coloured clusters")
      ->type_name("FILE.dot");
  cmd->add_option("--svg", options->svg, "Render that drawing as SVG with Graphviz's dot")
      ->type_name("FILE.svg");
  cmd->add_option("-o,--output", options->output, "Write the partitioned model (.sg, .onnx)")
      ->type_name("OUT");
  cmd->add_flag("--inline-constants", options->inlineConstants,
                "With -o OUT.sg: keep every constant in the text, instead of those of 1 KiB and "
                "more in OUT.sg.data");
  cmd->add_flag("--json", options->json, "Print the report as JSON instead of the summary");
  cmd->add_flag("--training", options->training,
                "Partition for training: skip inference-only fusions");
  cmd->add_flag("--allow-unknown-ops", options->allowUnknownOps,
                "Accept ops without a schema when loading an ONNX model");
  cmd->add_flag("--allow-fallback", options->allowFallback,
                "Skip a backend plugin that cannot be used or fails while partitioning (with a "
                "warning) instead of failing; also SUBGRAPH_BACKEND_FALLBACK=1");
  cmd->add_option("--traversal", options->traversal,
                  "When the graph changes between a backend's properties: per-backend (one "
                  "ranking and one surgery per backend) or per-property (after each property, "
                  "the older and slower order; for comparison)")
      ->check(CLI::IsMember({"per-backend", "per-property"}))
      ->default_str("per-backend");
  cmd->add_option("--precision", options->precision,
                  "fp32, bf16, fp16 or tf32: the precision `run --precision` will use; plugins "
                  "whose selection depends on it (cudnn's engine checks) plan for it")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16", "tf32"}));
  cmd->add_option("--stages", options->stages,
                  "Cut the partitioned graph into N pipeline stages (devices dev:0..), balanced "
                  "by cost, each within its memory limit, crossing the fewest bytes")
      ->type_name("N")
      ->check(CLI::Range(size_t{1}, size_t{4096}));
  cmd->add_option("--devices", options->devices,
                  "The devices of the stages, one stage each (emu:0,emu:1,...)")
      ->type_name("LIST");
  cmd->add_option("--stage-models", options->stageModels,
                  "Write each stage as a model of its own, DIR/stage<k>.sg (its inputs: the graph "
                  "inputs it reads and the values earlier stages send)")
      ->type_name("DIR");
  cmd->add_option("--memory-limit", options->memoryLimits,
                  "Memory of each stage's device: one size for all or one each (512M,1G)")
      ->type_name("SIZE[,SIZE...]");
  cmd->add_option("--plugin-option", options->pluginOptions,
                  "PLUGIN.NAME=VALUE: an option of one chosen plugin, as `run --plugin-option` "
                  "(repeatable); `subgraph plugins` lists each plugin's options");
  addShapeOption(*cmd, options->shapes);
  addPassesOption(*cmd, options->passes);
  cmd->callback([options] { runPartition(*options); });
});

}  // namespace
}  // namespace subgraph::cli
