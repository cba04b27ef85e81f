//===- tests/runtime/backend_test.cpp - Backends, providers, copies -------===//
//
// A toy plugin backend exercises the backend model end to end: its own
// device (with an asynchronous work queue), a blocked layout the runtime
// knows only through Layout::byteSize, copy kernels between that layout and
// plain host memory, kernels for fused region ops with every lifecycle hook
// counted, and provider precedence. Also covers the default region
// executor and exclusive (own-thread-pool) kernels.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "runtime_test_util.h"
#include "subgraph/runtime/reference_backend.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// [N, C] stored as [N, ceil(C / 4) * 4] with zero padding: a stand-in for
// oneDNN's nChw16c.
class Blocked4 final : public Layout {
 public:
  std::string_view name() const override { return "blocked4"; }
  size_t byteSize(DataType dtype, std::span<const int64_t> dims) const override {
    return static_cast<size_t>(dims[0] * padded(dims[1])) * dataTypeSize(dtype);
  }
  static int64_t padded(int64_t c) { return (c + 3) / 4 * 4; }
};
const Blocked4 kBlocked4;

// Converts between plain [N, C] and blocked4.
class ToyCopy final : public Kernel {
 public:
  explicit ToyCopy(bool toBlocked) : toBlocked_(toBlocked) {}
  const Layout* inputLayout(size_t) const override { return toBlocked_ ? nullptr : &kBlocked4; }
  const Layout* outputLayout(size_t) const override { return toBlocked_ ? &kBlocked4 : nullptr; }
  Status resize(ResizeContext& ctx) const override {
    TensorDesc d = ctx.inputDesc(0);
    if (d.dims.size() != 2) return ctx.fail("toy copies need [N, C], got " + d.toString());
    d.layout = toBlocked_ ? &kBlocked4 : nullptr;
    ctx.setOutput(0, d);
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const int64_t n = ctx.input(0).dim(0), c = ctx.input(0).dim(1), cp = Blocked4::padded(c);
    const float* in = ctx.input(0).data<float>();
    float* out = ctx.output(0).mutableData<float>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < cp; ++j) {
        if (toBlocked_)
          out[i * cp + j] = j < c ? in[i * c + j] : 0.0f;
        else if (j < c)
          out[i * c + j] = in[i * cp + j];
      }
    ++copies;
    return Status::ok();
  }
  static inline std::atomic<int> copies{0};

 private:
  bool toBlocked_;
};

// Lifecycle counters of ToyScale kernels.
struct Hooks {
  std::atomic<int> created{0}, sessionPrologue{0}, sessionEpilogue{0}, framePrologue{0},
      frameEpilogue{0};
  std::atomic<int> runs{0};
};
Hooks hooks;

// y = x * k on blocked4 memory, k a [C] weight also in blocked4 ([1, C]).
class ToyScale final : public Kernel {
 public:
  explicit ToyScale(std::string tag, const Layout* layout = &kBlocked4)
      : tag_(std::move(tag)), layout_(layout) {
    ++hooks.created;
  }
  const Layout* inputLayout(size_t) const override { return layout_; }
  const Layout* outputLayout(size_t) const override { return layout_; }
  size_t staticBytes() const override { return 16; }
  Status onSessionPrologue(SessionPrologueContext& ctx) override {
    EXPECT_EQ(ctx.staticMemory().size(), 16u);
    ++hooks.sessionPrologue;
    return Status::ok();
  }
  void onSessionEpilogue() override { ++hooks.sessionEpilogue; }
  StatusOr<std::unique_ptr<KernelFrameState>> onFramePrologue() const override {
    ++hooks.framePrologue;
    return std::unique_ptr<KernelFrameState>(std::make_unique<KernelFrameState>());
  }
  void onFrameEpilogue(KernelFrameState* state) const override {
    EXPECT_NE(state, nullptr);
    ++hooks.frameEpilogue;
  }
  Status resize(ResizeContext& ctx) const override {
    ctx.setOutput(0, ctx.inputDesc(0));
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    EXPECT_NE(ctx.frameState(), nullptr);
    const int64_t n = ctx.input(0).dim(0), cp = Blocked4::padded(ctx.input(0).dim(1));
    const float* x = ctx.input(0).data<float>();
    const float* k = ctx.input(1).data<float>();
    float* y = ctx.output(0).mutableData<float>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < cp; ++j) y[i * cp + j] = x[i * cp + j] * k[j];
    ++hooks.runs;
    return Status::ok();
  }
  std::string tag_;
  const Layout* layout_;
};

