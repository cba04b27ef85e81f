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

#ifdef SUBGRAPH_HAVE_MIMALLOC
namespace {
// Large graphs are pointer-chasing workloads: partitioning 10^6 nodes walks
// hundreds of megabytes of node, value and use-list objects in an order the
// heap does not follow, and with 4 KiB pages most of those steps also miss
// the TLB. Asking mimalloc for 2 MiB pages (MADV_HUGEPAGE on its segments,
// which Debian's default transparent-hugepage mode "madvise" honours) took
// the 10^6-node partition benchmarks 25-35% faster with the 10^4-node ones
// unchanged (docs/partitioning.md). This is a default, not a forced setting:
// MIMALLOC_LARGE_OS_PAGES=0 in the environment still turns it off. It runs
// during static initialization, before main allocates its first graph; the
// few segments made earlier keep small pages.
const bool kLargePagesByDefault = [] {
  mi_option_set_enabled_default(mi_option_large_os_pages, true);
  return true;
}();
}  // namespace
#endif

std::string heapAllocatorName() {
#ifdef SUBGRAPH_HAVE_MIMALLOC
  void* probe = std::malloc(64);
  const bool ours = mi_is_in_heap_region(probe);
  std::free(probe);
  if (ours) {
    const int v = mi_version();  // e.g. 209 for 2.0.9
    return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." +
           std::to_string(v % 10) +
           (mi_option_is_enabled(mi_option_large_os_pages) ? ", large OS pages" : "");
  }
  return "system malloc (mimalloc is linked but does not serve malloc)";
#else
  return "system malloc";
#endif
}

}  // namespace subgraph
