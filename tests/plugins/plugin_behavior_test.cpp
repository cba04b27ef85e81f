//===- tests/plugins/plugin_behavior_test.cpp - Plugins at work -----------===//
//
// Loaded plugins doing their jobs through the partitioner and the runtime:
// the twin plugins (same symbol names, each must use its own; the first
// listed backend wins a contested node), example_convbn (MXNet's seed
// example: Conv -> one BatchNormalization, default executor) and max_splat
// (a post-partition transform making a backend node with its own op
// definition and kernel), blocked_layout (a layout of the plugin's own,
// kept between its regions: plugin ABI 2), and plugins on the raw C ABI
// (a version-1 plugin loading unchanged; a kernel naming a layout its
// plugin does not have).
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <utility>
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
const fs::path kRawAbi = SUBGRAPH_TEST_RAW_ABI_DIR;

BackendSelection select(const std::string& list) {
  SelectOptions options;
  options.searchPath = {kCorpus, kPluginDir, kRawAbi};
  StatusOr<BackendSelection> s = selectBackends(list, options);
  if (!s.isOk()) throw Error(s.status());
  return std::move(s).value();
}

std::vector<float> floats(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

/// Partitions `graph` for `selection` in a session with its runtime
/// backends and runs it on `inputs`; returns output 0. The names of the
/// copy steps the session ran go to `copies`, when given.
std::vector<float> runWith(const BackendSelection& selection, std::unique_ptr<Graph> graph,
                           const std::vector<NamedTensor>& inputs,
                           std::vector<std::string>* copies = nullptr) {
  SessionOptions options;
  options.threads = 1;
  options.callbacks.onExecuteBegin = [copies](const runtime::StepInfo& step) {
    if (copies && step.isCopy) copies->push_back(step.name);
    return true;
  };
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
/// region, and the report says the Conv was filtered, with the reason the
/// plugin's FilterReason gives (through the ABI's filter_reason slot).
TEST(PluginBehaviorTest, ExampleConvBnDoesNotFuseAConvWithoutBatchNorm) {
  BackendSelection s = select("example_convbn");
  std::unique_ptr<Graph> g = parseGraphOrThrow(kConvRelu);
  StatusOr<partition::PartitionReport> report = s.partition(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  EXPECT_TRUE(report->regions.empty());
  EXPECT_EQ(g->numNodes(), 2u);
  std::string reason;
  for (const partition::RejectedNode& r : report->rejected)
    if (r.node == "conv") reason = r.reason;
  EXPECT_THAT(reason, ::testing::HasSubstr("dropped by Filter of example_convbn/conv_bn: no "
                                           "BatchNormalization follows the Conv"));
}

//   %x -> Sigmoid -> Relu -> Sigmoid -> Add(%x) -> Relu -> %y
constexpr const char* kSeeds = R"(
  graph @g(%x: f32[4]) {
    %a: f32[4] = Sigmoid(%x) @s0
    %b: f32[4] = Relu(%a) @r1
    %c: f32[4] = Sigmoid(%b) @s1
    %d: f32[4] = Add(%c, %x) @add
    %y: f32[4] = Relu(%d) @r2
    return %y
  })";

/// The regions of `report` as their node names, and the rejected nodes
/// with their reasons.
std::pair<std::vector<std::vector<std::string>>, std::vector<std::string>> regionsAndReasons(
    const partition::PartitionReport& report) {
  std::vector<std::vector<std::string>> regions;
  for (const partition::RegionReport& r : report.regions) regions.push_back(r.nodes);
  std::vector<std::string> reasons;
  for (const partition::RejectedNode& r : report.rejected)
    reasons.push_back(r.node + ": " + r.reason);
  return {regions, reasons};
}

/// A selector that declares Relu as its seed op (seed_op_types) is offered
/// only the Relus: its Select throws on any other node, which would fail
/// the partition. Growth still reaches the Sigmoid after a Relu.
TEST(PluginBehaviorTest, ASelectorIsOfferedOnlyTheSeedOpsItDeclares) {
  BackendSelection s = select("seeds");
  std::unique_ptr<Graph> g = parseGraphOrThrow(kSeeds);
  StatusOr<partition::PartitionReport> report = s.partition(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  EXPECT_EQ(regionsAndReasons(*report).first,
            (std::vector<std::vector<std::string>>{{"r1", "s1"}, {"r2"}}));
  EXPECT_EQ(g->numNodes(), 4u);  // s0, the two fused nodes, add
}

/// Declaring the seeds changes no decision: the undeclared selector, which
/// is offered every node and says a reasonless no to all but the Relus,
/// forms the same regions, and the report gives every node left out the
/// same reason.
TEST(PluginBehaviorTest, DeclaredSeedsFormTheRegionsOfAnUndeclaredSelector) {
  std::unique_ptr<Graph> seeded = parseGraphOrThrow(kSeeds);
  std::unique_ptr<Graph> unseeded = parseGraphOrThrow(kSeeds);
  StatusOr<partition::PartitionReport> a = select("seeds").partition(*seeded);
  StatusOr<partition::PartitionReport> b = select("no_seeds").partition(*unseeded);
  ASSERT_TRUE(a.isOk()) << a.status().message();
  ASSERT_TRUE(b.isOk()) << b.status().message();
  auto [regions, reasons] = regionsAndReasons(*b);
  EXPECT_EQ(regions.size(), 2u);
  EXPECT_EQ(reasons.size(), 2u);  // s0 and add
  EXPECT_EQ(regionsAndReasons(*a), regionsAndReasons(*b));
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

/// The reference result of output 0 of `text` on `inputs`.
std::vector<float> referenceRun(const char* text, const std::vector<NamedTensor>& inputs) {
  Session reference;
  EXPECT_TRUE(reference.load(parseGraphOrThrow(text)).isOk());
  EXPECT_TRUE(reference.compile().isOk());
  StatusOr<runtime::RunResult> out = reference.run(inputs);
  EXPECT_TRUE(out.isOk()) << out.status().message();
  return out.isOk() ? floats(out->outputs[0].tensor) : std::vector<float>{};
}

/// A float32 tensor of `dims` with values in [-1, 1) and some exact zeros.
Tensor ramp(std::vector<int64_t> dims, int salt) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] =
        static_cast<float>(static_cast<int>((i * 7 + static_cast<size_t>(salt)) % 23) - 11) / 11.0f;
  return Tensor::fromVector<float>(DataType::kFloat32, dims, v);
}

void expectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f) << "element " << i;
}