class ToyBackend final : public Backend {
 public:
  ToyBackend()
      : Backend("toy", Device{"toy", 0}, std::make_shared<HostAllocator>("toy:0"),
                std::make_unique<SerialWorkQueue>("toy")) {}
  std::unique_ptr<Kernel> createCopy(const CopyRequest& r) const override {
    bool hostPlain = [](const Device& d, const Layout* l) { return d.isHost() && !l; }(
                         r.from, r.fromLayout);
    if (hostPlain && r.to == device() && r.toLayout == &kBlocked4)
      return std::make_unique<ToyCopy>(true);
    if (r.from == device() && r.fromLayout == &kBlocked4 && r.to.isHost() && !r.toLayout)
      return std::make_unique<ToyCopy>(false);
    return nullptr;
  }
};

std::shared_ptr<Backend> makeToy(std::vector<std::string> providerTags) {
  auto toy = std::make_shared<ToyBackend>();
  for (const std::string& tag : providerTags) {
    auto p = std::make_shared<Provider>("toy-" + tag);
    p->add("subgraph.toy.Scale",
           [tag](const Node&, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
             return std::unique_ptr<Kernel>(std::make_unique<ToyScale>(tag));
           });
    toy->addProvider(p);
  }
  return toy;
}

//   %x [2,3] -> Relu ==copy==> [toy: Scale(%k) in blocked4] ==copy==> Neg -> %y
//   %k [1,3] (constant) ==static copy==> blocked4
constexpr const char* kToyGraph = R"(
  graph @g(%x: f32[2, 3]) {
    %k = const f32[1, 3] [2.0, 3.0, 4.0]
    %r = Relu(%x) @relu
    %s = subgraph.toy.Scale(%r, %k) {body = graph @scale(%a: f32[2, 3], %b: f32[1, 3]) {
      %m = Mul(%a, %b)
      return %m
    }} @region
    %y = Neg(%s) @neg
    return %y
  })";

/// The region runs on the toy device in blocked layout; copies are inserted
/// on both sides, the constant is converted once into static memory, and
/// the result matches the plain computation.
TEST(BackendTest, CopiesAcrossDevicesAndLayouts) {
  SessionOptions options;
  options.backendInstances = {makeToy({"a"})};
  auto session = compileText(kToyGraph, options);
  std::vector<std::string> ops;
  for (const StepInfo& s : session->steps()) ops.push_back(s.op + "@" + s.backend);
  EXPECT_THAT(ops, ElementsAre("Relu@reference", "Copy@toy", "Copy@toy", "subgraph.toy.Scale@toy",
                               "Copy@toy", "Neg@reference"));
  std::optional<PlanReport> plan = session->planReport();
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->staticBytes, 64u + 64u);  // blocked weight + kernel static memory, aligned
  EXPECT_EQ(plan->numSteps, 5u);            // the weight copy ran at compile time
  ASSERT_EQ(plan->devices.size(), 2u);
  const DeviceMemoryReport& toyMemory =
      plan->devices[0].device == "toy:0" ? plan->devices[0] : plan->devices[1];
  EXPECT_EQ(toyMemory.device, "toy:0");
  EXPECT_EQ(toyMemory.dynamicBlockBytes, 2 * 64u);  // two [2, 4] blocked buffers, aligned

  int before = ToyCopy::copies.load();
  auto out = runOk(*session, {{"x", f32({2, 3}, {1, -2, 3, -4, 5, 6})}});
  EXPECT_EQ(ToyCopy::copies.load() - before, 2);
  EXPECT_THAT(values(out[0].tensor), ElementsAre(-2.0f, -0.0f, -12.0f, -0.0f, -15.0f, -24.0f));
}

/// Construction and session hooks run once, frame hooks once per frame, and
/// reusing a frame does not run its prologue again.
TEST(BackendTest, LifecycleHooksRunOncePerSessionAndFrame) {
  hooks.created = hooks.sessionPrologue = hooks.sessionEpilogue = 0;
  hooks.framePrologue = hooks.frameEpilogue = hooks.runs = 0;
  {
    SessionOptions options;
    options.backendInstances = {makeToy({"a"})};
    auto session = compileText(kToyGraph, options);
    EXPECT_EQ(hooks.created.load(), 1);
    EXPECT_EQ(hooks.sessionPrologue.load(), 1);
    for (int i = 0; i < 3; ++i) runOk(*session, {{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}});
    EXPECT_EQ(hooks.framePrologue.load(), 1);
    EXPECT_EQ(hooks.runs.load(), 3);
    EXPECT_EQ(hooks.sessionEpilogue.load(), 0);
  }
  EXPECT_EQ(hooks.frameEpilogue.load(), 1);
  EXPECT_EQ(hooks.sessionEpilogue.load(), 1);
}

