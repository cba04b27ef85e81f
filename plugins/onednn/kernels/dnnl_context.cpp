//===- plugins/onednn/kernels/dnnl_context.cpp - Engine, streams, threads -===//
//
// The shared oneDNN engine, per-thread streams and the OpenMP team size;
// see dnnl_context.h for the thread policy.
//
//===----------------------------------------------------------------------===//
#include "dnnl_context.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

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

void executeUnary(const dnnl::primitive& primitive, const dnnl::memory::desc& srcDesc,
                  const void* src, const dnnl::memory::desc& dstDesc, void* dst,
                  const dnnl::memory::desc& scratchDesc, void* scratch) {
  dnnl::engine& engine = cpuEngine();
  dnnl::memory srcMem(srcDesc, engine, const_cast<void*>(src));
  dnnl::memory dstMem(dstDesc, engine, dst);
  dnnl::memory scratchMem(scratchDesc, engine, scratch);
  dnnl::stream& stream = threadStream();
  primitive.execute(
      stream, {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_DST, dstMem}, {DNNL_ARG_SCRATCHPAD, scratchMem}});
  stream.wait();
}

dnnl::memory reorderedWeights(const dnnl::memory::desc& user, const float* data,
                              const dnnl::memory::desc& wanted) {
  dnnl::memory source(user, cpuEngine(), const_cast<float*>(data));
  dnnl::memory weights(wanted, cpuEngine());
  dnnl::stream& stream = threadStream();
  dnnl::reorder(source, weights).execute(stream, source, weights);
  stream.wait();
  return weights;
}

dnnl::memory::dims groupedWeightDims(int64_t groups, int64_t outChannels, int64_t inChannels,
                                     int64_t kernelH, int64_t kernelW) {
  if (groups == 1) return {outChannels, inChannels, kernelH, kernelW};
  return {groups, outChannels / groups, inChannels / groups, kernelH, kernelW};
}

dnnl::memory biasMemory(std::span<const float> bias, int64_t count) {
  dnnl::memory memory({{count}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a},
                      cpuEngine());
  auto* out = static_cast<float*>(memory.get_data_handle());
  if (bias.empty())
    std::fill(out, out + count, 0.0f);
  else
    std::memcpy(out, bias.data(), bias.size() * sizeof(float));
  return memory;
}

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
