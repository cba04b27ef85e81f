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

#include <utility>

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

/// A oneTBB task body whose construction happens before its run, as TSan
/// sees it. task_group::run copies the body into a task object in oneTBB's
/// pooled memory, and another thread runs it; the hand-off is inside the
/// uninstrumented library, so reading the body's captures would be reported
/// against the spawning thread's writes. The body releases its own address
/// once constructed, and the run acquires that address before it reads any
/// member: `this` is a register, not memory another thread wrote.
template <class F>
class OrderedTask {
 public:
  explicit OrderedTask(F f) : f_(std::move(f)) { tsanRelease(this); }
  OrderedTask(const OrderedTask& other) : f_(other.f_) { tsanRelease(this); }
  OrderedTask(OrderedTask&& other) noexcept : f_(std::move(other.f_)) { tsanRelease(this); }
  OrderedTask& operator=(const OrderedTask&) = delete;
  OrderedTask& operator=(OrderedTask&&) = delete;
  ~OrderedTask() = default;

  void operator()() const {
    tsanAcquire(const_cast<OrderedTask*>(this));
    f_();
  }

 private:
  F f_;
};

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
