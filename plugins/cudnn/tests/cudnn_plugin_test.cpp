//===- plugins/cudnn/tests/cudnn_plugin_test.cpp - The cuDNN backend plugin ===//
//
// What can be checked without a GPU, and the GPU checks that skip without
// one:
//  * the plugin refuses to load with one "no CUDA device" line
//    (SG_UNAVAILABLE), which the loader reports as "unavailable";
//  * selection and partitioning through the loaded plugin in
//    selection-only mode (SUBGRAPH_CUDNN_SELECTION_ONLY=1): regions,
//    properties, and the reasons of rejected regions;
//  * region plans built from text graphs (BatchNormalization folded,
//    tensors, operations), through the host's own C table;
//  * host-side helpers: folding, NCHW<->NHWC, allocator rounding;
//  * with a GPU only: a fused Conv+BN+Relu run matching the reference.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "device.h"
#include "host_api.h"
#include "layout.h"
#include "region_plan.h"
#include "selection.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/runtime/session.h"

namespace subgraph::cudnn {
namespace {

namespace fs = std::filesystem;
using partition::PartitionReport;

const fs::path kPlugin = fs::path(SUBGRAPH_TEST_PLUGIN_DIR) / "cudnn.so";

/// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

bool haveDevice() { return probeDevice().empty(); }

/// The plugin loaded for selection (a GPU is not needed, nor used).
plugins::BackendSelection selectCudnn() {
  ScopedEnv env("SUBGRAPH_CUDNN_SELECTION_ONLY", "1");
  plugins::SelectOptions options;
  options.searchPath = {SUBGRAPH_TEST_PLUGIN_DIR};
  StatusOr<plugins::BackendSelection> s = plugins::selectBackends("cudnn", options);
  if (!s.isOk()) throw Error(s.status());
  return std::move(s).value();
}

PartitionReport partitionText(const char* text,
                              const std::map<std::string, std::string>& options = {}) {
  std::unique_ptr<Graph> g = parseGraphOrThrow(text);
  plugins::BackendSelection selection = selectCudnn();
  plugins::PluginRunOptions run;
  run.options = options;
  if (Status st = selection.setRunOptions(run); !st.isOk()) throw Error(st);
  StatusOr<PartitionReport> report = selection.partition(*g);
  if (!report.isOk()) throw Error(report.status());
  return std::move(report).value();
}

/// The reason recorded for node `name`, or "".
std::string reasonFor(const PartitionReport& r, const std::string& name) {
  for (const partition::RejectedNode& n : r.rejected)
    if (n.node.find(name) != std::string::npos) return n.reason;
  return {};
}

/// A region plan of a whole text graph, read through the host's C table the
/// way the plugin reads a region body.
PlanResult planText(const char* text) {
  std::unique_ptr<Graph> g = parseGraphOrThrow(text);
  return buildRegionPlan(sdk::GraphView(plugins::host::hostApi(), plugins::host::toC(g.get())));
}

// ---------------------------------------------------------------------------
// No device

/// probeDevice() is empty with a GPU, or one line naming the cause.
TEST(CudnnDevice, ProbeIsEmptyOrOneNoDeviceLine) {
  std::string why = probeDevice();
  if (why.empty()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(why.rfind("no CUDA device", 0), 0u) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
}

/// Without a GPU the loader refuses the plugin as unavailable, with the
/// plugin's one line; it is not reported as a broken plugin.
TEST(CudnnDevice, LoadingWithoutAGpuIsOneUnavailableLine) {
  if (haveDevice()) GTEST_SKIP() << "a CUDA device is present: the plugin loads";
  unsetenv("SUBGRAPH_CUDNN_SELECTION_ONLY");
  StatusOr<std::shared_ptr<plugins::LoadedPlugin>> loaded = plugins::loadPlugin(kPlugin);
  ASSERT_FALSE(loaded.isOk());
  const std::string& msg = loaded.status().message();
  EXPECT_EQ(loaded.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(msg.find("unavailable on this machine: cudnn: no CUDA device"), std::string::npos)
      << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  std::vector<plugins::FoundPlugin> found = plugins::discoverPlugins({SUBGRAPH_TEST_PLUGIN_DIR});
  auto it = std::find_if(found.begin(), found.end(),
                         [](const plugins::FoundPlugin& f) { return f.path == kPlugin; });
  ASSERT_NE(it, found.end());
  EXPECT_TRUE(it->unavailable);
}

// ---------------------------------------------------------------------------
// Selection (selection-only mode, no GPU needed)

std::string resnetBlockText() {
  std::ifstream in(fs::path(SUBGRAPH_SOURCE_DIR) / "tests/data/graphs/resnet_block.sg");
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

/// ResNet-50's bottleneck block (tests/data/graphs/resnet_block.sg): every
/// node ends up in a conv_fused region; the four convolutions seed four
/// regions, one of which takes the residual Add and the final Relu.
TEST(CudnnSelection, ResnetBlockIsFourConvRegions) {
  std::string text = resnetBlockText();
  PartitionReport r = partitionText(text.c_str());
  ASSERT_EQ(r.regions.size(), 4u);
  std::vector<size_t> sizes;
  for (const auto& region : r.regions) {
    EXPECT_EQ(region.property, "conv_fused");
    sizes.push_back(region.nodes.size());
  }
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (std::vector<size_t>{2, 3, 3, 4}));
  EXPECT_EQ(r.nodesInRegions, r.nodesTotal);
}

//   %x -> Conv(%w) -> BatchNormalization -> Relu -> %y
constexpr const char* kConvBnRelu = R"(
  graph @g(%x: f32[1, 2, 3, 3]) {
    %w = const f32[2, 2, 1, 1] [1.0, 0.0, 0.0, 2.0]
    %s = const f32[2] [2.0, 1.0]
    %b = const f32[2] [0.5, 0.0]
    %m = const f32[2] [1.0, 0.0]
    %v = const f32[2] [3.0, 0.0]
    %c: f32[1, 2, 3, 3] = Conv(%x, %w) {kernel_shape = [1, 1]} @conv
    %n: f32[1, 2, 3, 3] = BatchNormalization(%c, %s, %b, %m, %v) {epsilon = 1.0} @bn
    %y: f32[1, 2, 3, 3] = Relu(%n) @relu
    return %y
  })";

/// Conv -> BN -> Relu is one conv_fused region of three nodes.
TEST(CudnnSelection, ConvBnReluIsOneRegion) {
  PartitionReport r = partitionText(kConvBnRelu);
  ASSERT_EQ(r.regions.size(), 1u);
  EXPECT_EQ(r.regions[0].property, "conv_fused");
  EXPECT_EQ(r.regions[0].nodes.size(), 3u);
}

/// A Conv whose weights are a graph input is not selected, and the report
/// says why.
TEST(CudnnSelection, DoesNotSelectConvWithRuntimeWeights) {
  PartitionReport r = partitionText(R"(
    graph @g(%x: f32[1, 2, 3, 3], %w: f32[2, 2, 1, 1]) {
      %y: f32[1, 2, 3, 3] = Conv(%x, %w) {kernel_shape = [1, 1]} @conv
      return %y
    })");
  EXPECT_TRUE(r.regions.empty());
  EXPECT_NE(reasonFor(r, "conv").find("non-constant weights"), std::string::npos)
      << reasonFor(r, "conv");
}

/// A BatchNormalization whose mean is a runtime input cannot be folded:
/// CreateSubgraphNode rejects the Conv+BN region with the planner's reason,
/// so no region holds the BatchNormalization.
TEST(CudnnSelection, RejectsARegionWhoseBatchNormCannotFold) {
  PartitionReport r = partitionText(R"(
    graph @g(%x: f32[1, 2, 3, 3], %m: f32[2]) {
      %w = const f32[2, 2, 1, 1] splat(1.0)
      %s = const f32[2] splat(1.0)
      %b = const f32[2] splat(0.0)
      %v = const f32[2] splat(1.0)
      %c: f32[1, 2, 3, 3] = Conv(%x, %w) {kernel_shape = [1, 1]} @conv
      %y: f32[1, 2, 3, 3] = BatchNormalization(%c, %s, %b, %m, %v) @bn
      return %y
    })");
  for (const auto& region : r.regions)
    for (const std::string& n : region.nodes) EXPECT_EQ(n.find("bn"), std::string::npos);
  EXPECT_NE(reasonFor(r, "bn").find("must be constant"), std::string::npos) << reasonFor(r, "bn");
}

/// MatMul -> bias Add -> Relu is one matmul_fused region.
TEST(CudnnSelection, MatMulBiasReluIsOneRegion) {
  PartitionReport r = partitionText(R"(
    graph @g(%x: f32[2, 3]) {
      %w = const f32[3, 4] splat(0.5)
      %b = const f32[4] splat(1.0)
      %m: f32[2, 4] = MatMul(%x, %w) @mm
      %a: f32[2, 4] = Add(%m, %b) @bias
      %y: f32[2, 4] = Relu(%a) @relu
      return %y
    })");
  ASSERT_EQ(r.regions.size(), 1u);
  EXPECT_EQ(r.regions[0].property, "matmul_fused");
  EXPECT_EQ(r.regions[0].nodes.size(), 3u);
}

/// MaxPool is a pool region; with ceil_mode it is rejected with a reason.
TEST(CudnnSelection, PoolsAndRejectsCeilMode) {
  PartitionReport ok = partitionText(R"(
    graph @g(%x: f32[1, 1, 4, 4]) {
      %y: f32[1, 1, 2, 2] = MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2]} @pool
      return %y
    })");
  ASSERT_EQ(ok.regions.size(), 1u);
  EXPECT_EQ(ok.regions[0].property, "pool");
  PartitionReport ceil = partitionText(R"(
    graph @g(%x: f32[1, 1, 5, 5]) {
      %y: f32[1, 1, 3, 3] = MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1} @pool
      return %y
    })");
  EXPECT_TRUE(ceil.regions.empty());
  EXPECT_NE(reasonFor(ceil, "pool").find("ceil_mode"), std::string::npos)
      << reasonFor(ceil, "pool");
}

