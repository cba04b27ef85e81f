//===- tests/runtime/runtime_test_util.h - Helpers for runtime tests -*- C++ -*-===//
//
// Small helpers shared by the runtime tests: making tensors, reading them
// back, comparing them, and compiling a text-format graph into a session.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "subgraph/ir/text_format.h"
#include "subgraph/runtime/session.h"

namespace subgraph::runtime::testing {

/// An f32 tensor with the given dims and values.
inline Tensor f32(std::vector<int64_t> dims, std::vector<float> values) {
  return Tensor::fromVector<float>(DataType::kFloat32, std::move(dims), values);
}

/// An i64 tensor.
inline Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Tensor::fromVector<int64_t>(DataType::kInt64, std::move(dims), values);
}

/// An i32 tensor.
inline Tensor i32(std::vector<int64_t> dims, std::vector<int32_t> values) {
  return Tensor::fromVector<int32_t>(DataType::kInt32, std::move(dims), values);
}

/// Uniform random f32 values in [-1, 1) from `rng`.
inline Tensor randomF32(std::vector<int64_t> dims, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return f32(std::move(dims), v);
}

/// The elements of an f32 tensor.
inline std::vector<float> values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

/// Largest absolute difference between two f32 tensors of the same dims.
inline double maxAbsDiff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.dims(), b.dims());
  auto x = a.data<float>(), y = b.data<float>();
  double m = 0;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i)
    m = std::max(m, static_cast<double>(std::fabs(x[i] - y[i])));
  return m;
}

/// Parses `text` and compiles it into a session with `options`.
inline std::unique_ptr<Session> compileText(const std::string& text, SessionOptions options = {}) {
  auto session = std::make_unique<Session>(std::move(options));
  Status st = session->load(parseGraphOrThrow(text));
  EXPECT_TRUE(st.isOk()) << st.message();
  st = session->compile();
  EXPECT_TRUE(st.isOk()) << st.message();
  return session;
}

/// Runs one request and returns the outputs; fails the test on error.
inline std::vector<NamedTensor> runOk(const Session& session,
                                      const std::vector<NamedTensor>& inputs,
                                      const RunOptions& options = {}) {
  StatusOr<RunResult> r = session.run(inputs, options);
  EXPECT_TRUE(r.isOk()) << r.status().message();
  return r.isOk() ? r.value().outputs : std::vector<NamedTensor>{};
}

}  // namespace subgraph::runtime::testing
