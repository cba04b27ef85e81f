//===- tests/plugins/plugin_options_test.cpp - Options and sessions (ABI 5) -===//
//
// A plugin declares its options; the host refuses an undeclared name or a
// value outside an option's list, with a "did you mean", before any plugin
// code runs; and a plugin whose selection depends on the session plans
// with the precision and options its kernels then run with. The probe is
// tests/plugins/corpus/session_plugin.cpp (backend `session_probe`): a
// Relu region only in fp16 sessions, whose kernel refuses a session of
// another precision than its region was planned for.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "subgraph/plugin_abi.h"

#include "subgraph/ir/shape_inference.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/runtime/session.h"
#include "subgraph/support/did_you_mean.h"

namespace subgraph::plugins {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const fs::path kProbe = fs::path(SUBGRAPH_TEST_RAW_ABI_DIR) / "session_probe.so";

constexpr const char* kReluSigmoid = R"(
graph @g(%x: f32[2, 3]) {
  %r = Relu(%x) @relu
  %y = Sigmoid(%r) @sigmoid
  return %y
}
)";

BackendSelection select(const std::string& list) {
  SelectOptions options;
  options.searchPath = {SUBGRAPH_TEST_PLUGIN_DIR};
  StatusOr<BackendSelection> s = selectBackends(list, options);
  if (!s.isOk()) throw Error(s.status());
  return std::move(s).value();
}

PluginRunOptions session(std::string precision, std::map<std::string, std::string> options = {}) {
  PluginRunOptions run;
  run.threads = 1;
  run.precision = std::move(precision);
  run.options = std::move(options);
  return run;
}

std::unique_ptr<Graph> parse(const char* text) {
  StatusOr<std::unique_ptr<Graph>> g = parseGraph(text);
  if (!g.isOk()) throw Error(g.status());
  throwIfError(inferShapes(*g.value()));
  return std::move(g).value();
}

/// Partitions kReluSigmoid for the probe with `planned`, then compiles and
/// runs it with kernels made for `ran`: the sizes of the regions and the
/// run's outcome.
struct ProbeRun {
  std::vector<size_t> regionSizes;
  std::string rejected;  // the first rejection's reason
  Status run;
  float maxError = 0;
};

ProbeRun runProbe(const PluginRunOptions& planned, const PluginRunOptions& ran) {
  BackendSelection selection = select(kProbe.string());
  ProbeRun out;
  Status st = selection.setRunOptions(planned);
  if (!st.isOk()) throw Error(st);
  runtime::SessionOptions so;
  so.threads = 1;
  so.backendInstances = selection.runtimeBackends(ran).value();
  runtime::Session s(so);
  EXPECT_TRUE(s.load(parse(kReluSigmoid)).isOk());
  st = s.partition([&](Graph& g) -> Status {
    auto report = selection.partition(g);
    if (!report.isOk()) return report.status();
    for (const auto& region : report->regions) out.regionSizes.push_back(region.nodes.size());
    if (!report->rejected.empty()) out.rejected = report->rejected[0].reason;
    return Status::ok();
  });
  EXPECT_TRUE(st.isOk()) << st.message();
  out.run = s.compile();
  if (!out.run.isOk()) return out;
  std::vector<float> x = {-1, -0.5f, 0, 0.5f, 1, 2};
  StatusOr<runtime::RunResult> got =
      s.run({{"x", Tensor::fromVector(DataType::kFloat32, {2, 3}, x)}});
  out.run = got.status();
  if (!got.isOk()) return out;
  std::span<const float> y = got->outputs[0].tensor.data<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    float want = 1.0f / (1.0f + std::exp(-std::max(x[i], 0.0f)));
    out.maxError = std::max(out.maxError, std::abs(y[i] - want));
  }
  return out;
}

TEST(PluginOptions, DeclaredOptionsAreListed) {
  BackendSelection selection = select(kProbe.string());
  const PluginInfo& info = selection.backends()[0].plugin->info();
  EXPECT_EQ(info.abiVersion, SG_PLUGIN_ABI_VERSION);  // built against this SDK
  EXPECT_TRUE(info.sessionProperties);
  ASSERT_EQ(info.options.size(), 2u);
  EXPECT_EQ(info.options[0].name, "engine");
  EXPECT_THAT(info.options[0].values, ElementsAre("fp16", "any"));
  EXPECT_EQ(info.options[0].defaultValue, "fp16");
  EXPECT_EQ(info.options[1].name, "fusion");
  // The shipped CPU plugin declares what it reads.
  BackendSelection onednnSelection = select("onednn");  // keeps the plugin loaded
  const PluginInfo& onednn = onednnSelection.backends()[0].plugin->info();
  std::vector<std::string> names;
  for (const PluginOption& o : onednn.options) names.push_back(o.name);
  EXPECT_THAT(names, ElementsAre("precision", "fusion", "winograd"));
}