/// Sigmoid -> Mul -> Tanh is one eltwise region.
TEST(CudnnSelection, ElementwiseChainIsOneRegion) {
  PartitionReport r = partitionText(R"(
    graph @g(%x: f32[2, 8]) {
      %s: f32[2, 8] = Sigmoid(%x) @sig
      %m: f32[2, 8] = Mul(%s, %x) @mul
      %y: f32[2, 8] = Tanh(%m) @tanh
      return %y
    })");
  ASSERT_EQ(r.regions.size(), 1u);
  EXPECT_EQ(r.regions[0].property, "eltwise");
  EXPECT_EQ(r.regions[0].nodes.size(), 3u);
}

/// float16 is not planned: nothing is fused, with a reason.
TEST(CudnnSelection, DoesNotFuseFloat16) {
  PartitionReport r = partitionText(R"(
    graph @g(%x: f16[2, 8]) {
      %y: f16[2, 8] = Relu(%x) @relu
      return %y
    })");
  EXPECT_TRUE(r.regions.empty());
  EXPECT_NE(reasonFor(r, "relu").find("float32"), std::string::npos) << reasonFor(r, "relu");
}

/// In selection-only mode (no device, or one the mode does not touch) the
/// kernels decline, so a partitioned graph runs its regions on the default
/// executor and matches the reference exactly: nothing pretends to be a
/// GPU result.
TEST(CudnnSelection, SelectionOnlyRegionsRunOnTheDefaultExecutor) {
  plugins::BackendSelection s = selectCudnn();
  Tensor x = Tensor::fromVector<float>(DataType::kFloat32, {1, 2, 3, 3},
                                       {-1, 2, 3, 4, -5, 6, 7, 8, 9, 1, 2, -3, 4, 5, 6, 7, -8, 9});
  runtime::Session reference;
  ASSERT_TRUE(reference.load(parseGraphOrThrow(kConvBnRelu)).isOk());
  ASSERT_TRUE(reference.compile().isOk());
  Tensor want = reference.run({{"x", x}}).value().outputs[0].tensor;

  runtime::SessionOptions options;
  options.threads = 1;
  auto backends = s.runtimeBackends(1);
  ASSERT_TRUE(backends.isOk());
  options.backendInstances = std::move(backends).value();
  runtime::Session session(options);
  ASSERT_TRUE(session.load(parseGraphOrThrow(kConvBnRelu)).isOk());
  Status st = session.partition([&](Graph& g) -> Status {
    auto report = s.partition(g);
    return report.isOk() ? Status::ok() : report.status();
  });
  ASSERT_TRUE(st.isOk()) << st.message();
  st = session.compile();
  ASSERT_TRUE(st.isOk()) << st.message();
  StatusOr<runtime::RunResult> got = session.run({{"x", x}});
  ASSERT_TRUE(got.isOk()) << got.status().message();
  auto a = got->outputs[0].tensor.data<float>();
  auto b = want.data<float>();
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
}

