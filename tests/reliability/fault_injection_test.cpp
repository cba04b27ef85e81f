//===- tests/reliability/fault_injection_test.cpp - Faults mid-compile and mid-run -===//
//
// Faults injected at each point where foreign code or a resource can fail:
//  * the device allocator refusing the n-th allocation, for every n up to
//    the first fault-free run (so both compile-time static memory and
//    run-time frame memory fail at some point);
//  * a kernel whose run() throws or returns an error on one request;
//  * a selector that throws, a property whose Filter returns an invalid
//    region, and a property that connects its fused node with the wrong
//    number of inputs (the in-process partition API; the plugin-level
//    versions live with the plugin host's tests in tests/plugins/).
// After each fault: the call failed with one clear line, or the session
// is still usable (the next run gives the right answer); the caller's input
// bytes are unchanged; the allocator has every byte back once the session
// is gone. Leaks of host memory are LeakSanitizer's job (asan preset).
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <stdexcept>

#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/partition/partitioner.h"
#include "subgraph/runtime/reference_backend.h"
#include "subgraph/runtime/session.h"

namespace subgraph {
namespace {

using namespace runtime;
using ::testing::HasSubstr;

//   %k [4] ---> Mul(%k, %k) (constant: computed into static memory at compile)
//                  |
//   %x [2, 4] -> Relu -> Add -> Neg -> %y
constexpr const char* kGraph = R"(
  graph @g(%x: f32[2, 4]) {
    %k = const f32[4] [1.0, 2.0, 3.0, 4.0]
    %kk = Mul(%k, %k) @square
    %r = Relu(%x) @relu
    %s = Add(%r, %kk) @add
    %y = Neg(%s) @neg
    return %y
  })";

Tensor input() {
  return Tensor::fromVector<float>(DataType::kFloat32, {2, 4}, {-1, 2, -3, 4, 5, -6, 7, -8});
}

std::vector<float> expected() {
  std::vector<float> x = {-1, 2, -3, 4, 5, -6, 7, -8}, y;
  for (size_t i = 0; i < x.size(); ++i) {
    float k = static_cast<float>(i % 4 + 1);
    y.push_back(-(std::max(x[i], 0.0f) + k * k));
  }
  return y;
}

std::vector<float> floats(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

/// Host memory that refuses the allocation with index `failAt` (0-based,
/// counting every call), once.
class FaultyAllocator final : public Allocator {
 public:
  explicit FaultyAllocator(int64_t failAt) : failAt_(failAt) {}
  const std::string& name() const override { return name_; }
  StatusOr<void*> allocate(size_t bytes, size_t alignment) override {
    if (calls_.fetch_add(1) == failAt_)
      return Status(StatusCode::kLimitExceeded, "injected allocation failure");
    return inner_.allocate(bytes, alignment);
  }
  void deallocate(void* ptr) override { inner_.deallocate(ptr); }
  AllocatorStats stats() const override { return inner_.stats(); }
  int64_t calls() const { return calls_.load(); }

 private:
  std::string name_ = "faulty:0";
  HostAllocator inner_{"faulty:0"};
  int64_t failAt_;
  std::atomic<int64_t> calls_{0};
};

/// A replacement for the reference backend (a backend instance named
/// "reference" takes its place, and every ONNX-domain node runs there):
/// the reference kernels over `allocator`, optionally with `extra`
/// registered first so that its ops win.
std::shared_ptr<Backend> cpuBackend(std::shared_ptr<Allocator> allocator,
                                    std::shared_ptr<Provider> extra = nullptr) {
  auto backend =
      std::make_shared<Backend>(kReferenceBackendName, Device{"cpu", 0}, std::move(allocator),
                                std::make_unique<InlineWorkQueue>());
  if (extra) backend->addProvider(std::move(extra));
  backend->addProvider(referenceProvider());
  return backend;
}

enum class KernelFault { kThrow, kError };

/// Relu that fails on the request numbered `failOn` (0-based; -1 never)
/// and asks for `staticBytes` of session memory (as a kernel with
/// prepacked weights does), which compile() allocates.
class FaultyRelu final : public Kernel {
 public:
  FaultyRelu(KernelFault fault, int failOn, size_t staticBytes = 0)
      : fault_(fault), failOn_(failOn), staticBytes_(staticBytes) {}
  size_t staticBytes() const override { return staticBytes_; }
  Status resize(ResizeContext& ctx) const override {
    ctx.setOutput(0, ctx.inputDesc(0));
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    if (runs_.fetch_add(1) == failOn_) {
      if (fault_ == KernelFault::kThrow) throw std::runtime_error("injected kernel exception");
      return ctx.fail("injected kernel error");
    }
    const float* x = ctx.input(0).data<float>();
    float* y = ctx.output(0).mutableData<float>();
    for (int64_t i = 0; i < ctx.input(0).numElements(); ++i) y[i] = std::max(x[i], 0.0f);
    return Status::ok();
  }

 private:
  KernelFault fault_;
  int failOn_;
  size_t staticBytes_;
  mutable std::atomic<int> runs_{0};
};

/// A provider whose Relu asks for static memory, so that compile() has a
/// device allocation to fail.
std::shared_ptr<Provider> packedRelu() {
  auto provider = std::make_shared<Provider>("packed-relu");
  provider->add("Relu", [](const Node&, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<FaultyRelu>(KernelFault::kError, -1, 256));
  });
  return provider;
}

/// Every allocation of compile and run is refused in turn (with and
/// without the BFC arena): each step fails with the injected message or
/// succeeds; after a failed run the next run is right; inputs never change;
/// all bytes come back.
TEST(FaultInjectionTest, AllocatorFailureDuringCompileAndRun) {
  for (bool arena : {false, true}) {
    bool failedCompile = false, failedRun = false;
    for (int64_t failAt = 0; failAt < 64; ++failAt) {
      SCOPED_TRACE("arena=" + std::to_string(arena) + " failAt=" + std::to_string(failAt));
      auto allocator = std::make_shared<FaultyAllocator>(failAt);
      {
        SessionOptions options;
        options.threads = 1;
        options.useArena = arena;
        options.backendInstances = {cpuBackend(allocator, packedRelu())};
        Session session(options);
        ASSERT_TRUE(session.load(parseGraphOrThrow(kGraph)).isOk());
        Tensor x = input();
        const std::vector<float> xBefore = floats(x);
        Status compiled = session.compile();
        if (!compiled.isOk()) {
          failedCompile = true;
          EXPECT_THAT(compiled.message(), HasSubstr("injected allocation failure"));
          EXPECT_FALSE(session.run({{"x", x}}).isOk()) << "run after a failed compile";
          continue;
        }
        StatusOr<RunResult> first = session.run({{"x", x}});
        if (!first.isOk()) {
          failedRun = true;
          EXPECT_THAT(first.status().message(), HasSubstr("injected allocation failure"));
        }
        StatusOr<RunResult> next = session.run({{"x", x}});
        ASSERT_TRUE(next.isOk()) << next.status().message();
        EXPECT_EQ(floats(next->outputs[0].tensor), expected());
        EXPECT_EQ(floats(x), xBefore);
        if (first.isOk() && allocator->calls() <= failAt) break;  // no fault left to inject
      }
      EXPECT_EQ(allocator->stats().bytesInUse, 0u) << "the session leaked device memory";
    }
    EXPECT_TRUE(failedCompile) << "no allocation happened during compile";
    EXPECT_TRUE(failedRun) << "no allocation happened during run";
  }
}

/// A kernel that throws or returns an error fails that one request with its
/// message; the session serves the next requests correctly, on one thread
/// and on four.
TEST(FaultInjectionTest, KernelThrowsOrReturnsError) {
  for (KernelFault fault : {KernelFault::kThrow, KernelFault::kError})
    for (int threads : {1, 4}) {
      SCOPED_TRACE("fault=" + std::to_string(static_cast<int>(fault)) +
                   " threads=" + std::to_string(threads));
      auto provider = std::make_shared<Provider>("faulty-relu");
      provider->add("Relu",
                    [fault](const Node&, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
                      return std::unique_ptr<Kernel>(std::make_unique<FaultyRelu>(fault, 1));
                    });
      auto allocator = std::make_shared<HostAllocator>("cpu:0");
      {
        SessionOptions options;
        options.threads = threads;
        options.backendInstances = {cpuBackend(allocator, provider)};
        Session session(options);
        ASSERT_TRUE(session.load(parseGraphOrThrow(kGraph)).isOk());
        ASSERT_TRUE(session.compile().isOk());
        Tensor x = input();
        const std::vector<float> xBefore = floats(x);
        for (int request = 0; request < 4; ++request) {
          StatusOr<RunResult> out = session.run({{"x", x}});
          if (request == 1) {
            ASSERT_FALSE(out.isOk());
            EXPECT_THAT(out.status().message(), HasSubstr("injected kernel"));
            // Both a returned error (RunContext::fail) and a thrown one
            // (runKernelGuarded) name the node.
            EXPECT_THAT(out.status().message(), HasSubstr("Relu node 'relu'"));
            if (fault != KernelFault::kError) {
              EXPECT_THAT(out.status().message(), HasSubstr("kernel threw"));
            }
          } else {
            ASSERT_TRUE(out.isOk()) << out.status().message();
            EXPECT_EQ(floats(out->outputs[0].tensor), expected());
          }
        }
        EXPECT_EQ(floats(x), xBefore);
      }
      EXPECT_EQ(allocator->stats().bytesInUse, 0u);
    }
}

//===--- Partition faults (in-process API) --------------------------------===//

using namespace partition;

enum class PartitionFault { kSelectorThrows, kInvalidRegion, kWrongArity };

class FaultySelector final : public SubgraphSelector {
 public:
  FaultySelector(PartitionFault fault, const Graph* graph) : fault_(fault), graph_(graph) {}
  Decision Select(const Node& n) override { return n.opType() != "Mul"; }
  Decision SelectInput(const Node&, const Node& p) override { return p.opType() != "Mul"; }
  // Throws in the middle of growing the region Relu -> Add -> Neg.
  Decision SelectOutput(const Node&, const Node& c) override {
    if (fault_ == PartitionFault::kSelectorThrows && c.opType() == "Neg")
      throw std::runtime_error("injected selector exception");
    return c.opType() != "Mul";
  }
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override {
    std::vector<const Node*> kept(candidates.begin(), candidates.end());
    // A node outside the region: the Mul the selector refused.
    if (fault_ == PartitionFault::kInvalidRegion)
      for (Node* n : graph_->nodes())
        if (n->opType() == "Mul") kept.push_back(n);
    return kept;
  }

