//===- testing/testkit/plugin_check.h - Conformance run of one backend -*- C++ -*-===//
//
// The engine behind `subgraph check-plugin` and the installed
// subgraph::testing library: open a backend (a plugin by name or absolute
// path such as onednn, or a backend registered in-process), find the ops
// its selectors touch by partitioning small probe graphs, then partition
// random graphs of those ops mixed with ops it does not touch and check
// every invariant:
//  * the oracle of partition_oracle.h (acyclic, convex, each node in at
//    most one region, graph inputs and outputs unchanged, ...);
//  * no region the selector proposed had to be cut to avoid a cycle;
//  * Reset() honoured: after Reset, a selector answers exactly as a fresh
//    one from the same property does;
//  * for backends with kernels, the partitioned graph computes what the
//    reference backend computes on the unpartitioned graph.
// A failing case is shrunk (nodes deleted while it still fails) and printed
// in the text format with the seed that replays it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/runtime/session.h"
#include "subgraph/support/status.h"
#include "testkit/random.h"

namespace subgraph::testkit {

/// One backend under test.
class BackendUnderTest {
 public:
  /// Opens `nameOrPath`: an absolute path to a plugin .so, a plugin name on
  /// the search path, or an in-process backend name. Errors are one line.
  /// `searchPath`: directories searched for a plugin by name (empty: the
  /// default path).
  static StatusOr<BackendUnderTest> open(const std::string& nameOrPath,
                                         const std::vector<std::filesystem::path>& searchPath = {});

  /// The backend name.
  const std::string& name() const { return name_; }
  /// The loaded plugin; null for an in-process backend.
  const std::shared_ptr<plugins::LoadedPlugin>& plugin() const { return plugin_; }
  /// What it registers, one "key: value" line each.
  std::vector<std::string> describe() const;
  /// True if fused regions run on kernels of this backend (plugin kernels,
  /// or an in-process runtime backend of the same name).
  bool hasKernels() const;
  /// The property names, in pass order.
  std::vector<std::string> propertyNames() const;

  /// Fresh partition backends. With `resetProblems`, every selector is
  /// watched: a selector that after Reset() answers differently from a
  /// fresh one appends one line there.
  StatusOr<std::vector<partition::SubgraphBackend>> instantiate(
      std::vector<std::string>* resetProblems = nullptr) const;
  /// Partitions `graph` as the `subgraph` program does (plugin transforms
  /// included).
  StatusOr<partition::PartitionReport> partitionLikeTheProgram(Graph& graph) const;
  /// Runs `graph` partitioned for this backend, and unpartitioned on the
  /// reference backend, on `inputs`; "" if every output agrees within
  /// `tolerance` (absolute plus relative), else one line naming the output
  /// and the regions (with their backends) that computed it.
  /// `kernelSteps`, when given, receives how many fused regions ran on this
  /// backend's kernels: a region whose kernel declined runs its body on the
  /// reference backend and counts none.
  std::string compareWithReference(const Graph& graph,
                                   const std::vector<runtime::NamedTensor>& inputs,
                                   double tolerance, size_t* kernelSteps = nullptr) const;
  /// The catalogOps() entries for the op types its properties declare as
  /// seeds (a pattern's anchor ops included): the graphs its selectors
  /// start from.
  std::vector<std::string> declaredSeedEntries() const;

