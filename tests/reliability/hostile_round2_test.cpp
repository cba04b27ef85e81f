//===- tests/reliability/hostile_round2_test.cpp - Hostile inputs, second round -===//
//
// The library half of the second hardening round (issue 48), grouped as
// docs/reliability.md's table lists them: work that an attribute or a trip
// count sets (Loop nests, trip counts of 2^62, RoiAlign's sampling_ratio,
// pooling windows, LRN sizes, Einsum equations, NMS's box count), memory a
// Loop holds, fp16 subnormals, bools read in place, and thread counts. Each
// case ends in a right answer or in one error line naming the limit, under
// limits small enough that CI spends milliseconds on the hostile ones; the
// program and Python halves are tests/cli/hardening_round2_test.cpp and
// python/tests/test_hardening.py.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "subgraph/ir/text_format.h"
#include "subgraph/passes/pass_manager.h"
#include "subgraph/runtime/session.h"
#include "subgraph/support/half.h"

namespace subgraph {
namespace {

using runtime::InputView;
using runtime::NamedTensor;
using runtime::RunResult;
using runtime::Session;
using runtime::SessionOptions;
using ::testing::HasSubstr;

/// Parses, loads, compiles and runs `text` under `options`; the first
/// failure, or the outputs.
StatusOr<std::vector<NamedTensor>> runText(const std::string& text,
                                           const std::vector<NamedTensor>& inputs,
                                           SessionOptions options) {
  StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text);
  if (!graph.isOk()) return graph.status();
  options.threads = 1;
  Session session(options);
  SUBGRAPH_RETURN_IF_ERROR(session.load(std::move(graph).value()));
  SUBGRAPH_RETURN_IF_ERROR(session.compile());
  StatusOr<RunResult> ran = session.run(inputs);
  if (!ran.isOk()) return ran.status();
  return std::move(ran.value().outputs);
}

/// Succeeds when `got` failed with one line holding `needle`, code
/// kLimitExceeded.
::testing::AssertionResult failsAtLimit(const StatusOr<std::vector<NamedTensor>>& got,
                                        const std::string& needle) {
  if (got.isOk()) return ::testing::AssertionFailure() << "ran, expected '" << needle << "'";
  const std::string& m = got.status().message();
  if (m.find('\n') != std::string::npos || m.find(needle) == std::string::npos ||
      got.status().code() != StatusCode::kLimitExceeded)
    return ::testing::AssertionFailure()
           << "error '" << m << "' (" << statusCodeName(got.status().code()) << ")";
  return ::testing::AssertionSuccess();
}

Tensor f32(std::vector<int64_t> dims, std::vector<float> values) {
  return Tensor::fromVector<float>(DataType::kFloat32, std::move(dims), values);
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numElements()));
  if (!v.empty()) std::memcpy(v.data(), t.bytes().data(), v.size() * sizeof(float));
  return v;
}

//===--- Group: Loop work ------------------------------------------------===//

/// `depth` Loops of `trips` iterations each, nested in each other's
/// bodies; the innermost adds 1, so the answer is x + trips^depth.
std::string loopBody(int level, int depth, int64_t trips) {
  const std::string k = std::to_string(level), n = std::to_string(trips);
  std::string text =
      "graph @body" + k + "(%i" + k + ": i64[], %c" + k + ": bool[], %v" + k + ": f32[1]) {\n";
  if (level == depth) {
    text += "  %one" + k + " = const f32[1] [1]\n  %w" + k + " = Add(%v" + k + ", %one" + k + ")\n";
  } else {
    text += "  %m" + k + " = const i64[] [" + n + "]\n  %t" + k + " = const bool[] [1]\n";
    text += "  %w" + k + " = Loop(%m" + k + ", %t" + k + ", %v" + k +
            ") {body = " + loopBody(level + 1, depth, trips) + "}\n";
  }
  return text + "  return %c" + k + ", %w" + k + "\n}";
}

