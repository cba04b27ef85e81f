//===- tests/runtime/batching_test.cpp - Dynamic batching -----------------===//
//
// SessionOptions::batching merges concurrent requests whose inputs differ
// only in dim 0 into one run and splits the outputs back. The session
// refuses graphs whose ops mix rows (naming the node), and each request
// gets exactly its own rows: on the reference backend, bit for bit what
// an unbatched session answers.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <barrier>
#include <cstdio>
#include <random>
#include <thread>

#include "runtime_test_util.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A small CNN with a free batch: every op keeps the rows apart.
constexpr const char* kCnn = R"(
  graph @g(%x: f32[N, 2, 4, 4]) {
    %w = const f32[3, 2, 3, 3] splat(0.1)
    %b = const f32[3] splat(0.05)
    %c = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]} @conv
    %r = Relu(%c) @relu
    %p = GlobalAveragePool(%r) @pool
    %f = Flatten(%p) @flatten
    %wg = const f32[3, 5] splat(0.2)
    %y = Gemm(%f, %wg) @fc
    %s = Softmax(%y) {axis = 1} @softmax
    return %s
  })";

SessionOptions batched(int64_t maxBatch, int64_t delayUs) {
  SessionOptions o;
  o.threads = 1;
  o.batching.maxBatch = maxBatch;
  o.batching.maxDelayUs = delayUs;
  return o;
}

Status compileStatus(const std::string& text, SessionOptions options) {
  StatusOr<std::unique_ptr<Graph>> g = parseGraph(text);
  if (!g.isOk()) return g.status();
  Session s(options);
  SUBGRAPH_RETURN_IF_ERROR(s.load(std::move(g).value()));
  return s.compile();
}

/// Requests of `rows[i]` rows each, started together on `session`; each
/// answer checked bit for bit against `serial`. Returns how many requests
/// shared each one's run.
std::vector<size_t> runTogether(const Session& session, const Session& serial,
                                const std::vector<int64_t>& rows) {
  std::mt19937 rng(20261201);
  std::printf("seed 20261201\n");
  std::vector<Tensor> inputs;
  for (int64_t r : rows) inputs.push_back(randomF32({r, 2, 4, 4}, rng));
  std::vector<size_t> shared(rows.size(), 0);
  std::barrier start(static_cast<std::ptrdiff_t>(rows.size()));
  std::vector<std::thread> clients;
  for (size_t i = 0; i < rows.size(); ++i)
    clients.emplace_back([&, i] {
      start.arrive_and_wait();
      StatusOr<RunResult> got = session.run({{"x", inputs[i]}});
      ASSERT_TRUE(got.isOk()) << got.status().message();
      shared[i] = got->batchedRequests;
      std::vector<NamedTensor> want = runOk(serial, {{"x", inputs[i]}});
      EXPECT_EQ(got->outputs[0].tensor.dims(), want[0].tensor.dims());
      EXPECT_EQ(values(got->outputs[0].tensor), values(want[0].tensor)) << "request " << i;
    });
  for (auto& t : clients) t.join();
  return shared;
}

/// Four concurrent requests fill a batch of four rows (the delay is long,
/// so only a full batch starts early): one run, four answers, each the
/// request's own rows.
TEST(Batching, ConcurrentRequestsShareOneRunAndGetTheirOwnRows) {
  auto session = compileText(kCnn, batched(4, 5'000'000));
  auto serial = compileText(kCnn, batched(0, 0));
  EXPECT_THAT(runTogether(*session, *serial, {1, 1, 1, 1}), ElementsAre(4u, 4u, 4u, 4u));
  // Requests of several rows each: 2 + 1 + 1 rows fill the batch too.
  EXPECT_THAT(runTogether(*session, *serial, {2, 1, 1}), ElementsAre(3u, 3u, 3u));
}