// ---------------------------------------------------------------------------
// Region plans (host only)

/// Conv+BN+Relu plans as conv -> bias add -> relu with BN folded: with
/// scale 2, var 3, eps 1 channel 0's factor is 2/sqrt(4) = 1, so weight 1.0
/// stays and bias becomes (0 - 1) * 1 + 0.5 = -0.5; channel 1 (scale 1,
/// var 0, eps 1) keeps weight 2.0 and bias 0.
TEST(CudnnPlan, ConvBnReluFoldsTheBatchNorm) {
  PlanResult r = planText(kConvBnRelu);
  ASSERT_TRUE(r.plan) << r.reason;
  const RegionPlan& p = *r.plan;
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops[0].kind, PlanOp::Kind::kConvForward);
  EXPECT_EQ(p.ops[1].pointwise, PointwiseMode::kAdd);
  EXPECT_EQ(p.ops[2].pointwise, PointwiseMode::kRelu);
  EXPECT_EQ(p.summary, "Conv+BatchNormalization+Relu");
  const PlanTensor& w = p.tensors[static_cast<size_t>(p.ops[0].w)];
  ASSERT_EQ(w.role, TensorRole::kConstant);
  // 1x1 kernel: channels-last reordering of K x C x 1 x 1 is the identity.
  EXPECT_EQ(p.constants[w.index], (std::vector<float>{1.0f, 0.0f, 0.0f, 2.0f}));
  const PlanTensor& bias = p.tensors[static_cast<size_t>(p.ops[1].w)];
  EXPECT_EQ(p.constants[bias.index], (std::vector<float>{-0.5f, 0.0f}));
  ASSERT_EQ(p.inputTensors.size(), 1u);
  ASSERT_EQ(p.outputTensors.size(), 1u);
  const PlanTensor& x = p.tensors[static_cast<size_t>(p.inputTensors[0])];
  EXPECT_TRUE(x.channelsLast);
  EXPECT_EQ(x.strides, (std::vector<int64_t>{18, 1, 6, 2}));
  // Only the conv's raw output and the pre-activation sum are virtual.
  EXPECT_EQ(std::count_if(p.tensors.begin(), p.tensors.end(),
                          [](const PlanTensor& t) { return t.role == TensorRole::kIntermediate; }),
            2);
}

