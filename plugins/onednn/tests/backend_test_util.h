//===- plugins/onednn/tests/backend_test_util.h - Partition-and-run helpers -*- C++ -*-===//
//
// What the onednn backend tests share: the plugin loaded once from the
// build's plugin directory, graphs in the text format with random constants
// (seeded; the seed is printed), and a partition-and-run that reports the
// regions formed and the largest difference from the reference backend.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "runtime_test_util.h"
#include "subgraph/ir/shape_inference.h"
#include "subgraph/plugins/plugin_loader.h"

namespace subgraph::onednn::testing {

using runtime::NamedTensor;
using runtime::Session;
using runtime::SessionOptions;
using runtime::StepInfo;
using runtime::testing::maxAbsDiff;
using runtime::testing::randomF32;
using runtime::testing::runOk;

inline constexpr unsigned kSeed = 2024;
inline constexpr const char* kBackendName = "onednn";

// The plugin, loaded once from the build's plugin directory.
inline const plugins::BackendSelection& onednnPlugin() {
  static const plugins::BackendSelection selection = [] {
    plugins::SelectOptions options;
    options.searchPath = {SUBGRAPH_TEST_PLUGIN_DIR};
    StatusOr<plugins::BackendSelection> s = plugins::selectBackends(kBackendName, options);
    if (!s.isOk()) throw Error(s.status());
    return std::move(s).value();
  }();
  return selection;
}

// Replaces the first `from` in `text` by `to`; fails the test if absent.
inline void replaceOnce(std::string& text, std::string_view from, std::string_view to) {
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

// `t` with random 8-bit integers over the type's whole range.
template <typename T>
Tensor randomIntegers(const Tensor& t, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(),
                                          std::numeric_limits<T>::max());
  std::vector<T> data(static_cast<size_t>(t.numElements()));
  for (T& x : data) x = static_cast<T>(dist(rng));
  return Tensor::fromVector<T>(t.dtype(), t.dims(), data);
}

// Parses `text` and replaces every f32 constant of more than one element by
// random values: [0.5, 1.5] for names starting with "v" (variances, which
// must be positive), [-1, 1] otherwise; 8-bit integer ones (quantized
// weights) take any value of their type. Names starting with "fixed" (such
// as Resize scales) keep the values written.
inline std::unique_ptr<Graph> randomized(const char* text, std::mt19937& rng) {
  std::unique_ptr<Graph> g = parseGraphOrThrow(text);
  for (Value* v : g->initializers()) {
    const Tensor* t = v->initializer();
    if (t->numElements() < 2 || v->name().rfind("fixed", 0) == 0) continue;
    // setInitializer frees `t`: nothing reads it after.
    if (t->dtype() == DataType::kUInt8) {
      g->setInitializer(v, randomIntegers<uint8_t>(*t, rng));
      continue;
    }
    if (t->dtype() == DataType::kInt8) {
      g->setInitializer(v, randomIntegers<int8_t>(*t, rng));
      continue;
    }
    if (t->dtype() != DataType::kFloat32) continue;
    bool positive = !v->name().empty() && v->name()[0] == 'v';
    std::uniform_real_distribution<float> dist(positive ? 0.5f : -1.0f, positive ? 1.5f : 1.0f);
    std::vector<float> data(static_cast<size_t>(t->numElements()));
    for (float& x : data) x = dist(rng);
    g->setInitializer(v, Tensor::fromVector<float>(DataType::kFloat32, t->dims(), data));
  }
  // The selectors read value types (shapes of Add operands, ranks).
  Status st = inferShapes(*g);
  EXPECT_TRUE(st.isOk()) << st.message();
  return g;
}

// A region of a family with optional steps named by the steps it took, as
// the family's one property per variant used to be: `conv` with variant
// Conv+BatchNormalization+Relu is "conv_bn_act", `conv_hswish` with
// Conv+Add+HardSigmoid+Mul is "conv_add_hswish", `deconv` with
// ConvTranspose+Relu is "deconv_act", `eltwise` with Relu+Mul is
// "eltwise2", `int8_conv` with a bias Add is "int8_conv_bias", `gemm`
// with an activation "gemm_act", `matmul` with a residual and an
// activation "matmul_add_act". Other
// regions keep their property's name. Asserting these
// pins which variant matched.
inline std::string regionLabel(const std::string& property, const std::string& variant) {
  std::vector<std::string_view> ops;
  for (size_t begin = 0; begin <= variant.size();) {
    size_t end = std::min(variant.find('+', begin), variant.size());
    ops.push_back(std::string_view(variant).substr(begin, end - begin));
    begin = end + 1;
  }
  if (property == "eltwise") return "eltwise" + std::to_string(ops.size());
  if (property == "layernorm") return ops.size() > 1 ? "add_layernorm" : "layernorm";  // [Add]
  if (property == "gemm") return ops.size() > 1 ? "gemm_act" : "gemm";  // [activation]
  if (property == "matmul_bias") {  // [residual Add] -> [activation]
    const bool residual = ops.size() > 2 && ops[2] == "Add";
    return std::string("matmul_bias") + (residual ? "_add" : "") +
           (ops.size() > (residual ? 3u : 2u) ? "_act" : "");
  }
  if (property == "matmul") {  // [residual Add] -> [scale or activation]
    const bool residual = ops.size() > 1 && ops[1] == "Add";
    const size_t tail = residual ? 2 : 1;
    std::string label = std::string("matmul") + (residual ? "_add" : "");
    if (ops.size() > tail) label += ops[tail] == "Div" || ops[tail] == "Mul" ? "_scale" : "_act";
    return label;
  }
  if (property == "int8_conv" || property == "int8_matmul") {
    // DynamicQuantizeLinear, the integer op, Cast, Mul, Mul, [Add], [act].
    bool bias = std::find(ops.begin(), ops.end(), "Add") != ops.end();
    bool act = ops.back() != "Mul" && ops.back() != "Add";
    return property + (bias ? "_bias" : "") + (act ? "_act" : "");
  }
  if (property != "conv" && property != "conv_hswish" && property != "deconv") return property;
  std::string label = property == "deconv" ? "deconv" : "conv";
  for (size_t i = 1; i < ops.size(); ++i) {
    if (ops[i] == "Mul" && property == "conv_hswish") continue;  // the gate's Mul
    label += ops[i] == "BatchNormalization"                         ? "_bn"
             : ops[i] == "Add" && property != "deconv"              ? "_add"
             : ops[i] == "HardSigmoid" && property == "conv_hswish" ? "_hswish"
                                                                    : "_act";
  }
  return label;
}

// The largest difference of two outputs: floats as numbers; outputs of
// other types (integers, bools) must be equal in type, dims and every
// element, or the difference is infinite.
inline double maxDiffOf(const Tensor& got, const Tensor& want) {
  if (want.dtype() == DataType::kFloat32) return maxAbsDiff(got, want);
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(got.dims(), want.dims());
  if (got.dtype() != want.dtype() || got.dims() != want.dims()) return HUGE_VAL;
  double m = 0;
  for (int64_t i = 0; i < want.numElements(); ++i)
    m = std::max(m, std::fabs(got.elementAsDouble(i) - want.elementAsDouble(i)));
  return m;
}

struct Outcome {
  std::vector<std::string> regions;  // fused ops (regionLabel), in step order
  std::vector<std::string> leftOps;  // ops left outside any region
  size_t copies = 0;
  double maxDiff = 0;
};

// A session of `graph` partitioned for onednn; `variants` gets each fused
// node's variant. `precision` reaches the plugin through the kernel
// context, as `subgraph run --precision` passes it.
inline std::unique_ptr<Session> fusedSession(const Graph& graph, int threads,
                                             const std::string& precision,
                                             std::map<std::string, std::string>& variants) {
  const plugins::BackendSelection& plugin = onednnPlugin();
  SessionOptions options;
  options.threads = threads;
  plugins::PluginRunOptions runOptions;
  runOptions.threads = threads;
  runOptions.precision = precision;
  StatusOr<std::vector<std::shared_ptr<runtime::Backend>>> backends =
      plugin.runtimeBackends(runOptions);
  EXPECT_TRUE(backends.isOk()) << backends.status().message();
  if (backends.isOk()) options.backendInstances = std::move(backends).value();
  auto fused = std::make_unique<Session>(options);
  EXPECT_TRUE(fused->load(graph).isOk());
  Status st = fused->partition([&](Graph& g) -> Status {
    auto report = plugin.partition(g);
    if (!report.isOk()) return report.status();
    for (const partition::RegionReport& r : report->regions) variants[r.fusedNode] = r.variant;
    return Status::ok();
  });
  EXPECT_TRUE(st.isOk()) << st.message();
  st = fused->compile();
  EXPECT_TRUE(st.isOk()) << st.message();
  return fused;
}

// Partitions `graph` for onednn, runs it on `inputs`, compares with the
// reference.
inline Outcome runOutcome(const Graph& graph_, const std::vector<NamedTensor>& inputs, int threads,
                          const std::string& precision) {
  const Graph* graph = &graph_;
  Session reference;
  EXPECT_TRUE(reference.load(*graph).isOk());
  EXPECT_TRUE(reference.compile().isOk());
  std::map<std::string, std::string> variants;  // fused node -> variant
  std::unique_ptr<Session> fused = fusedSession(*graph, threads, precision, variants);
  Outcome out;
  for (const StepInfo& s : fused->steps()) {
    if (s.isRegion) {
      out.regions.push_back(
          regionLabel(s.op.substr(std::string("subgraph.onednn.").size()), variants[s.name]));
      EXPECT_EQ(s.backend, kBackendName) << s.op << " fell back to " << s.provider;
    } else if (s.isCopy) {
      ++out.copies;
    } else {
      out.leftOps.push_back(s.op);
    }
  }
  std::vector<NamedTensor> want = runOk(reference, inputs);
  std::vector<NamedTensor> got = runOk(*fused, inputs);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    out.maxDiff = std::max(out.maxDiff, maxDiffOf(got[i].tensor, want[i].tensor));
  return out;
}

// Partitions `text` for onednn (random constants, the seed printed), runs
// it on `inputs`, compares with the reference.
inline Outcome partitionAndRunWith(const char* text, const std::vector<NamedTensor>& inputs,
                                   int threads = 0, const std::string& precision = "") {
  std::printf("seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  return runOutcome(*randomized(text, rng), inputs, threads, precision);
}

// The one-line error a run of `text`, partitioned for onednn, gives on
// `inputs`; "" (and a test failure) when it runs.
inline std::string partitionAndRunError(const char* text, const std::vector<NamedTensor>& inputs) {
  std::mt19937 rng(kSeed);
  std::unique_ptr<Graph> graph = randomized(text, rng);
  std::map<std::string, std::string> variants;
  std::unique_ptr<Session> fused = fusedSession(*graph, 0, "", variants);
  StatusOr<runtime::RunResult> r = fused->run(inputs);
  EXPECT_FALSE(r.isOk());
  return r.isOk() ? "" : r.status().message();
}

// Partitions `text` for onednn, runs it on random inputs (symbolic dims
// take `symbolSize`), compares with the reference.
inline Outcome partitionAndRun(const char* text, int threads = 0, int64_t symbolSize = 2,
                               const std::string& precision = "") {
  std::printf("seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  std::unique_ptr<Graph> graph = randomized(text, rng);
  std::vector<NamedTensor> inputs;
  for (const Value* in : graph->inputs()) {
    std::vector<int64_t> dims;
    for (const Dim& d : *in->type().shape) dims.push_back(d.isStatic() ? d.size() : symbolSize);
    inputs.push_back({in->name(), randomF32(dims, rng)});
  }
  return runOutcome(*graph, inputs, threads, precision);
}

}  // namespace subgraph::onednn::testing
