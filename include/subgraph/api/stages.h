//===- subgraph/api/stages.h - Pipeline stages under memory limits -*- C++ -*-===//
//
// Cuts a (partitioned) graph into pipeline stages, one per device, as
// Glow's partitioner does for several accelerators: each stage is a
// contiguous run of one topological order, so values only flow forward
// and stages never form a cycle; each fits its device's memory (the
// weights it reads plus the peak of its activations, planned by the
// runtime's memory planner); the stages balance their estimated cost
// (multiply-adds of Conv, MatMul and Gemm from static shapes, output
// elements elsewhere, a fused region the sum of its body); and among
// cuts within 5% of the best balance, the one crossing the fewest bytes
// is taken.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/support/status.h"

namespace subgraph::api {

/// One device a stage is placed on.
struct StageDevice {
  std::string name;          ///< "emu:0", "cuda:1", ...
  uint64_t memoryLimit = 0;  ///< Bytes; 0: no limit.
};

/// A value one stage sends to a later one.
struct StageValue {
  std::string name;
  uint64_t bytes = 0;
  int toStage = 0;  ///< The last stage that reads it.
};

/// One pipeline stage.
struct Stage {
  std::string device;
  uint64_t memoryLimit = 0;
  /// The top-level nodes it runs, in order (names as Node::displayName).
  std::vector<std::string> nodes;
  uint64_t weightBytes = 0;      ///< Constants its nodes read (each once).
  uint64_t activationBytes = 0;  ///< The memory planner's bytes for the rest.
  double cost = 0;               ///< Estimated multiply-adds.
  /// Values produced here and read by a later stage.
  std::vector<StageValue> sends;
  uint64_t memoryBytes() const { return weightBytes + activationBytes; }
};

/// The stages, in pipeline order.
struct StagePlan {
  std::vector<Stage> stages;
  /// Bytes crossing every cut together.
  uint64_t crossingBytes = 0;
  /// The largest stage cost over the mean (1 is perfect balance).
  double imbalance = 1;
};

/// Devices `names`, with `limits` bytes each: one limit for all, one each,
/// or none. kUsage ("<what> gives 3 limits for 2 devices ...") otherwise;
/// `what` names the argument in the caller's terms.
StatusOr<std::vector<StageDevice>> stageDevices(const std::vector<std::string>& names,
                                                const std::vector<uint64_t>& limits,
                                                const std::string& what);

/// Cuts `graph` into one stage per device in `devices` (at most as many
/// stages as top-level nodes). kLimitExceeded, naming the stage, its
/// device and the node that does not fit, when no cut fits the limits;
/// kUsage for no device.
StatusOr<StagePlan> planStages(const Graph& graph, const std::vector<StageDevice>& devices);

/// Stage `k` of `plan` (made for `graph`) as a model of its own: its
/// inputs are the graph inputs it reads and the values it receives from
/// earlier stages, in order of first use; its outputs the graph outputs it
/// computes and the values it sends on; its constants are shared with
/// `graph`. Running the stages one after another, each fed what the ones
/// before it sent, computes the graph's outputs.
StatusOr<std::unique_ptr<Graph>> stageGraph(const Graph& graph, const StagePlan& plan, size_t k);

/// The plan as a JSON object ("stages": [...], "crossing_bytes", ...).
std::string stagesToJson(const StagePlan& plan);

/// The plan as the lines `subgraph partition --stages` prints.
std::string stagesSummary(const StagePlan& plan);

}  // namespace subgraph::api
