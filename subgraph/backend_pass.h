//===- subgraph/backend_pass.h - One traversal per backend -*- C++ -*-===//
//
// The traversal that forms a backend's regions (internal to
// subgraph_partition). The properties of one backend share one ranking of
// the graph, one quotient DAG and one set of working tables, and the graph
// changes only once all of them have chosen their regions: each property
// in registration order walks the nodes it can seed (seed_index.h) in rank
// order, forming regions against the quotient DAG, which holds every
// region committed so far by any property of any backend, and skipping
// nodes already taken. Then each property's regions become fused nodes
// (its surgery), in registration order, and then each property's
// PostPartition runs. The first registered property still sees all of
// its seeds before the next one sees any, so the regions are those of one
// full pass per property over the graph the previous one fused; only
// selectors that inspect their neighbours see the members of earlier
// regions of the same backend as taken nodes rather than as fused nodes.
// A property with hooks (SubgraphProperty::HasPartitionHooks) gets a
// traversal of its own, so its hooks see the graph the properties before
// it fused, as they always did; patterns and plugin properties have none.
//
// A backend with many properties (a fusion family per op and variant)
// therefore costs one ranking, the walks over each property's seeds and
// one surgery, not a ranking, a full walk and a surgery per property.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "subgraph/partition/subgraph_property.h"
#include "subgraph/partition_run.h"
#include "subgraph/property_pass.h"

namespace subgraph::partition::detail {

/// The traversal of the properties `properties` of backend `backend`.
class BackendPass {
 public:
  /// A traversal for backend `backend` (index `backendIndex` in priority
  /// order) by `properties`, in registration order.
  BackendPass(RunState& run, PassScratch& tables, const std::string& backend, size_t backendIndex,
              std::span<SubgraphProperty* const> properties);

  /// Runs PrePartition of every property, the walks, the surgeries and
  /// PostPartition of every property. Leaves PassScratch::dagIsCurrent,
  /// lastFused and onlyFusedEdgesAdded saying what the final acyclicity
  /// check may trust.
  Status run();

 private:
  struct GraphMark;
  Status start();
  Status walk();
  Status finish(const GraphMark& before);

  RunState& run_;
  PassScratch& tables_;
  std::vector<std::unique_ptr<PropertyPass>> passes_;
};

}  // namespace subgraph::partition::detail
