//===- tests/core/op_registry_test.cpp - The built-in op table ------------===//
//
// Checks that registerBuiltinOps() registers every op the project promises,
// with ONNX's attribute defaults, and that schemas are well formed.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "subgraph/ir/op_classes.h"
#include "subgraph/ir/op_schema.h"

namespace subgraph {
namespace {

/// Every op the op table must define (ONNX opset 11-17 semantics).
TEST(OpRegistry, ContainsEveryPromisedOp) {
  const char* const kOps[] = {"Conv",
                              "ConvTranspose",
                              "BatchNormalization",
                              "Relu",
                              "LeakyRelu",
                              "PRelu",
                              "Clip",
                              "Sigmoid",
                              "HardSigmoid",
                              "HardSwish",
                              "Tanh",
                              "Erf",
                              "Add",
                              "Sub",
                              "Mul",
                              "Div",
                              "Pow",
                              "Sqrt",
                              "MatMul",
                              "Gemm",
                              "MaxPool",
                              "AveragePool",
                              "GlobalAveragePool",
                              "ReduceMean",
                              "Softmax",
                              "LayerNormalization",
                              "Concat",
                              "Split",
                              "Slice",
                              "Reshape",
                              "Flatten",
                              "Transpose",
                              "Squeeze",
                              "Unsqueeze",
                              "Gather",
                              "Shape",
                              "Cast",
                              "Constant",
                              "Identity",
                              "Resize",
                              "Pad",
                              "Where",
                              "Equal",
                              "Max",
                              "Min",
                              "Exp",
                              "Log",
                              "Neg",
                              "Abs",
                              "Reciprocal",
                              "Expand",
                              "ConstantOfShape",
                              "Range",
                              "If",
                              "Loop",
                              "Dropout",
                              "Less",
                              "Greater",
                              "Not",
                              "ReduceSum",
                              "ReduceMax",
                              "GlobalMaxPool",
                              "Tile",
                              "Sum",
                              "Sin",
                              "Cos"};
  OpRegistry& registry = OpRegistry::global();
  for (const char* op : kOps) {
    const OpSchema* schema = registry.lookup("", op);
    ASSERT_NE(schema, nullptr) << op;
    EXPECT_TRUE(schema->factory) << op << " has no typed node factory";
    EXPECT_TRUE(schema->infer) << op << " has no shape inference";
    EXPECT_FALSE(schema->doc.empty()) << op;
  }
  EXPECT_EQ(registry.lookup("ai.onnx", "Conv"), registry.lookup("", "Conv"));
}

/// Attribute defaults follow ONNX.
TEST(OpRegistry, DefaultsFollowOnnx) {
  OpRegistry& registry = OpRegistry::global();
  auto defaultOf = [&](const char* op, const char* attr) -> AttrValue {
    const OpSchema* schema = registry.lookup("", op);
    EXPECT_NE(schema, nullptr) << op;
    const AttrSpec* spec = schema ? schema->findAttr(attr) : nullptr;
    EXPECT_NE(spec, nullptr) << op << "." << attr;
    EXPECT_TRUE(spec && spec->defaultValue) << op << "." << attr;
    return spec && spec->defaultValue ? *spec->defaultValue : AttrValue();
  };
  EXPECT_EQ(std::get<std::string>(defaultOf("Conv", "auto_pad")), "NOTSET");
  EXPECT_EQ(std::get<int64_t>(defaultOf("Conv", "group")), 1);
  EXPECT_EQ(std::get<float>(defaultOf("Gemm", "alpha")), 1.0f);
  EXPECT_EQ(std::get<float>(defaultOf("Gemm", "beta")), 1.0f);
  EXPECT_EQ(std::get<int64_t>(defaultOf("Gemm", "transA")), 0);
  EXPECT_EQ(std::get<int64_t>(defaultOf("Softmax", "axis")), -1);
  EXPECT_EQ(std::get<int64_t>(defaultOf("LayerNormalization", "axis")), -1);
  EXPECT_EQ(std::get<float>(defaultOf("LayerNormalization", "epsilon")), 1e-5f);
  EXPECT_EQ(std::get<float>(defaultOf("BatchNormalization", "epsilon")), 1e-5f);
  EXPECT_EQ(std::get<float>(defaultOf("BatchNormalization", "momentum")), 0.9f);
  EXPECT_EQ(std::get<float>(defaultOf("LeakyRelu", "alpha")), 0.01f);
  EXPECT_EQ(std::get<int64_t>(defaultOf("ReduceMean", "keepdims")), 1);
  EXPECT_EQ(std::get<int64_t>(defaultOf("Flatten", "axis")), 1);
  EXPECT_EQ(std::get<std::string>(defaultOf("Resize", "mode")), "nearest");
  EXPECT_EQ(std::get<std::string>(defaultOf("Pad", "mode")), "constant");
}

/// Ops whose ONNX form moved an attribute to an input accept both forms.
TEST(OpRegistry, AcceptsAttributeAndInputForms) {
  OpRegistry& registry = OpRegistry::global();
  const std::pair<const char*, const char*> kMoved[] = {
      {"Slice", "starts"}, {"Squeeze", "axes"}, {"Unsqueeze", "axes"}, {"ReduceMean", "axes"},
      {"Split", "split"},  {"Clip", "min"},     {"Pad", "pads"}};
  for (const auto& [op, name] : kMoved) {
    const OpSchema* schema = registry.lookup("", op);
    ASSERT_NE(schema, nullptr) << op;
    EXPECT_NE(schema->findAttr(name), nullptr) << op << " lacks attribute " << name;
    bool hasInput = false;
    for (const OperandSpec& in : schema->inputs)
      if (in.name == name) hasInput = in.arity == Arity::kOptional;
    EXPECT_TRUE(hasInput) << op << " lacks optional input " << name;
  }
}

/// Elementwise ops are flagged data-parallel; Conv and Softmax are not.
TEST(OpRegistry, FlagsDataParallelOps) {
  OpRegistry& registry = OpRegistry::global();
  for (const char* op : {"Relu", "Add", "Mul", "Sigmoid", "Where", "Cast", "Erf"})
    EXPECT_TRUE(registry.lookup("", op)->dataParallel) << op;
  for (const char* op : {"Conv", "Softmax", "MatMul", "Reshape", "ReduceMean"})
    EXPECT_FALSE(registry.lookup("", op)->dataParallel) << op;
}

/// docs/ops.md lists every built-in op (refresh it from the generated
/// <build>/generated/ops.md when the table changes).
TEST(OpRegistry, DocsListEveryBuiltinOp) {
  const char* env = std::getenv("SUBGRAPH_SOURCE_DIR");
  std::filesystem::path root =
      env ? std::filesystem::path(env)
          : std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  std::ifstream in(root / "docs" / "ops.md");
  ASSERT_TRUE(in) << "cannot read " << (root / "docs" / "ops.md");
  std::stringstream text;
  text << in.rdbuf();
  for (const OpSchema* schema : OpRegistry::global().schemas()) {
    if (!schema->domain.empty()) continue;  // ops other tests register at run time
    EXPECT_NE(
        text.str().find("| " + schema->name + " | " + std::to_string(schema->sinceVersion) + " |"),
        std::string::npos)
        << schema->name << " (since " << schema->sinceVersion << ") is missing from docs/ops.md";
  }
}

}  // namespace
}  // namespace subgraph