TEST(PluginOptions, AnUnknownNameIsRefusedWithDidYouMean) {
  BackendSelection selection = select(kProbe.string());
  Status st = selection.setRunOptions(session("fp16", {{"session_probe.fusoin", "off"}}));
  ASSERT_FALSE(st.isOk());
  EXPECT_THAT(st.message(), HasSubstr("plugin option 'session_probe.fusoin': backend "
                                      "'session_probe' has no option 'fusoin' (did you mean "
                                      "fusion?); its options: engine, fusion"));
  // Nothing was set: the selection still plans for the default session.
  EXPECT_TRUE(selection.runOptions().options.empty());
  EXPECT_EQ(st.message().find('\n'), std::string::npos);
}

TEST(PluginOptions, AValueOutsideTheListIsRefused) {
  BackendSelection selection = select(kProbe.string());
  Status st = selection.setRunOptions(session("fp16", {{"session_probe.engine", "fp61"}}));
  ASSERT_FALSE(st.isOk());
  EXPECT_THAT(st.message(), HasSubstr("'fp61' is not a value of session_probe.engine (did you "
                                      "mean fp16?); it takes fp16, any"));
  // An option for a backend that is not chosen names the chosen ones.
  st = selection.setRunOptions(session("", {{"onednn.fusion", "all"}}));
  EXPECT_THAT(st.message(), HasSubstr("is for backend 'onednn', which is not chosen"));
}

/// The probe's "engine" exists in fp16 only: an fp16 session plans the
/// region and runs it; an fp32 one does not plan it, and says why.
TEST(PluginOptions, OnePrecisionFromPartitionToRun) {
  ProbeRun fp16 = runProbe(session("fp16"), session("fp16"));
  EXPECT_THAT(fp16.regionSizes, ElementsAre(2u));
  ASSERT_TRUE(fp16.run.isOk()) << fp16.run.message();
  EXPECT_LT(fp16.maxError, 1e-6f);

  ProbeRun fp32 = runProbe(session("fp32"), session("fp32"));
  EXPECT_TRUE(fp32.regionSizes.empty());
  EXPECT_THAT(fp32.rejected, HasSubstr("no engine for Relu in precision 'fp32', only in fp16"));
  EXPECT_TRUE(fp32.run.isOk()) << fp32.run.message();
}

/// Negative: kernels made for another precision than selection planned
/// for refuse the region, so the test above could fail.
TEST(PluginOptions, PlanningAndRunningInDifferentPrecisionsFails) {
  ProbeRun mixed = runProbe(session("fp16"), session("fp32"));
  EXPECT_THAT(mixed.regionSizes, ElementsAre(2u));
  ASSERT_FALSE(mixed.run.isOk());
  EXPECT_THAT(mixed.run.message(),
              HasSubstr("was planned for precision 'fp16' but the session runs in 'fp32'"));
  // A plugin's refusal is its failure, not the model's or the caller's.
  EXPECT_EQ(mixed.run.code(), StatusCode::kPluginFailure);
}

/// Options reach selection too: fusion=off keeps the Sigmoid out, and
/// engine=any plans in fp32.
TEST(PluginOptions, OptionsReachSelection) {
  ProbeRun unfused = runProbe(session("fp16", {{"session_probe.fusion", "off"}}),
                              session("fp16", {{"session_probe.fusion", "off"}}));
  EXPECT_THAT(unfused.regionSizes, ElementsAre(1u));
  EXPECT_TRUE(unfused.run.isOk()) << unfused.run.message();
  ProbeRun any = runProbe(session("fp32", {{"session_probe.engine", "any"}}),
                          session("fp32", {{"session_probe.engine", "any"}}));
  EXPECT_THAT(any.regionSizes, ElementsAre(2u));
  EXPECT_TRUE(any.run.isOk()) << any.run.message();
}

TEST(DidYouMean, SuggestsCloseNamesOnly) {
  std::vector<std::string> names = {"precision", "fusion", "winograd"};
  EXPECT_EQ(didYouMean("precison", names), " (did you mean precision?)");
  EXPECT_EQ(didYouMean("WINOGRAD", names), " (did you mean winograd?)");
  EXPECT_EQ(didYouMean("threads", names), "");
  EXPECT_EQ(editDistance("onedn", "onednn"), 1u);
}

}  // namespace
}  // namespace subgraph::plugins