/// When two providers of a backend implement the op, the first registered
/// one makes the kernel.
TEST(BackendTest, FirstRegisteredProviderWins) {
  auto toy = makeToy({"first", "second"});
  EXPECT_EQ(toy->findProvider("subgraph.toy.Scale")->name(), "toy-first");
  SessionOptions options;
  options.backendInstances = {toy};
  auto session = compileText(kToyGraph, options);
  bool found = false;
  for (const StepInfo& s : session->steps())
    if (s.isRegion) {
      EXPECT_EQ(s.provider, "toy-first");
      found = true;
    }
  EXPECT_TRUE(found);
}

/// Without a backend for the region, the default executor runs its body on
/// the reference backend, with the same result.
TEST(BackendTest, DefaultExecutorRunsRegionBody) {
  auto session = compileText(kToyGraph);
  std::vector<std::string> providers;
  for (const StepInfo& s : session->steps()) providers.push_back(s.provider);
  EXPECT_THAT(providers, ElementsAre("reference", "region-executor", "reference"));
  auto out = runOk(*session, {{"x", f32({2, 3}, {1, -2, 3, -4, 5, 6})}});
  EXPECT_THAT(values(out[0].tensor), ElementsAre(-2.0f, -0.0f, -12.0f, -0.0f, -15.0f, -24.0f));
}

/// A region whose body does not match its node is refused when loaded (the
/// verifier checks fused regions against their bodies), never run.
TEST(BackendTest, RegionBodyArityMismatchFailsToLoad) {
  Session s;
  Status st = s.load(parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %y = subgraph.toy.Scale(%x) {body = graph @b(%a: f32[2], %b: f32[2]) {
        %m = Mul(%a, %b)
        return %m
      }} @region
      return %y
    })"));
  ASSERT_FALSE(st.isOk());
  EXPECT_THAT(st.message(), HasSubstr("'region' is a fused region whose body takes 2 inputs and "
                                      "gives 1 outputs, but the node has 1 and 1"));
}

/// No backend can move a value into a layout nobody converts to: the error
/// names the value and both placements.
TEST(BackendTest, MissingCopyIsACompileError) {
  auto toy = std::make_shared<Backend>("toy", Device{"toy", 0}, nullptr, nullptr);
  auto p = std::make_shared<Provider>("toy");
  p->add("subgraph.toy.Scale",
         [](const Node&, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
           return std::unique_ptr<Kernel>(std::make_unique<ToyScale>("x"));
         });
  toy->addProvider(p);
  SessionOptions options;
  options.backendInstances = {toy};
  Session s(options);
  ASSERT_TRUE(s.load(parseGraphOrThrow(kToyGraph)).isOk());
  Status st = s.compile();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_EQ(st.message(), "no backend can copy value 'r' from cpu:0 to toy:0@blocked4");
}

// A host backend with a blocked layout of its own ("host4", the bytes of
// blocked4) and copies only between it and host plain memory: oneDNN's
// nChw16c beside a device plugin's layout.
const class HostBlocked4 final : public Layout {
 public:
  std::string_view name() const override { return "host4"; }
  size_t byteSize(DataType dtype, std::span<const int64_t> dims) const override {
    return kBlocked4.byteSize(dtype, dims);
  }
} kHostBlocked4;

class HostBlockedBackend final : public Backend {
 public:
  HostBlockedBackend() : Backend("hostblk", Device{"cpu", 0}, nullptr, nullptr) {
    auto p = std::make_shared<Provider>("hostblk");
    p->add("subgraph.hostblk.Scale",
           [](const Node&, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
             return std::unique_ptr<Kernel>(std::make_unique<ToyScale>("h", &kHostBlocked4));
           });
    addProvider(p);
  }
  std::unique_ptr<Kernel> createCopy(const CopyRequest& r) const override {
    if (!r.from.isHost() || !r.to.isHost()) return nullptr;
    if (!r.fromLayout && r.toLayout == &kHostBlocked4) return std::make_unique<HostCopy4>(true);
    if (r.fromLayout == &kHostBlocked4 && !r.toLayout) return std::make_unique<HostCopy4>(false);
    return nullptr;
  }

