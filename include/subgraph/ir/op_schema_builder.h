//===- subgraph/ir/op_schema_builder.h - Defining ops at run time -*- C++ -*-===//
//
// Built-in ops come from the op table at build time; backends define their
// own ops (fused kernels such as onednn.ConvBnRelu) at run time with this
// builder. The result is an ordinary OpSchema, so plugin nodes get the same
// schema-driven verification, attribute defaults, inference and printing as
// built-in ones:
//
//   Status s = OpSchemaBuilder("onednn", "ConvBnRelu")
//                  .doc("Conv, then inference-mode BatchNormalization, then Relu.")
//                  .input("X", "T").input("W", "T").optionalInput("B", "T")
//                  .output("Y", "T")
//                  .typeConstraint("T", {DataType::kFloat32, DataType::kBFloat16})
//                  .attributesFrom("Conv")
//                  .attr("alpha", AttrKind::kFloat, 0.0f)
//                  .inferFrom("Conv")
//                  .registerIn(OpRegistry::global());
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/attribute.h"
#include "subgraph/ir/op_schema.h"
#include "subgraph/ir/types.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// Fluent builder of an OpSchema. Mistakes (a default of the wrong kind, a
/// duplicate name, an unknown op to copy from) are collected and reported
/// by build() as one error naming the op, so a chain never throws.
class OpSchemaBuilder {
 public:
  /// Starts a schema for `domain`.`name` ("" or "ai.onnx" is ONNX's domain).
  OpSchemaBuilder(std::string domain, std::string name);

  /// The opset version the op first appeared in (default 1).
  OpSchemaBuilder& since(int version);
  /// A one-paragraph description of what the op computes.
  OpSchemaBuilder& doc(std::string text);
  /// Marks the op elementwise (output element i depends only on input
  /// element i after broadcasting); fusers rely on it.
  OpSchemaBuilder& dataParallel(bool value = true);

  /// A required input. `typeConstraint` names a typeConstraint(); empty
  /// allows any element type.
  OpSchemaBuilder& input(std::string name, std::string typeConstraint = {}, std::string doc = {});
  /// An input that may be omitted (null).
  OpSchemaBuilder& optionalInput(std::string name, std::string typeConstraint = {},
                                 std::string doc = {});
  /// Zero or more trailing inputs, at least `minCount` of them.
  OpSchemaBuilder& variadicInput(std::string name, std::string typeConstraint = {},
                                 int minCount = 1, std::string doc = {});
  /// A required output.
  OpSchemaBuilder& output(std::string name, std::string typeConstraint = {}, std::string doc = {});
  /// An output that may be left out.
  OpSchemaBuilder& optionalOutput(std::string name, std::string typeConstraint = {},
                                  std::string doc = {});
  /// Zero or more trailing outputs, at least `minCount` of them.
  OpSchemaBuilder& variadicOutput(std::string name, std::string typeConstraint = {},
                                  int minCount = 1, std::string doc = {});

  /// An attribute with a default. The default's kind must be `kind`; an
  /// integer default for a float attribute is converted.
  OpSchemaBuilder& attr(std::string name, AttrKind kind, AttrValue defaultValue,
                        std::string doc = {});
  /// An optional attribute without a default (absent means "not given").
  OpSchemaBuilder& optionalAttr(std::string name, AttrKind kind, std::string doc = {});
  /// An attribute every node must carry.
  OpSchemaBuilder& requiredAttr(std::string name, AttrKind kind, std::string doc = {});
  /// Copies every attribute (with defaults) of a registered op, e.g. the
  /// window attributes of "Conv" for a fused convolution.
  OpSchemaBuilder& attributesFrom(std::string_view op, std::string_view domain = {});

  /// Defines a named set of element types for operands to refer to.
  OpSchemaBuilder& typeConstraint(std::string name, std::vector<DataType> allowed);

  /// Shape and type inference for the op.
  OpSchemaBuilder& infer(InferFn fn);
  /// Reuses a registered op's inference, e.g. "Conv" for a Conv+Relu fusion.
  /// It reads attributes by name, so the new op should declare the same ones.
  OpSchemaBuilder& inferFrom(std::string_view op, std::string_view domain = {});
  /// Op-specific verification beyond what the schema already checks.
  OpSchemaBuilder& verify(VerifyFn fn);

  /// The finished schema, or the first mistake made while building it.
  StatusOr<OpSchema> build() const;
  /// build() and register the result; fails if the op is already defined.
  Status registerIn(OpRegistry& registry) const;

 private:
  OpSchemaBuilder& operand(std::vector<OperandSpec>& list, std::string name, Arity arity,
                           std::string typeConstraint, int minCount, std::string doc);
  OpSchemaBuilder& addAttr(AttrSpec spec);
  void error(std::string message);

  OpSchema schema_;
  std::string firstError_;
};

}  // namespace subgraph