/// Gemm with transB folds the transpose and alpha into the weights and
/// beta into the bias.
TEST(CudnnPlan, GemmFoldsTransposeAndScales) {
  PlanResult r = planText(R"(
    graph @g(%x: f32[1, 2]) {
      %w = const f32[3, 2] [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
      %c = const f32[3] [1.0, 1.0, 1.0]
      %y: f32[1, 3] = Gemm(%x, %w, %c) {transB = 1, alpha = 2.0, beta = 0.5} @gemm
      return %y
    })");
  ASSERT_TRUE(r.plan) << r.reason;
  const RegionPlan& p = *r.plan;
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.ops[0].kind, PlanOp::Kind::kMatMul);
  const PlanTensor& b = p.tensors[static_cast<size_t>(p.ops[0].w)];
  EXPECT_EQ(b.dims, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(p.constants[b.index], (std::vector<float>{2, 6, 10, 4, 8, 12}));
  const PlanTensor& c = p.tensors[static_cast<size_t>(p.ops[1].w)];
  EXPECT_EQ(p.constants[c.index], (std::vector<float>{0.5f, 0.5f, 0.5f}));
}

/// Negative: a group count that does not divide the channels as the
/// weights say is not planned, with the reason.
TEST(CudnnPlan, DoesNotPlanAGroupThatDoesNotDivideTheChannels) {
  PlanResult r = planText(R"(graph @g(%x: f32[1, 8, 6, 6]) {
    %w = const f32[8, 3, 3, 3] splat(0.1)
    %y: f32[1, 8, 4, 4] = Conv(%x, %w) {group = 3, kernel_shape = [3, 3]} @odd
    return %y
  })");
  EXPECT_FALSE(r.plan);
  EXPECT_NE(r.reason.find("group 3 does not divide the channels"), std::string::npos) << r.reason;
}

/// A BatchNormalization alone is not a plan (it is only folded into a Conv).
TEST(CudnnPlan, DoesNotPlanALoneBatchNorm) {
  PlanResult r = planText(R"(
    graph @g(%x: f32[1, 2, 3, 3]) {
      %s = const f32[2] splat(1.0)
      %b = const f32[2] splat(0.0)
      %m = const f32[2] splat(0.0)
      %v = const f32[2] splat(1.0)
      %y: f32[1, 2, 3, 3] = BatchNormalization(%x, %s, %b, %m, %v) @bn
      return %y
    })");
  EXPECT_FALSE(r.plan);
  EXPECT_NE(r.reason.find("right after a Conv"), std::string::npos) << r.reason;
}

/// Every tensor and operation descriptor of these plans, and their
/// operation graph, is accepted and finalized by the real cuDNN library;
/// that needs no device, so the attribute types and shapes (the easiest
/// things to get wrong in the backend API) are checked here. Heuristics,
/// execution plans and execution are not.
TEST(CudnnPlan, CudnnAcceptsTheDescriptorsWithoutADevice) {
  const char* graphs[] = {
      kConvBnRelu,
      // Conv -> Add(residual) -> Clip, 3x3 with padding and stride 2.
      R"(graph @g(%x: f32[1, 4, 8, 8], %r: f32[1, 4, 4, 4]) {
        %w = const f32[4, 4, 3, 3] splat(0.1)
        %c: f32[1, 4, 4, 4] = Conv(%x, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} @conv
        %a: f32[1, 4, 4, 4] = Add(%c, %r) @add
        %y: f32[1, 4, 4, 4] = Clip(%a) {min = 0.0, max = 6.0} @clip
        return %y
      })",
      R"(graph @g(%x: f32[1, 2]) {
        %w = const f32[3, 2] splat(1.0)
        %c = const f32[3] splat(1.0)
        %y: f32[1, 3] = Gemm(%x, %w, %c) {transB = 1} @gemm
        return %y
      })",
      R"(graph @g(%x: f32[1, 2, 4, 4]) {
        %y: f32[1, 2, 2, 2] = MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2]} @pool
        return %y
      })",
      R"(graph @g(%x: f32[1, 2, 4, 4]) {
        %y: f32[1, 2, 1, 1] = GlobalAveragePool(%x) @gap
        return %y
      })",
      // A depthwise 3x3 (group = C) with its Relu, as in MobileNet.
      R"(graph @g(%x: f32[1, 8, 6, 6]) {
        %dw = const f32[8, 1, 3, 3] splat(0.1)
        %d: f32[1, 8, 6, 6] = Conv(%x, %dw) {group = 8, kernel_shape = [3, 3], pads = [1, 1, 1, 1]} @dw
        %y: f32[1, 8, 6, 6] = Relu(%d) @relu
        return %y
      })",
      // A grouped convolution: 2 groups of 4 channels.
      R"(graph @g(%x: f32[1, 8, 6, 6]) {
        %w = const f32[8, 4, 3, 3] splat(0.1)
        %y: f32[1, 8, 4, 4] = Conv(%x, %w) {group = 2, kernel_shape = [3, 3]} @grouped
        return %y
      })",
      R"(graph @g(%x: f32[2, 8]) {
        %s: f32[2, 8] = Sigmoid(%x) @sig
        %m: f32[2, 8] = Mul(%s, %x) @mul
        %y: f32[2, 8] = LeakyRelu(%m) {alpha = 0.1} @leaky
        return %y
      })",
  };
  for (const char* text : graphs) {
    PlanResult r = planText(text);
    ASSERT_TRUE(r.plan) << r.reason;
    SCOPED_TRACE(r.plan->summary);
    EXPECT_EQ(validateDescriptors(*r.plan), "");
  }
}