//   %x --> Relu --> Add --> Relu --> GlobalAveragePool --> %p
//                    ^
//   %y --------------+
// Six channels: the second block of four is half padding.
constexpr const char* kBlockedChain = R"(
  graph @g(%x: f32[1, 6, 4, 4], %y: f32[1, 6, 4, 4]) {
    %r: f32[1, 6, 4, 4] = Relu(%x) @relu1
    %a: f32[1, 6, 4, 4] = Add(%r, %y) @add
    %b: f32[1, 6, 4, 4] = Relu(%a) @relu2
    %p: f32[1, 6, 1, 1] = GlobalAveragePool(%b) @gap
    return %p
  })";

/// blocked_layout fuses each op into a region of its own, and the values
/// between the regions stay in its nc4hw layout: the session copies only
/// x and y into it, and nothing between regions or out of it
/// (GlobalAveragePool writes plain). The result, with the padding and the
/// pool's scratch memory, is the reference's.
TEST(PluginBehaviorTest, BlockedLayoutKeepsValuesInItsLayoutBetweenRegions) {
  BackendSelection s = select("blocked_layout");
  std::unique_ptr<Graph> g = parseGraphOrThrow(kBlockedChain);
  StatusOr<partition::PartitionReport> report = s.partition(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  ASSERT_EQ(report->regions.size(), 4u);

  std::vector<NamedTensor> inputs = {{"x", ramp({1, 6, 4, 4}, 1)}, {"y", ramp({1, 6, 4, 4}, 5)}};
  std::vector<std::string> copies;
  expectNear(runWith(s, parseGraphOrThrow(kBlockedChain), inputs, &copies),
             referenceRun(kBlockedChain, inputs));
  EXPECT_EQ(copies, (std::vector<std::string>{"copy:x->cpu:0@blocked_layout.nc4hw",
                                              "copy:y->cpu:0@blocked_layout.nc4hw"}));
}

//   %x --> Relu --> %r (graph output) --> Sigmoid (reference) --> Relu --> %t
constexpr const char* kBlockedLeaves = R"(
  graph @g(%x: f32[2, 5, 3, 3]) {
    %r: f32[2, 5, 3, 3] = Relu(%x) @relu1
    %s: f32[2, 5, 3, 3] = Sigmoid(%r) @sig
    %t: f32[2, 5, 3, 3] = Relu(%s) @relu2
    return %t, %r
  })";

