//===- core/passes/pass_manager.cpp - Running pass pipelines --------------===//
//
// The pipeline runner, the report it produces, and the name -> factory table
// behind createPassByName(). The table is the single list of passes the
// command line knows; adding a pass means adding one row here.
//
//===----------------------------------------------------------------------===//
#include "subgraph/passes/pass_manager.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <utility>

#include "subgraph/ir/captures.h"
#include "subgraph/ir/shape_inference.h"
#include "subgraph/passes/attention_idiom.h"
#include "subgraph/passes/clamp_idiom.h"
#include "subgraph/passes/constant_folding.h"
#include "subgraph/passes/constant_to_initializer.h"
#include "subgraph/passes/dead_code_elimination.h"
#include "subgraph/passes/float16_compute.h"
#include "subgraph/passes/gelu_idiom.h"
#include "subgraph/passes/hard_swish_idiom.h"
#include "subgraph/passes/identity_removal.h"
#include "subgraph/passes/layer_norm_idiom.h"
#include "subgraph/passes/linear_idiom.h"
#include "subgraph/passes/redundant_ops.h"
#include "subgraph/passes/sibling_matmuls.h"

namespace subgraph {
namespace {

/// One row of the pass table.
struct PassFactory {
  std::string_view name;
  std::function<std::unique_ptr<Pass>()> create;
};

// Default-pipeline passes first, in pipeline order.
const std::vector<PassFactory>& passTable() {
  static const std::vector<PassFactory> kTable = {
      {"constant-to-initializer", [] { return createConstantToInitializerPass(); }},
      // After Constant->initializer, so that f16 Constants are converted
      // once as weights rather than widened by a Cast at every run.
      {"float16-compute", [] { return createFloat16ComputePass(); }},
      {"identity-removal", [] { return createIdentityRemovalPass(); }},
      {"constant-folding", [] { return createConstantFoldingPass(); }},
      {"redundant-ops", [] { return createRedundantOpsPass(); }},
      // Exporters' idioms, after folding has made their constants constant
      // and before DCE sweeps the constants they no longer read. Clamps
      // first: the hard-swish forms are matched on the Clip they make.
      {"clamp-idiom", [] { return createClampIdiomPass(); }},
      {"hardswish-idiom", [] { return createHardSwishIdiomPass(); }},
      {"layernorm-idiom", [] { return createLayerNormIdiomPass(); }},
      {"linear-idiom", [] { return createLinearIdiomPass(); }},
      {"sibling-matmuls", [] { return createSiblingMatMulsPass(); }},
      {"gelu-idiom", [] { return createGeluIdiomPass(); }},
      // Attention needs static dims along its head moves, which folding
      // gives it when the input shapes are fixed.
      {"attention-idiom", [] { return createAttentionIdiomPass(); }},
      {"dce", [] { return createDeadCodeEliminationPass(); }},
  };
  return kTable;
}

constexpr size_t kDefaultPipelineLength = 13;

size_t countInitializers(const Graph& graph) {
  size_t count = 0;
  for (const Value* v : graph.values()) count += v->isInitializer() ? 1 : 0;
  return count;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string knownPassNames() {
  std::string names;
  for (const PassFactory& f : passTable())
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

}  // namespace

//===--- PipelineReport ----------------------------------------------------===//

bool PipelineReport::changed() const {
  if (nestedGraphsChanged > 0) return true;
  for (const PassReport& p : passes)
    if (p.changed) return true;
  return false;
}

double PipelineReport::totalMilliseconds() const {
  double total = 0;
  for (const PassReport& p : passes) total += p.milliseconds;
  return total;
}

size_t PipelineReport::nodesBefore() const {
  return passes.empty() ? 0 : passes.front().nodesBefore;
}

size_t PipelineReport::nodesAfter() const { return passes.empty() ? 0 : passes.back().nodesAfter; }

std::string PipelineReport::toString() const {
  std::string text;
  char line[256];
  std::snprintf(line, sizeof line, "%-5s %-24s %-7s %10s %15s %15s  %s\n", "round", "pass",
                "changed", "time(ms)", "nodes", "initializers", "what");
  text += line;
  for (const PassReport& p : passes) {
    std::string nodes = std::to_string(p.nodesBefore) + "->" + std::to_string(p.nodesAfter);
    std::string inits =
        std::to_string(p.initializersBefore) + "->" + std::to_string(p.initializersAfter);
    std::snprintf(line, sizeof line, "%-5d %-24s %-7s %10.3f %15s %15s  ", p.round,
                  p.passName.c_str(), p.changed ? "yes" : "no", p.milliseconds, nodes.c_str(),
                  inits.c_str());
    text += line;
    text += p.summary.empty() ? "-" : p.summary;
    text += '\n';
  }
  std::snprintf(line, sizeof line, "total: %d round%s, %.3f ms, nodes %zu -> %zu, %s\n", rounds,
                rounds == 1 ? "" : "s", totalMilliseconds(), nodesBefore(), nodesAfter(),
                reachedFixedPoint ? "fixed point reached" : "NOT at a fixed point");
  text += line;
  if (nestedGraphsChanged > 0)
    text += "nested graphs changed: " + std::to_string(nestedGraphsChanged) + "\n";
  return text;
}

//===--- PassManager -------------------------------------------------------===//

PassManager::PassManager(PassManagerOptions options) : options_(options) {}
PassManager::PassManager(PassManager&&) noexcept = default;
PassManager& PassManager::operator=(PassManager&&) noexcept = default;
PassManager::~PassManager() = default;

PassManager& PassManager::addPass(std::unique_ptr<Pass> pass) {
  passes_.push_back(std::move(pass));
  return *this;
}

std::vector<std::string> PassManager::passNames() const {
  std::vector<std::string> names;
  for (const auto& p : passes_) names.emplace_back(p->name());
  return names;
}

StatusOr<PipelineReport> PassManager::run(Graph& graph) {
  using Clock = std::chrono::steady_clock;
  PipelineReport report;
  int maxRounds = options_.runToFixedPoint ? std::max(options_.maxRounds, 1) : 1;
  // Counting initializers reads every value; a pass that changed nothing
  // left the count as it found it, so the graph is counted once, then
  // after each pass that changed it.
  size_t initializers = countInitializers(graph);
  for (int round = 1; round <= maxRounds; ++round) {
    report.rounds = round;
    bool roundChanged = false;
    for (const auto& pass : passes_) {
      if (nested_ && !pass->appliesToNestedGraphs()) continue;
      PassReport entry;
      entry.passName = std::string(pass->name());
      entry.round = round;
      entry.nodesBefore = graph.numNodes();
      entry.initializersBefore = initializers;
      auto start = Clock::now();
      StatusOr<bool> changed = [&]() -> StatusOr<bool> {
        try {
          return pass->run(graph);
        } catch (const std::exception& e) {
          // A pass must not throw, but a bug in one must not take down the
          // tool that runs it either.
          return Status(StatusCode::kInternal, std::string("unexpected exception: ") + e.what());
        }
      }();
      entry.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (!changed)
        return Status(changed.status().code(), "pass '" + entry.passName + "' (round " +
                                                   std::to_string(round) +
                                                   ") failed: " + changed.status().message());
      entry.changed = *changed;
      entry.nodesAfter = graph.numNodes();
      if (entry.changed) initializers = countInitializers(graph);
      entry.initializersAfter = initializers;
      entry.summary = pass->lastRunSummary();
      roundChanged = roundChanged || entry.changed;
      report.passes.push_back(std::move(entry));
    }
    if (!roundChanged) {
      report.reachedFixedPoint = true;
      break;
    }
  }
  if (options_.nestedGraphs) SUBGRAPH_RETURN_IF_ERROR(runOnNestedGraphs(graph, report));
  return report;
}

namespace {

// Gives each value of `body` that reads an enclosing graph's value by name
// the type of that value (innermost enclosing graph first), then infers
// the body's types: the passes and, later, backends decide on types, and
// an exporter may have left a body's values untyped.
void adoptEnclosingTypes(Graph& body, const std::vector<const Graph*>& enclosing) {
  for (Value* v : body.values()) {
    if (v->producer() || v->isGraphInput() || v->isInitializer() || v->type().hasRank()) continue;
    for (auto it = enclosing.rbegin(); it != enclosing.rend(); ++it)
      if (const Value* outer = (*it)->findValue(v->name())) {
        v->setType(outer->type());
        break;
      }
  }
  // Best effort: a body inference cannot type stays as it was.
  (void)inferShapes(body);
}

}  // namespace

Status PassManager::runOnNestedGraphs(Graph& graph, PipelineReport& report) {
  enclosing_.push_back(&graph);
  Status status = runOnNestedGraphsOf(graph, report);
  enclosing_.pop_back();
  return status;
}

Status PassManager::runOnNestedGraphsOf(Graph& graph, PipelineReport& report) {
  for (Node* node : graph.nodes()) {
    if (!node->domain().empty() || !holdsNestedGraph(*node)) continue;  // fused regions too
    std::vector<Attribute> attrs(node->attributes().begin(), node->attributes().end());
    for (const Attribute& attr : attrs) {
      if (attr.kind() != AttrKind::kGraph || !attr.asGraph()) continue;
      std::shared_ptr<Graph> copy = attr.asGraph()->clone();
      adoptEnclosingTypes(*copy, enclosing_);
      adoptCapturedConstants(*copy, enclosing_);
      const bool wasNested = std::exchange(nested_, true);
      StatusOr<PipelineReport> nested = run(*copy);
      nested_ = wasNested;
      if (!nested.isOk())
        return Status(nested.status().code(),
                      node->displayName() + "." + attr.name() + ": " + nested.status().message());
      report.nestedGraphsChanged += nested->nestedGraphsChanged;
      ++report.nestedGraphsChanged;  // its types at least
      node->setAttr(attr.name(), std::move(copy));
    }
  }
  return Status::ok();
}

//===--- Pass table ----------------------------------------------------------===//

std::vector<PassInfo> registeredPasses() {
  std::vector<PassInfo> infos;
  for (const PassFactory& f : passTable())
    infos.push_back({std::string(f.name), std::string(f.create()->description())});
  return infos;
}

StatusOr<std::unique_ptr<Pass>> createPassByName(std::string_view name) {
  for (const PassFactory& f : passTable())
    if (f.name == name) return f.create();
  return Status(StatusCode::kNotFound,
                "unknown pass '" + std::string(name) + "'; known passes: " + knownPassNames());
}

PassManager createDefaultPipeline(PassManagerOptions options) {
  PassManager pm(options);
  for (size_t i = 0; i < kDefaultPipelineLength; ++i) pm.addPass(passTable()[i].create());
  return pm;
}

StatusOr<PassManager> parsePassPipeline(std::string_view spec, PassManagerOptions options) {
  PassManager pm(options);
  std::string_view rest = spec;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view name = trim(rest.substr(0, comma));
    if (name.empty())
      return Status::invalid("pass list '" + std::string(spec) +
                             "' has an empty name; known passes: " + knownPassNames());
    if (name == "default") {
      for (size_t i = 0; i < kDefaultPipelineLength; ++i) pm.addPass(passTable()[i].create());
    } else {
      StatusOr<std::unique_ptr<Pass>> pass = createPassByName(name);
      if (!pass) return pass.status();
      pm.addPass(std::move(pass).value());
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return pm;
}

}  // namespace subgraph
