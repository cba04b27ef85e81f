//===- tests/plugins/device_plugin_test.cpp - A plugin's own device -------===//
//
// Plugin ABI 3 on examples/emulated_device (backend `emudev`): a device
// whose memory the host cannot read (a host read is a SIGSEGV) and whose
// queue is a thread of its own, so a missing copy or a missing wait fails
// loudly instead of passing by luck. Each test runs a tiny text graph
// partitioned for emudev, asserts the copies the session ran (by name and
// bytes) and where the host waited, and compares the outputs with the
// reference backend.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "subgraph/ir/shape_inference.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/plugin_abi.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/runtime/session.h"

namespace subgraph::plugins {
namespace {

namespace fs = std::filesystem;
using runtime::NamedTensor;
using runtime::RunResult;
using runtime::Session;
using runtime::SessionOptions;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const fs::path kPluginDir = SUBGRAPH_TEST_PLUGIN_DIR;
constexpr unsigned kSeed = 20261127;

BackendSelection select(const std::string& list) {
  SelectOptions options;
  options.searchPath = {kPluginDir};
  StatusOr<BackendSelection> s = selectBackends(list, options);
  if (!s.isOk()) throw Error(s.status());
  return std::move(s).value();
}

std::unique_ptr<Graph> parse(const char* text) {
  StatusOr<std::unique_ptr<Graph>> g = parseGraph(text);
  if (!g.isOk()) throw Error(g.status());
  // The device's patterns take static shapes only, as a loaded model has.
  throwIfError(inferShapes(*g.value()));
  return std::move(g).value();
}

std::vector<NamedTensor> randomInputs(const Graph& graph) {
  std::printf("seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<NamedTensor> inputs;
  for (const Value* in : graph.inputs()) {
    std::vector<int64_t> dims;
    int64_t n = 1;
    for (const Dim& d : *in->type().shape) {
      dims.push_back(d.size());
      n *= d.size();
    }
    std::vector<float> values(static_cast<size_t>(n));
    for (float& x : values) x = dist(rng);
    inputs.push_back({in->name(), Tensor::fromVector(DataType::kFloat32, dims, values)});
  }
  return inputs;
}

/// What a profiled run on the selection's backends did.
struct DeviceRun {
  std::vector<std::string> copies;  // "copy:<value>-><device>" in step order
  std::vector<size_t> copyBytes;
  std::vector<std::string> backends;  // the backend of every non-copy step
  std::vector<runtime::HostWait> waits;
  float maxError = 0;  // against the reference backend
};

DeviceRun runOnDevice(const std::string& list, const char* text,
                      const plugins::PluginRunOptions& runOptions = {}) {
  BackendSelection selection = select(list);
  std::unique_ptr<Graph> graph = parse(text);
  std::vector<NamedTensor> inputs = randomInputs(*graph);
  Session reference;
  EXPECT_TRUE(reference.load(*graph).isOk());
  EXPECT_TRUE(reference.compile().isOk());
  StatusOr<RunResult> want = reference.run(inputs);
  EXPECT_TRUE(want.isOk()) << want.status().message();

  SessionOptions options;
  options.threads = 1;
  plugins::PluginRunOptions withThreads = runOptions;
  withThreads.threads = 1;
  auto backends = selection.runtimeBackends(withThreads);
  EXPECT_TRUE(backends.isOk()) << backends.status().message();
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
  runtime::RunOptions ro;
  ro.profile = true;
  DeviceRun out;
  // Twice: the second run reuses the frame, whose device memory must not
  // be read by the host in between either.
  for (int run = 0; run < 2; ++run) {
    StatusOr<RunResult> got = session.run(inputs, ro);
    EXPECT_TRUE(got.isOk()) << got.status().message();
    if (!got.isOk() || !want.isOk()) return out;
    out = DeviceRun{};
    for (const runtime::StepTiming& t : got->steps) {
      if (t.step.isCopy) {
        out.copies.push_back(t.step.name);
        out.copyBytes.push_back(t.bytes);
      } else {
        out.backends.push_back(t.step.backend);
      }
    }
    out.waits = got->hostWaits;
    auto a = got->outputs[0].tensor.data<float>();
    auto b = want->outputs[0].tensor.data<float>();
    EXPECT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
      out.maxError = std::max(out.maxError, std::abs(a[i] - b[i]));
  }
  return out;
}

TEST(DevicePlugin, ListsItsDevice) {
  BackendSelection s = select("emudev");
  ASSERT_EQ(s.backends().size(), 1u);
  const PluginInfo& info = s.backends()[0].plugin->info();
  EXPECT_EQ(info.abiVersion, SG_PLUGIN_ABI_VERSION);  // built against this SDK
  EXPECT_THAT(info.device, ::testing::StartsWith("emu:0 (emulated"));
  EXPECT_THAT(info.device, ::testing::HasSubstr("a session may have more, emu:1 and on"));
  EXPECT_THAT(info.copies, ::testing::Contains("host plain -> emu plain (any type)"));
  EXPECT_THAT(info.copies, ::testing::Contains("emu plain -> host plain (any type)"));
}

//  %x -> [Conv -> Relu] -> [MaxPool] -> %y: two device regions in a row.
const char* kTwoRegions = R"(graph @g(%x: f32[1, 3, 8, 8]) {
  %w = const f32[4, 3, 3, 3] splat(0.25)
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} @conv
  %r = Relu(%c) @relu
  %y = MaxPool(%r) {kernel_shape = [2, 2], strides = [2, 2]} @pool
  return %y
})";