/// Where a blocked value leaves the plugin (for a reference kernel and as a
/// graph output) it is copied back to plain once, shared by both readers;
/// the Sigmoid's plain output is copied in again for the second Relu.
TEST(PluginBehaviorTest, BlockedLayoutCopiesAValueOutOnceWhereItLeavesThePlugin) {
  BackendSelection s = select("blocked_layout");
  std::vector<NamedTensor> inputs = {{"x", ramp({2, 5, 3, 3}, 3)}};
  std::vector<std::string> copies;
  expectNear(runWith(s, parseGraphOrThrow(kBlockedLeaves), inputs, &copies),
             referenceRun(kBlockedLeaves, inputs));
  std::sort(copies.begin(), copies.end());
  EXPECT_EQ(copies,
            (std::vector<std::string>{"copy:r->cpu:0", "copy:s->cpu:0@blocked_layout.nc4hw",
                                      "copy:t->cpu:0", "copy:x->cpu:0@blocked_layout.nc4hw"}));
}

// Partitions the one-node graph `text` for blocked_layout and expects no
// region: the node is left out with a reason containing `reason`.
void expectBlockedLayoutLeavesOut(const char* text, const std::string& reason) {
  BackendSelection s = select("blocked_layout");
  std::unique_ptr<Graph> g = parseGraphOrThrow(text);
  StatusOr<partition::PartitionReport> report = s.partition(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  EXPECT_TRUE(report->regions.empty());
  ASSERT_EQ(report->rejected.size(), 1u);
  EXPECT_NE(report->rejected[0].reason.find(reason), std::string::npos)
      << report->rejected[0].reason;
}

/// The Add property must not take a broadcasting Add (its kernel adds the
/// two padded buffers element by element): no region, and the report says
/// why.
TEST(PluginBehaviorTest, BlockedLayoutDoesNotFuseABroadcastingAdd) {
  expectBlockedLayoutLeavesOut(R"(
    graph @g(%x: f32[1, 6, 4, 4], %y: f32[1, 6, 1, 1]) {
      %a: f32[1, 6, 4, 4] = Add(%x, %y) @add
      return %a
    })",
                               "the Add broadcasts");
}

//   %x --> Relu --> %r --> Add(%r, %r) --> %y
constexpr const char* kBlockedDouble = R"(
  graph @g(%x: f32[1, 5, 2, 2]) {
    %r: f32[1, 5, 2, 2] = Relu(%x) @relu
    %y: f32[1, 5, 2, 2] = Add(%r, %r) @add
    return %y
  })";

