//===- allocator.h - Which heap allocator this program runs on -*- C++ -*-===//
//
// Programs link subgraph_allocator (tools/allocator/CMakeLists.txt says
// why); this names the allocator that actually serves malloc, so that
// `subgraph --version` and benchmark reports say what they ran on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace subgraph {

/// The allocator serving malloc in this process: "mimalloc 2.0.9" when
/// mimalloc replaced it, else "system malloc". Probes with one allocation,
/// so a build that links mimalloc but does not get to replace malloc (a
/// preloaded allocator wins) says so rather than what was linked.
std::string heapAllocatorName();

}  // namespace subgraph
