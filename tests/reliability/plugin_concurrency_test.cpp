//===- tests/reliability/plugin_concurrency_test.cpp - Plugins loaded while sessions run -===//
//
// Loading a plugin registers op definitions in the process-wide OpRegistry
// and maps a library; unloading unmaps it. Both happen while other threads
// run sessions that look ops up, so this is the test tools/tsan.sh relies
// on to show that plugin loading is properly synchronized with running
// sessions. It needs a built plugin: SUBGRAPH_TEST_PLUGIN names the
// example max_splat plugin (tools/tsan.sh sets it), else the build's own
// max_splat (compiled in as SUBGRAPH_TEST_DEFAULT_PLUGIN); without either
// the test is skipped. It is compiled only when the plugin host is built.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "subgraph/ir/text_format.h"
#include "subgraph/runtime/session.h"

#ifdef SUBGRAPH_HAVE_PLUGINS
#include "subgraph/plugin_abi.h"
#include "subgraph/plugins/plugin_loader.h"
#endif

namespace subgraph {
namespace {

using namespace runtime;

//   %x [2, 4] -> Max(%x, splat 0.25) -> Neg -> %y
// max_splat's post-partition transform turns the Max into its MaxSplat.
constexpr const char* kMaxGraph = R"(
  graph @g(%x: f32[2, 4]) {
    %c = const f32[2, 4] splat(0.25)
    %m = Max(%x, %c) @max
    %y = Neg(%m) @neg
    return %y
  })";

/// Four threads run reference sessions without pause while the plugin is
/// loaded, used (transform, kernels) and unloaded ten times; every run and
/// every plugin use succeeds with the right values.
TEST(PluginConcurrencyTest, LoadAndUnloadWhileSessionsRun) {
#ifndef SUBGRAPH_HAVE_PLUGINS
  GTEST_SKIP() << "built without the plugin host";
#else
  const char* path = std::getenv("SUBGRAPH_TEST_PLUGIN");
#ifdef SUBGRAPH_TEST_DEFAULT_PLUGIN
  if (!path || !*path) path = SUBGRAPH_TEST_DEFAULT_PLUGIN;
#endif
  if (!path || !*path || !std::filesystem::exists(path))
    GTEST_SKIP() << "SUBGRAPH_TEST_PLUGIN does not name a built max_splat plugin";
  Tensor x = Tensor::fromVector<float>(DataType::kFloat32, {2, 4}, {-1, 0, 1, 2, -3, 3, 0.5, 0});
  const std::vector<float> want = {-0.25f, -0.25f, -1, -2, -0.25f, -3, -0.5f, -0.25f};
  auto floats = [](const Tensor& t) {
    auto d = t.data<float>();
    return std::vector<float>(d.begin(), d.end());
  };

  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, runs{0}, started{0};
  std::vector<std::thread> runners;
  // An ASSERT below returns early; stop and join the runners then too, so a
  // failure is reported as one instead of std::terminate on a joinable thread.
  struct JoinOnExit {
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~JoinOnExit() {
      stop = true;
      for (auto& th : threads)
        if (th.joinable()) th.join();
    }
  } joinOnExit{stop, runners};
  // SUBGRAPH_TEST_PLUGIN_RUNNERS=0 runs the plugin rounds alone, to tell a
  // race from a plain bug.
  const char* runnersEnv = std::getenv("SUBGRAPH_TEST_PLUGIN_RUNNERS");
  const int numRunners = runnersEnv && *runnersEnv ? std::atoi(runnersEnv) : 4;
  for (int t = 0; t < numRunners; ++t)
    runners.emplace_back([&] {
      SessionOptions options;
      options.threads = 1;
      Session session(options);
      if (!session.load(parseGraphOrThrow(kMaxGraph)).isOk() || !session.compile().isOk()) {
        ++failures;
        ++started;
        return;
      }
      bool first = true;
      while (!stop.load()) {
        StatusOr<RunResult> out = session.run({{"x", x}});
        if (!out.isOk() || floats(out->outputs[0].tensor) != want) ++failures;
        ++runs;
        if (first) ++started;
        first = false;
      }
    });
  // On a loaded machine the ten plugin rounds can finish before a runner
  // has compiled its session, which tests nothing (and once failed CI on
  // `runs > 0`): wait until every runner has run once, so the rounds really
  // overlap running sessions.
  while (started.load() < numRunners) std::this_thread::yield();

  for (int round = 0; round < 10; ++round) {
    StatusOr<std::shared_ptr<plugins::LoadedPlugin> > plugin = plugins::loadPlugin(path);
    ASSERT_TRUE(plugin.isOk()) << plugin.status().message();
    std::unique_ptr<Graph> graph = parseGraphOrThrow(kMaxGraph);
    ASSERT_TRUE((*plugin)->runTransforms(*graph, SG_TRANSFORM_POST_PARTITION).isOk());
    SessionOptions options;
    options.threads = 2;
    options.backendInstances = {(*plugin)->createRuntimeBackend(2)};
    Session session(options);
    ASSERT_TRUE(session.load(std::move(graph)).isOk());
    Status compiled = session.compile();
    ASSERT_TRUE(compiled.isOk()) << compiled.message();
    StatusOr<RunResult> out = session.run({{"x", x}});
    ASSERT_TRUE(out.isOk()) << out.status().message();
    EXPECT_EQ(floats(out->outputs[0].tensor), want);
  }
  stop = true;
  for (auto& th : runners) th.join();
  EXPECT_EQ(failures.load(), 0);
  if (numRunners > 0) {
    EXPECT_GT(runs.load(), 0);
  }
#endif
}

}  // namespace
}  // namespace subgraph