/// The check is real: a convolution whose output has the wrong spatial size
/// is refused by cuDNN, with its error in the line.
TEST(CudnnPlan, CudnnRefusesAConvolutionWithTheWrongOutputShape) {
  PlanResult r = planText(kConvBnRelu);
  ASSERT_TRUE(r.plan) << r.reason;
  PlanTensor& y = r.plan->tensors[static_cast<size_t>(r.plan->ops[0].y)];
  y.dims[3] = 5;
  y.strides = channelsLastStrides(y.dims);
  std::string why = validateDescriptors(*r.plan);
  EXPECT_NE(why.find("cudnn plugin: "), std::string::npos) << why;
  std::cout << "cuDNN says: " << why << "\n";
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

// ---------------------------------------------------------------------------
// Host helpers

TEST(CudnnHost, FoldBatchNormScalesPerOutputChannel) {
  std::vector<float> w = {1, 1, 2, 2}, bias = {0, 1};
  foldBatchNorm(w, bias, {1, 4}, {0, 1}, {0, 1}, {1, 4}, 0.0f);
  EXPECT_EQ(w, (std::vector<float>{1, 1, 4, 4}));
  EXPECT_EQ(bias, (std::vector<float>{0, 1}));
}

TEST(CudnnHost, ChannelsLastRoundTrip) {
  std::vector<float> nchw(2 * 3 * 4), nhwc(nchw.size()), back(nchw.size());
  for (size_t i = 0; i < nchw.size(); ++i) nchw[i] = static_cast<float>(i);
  nchwToNhwc(nchw.data(), nhwc.data(), 2, 3, 4);
  EXPECT_EQ(nhwc[1], nchw[4]);  // (n0, p0, c1) == (n0, c1, p0)
  nhwcToNchw(nhwc.data(), back.data(), 2, 3, 4);
  EXPECT_EQ(back, nchw);
}

/// The tiled, parallel transpose handles sizes that are not multiples of
/// its tile, converts types on the way, and round-trips.
TEST(CudnnHost, LargeChannelsLastRoundTripWithHalves) {
  const int64_t n = 2, c = 67, hw = 33 * 35;  // 154,770 elements: the parallel path
  std::vector<float> nchw(static_cast<size_t>(n * c * hw)), nhwc(nchw.size()), back(nchw.size());
  for (size_t i = 0; i < nchw.size(); ++i) nchw[i] = static_cast<float>(i % 2048);
  nchwToNhwc(nchw.data(), nhwc.data(), n, c, hw);
  // (b1, p5, c66) in NHWC is (b1, c66, p5) in NCHW.
  EXPECT_EQ(nhwc[static_cast<size_t>((1 * hw + 5) * c + 66)],
            nchw[static_cast<size_t>((1 * c + 66) * hw + 5)]);
  nhwcToNchw(nhwc.data(), back.data(), n, c, hw);
  EXPECT_EQ(back, nchw);
  std::vector<uint16_t> halves(nchw.size());
  transposeBatches(nchw.data(), halves.data(), n, c, hw, floatToHalf);
  transposeBatches(halves.data(), back.data(), n, hw, c, halfToFloat);
  EXPECT_EQ(back, nchw);  // integers below 2048 are exact in binary16
}

/// The host halves of the copies across the device boundary: a rank-4
/// value goes channels-last (and to binary16 in the fp16 layout), any other
/// rank stays row-major, and both come back unchanged.
TEST(CudnnHost, DeviceLayoutPackingIsChannelsLastForRankFourOnly) {
  const std::vector<int64_t> dims4 = {2, 3, 2, 2};
  std::vector<float> nchw(24), back(24), packed(24);
  for (size_t i = 0; i < nchw.size(); ++i) nchw[i] = static_cast<float>(i);
  packForDevice(nchw.data(), packed.data(), dims4, DeviceElement::kFloat32);
  // (n1, h0, w1, c2) in NHWC is (n1, c2, h0, w1) in NCHW.
  EXPECT_EQ(packed[((1 * 2 + 0) * 2 + 1) * 3 + 2], nchw[((1 * 3 + 2) * 2 + 0) * 2 + 1]);
  EXPECT_NE(packed, nchw);
  unpackFromDevice(packed.data(), back.data(), dims4, DeviceElement::kFloat32);
  EXPECT_EQ(back, nchw);
  std::vector<uint16_t> halves(24);
  packForDevice(nchw.data(), halves.data(), dims4, DeviceElement::kFloat16);
  EXPECT_EQ(halfToFloat(halves[1]), nchw[4]);  // (n0, p0, c1) == (n0, c1, p0)
  unpackFromDevice(halves.data(), back.data(), dims4, DeviceElement::kFloat16);
  EXPECT_EQ(back, nchw);
  // bfloat16: integers up to 256 are exact.
  packForDevice(nchw.data(), halves.data(), dims4, DeviceElement::kBfloat16);
  EXPECT_EQ(bfloat16ToFloat(halves[1]), nchw[4]);
  unpackFromDevice(halves.data(), back.data(), dims4, DeviceElement::kBfloat16);
  EXPECT_EQ(back, nchw);
  // Rank 2 (a Gemm's operand): row-major, byte for byte.
  packForDevice(nchw.data(), packed.data(), {4, 6}, DeviceElement::kFloat32);
  EXPECT_EQ(packed, nchw);
}

/// bfloat16 keeps a float's top 16 bits, rounding the rest to nearest even,
/// and keeps NaN a NaN (truncation could turn a NaN into an infinity).
TEST(CudnnHost, BfloatConversionRoundsToNearestEven) {
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to even (1).
  EXPECT_EQ(floatToBfloat16(1.0f + 1.0f / 256), 0x3f80);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to even (1 + 2^-6).
  EXPECT_EQ(floatToBfloat16(1.0f + 3.0f / 256), 0x3f82);
  EXPECT_EQ(floatToBfloat16(-2.0f), 0xc000);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(std::nanf("")))));
  EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(std::numeric_limits<float>::infinity())),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(parsePrecision("bf16"), Precision::kBf16);
  EXPECT_EQ(deviceElementBytes(Precision::kBf16), 2u);
  EXPECT_EQ(deviceElementBytes(Precision::kTf32), 4u);
}

