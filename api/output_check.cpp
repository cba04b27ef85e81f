//===- api/output_check.cpp - An output against the reference ----------===//
//
// The comparison behind `run --check` and the Python package; see
// subgraph/api/output_check.h.
//
//===----------------------------------------------------------------------===//
#include "subgraph/api/output_check.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace subgraph::api {
namespace {

/// Element `i` as a double; a bool is 0 or 1.
double elementAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kBool
             ? static_cast<double>(t.bytes()[static_cast<size_t>(i)] != std::byte{0})
             : t.elementAsDouble(i);
}

}  // namespace

Comparison compareOutput(const std::string& name, const Tensor& got, const Tensor& want,
                         double tolerance, ToleranceOf of) {
  Comparison c;
  c.name = name;
  if (got.dims() != want.dims() || got.dtype() != want.dtype()) {
    c.shapeMismatch = true;
    c.failing = 1;
    return c;
  }
  const int64_t n = got.numElements();
  // The output's scale first: the reduced-precision bound needs it. Only
  // finite elements count: an infinite scale would make every bound
  // infinite and every element pass.
  for (int64_t i = 0; i < n; ++i)
    if (double b = elementAt(want, i); std::isfinite(b))
      c.maxRef = std::max(c.maxRef, std::fabs(b));
  for (int64_t i = 0; i < n; ++i) {
    double a = elementAt(got, i), b = elementAt(want, i);
    if (std::isnan(a) && std::isnan(b)) continue;
    // Infinities and NaN compare exactly: a tolerance relative to an
    // infinite reference would be infinite and accept anything.
    if (!std::isfinite(a) || !std::isfinite(b)) {
      if (a == b) continue;
      c.maxAbs = c.maxRel = std::numeric_limits<double>::infinity();
      ++c.failing;
      continue;
    }
    double abs = std::fabs(a - b);
    if (std::isnan(abs)) abs = std::numeric_limits<double>::infinity();
    c.maxAbs = std::max(c.maxAbs, abs);
    c.maxRel = std::max(c.maxRel, abs / std::max(std::fabs(b), 1e-12));
    if (abs > tolerance * (1 + (of == ToleranceOf::kScale ? c.maxRef : std::fabs(b)))) ++c.failing;
  }
  return c;
}

double scaledError(const Comparison& c) {
  if (c.maxRef > 0) return c.maxAbs / c.maxRef;
  return c.maxAbs > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

}  // namespace subgraph::api
