//===- tests/runtime/session_test.cpp - Session API, plans and frames -----===//
//
// Runs small text-format graphs through Session: results against hand
// computed values, every request failure path (each one line, nothing
// leaked), memory plans and their limit, plan caching per signature,
// values precomputed at resize, frame reuse, callbacks and profiles.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime_test_util.h"
#include "subgraph/runtime/reference_backend.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT
using ::testing::ElementsAre;
using ::testing::HasSubstr;

//   %x [1,1,3,3] -> Conv(ones 2x2, bias -20) -> BatchNorm(scale 2, bias 1) -> Relu -> %y
constexpr const char* kConvBnRelu = R"(
  graph @convbnrelu(%x: f32[1, 1, 3, 3]) {
    %w = const f32[1, 1, 2, 2] splat(1.0)
    %b = const f32[1] [-20.0]
    %scale = const f32[1] [2.0]
    %shift = const f32[1] [1.0]
    %mean = const f32[1] [0.0]
    %var = const f32[1] [1.0]
    %c = Conv(%x, %w, %b) @conv
    %n = BatchNormalization(%c, %scale, %shift, %mean, %var) {epsilon = 0.0} @bn
    %y = Relu(%n) @relu
    return %y
  })";

Tensor oneToNine() { return f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }

/// Conv sums each 2x2 window (12 16 24 28), the bias and BN map it to
/// (-15 -7 9 17), Relu clips the negatives.
TEST(SessionTest, ConvBnReluMatchesHandComputedValues) {
  auto session = compileText(kConvBnRelu);
  auto out = runOk(*session, {{"x", oneToNine()}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "y");
  EXPECT_EQ(out[0].tensor.dims(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_THAT(values(out[0].tensor), ElementsAre(0.0f, 0.0f, 9.0f, 17.0f));
}

/// An input read in place (InputView, what the Python package passes for a
/// numpy array) gives the same outputs as an owned tensor; a view whose
/// byte count does not match its type is refused before anything runs.
TEST(SessionTest, RunsInputsReadInPlace) {
  auto session = compileText(kConvBnRelu);
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<InputView> views = {
      {"x", DataType::kFloat32, {1, 1, 3, 3}, x.data(), x.size() * sizeof(float)}};
  StatusOr<RunResult> r = session->runInPlace(views);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_THAT(values(r->outputs[0].tensor), ElementsAre(0.0f, 0.0f, 9.0f, 17.0f));
  views[0].bytes -= 4;
  StatusOr<RunResult> bad = session->runInPlace(views);
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().message(), "input 'x' has 32 bytes, but f32[1, 1, 3, 3] takes 36");
}

/// A tensor whose shape disagrees with the declared static dims is refused.
TEST(SessionTest, RejectsInputOfWrongShape) {
  auto session = compileText(kConvBnRelu);
  StatusOr<RunResult> r = session->run({{"x", f32({1, 1, 2, 2}, {1, 2, 3, 4})}});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "input 'x' has shape f32[1, 1, 2, 2] but the graph declares f32[1, 1, 3, 3]");
}

/// A tensor of the wrong element type is refused, naming both types.
TEST(SessionTest, RejectsInputOfWrongElementType) {
  auto session = compileText(kConvBnRelu);
  StatusOr<RunResult> r = session->run({{"x", i64({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(), "input 'x' has element type i64 but the graph declares f32");
}

/// Every graph input must be given.
TEST(SessionTest, RejectsMissingInput) {
  auto session = compileText(kConvBnRelu);
  StatusOr<RunResult> r = session->run({});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(), "missing input 'x' (f32[1, 1, 3, 3])");
}

/// Inputs the graph does not have, and duplicates, are errors.
TEST(SessionTest, RejectsUnknownAndDuplicateInputs) {
  auto session = compileText(kConvBnRelu);
  StatusOr<RunResult> r = session->run({{"x", oneToNine()}, {"z", oneToNine()}});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "unknown input 'z' (graph inputs: x)");
  r = session->run({{"x", oneToNine()}, {"x", oneToNine()}});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(), "input 'x' is given twice");
}

/// Asking for an output the graph does not have names the known ones.
TEST(SessionTest, RejectsUnknownOutputName) {
  auto session = compileText(kConvBnRelu);
  RunOptions ro;
  ro.outputNames = {"nope"};
  StatusOr<RunResult> r = session->run({{"x", oneToNine()}}, ro);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "unknown output 'nope' (graph outputs: y)");
}

/// run() before compile() and compile() twice are usage errors.
TEST(SessionTest, RejectsCallsOutOfOrder) {
  Session s;
  EXPECT_THAT(s.compile().message(), HasSubstr("no graph loaded"));
  ASSERT_TRUE(s.load(parseGraphOrThrow(kConvBnRelu)).isOk());
  EXPECT_THAT(s.run({{"x", oneToNine()}}).status().message(), HasSubstr("not compiled"));
  ASSERT_TRUE(s.compile().isOk());
  EXPECT_THAT(s.compile().message(), HasSubstr("already compiled"));
}

// A reference backend whose allocator the test can inspect.
std::shared_ptr<Backend> referenceWith(std::shared_ptr<HostAllocator> alloc) {
  auto b = std::make_shared<Backend>(kReferenceBackendName, Device{"cpu", 0}, alloc,
                                     std::make_unique<InlineWorkQueue>());
  b->addProvider(referenceProvider());
  return b;
}

//   %x [1, 4096] -> Relu -> Neg -> %y
/// A plan over the configured limit fails compile() with kLimitExceeded.
TEST(SessionTest, MemoryLimitFailsCompile) {
  SessionOptions options;
  options.memoryLimitBytes = 1000;
  Session s(options);
  ASSERT_TRUE(s.load(parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 4096]) {
      %r = Relu(%x)
      %y = Neg(%r)
      return %y
    })"))
                  .isOk());
  Status st = s.compile();
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(st.message(), HasSubstr("over the memory limit of 1000 bytes"));
  EXPECT_THAT(st.message(), HasSubstr("x=f32[1, 4096]"));
}

