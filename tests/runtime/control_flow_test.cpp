//===- tests/runtime/control_flow_test.cpp - If and Loop ------------------===//
//
// Control flow on the reference backend: branches and loop bodies that read
// outer values by name (captures), per-condition plans, loop-carried values
// whose shape changes, scan outputs, and the errors of a loop without a
// bound.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "runtime_test_util.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string readGraphFile(const std::string& name) {
  const char* root = std::getenv("SUBGRAPH_SOURCE_DIR");
  std::ifstream in(std::string(root ? root : ".") + "/tests/data/graphs/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

//   %x -> ReduceSum -> Greater(0) -> If: then Relu(%x), else Relu(Neg(%x))
//   (both branches read the outer %x by name)
/// The branch follows the data, each branch reads the captured outer value,
/// and the two conditions get separate plans.
TEST(ControlFlowTest, IfBranchesReadOuterValues) {
  std::string text = readGraphFile("if_branches.sg");
  ASSERT_FALSE(text.empty())
      << "tests/data/graphs/if_branches.sg not found (set SUBGRAPH_SOURCE_DIR)";
  auto session = compileText(text);
  Tensor pos = f32({1, 8}, {1, -2, 3, -4, 5, -6, 7, 8});
  Tensor neg = f32({1, 8}, {-1, 2, -3, 4, -5, 6, -7, -8});
  auto a = runOk(*session, {{"x", pos}});
  auto b = runOk(*session, {{"x", neg}});
  EXPECT_THAT(values(a[0].tensor), ElementsAre(1, 0, 3, 0, 5, 0, 7, 8));
  EXPECT_THAT(values(b[0].tensor), ElementsAre(1, 0, 3, 0, 5, 0, 7, 8));
  auto c = runOk(*session, {{"x", f32({2, 8}, std::vector<float>(16, -0.5f))}});
  EXPECT_EQ(c[0].tensor.dims(), (std::vector<int64_t>{2, 8}));
  EXPECT_THAT(values(c[0].tensor), Each(0.5f));
}

//   Loop M=3: v <- Concat(v, v * %k) (shape doubles), scan out Sum(v)
//   %k is read from the outer graph by name
/// Loop-carried values may change shape, scan outputs stack per iteration,
/// and the body reads the outer %k.
TEST(ControlFlowTest, LoopWithGrowingStateAndScanOutput) {
  auto session = compileText(R"(
    graph @g(%v0: f32[1], %k: f32[]) {
      %m = const i64[] [3]
      %cond = const bool[] [1]
      %final, %sums = Loop(%m, %cond, %v0) {body = graph @body(%i: i64[], %c: bool[], %v: f32) {
        %scaled = Mul(%v, %k)
        %grown = Concat(%v, %scaled) {axis = 0}
        %s = ReduceSum(%grown) {keepdims = 1}
        return %c, %grown, %s
      }} @loop
      return %final, %sums
    })");
  auto out = runOk(*session, {{"v0", f32({1}, {1})}, {"k", f32({}, {2})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor.dims(), (std::vector<int64_t>{8}));
  EXPECT_THAT(values(out[0].tensor), ElementsAre(1, 2, 2, 4, 2, 4, 4, 8));
  EXPECT_EQ(out[1].tensor.dims(), (std::vector<int64_t>{3, 1}));
  EXPECT_THAT(values(out[1].tensor), ElementsAre(3, 9, 27));
}

//   Loop (no M) while i < 4: the body's cond output ends it
/// A condition computed in the body stops the loop.
TEST(ControlFlowTest, LoopStopsOnBodyCondition) {
  auto session = compileText(R"(
    graph @g(%x: f32[2]) {
      %none = const i64[] [100]
      %go = const bool[] [1]
      %four = const i64[] [3]
      %y = Loop(%none, %go, %x) {body = graph @body(%i: i64[], %c: bool[], %v: f32[2]) {
        %next = Add(%v, %v)
        %more = Less(%i, %four)
        return %more, %next
      }}
      return %y
    })");
  auto out = runOk(*session, {{"x", f32({2}, {1, -1})}});
  EXPECT_THAT(values(out[0].tensor), ElementsAre(16, -16));
}

//   Loop M=1000: scan out x (1,024 f32 = 4 KiB) each iteration: 4 MB in all
constexpr const char* kScanningLoop = R"(
    graph @g(%x: f32[1024]) {
      %m = const i64[] [1000]
      %cond = const bool[] [1]
      %ys = Loop(%m, %cond) {body = graph @body(%i: i64[], %c: bool[]) {
        %copy = Identity(%x)
        return %c, %copy
      }} @loop
      return %ys
    })";

/// The memory limit holds inside a Loop: its scan outputs grow with every
/// iteration, past what one plan of the body shows, and the loop stops
/// with the limit's error once they pass it, not when memory runs out.
TEST(ControlFlowTest, LoopScanOutputsStopAtTheMemoryLimit) {
  SessionOptions options;
  options.memoryLimitBytes = 1 << 20;
  Session s(options);
  ASSERT_TRUE(s.load(parseGraphOrThrow(kScanningLoop)).isOk());
  ASSERT_TRUE(s.compile().isOk());
  std::vector<float> x(1024, 1.0f);
  StatusOr<RunResult> out = s.run({{"x", f32({1024}, x)}});
  ASSERT_FALSE(out.isOk());
  EXPECT_EQ(out.status().code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(out.status().message(), HasSubstr("Loop node 'loop'"));
  EXPECT_THAT(out.status().message(), HasSubstr("over the memory limit of 1048576 bytes"));
  // What must not happen: the same loop refused under a limit it fits.
  options.memoryLimitBytes = 64 << 20;
  Session roomy(options);
  ASSERT_TRUE(roomy.load(parseGraphOrThrow(kScanningLoop)).isOk());
  ASSERT_TRUE(roomy.compile().isOk());
  auto ok = runOk(roomy, {{"x", f32({1024}, x)}});
  EXPECT_EQ(ok[0].tensor.dims(), (std::vector<int64_t>{1000, 1024}));
}

/// A loop body that does not match the node is refused when the graph is
/// loaded: Session::load verifies before any kernel is made.
TEST(ControlFlowTest, LoopBodyMismatchIsRefusedAtLoad) {
  Session s;
  Status st = s.load(parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %m = const i64[] [2]
      %c = const bool[] [1]
      %y = Loop(%m, %c, %x) {body = graph @body(%i: i64[], %cc: bool[]) {
        return %cc
      }} @loop
      return %y
    })"));
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(),
            "invalid graph: Loop node 'loop': body takes 2 inputs, expected 2 + 1 loop-carried "
            "values");
  EXPECT_FALSE(s.compile().isOk());
}

}  // namespace
}  // namespace subgraph::runtime
