//===- tests/plugins/plugin_behavior_test.cpp - Plugins at work -----------===//
//
// Loaded plugins doing their jobs through the partitioner and the runtime:
// the twin plugins (same symbol names, each must use its own; the first
// listed backend wins a contested node), example_convbn (MXNet's seed
// example: Conv -> one BatchNormalization, default executor) and max_splat
// (a post-partition transform making a backend node with its own op
// definition and kernel).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "subgraph/ir/text_format.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/runtime/session.h"

namespace subgraph::plugins {
namespace {

namespace fs = std::filesystem;
using runtime::NamedTensor;
using runtime::Session;
using runtime::SessionOptions;

const fs::path kCorpus = SUBGRAPH_TEST_CORPUS_DIR;
const fs::path kPluginDir = SUBGRAPH_TEST_PLUGIN_DIR;

BackendSelection select(const std::string& list) {
  SelectOptions options;
  options.searchPath = {kCorpus, kPluginDir};
  StatusOr<BackendSelection> s = selectBackends(list, options);
  if (!s.isOk()) throw Error(s.status());
  return std::move(s).value();
}

std::vector<float> floats(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

/// Partitions `graph` for `selection` in a session with its runtime
/// backends and runs it on `inputs`; returns output 0.
std::vector<float> runWith(const BackendSelection& selection, std::unique_ptr<Graph> graph,
                           const std::vector<NamedTensor>& inputs) {
  SessionOptions options;
  options.threads = 1;
  auto backends = selection.runtimeBackends(1);
  EXPECT_TRUE(backends.isOk());
  options.backendInstances = std::move(backends).value();
  Session session(options);
  EXPECT_TRUE(session.load(std::move(graph)).isOk());
  Status st = session.partition([&](Graph& g) -> Status {
    auto report = selection.partition(g);
    return report.isOk() ? Status::ok() : report.status();
  });
  EXPECT_TRUE(st.isOk()) << st.message();
  st = session.compile();
  EXPECT_TRUE(st.isOk()) << st.message();
  StatusOr<runtime::RunResult> out = session.run(inputs);
  EXPECT_TRUE(out.isOk()) << out.status().message();
  return out.isOk() ? floats(out->outputs[0].tensor) : std::vector<float>{};
}

//   %x [4] -> Relu -> %y
constexpr const char* kRelu = R"(
  graph @g(%x: f32[4]) {
    %y: f32[4] = Relu(%x) @relu
    return %y
  })";

/// twin_a and twin_b export the same symbols; each still reports and
/// computes with its own (RTLD_LOCAL), even loaded side by side.
TEST(PluginBehaviorTest, TwinsWithTheSameSymbolsDoNotInterfere) {
  BackendSelection both = select("twin_a,twin_b");
  ASSERT_EQ(both.backends().size(), 2u);
  EXPECT_EQ(both.backends()[0].plugin->info().description, "twin_a");
  EXPECT_EQ(both.backends()[1].plugin->info().description, "twin_b");
  Tensor x = Tensor::fromVector<float>(DataType::kFloat32, {4}, {-1, 0, 1, 2});
  EXPECT_EQ(runWith(select("twin_a"), parseGraphOrThrow(kRelu), {{"x", x}}),
            std::vector<float>(4, 1.0f));
  EXPECT_EQ(runWith(select("twin_b"), parseGraphOrThrow(kRelu), {{"x", x}}),
            std::vector<float>(4, 2.0f));
}

/// Both twins claim the Relu; the backend listed first gets it, and its
/// kernel runs it.
TEST(PluginBehaviorTest, FirstListedBackendWinsAContestedNode) {
  for (const auto& [list, winner, value] :
       {std::tuple{"twin_a,twin_b", "twin_a", 1.0f}, std::tuple{"twin_b,twin_a", "twin_b", 2.0f}}) {
    SCOPED_TRACE(list);
    BackendSelection s = select(list);
    std::unique_ptr<Graph> g = parseGraphOrThrow(kRelu);
    StatusOr<partition::PartitionReport> report = s.partition(*g);
    ASSERT_TRUE(report.isOk()) << report.status().message();
    ASSERT_EQ(report->regions.size(), 1u);
    EXPECT_EQ(report->regions[0].backend, winner);
    Tensor x = Tensor::fromVector<float>(DataType::kFloat32, {4}, {-1, 0, 1, 2});
    EXPECT_EQ(runWith(s, parseGraphOrThrow(kRelu), {{"x", x}}), std::vector<float>(4, value));
  }
}

std::unique_ptr<Graph> resnetBlock() {
  std::ifstream in(fs::path(SUBGRAPH_SOURCE_DIR) / "tests/data/graphs/resnet_block.sg");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  return parseGraphOrThrow(text);
}

/// ResNet-50's bottleneck block has four Conv -> BatchNormalization pairs;
/// example_convbn fuses exactly those, into op conv_bn of domain
/// subgraph.example_convbn, and the partitioned block (default executor)
/// computes what the unpartitioned one does.
TEST(PluginBehaviorTest, ExampleConvBnFusesEachConvWithItsBatchNorm) {
  BackendSelection s = select("example_convbn");
  std::unique_ptr<Graph> g = resnetBlock();
  StatusOr<partition::PartitionReport> report = s.partition(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  ASSERT_EQ(report->regions.size(), 4u);
  for (const partition::RegionReport& r : report->regions) {
    ASSERT_EQ(r.nodes.size(), 2u);
    EXPECT_EQ(r.property, "conv_bn");
  }
  size_t fused = 0;
  for (const Node* n : g->nodes())
    fused += n->qualifiedOpType() == "subgraph.example_convbn.conv_bn";
  EXPECT_EQ(fused, 4u);

  std::vector<float> in(1 * 256 * 56 * 56);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;
  Tensor x = Tensor::fromVector<float>(DataType::kFloat32, {1, 256, 56, 56}, in);
  Session reference;
  ASSERT_TRUE(reference.load(resnetBlock()).isOk());
  ASSERT_TRUE(reference.compile().isOk());
  std::vector<float> want = floats(reference.run({{"x", x}}).value().outputs[0].tensor);
  EXPECT_EQ(runWith(s, resnetBlock(), {{"x", x}}), want);
}

//   %x [1, 2, 4, 4] -> Conv(%w) -> Relu -> %y      (no BatchNormalization)
constexpr const char* kConvRelu = R"(
  graph @g(%x: f32[1, 2, 4, 4]) {
    %w = const f32[2, 2, 1, 1] splat(0.5)
    %c: f32[1, 2, 4, 4] = Conv(%x, %w) {kernel_shape = [1, 1]} @conv
    %y: f32[1, 2, 4, 4] = Relu(%c) @relu
    return %y
  })";

/// A Conv not followed by a BatchNormalization is dropped by Filter: no
/// region, and the report says the Conv was filtered.
TEST(PluginBehaviorTest, ExampleConvBnDoesNotFuseAConvWithoutBatchNorm) {
  BackendSelection s = select("example_convbn");
  std::unique_ptr<Graph> g = parseGraphOrThrow(kConvRelu);
  StatusOr<partition::PartitionReport> report = s.partition(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  EXPECT_TRUE(report->regions.empty());
  EXPECT_EQ(g->numNodes(), 2u);
}

//   %x [2, 3] -> Max(%x, splat 0.25) -> %y
constexpr const char* kMaxSplat = R"(
  graph @g(%x: f32[2, 3]) {
    %c = const f32[1, 3] splat(0.25)
    %y: f32[2, 3] = Max(%x, %c) @max
    return %y
  })";

/// max_splat's post-partition transform turns Max(x, splat) into its own
/// node, defined by the plugin, and the plugin's kernel runs it.
TEST(PluginBehaviorTest, MaxSplatTransformMakesABackendNodeThatItsKernelRuns) {
  BackendSelection s = select("max_splat");
  std::unique_ptr<Graph> g = parseGraphOrThrow(kMaxSplat);
  ASSERT_TRUE(s.partition(*g).isOk());
  ASSERT_EQ(g->numNodes(), 1u);
  const Node* n = *g->nodes().begin();
  EXPECT_EQ(n->qualifiedOpType(), "example.max_splat.MaxSplat");
  EXPECT_FLOAT_EQ(n->getFloat("splat"), 0.25f);
  EXPECT_TRUE(g->initializers().empty()) << "the splat constant should be gone";

  Tensor x = Tensor::fromVector<float>(DataType::kFloat32, {2, 3}, {-1, 0, 0.5f, 0.2f, 3, -2});
  EXPECT_EQ(runWith(s, parseGraphOrThrow(kMaxSplat), {{"x", x}}),
            (std::vector<float>{0.25f, 0.25f, 0.5f, 0.25f, 3, 0.25f}));
}

/// A Max with a constant whose elements differ is not a splat: untouched.
TEST(PluginBehaviorTest, MaxSplatLeavesAMaxWithANonSplatConstant) {
  BackendSelection s = select("max_splat");
  std::unique_ptr<Graph> g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2, 3]) {
      %c = const f32[3] [0.25, 0.5, 1.0]
      %y: f32[2, 3] = Max(%x, %c) @max
      return %y
    })");
  ASSERT_TRUE(s.partition(*g).isOk());
  ASSERT_EQ(g->numNodes(), 1u);
  EXPECT_EQ((*g->nodes().begin())->opType(), "Max");
}

}  // namespace
}  // namespace subgraph::plugins