TEST(CudnnHost, AllocatorRoundsToBins) {
  EXPECT_EQ(DeviceAllocator::roundedSize(1), 256u);
  EXPECT_EQ(DeviceAllocator::roundedSize(257), 512u);
  EXPECT_EQ(DeviceAllocator::roundedSize((1u << 20) + 1), 2u << 20);
}

/// binary16 conversion rounds to nearest even, saturates to infinity past
/// 65504 and keeps subnormals; every finite half survives a round trip.
TEST(CudnnHost, HalfConversionRoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);                          // rounds past the largest half
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie: to even
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie: to even (up)
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);             // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);             // tie with zero: to even
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -26)), 0x0001);             // 0.75 of a unit: up
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);             // smallest normal
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
  EXPECT_EQ(halfToFloat(0x7c00), INFINITY);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) continue;  // NaN payloads
    ASSERT_EQ(floatToHalf(halfToFloat(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
}

//   %x -> Conv -> BatchNormalization -> Add(%r) -> Relu -> %y
constexpr const char* kConvBnAddRelu = R"(
  graph @g(%x: f32[1, 2, 3, 3], %r: f32[1, 2, 3, 3]) {
    %w = const f32[2, 2, 1, 1] [1.0, 0.0, 0.0, 2.0]
    %s = const f32[2] [2.0, 1.0]
    %b = const f32[2] [0.5, 0.0]
    %m = const f32[2] [1.0, 0.0]
    %v = const f32[2] [3.0, 0.0]
    %c: f32[1, 2, 3, 3] = Conv(%x, %w) {kernel_shape = [1, 1]} @conv
    %n: f32[1, 2, 3, 3] = BatchNormalization(%c, %s, %b, %m, %v) {epsilon = 1.0} @bn
    %a: f32[1, 2, 3, 3] = Add(%n, %r) @add
    %y: f32[1, 2, 3, 3] = Relu(%a) @relu
    return %y
  })";

/// When cuDNN has no engine for the whole chain, the longest prefix that
/// has one is kept; each prefix is planned on its own (its inputs are what
/// it reads and does not compute).
TEST(CudnnSelection, TrimsAChainToWhatHasAnEngine) {
  std::unique_ptr<Graph> g = parseGraphOrThrow(kConvBnAddRelu);
  sdk::GraphView view(plugins::host::hostApi(), plugins::host::toC(g.get()));
  std::vector<sdk::NodeView> chain = view.nodes();
  ASSERT_EQ(chain.size(), 4u);
  std::vector<std::string> asked;
  auto noActivation = [&](const RegionPlan& p) -> std::string {
    asked.push_back(p.summary);
    return p.summary.find("Relu") == std::string::npos ? "" : "no engine with Relu";
  };
  std::vector<sdk::NodeView> kept = trimToEngine(chain, noActivation);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept.back().opType(), "Add");
  EXPECT_EQ(asked, (std::vector<std::string>{"Conv+BatchNormalization+Add+Relu",
                                             "Conv+BatchNormalization+Add"}));
  PlanResult prefix = buildChainPlan(kept);
  ASSERT_TRUE(prefix.plan) << prefix.reason;
  EXPECT_EQ(prefix.plan->inputTensors.size(), 2u);  // %x and the residual %r
}

/// Negative: a chain that has an engine is not trimmed, and a chain that
/// does not plan is left whole, so CreateSubgraphNode reports the plan's
/// reason instead of a shorter region hiding it.
TEST(CudnnSelection, DoesNotTrimWhatHasAnEngineOrDoesNotPlan) {
  std::unique_ptr<Graph> g = parseGraphOrThrow(kConvBnAddRelu);
  sdk::GraphView view(plugins::host::hostApi(), plugins::host::toC(g.get()));
  std::vector<sdk::NodeView> chain = view.nodes();
  auto yes = [](const RegionPlan&) { return std::string(); };
  EXPECT_EQ(trimToEngine(chain, yes).size(), 4u);
  // BN then Conv is not a chain the planner takes.
  std::vector<sdk::NodeView> unplannable = {chain[1], chain[0]};
  auto no = [](const RegionPlan&) { return std::string("no engine"); };
  EXPECT_EQ(trimToEngine(unplannable, no).size(), 2u);
  // And with nothing shorter that has an engine, the whole chain stays.
  EXPECT_EQ(trimToEngine(chain, no).size(), 4u);
}