/// A value passed between two device regions stays on the device: the only
/// copies are the input going up and the output coming down, and the host
/// never waits in between (only at the end of the run).
TEST(DevicePlugin, ValuesStayOnTheDeviceBetweenRegions) {
  DeviceRun r = runOnDevice("emudev", kTwoRegions);
  EXPECT_THAT(r.backends, ElementsAre("emudev", "emudev"));
  EXPECT_THAT(r.copies, ElementsAre("copy:x->emu:0", "copy:y->cpu:0"));
  EXPECT_THAT(r.copyBytes, ElementsAre(3 * 8 * 8 * 4, 4 * 4 * 4 * 4));
  EXPECT_THAT(r.waits, IsEmpty());
  EXPECT_LT(r.maxError, 1e-5);
}

//  Conv (device) -> Sin (host) -> Conv (device) -> Sin (host).
const char* kAlternating = R"(graph @g(%x: f32[1, 2, 5, 5]) {
  %w = const f32[2, 2, 1, 1] splat(0.5)
  %a = Conv(%x, %w) @conv_a
  %s = Sin(%a) @sin_a
  %b = Conv(%s, %w) @conv_b
  %y = Sin(%b) @sin_b
  return %y
})";

/// Device regions alternating with host nodes: a value crosses exactly
/// where its producer and consumer are on different sides, and the host
/// waits exactly before each host node that reads a device value (not
/// before the device steps).
TEST(DevicePlugin, CopiesOnlyWhereAValueCrossesTheBoundary) {
  DeviceRun r = runOnDevice("emudev", kAlternating);
  EXPECT_THAT(r.backends, ElementsAre("emudev", "reference", "emudev", "reference"));
  EXPECT_THAT(r.copies,
              ElementsAre("copy:x->emu:0", "copy:a->cpu:0", "copy:s->emu:0", "copy:b->cpu:0"));
  ASSERT_EQ(r.waits.size(), 2u);
  EXPECT_EQ(r.waits[0].step, "sin_a");
  EXPECT_EQ(r.waits[0].waitedFor, "copy:a->cpu:0");
  EXPECT_EQ(r.waits[1].step, "sin_b");
  EXPECT_LT(r.maxError, 1e-5);
}

//  [Conv] on emudev -> Tanh (onednn, on the host) -> [Relu] on emudev.
const char* kTwoDevices = R"(graph @g(%x: f32[1, 2, 4, 4]) {
  %w = const f32[2, 2, 1, 1] splat(0.5)
  %a = Conv(%x, %w) @conv
  %s = Tanh(%a) @tanh
  %y = Relu(%s) @relu
  return %y
})";

/// Two devices in one session: the emulated device and oneDNN on the host.
TEST(DevicePlugin, TwoDevicesInOneSession) {
  if (!fs::exists(kPluginDir / "onednn.so")) GTEST_SKIP() << "built without oneDNN";
  DeviceRun r = runOnDevice("emudev,onednn", kTwoDevices);
  EXPECT_THAT(r.backends, ElementsAre("emudev", "onednn", "emudev"));
  EXPECT_THAT(r.copies,
              ElementsAre("copy:x->emu:0", "copy:a->cpu:0", "copy:s->emu:0", "copy:y->cpu:0"));
  EXPECT_LT(r.maxError, 1e-5);
}

