//===- tests/reliability/limits_test.cpp - Every resource limit, exceeded -===//
//
// Each configurable limit (model size, tensor bytes, node count, nesting
// depth, memory plan size), set just below what a small model needs, fails
// the load, import or compile with kLimitExceeded and a message naming the
// limit; set just at what the model needs, the same step succeeds. The
// limits live where the resource is spent: ImportOptions (ONNX),
// ParseOptions (text format) and SessionOptions (runtime memory plans).
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "subgraph/ir/text_format.h"
#include "subgraph/onnx/onnx_export.h"
#include "subgraph/onnx/onnx_import.h"
#include "subgraph/runtime/session.h"

namespace subgraph {
namespace {

using ::testing::HasSubstr;

//   %x [2, 4] -> Relu -> If(%c) { then: Neg, else: Identity } -> Add(%w) -> %y
//                          (%c: a bool constant; %w: 8 floats)
constexpr const char* kSmallModel = R"(
  graph @small(%x: f32[2, 4]) opset(ai.onnx = 17) {
    %w = const f32[2, 4] splat(0.5)
    %c = const bool[] [true]
    %r = Relu(%x) @relu
    %b: f32[2, 4] = If(%c) {else_branch = graph @keep() {
      %i: f32[2, 4] = Identity(%r) @identity
      return %i
    }, then_branch = graph @negate() {
      %n: f32[2, 4] = Neg(%r) @neg
      return %n
    }} @branch
    %y = Add(%b, %w) @add
    return %y
  })";

std::string smallModelBytes() {
  std::unique_ptr<Graph> g = parseGraphOrThrow(kSmallModel);
  StatusOr<std::string> bytes = exportOnnxBytes(*g);
  EXPECT_TRUE(bytes.isOk()) << bytes.status().message();
  return bytes.isOk() ? *bytes : std::string();
}

/// Imports the small model with `options` tweaked by `set`.
Status importWith(void (*set)(ImportOptions&, size_t modelBytes)) {
  std::string bytes = smallModelBytes();
  ImportOptions options;
  set(options, bytes.size());
  return importOnnxBytes(bytes, options).status();
}

void expectLimit(const Status& status, const std::string& limitName) {
  EXPECT_EQ(status.code(), StatusCode::kLimitExceeded) << status.message();
  EXPECT_THAT(status.message(), HasSubstr(limitName));
}

/// The model imports with every limit at its default.
TEST(LimitsTest, DefaultsAcceptTheSmallModel) {
  EXPECT_TRUE(importWith([](ImportOptions&, size_t) {}).isOk());
  EXPECT_TRUE(parseGraph(kSmallModel).isOk());
}

/// ONNX model size: one byte under the file's size is refused before parsing.
TEST(LimitsTest, OnnxModelBytes) {
  expectLimit(importWith([](ImportOptions& o, size_t n) { o.maxModelBytes = n - 1; }),
              "maxModelBytes");
  EXPECT_TRUE(importWith([](ImportOptions& o, size_t n) { o.maxModelBytes = n; }).isOk());
}

/// ONNX tensor bytes: the 32-byte weight is over a 31-byte limit.
TEST(LimitsTest, OnnxTensorBytes) {
  expectLimit(importWith([](ImportOptions& o, size_t) { o.maxTensorBytes = 31; }),
              "maxTensorBytes");
  EXPECT_TRUE(importWith([](ImportOptions& o, size_t) { o.maxTensorBytes = 32; }).isOk());
}

/// ONNX node count, nested nodes included: relu, branch, neg, identity, add.
TEST(LimitsTest, OnnxNodeCount) {
  expectLimit(importWith([](ImportOptions& o, size_t) { o.maxNodes = 4; }), "maxNodes");
  EXPECT_TRUE(importWith([](ImportOptions& o, size_t) { o.maxNodes = 5; }).isOk());
}

/// ONNX nesting depth: the If branches are depth 1.
TEST(LimitsTest, OnnxNestingDepth) {
  expectLimit(importWith([](ImportOptions& o, size_t) { o.maxSubgraphDepth = 0; }),
              "maxSubgraphDepth");
  EXPECT_TRUE(importWith([](ImportOptions& o, size_t) { o.maxSubgraphDepth = 1; }).isOk());
}

/// Text format: node count, nesting depth and constant bytes.
TEST(LimitsTest, TextFormatLimits) {
  ParseOptions nodes;
  nodes.maxNodes = 4;
  Status s = parseGraph(kSmallModel, nodes).status();
  EXPECT_FALSE(s.isOk());
  EXPECT_THAT(s.message(), HasSubstr("maxNodes"));
  nodes.maxNodes = 5;
  EXPECT_TRUE(parseGraph(kSmallModel, nodes).isOk());

  ParseOptions depth;
  depth.maxGraphDepth = 1;
  EXPECT_THAT(parseGraph(kSmallModel, depth).status().message(), HasSubstr("limit of 1"));

  ParseOptions constants;
  constants.maxConstantBytes = 31;
  EXPECT_THAT(parseGraph(kSmallModel, constants).status().message(), HasSubstr("limit of 31"));
}

/// Memory plan size: compile() plans a frame for the static input shape
/// and refuses it over SessionOptions::memoryLimitBytes; with no limit the
/// same graph compiles and runs.
TEST(LimitsTest, MemoryPlanBytes) {
  runtime::SessionOptions tight;
  tight.memoryLimitBytes = 16;
  runtime::Session limited(tight);
  ASSERT_TRUE(limited.load(parseGraphOrThrow(kSmallModel)).isOk());
  Status s = limited.compile();
  EXPECT_EQ(s.code(), StatusCode::kLimitExceeded) << s.message();
  EXPECT_THAT(s.message(), HasSubstr("memory limit of 16 bytes"));

  runtime::Session unlimited;
  ASSERT_TRUE(unlimited.load(parseGraphOrThrow(kSmallModel)).isOk());
  ASSERT_TRUE(unlimited.compile().isOk());
  auto out = unlimited.run({{"x", Tensor::splat(DataType::kFloat32, {2, 4}, 1.0)}});
  ASSERT_TRUE(out.isOk()) << out.status().message();
  EXPECT_FLOAT_EQ(out->outputs[0].tensor.data<float>()[0], -0.5f);
}

}  // namespace
}  // namespace subgraph