 private:
  // ToyCopy, labelled with host4 instead of blocked4.
  class HostCopy4 final : public Kernel {
   public:
    explicit HostCopy4(bool toBlocked) : toBlocked_(toBlocked), copy_(toBlocked) {}
    const Layout* inputLayout(size_t) const override {
      return toBlocked_ ? nullptr : &kHostBlocked4;
    }
    const Layout* outputLayout(size_t) const override {
      return toBlocked_ ? &kHostBlocked4 : nullptr;
    }
    Status resize(ResizeContext& ctx) const override {
      TensorDesc d = ctx.inputDesc(0);
      d.layout = toBlocked_ ? &kHostBlocked4 : nullptr;
      ctx.setOutput(0, d);
      return Status::ok();
    }
    Status run(RunContext& ctx) const override { return copy_.run(ctx); }

   private:
    bool toBlocked_;
    ToyCopy copy_;
  };
};

//   %x -> [toy:0: Scale in blocked4] ==?==> [cpu:0: Scale in host4] -> %y
constexpr const char* kTwoLayoutsGraph = R"(
  graph @g(%x: f32[2, 3]) {
    %k = const f32[1, 3] [2.0, 3.0, 4.0]
    %s = subgraph.toy.Scale(%x, %k) {body = graph @a(%a: f32[2, 3], %b: f32[1, 3]) {
      %m = Mul(%a, %b)
      return %m
    }} @on_device
    %y = subgraph.hostblk.Scale(%s, %k) {body = graph @b(%c: f32[2, 3], %d: f32[1, 3]) {
      %n = Mul(%c, %d)
      return %n
    }} @on_host
    return %y
  })";

/// No backend copies toy:0@blocked4 to cpu:0@host4 directly, so the value
/// goes through host plain memory in two copies: the device's own copy
/// down and the host backend's copy into its layout.
TEST(BackendTest, CopiesComposeThroughHostPlainMemory) {
  SessionOptions options;
  options.backendInstances = {makeToy({"a"}), std::make_shared<HostBlockedBackend>()};
  auto session = compileText(kTwoLayoutsGraph, options);
  std::vector<std::string> steps;
  for (const StepInfo& s : session->steps()) steps.push_back(s.name + "@" + s.backend);
  // (The weight's copies run once, at compile time.)
  EXPECT_THAT(steps, ElementsAre("copy:x->toy:0@blocked4@toy", "copy:k->toy:0@blocked4@toy",
                                 "on_device@toy", "copy:s->cpu:0@toy",
                                 "copy:s@cpu:0->cpu:0@host4@hostblk", "copy:k->cpu:0@host4@hostblk",
                                 "on_host@hostblk", "copy:y->cpu:0@hostblk"));
  auto out = runOk(*session, {{"x", f32({2, 3}, {1, -2, 3, -4, 5, 6})}});
  EXPECT_THAT(values(out[0].tensor), ElementsAre(4.0f, -18.0f, 48.0f, -16.0f, 45.0f, 96.0f));
}

/// Negative: a value in host plain memory that no backend moves to the
/// target placement has nothing to compose through: one line naming both
/// placements, no copy to itself.
TEST(BackendTest, CopiesDoNotComposeFromHostPlainMemory) {
  auto toy = std::make_shared<Backend>("toy", Device{"toy", 0}, nullptr, nullptr);
  auto p = std::make_shared<Provider>("toy");
  p->add("subgraph.toy.Scale",
         [](const Node&, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
           return std::unique_ptr<Kernel>(std::make_unique<ToyScale>("x"));
         });
  toy->addProvider(p);
  SessionOptions options;
  options.backendInstances = {toy, std::make_shared<HostBlockedBackend>()};
  Session s(options);
  ASSERT_TRUE(s.load(parseGraphOrThrow(kTwoLayoutsGraph)).isOk());
  Status st = s.compile();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_EQ(st.message(), "no backend can copy value 'x' from cpu:0 to toy:0@blocked4");
}