std::string loopNest(int depth, int64_t trips) {
  return "graph @g(%x: f32[1]) {\n  %m = const i64[] [" + std::to_string(trips) +
         "]\n  %t = const bool[] [1]\n  %y = Loop(%m, %t, %x) {body = " +
         loopBody(1, depth, trips) + "} @loop\n  return %y\n}\n";
}

SessionOptions withLoopIterations(uint64_t n) {
  SessionOptions o;
  o.work.loopIterations = n;
  return o;
}

/// A nest of 40-iteration Loops six deep asks for 40^6 body runs from a
/// model of 1 KB; the limit counts the nested Loops' iterations with the
/// outer's, so it stops at the limit, not at 40 per Loop.
TEST(HostileRound2, LoopNestStopsAtTheIterationLimit) {
  const std::vector<NamedTensor> x = {{"x", f32({1}, {0})}};
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(failsAtLimit(runText(loopNest(6, 40), x, withLoopIterations(5000)),
                           "passes the loop iteration limit of 5000"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  // What must not happen: a small nest refused under a limit it fits.
  StatusOr<std::vector<NamedTensor>> small = runText(loopNest(3, 5), x, withLoopIterations(5000));
  ASSERT_TRUE(small.isOk()) << small.status().message();
  EXPECT_EQ(floats(small.value()[0].tensor), std::vector<float>{125});
}

/// A trip count of 2^62, INT64_MAX, or none with a condition that never
/// turns false: the iteration limit ends each.
TEST(HostileRound2, HostileTripCountsStopAtTheIterationLimit) {
  for (const std::string& m : {std::string("4611686018427387904"), std::to_string(INT64_MAX)}) {
    SCOPED_TRACE(m);
    std::string text =
        "graph @g(%x: f32[1]) {\n  %m = const i64[] [" + m +
        "]\n  %t = const bool[] [1]\n  %y = Loop(%m, %t, %x) {body = " + loopBody(1, 1, 1) +
        "} @loop\n  return %y\n}\n";
    EXPECT_TRUE(failsAtLimit(runText(text, {{"x", f32({1}, {0})}}, withLoopIterations(1000)),
                             "Loop node 'loop': iteration 1000 passes the loop iteration limit"));
  }
  const char* forever = R"(graph @g(%x: f32[1]) {
  %t = const bool[] [1]
  %y = Loop(_, %t, %x) {body = graph @b(%i: i64[], %c: bool[], %v: f32[1]) {
    %w = Neg(%v)
    return %c, %w
  }} @loop
  return %y
}
)";
  EXPECT_TRUE(failsAtLimit(runText(forever, {{"x", f32({1}, {0})}}, withLoopIterations(1000)),
                           "loop iteration limit of 1000"));
}