//   %x [N, 4096] -> Relu -> Neg -> %y      (N known only at run time)
/// With a symbolic batch the limit is checked per request; a refused
/// request creates no frame and leaks nothing.
TEST(SessionTest, MemoryLimitFailsRequestWithoutLeaking) {
  auto alloc = std::make_shared<HostAllocator>("cpu:0");
  {
    SessionOptions options;
    options.memoryLimitBytes = 64 * 1024;
    options.backendInstances = {referenceWith(alloc)};
    auto session = compileText(R"(
      graph @g(%x: f32[N, 4096]) {
        %r = Relu(%x)
        %y = Neg(%r)
        return %y
      })",
                               options);
    std::mt19937 rng(1);
    runOk(*session, {{"x", randomF32({1, 4096}, rng)}});
    StatusOr<RunResult> big = session->run({{"x", randomF32({8, 4096}, rng)}});
    ASSERT_FALSE(big.isOk());
    EXPECT_EQ(big.status().code(), StatusCode::kLimitExceeded);
    EXPECT_EQ(session->numFramesCreated(), 1u);
    runOk(*session, {{"x", randomF32({2, 4096}, rng)}});
  }
  EXPECT_EQ(alloc->stats().bytesInUse, 0u);
}

//   %x [1,1024] -> Relu -> Neg -> Relu -> Neg -> %y
/// In a chain only two intermediates are ever live, so the dynamic block
/// holds two buffers although there are three; the output has its own.
TEST(SessionTest, MemoryPlanReusesDeadIntermediates) {
  auto session = compileText(R"(
    graph @chain(%x: f32[1, 1024]) {
      %a = Relu(%x)
      %b = Neg(%a)
      %c = Relu(%b)
      %y = Neg(%c)
      return %y
    })");
  std::optional<PlanReport> plan = session->planReport();
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->devices.size(), 1u);
  const DeviceMemoryReport& cpu = plan->devices[0];
  EXPECT_EQ(cpu.device, "cpu:0");
  EXPECT_EQ(cpu.peakDynamicBytes, 2 * 4096u);
  EXPECT_EQ(cpu.dynamicBlockBytes, 2 * 4096u);
  EXPECT_EQ(cpu.separateBytes, 4096u);
  EXPECT_EQ(cpu.unsharedBytes, 4 * 4096u);
  EXPECT_EQ(plan->frameBytes, 3 * 4096u);
  std::mt19937 rng(2);
  Tensor x = randomF32({1, 1024}, rng);
  auto out = runOk(*session, {{"x", x}});
  std::vector<float> want = values(x);
  for (float& v : want) v = -std::max(0.0f, -std::max(0.0f, v));
  EXPECT_EQ(values(out[0].tensor), want);
}

//   %x [2,3,4] -> Shape -> Gather(0) -> Unsqueeze -> Concat(-1) -> %shape
//   %x ---------------------------------------------------------> Reshape -> %y [2, 12]
/// The shape chain runs once at resize time; a request runs only Reshape,
/// whose output shares the input's memory.
TEST(SessionTest, ShapeChainIsPrecomputedAtResize) {
  auto session = compileText(R"(
    graph @g(%x: f32[2, 3, 4]) {
      %i0 = const i64[] [0]
      %ax = const i64[1] [0]
      %m1 = const i64[1] [-1]
      %s = Shape(%x)
      %d0 = Gather(%s, %i0) {axis = 0}
      %u = Unsqueeze(%d0, %ax)
      %shape = Concat(%u, %m1) {axis = 0}
      %y = Reshape(%x, %shape) @flatten
      return %y
    })");
  std::optional<PlanReport> plan = session->planReport();
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->numPrecomputedSteps, 4u);
  EXPECT_EQ(plan->numSteps, 1u);
  std::mt19937 rng(3);
  Tensor x = randomF32({2, 3, 4}, rng);
  auto out = runOk(*session, {{"x", x}});
  EXPECT_EQ(out[0].tensor.dims(), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(values(out[0].tensor), values(x));
}

