//===- plugins/onednn/kernels/dnnl_context.h - Engine, streams, threads -*- C++ -*-===//
//
// The process-wide oneDNN state every kernel of the compute core shares: one
// CPU engine, a stream per calling thread, and the thread policy.
//
// Thread policy: Debian's oneDNN 2.6 runs its primitives on OpenMP (GOMP).
// The runtime runs everything else on a oneTBB arena of `--threads` slots
// and never runs a kernel that brings its own pool concurrently with any
// other kernel (Kernel::usesOwnThreads). So before each primitive runs, the
// calling thread's OpenMP team size is set to the arena's size: one knob
// (`--threads`) governs both pools, and at any moment only one of them is
// busy. docs/onednn.md has the details.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

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

/// "oneDNN 2.6.3 (OpenMP)": the library version and its CPU threading
/// runtime, for reports.
std::string libraryDescription();

/// True if the CPU has native bf16 instructions (AVX512-BF16 or AMX), the
/// precondition of the bf16 precision mode paying off.
bool hasNativeBf16();

}  // namespace subgraph::onednn
