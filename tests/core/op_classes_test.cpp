//===- tests/core/op_classes_test.cpp - Generated typed node classes ------===//
//
// Checks what opgen generates for each op: typed accessors with defaults,
// isa/dyn_cast, hash and equality over effective attributes, clone, print,
// the create<Op>() builders and schema-driven verify(). Each test builds a
// tiny graph (sketched above it) and checks one behaviour.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/op_classes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "subgraph/ir/op_schema_builder.h"
#include "subgraph/ir/shape_inference.h"
#include "subgraph/ir/text_format.h"

namespace subgraph {
namespace {

using ::testing::HasSubstr;

TensorType f32(Shape shape) { return TensorType(DataType::kFloat32, std::move(shape)); }

Tensor weights(std::vector<int64_t> dims) {
  return Tensor::splat(DataType::kFloat32, std::move(dims), 0.5);
}

//   %x [1, 3, 8, 8] --+
//   %w [4, 3, 3, 3] --+--> Conv -> %y
/// Unset attributes read as ONNX defaults; set ones read back; attributes
/// without a default read as nullopt.
TEST(OpClasses, ConvAccessorsReturnDefaultsAndSetValues) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 3, 8, 8]) {
      %w = const f32[4, 3, 3, 3] splat(0.5)
      %y = Conv(%x, %w) @conv
      return %y
    })");
  auto* conv = dyn_cast<ConvNode>(g->findNode("conv"));
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->getX(), g->inputs()[0]);
  EXPECT_EQ(conv->getW(), g->findValue("w"));
  EXPECT_EQ(conv->getB(), nullptr);
  EXPECT_EQ(conv->getY(), g->findValue("y"));
  EXPECT_EQ(conv->getGroup(), 1);
  EXPECT_EQ(conv->getAutoPad(), "NOTSET");
  EXPECT_FALSE(conv->getStrides().has_value());

  conv->setStrides({2, 2});
  conv->setGroup(1);
  conv->setAutoPad("SAME_UPPER");
  EXPECT_EQ(conv->getStrides(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(conv->getAutoPad(), "SAME_UPPER");
  EXPECT_EQ(conv->attr("strides")->asInts(), (std::vector<int64_t>{2, 2}));
}

//   %x -> Relu -> %y
/// isa/dyn_cast use the op key: a Relu is a ReluNode and not a ConvNode.
TEST(OpClasses, IsaAndDynCastDistinguishOps) {
  Graph g;
  Value* x = g.addInput("x", f32({2}));
  Node* relu = g.addNode("Relu", {x});
  EXPECT_TRUE(isa<ReluNode>(relu));
  EXPECT_FALSE(isa<ConvNode>(relu));
  EXPECT_EQ(dyn_cast<ConvNode>(relu), nullptr);
  EXPECT_EQ(dyn_cast<ReluNode>(relu)->getX(), x);
  EXPECT_FALSE(isa<ReluNode>(static_cast<Node*>(nullptr)));
  // The "ai.onnx" spelling of the domain is the same op.
  Node* relu2 = g.addNode("ai.onnx.Relu", {x});
  EXPECT_TRUE(isa<ReluNode>(relu2));
}

//   %a, %b, %c -> Concat -> %y;   %d -> Slice(starts/ends as attributes)
/// Variadic operands read as a span; an attribute that shares its name with
/// an input (Slice's opset-1 starts) gets the Attr suffix.
TEST(OpClasses, VariadicAndRenamedAccessors) {
  Graph g;
  Value* a = g.addInput("a", f32({1, 2}));
  Value* b = g.addInput("b", f32({1, 3}));
  Value* c = g.addInput("c", f32({1, 4}));
  ConcatNode* concat = createConcat(g, {a, b, c}, {.axis = 1});
  ASSERT_EQ(concat->getInputs().size(), 3u);
  EXPECT_EQ(concat->getInputs()[2], c);
  EXPECT_EQ(concat->getAxis(), 1);

  SliceNode* slice = createSlice(g, a, nullptr, nullptr, nullptr, nullptr,
                                 {.axes = std::vector<int64_t>{1},
                                  .ends = std::vector<int64_t>{1},
                                  .starts = std::vector<int64_t>{0}});
  EXPECT_EQ(slice->getStarts(), nullptr);
  EXPECT_EQ(slice->getStartsAttr(), (std::vector<int64_t>{0}));
  EXPECT_EQ(slice->getOutput()->type(), f32({1, 1}));
}

/// A required attribute that is absent throws naming node and attribute;
/// an attribute of the wrong kind throws too.
TEST(OpClasses, GettersRejectMissingRequiredAndWrongKind) {
  Graph g;
  Value* x = g.addInput("x", f32({2}));
  auto* cast = static_cast<CastNode*>(g.addNode("Cast", {x}, 1, {}, "cast"));
  try {
    (void)cast->getTo();
    FAIL() << "getTo() on a Cast without 'to' must throw";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("Cast node 'cast': required attribute 'to' is missing"));
  }
  auto* conv = static_cast<ConvNode*>(g.addNode("Conv", {x, x}, 1, {{"group", std::string("2")}}));
  EXPECT_THROW((void)conv->getGroup(), Error);
}