//   %x [2,3], %shape i64[2] (a graph input) -> Reshape -> %y
/// A shape given as a graph input keys the plan on its contents.
TEST(SessionTest, ShapeFromGraphInputKeysThePlan) {
  std::vector<std::string> signatures;
  SessionOptions options;
  options.callbacks.onResizeBegin = [&](const std::string& sig) { signatures.push_back(sig); };
  auto session = compileText(R"(
    graph @g(%x: f32[2, 3], %shape: i64[2]) {
      %y = Reshape(%x, %shape)
      return %y
    })",
                             options);
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto a = runOk(*session, {{"x", x}, {"shape", i64({2}, {3, 2})}});
  auto b = runOk(*session, {{"x", x}, {"shape", i64({2}, {1, -1})}});
  auto c = runOk(*session, {{"x", x}, {"shape", i64({2}, {3, 2})}});
  EXPECT_EQ(a[0].tensor.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(b[0].tensor.dims(), (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(values(b[0].tensor), values(x));
  EXPECT_THAT(signatures,
              ElementsAre("x=f32[2, 3]; shape=i64[2]{3,2}", "x=f32[2, 3]; shape=i64[2]{1,-1}"));
}

//   %x [1, 1, 1, 3], %scales f32[4] (a graph input) -> Resize -> %y
/// Float contents key the plan bit for bit: scales 2 and 1.9999999 (which
/// print alike with six decimals) give 6 and 5 outputs, not one shared plan.
TEST(SessionTest, FloatContentsKeyThePlanExactly) {
  auto session = compileText(R"(
    graph @g(%x: f32[1, 1, 1, 3], %scales: f32[4]) {
      %y = Resize(%x, _, %scales) {mode = "nearest"}
      return %y
    })");
  Tensor x = f32({1, 1, 1, 3}, {1, 2, 3});
  auto two = runOk(*session, {{"x", x}, {"scales", f32({4}, {1, 1, 1, 2.0f})}});
  auto under = runOk(*session, {{"x", x}, {"scales", f32({4}, {1, 1, 1, 1.9999999f})}});
  EXPECT_EQ(two[0].tensor.dims(), (std::vector<int64_t>{1, 1, 1, 6}));
  EXPECT_EQ(under[0].tensor.dims(), (std::vector<int64_t>{1, 1, 1, 5}));
}

//   %x [N, 3] -> Relu -> %y
/// Each new batch size gets a plan; a repeated one reuses it, and the
/// frame is reused across requests.
TEST(SessionTest, PlansAreCachedPerSignatureAndFramesReused) {
  int resizes = 0;
  SessionOptions options;
  options.callbacks.onResizeEnd = [&](const PlanReport&) { ++resizes; };
  auto session = compileText(R"(
    graph @g(%x: f32[N, 3]) {
      %y = Relu(%x)
      return %y
    })",
                             options);
  EXPECT_FALSE(session->planReport().has_value());  // N unknown at compile
  for (int n : {1, 2, 1, 2, 4}) {
    auto out = runOk(*session,
                     {{"x", f32({n, 3}, std::vector<float>(static_cast<size_t>(3 * n), -1.0f))}});
    EXPECT_EQ(out[0].tensor.dims(), (std::vector<int64_t>{n, 3}));
  }
  EXPECT_EQ(resizes, 3);
  EXPECT_EQ(session->numFramesCreated(), 1u);
}

/// SessionOptions::inputShapes lets compile() plan a symbolic graph early;
/// a name that is not an input is an error.
TEST(SessionTest, InputShapesPlanAtCompile) {
  SessionOptions options;
  options.inputShapes = {{"x", {5, 3}}};
  auto session = compileText("graph @g(%x: f32[N, 3]) {\n %y = Relu(%x)\n return %y\n}", options);
  ASSERT_TRUE(session->planReport().has_value());
  EXPECT_EQ(session->planReport()->signature, "x=f32[5, 3]");

  SessionOptions bad;
  bad.inputShapes = {{"nope", {1}}};
  Session s(bad);
  ASSERT_TRUE(
      s.load(parseGraphOrThrow("graph @g(%x: f32[N, 3]) {\n %y = Relu(%x)\n return %y\n}")).isOk());
  EXPECT_EQ(s.compile().message(),
            "SessionOptions::inputShapes names 'nope', which is not a graph input");
}

/// Callbacks see every step; returning false from onExecuteBegin skips one.
TEST(SessionTest, CallbacksObserveAndCanSkipSteps) {
  std::vector<std::string> begun, ended;
  int waits = 0;
  SessionOptions options;
  options.threads = 1;
  options.callbacks.onExecuteBegin = [&](const StepInfo& s) {
    begun.push_back(s.name);
    return s.name != "relu";
  };
  options.callbacks.onExecuteEnd = [&](const StepInfo& s, std::span<const TensorView> outs,
                                       double ms) {
    ended.push_back(s.name);
    EXPECT_EQ(outs.size(), 1u);
    EXPECT_GE(ms, 0.0);
  };
  options.callbacks.onWaitFinish = [&] { ++waits; };
  auto session = compileText(kConvBnRelu, options);
  runOk(*session, {{"x", oneToNine()}});
  EXPECT_THAT(begun, ElementsAre("conv", "bn", "relu"));
  EXPECT_THAT(ended, ElementsAre("conv", "bn"));
  EXPECT_EQ(waits, 1);
}

/// A profiled request reports one timing per executed step.
TEST(SessionTest, ProfileReportsEveryStep) {
  auto session = compileText(kConvBnRelu);
  RunOptions ro;
  ro.profile = true;
  StatusOr<RunResult> r = session->run({{"x", oneToNine()}}, ro);
  ASSERT_TRUE(r.isOk());
  ASSERT_EQ(r->steps.size(), 3u);
  EXPECT_EQ(r->steps[0].step.op, "Conv");
  EXPECT_EQ(r->steps[0].step.backend, "reference");
  EXPECT_GT(r->wallMs, 0.0);
}

/// A kernel failure at run time is one line naming the node.
TEST(SessionTest, KernelErrorNamesTheNode) {
  auto session = compileText(R"(
    graph @g(%x: f32[3], %i: i64[1]) {
      %y = Gather(%x, %i) {axis = 0} @pick
      return %y
    })");
  StatusOr<RunResult> r = session->run({{"x", f32({3}, {1, 2, 3})}, {"i", i64({1}, {7})}});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().message(),
            "Gather node 'pick': index 7 is out of range for axis 0 of size 3");
  auto ok = runOk(*session, {{"x", f32({3}, {1, 2, 3})}, {"i", i64({1}, {-1})}});
  EXPECT_THAT(values(ok[0].tensor), ElementsAre(3.0f));
}