/// The plugin option cudnn.fusion=off: every region is one compute op,
/// except that a BatchNormalization still folds into its Conv (a weight
/// transform).
TEST(CudnnSelection, WithoutFusionEachComputeOpIsARegion) {
  std::string text = resnetBlockText();
  PartitionReport r = partitionText(text.c_str(), {{"cudnn.fusion", "off"}});
  size_t conv = 0, eltwise = 0;
  for (const auto& region : r.regions) {
    if (region.property == "conv_fused") {
      ++conv;
      EXPECT_EQ(region.nodes.size(), 2u);  // Conv + BatchNormalization
    } else {
      EXPECT_EQ(region.property, "eltwise");
      EXPECT_EQ(region.nodes.size(), 1u);
      ++eltwise;
    }
  }
  EXPECT_EQ(conv, 4u);
  EXPECT_EQ(eltwise, 4u);  // two Relus inside, the Add, the last Relu
  EXPECT_EQ(r.nodesInRegions, r.nodesTotal);
}

// ---------------------------------------------------------------------------
// GPU (skip without a device)

/// Outputs of `text` on the reference backend.
std::vector<float> runReference(const std::string& text, const Tensor& x) {
  runtime::Session reference;
  EXPECT_TRUE(reference.load(parseGraphOrThrow(text)).isOk());
  EXPECT_TRUE(reference.compile().isOk());
  Tensor want = reference.run({{"x", x}}).value().outputs[0].tensor;
  auto d = want.data<float>();
  return {d.begin(), d.end()};
}

/// `text` partitioned for cudnn and run; `onDevice` counts the region steps
/// whose kernel the plugin made (not the default executor's fallback).
struct CudnnRun {
  std::vector<float> output;
  int onDevice = 0;
  int regions = 0;
  std::vector<std::string> copies;  // the copy steps, in order
  size_t hostWaits = 0;             // mid-run host waits
};

CudnnRun runOnCudnn(const std::string& text, const Tensor& x, const std::string& precision = "") {
  CudnnRun out;
  plugins::SelectOptions options;
  options.searchPath = {SUBGRAPH_TEST_PLUGIN_DIR};
  StatusOr<plugins::BackendSelection> s = plugins::selectBackends("cudnn", options);
  if (!s.isOk()) throw Error(s.status());
  runtime::SessionOptions so;
  plugins::PluginRunOptions run;
  run.threads = 1;
  run.precision = precision;
  if (Status st = s->setRunOptions(run); !st.isOk()) throw Error(st);
  auto backends = s->runtimeBackends(run);
  if (!backends.isOk()) throw Error(backends.status());
  so.backendInstances = std::move(backends).value();
  runtime::Session session(so);
  if (Status st = session.load(parseGraphOrThrow(text)); !st.isOk()) throw Error(st);
  Status st = session.partition([&](Graph& g) -> Status {
    auto report = s->partition(g);
    if (report.isOk()) out.regions = static_cast<int>(report->regions.size());
    return report.isOk() ? Status::ok() : report.status();
  });
  if (!st.isOk()) throw Error(st);
  if (st = session.compile(); !st.isOk()) throw Error(st);
  runtime::RunOptions ro;
  ro.profile = true;
  StatusOr<runtime::RunResult> got = session.run({{"x", x}}, ro);
  if (!got.isOk()) throw Error(got.status());
  for (const runtime::StepTiming& t : got->steps) {
    if (t.step.isRegion && t.step.backend == "cudnn" && t.step.provider != "region-executor")
      ++out.onDevice;
    if (t.step.isCopy) out.copies.push_back(t.step.name);
  }
  out.hostWaits = got->hostWaits.size();
  auto d = got->outputs[0].tensor.data<float>();
  out.output.assign(d.begin(), d.end());
  return out;
}

/// How many elements of `got` miss `want` by more than tol * (1 + |want|).
size_t pastTolerance(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  EXPECT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * (1.0f + std::fabs(want[i])))) ++bad;
  return bad;
}

/// A 3x3 Conv (64 -> 64 channels, 16x16) -> BN -> residual Add -> Relu with
/// random weights, seeded: enough products per output (576) that TF32's 10
/// mantissa bits show, which splat weights would hide.
//
//   %x ----------------------------.
//    \-> Conv -> BatchNormalization -> Add -> Relu -> %y
std::string randomConvBlock(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), pos(0.5f, 1.5f);
  auto list = [&](size_t n, bool positive) {
    std::string out = "[";
    for (size_t i = 0; i < n; ++i)
      out += (i ? ", " : "") + std::to_string(positive ? pos(rng) : u(rng) * 0.1f);
    return out + "]";
  };
  return "graph @g(%x: f32[1, 64, 16, 16]) {\n"
         "  %w = const f32[64, 64, 3, 3] " +
         list(64 * 64 * 9, false) +
         "\n"
         "  %s = const f32[64] " +
         list(64, true) +
         "\n"
         "  %b = const f32[64] " +
         list(64, false) +
         "\n"
         "  %m = const f32[64] " +
         list(64, false) +
         "\n"
         "  %v = const f32[64] " +
         list(64, true) +
         "\n"
         "  %c: f32[1, 64, 16, 16] = Conv(%x, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} "
         "@conv\n"
         "  %n: f32[1, 64, 16, 16] = BatchNormalization(%c, %s, %b, %m, %v) @bn\n"
         "  %a: f32[1, 64, 16, 16] = Add(%n, %x) @add\n"
         "  %y: f32[1, 64, 16, 16] = Relu(%a) @relu\n"
         "  return %y\n"
         "}\n";
}