//   %x, %w -> Conv(strides [2, 2]) -> %y1;  same again -> %y2;  group = 1 -> %y3
/// Equal attributes and inputs give equal nodes and hashes; spelling out a
/// default does not matter; a different attribute does.
TEST(OpClasses, HashAndEqualityUseEffectiveAttributes) {
  Graph g;
  Value* x = g.addInput("x", f32({1, 3, 8, 8}));
  Value* w = g.addInitializer("w", weights({4, 3, 3, 3}));
  ConvNode* a = createConv(g, x, w, nullptr, {.strides = std::vector<int64_t>{2, 2}});
  ConvNode* b = createConv(g, x, w, nullptr, {.strides = std::vector<int64_t>{2, 2}});
  ConvNode* explicitDefault =
      createConv(g, x, w, nullptr, {.group = 1, .strides = std::vector<int64_t>{2, 2}});
  ConvNode* other = createConv(g, x, w, nullptr, {.strides = std::vector<int64_t>{1, 1}});
  EXPECT_TRUE(a->isEqual(*b));
  EXPECT_EQ(a->hash(), b->hash());
  EXPECT_TRUE(a->isEqual(*explicitDefault));
  EXPECT_EQ(a->hash(), explicitDefault->hash());
  EXPECT_FALSE(a->isEqual(*other));
  EXPECT_NE(a->hash(), other->hash());

  Value* x2 = g.addInput("x2", f32({1, 3, 8, 8}));
  ConvNode* otherInput = createConv(g, x2, w, nullptr, {.strides = std::vector<int64_t>{2, 2}});
  EXPECT_FALSE(a->isEqual(*otherInput));
}

//   main: %x -> LeakyRelu(alpha 0.2) -> %y        copy: %z -> LeakyRelu -> %y
/// clone() copies op, name, attributes and output types into another graph
/// and reads the given inputs there.
TEST(OpClasses, CloneCopiesIntoAnotherGraph) {
  Graph g;
  Value* x = g.addInput("x", f32({4}));
  LeakyReluNode* leaky = createLeakyRelu(g, x, {.alpha = 0.2f}, {.name = "act"});
  Graph copy("copy");
  Value* z = copy.addInput("z", f32({4}));
  LeakyReluNode* cloned = leaky->clone(copy, {z});
  EXPECT_EQ(cloned->graph(), &copy);
  EXPECT_EQ(cloned->getX(), z);
  EXPECT_EQ(cloned->getAlpha(), 0.2f);
  EXPECT_EQ(cloned->name(), "act");
  EXPECT_EQ(cloned->getY()->type(), f32({4}));
  EXPECT_EQ(cloned->getY()->name(), leaky->getY()->name());
  EXPECT_THROW(leaky->clone(copy, {}), Error);
}