/// Negative: a Reshape of a device value in a blocked layout is no view
/// (its bytes are not in the order the new dims say): the value comes down
/// to host plain memory and the Reshape runs there.
TEST(BackendTest, ABlockedDeviceValueIsNoView) {
  SessionOptions options;
  options.backendInstances = {makeToy({"a"})};
  auto session = compileText(R"(
    graph @g(%x: f32[2, 3]) {
      %k = const f32[1, 3] [2.0, 3.0, 4.0]
      %shape = const i64[1] [6]
      %s = subgraph.toy.Scale(%x, %k) {body = graph @scale(%a: f32[2, 3], %b: f32[1, 3]) {
        %m = Mul(%a, %b)
        return %m
      }} @region
      %y = Reshape(%s, %shape) @flat
      return %y
    })",
                             options);
  std::vector<std::string> steps;
  for (const StepInfo& s : session->steps()) {
    steps.push_back(s.name + "@" + s.backend);
    EXPECT_FALSE(s.isView) << s.name;
  }
  EXPECT_THAT(steps, ::testing::Contains("copy:s->cpu:0@toy"));
  EXPECT_THAT(steps, ::testing::Contains("flat@reference"));
  auto out = runOk(*session, {{"x", f32({2, 3}, {1, -2, 3, -4, 5, 6})}});
  EXPECT_THAT(values(out[0].tensor), ElementsAre(2.0f, -6.0f, 12.0f, -8.0f, 15.0f, 24.0f));
}

// Records how many exclusive kernels run at once.
std::atomic<int> exclusiveRunning{0}, exclusiveMax{0}, exclusiveRuns{0};
std::mutex exclusiveThreadsMutex;
std::set<std::thread::id> exclusiveThreads;

class ExclusiveKernel final : public Kernel {
 public:
  bool usesOwnThreads() const override { return true; }
  Status resize(ResizeContext& ctx) const override {
    ctx.setOutput(0, ctx.inputDesc(0));
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    int now = ++exclusiveRunning;
    int prev = exclusiveMax.load();
    while (now > prev && !exclusiveMax.compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::memcpy(ctx.output(0).raw(), ctx.input(0).raw(), ctx.input(0).byteSize());
    --exclusiveRunning;
    ++exclusiveRuns;
    std::lock_guard<std::mutex> lock(exclusiveThreadsMutex);
    exclusiveThreads.insert(std::this_thread::get_id());
    return Status::ok();
  }
};

//   %x -> [omp region] -> %a      four independent branches, each a region
//   %x -> [omp region] -> %b      whose kernel has its own thread pool
//   %x -> [omp region] -> %c
//   %x -> [omp region] -> %d
/// Kernels with their own thread pool never run concurrently, even when
/// their branches could, and they all run on the thread that called run():
/// a program holding them runs its steps in order rather than as branch
/// tasks, which would hand them to oneTBB workers (each of which would get
/// an OpenMP team of its own).
TEST(BackendTest, ExclusiveKernelsNeverOverlap) {
  auto omp = std::make_shared<Backend>("omp", Device{"cpu", 0}, nullptr, nullptr);
  auto p = std::make_shared<Provider>("omp");
  p->add("subgraph.omp.Copy", [](const Node&, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<ExclusiveKernel>());
  });
  omp->addProvider(p);
  SessionOptions options;
  options.backendInstances = {omp};
  options.threads = 4;
  std::string body = "{body = graph @b(%i: f32[64]) {\n %o = Identity(%i)\n return %o\n }}";
  auto session = compileText(
      "graph @g(%x: f32[64]) {\n %a = subgraph.omp.Copy(%x) " + body +
          "\n %b = subgraph.omp.Copy(%x) " + body + "\n %c = subgraph.omp.Copy(%x) " + body +
          "\n %d = subgraph.omp.Copy(%x) " + body + "\n return %a, %b, %c, %d\n}",
      options);
  exclusiveMax = 0;
  exclusiveRuns = 0;
  exclusiveThreads.clear();
  for (int i = 0; i < 5; ++i) runOk(*session, {{"x", f32({64}, std::vector<float>(64, 1.0f))}});
  EXPECT_EQ(exclusiveRuns.load(), 20);
  EXPECT_EQ(exclusiveMax.load(), 1);
  EXPECT_EQ(exclusiveThreads.size(), 1u);
}

/// The registry creates the reference backend by name and lists known names
/// when asked for an unknown one.
TEST(BackendTest, RegistryCreatesByName) {
  StatusOr<std::shared_ptr<Backend>> ref = BackendRegistry::global().create("reference");
  ASSERT_TRUE(ref.isOk());
  EXPECT_EQ(ref.value()->device().toString(), "cpu:0");
  StatusOr<std::shared_ptr<Backend>> none = BackendRegistry::global().create("nope");
  ASSERT_FALSE(none.isOk());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr("unknown backend 'nope' (registered: "));
  EXPECT_FALSE(BackendRegistry::global().add("reference", nullptr).isOk());
}

}  // namespace
}  // namespace subgraph::runtime