/// `r + r`: the partitioner merges the Add region's duplicated input, so
/// the region has one input read as both operands; the kernel finds which
/// region input each operand is from the body.
TEST(PluginBehaviorTest, BlockedLayoutAddsAValueToItself) {
  BackendSelection s = select("blocked_layout");
  std::unique_ptr<Graph> g = parseGraphOrThrow(kBlockedDouble);
  StatusOr<partition::PartitionReport> report = s.partition(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  ASSERT_EQ(report->regions.size(), 2u);
  std::vector<NamedTensor> inputs = {{"x", ramp({1, 5, 2, 2}, 4)}};
  expectNear(runWith(s, parseGraphOrThrow(kBlockedDouble), inputs),
             referenceRun(kBlockedDouble, inputs));
}

/// An Add with a constant operand is not the Add property's: the constant
/// would stay in the region's body, which its kernel does not read.
TEST(PluginBehaviorTest, BlockedLayoutDoesNotFuseAnAddOfAConstant) {
  expectBlockedLayoutLeavesOut(R"(
    graph @g(%x: f32[1, 4, 2, 2]) {
      %c = const f32[1, 4, 2, 2] splat(0.5)
      %a: f32[1, 4, 2, 2] = Add(%x, %c) @add
      return %a
    })",
                               "an operand is a constant");
}

/// A plugin built against version 1 of the ABI, whose tables end where
/// version 1's did (garbage follows), still loads, partitions and runs on
/// a version-2 host: the host reads no slot the plugin does not have.
TEST(PluginBehaviorTest, AVersionOnePluginLoadsAndRunsUnchanged) {
  BackendSelection s = select("v1_compat");
  std::unique_ptr<Graph> g = parseGraphOrThrow(kRelu);
  StatusOr<partition::PartitionReport> report = s.partition(*g);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  ASSERT_EQ(report->regions.size(), 1u);
  Tensor x = Tensor::fromVector<float>(DataType::kFloat32, {4}, {-1, 0, 1, 2});
  EXPECT_EQ(runWith(s, parseGraphOrThrow(kRelu), {{"x", x}}), (std::vector<float>{0, 0, 1, 2}));
}

/// A kernel asking for a layout that is not in its plugin's list: the
/// session refuses to compile, naming the kernel's input, instead of
/// sizing buffers through an unknown pointer.
TEST(PluginBehaviorTest, RefusesAKernelNamingALayoutItsPluginDoesNotHave) {
  BackendSelection s = select("foreign_layout");
  SessionOptions options;
  options.threads = 1;
  options.backendInstances = s.runtimeBackends(1).value();
  Session session(options);
  ASSERT_TRUE(session.load(parseGraphOrThrow(kRelu)).isOk());
  ASSERT_TRUE(session
                  .partition([&](Graph& g) -> Status {
                    auto report = s.partition(g);
                    return report.isOk() ? Status::ok() : report.status();
                  })
                  .isOk());
  Status st = session.compile();
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("input 0's layout is not one of the plugin's layouts"),
            std::string::npos)
      << st.message();
}

//   %x --+
//        +--> Add (blocked_layout: nc4hw) --> Relu (layout_relay: listed) --> %o
//   %y --+
constexpr const char* kTwoLayouts = R"(
  graph @g(%x: f32[1, 6, 2, 2], %y: f32[1, 6, 2, 2]) {
    %a: f32[1, 6, 2, 2] = Add(%x, %y) @add
    %o: f32[1, 6, 2, 2] = Relu(%a) @relu
    return %o
  })";

/// A value going from one plugin's layout to another's, with no copy
/// between the two, is converted through plain row-major, in one copy
/// step: nc4hw -> plain by blocked_layout's copy, plain -> listed by
/// layout_relay's.
TEST(PluginBehaviorTest, CopiesBetweenTwoPluginsLayoutsThroughPlain) {
  BackendSelection s = select("layout_relay,blocked_layout");
  std::vector<NamedTensor> inputs = {{"x", ramp({1, 6, 2, 2}, 2)}, {"y", ramp({1, 6, 2, 2}, 9)}};
  std::vector<std::string> copies;
  expectNear(runWith(s, parseGraphOrThrow(kTwoLayouts), inputs, &copies),
             referenceRun(kTwoLayouts, inputs));
  std::sort(copies.begin(), copies.end());
  EXPECT_EQ(copies, (std::vector<std::string>{"copy:a->cpu:0@layout_relay.listed", "copy:o->cpu:0",
                                              "copy:x->cpu:0@blocked_layout.nc4hw",
                                              "copy:y->cpu:0@blocked_layout.nc4hw"}));
}

}  // namespace
}  // namespace subgraph::plugins
