//===- tests/runtime/concurrency_test.cpp - Threads and parallel branches -===//
//
// run() is thread-safe and independent branches may run concurrently, with
// memory shared between buffers whose lifetimes do not overlap. These tests
// compare concurrent and parallel executions against a serial oracle on
// fixed and randomly generated graphs (the seed is printed).
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "subgraph/runtime/backend.h"

#include "runtime_test_util.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT

//   %x [1,8,6,6] --> conv3x3 -> relu --+
//        |                             +--> Add -> GlobalAveragePool -> Flatten -> %y [1, 8]
//        +---------> conv1x1 ----------+
constexpr const char* kTwoBranches = R"(
  graph @g(%x: f32[1, 8, 6, 6]) {
    %w1 = const f32[8, 8, 3, 3] splat(0.05)
    %w2 = const f32[8, 8, 1, 1] splat(-0.1)
    %c1 = Conv(%x, %w1) {pads = [1, 1, 1, 1]} @conv_a
    %r1 = Relu(%c1) @relu_a
    %c2 = Conv(%x, %w2) @conv_b
    %s = Add(%r1, %c2) @add
    %p = GlobalAveragePool(%s) @pool
    %y = Flatten(%p) @flatten
    return %y
  })";

/// Eight threads share one session; every result equals the serial one
/// for the same input, and no more frames exist than concurrent requests.
TEST(ConcurrencyTest, ManyThreadsShareOneSession) {
  SessionOptions serialOptions;
  serialOptions.threads = 1;
  auto serial = compileText(kTwoBranches, serialOptions);
  SessionOptions options;
  options.threads = 4;
  auto shared = compileText(kTwoBranches, options);

  constexpr int kThreads = 8, kRuns = 10;
  std::mt19937 rng(7);
  std::vector<Tensor> inputs, expected;
  for (int i = 0; i < kThreads * kRuns; ++i) {
    inputs.push_back(randomF32({1, 8, 6, 6}, rng));
    expected.push_back(runOk(*serial, {{"x", inputs.back()}})[0].tensor);
  }
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0}, failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        size_t i = static_cast<size_t>(t * kRuns + r);
        StatusOr<RunResult> out = shared->run({{"x", inputs[i]}});
        if (!out.isOk()) {
          ++failures;
          continue;
        }
        if (values(out->outputs[0].tensor) != values(expected[i])) ++mismatches;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_LE(shared->numFramesCreated(), static_cast<size_t>(kThreads));
  EXPECT_GE(shared->numFramesCreated(), 1u);
}

// Builds a random DAG of elementwise ops over [4, 64] tensors: each node
// reads one or two earlier values; every value nobody reads is an output.
std::string randomDag(std::mt19937& rng, int nodes) {
  std::string text = "graph @dag(%x: f32[4, 64]) {\n  %half = const f32[] [0.5]\n";
  std::vector<std::string> names = {"x"};
  std::vector<int> uses = {0};
  const char* unary[] = {"Relu", "Neg", "Sigmoid", "Tanh"};
  const char* binary[] = {"Add", "Mul", "Sub", "Max"};
  for (int i = 0; i < nodes; ++i) {
    std::string name = "v" + std::to_string(i);
    size_t a = rng() % names.size();
    ++uses[a];
    if (rng() % 2) {
      text += "  %" + name + " = " + unary[rng() % 4] + "(%" + names[a] + ")\n";
    } else {
      size_t b = rng() % names.size();
      ++uses[b];
      text += "  %" + name + " = " + binary[rng() % 4] + "(%" + names[a] + ", %" + names[b] + ")\n";
    }
    // Keep magnitudes bounded so Mul chains cannot overflow.
    std::string scaled = name + "s";
    text += "  %" + scaled + " = Mul(%" + name + ", %half)\n";
    names.push_back(scaled);
    uses.push_back(0);
  }
  std::string outs;
  for (size_t i = 1; i < names.size(); ++i)
    if (uses[i] == 0) outs += (outs.empty() ? "%" : ", %") + names[i];
  return text + "  return " + outs + "\n}\n";
}

