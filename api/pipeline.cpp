//===- api/pipeline.cpp - Simplify and partition a model ------------------===//
//
// See subgraph/api/pipeline.h. Each step checks what the caller gave it
// before any work: a pass spec, a backend list and its options are the
// caller's (kUsage), a graph is checked before a selector sees it.
//
//===----------------------------------------------------------------------===//
#include "subgraph/api/pipeline.h"

#include "subgraph/runtime/session.h"

namespace subgraph::api {

StatusOr<PipelineReport> simplify(Graph& graph, const std::string& passes) {
  if (passes == "none") return PipelineReport{};
  StatusOr<PassManager> pipeline =
      parsePassPipeline(passes, PassManagerOptions{.runToFixedPoint = true});
  if (!pipeline.isOk()) return Status(StatusCode::kUsage, "passes: " + pipeline.status().message());
  return pipeline.value().run(graph);
}

StatusOr<plugins::BackendSelection> selectBackends(const BackendRequest& request) {
  plugins::SelectOptions select;
  select.allowFallback = request.allowFallback;
  select.searchPath = request.pluginSearchPath;
  StatusOr<plugins::BackendSelection> selection =
      plugins::selectBackends(request.backends.empty() ? "NONE" : request.backends, select);
  if (!selection.isOk()) return selection.status();
  SUBGRAPH_RETURN_IF_ERROR(selection->setRunOptions(request.run));
  return selection;
}

StatusOr<Partitioned> partition(const plugins::BackendSelection& selection,
                                std::unique_ptr<Graph>& graph,
                                const partition::PartitionOptions& options) {
  if (!graph) return Status::invalid("partition: no graph");
  SUBGRAPH_RETURN_IF_ERROR(runtime::verifyForRun(*graph));
  Partitioned out;
  StatusOr<partition::PartitionReport> report =
      selection.partitionWithFallback(graph, out.warnings, options);
  if (!report.isOk()) return report.status();
  if (!graph) return Status(StatusCode::kInternal, "partitioning left no graph");
  out.report = std::move(report).value();
  return out;
}

}  // namespace subgraph::api
