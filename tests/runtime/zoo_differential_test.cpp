//===- tests/runtime/zoo_differential_test.cpp - Zoo models, fused vs not -===//
//
// Differential tests on whole models: the zoo's ResNet-50, MobileNetV2 and
// BERT run partitioned for the Conv -> BatchNormalization backend (each
// fused region executed by the backend's kernel or the default region
// executor) and unpartitioned on the reference backend. The outputs must
// agree up to floating-point reassociation; a fusion that drops, reorders
// or rewires a node would show as an O(1) error.
//
// The models are full size (they are what users run) except BERT, which
// keeps its structure but shrinks to two small layers so that the suite
// stays fast under the sanitizers.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "partition_test_util.h"
#include "runtime_test_util.h"
#include "subgraph/zoo/zoo.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT

// Largest |a - b| / (1 + |b|) over two f32 tensors of the same dims.
double maxScaledDiff(const Tensor& a, const Tensor& b) {
  std::vector<float> x = values(a), y = values(b);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double d = std::fabs(static_cast<double>(x[i]) - y[i]) / (1.0 + std::fabs(y[i]));
    if (std::isnan(d)) return INFINITY;
    worst = std::max(worst, d);
  }
  return worst;
}

struct DiffResult {
  int regions = 0;            // fused regions the partitioned session runs
  double maxScaled = 0;       // worst scaled difference over all outputs
  bool outputsDiffer = true;  // outputs differ in count, name, dtype or dims
};

// Runs `graph` unpartitioned and partitioned for `backends` on the same
// seeded random inputs and compares every output.
DiffResult runBothWays(std::unique_ptr<Graph> graph, const std::vector<std::string>& backends,
                       unsigned seed) {
  DiffResult result;
  std::mt19937 rng(seed);
  std::vector<NamedTensor> inputs;
  for (const Value* v : graph->inputs()) {
    if (v->isInitializer()) continue;
    std::vector<int64_t> dims;
    for (const Dim& d : *v->type().shape) dims.push_back(d.size());
    inputs.push_back({v->name(), randomF32(dims, rng)});
  }

  Session plain;
  EXPECT_TRUE(plain.load(*graph).isOk());
  EXPECT_TRUE(plain.compile().isOk());
  Session fused;
  EXPECT_TRUE(fused.load(std::move(graph)).isOk());
  Status st = partitionWith(fused, backends);
  EXPECT_TRUE(st.isOk()) << st.message();
  st = fused.compile();
  EXPECT_TRUE(st.isOk()) << st.message();
  for (const StepInfo& s : fused.steps()) result.regions += s.isRegion ? 1 : 0;

  std::vector<NamedTensor> want = runOk(plain, inputs);
  std::vector<NamedTensor> got = runOk(fused, inputs);
  if (want.size() != got.size()) return result;
  for (size_t i = 0; i < want.size(); ++i)
    if (want[i].name != got[i].name || want[i].tensor.dims() != got[i].tensor.dims() ||
        want[i].tensor.dtype() != got[i].tensor.dtype())
      return result;
  result.outputsDiffer = false;
  for (size_t i = 0; i < want.size(); ++i)
    result.maxScaled = std::max(result.maxScaled, maxScaledDiff(got[i].tensor, want[i].tensor));
  return result;
}

// Reassociation inside a fused region moves float32 results by a few ulps
// per accumulation; 1e-5 scaled is far below any wiring mistake.
constexpr double kTolerance = 1e-5;

TEST(ZooDifferential, ResNet50ConvBnRegionsMatchReference) {
  zoo::ModelOptions options;
  options.batch = 1;
  DiffResult r = runBothWays(zoo::buildResNet50(options), {"convbn"}, 1);
  EXPECT_EQ(r.regions, 53);  // every Conv is followed by its BatchNormalization
  EXPECT_FALSE(r.outputsDiffer);
  EXPECT_LE(r.maxScaled, kTolerance);
}

TEST(ZooDifferential, MobileNetV2ConvBnRegionsMatchReference) {
  zoo::ModelOptions options;
  options.batch = 1;
  DiffResult r = runBothWays(zoo::buildMobileNetV2(options), {"convbn"}, 2);
  EXPECT_EQ(r.regions, 52);  // depthwise convs included
  EXPECT_FALSE(r.outputsDiffer);
  EXPECT_LE(r.maxScaled, kTolerance);
}

// BERT has no Conv: the Conv+BN backend must claim nothing, and the
// partitioned session is then the unpartitioned one, bit for bit.
TEST(ZooDifferential, BertIsLeftWholeByConvBnAndMatchesReference) {
  zoo::ModelOptions options;
  options.batch = 1;
  zoo::BertOptions bert;
  bert.layers = 2;
  bert.hidden = 64;
  bert.heads = 4;
  bert.intermediate = 128;
  bert.sequenceLength = 16;
  DiffResult r = runBothWays(zoo::buildBert(options, bert), {"convbn"}, 3);
  EXPECT_EQ(r.regions, 0);
  EXPECT_FALSE(r.outputsDiffer);
  EXPECT_EQ(r.maxScaled, 0.0);
}

}  // namespace
}  // namespace subgraph::runtime