/// Several devices of one plugin (ABI 6): with device_count=3 a session
/// may place its work on emu:2, and the copies and kernels use that device
/// (whose memory is its own: a pointer of emu:0 is not emu:2's). A device
/// past the session's count is refused in one line; a device of another
/// kind leaves the plugin on its first.
TEST(DevicePlugin, ASessionRunsOnTheDeviceItNames) {
  plugins::PluginRunOptions run;
  run.options["emudev.device_count"] = "3";
  run.device = "emu:2";
  DeviceRun r = runOnDevice("emudev", kTwoRegions, run);
  EXPECT_THAT(r.copies, ElementsAre("copy:x->emu:2", "copy:y->cpu:0"));
  EXPECT_LT(r.maxError, 1e-5);

  BackendSelection s = select("emudev");
  const auto& plugin = s.backends()[0].plugin;
  StatusOr<std::vector<const SgDeviceDesc*>> devices = plugin->devices(run);
  ASSERT_TRUE(devices.isOk()) << devices.status().message();
  ASSERT_EQ(devices->size(), 3u);
  for (int k = 0; k < 3; ++k) EXPECT_EQ((*devices)[k]->id, k);
  run.device = "emu:3";
  StatusOr<std::shared_ptr<runtime::Backend>> past = plugin->createRuntimeBackend(run);
  ASSERT_FALSE(past.isOk());
  EXPECT_THAT(past.status().message(),
              ::testing::HasSubstr("device 'emu:3': plugin 'emudev' gives this session 3 'emu' "
                                   "devices"));
  run.device = "cuda:1";
  StatusOr<std::shared_ptr<runtime::Backend>> other = plugin->createRuntimeBackend(run);
  ASSERT_TRUE(other.isOk()) << other.status().message();
  EXPECT_EQ((*other)->device().toString(), "emu:0");
}

//  [Conv] -> [GlobalAveragePool] -> Reshape -> [Gemm] -> Unsqueeze -> [Relu]
//  on emudev: the shape-only ops sit between device regions.
const char* kViews = R"(graph @g(%x: f32[1, 3, 8, 8]) {
  %w = const f32[4, 3, 3, 3] splat(0.25)
  %b = const f32[4, 5] splat(0.5)
  %shape = const i64[2] [1, 4]
  %axes = const i64[1] [0]
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} @conv
  %p = GlobalAveragePool(%c) @pool
  %f = Reshape(%p, %shape) @reshape
  %g = Gemm(%f, %b) @gemm
  %u = Unsqueeze(%g, %axes) @unsqueeze
  %y = Relu(%u) @relu
  return %y
})";

/// Reshape and Unsqueeze of device values are views on the device: no
/// copy down and up around them, no host wait, and the regions after them
/// read the same memory with the new dims.
TEST(DevicePlugin, ShapeOnlyOpsAreViewsOnTheDevice) {
  DeviceRun r = runOnDevice("emudev", kViews);
  EXPECT_THAT(r.backends, ElementsAre("emudev", "emudev", "emudev", "emudev"));
  EXPECT_THAT(r.copies, ElementsAre("copy:x->emu:0", "copy:y->cpu:0"));
  EXPECT_THAT(r.waits, IsEmpty());
  EXPECT_LT(r.maxError, 1e-5);
}

//  [Conv] on emudev -> Reshape -> Sin (host): the view ends at a host reader.
const char* kViewToHost = R"(graph @g(%x: f32[1, 2, 3, 3]) {
  %w = const f32[2, 2, 1, 1] splat(0.5)
  %c = Conv(%x, %w) @conv
  %shape = const i64[2] [1, 18]
  %f = Reshape(%c, %shape) @flatten
  %y = Sin(%f) @sin
  return %y
})";

/// A view read on the host comes down once, in its new dims, right
/// before the host op: the Reshape itself never waits or copies.
TEST(DevicePlugin, AViewReadOnTheHostComesDownOnce) {
  DeviceRun r = runOnDevice("emudev", kViewToHost);
  EXPECT_THAT(r.backends, ElementsAre("emudev", "reference"));
  EXPECT_THAT(r.copies, ElementsAre("copy:x->emu:0", "copy:f->cpu:0"));
  EXPECT_THAT(r.copyBytes, ElementsAre(2 * 3 * 3 * 4, 18 * 4));
  ASSERT_EQ(r.waits.size(), 1u);
  EXPECT_EQ(r.waits[0].step, "sin");
  EXPECT_LT(r.maxError, 1e-5);
}
/// What unprofiled requests did: the steps each replayed from captured
/// work, the host waits, and the largest error against the reference
/// backend over all of them (each request has inputs of its own).
struct ReplayRuns {
  std::vector<size_t> replayed;
  std::vector<size_t> waits;
  float maxError = 0;
};

