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
// the TLB, while every fresh page costs a fault. Asking mimalloc for 2 MiB
// pages (MADV_HUGEPAGE on its segments, which Debian's default
// transparent-hugepage mode "madvise" honours) is a default, not a forced
// setting: MIMALLOC_LARGE_OS_PAGES=0 in the environment still turns it off.
//
// mimalloc reads its options once, in its own constructor, which the
// dynamic loader runs before any constructor of this program; a default
// set by a static initializer came too late to count (--version said
// "large OS pages" while the segments had small ones; docs/partitioning.md
// has the figures). The program's DT_PREINIT_ARRAY runs before every
// shared library's constructor, and setting a default only writes
// mimalloc's option table, which is relocated by then.
void enableLargePages(int, char**, char**) {
  mi_option_set_enabled_default(mi_option_large_os_pages, true);
}
// Executables only: the programs link this static library, nothing else.
__attribute__((section(".preinit_array"),
               used)) void (*const kEnableLargePages)(int, char**, char**) = enableLargePages;
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