 private:
  PartitionFault fault_;
  const Graph* graph_;
};

class FaultyProperty final : public SubgraphProperty {
 public:
  FaultyProperty(PartitionFault fault, const Graph* graph) : fault_(fault), graph_(graph) {}
  std::string name() const override { return "faulty"; }
  std::unique_ptr<SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<FaultySelector>(fault_, graph_);
  }
  Status ConnectSubgraphInputs(Graph&, std::vector<Value*>& inputs) const override {
    if (fault_ == PartitionFault::kWrongArity && !inputs.empty()) inputs.pop_back();
    return Status::ok();
  }

 private:
  PartitionFault fault_;
  const Graph* graph_;
};

/// Each partition fault fails the partition (a Status naming the property,
/// or for the throwing selector the exception itself at the C++ API edge)
/// and leaves a graph that verifies; the session then still compiles and
/// runs it to the right answer.
TEST(FaultInjectionTest, FaultyPartitionPropertiesLeaveSessionUsable) {
  for (PartitionFault fault : {PartitionFault::kSelectorThrows, PartitionFault::kInvalidRegion,
                               PartitionFault::kWrongArity}) {
    SCOPED_TRACE("fault=" + std::to_string(static_cast<int>(fault)));
    Session session;
    ASSERT_TRUE(session.load(parseGraphOrThrow(kGraph)).isOk());
    std::string message;
    Status partitioned = [&]() -> Status {
      try {
        return session.partition([&](Graph& graph) -> Status {
          std::vector<SubgraphBackend> backends(1);
          backends[0].name = "faulty";
          backends[0].properties.push_back(std::make_unique<FaultyProperty>(fault, &graph));
          StatusOr<PartitionReport> report = partitionGraph(graph, backends);
          return report.status();
        });
      } catch (const std::exception& e) {
        return Status(StatusCode::kInternal, std::string("exception: ") + e.what());
      }
    }();
    ASSERT_FALSE(partitioned.isOk()) << "the fault went unnoticed";
    std::printf("fault %d: %s\n", static_cast<int>(fault), partitioned.message().c_str());
    if (fault == PartitionFault::kSelectorThrows)
      EXPECT_THAT(partitioned.message(), HasSubstr("injected selector exception"));
    else
      EXPECT_THAT(partitioned.message(), HasSubstr("faulty"));
    VerifyOptions vo;
    vo.allowUnknownOps = true;
    Status valid = verify(session.graph(), vo);
    EXPECT_TRUE(valid.isOk()) << valid.message() << "\n" << printGraph(session.graph());
    ASSERT_TRUE(session.compile().isOk());
    Tensor x = input();
    StatusOr<RunResult> out = session.run({{"x", x}});
    ASSERT_TRUE(out.isOk()) << out.status().message();
    EXPECT_EQ(floats(out->outputs[0].tensor), expected());
  }
}

}  // namespace
}  // namespace subgraph
