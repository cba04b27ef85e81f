//===- plugins/onednn/kernels/dnnl_context.h - Engine, streams, threads -*- C++ -*-===//
//
// The process-wide oneDNN state every kernel of the compute core shares: one
// CPU engine, a stream per calling thread, and the thread policy.
//
// Thread policy: Debian's oneDNN 2.6 runs its primitives on OpenMP (GOMP).
// The runtime runs everything else on a oneTBB arena of `--threads` slots
// and never runs a kernel that brings its own pool concurrently with any
// other kernel (usesOwnThreads). So before each primitive is created or
// runs, the calling thread's OpenMP team size is set to the session's
// thread count (the plugin's KernelContext): one knob (`--threads`)
// governs both pools, and at any moment only one of them is busy.
// docs/onednn.md has the details.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <span>
#include <string>

namespace subgraph::onednn {

/// The CPU engine, created on first use.
dnnl::engine& cpuEngine();

/// An in-order stream on the CPU engine for the calling thread. Streams are
/// cheap but not free, so each thread keeps one.
dnnl::stream& threadStream();

/// Sets the OpenMP team size that primitives run by the calling thread use;
/// values below 1 mean one thread per core. Cheap when unchanged.
void setCallerThreads(int threads);

/// The number of cores OpenMP sees (its default team size).
int defaultThreads();

/// Runs a primitive with one source and one destination on the caller's
/// buffers and the user scratchpad, on the calling thread's stream, and
/// waits for it.
void executeUnary(const dnnl::primitive& primitive, const dnnl::memory::desc& srcDesc,
                  const void* src, const dnnl::memory::desc& dstDesc, void* dst,
                  const dnnl::memory::desc& scratchDesc, void* scratch);

/// A copy of f32 weights, laid out as `user` describes, reordered into the
/// layout a primitive chose (`wanted`): done once, when a primitive is
/// prepared, so runs read the weights in place.
dnnl::memory reorderedWeights(const dnnl::memory::desc& user, const float* data,
                              const dnnl::memory::desc& wanted);

/// The logical weight dims oneDNN's convolution and deconvolution take:
/// {out, in, kH, kW}, or {groups, out/groups, in/groups, kH, kW} when
/// grouped. The user layout tag (oihw, iohw, ...) says how they are stored.
dnnl::memory::dims groupedWeightDims(int64_t groups, int64_t outChannels, int64_t inChannels,
                                     int64_t kernelH, int64_t kernelW);

/// An f32 memory of `count` elements holding `bias`, or zeros when it is
/// empty (oneDNN's bias argument is all or nothing).
dnnl::memory biasMemory(std::span<const float> bias, int64_t count);

/// "oneDNN 2.6.3 (OpenMP)": the library version and its CPU threading
/// runtime, for reports.
std::string libraryDescription();

/// True if the CPU has native bf16 instructions (AVX512-BF16 or AMX), the
/// precondition of the bf16 precision mode paying off.
bool hasNativeBf16();

}  // namespace subgraph::onednn
