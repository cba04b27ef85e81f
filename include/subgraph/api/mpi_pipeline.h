//===- subgraph/api/mpi_pipeline.h - One pipeline stage per MPI rank -*- C++ -*-===//
//
// A model cut into pipeline stages (stages.h) and run across the ranks of
// an MPI job (`mpirun -np N`), one stage per rank, on one host or several.
// Every rank plans the same stages from the same model and options and
// compiles only its own. Rank 0 splits each request's batch into
// micro-batches, runs stage 0 on them and sends on what later stages read;
// rank k receives, runs stage k and sends on; the last rank sends the
// outputs back to rank 0, which joins them. Sends and receives are
// non-blocking, so a rank computes micro-batch i+1 while i travels.
//
// Failure is collective and bounded: a rank that cannot load, plan or
// compile its stage, or whose stage fails, tells every rank, and every
// rank's call returns the same error naming that rank and its stage. A
// rank that waits longer than MpiOptions::timeoutSeconds within a run for
// the next message (its peer died or hangs) ends the run the same way.
//
// Built where Open MPI (libopenmpi-dev) was found; elsewhere create()
// fails with kUnavailable.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "subgraph/api/inference_session.h"
#include "subgraph/api/stages.h"

namespace subgraph::api {

/// True if this build runs pipelines over MPI.
bool mpiBuilt();
/// The number of ranks mpirun started this process among (from its
/// environment), or 0 when mpirun did not start it.
int mpiLaunchedRanks();
/// This process's rank as mpirun's environment gives it, or -1.
int mpiLaunchedRank();

/// How the ranks watch each other.
struct MpiOptions {
  /// Seconds a rank waits for its next message within a run (and for the
  /// other ranks at setup) before it ends the run with an error naming
  /// the rank it waited for.
  double timeoutSeconds = 60;
};

class MpiPipelinedSession {
 public:
  /// Collective: every rank of MPI_COMM_WORLD calls it with the same model
  /// and options, one device per rank. `model` is the rank's loaded model,
  /// or the error loading it, which every rank then returns (a rank must
  /// join even when it has nothing to run). Starts MPI if need be.
  static StatusOr<std::unique_ptr<MpiPipelinedSession>> create(
      StatusOr<std::unique_ptr<Graph>> model, InferenceOptions options,
      std::vector<StageDevice> devices, const InputShapes& microBatch = {}, MpiOptions mpi = {});
  /// Rank 0: close(). Other ranks: nothing (serve() has returned).
  ~MpiPipelinedSession();
  MpiPipelinedSession(const MpiPipelinedSession&) = delete;
  MpiPipelinedSession& operator=(const MpiPipelinedSession&) = delete;

  /// This process's rank, and how many there are.
  int rank() const;
  int ranks() const;
  /// The stages, their devices, memory and what crosses.
  const StagePlan& plan() const;
  /// "rank 1 (stage 1 on emu:1)": how errors name this rank.
  std::string where() const;

  /// Rank 0: runs `inputs` through every rank's stage in `microBatches`
  /// parts of dim 0 (which it must divide); the outputs joined back.
  StatusOr<std::vector<runtime::NamedTensor>> run(const std::vector<runtime::NamedTensor>& inputs,
                                                  size_t microBatches);
  /// Every other rank: runs its stage on the micro-batches that arrive,
  /// run after run, until rank 0 closes; returns how many it ran.
  StatusOr<size_t> serve();
  /// Rank 0: ends every rank's serve(). Once; later calls do nothing.
  Status close();

  struct Impl;

 private:
  explicit MpiPipelinedSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Ends MPI in this process (MPI_Finalize) if it started, unless a run
/// failed (a peer may never answer; the job ends with the process). The
/// program calls it before it exits; the Python package at exit.
void mpiFinalize();

}  // namespace subgraph::api
