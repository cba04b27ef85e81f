//===- subgraph/api/output_check.h - An output against the reference -*- C++ -*-===//
//
// How `subgraph run --check` judges an output against the reference
// backend's: element by element, with a tolerance relative to the element
// (fp32) or to the output's scale (reduced precision). Infinities and NaN
// compare exactly, since no tolerance relative to an infinite value means
// anything. `subgraph run --check` and the Python package both use it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

#include "subgraph/ir/tensor.h"

namespace subgraph::api {

/// What --check's tolerance is relative to: each element (|a-b| <= T*(1+|b|),
/// fp32) or the output's scale (|a-b| <= T*(1+max|b|), reduced precision).
enum class ToleranceOf { kElement, kScale };

/// The verdict on one output.
struct Comparison {
  std::string name;            ///< The output's name.
  double maxAbs = 0;           ///< Largest |a - b|; infinite for a non-finite mismatch.
  double maxRel = 0;           ///< Largest |a - b| / |b|.
  double maxRef = 0;           ///< Largest finite |b|: the output's scale.
  int64_t failing = 0;         ///< Elements past the tolerance.
  bool shapeMismatch = false;  ///< Dims or element type differ.
};

/// Compares `got` with the reference `want`. An element passes when both
/// are NaN, when both are the same infinity, or when both are finite and
/// within `tolerance` (relative per `of`); anything else fails.
Comparison compareOutput(const std::string& name, const Tensor& got, const Tensor& want,
                         double tolerance, ToleranceOf of);

/// The largest error as a share of the output's largest reference value; 0
/// for an all-zero reference with no error.
double scaledError(const Comparison& c);

}  // namespace subgraph::api