 private:
  std::string name_;
  std::shared_ptr<plugins::LoadedPlugin> plugin_;
  plugins::BackendSelection selection_;
};

/// "a, b, c", or "none" for no items.
std::string joinedOrNone(const std::vector<std::string>& items);

/// Seeded random float32 tensors for every graph input of `graph`, values
/// in [-2, 2).
std::vector<runtime::NamedTensor> randomInputs(const Graph& graph, uint64_t seed);

/// The entries random graphs are built from, each shape-preserving on one
/// [1, 4, 5, 5] float32 tensor, with random weights where they take any:
/// ONNX ops by name (MatMul by constant weights or a run-time tensor, Div by
/// a scalar, Transpose of the last two axes, ...), "BiasAdd" (an Add of a
/// constant broadcast along the last axis or per channel), and composites:
/// "Gemm" (on a [20, 5] view), "Gelu" (the erf form), "Attention",
/// "Concat" (split back) and "Split" (joined back).
std::vector<std::string> catalogOps();

/// Adds one `op` node (a catalogOps() entry) named `name` reading `data`
/// (and `other` for binary ops) to `graph`, with random constant operands.
/// Returns its output.
Value* addCatalogNode(Graph& graph, RandomSource& rng, const std::string& op, Value* data,
                      Value* other, const std::string& name);

struct CaseStats;

/// How a conformance run goes.
struct CheckOptions {
  size_t cases = 100;  ///< Random graphs.
  uint64_t seed = 1;   ///< Case i uses seed + i.
  /// Ops to build graphs from instead of the probed ones (catalog names).
  std::vector<std::string> ops;
  bool numerics = true;     ///< Compare with the reference (kernels only).
  double tolerance = 1e-3;  ///< Absolute plus relative.
  size_t maxFailuresShown = 3;
  /// Called before each case runs, with its seed (the CLI names the case
  /// in the line a plugin crash prints).
  std::function<void(uint64_t seed)> beforeCase;
  /// Checks one graph instead of checkGraph() in this process, with the
  /// same contract ("" or one line; `stats` may be null): the CLI runs each
  /// case in a child process, so that a plugin that crashes or hangs fails
  /// that case instead of ending the run. A crash is shrunk like any
  /// failure; a failure of category "hung" ("hung: ...") is not, since each
  /// try would wait out the whole timeout.
  std::function<std::string(const Graph& graph, uint64_t inputSeed, CaseStats* stats)> runCase;
};

/// One failing case, shrunk.
struct CaseFailure {
  uint64_t seed = 0;
  std::string what;       ///< One line.
  std::string graphText;  ///< The smallest failing graph found.
  size_t nodesBefore = 0, nodesAfter = 0;
};

/// The outcome of a conformance run.
struct CheckSummary {
  std::vector<std::string> touchedOps;  ///< Ops the selectors fused in probes.
  std::vector<std::string> otherOps;    ///< Catalog ops mixed in.
  bool numerics = false;                ///< Whether outputs were compared.
  size_t passed = 0, failed = 0;
  /// Cases in which a region formed, and in which the plugin's kernels ran:
  /// a run where none formed did not test the plugin at all.
  size_t casesWithRegions = 0, casesWithKernels = 0;
  std::vector<CaseFailure> failures;  ///< Up to maxFailuresShown.
};

/// The ops of catalogOps() the backend fuses in small probe graphs: one
/// node, every chain of two, and, from each op its properties declare as a
/// seed, chains of two with three draws of random operands and chains of
/// three, so that a selector that only grows from a MatMul with constant
/// weights into an Add is found without --ops.
std::vector<std::string> probeTouchedOps(const BackendUnderTest& backend);

/// "" if the run exercised the backend, else why it proves nothing (one
/// line; a failure for every front end): no case formed a region, or
/// regions formed but the backend's kernels ran in none (each declined).
std::string unexercised(const CheckSummary& summary, const std::string& backendName);

/// Builds the random graph of case `seed` from `ops` (70% of nodes) and
/// `others`; deterministic in its arguments.
std::unique_ptr<Graph> randomCatalogGraph(uint64_t seed, const std::vector<std::string>& ops,
                                          const std::vector<std::string>& others);

/// What one case exercised.
struct CaseStats {
  bool formedRegions = false;  ///< The plugin's selectors fused something.
  bool ranKernels = false;     ///< And its kernels ran them, against the reference.
};

/// Checks one graph: "" or what is wrong (one line). `stats`, when given,
/// says what the case exercised.
std::string checkGraph(const BackendUnderTest& backend, const Graph& graph, uint64_t inputSeed,
                       const CheckOptions& options, CaseStats* stats = nullptr);

/// Deletes nodes of `graph` while checkGraph still fails; returns the
/// smallest failing graph found.
std::unique_ptr<Graph> shrinkFailure(const BackendUnderTest& backend, const Graph& graph,
                                     uint64_t inputSeed, const CheckOptions& options);

/// The whole run.
CheckSummary runConformance(const BackendUnderTest& backend, const CheckOptions& options);

/// A failure as check-plugin prints it: what, the command that replays it
/// (`target` is the NAME|PATH given), and the smallest failing graph.
std::string formatFailure(const CaseFailure& failure, const std::string& target);

}  // namespace subgraph::testkit