Tensor randomInput(std::vector<int64_t> dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return Tensor::fromVector<float>(DataType::kFloat32, dims, v);
}

/// randomConvBlock(seed), an input from the next seed, and the reference
/// backend's output for it; prints the seed.
struct BlockCase {
  std::string text;
  Tensor x;
  std::vector<float> want;
};

BlockCase randomBlockCase(uint32_t seed) {
  std::cout << "seed " << seed << "\n";
  BlockCase c{randomConvBlock(seed), randomInput({1, 64, 16, 16}, seed + 1), {}};
  c.want = runReference(c.text, c.x);
  return c;
}

/// Conv+BN+Relu run by cuDNN (not the default executor) matches the
/// reference backend.
TEST(CudnnGpu, ConvBnReluMatchesTheReference) {
  if (std::string why = probeDevice(); !why.empty()) GTEST_SKIP() << why;
  Tensor x = Tensor::fromVector<float>(DataType::kFloat32, {1, 2, 3, 3},
                                       {-1, 2, 3, 4, -5, 6, 7, 8, 9, 1, 2, -3, 4, 5, 6, 7, -8, 9});
  std::vector<float> want = runReference(kConvBnRelu, x);
  CudnnRun got = runOnCudnn(kConvBnRelu, x);
  EXPECT_EQ(got.onDevice, 1);
  EXPECT_EQ(pastTolerance(got.output, want, 1e-5f), 0u);
}

//   %x -> [Conv -> Relu] -> [MaxPool] -> %y: two cuDNN regions in a row.
const char* kTwoRegions = R"(graph @g(%x: f32[1, 8, 8, 8]) {
  %w = const f32[8, 8, 3, 3] splat(0.05)
  %c: f32[1, 8, 8, 8] = Conv(%x, %w) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} @conv
  %r: f32[1, 8, 8, 8] = Relu(%c) @relu
  %y: f32[1, 8, 4, 4] = MaxPool(%r) {kernel_shape = [2, 2], strides = [2, 2]} @pool
  return %y
})";

/// Plugin ABI 3 on the GPU: the value between two cuDNN regions stays on
/// the device, channels-last; the only copies are the input going up and
/// the output coming down, and the host never waits in between.
TEST(CudnnGpu, ValuesStayOnTheGpuBetweenRegions) {
  if (std::string why = probeDevice(); !why.empty()) GTEST_SKIP() << why;
  Tensor x = randomInput({1, 8, 8, 8}, 5);
  std::vector<float> want = runReference(kTwoRegions, x);
  CudnnRun got = runOnCudnn(kTwoRegions, x);
  EXPECT_EQ(got.onDevice, 2);
  EXPECT_EQ(got.copies, (std::vector<std::string>{"copy:x->cuda:0@cudnn.nhwc", "copy:y->cpu:0"}));
  EXPECT_EQ(got.hostWaits, 0u);
  EXPECT_EQ(pastTolerance(got.output, want, 1e-4f), 0u);
}

/// In the default fp32 mode a random 3x3 block matches the reference to
/// 1e-4: no TF32 engine was taken. Negative: the run must not fall back to
/// the default executor, which would match trivially.
TEST(CudnnGpu, Fp32TakesNoTf32Engine) {
  if (std::string why = probeDevice(); !why.empty()) GTEST_SKIP() << why;
  BlockCase c = randomBlockCase(7);
  CudnnRun got = runOnCudnn(c.text, c.x);
  // cuDNN 9.14 has no non-TF32 engine for the whole chain on an H100, so
  // the Relu may be trimmed into a region of its own; either way every
  // region runs on the device.
  EXPECT_GE(got.regions, 1);
  EXPECT_EQ(got.onDevice, got.regions);
  EXPECT_EQ(pastTolerance(got.output, c.want, 1e-4f), 0u);
}

/// fp16 mode runs the same block in binary16 within 5e-2 of each element,
/// and is not bit-identical to fp32 (it did change type).
TEST(CudnnGpu, Fp16RunsInHalfPrecision) {
  if (std::string why = probeDevice(); !why.empty()) GTEST_SKIP() << why;
  BlockCase c = randomBlockCase(11);
  // Selection's engine check and the kernels both take the session's
  // precision through the ABI.
  CudnnRun got = runOnCudnn(c.text, c.x, "fp16");
  EXPECT_EQ(got.onDevice, 1);
  EXPECT_EQ(pastTolerance(got.output, c.want, 5e-2f), 0u);
  EXPECT_GT(pastTolerance(got.output, c.want, 1e-6f), 0u);
}

}  // namespace
}  // namespace subgraph::cudnn
