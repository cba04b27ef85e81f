//===- runtime/engine/batching.h - Dynamic batching of requests -*- C++ -*-===//
//
// Dynamic batching (SessionOptions::batching): concurrent requests whose
// inputs differ only in dim 0 run as one request of the rows of all, and
// each gets its own rows of every output back. Two parts:
//  * batchRefusal(), the check that makes it valid: every graph input has a
//    free dim 0 (symbolic or 1) and every op keeps the rows apart, so a
//    batch's row i is request row i's answer;
//  * Batcher, which gathers requests for at most maxDelayUs (or until
//    maxBatch rows), runs them as one and splits the outputs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/runtime/session.h"

namespace subgraph::runtime::engine {

/// "" if dim 0 of `graph`'s inputs is a batch axis that no op mixes (each
/// output's dim 0 is the same axis), else one line naming the input or
/// node that stops it and why. Conservative: an op whose rule is not
/// known here refuses.
std::string batchRefusal(const Graph& graph);

/// Gathers concurrent requests into batches. Thread-safe.
class Batcher {
 public:
  /// Runs one (merged) request on the session.
  using RunFn = std::function<StatusOr<RunResult>(const std::vector<InputView>&)>;

  Batcher(BatchingOptions options, RunFn run) : options_(options), run_(std::move(run)) {}

  /// Runs `inputs` (already validated: every input has dim 0 rows, the
  /// same for all) in a batch with others of the same non-batch shapes
  /// that arrive within maxDelayUs; returns this request's rows of every
  /// output.
  StatusOr<RunResult> run(const std::vector<InputView>& inputs, int64_t rows);

 private:
  struct Request;
  struct Batch;

  /// Waits for the batch to fill or its delay to pass, runs it and
  /// answers every request in it.
  void lead(std::unique_lock<std::mutex>& lock, const std::string& key,
            std::shared_ptr<Batch> batch);
  static void deliver(Batch& batch, StatusOr<RunResult> merged);

  BatchingOptions options_;
  RunFn run_;
  std::mutex mutex_;
  /// The batch still gathering requests, per input signature.
  std::map<std::string, std::shared_ptr<Batch>> open_;
};

}  // namespace subgraph::runtime::engine