/// With the iteration limit off, the time limit still ends a Loop: a
/// deadline that no trip count can pass.
TEST(HostileRound2, LoopTimeLimitEndsWhatTheIterationLimitAllows) {
  SessionOptions o = withLoopIterations(0);
  o.work.loopSeconds = 0.2;
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(failsAtLimit(runText(loopNest(6, 40), {{"x", f32({1}, {0})}}, o),
                           "over the loop time limit of 0.2 s"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

//===--- Group: Loop memory ------------------------------------------------===//

//   Loop M=64: v <- Concat(v, v), doubling a 4 KiB value each iteration
constexpr const char* kDoublingLoop = R"(graph @g(%x: f32[1024]) {
  %m = const i64[] [64]
  %t = const bool[] [1]
  %y = Loop(%m, %t, %x) {body = graph @b(%i: i64[], %c: bool[], %v: f32) {
    %w = Concat(%v, %v) {axis = 0}
    return %c, %w
  }} @loop
  return %y
}
)";

/// A carried value that doubles every iteration stops at the memory limit,
/// checked before the iteration allocates, instead of exhausting memory
/// (2^64 bytes by the 64th iteration).
TEST(HostileRound2, LoopCarriedValuesStopAtTheMemoryLimit) {
  SessionOptions o;
  o.memoryLimitBytes = 64 << 20;
  std::vector<float> x(1024, 1.0f);
  EXPECT_TRUE(failsAtLimit(runText(kDoublingLoop, {{"x", f32({1024}, x)}}, o),
                           "over the memory limit of 67108864 bytes"));
  // The same loop for 4 iterations fits.
  std::string four = kDoublingLoop;
  four.replace(four.find("[64]"), 4, "[4]");
  StatusOr<std::vector<NamedTensor>> ok = runText(four, {{"x", f32({1024}, x)}}, o);
  ASSERT_TRUE(ok.isOk()) << ok.status().message();
  EXPECT_EQ(ok.value()[0].tensor.dims(), std::vector<int64_t>{16 * 1024});
}

//===--- Group: kernel work -----------------------------------------------===//

constexpr int64_t kWorkLimit = int64_t{1} << 24;

SessionOptions withKernelWork() {
  SessionOptions o;
  o.work.kernelWork = kWorkLimit;
  return o;
}

std::string roiAlign(const std::string& samplingRatio) {
  return "graph @g(%x: f32[1, 1, 4, 4], %rois: f32[1, 4], %idx: i64[1]) {\n"
         "  %y = RoiAlign(%x, %rois, %idx) {output_height = 2, output_width = 2, "
         "sampling_ratio = " +
         samplingRatio + "} @roi\n  return %y\n}\n";
}

std::vector<NamedTensor> roiInputs(float extent) {
  return {{"x", f32({1, 1, 4, 4}, std::vector<float>(16, 1.0f))},
          {"rois", f32({1, 4}, {0, 0, extent, extent})},
          {"idx", Tensor::fromVector<int64_t>(DataType::kInt64, {1}, {0})}};
}

/// sampling_ratio of 2^31, 2^32 or INT64_MAX asks for sampling_ratio^2
/// samples per output element: refused before one is taken, under the
/// default limit too.
TEST(HostileRound2, RoiAlignSamplingRatioIsCheckedAgainstTheWorkLimit) {
  for (const std::string& ratio :
       {std::string("2147483648"), std::string("4294967296"), std::to_string(INT64_MAX)}) {
    SCOPED_TRACE(ratio);
    EXPECT_TRUE(failsAtLimit(runText(roiAlign(ratio), roiInputs(3), SessionOptions{}),
                             "RoiAlign node 'roi': sampling_ratio " + ratio));
  }
  // With sampling_ratio 0 the roi sets the grid: a roi of 10^5 pixels
  // would sample 10^10 times per element.
  EXPECT_TRUE(failsAtLimit(runText(roiAlign("0"), roiInputs(1e5f), withKernelWork()),
                           "the rois' sampling grids take"));
  // What must not happen: an ordinary grid refused. Ones average to one.
  StatusOr<std::vector<NamedTensor>> ok = runText(roiAlign("2"), roiInputs(3), withKernelWork());
  ASSERT_TRUE(ok.isOk()) << ok.status().message();
  EXPECT_EQ(floats(ok.value()[0].tensor), std::vector<float>(4, 1.0f));
}

/// Attributes that set a kernel's inner loop: a pooling window, LRN's
/// size, an Einsum equation. Each is checked at resize against the limit,
/// with small cases that run.
TEST(HostileRound2, AttributeSetLoopsAreCheckedAgainstTheWorkLimit) {
  const std::vector<float> ones(64 * 64, 1.0f);
  struct Case {
    const char* text;
    std::vector<NamedTensor> inputs;
    const char* needle;  ///< "" for a case that must run.
  };
  const std::vector<Case> cases = {
      {"graph @g(%x: f32[1, 1, 64, 64]) {\n  %y = MaxPool(%x) {kernel_shape = [8192, 8192], "
       "pads = [8191, 8191, 8191, 8191]}\n  return %y\n}\n",
       {{"x", f32({1, 1, 64, 64}, ones)}},
       "kernel_shape [8192, 8192] takes"},
      {"graph @g(%x: f32[1, 1, 64, 64]) {\n  %y = MaxPool(%x) {kernel_shape = [2, 2]}\n  return "
       "%y\n}\n",
       {{"x", f32({1, 1, 64, 64}, ones)}},
       ""},
      {"graph @g(%x: f32[1, 4096, 1, 1]) {\n  %y = LRN(%x) {size = 4611686018427387904}\n  "
       "return %y\n}\n",
       {{"x", f32({1, 4096, 1, 1}, std::vector<float>(4096, 1.0f))}},
       "size 4611686018427387904 takes"},
      {"graph @g(%a: f32[64, 64], %b: f32[64, 64]) {\n  %y = Einsum(%a, %b) {equation = "
       "\"ab,cd->\"}\n  return %y\n}\n",
       {{"a", f32({64, 64}, ones)}, {"b", f32({64, 64}, ones)}},
       "its equation takes 16777216"},
      {"graph @g(%a: f32[64, 64], %b: f32[64, 64]) {\n  %y = Einsum(%a, %b) {equation = "
       "\"ij,jk->ik\"}\n  return %y\n}\n",
       {{"a", f32({64, 64}, ones)}, {"b", f32({64, 64}, ones)}},
       ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    SessionOptions o = withKernelWork();
    o.work.kernelWork = kWorkLimit - 1;  // the Einsum case asks for exactly 2^24
    StatusOr<std::vector<NamedTensor>> got = runText(c.text, c.inputs, o);
    if (*c.needle)
      EXPECT_TRUE(failsAtLimit(got, c.needle));
    else
      EXPECT_TRUE(got.isOk()) << got.status().message();
  }
}

//===--- Group: fp16 -------------------------------------------------------===//

uint16_t halfBitsOf(const Tensor& t, size_t i) {
  uint16_t bits;
  std::memcpy(&bits, t.bytes().data() + i * 2, 2);
  return bits;
}

/// The one conversion rounds to nearest even, subnormals included: 2^-24 is
/// the smallest subnormal half (0x0001), not 0, and each value below is the
/// half ONNX Runtime and numpy give.
TEST(HostileRound2, HalfConversionKeepsSubnormals) {
  struct Want {
    float value;
    uint16_t bits;
  };
  const float sub = std::ldexp(1.0f, -24);
  const Want wants[] = {{sub, 0x0001},         {3 * sub, 0x0003},
                        {sub / 2, 0x0000},     {sub * 1.5f, 0x0002},
                        {1023 * sub, 0x03ff},  {1024 * sub, 0x0400},
                        {-sub, 0x8001},        {65504.0f, 0x7bff},
                        {65520.0f, 0x7c00},    {INFINITY, 0x7c00},
                        {-INFINITY, 0xfc00},   {1.0f, 0x3c00},
                        {sub * 0.75f, 0x0001}, {std::ldexp(1.0f, -14), 0x0400}};
  for (const Want& w : wants) EXPECT_EQ(floatToHalfBits(w.value), w.bits) << w.value;
  EXPECT_EQ(halfBitsToFloat(0x0001), sub);
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(NAN))));
  for (uint32_t bits = 0; bits < 0x7c00; ++bits)  // every finite half round-trips
    ASSERT_EQ(floatToHalfBits(halfBitsToFloat(static_cast<uint16_t>(bits))), bits) << bits;
}

