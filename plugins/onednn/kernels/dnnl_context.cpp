//===- plugins/onednn/kernels/dnnl_context.cpp - Engine, streams, threads -===//
//
// The shared oneDNN engine, per-thread streams and the OpenMP team size;
// see dnnl_context.h for the thread policy.
//
//===----------------------------------------------------------------------===//
#include "dnnl_context.h"

#include <omp.h>

#include <fmt/format.h>

namespace subgraph::onednn {

dnnl::engine& cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& threadStream() {
  thread_local dnnl::stream stream(cpuEngine());
  return stream;
}

void setCallerThreads(int threads) {
  int wanted = threads > 0 ? threads : defaultThreads();
  // omp_set_num_threads changes only the calling thread's ICV; checking
  // first keeps the common case (already right) to one load.
  if (omp_get_max_threads() != wanted) omp_set_num_threads(wanted);
}

int defaultThreads() { return omp_get_num_procs(); }

std::string libraryDescription() {
  const dnnl_version_t* v = dnnl_version();
  const char* runtime = v->cpu_runtime == DNNL_RUNTIME_OMP   ? "OpenMP"
                        : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                        : v->cpu_runtime == DNNL_RUNTIME_SEQ ? "sequential"
                                                             : "other";
  return fmt::format("oneDNN {}.{}.{} ({})", v->major, v->minor, v->patch, runtime);
}

bool hasNativeBf16() {
  dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

}  // namespace subgraph::onednn