ReplayRuns runRequests(const char* text, int requests, bool capture = true, bool profile = false) {
  BackendSelection selection = select("emudev");
  std::unique_ptr<Graph> graph = parse(text);
  Session reference;
  EXPECT_TRUE(reference.load(*graph).isOk());
  EXPECT_TRUE(reference.compile().isOk());
  SessionOptions options;
  options.threads = 1;
  options.captureDeviceWork = capture;
  options.backendInstances = selection.runtimeBackends(1).value();
  Session session(options);
  EXPECT_TRUE(session.load(graph->clone()).isOk());
  EXPECT_TRUE(session
                  .partition([&](Graph& g) -> Status {
                    auto report = selection.partition(g);
                    return report.isOk() ? Status::ok() : report.status();
                  })
                  .isOk());
  EXPECT_TRUE(session.compile().isOk());
  ReplayRuns out;
  std::mt19937 rng(kSeed);
  std::printf("seed %u\n", kSeed);
  std::uniform_real_distribution<float> dist(-1, 1);
  runtime::RunOptions ro;
  ro.profile = profile;
  for (int r = 0; r < requests; ++r) {
    const Value* in = graph->inputs()[0];
    std::vector<int64_t> dims;
    for (const Dim& d : *in->type().shape) dims.push_back(d.size());
    std::vector<float> values(
        static_cast<size_t>(runtime::TensorDesc{DataType::kFloat32, dims, nullptr}.numElements()));
    for (float& v : values) v = dist(rng);
    std::vector<NamedTensor> inputs = {
        {in->name(), Tensor::fromVector(DataType::kFloat32, dims, values)}};
    StatusOr<RunResult> got = session.run(inputs, ro);
    StatusOr<RunResult> want = reference.run(inputs);
    EXPECT_TRUE(got.isOk()) << got.status().message();
    if (!got.isOk() || !want.isOk()) return out;
    out.replayed.push_back(got->replayedSteps);
    out.waits.push_back(got->hostWaits.size());
    auto a = got->outputs[0].tensor.data<float>();
    auto b = want->outputs[0].tensor.data<float>();
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
      out.maxError = std::max(out.maxError, std::abs(a[i] - b[i]));
  }
  return out;
}

/// A run whose device steps touch only device memory is captured once and
/// launched for every request: the two regions of kTwoRegions are replayed
/// each time (the copies up and down read and write the request's own
/// host buffers, so they stay outside), and every request's answer is its
/// own, not the first one's.
TEST(DevicePlugin, DeviceRunsAreCapturedAndReplayed) {
  ReplayRuns r = runRequests(kTwoRegions, 4);
  EXPECT_THAT(r.replayed, ElementsAre(2u, 2u, 2u, 2u));
  EXPECT_THAT(r.waits, ElementsAre(0u, 0u, 0u, 0u));
  EXPECT_LT(r.maxError, 1e-5);
}

//  [Conv] -> [MaxPool] -> Sin (host) -> [Conv] -> [MaxPool]: a host step
//  splits the device steps into two captured runs.
const char* kSplitByHost = R"(graph @g(%x: f32[1, 2, 8, 8]) {
  %w = const f32[2, 2, 1, 1] splat(0.5)
  %a = Conv(%x, %w) @conv_a
  %p = MaxPool(%a) {kernel_shape = [2, 2], strides = [2, 2]} @pool_a
  %s = Sin(%p) @sin
  %b = Conv(%s, %w) @conv_b
  %y = MaxPool(%b) {kernel_shape = [2, 2], strides = [2, 2]} @pool_b
  return %y
})";

/// A host step in the middle splits the run into two captured runs, and
/// the host waits once, for the first launch, before the host step.
TEST(DevicePlugin, AHostStepSplitsTheCapturedRuns) {
  ReplayRuns r = runRequests(kSplitByHost, 3);
  EXPECT_THAT(r.replayed, ElementsAre(4u, 4u, 4u));
  EXPECT_LT(r.maxError, 1e-5);
}

/// Negative: a profiled request, or a session that turns capture off,
/// submits every step itself, with the same answers.
TEST(DevicePlugin, ProfiledOrUncapturedRunsReplayNothing) {
  ReplayRuns profiled = runRequests(kTwoRegions, 2, true, /*profile=*/true);
  EXPECT_THAT(profiled.replayed, ElementsAre(0u, 0u));
  EXPECT_LT(profiled.maxError, 1e-5);
  ReplayRuns off = runRequests(kTwoRegions, 2, /*capture=*/false);
  EXPECT_THAT(off.replayed, ElementsAre(0u, 0u));
  EXPECT_LT(off.maxError, 1e-5);
}

}  // namespace
}  // namespace subgraph::plugins