//   x f32[4] -> Cast(f16) -> Relu -> y f16
constexpr const char* kHalfRelu = R"(graph @g(%x: f32[4]) {
  %h = Cast(%x) {to = 10}
  %y = Relu(%h)
  return %y
}
)";

/// The runtime's kernels and the constant folder give the same halves:
/// Relu(2^-24) in fp16 is 2^-24, and Cast to f16 keeps every subnormal.
TEST(HostileRound2, HalfKernelsAndTheFolderAgreeOnSubnormals) {
  const float sub = std::ldexp(1.0f, -24);
  const std::vector<float> x = {sub, 5 * sub, 1000 * sub, -sub};
  const std::vector<uint16_t> want = {0x0001, 0x0005, 0x03e8, 0x0000};
  StatusOr<std::vector<NamedTensor>> ran = runText(kHalfRelu, {{"x", f32({4}, x)}}, {});
  ASSERT_TRUE(ran.isOk()) << ran.status().message();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(halfBitsOf(ran.value()[0].tensor, i), want[i]);
  // The same graph with x a constant, folded before it runs.
  std::string folded = kHalfRelu;
  folded.replace(folded.find("(%x: f32[4])"), 12, "()");
  folded.replace(folded.find("  %h"), 0,
                 "  %x = const f32[4] [5.96046448e-08, 2.98023224e-07, 5.96046448e-05, "
                 "-5.96046448e-08]\n");
  std::unique_ptr<Graph> g = parseGraphOrThrow(folded);
  StatusOr<PassManager> pipeline = parsePassPipeline("default", {});
  ASSERT_TRUE(pipeline.isOk());
  ASSERT_TRUE(pipeline.value().run(*g).isOk());
  Session s;
  ASSERT_TRUE(s.load(std::move(g)).isOk());
  ASSERT_TRUE(s.compile().isOk());
  StatusOr<RunResult> out = s.run({});
  ASSERT_TRUE(out.isOk()) << out.status().message();
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(halfBitsOf(out->outputs[0].tensor, i), want[i]);
}