//   %x, %w, _ -> Conv(strides [2, 2]) @conv -> %y
/// print() shows every effective attribute, defaults included, and marks
/// omitted inputs with '_'.
TEST(OpClasses, PrintShowsEffectiveAttributes) {
  Graph g;
  Value* x = g.addInput("x", f32({1, 3, 8, 8}));
  Value* w = g.addInitializer("w", weights({4, 3, 3, 3}));
  ConvNode* conv =
      createConv(g, x, w, nullptr, {.strides = std::vector<int64_t>{2, 2}}, {.name = "conv"});
  g.renameValue(conv->getY(), "y");
  std::ostringstream os;
  conv->print(os);
  EXPECT_EQ(os.str(),
            "%y: f32[1, 4, 3, 3] = Conv(%x, %w) {auto_pad = \"NOTSET\", group = 1, "
            "strides = [2, 2]} @conv");
  Value* b = g.addInitializer("b", weights({4}));
  ConvNode* withBias = createConv(g, x, w, b);
  std::ostringstream os2;
  withBias->print(os2);
  EXPECT_THAT(os2.str(), HasSubstr("Conv(%x, %w, %b)"));
}

//   %x, %w -> Conv {group = "2"} @conv   (a string where an int belongs)
/// print(), hash() and isEqual() do not throw on mistyped attributes: they
/// fall back to the raw attributes.
TEST(OpClasses, DoesNotThrowOnMistypedAttributes) {
  Graph g;
  Value* x = g.addInput("x", f32({1, 4, 8, 8}));
  auto* conv = static_cast<ConvNode*>(
      g.addNode("Conv", {x, x}, 1, {{"group", std::string("2")}, {"alpha", 0.5f}}, "conv"));
  g.renameValue(conv->getY(), "y");
  std::ostringstream os;
  EXPECT_NO_THROW(conv->print(os));
  EXPECT_EQ(os.str(), "%y = Conv(%x, %x) {group = \"2\", alpha = 0.5} @conv");
  EXPECT_NO_THROW((void)conv->hash());
  EXPECT_TRUE(conv->isEqual(*conv));
  EXPECT_THAT(conv->verify().message(), HasSubstr("attribute 'group' is string, expected int"));
}

//   %x [N, 3, 224, 224] -> Conv(7x7, s2, p3) -> Relu -> MaxPool(3x3, s2, p1)
/// Builders infer output types, so models can be assembled in code.
TEST(OpClasses, BuildersInferTypes) {
  Graph g;
  Value* x = g.addInput("x", f32({Dim::symbol("N"), 3, 224, 224}));
  Value* w = g.addInitializer("w", weights({64, 3, 7, 7}));
  Value* y = createConv(g, x, w, nullptr, {.pads = {{3, 3, 3, 3}}, .strides = {{2, 2}}})->getY();
  y = createRelu(g, y)->getY();
  y = createMaxPool(g, y,
                    {.kernelShape = std::vector<int64_t>{3, 3},
                     .pads = std::vector<int64_t>{1, 1, 1, 1},
                     .strides = std::vector<int64_t>{2, 2}})
          ->getY();
  EXPECT_EQ(y->type(), f32({Dim::symbol("N"), 64, 56, 56}));

  SplitNode* split = createSplit(g, y, nullptr, {.axis = 1}, {.numOutputs = 2});
  ASSERT_EQ(split->getOutputs().size(), 2u);
  EXPECT_EQ(split->getOutputs()[1]->type(), f32({Dim::symbol("N"), 32, 56, 56}));
}

