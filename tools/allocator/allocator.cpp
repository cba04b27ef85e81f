//===- allocator.cpp - Which heap allocator this program runs on ----------===//
//
// Calling into mimalloc here also keeps the program's dependency on it: a
// linker run with --as-needed drops a library nothing references.
//
//===----------------------------------------------------------------------===//
#include "allocator.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <system_error>

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

#ifdef SUBGRAPH_HAVE_MIMALLOC
namespace {
// mimalloc 2.0's arenas hand out memory in blocks of its segment size,
// and a taken block starts with its segment's header, which is never all
// zero; a block nobody took is still as the kernel gave it.
constexpr size_t kArenaBlock = size_t{32} << 20;
constexpr size_t kPopulateStep = size_t{2} << 20;  // one huge page

// SUBGRAPH_HEAP_PREFAULT=0 keeps the second core free, and runs a command
// as it ran before the helper, for a comparison.
bool disabledByEnvironment() {
  const char* v = std::getenv("SUBGRAPH_HEAP_PREFAULT");
  return v && std::string_view(v) == "0";
}

// The arena's address space counts against RLIMIT_AS and RLIMIT_DATA
// whether or not it is used: under either limit, a reservation sized for
// the whole phase could fail allocations that would have fitted.
bool addressSpaceLimited() {
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit limit{};
    if (getrlimit(resource, &limit) != 0 || limit.rlim_cur != RLIM_INFINITY) return true;
  }
  return false;
}

// Read with process_vm_readv, which fails instead of faulting: mimalloc
// may decommit memory it has taken and freed (an inaccessible mapping), and
// a plain load of a block taken, freed and decommitted between two looks
// would kill the process. An unreadable block counts as not taken, so the
// helper waits rather than runs ahead.
bool blockTaken(const char* block) {
  uint64_t words[8] = {};
  iovec local{words, sizeof words};
  iovec remote{const_cast<char*>(block), sizeof words};
  if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof words))
    return false;
  for (uint64_t w : words)
    if (w != 0) return true;
  return false;
}
}  // namespace

HeapPrefault::HeapPrefault(size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  // blockTaken() reads mimalloc 2.0's arena layout; another version gets
  // no helper rather than one that may misjudge how far to run.
  const int version = mi_version();
  if (bytes < kMinBytes || disabledByEnvironment() || version / 10 != 20 || addressSpaceLimited())
    return;
  const size_t size = (bytes + kArenaBlock - 1) / kArenaBlock * kArenaBlock;
  mi_arena_id_t arena{};
  if (mi_reserve_os_memory_ex(size, /*commit=*/true, /*allow_large=*/true, /*exclusive=*/false,
                              &arena) != 0)
    return;
  size_t areaSize = 0;
  char* area = static_cast<char*>(mi_arena_area(arena, &areaSize));
  if (!area || areaSize == 0) return;
  // 2 MiB pages, as the rest of the heap has (enableLargePages above).
  if (mi_option_is_enabled(mi_option_large_os_pages)) madvise(area, areaSize, MADV_HUGEPAGE);
  try {
    thread_ = std::thread([this, area, areaSize] { populate(area, areaSize); });
  } catch (const std::system_error&) {
    // No thread to be had (a process or cgroup limit): the phase runs as
    // it would without a helper, on an arena mimalloc still uses.
  }
#else
  (void)bytes;
#endif
}

void HeapPrefault::populate(char* area, size_t size) {
#ifdef MADV_POPULATE_WRITE
  size_t takenEnd = 0;  // blocks [0, takenEnd) are taken
  size_t done = 0;
  while (done < size && !stop_.load(std::memory_order_relaxed)) {
    // Only populated blocks are read, so a look never maps a page.
    while (takenEnd < done && blockTaken(area + takenEnd)) takenEnd += kArenaBlock;
    if (done >= takenEnd + kAheadBytes) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    if (madvise(area + done, kPopulateStep, MADV_POPULATE_WRITE) != 0) break;
    done += kPopulateStep;
    populated_.store(done, std::memory_order_relaxed);
  }
#else
  (void)area;
  (void)size;
#endif
}
#else
HeapPrefault::HeapPrefault(size_t bytes) { (void)bytes; }
void HeapPrefault::populate(char*, size_t) {}
#endif

HeapPrefault::~HeapPrefault() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

}  // namespace subgraph
