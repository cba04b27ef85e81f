//===- subgraph/api/pipeline.h - Simplify and partition a model -*- C++ -*-===//
//
// The steps between loading a model and running it, once, for every front
// end: the `subgraph partition` command, the Python package's
// subgraph.partition, and InferenceSession, which runs them before handing
// the runtime the partitioned graph.
//
//   auto model = api::loadModel("m.onnx");
//   auto selection = api::selectBackends({.backends = "onednn"});
//   api::simplify(**model, "default");
//   auto parts = api::partition(*selection, *model);
//
//===----------------------------------------------------------------------===//
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/partition/partitioner.h"
#include "subgraph/passes/pass_manager.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/support/status.h"

namespace subgraph::api {

/// Runs the pass pipeline `passes` ("default", "none", or a list; see
/// docs/passes.md) on `graph` to a fixed point. An empty report for
/// "none"; kUsage ("passes: ...") for a spec that names no pipeline.
StatusOr<PipelineReport> simplify(Graph& graph, const std::string& passes);

/// Which backends, and the session they are chosen for.
struct BackendRequest {
  /// "a,b" in priority order: backend names or plugin files; "" or "NONE"
  /// chooses none.
  std::string backends;
  /// Skip a plugin that cannot be used, or fails while partitioning, with a
  /// warning instead of failing.
  bool allowFallback = false;
  /// Directories searched for plugins by name; empty: the default path.
  std::vector<std::filesystem::path> pluginSearchPath;
  /// The session's precision and plugin options, which selection sees as
  /// kernels will (threads are not used here). A name or value a plugin
  /// does not declare is kUsage.
  plugins::PluginRunOptions run;
};

/// The backends of `request`, loaded and given the session's options.
StatusOr<plugins::BackendSelection> selectBackends(const BackendRequest& request);

/// What partition() did.
struct Partitioned {
  partition::PartitionReport report;
  /// Backends dropped by fallback, one line each.
  std::vector<std::string> warnings;
};

/// Checks `graph` as a session would (runtime::verifyForRun) and partitions
/// it for `selection` (plugin transforms and fallback included; fallback
/// may replace the graph with one partitioned from a copy).
StatusOr<Partitioned> partition(const plugins::BackendSelection& selection,
                                std::unique_ptr<Graph>& graph,
                                const partition::PartitionOptions& options = {});

}  // namespace subgraph::api