/// A lone request runs after the delay, alone; a profiled request never
/// waits for a batch.
TEST(Batching, ALoneOrProfiledRequestRunsAlone) {
  auto session = compileText(kCnn, batched(8, 2'000));
  auto serial = compileText(kCnn, batched(0, 0));
  EXPECT_THAT(runTogether(*session, *serial, {1}), ElementsAre(1u));
  RunOptions profiled;
  profiled.profile = true;
  std::mt19937 rng(3);
  StatusOr<RunResult> got = session->run({{"x", randomF32({1, 2, 4, 4}, rng)}}, profiled);
  ASSERT_TRUE(got.isOk());
  EXPECT_EQ(got->batchedRequests, 1u);
  EXPECT_FALSE(got->steps.empty());
}

/// The session says why it will not batch a graph, naming the node.
TEST(Batching, GraphsThatMixRowsAreRefused) {
  EXPECT_TRUE(compileStatus(kCnn, batched(8, 100)).isOk());
  std::string softmax0 = kCnn;
  softmax0.replace(softmax0.find("{axis = 1}"), 10, "{axis = 0}");
  EXPECT_THAT(compileStatus(softmax0, batched(8, 100)).message(),
              HasSubstr("dynamic batching: Softmax node 'softmax' works along axis 0, the batch"));
  std::string fixed = kCnn;
  fixed.replace(fixed.find("f32[N, 2"), 8, "f32[4, 2");
  EXPECT_THAT(compileStatus(fixed, batched(8, 100)).message(),
              HasSubstr("input 'x' has dim 0 fixed at 4, not free (symbolic or 1)"));
  EXPECT_THAT(compileStatus(R"(graph @g(%x: f32[N, 3]) {
      %shape = const i64[1] [-1]
      %y = Reshape(%x, %shape) @flat
      return %y
    })",
                            batched(8, 100))
                  .message(),
              HasSubstr("Reshape node 'flat' does not keep dim 0"));
  // Without batching the same graphs compile.
  EXPECT_TRUE(compileStatus(softmax0, batched(0, 100)).isOk());
  SessionOptions bad = batched(8, -1);
  EXPECT_THAT(compileStatus(kCnn, bad).message(),
              HasSubstr("BatchingOptions::maxDelayUs must be 0 or more, not -1"));
}

/// A session receives graphs already partitioned: a fused region is judged
/// by its body, so a CNN whose conv and relu a backend fused still batches,
/// while a body that mixes rows is refused, naming the node inside it.
TEST(Batching, FusedRegionsAreJudgedByTheirBodies) {
  constexpr const char* kFused = R"(
    graph @g(%x: f32[N, 2, 4, 4]) {
      %w = const f32[3, 2, 3, 3] splat(0.1)
      %r = subgraph.toy.ConvRelu(%x, %w) {body = graph @b(%a: f32[N, 2, 4, 4], %k: f32[3, 2, 3, 3]) {
        %c = Conv(%a, %k) {pads = [1, 1, 1, 1]} @conv
        %y = Relu(%c) @relu
        return %y
      }} @region
      %p = GlobalAveragePool(%r) @pool
      %f = Flatten(%p) @flatten
      %s = Softmax(%f) {axis = AXIS} @softmax_out
      return %s
    })";
  auto with = [&](const char* axis) {
    std::string text = kFused;
    text.replace(text.find("AXIS"), 4, axis);
    return text;
  };
  EXPECT_TRUE(compileStatus(with("1"), batched(8, 100)).isOk());
  std::string mixing = with("1");
  mixing.replace(mixing.find("%y = Relu(%c) @relu"), 19, "%y = Softmax(%c) {axis = 0} @mix");
  EXPECT_THAT(compileStatus(mixing, batched(8, 100)).message(),
              HasSubstr("Softmax node 'mix' works along axis 0, the batch"));
  // The negative side: the fused node itself is no ONNX op, and must not be
  // refused as one.
  EXPECT_THAT(compileStatus(with("1"), batched(8, 100)).message(),
              Not(HasSubstr("is not an ONNX op")));
}

}  // namespace
}  // namespace subgraph::runtime
