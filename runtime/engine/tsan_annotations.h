//===- runtime/engine/tsan_annotations.h - Happens-before hints for TSan -*- C++ -*-===//
//
// Debian's oneTBB is not built with ThreadSanitizer, so the ordering its
// scheduler guarantees (task_arena::execute running our functor on a worker
// thread and returning to the caller after it finished) is invisible to
// TSan, which then reports every value the functor wrote and the caller
// reads as a race. These hints state that ordering to TSan explicitly. They
// compile to nothing outside TSan builds (tools/tsan.sh).
//
//===----------------------------------------------------------------------===//
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SUBGRAPH_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(SUBGRAPH_TSAN)
#define SUBGRAPH_TSAN 1
#endif

#ifdef SUBGRAPH_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace subgraph::runtime::engine {

/// Everything this thread did so far happens before a later
/// tsanAcquire(token) on any thread.
inline void tsanRelease([[maybe_unused]] void* token) {
#ifdef SUBGRAPH_TSAN
  __tsan_release(token);
#endif
}

/// What threads did before their tsanRelease(token) happens before what
/// this thread does next.
inline void tsanAcquire([[maybe_unused]] void* token) {
#ifdef SUBGRAPH_TSAN
  __tsan_acquire(token);
#endif
}

/// arena.execute(f), with the order oneTBB guarantees (f, wherever it
/// runs, finishes before execute returns) stated to TSan.
template <class Arena, class F>
void executeOrdered(Arena& arena, F&& f) {
  int token = 0;
  tsanRelease(&token);
  arena.execute([&] {
    tsanAcquire(&token);
    f();
    tsanRelease(&token);
  });
  tsanAcquire(&token);
}

}  // namespace subgraph::runtime::engine