//   %x [1, 3, 8, 8], %w [4, 5, 3, 3] -> Conv  (3 channels vs 5)
/// A builder whose node fails inference throws and leaves the graph as it
/// was; a null required input throws before anything is added.
TEST(OpClasses, DoesNotAddNodeThatFailsInference) {
  Graph g;
  Value* x = g.addInput("x", f32({1, 3, 8, 8}));
  Value* w = g.addInitializer("w", weights({4, 5, 3, 3}));
  try {
    createConv(g, x, w, nullptr, {}, {.name = "bad"});
    FAIL() << "a channel mismatch must throw";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("Conv node 'bad': X has 3 channels"));
  }
  EXPECT_EQ(g.numNodes(), 0u);
  EXPECT_THROW(createRelu(g, nullptr), Error);
  EXPECT_THROW(createRelu(g, x, {.numOutputs = 2}), Error);
  EXPECT_EQ(g.numNodes(), 0u);
  // Without inference the same node is added, untyped.
  ConvNode* unchecked = createConv(g, x, w, nullptr, {}, {.inferTypes = false});
  EXPECT_TRUE(unchecked->getY()->type().isUnknown());
}

//   %x [1, 3, 8, 8], %w [4, 5, 3, 3] -> Conv
/// verify() runs the schema checks and then Conv's own rules.
TEST(OpClasses, VerifyRunsConvRules) {
  Graph g;
  Value* x = g.addInput("x", f32({1, 3, 8, 8}));
  Value* w = g.addInitializer("w", weights({4, 5, 3, 3}));
  auto* conv = static_cast<ConvNode*>(g.addNode("Conv", {x, w}, 1, {}, "conv"));
  Status s = conv->verify();
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.message(), HasSubstr("Conv node 'conv': X has 3 channels but W [4, 5, 3, 3]"));

  Value* good = g.addInitializer("good", weights({4, 3, 3, 3}));
  auto* ok = static_cast<ConvNode*>(g.addNode("Conv", {x, good}));
  EXPECT_TRUE(ok->verify().isOk()) << ok->verify().message();
  ok->setStrides({1, 1, 1});
  EXPECT_THAT(ok->verify().message(), HasSubstr("strides [1, 1, 1] has 3 entries, expected 2"));
}

/// The schema checks name what is wrong: counts, missing required inputs
/// and attributes, unknown attributes, wrong kinds and element types.
TEST(OpClasses, VerifyAgainstSchemaReportsEachProblem) {
  Graph g;
  Value* x = g.addInput("x", f32({2}));
  Value* h = g.addInput("h", TensorType(DataType::kFloat16, {2}));
  Value* i = g.addInput("i", TensorType(DataType::kInt64, {2}));
  auto message = [](const Node* n) { return verifyAgainstSchema(*n).message(); };
  EXPECT_THAT(message(g.addNode("Relu", {x, x}, 1, {}, "r")),
              HasSubstr("Relu node 'r': has 2 inputs, expected 1"));
  EXPECT_THAT(message(g.addNode("Conv", {x, nullptr}, 1, {}, "c")),
              HasSubstr("required input 'W' is missing"));
  EXPECT_THAT(message(g.addNode("Cast", {x}, 1, {}, "k")),
              HasSubstr("required attribute 'to' is missing"));
  EXPECT_THAT(message(g.addNode("Relu", {x}, 1, {{"alpha", 1.0f}}, "u")),
              HasSubstr("unknown attribute 'alpha'"));
  EXPECT_THAT(message(g.addNode("Softmax", {x}, 1, {{"axis", 1.0f}}, "s")),
              HasSubstr("attribute 'axis' is float, expected int"));
  EXPECT_THAT(message(g.addNode("Sqrt", {i}, 1, {}, "q")),
              HasSubstr("input 'X' has element type i64, not allowed by type constraint T"));
  EXPECT_THAT(message(g.addNode("Add", {x, h}, 1, {}, "a")),
              HasSubstr("input 'B' is f16 but another operand of type T is f32"));
  EXPECT_THAT(message(g.addNode("Split", {x}, 0, {}, "p")),
              HasSubstr("has 0 outputs, expected at least 1"));
  EXPECT_TRUE(verifyAgainstSchema(*g.addNode("Add", {x, x})).isOk());
  EXPECT_EQ(verifyAgainstSchema(*g.addNode("nobody.Knows", {x})).code(), StatusCode::kNotFound);
}

