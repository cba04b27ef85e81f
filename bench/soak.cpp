//===- bench/soak.cpp - Many runs, several sessions and threads, flat memory -===//
//
// soak [--runs N] [--sessions S] [--threads T] [--seconds MAX]
//
// One process runs N requests (default 10,000) spread over S sessions
// (different thread counts, with and without the BFC arena, a plan cache
// smaller than the number of input shapes so plans are evicted and made
// again) from T client threads, and prints the resident set size every
// tenth of the way. Memory must stay flat: after the first tenth (arenas
// and plan caches warmed up), RSS may not grow by more than 16 MiB.
// Exits 1 on a failed run, a wrong result or growth; 0 otherwise. Run by
// tools/soak.sh; not part of CI (it takes a while).
//
//===----------------------------------------------------------------------===//
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "subgraph/ir/text_format.h"
#include "subgraph/runtime/session.h"

namespace {

using namespace subgraph;
using namespace subgraph::runtime;

//   %x [N, 16] -> MatMul(%w1) -> Add(%b1) -> Relu -+-> MatMul(%w2) -> %y [N, 4]
//                                                   +-> ReduceSum -> %s [N]
constexpr const char* kModel = R"(
  graph @soak(%x: f32[N, 16]) {
    %w1 = const f32[16, 32] splat(0.01)
    %b1 = const f32[32] splat(0.5)
    %w2 = const f32[32, 4] splat(0.02)
    %axes = const i64[1] [1]
    %h = MatMul(%x, %w1) @fc1
    %a = Add(%h, %b1) @bias1
    %r = Relu(%a) @relu
    %y = MatMul(%r, %w2) @fc2
    %s = ReduceSum(%r, %axes) {keepdims = 0} @sum
    return %y, %s
  })";

/// Resident set size in KiB, from /proc/self/statm.
long rssKiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

long arg(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const long runs = arg(argc, argv, "--runs", 10000);
  const long numSessions = arg(argc, argv, "--sessions", 4);
  const long numThreads = arg(argc, argv, "--threads", 4);
  const long maxSeconds = arg(argc, argv, "--seconds", 600);

  std::vector<std::unique_ptr<Session>> sessions;
  for (long s = 0; s < numSessions; ++s) {
    SessionOptions options;
    options.threads = static_cast<int>(1 + s % 3);
    options.useArena = s % 2 == 0;
    options.maxCachedPlans = 3;  // fewer than the 8 batch sizes: plans are evicted
    auto session = std::make_unique<Session>(options);
    Status st = session->load(parseGraphOrThrow(kModel));
    if (st.isOk()) st = session->compile();
    if (!st.isOk()) {
      std::fprintf(stderr, "soak: session %ld: %s\n", s, st.message().c_str());
      return 1;
    }
    sessions.push_back(std::move(session));
  }

  const auto start = std::chrono::steady_clock::now();
  std::atomic<long> next{0}, failures{0}, wrong{0};
  std::vector<long> samples;  // RSS after each tenth
  std::atomic<long> nextSample{runs / 10};
  std::mutex sampleMutex;
  std::printf("soak: %ld runs, %ld sessions, %ld threads; RSS at start %ld KiB\n", runs,
              numSessions, numThreads, rssKiB());
  std::vector<std::thread> threads;
  for (long t = 0; t < numThreads; ++t)
    threads.emplace_back([&] {
      for (long i; (i = next.fetch_add(1)) < runs;) {
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(maxSeconds)) break;
        const int64_t batch = 1 + i % 8;
        Tensor x = Tensor::splat(DataType::kFloat32, {batch, 16}, 1.0);
        StatusOr<RunResult> out = sessions[static_cast<size_t>(i % numSessions)]->run({{"x", x}});
        if (!out.isOk()) {
          if (failures.fetch_add(1) == 0)
            std::fprintf(stderr, "soak: run %ld: %s\n", i, out.status().message().c_str());
        } else {
          // relu(16 * 0.01 + 0.5) = 0.66 per hidden unit; y = 32 * 0.66 * 0.02.
          float y = out->outputs[0].tensor.data<float>()[0];
          if (out->outputs[0].tensor.dims()[0] != batch || std::abs(y - 0.4224f) > 1e-4f) ++wrong;
        }
        long due = nextSample.load();
        if (i + 1 >= due && nextSample.compare_exchange_strong(due, due + runs / 10)) {
          std::lock_guard<std::mutex> lock(sampleMutex);
          samples.push_back(rssKiB());
          std::printf("soak: %7ld runs  RSS %ld KiB\n", i + 1, samples.back());
          std::fflush(stdout);
        }
      }
    });
  for (auto& th : threads) th.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long done = std::min(next.load(), runs);
  std::printf("soak: %ld runs in %.1f s, %ld failed, %ld wrong\n", done, seconds, failures.load(),
              wrong.load());
  int status = failures.load() || wrong.load() ? 1 : 0;
  if (samples.size() >= 2) {
    long growth = samples.back() - samples.front();
    std::printf("soak: RSS after the first tenth %ld KiB, at the end %ld KiB (growth %ld KiB)\n",
                samples.front(), samples.back(), growth);
    if (growth > 16 * 1024) {
      std::printf("soak: FAIL: memory grew by more than 16 MiB\n");
      status = 1;
    }
  }
  if (done < runs) std::printf("soak: stopped after --seconds %ld\n", maxSeconds);
  std::printf("soak: %s\n", status == 0 ? "OK" : "FAIL");
  return status;
}