/// Random DAGs run on four threads with parallel branches give bit-identical
/// results to a serial run, so memory reuse never races with a reader.
TEST(ConcurrencyTest, RandomDagsParallelMatchSerial) {
  unsigned seed = std::random_device{}();
  std::printf("RandomDagsParallelMatchSerial seed=%u\n", seed);
  std::mt19937 rng(seed);
  for (int round = 0; round < 20; ++round) {
    std::string text = randomDag(rng, 10 + static_cast<int>(rng() % 30));
    SessionOptions serialOptions;
    serialOptions.threads = 1;
    SessionOptions parallelOptions;
    parallelOptions.threads = 4;
    auto serial = compileText(text, serialOptions);
    auto parallel = compileText(text, parallelOptions);
    Tensor x = randomF32({4, 64}, rng);
    auto want = runOk(*serial, {{"x", x}});
    for (int rep = 0; rep < 3; ++rep) {
      auto got = runOk(*parallel, {{"x", x}});
      ASSERT_EQ(got.size(), want.size()) << "seed=" << seed << "\n" << text;
      for (size_t o = 0; o < got.size(); ++o)
        ASSERT_EQ(values(got[o].tensor), values(want[o].tensor))
            << "seed=" << seed << " output " << want[o].name << "\n"
            << text;
    }
  }
}

/// Several sessions (different graphs and thread counts) run at once, two
/// client threads each, while another thread keeps creating, compiling,
/// running and destroying sessions: every result equals the serial one.
/// Under TSan (tools/tsan.sh) this is the check that sessions share no
/// unsynchronized state (registries, op tables, arenas).
TEST(ConcurrencyTest, DifferentSessionsAtOnceWithSessionChurn) {
  unsigned seed = std::random_device{}();
  std::printf("DifferentSessionsAtOnceWithSessionChurn seed=%u\n", seed);
  std::mt19937 rng(seed);
  constexpr int kSessions = 3, kClientsPerSession = 2, kRuns = 6;
  std::vector<std::string> texts;
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<Tensor> inputs;
  std::vector<std::vector<NamedTensor>> expected;
  for (int s = 0; s < kSessions; ++s) {
    texts.push_back(randomDag(rng, 8 + s * 4));
    SessionOptions serialOptions;
    serialOptions.threads = 1;
    SessionOptions options;
    options.threads = 1 + s;
    options.useArena = s % 2 == 0;
    sessions.push_back(compileText(texts.back(), options));
    inputs.push_back(randomF32({4, 64}, rng));
    expected.push_back(runOk(*compileText(texts.back(), serialOptions), {{"x", inputs.back()}}));
  }
  std::atomic<int> mismatches{0}, failures{0};
  std::atomic<bool> done{false};
  std::thread churn([&] {
    for (int i = 0; !done.load() || i < 3; ++i) {
      SessionOptions options;
      options.threads = 2;
      Session temporary(options);
      if (!temporary.load(parseGraphOrThrow(texts[static_cast<size_t>(i) % texts.size()])).isOk() ||
          !temporary.compile().isOk() ||
          !temporary.run({{"x", inputs[static_cast<size_t>(i) % inputs.size()]}}).isOk())
        ++failures;
    }
  });
  std::vector<std::thread> clients;
  for (int s = 0; s < kSessions; ++s)
    for (int c = 0; c < kClientsPerSession; ++c)
      clients.emplace_back([&, s] {
        for (int r = 0; r < kRuns; ++r) {
          StatusOr<RunResult> out =
              sessions[static_cast<size_t>(s)]->run({{"x", inputs[static_cast<size_t>(s)]}});
          if (!out.isOk()) {
            ++failures;
            continue;
          }
          const auto& want = expected[static_cast<size_t>(s)];
          for (size_t o = 0; o < want.size(); ++o)
            if (values(out->outputs[o].tensor) != values(want[o].tensor)) ++mismatches;
        }
      });
  for (auto& th : clients) th.join();
  done = true;
  churn.join();
  EXPECT_EQ(failures.load(), 0) << "seed=" << seed;
  EXPECT_EQ(mismatches.load(), 0) << "seed=" << seed;
}

// Counts the runs inside a kernel at once. A run waits (up to `patience`)
// until `meet` runs are inside together, so runs a session serialises never
// meet: `met` counts the runs that saw the others.
struct Rendezvous {
  std::mutex mutex;
  std::condition_variable changed;
  int inside = 0, most = 0, met = 0, meet = 2;
  std::chrono::milliseconds patience{10000};

