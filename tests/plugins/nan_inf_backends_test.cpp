//===- tests/plugins/nan_inf_backends_test.cpp - One answer for NaN and inf on every backend -===//
//
// The cross-backend NaN/inf group (issue 48): the same models, fed the
// same inputs holding NaN, +inf and -inf among ordinary values, run on
// every backend this build has (the reference, onednn, the emulated
// device, blocked_layout, example_convbn), and every answer must be the
// reference's: NaN in the same places, the same infinities, the finite
// values within rounding. oneDNN's Relu and Clip used to map NaN to 0
// (plugins/onednn/kernels/activation.h says why and what the kernels do).
// The models avoid what legitimately differs between backends: 3x3
// stride-1 convolutions (Winograd turns an infinity into NaN across its
// tile) and sums that overflow to inf in one order and not another.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "subgraph/api/inference_session.h"
#include "subgraph/ir/text_format.h"

namespace subgraph {
namespace {

namespace fs = std::filesystem;
const fs::path kPluginDir = SUBGRAPH_TEST_PLUGIN_DIR;
constexpr uint32_t kSeed = 20261128;

/// Every backend of the build that fuses something in these models.
std::vector<std::string> backends() {
  std::vector<std::string> out;
  for (const char* name : {"onednn", "emudev", "blocked_layout", "example_convbn"})
    if (fs::exists(kPluginDir / (std::string(name) + ".so"))) out.push_back(name);
  return out;
}

struct Model {
  const char* name;
  const char* text;
};

// Weights are splats or short lists so that the text stays small; the
// activations in between are what is under test.
const Model kModels[] = {
    {"relu", "graph @g(%x: f32[1, 16, 4, 4]) {\n  %y = Relu(%x)\n  return %y\n}\n"},
    {"clip",
     "graph @g(%x: f32[1, 16, 4, 4]) {\n  %lo = const f32[] [0]\n  %hi = const f32[] [6]\n"
     "  %y = Clip(%x, %lo, %hi)\n  return %y\n}\n"},
    {"relu-chain",
     "graph @g(%x: f32[1, 16, 4, 4]) {\n  %r = Relu(%x)\n  %y = Sigmoid(%r)\n  return %y\n}\n"},
    {"activations",
     "graph @g(%x: f32[1, 16, 4, 4]) {\n  %a = LeakyRelu(%x) {alpha = 0.1}\n"
     "  %b = HardSigmoid(%x)\n  %c = HardSwish(%x)\n  %d = Tanh(%x)\n  %e = Sigmoid(%x)\n"
     "  return %a, %b, %c, %d, %e\n}\n"},
    {"conv-relu",
     "graph @g(%x: f32[1, 16, 4, 4]) {\n  %w = const f32[24, 16, 1, 1] splat(0.25)\n"
     "  %b = const f32[24] splat(-1)\n  %c = Conv(%x, %w, %b)\n  %y = Relu(%c)\n  return %y\n}\n"},
    {"conv-bn-clip",
     "graph @g(%x: f32[1, 16, 4, 4]) {\n  %w = const f32[20, 16, 1, 1] splat(-0.5)\n"
     "  %s = const f32[20] splat(2)\n  %t = const f32[20] splat(0.5)\n"
     "  %m = const f32[20] splat(0)\n  %v = const f32[20] splat(1)\n"
     "  %c = Conv(%x, %w)\n  %n = BatchNormalization(%c, %s, %t, %m, %v)\n"
     "  %lo = const f32[] [0]\n  %hi = const f32[] [6]\n  %y = Clip(%n, %lo, %hi)\n"
     "  return %y\n}\n"},
    {"conv-add-relu",
     "graph @g(%x: f32[1, 16, 4, 4]) {\n  %w = const f32[16, 16, 1, 1] splat(0.125)\n"
     "  %c = Conv(%x, %w)\n  %a = Add(%c, %x)\n  %y = Relu(%a)\n  return %y\n}\n"},
    {"conv3x3-stride2-relu",
     "graph @g(%x: f32[1, 16, 4, 4]) {\n  %w = const f32[16, 16, 3, 3] splat(0.0625)\n"
     "  %c = Conv(%x, %w) {strides = [2, 2], pads = [1, 1, 1, 1]}\n  %y = Relu(%c)\n"
     "  return %y\n}\n"},
    {"gemm-relu",
     "graph @g(%x: f32[1, 16, 4, 4]) {\n  %f = Flatten(%x)\n  %w = const f32[256, 8] splat(0.01)\n"
     "  %b = const f32[8] splat(0.5)\n  %m = MatMul(%f, %w)\n  %a = Add(%m, %b)\n"
     "  %y = Relu(%a)\n  return %y\n}\n"},
    {"pools",
     "graph @g(%x: f32[1, 16, 4, 4]) {\n  %p = MaxPool(%x) {kernel_shape = [2, 2], strides = [2, "
     "2]}\n"
     "  %q = GlobalAveragePool(%x)\n  %r = Relu(%q)\n  return %p, %r\n}\n"},
    {"maxpool-padded",
     "graph @g(%x: f32[1, 16, 4, 4]) {\n  %y = MaxPool(%x) {kernel_shape = [3, 3], pads = [1, 1, "
     "1, 1]}\n  return %y\n}\n"},
    {"softmax",
     "graph @g(%x: f32[1, 16, 4, 4]) {\n  %y = Softmax(%x) {axis = 1}\n  return %y\n}\n"},
    {"add-relu",
     "graph @g(%x: f32[1, 16, 4, 4], %z: f32[1, 16, 4, 4]) {\n  %a = Add(%x, %z)\n"
     "  %y = Relu(%a)\n  return %y\n}\n"},
};

/// Ordinary values in [-2, 2] with NaN, +inf and -inf scattered among them,
/// one of each per channel at least.
Tensor hostileInput(const std::vector<int64_t>& dims, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  std::uniform_real_distribution<float> value(-2, 2);
  const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity()};
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 7 == 3 ? special[(i / 7) % 3] : value(rng);
  return Tensor::fromVector<float>(DataType::kFloat32, dims, v);
}

/// "" when `got` is the reference's answer `want`, else the first element
/// that is not.
std::string sameAnswer(const Tensor& want, const Tensor& got) {
  if (got.dims() != want.dims()) return "dims differ";
  std::vector<float> w(static_cast<size_t>(want.numElements())), g(w.size());
  std::memcpy(w.data(), want.bytes().data(), w.size() * 4);
  std::memcpy(g.data(), got.bytes().data(), g.size() * 4);
  for (size_t i = 0; i < w.size(); ++i) {
    const bool same = std::isnan(w[i])   ? std::isnan(g[i])
                      : std::isinf(w[i]) ? g[i] == w[i]
                                         : std::abs(g[i] - w[i]) <= 1e-3f * (1 + std::abs(w[i]));
    if (!same)
      return "element " + std::to_string(i) + ": reference " + std::to_string(w[i]) + ", got " +
             std::to_string(g[i]);
  }
  return {};
}

StatusOr<std::vector<runtime::NamedTensor>> runOn(const std::string& backend, const Model& m,
                                                  const std::vector<runtime::NamedTensor>& in) {
  api::InferenceOptions o;
  o.backends = backend;
  o.threads = 2;
  o.pluginSearchPath = {kPluginDir};
  StatusOr<std::unique_ptr<api::InferenceSession>> s =
      api::InferenceSession::create(parseGraphOrThrow(m.text), o);
  if (!s.isOk()) return s.status();
  StatusOr<runtime::RunResult> r = (*s)->run(in);
  if (!r.isOk()) return r.status();
  return std::move(r.value().outputs);
}

/// Every backend gives the reference's answer on inputs holding NaN and
/// infinities, NaN in the same places.
TEST(NanInfBackends, EveryBackendGivesTheReferencesAnswer) {
  std::printf("seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  ASSERT_FALSE(backends().empty()) << "no plugin in " << kPluginDir;
  for (const Model& m : kModels) {
    std::vector<runtime::NamedTensor> in;
    const std::unique_ptr<Graph> graph = parseGraphOrThrow(m.text);
    for (const Value* v : graph->inputs())
      in.push_back({v->name(), hostileInput({1, 16, 4, 4}, rng)});
    StatusOr<std::vector<runtime::NamedTensor>> want = runOn("", m, in);
    ASSERT_TRUE(want.isOk()) << m.name << ": " << want.status().message();
    for (const std::string& b : backends()) {
      SCOPED_TRACE(std::string(m.name) + " on " + b);
      StatusOr<std::vector<runtime::NamedTensor>> got = runOn(b, m, in);
      ASSERT_TRUE(got.isOk()) << got.status().message();
      ASSERT_EQ(got->size(), want->size());
      for (size_t o = 0; o < want->size(); ++o)
        EXPECT_EQ(sameAnswer((*want)[o].tensor, (*got)[o].tensor), "") << "output " << o;
    }
  }
  // What must not pass: a wrong answer (NaN made 0, as Relu on oneDNN did).
  Tensor nan = Tensor::fromVector<float>(DataType::kFloat32, {1}, {std::nanf("")});
  Tensor zero = Tensor::fromVector<float>(DataType::kFloat32, {1}, {0.0f});
  EXPECT_NE(sameAnswer(nan, zero), "");
}

}  // namespace
}  // namespace subgraph
