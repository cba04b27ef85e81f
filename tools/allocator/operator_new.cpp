//===- operator_new.cpp - The global operator new on mimalloc, failing in C++ -===//
//
// Debian's libmimalloc is built as C. Its operator new asks for the C++ new
// handler through a weak stub of std::get_new_handler that it defines
// itself, and the dynamic loader binds mimalloc's own call to that stub,
// which says no handler is installed; so when an allocation fails,
// mimalloc aborts the process (exit 134, no line) instead of calling the
// program's handler or throwing std::bad_alloc. These definitions replace
// the global allocation functions for the whole process (C++'s replaceable
// [new.delete]; the program's definitions come first in ELF symbol
// lookup, plugins included): they allocate from mimalloc as its own did,
// and on failure call the new handler or throw std::bad_alloc, as the
// standard says, so that running out of memory inside a kernel becomes the
// kernel's error (runKernelGuarded) and the program's one error line.
//
//===----------------------------------------------------------------------===//
#include <mimalloc.h>

#include <cstddef>
#include <new>

namespace {

void* allocate(std::size_t bytes, std::size_t alignment) {
  while (true) {
    void* p = alignment ? mi_malloc_aligned(bytes, alignment) : mi_malloc(bytes);
    if (p) return p;
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}

void* allocateOrNull(std::size_t bytes, std::size_t alignment) noexcept {
  try {
    return allocate(bytes, alignment);
  } catch (...) {
    return nullptr;
  }
}

std::size_t alignmentOf(std::align_val_t a) { return static_cast<std::size_t>(a); }

}  // namespace

// Weak, so that a program with its own (bench/partition_bench.cpp counts
// allocations) keeps it; in the process the program's definition, weak or
// not, still comes before libmimalloc's.
#define SUBGRAPH_REPLACEABLE __attribute__((weak))

SUBGRAPH_REPLACEABLE void* operator new(std::size_t n) { return allocate(n, 0); }
SUBGRAPH_REPLACEABLE void* operator new[](std::size_t n) { return allocate(n, 0); }
SUBGRAPH_REPLACEABLE void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return allocateOrNull(n, 0);
}
SUBGRAPH_REPLACEABLE void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return allocateOrNull(n, 0);
}
SUBGRAPH_REPLACEABLE void* operator new(std::size_t n, std::align_val_t a) {
  return allocate(n, alignmentOf(a));
}
SUBGRAPH_REPLACEABLE void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate(n, alignmentOf(a));
}
SUBGRAPH_REPLACEABLE void* operator new(std::size_t n, std::align_val_t a,
                                        const std::nothrow_t&) noexcept {
  return allocateOrNull(n, alignmentOf(a));
}
SUBGRAPH_REPLACEABLE void* operator new[](std::size_t n, std::align_val_t a,
                                          const std::nothrow_t&) noexcept {
  return allocateOrNull(n, alignmentOf(a));
}

// mi_free takes what any of the above returned, aligned or not.
SUBGRAPH_REPLACEABLE void operator delete(void* p) noexcept { mi_free(p); }
SUBGRAPH_REPLACEABLE void operator delete[](void* p) noexcept { mi_free(p); }
SUBGRAPH_REPLACEABLE void operator delete(void* p, std::size_t) noexcept { mi_free(p); }
SUBGRAPH_REPLACEABLE void operator delete[](void* p, std::size_t) noexcept { mi_free(p); }
SUBGRAPH_REPLACEABLE void operator delete(void* p, const std::nothrow_t&) noexcept { mi_free(p); }
SUBGRAPH_REPLACEABLE void operator delete[](void* p, const std::nothrow_t&) noexcept { mi_free(p); }
SUBGRAPH_REPLACEABLE void operator delete(void* p, std::align_val_t) noexcept { mi_free(p); }
SUBGRAPH_REPLACEABLE void operator delete[](void* p, std::align_val_t) noexcept { mi_free(p); }
SUBGRAPH_REPLACEABLE void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  mi_free(p);
}
SUBGRAPH_REPLACEABLE void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  mi_free(p);
}
SUBGRAPH_REPLACEABLE void operator delete(void* p, std::align_val_t,
                                          const std::nothrow_t&) noexcept {
  mi_free(p);
}
SUBGRAPH_REPLACEABLE void operator delete[](void* p, std::align_val_t,
                                            const std::nothrow_t&) noexcept {
  mi_free(p);
}