//===--- Group: bools read in place ----------------------------------------===//

/// A caller's buffer with bool bytes 2 and 255, read in place (as numpy
/// arrays are): Not and Cast see true, and the buffer is not written.
TEST(HostileRound2, BoolsReadInPlaceAreCanonical) {
  Session s;
  ASSERT_TRUE(s.load(parseGraphOrThrow(R"(graph @g(%p: bool[4]) {
  %n = Not(%p)
  %c = Cast(%p) {to = 2}
  return %n, %c
}
)"))
                  .isOk());
  ASSERT_TRUE(s.compile().isOk());
  uint8_t bytes[4] = {0, 1, 2, 255};
  StatusOr<RunResult> out = s.runInPlace({InputView{"p", DataType::kBool, {4}, bytes, 4}});
  ASSERT_TRUE(out.isOk()) << out.status().message();
  std::vector<uint8_t> notP(4), castP(4);
  std::memcpy(notP.data(), out->outputs[0].tensor.bytes().data(), 4);
  std::memcpy(castP.data(), out->outputs[1].tensor.bytes().data(), 4);
  EXPECT_EQ(notP, (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(castP, (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(bytes[2], 2);
  EXPECT_EQ(bytes[3], 255);
}

//===--- Group: thread counts ---------------------------------------------===//

/// One bounds check for every thread count: out of [0, kMaxThreads] is an
/// error line from load(), never an arena of 2^31 slots.
TEST(HostileRound2, ThreadCountsOutsideTheBoundsAreAnErrorLine) {
  for (int threads : {INT_MAX, 65537, 1025, -1}) {
    SCOPED_TRACE(threads);
    SessionOptions o;
    o.threads = threads;
    Session s(o);
    Status st =
        s.load(parseGraphOrThrow("graph @g(%x: f32[1]) {\n  %y = Neg(%x)\n  return %y\n}\n"));
    ASSERT_FALSE(st.isOk());
    EXPECT_THAT(st.message(), HasSubstr("threads must be between 0 (one per core) and 1024, not " +
                                        std::to_string(threads)));
  }
  EXPECT_TRUE(runtime::checkThreadCount(runtime::kMaxThreads).isOk());
  EXPECT_TRUE(runtime::checkThreadCount(0).isOk());
}

}  // namespace
}  // namespace subgraph
