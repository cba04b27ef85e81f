//===- runtime/reference/gelu_f32.cpp - GELU on f32, vectorized -----------===//
//
// See gelu_f32.h. The erf approximation is x * P(x^2) / Q(x^2) on
// [-4, 4] (erf is 1 to f32 precision past 4), P of degree 6 and Q of degree
// 5 in x^2, its coefficients from a weighted least-squares fit of the
// relative error against double-precision erf (2e-9 in double, 5 ulp when
// evaluated in f32 as here).
//
//===----------------------------------------------------------------------===//
#include "reference/gelu_f32.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/kernel_util.h"

namespace subgraph::runtime::reference {
namespace {

inline float fromBits(int32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// e^x within 2 ulp: x = n ln 2 + r, Cephes' polynomial for e^r, 2^n from
// the exponent bits; 0 below -87.34, +inf above 88.72.
inline float exponential(float x) {
  const float c = std::min(std::max(x, -87.33654f), 88.72283f);
  const float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to integer
  const float r = c - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  float y = p * fromBits((static_cast<int32_t>(n) + 127) << 23);
  y = x < -87.33654f ? 0.0f : y;
  return x > 88.72283f ? std::numeric_limits<float>::infinity() : y;
}

inline float erfApprox(float x) {
  const float a = std::min(std::max(x, -4.0f), 4.0f);
  const float z = a * a;
  float p = -1.326969845e-08f;
  p = p * z + 4.698306439e-06f;
  p = p * z + 3.800964505e-04f;
  p = p * z + 3.850030967e-03f;
  p = p * z + 5.432493994e-02f;
  p = p * z + 1.851760049e-01f;
  p = p * z + 1.128379169e+00f;
  float q = 6.323925747e-05f;
  q = q * z + 1.308314687e-03f;
  q = q * z + 1.546459736e-02f;
  q = q * z + 1.139574746e-01f;
  q = q * z + 4.974413784e-01f;
  q = q * z + 1.0f;
  // NaN passes the clamps as its first operand would not: keep it NaN.
  return x != x ? x : a * p / q;
}

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// GELU's limit at -inf is 0 (the formulas give -inf * 0, NaN).
SUBGRAPH_ISA_CLONES
void geluErfRange(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = 0.5f * x[i] * (1.0f + erfApprox(x[i] * 0.70710677f));
    y[i] = x[i] == kMinusInf ? -0.0f : v;
  }
}

SUBGRAPH_ISA_CLONES
void geluTanhRange(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float u = 0.7978845608f * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
    const float v = x[i] / (1.0f + exponential(-2.0f * u));
    y[i] = x[i] == kMinusInf ? -0.0f : v;
  }
}

}  // namespace

void geluErfF32(const float* x, float* y, int64_t n) {
  parallelFor(n, 32,
              [&](int64_t begin, int64_t end) { geluErfRange(x + begin, y + begin, end - begin); });
}

void geluTanhF32(const float* x, float* y, int64_t n) {
  parallelFor(
      n, 32, [&](int64_t begin, int64_t end) { geluTanhRange(x + begin, y + begin, end - begin); });
}

}  // namespace subgraph::runtime::reference
