//===- allocator.cpp - Which heap allocator this program runs on ----------===//
//
// Calling into mimalloc here also keeps the program's dependency on it: a
// linker run with --as-needed drops a library nothing references.
//
//===----------------------------------------------------------------------===//
#include "allocator.h"

#include <cstdlib>

#ifdef SUBGRAPH_HAVE_MIMALLOC
#include <mimalloc.h>
#endif

namespace subgraph {

std::string heapAllocatorName() {
#ifdef SUBGRAPH_HAVE_MIMALLOC
  void* probe = std::malloc(64);
  const bool ours = mi_is_in_heap_region(probe);
  std::free(probe);
  if (ours) {
    const int v = mi_version();  // e.g. 209 for 2.0.9
    return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." +
           std::to_string(v % 10);
  }
  return "system malloc (mimalloc is linked but does not serve malloc)";
#else
  return "system malloc";
#endif
}

}  // namespace subgraph