  void visit() {
    std::unique_lock<std::mutex> lock(mutex);
    most = std::max(most, ++inside);
    changed.notify_all();
    if (changed.wait_for(lock, patience, [&] { return inside >= meet; })) ++met;
    // Stay until the others counted themselves in too.
    changed.wait_for(lock, std::chrono::milliseconds(20));
    --inside;
  }
};

class MeetKernel final : public Kernel {
 public:
  MeetKernel(Rendezvous& r, bool ownThreads, bool concurrent)
      : r_(r), ownThreads_(ownThreads), concurrent_(concurrent) {}
  bool usesOwnThreads() const override { return ownThreads_; }
  bool concurrentRequests() const override { return concurrent_; }
  Status resize(ResizeContext& ctx) const override {
    ctx.setOutput(0, ctx.inputDesc(0));
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    r_.visit();
    std::memcpy(ctx.output(0).raw(), ctx.input(0).raw(), ctx.input(0).byteSize());
    return Status::ok();
  }

 private:
  Rendezvous& r_;
  bool ownThreads_, concurrent_;
};

/// One session of one thread whose only step is a MeetKernel; `clients`
/// threads run it `runs` times each.
Rendezvous& meetThrough(Rendezvous& r, bool ownThreads, bool concurrent, int maxConcurrentRuns,
                        int clients, int runs) {
  auto backend = std::make_shared<Backend>("meet", Device{"cpu", 0}, nullptr, nullptr);
  auto p = std::make_shared<Provider>("meet");
  p->add("subgraph.meet.Copy",
         [&r, ownThreads, concurrent](const Node&,
                                      const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
           return std::unique_ptr<Kernel>(std::make_unique<MeetKernel>(r, ownThreads, concurrent));
         });
  backend->addProvider(p);
  SessionOptions options;
  options.backendInstances = {backend};
  options.threads = 1;
  options.maxConcurrentRuns = maxConcurrentRuns;
  auto session = compileText(R"(graph @g(%x: f32[4]) {
    %y = subgraph.meet.Copy(%x) {body = graph @b(%i: f32[4]) {
      %o = Identity(%i)
      return %o
    }}
    return %y
  })",
                             options);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      for (int i = 0; i < runs; ++i)
        if (!session->run({{"x", f32({4}, {1, 2, 3, 4})}}).isOk()) ++failures;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  return r;
}

/// Two requests on one session of one thread run at the same time: each
/// has a frame and an arena of its own (one arena of one slot would queue
/// the second request behind the first).
TEST(ConcurrencyTest, TwoRequestsOfOneThreadSessionRunAtOnce) {
  Rendezvous r;
  meetThrough(r, /*ownThreads=*/false, /*concurrent=*/false, 0, 2, 1);
  EXPECT_EQ(r.most, 2);
  EXPECT_EQ(r.met, 2);
}

/// A kernel with its own threads that allows concurrent requests meets
/// another request; one that does not runs alone (the negative case), as
/// do all requests when the session bounds them to one.
TEST(ConcurrencyTest, OwnThreadKernelsRunAloneUnlessTheyAllowConcurrentRequests) {
  Rendezvous allowed;
  meetThrough(allowed, true, true, 0, 2, 1);
  EXPECT_EQ(allowed.most, 2);

  Rendezvous alone;
  alone.patience = std::chrono::milliseconds(300);  // each run waits it out alone
  meetThrough(alone, true, false, 0, 2, 1);
  EXPECT_EQ(alone.most, 1);
  EXPECT_EQ(alone.met, 0);
}

TEST(ConcurrencyTest, MaxConcurrentRunsBoundsTheRequests) {
  Rendezvous bounded;
  bounded.patience = std::chrono::milliseconds(300);
  meetThrough(bounded, false, false, /*maxConcurrentRuns=*/1, 2, 1);
  EXPECT_EQ(bounded.most, 1);
  EXPECT_EQ(bounded.met, 0);

  SessionOptions bad;
  bad.maxConcurrentRuns = -1;
  Session s(bad);
  Status st = s.load(parseGraphOrThrow("graph @g(%x: f32[1]) {\n %y = Relu(%x)\n return %y\n}"));
  EXPECT_THAT(st.message(),
              ::testing::HasSubstr("maxConcurrentRuns must be 0 (no bound) or more, not -1"));
}

}  // namespace
}  // namespace subgraph::runtime
