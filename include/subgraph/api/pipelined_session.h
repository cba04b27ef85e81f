//===- subgraph/api/pipelined_session.h - Stages run as a pipeline -*- C++ -*-===//
//
// A model cut into pipeline stages (stages.h), each compiled as a runtime
// session of its own with its own backend instances (so a device plugin's
// stages run on queues of their own), and run as a pipeline: a request's
// batch is split along dim 0 into micro-batches, and micro-batch i+1 runs
// on stage 0 while micro-batch i runs on stage 1, each stage on its own
// thread, handing its values on to the next.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <vector>

#include "subgraph/api/inference_session.h"
#include "subgraph/api/stages.h"

namespace subgraph::api {

class PipelinedSession {
 public:
  /// Fixes the inputs to one micro-batch's dims (`microBatch`), simplifies
  /// and partitions `model` as InferenceSession does, cuts it into one
  /// stage per device of `devices`, and compiles each: backends and the
  /// planner see static shapes. kInvalidArgument when the batch cannot be
  /// split (an op mixes rows, or dim 0 is fixed above 1).
  static StatusOr<std::unique_ptr<PipelinedSession>> create(std::unique_ptr<Graph> model,
                                                            InferenceOptions options,
                                                            std::vector<StageDevice> devices,
                                                            const InputShapes& microBatch = {});
  ~PipelinedSession();
  PipelinedSession(const PipelinedSession&) = delete;
  PipelinedSession& operator=(const PipelinedSession&) = delete;

  /// Runs `inputs` in `microBatches` parts of their dim 0 (which it must
  /// divide), pipelined; the outputs are joined back along dim 0.
  StatusOr<std::vector<runtime::NamedTensor>> run(const std::vector<runtime::NamedTensor>& inputs,
                                                  size_t microBatches) const;
  /// The same with the stages one after another, for every micro-batch in
  /// turn: what pipelining is measured against.
  StatusOr<std::vector<runtime::NamedTensor>> runInTurn(
      const std::vector<runtime::NamedTensor>& inputs, size_t microBatches) const;

  /// The stages, their devices, memory and what crosses.
  const StagePlan& plan() const;

  struct Impl;

 private:
  explicit PipelinedSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace subgraph::api