//   %x [1] -> Expand(shape from a graph input) -> %y
/// A shape asking for an absurd tensor fails the request at resize, naming
/// the node and the limit, instead of overflowing or allocating.
TEST(SessionTest, AbsurdShapeFromDataIsRefused) {
  auto session = compileText(R"(
    graph @g(%x: f32[1], %shape: i64[3]) {
      %y = Expand(%x, %shape) @expand
      return %y
    })");
  int64_t huge = int64_t{1} << 30;
  StatusOr<RunResult> r =
      session->run({{"x", f32({1}, {1})}, {"shape", i64({3}, {huge, huge, huge})}});
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(r.status().message(),
              HasSubstr("Expand node 'expand': output 0 would be f32[1073741824, "));
  EXPECT_THAT(r.status().message(), HasSubstr("tensor limit"));
  StatusOr<RunResult> negative =
      session->run({{"x", f32({1}, {1})}, {"shape", i64({3}, {1, -4, 1})}});
  ASSERT_FALSE(negative.isOk());
  EXPECT_THAT(negative.status().message(), HasSubstr("negative dim"));
}

/// A node without a reference kernel fails compile() with its name.
TEST(SessionTest, UnknownOpFailsCompile) {
  Session s;
  ASSERT_TRUE(s.load(parseGraphOrThrow(R"(
    graph @g(%x: f32[3]) {
      %y = custom.Frobnicate(%x) @frob
      return %y
    })"))
                  .isOk());
  Status st = s.compile();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_EQ(st.message(),
            "custom.Frobnicate node 'frob': no kernel for op 'custom.Frobnicate' in the reference "
            "backend");
}

/// Selecting a subset of outputs returns just those, in the asked order.
TEST(SessionTest, ReturnsRequestedOutputsOnly) {
  auto session = compileText(R"(
    graph @g(%x: f32[2]) {
      %a = Relu(%x)
      %b = Neg(%x)
      return %a, %b
    })");
  RunOptions ro;
  ro.outputNames = {"b"};
  auto out = runOk(*session, {{"x", f32({2}, {-1, 2})}}, ro);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "b");
  EXPECT_THAT(values(out[0].tensor), ElementsAre(1.0f, -2.0f));
}

}  // namespace
}  // namespace subgraph::runtime