//   %x [1, 3, 8, 8], %w -> test.ConvRelu(strides [2, 2]) -> %y
/// A backend op defined at run time with OpSchemaBuilder reuses Conv's
/// attributes and inference, and gets schema verification.
TEST(OpSchemaBuilder, RegistersBackendOpThatReusesConv) {
  Status s = OpSchemaBuilder("test_builder", "ConvRelu")
                 .doc("Conv followed by Relu.")
                 .input("X", "T")
                 .input("W", "T")
                 .optionalInput("B", "T")
                 .output("Y", "T")
                 .typeConstraint("T", {DataType::kFloat32})
                 .attributesFrom("Conv")
                 .attr("alpha", AttrKind::kFloat, 0.0f)
                 .inferFrom("Conv")
                 .registerIn(OpRegistry::global());
  ASSERT_TRUE(s.isOk()) << s.message();
  const OpSchema* schema = OpRegistry::global().lookup("test_builder", "ConvRelu");
  ASSERT_NE(schema, nullptr);
  EXPECT_EQ(std::get<int64_t>(*schema->findAttr("group")->defaultValue), 1);

  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 3, 8, 8]) {
      %w = const f32[4, 3, 3, 3] splat(0.5)
      %y = test_builder.ConvRelu(%x, %w) {strides = [2, 2]} @fused
      return %y
    })");
  ASSERT_TRUE(inferShapes(*g).isOk());
  EXPECT_EQ(g->findValue("y")->type(), f32({1, 4, 3, 3}));
  Node* fused = g->findNode("fused");
  EXPECT_TRUE(verifyAgainstSchema(*fused).isOk());
  fused->setAttr("alpha", int64_t{1});
  EXPECT_THAT(verifyAgainstSchema(*fused).message(),
              HasSubstr("test_builder.ConvRelu node 'fused': attribute 'alpha' is int"));
  // Registering the same op twice fails.
  EXPECT_FALSE(OpSchemaBuilder("test_builder", "ConvRelu")
                   .output("Y")
                   .registerIn(OpRegistry::global())
                   .isOk());
}

/// Builder mistakes come back from build() as one error naming the op.
TEST(OpSchemaBuilder, ReportsFirstMistake) {
  auto error = [](const OpSchemaBuilder& b) { return b.build().status().message(); };
  EXPECT_EQ(error(OpSchemaBuilder("x", "A").output("Y").attr("k", AttrKind::kInt, 1.5f)),
            "op schema 'x.A': attribute 'k' is int but its default is float");
  EXPECT_EQ(error(OpSchemaBuilder("x", "B").input("X").input("X").output("Y")),
            "op schema 'x.B': operand 'X' is declared twice");
  EXPECT_EQ(error(OpSchemaBuilder("x", "C").variadicInput("Xs").input("Z").output("Y")),
            "op schema 'x.C': operand 'Z' follows variadic operand 'Xs'; only the last operand "
            "may be variadic");
  EXPECT_EQ(error(OpSchemaBuilder("x", "D").output("Y").inferFrom("NoSuchOp")),
            "op schema 'x.D': inferFrom: op 'NoSuchOp' is not registered");
  EXPECT_EQ(error(OpSchemaBuilder("x", "E").input("X", "T").output("Y")),
            "op schema 'x.E': operand 'X' names undefined type constraint 'T'");
  EXPECT_EQ(error(OpSchemaBuilder("x", "F").input("X")), "op schema 'x.F': it declares no outputs");
  // An integer default for a float attribute is converted, not rejected.
  StatusOr<OpSchema> ok =
      OpSchemaBuilder("x", "G").output("Y").attr("f", AttrKind::kFloat, 2).build();
  ASSERT_TRUE(ok.isOk());
  EXPECT_EQ(std::get<float>(*ok.value().findAttr("f")->defaultValue), 2.0f);
}

}  // namespace
}  // namespace subgraph
