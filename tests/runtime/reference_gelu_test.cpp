//===- tests/runtime/reference_gelu_test.cpp - GELU on f32 ----------------===//
//
// The reference's vectorized f32 GELU (runtime/reference/gelu_f32.h)
// against GELU in double precision: both forms over [-12, 12], including
// values whose vector lanes straddle a chunk's tail, and the special values
// (NaN stays NaN, +inf is +inf, -inf is 0 or -0).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime_test_util.h"

namespace subgraph::runtime {
namespace {

using namespace testing;  // NOLINT

double geluExact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double geluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

std::vector<float> runGelu(const std::string& approximate, const std::vector<float>& x) {
  auto session = compileText("graph @g(%x: f32[" + std::to_string(x.size()) +
                             "]) opset(ai.onnx = 20) {\n %y = Gelu(%x) {approximate = \"" +
                             approximate + "\"}\n return %y\n}");
  auto out = runOk(*session, {{"x", f32({static_cast<int64_t>(x.size())}, x)}});
  return out.empty() ? std::vector<float>{} : values(out[0].tensor);
}

/// Within 1e-6 of the output's magnitude (at least 1e-6 absolute where
/// GELU is near 0) over [-12, 12]; 1001 values, an odd count, so the last
/// vector is partial.
TEST(ReferenceGelu, BothFormsMatchDoublePrecision) {
  std::vector<float> x;
  for (int i = 0; i <= 1000; ++i) x.push_back(-12.0f + 24.0f * static_cast<float>(i) / 1000.0f);
  x.push_back(1e-30f);
  x.push_back(-3e-8f);
  for (const char* form : {"none", "tanh"}) {
    std::vector<float> y = runGelu(form, x);
    ASSERT_EQ(y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      double want = std::string(form) == "none" ? geluExact(x[i]) : geluTanh(x[i]);
      EXPECT_NEAR(y[i], want, 1e-6 * std::max(1.0, std::fabs(want))) << form << " at x = " << x[i];
    }
  }
}

/// NaN stays NaN; +inf is +inf; -inf gives a zero (not NaN).
TEST(ReferenceGelu, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const char* form : {"none", "tanh"}) {
    std::vector<float> y = runGelu(form, {std::nanf(""), inf, -inf, 0.0f});
    ASSERT_EQ(y.size(), 4u);
    EXPECT_TRUE(std::isnan(y[0])) << form;
    EXPECT_EQ(y[1], inf) << form;
    EXPECT_EQ(y[2], 0.0f) << form;
    EXPECT_EQ(y[3], 0.0f) << form;
  }
}

}  // namespace
}  // namespace subgraph::runtime
