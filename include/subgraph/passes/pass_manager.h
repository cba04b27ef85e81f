//===- subgraph/passes/pass_manager.h - Running pass pipelines --*- C++ -*-===//
//
// A PassManager runs an ordered list of passes over a graph, optionally
// repeating the whole list until a round changes nothing (bounded by a round
// limit), and records for every pass it ran whether it changed the graph, how
// long it took and the node count before and after. `subgraph inspect` and
// `--passes a,b,c` on the command line are both built on this header.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/passes/pass.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// What one pass did in one round of a pipeline.
struct PassReport {
  /// The pass's stable name, e.g. "dce".
  std::string passName;
  /// 1-based round of the pipeline this run belongs to.
  int round = 1;
  /// Whether the pass changed the graph.
  bool changed = false;
  /// Wall-clock time of Pass::run, in milliseconds.
  double milliseconds = 0.0;
  /// Live node count before and after the pass.
  size_t nodesBefore = 0;
  size_t nodesAfter = 0;
  /// Live initializer count before and after the pass.
  size_t initializersBefore = 0;
  size_t initializersAfter = 0;
  /// The pass's own account of what it did (Pass::lastRunSummary()).
  std::string summary;
};

/// What a whole pipeline run did.
struct PipelineReport {
  /// One entry per pass per round, in execution order.
  std::vector<PassReport> passes;
  /// Number of rounds run.
  int rounds = 0;
  /// True when the last round changed nothing, i.e. running the pipeline
  /// again would leave the graph as it is.
  bool reachedFixedPoint = false;
  /// Nested graphs (If branches, Loop and Scan bodies, at any depth) that
  /// the pipeline changed, when PassManagerOptions::nestedGraphs is on.
  int nestedGraphsChanged = 0;

  /// True if any pass changed the graph or one of its nested graphs.
  bool changed() const;
  /// Sum of the passes' times, in milliseconds.
  double totalMilliseconds() const;
  /// Node count before the first pass and after the last one.
  size_t nodesBefore() const;
  size_t nodesAfter() const;
  /// A small human-readable table, one line per pass run, then a total
  /// line, e.g. for `subgraph inspect --passes`.
  std::string toString() const;
};

/// How a PassManager runs its pipeline.
struct PassManagerOptions {
  /// Repeat the pipeline until a round changes nothing.
  bool runToFixedPoint = false;
  /// Upper bound on rounds when runToFixedPoint is set. Hitting it is not an
  /// error (a pipeline may oscillate); the report says reachedFixedPoint =
  /// false instead.
  int maxRounds = 8;
  /// Also run the pipeline over the graphs that control-flow nodes hold,
  /// after the graph itself, so that their Constant nodes, dead code and
  /// idioms are handled like the graph's own (exporters such as spox put a
  /// whole network, weights as Constant nodes, inside an If branch). A
  /// nested graph is shared by every clone of its graph, so the pipeline
  /// runs on a copy that replaces it on its node alone. The report counts
  /// the nested graphs changed; its per-pass rows are the graph's own.
  bool nestedGraphs = true;
};

/// Runs passes in order over a graph and reports what each did.
class PassManager {
 public:
  /// An empty pipeline.
  explicit PassManager(PassManagerOptions options = {});
  PassManager(PassManager&&) noexcept;
  PassManager& operator=(PassManager&&) noexcept;
  ~PassManager();

  /// Appends a pass; returns *this so pipelines read as a chain.
  PassManager& addPass(std::unique_ptr<Pass> pass);
  /// Number of passes in the pipeline.
  size_t size() const { return passes_.size(); }
  /// Pass names in pipeline order.
  std::vector<std::string> passNames() const;

  const PassManagerOptions& options() const { return options_; }
  void setOptions(PassManagerOptions options) { options_ = options; }

  /// Runs the pipeline. Stops at the first failing pass and returns its
  /// error, prefixed with the pass name and round; the graph is left as that
  /// pass left it (consistent, partially rewritten).
  StatusOr<PipelineReport> run(Graph& graph);

 private:
  // Runs the pipeline over the graphs that `graph`'s control-flow nodes
  // hold (see PassManagerOptions::nestedGraphs).
  Status runOnNestedGraphs(Graph& graph, PipelineReport& report);
  Status runOnNestedGraphsOf(Graph& graph, PipelineReport& report);

  PassManagerOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
  bool nested_ = false;  // running over a nested graph: only passes that apply there
  std::vector<const Graph*> enclosing_;  // the graphs around the one being run
};

/// Name and one-line description of a pass createPassByName() knows.
struct PassInfo {
  std::string name;
  std::string description;
};

/// Every pass createPassByName() can build, in default-pipeline order
/// followed by the rest, alphabetically.
std::vector<PassInfo> registeredPasses();

/// Builds a pass with default options from its stable name; a kNotFound
/// error lists the known names.
StatusOr<std::unique_ptr<Pass>> createPassByName(std::string_view name);

/// Constant->initializer, f16/bf16 compute in f32, Identity removal,
/// constant folding, the idiom passes (clamp, hard-swish, layer norm, GELU,
/// attention), DCE,
/// run to a fixed point (at most options.maxRounds rounds), nested graphs
/// included.
PassManager createDefaultPipeline(PassManagerOptions options = {true, 8, true});

/// Builds a pipeline from a comma-separated list of pass names, as given to
/// `--passes` ("constant-folding,dce"). Spaces around names are ignored and
/// "default" expands to the default pipeline's passes. An empty list or an
/// unknown name is an error naming it.
StatusOr<PassManager> parsePassPipeline(std::string_view spec, PassManagerOptions options = {});

}  // namespace subgraph
