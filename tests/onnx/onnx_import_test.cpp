//===- tests/onnx/onnx_import_test.cpp - What the ONNX importer keeps -----===//
//
// Each test builds a tiny ModelProto, imports it once and checks the
// structure of the resulting Graph: nodes, attributes, constants, inputs and
// outputs in order, types with static, symbolic and unknown dims, opsets and
// nested If/Loop graphs with their outer-scope references.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "onnx/onnx_test_util.h"
#include "subgraph/ir/graph.h"
#include "subgraph/onnx/onnx_import.h"

namespace subgraph {
namespace {

using namespace onnx_test;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using TP = ::onnx::TensorProto;

std::unique_ptr<Graph> importOk(const ::onnx::ModelProto& model, ImportOptions options = {}) {
  auto result = importOnnxBytes(serialize(model), options);
  EXPECT_TRUE(result.isOk()) << result.status().message();
  return result.isOk() ? std::move(result).value() : nullptr;
}

Status importError(const ::onnx::ModelProto& model, ImportOptions options = {}) {
  auto result = importOnnxBytes(serialize(model), options);
  EXPECT_FALSE(result.isOk()) << "import unexpectedly succeeded";
  return result.isOk() ? Status::ok() : result.status();
}

std::vector<std::string> names(std::span<Value* const> values) {
  std::vector<std::string> out;
  for (Value* v : values) out.push_back(v ? v->name() : "<null>");
  return out;
}

/// Nodes, initializers, inputs, outputs and opsets of a plain model survive.
//      x   w
//       \ /
//       Add -> Relu -> y
TEST(OnnxImport, ImportsNodesConstantsInputsAndOutputs) {
  auto g = importOk(addReluModel());
  ASSERT_TRUE(g);
  EXPECT_EQ(g->name(), "test");
  EXPECT_EQ(g->numNodes(), 2u);
  EXPECT_THAT(names(g->inputs()), ::testing::ElementsAre("x"));
  EXPECT_THAT(names(g->outputs()), ::testing::ElementsAre("y"));
  Value* w = g->findValue("w");
  ASSERT_TRUE(w && w->isInitializer());
  EXPECT_EQ(w->initializer()->toInt64Vector(), (std::vector<int64_t>{1, 2, 3}));
  Node* add = g->findNode("add");
  ASSERT_TRUE(add);
  EXPECT_EQ(add->opType(), "Add");
  EXPECT_EQ(add->input(0), g->findValue("x"));
  EXPECT_EQ(add->input(1), w);
  EXPECT_EQ(g->findValue("y")->producer()->opType(), "Relu");
  EXPECT_EQ(g->opsetImports().at(""), 17);
  EXPECT_EQ(g->findValue("x")->type().toString(), "f32[N, 3]");
}

/// Graph inputs and outputs keep their file order, not name order.
TEST(OnnxImport, KeepsInputAndOutputOrder) {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  for (const char* name : {"c", "a", "b"}) addValueInfo(g->mutable_input(), name, TP::FLOAT, {"2"});
  addNode(g, "Add", {"c", "a"}, {"z"});
  addNode(g, "Add", {"z", "b"}, {"m"});
  addValueInfo(g->mutable_output(), "m", TP::FLOAT, {"2"});
  addValueInfo(g->mutable_output(), "z", TP::FLOAT, {"2"});
  auto graph = importOk(model);
  ASSERT_TRUE(graph);
  EXPECT_THAT(names(graph->inputs()), ::testing::ElementsAre("c", "a", "b"));
  EXPECT_THAT(names(graph->outputs()), ::testing::ElementsAre("m", "z"));
}

/// Constant nodes stay nodes (folding them is another pass's job).
//   Constant -> c ; Add(x, c) -> y
TEST(OnnxImport, KeepsConstantNodesAsNodes) {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "x", TP::INT64, {"2"});
  addTensorAttr(addNode(g, "Constant", {}, {"c"}, "const"), "value", int64Tensor("", {2}, {7, 9}));
  addNode(g, "Add", {"x", "c"}, {"y"});
  addValueInfo(g->mutable_output(), "y", TP::INT64, {"2"});
  auto graph = importOk(model);
  ASSERT_TRUE(graph);
  Node* c = graph->findNode("const");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->opType(), "Constant");
  EXPECT_FALSE(graph->findValue("c")->isInitializer());
  ASSERT_TRUE(c->attr("value"));
  EXPECT_EQ(c->attr("value")->asTensor().toInt64Vector(), (std::vector<int64_t>{7, 9}));
}

/// Every AttributeProto kind subgraph models maps to the matching AttrKind.
TEST(OnnxImport, ImportsEveryAttributeKind) {
  ::onnx::ModelProto model = emptyModel();
  auto* dom = model.add_opset_import();
  dom->set_domain("test.custom");
  dom->set_version(1);
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "x", TP::FLOAT, {"1"});
  auto* n = addNode(g, "Everything", {"x"}, {"y"}, "all");
  n->set_domain("test.custom");
  using AP = ::onnx::AttributeProto;
  auto add = [&](const char* name, AP::AttributeType type) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  };
  add("i", AP::INT)->set_i(-5);
  add("f", AP::FLOAT)->set_f(0.25f);
  add("s", AP::STRING)->set_s("hello");
  auto* ints = add("ints", AP::INTS);
  ints->add_ints(1);
  ints->add_ints(2);
  add("floats", AP::FLOATS)->add_floats(1.5f);
  add("strings", AP::STRINGS)->add_strings("a");
  add("empty_ints", AP::INTS);
  *add("t", AP::TENSOR)->mutable_t() = floatTensor("", {2}, {1.f, 2.f});
  auto* sub = add("g", AP::GRAPH)->mutable_g();
  addValueInfo(sub->mutable_input(), "a", TP::FLOAT, {});
  addNode(sub, "Relu", {"a"}, {"b"});
  addValueInfo(sub->mutable_output(), "b", TP::FLOAT, {});
  auto* graphs = add("gs", AP::GRAPHS);
  *graphs->add_graphs() = *sub;
  *graphs->add_graphs() = *sub;
  addValueInfo(g->mutable_output(), "y", TP::FLOAT, {"1"});

  ImportOptions options;
  options.allowUnknownOps = true;
  auto graph = importOk(model, options);
  ASSERT_TRUE(graph);
  Node* all = graph->findNode("all");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->domain(), "test.custom");
  EXPECT_EQ(all->attr("i")->asInt(), -5);
  EXPECT_EQ(all->attr("f")->asFloat(), 0.25f);
  EXPECT_EQ(all->attr("s")->asString(), "hello");
  EXPECT_EQ(all->attr("ints")->asInts(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(all->attr("floats")->asFloats(), (std::vector<float>{1.5f}));
  EXPECT_EQ(all->attr("strings")->asStrings(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(all->attr("empty_ints")->kind(), AttrKind::kInts);
  EXPECT_TRUE(all->attr("empty_ints")->asInts().empty());
  EXPECT_EQ(all->attr("t")->asTensor().dims(), (std::vector<int64_t>{2}));
  ASSERT_EQ(all->attr("g")->kind(), AttrKind::kGraph);
  EXPECT_EQ(all->attr("g")->asGraph()->numNodes(), 1u);
  ASSERT_EQ(all->attr("gs")->asGraphs().size(), 2u);
  EXPECT_EQ(all->attr("gs")->asGraphs()[1]->outputs()[0]->name(), "b");
  EXPECT_EQ(graph->opsetImports().at("test.custom"), 1);
}

/// Attributes written without a type (IR version 1 files) get one from the
/// field that is set.
TEST(OnnxImport, InfersAttributeKindWhenTypeIsMissing) {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "x", TP::FLOAT, {"1", "4"});
  auto* n = addNode(g, "Transpose", {"x"}, {"y"}, "t");
  auto* perm = n->add_attribute();
  perm->set_name("perm");
  perm->add_ints(1);
  perm->add_ints(0);
  addValueInfo(g->mutable_output(), "y", TP::FLOAT, {"4", "1"});
  auto graph = importOk(model);
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->findNode("t")->attr("perm")->asInts(), (std::vector<int64_t>{1, 0}));
}

/// Static, symbolic (dim_param) and unknown dims, and value_info types on
/// intermediate values.
TEST(OnnxImport, ImportsSymbolicAndUnknownDimsAndValueInfo) {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "x", TP::FLOAT, {"batch", "?", "8"});
  addNode(g, "Relu", {"x"}, {"h"});
  addNode(g, "Relu", {"h"}, {"y"});
  addValueInfo(g->mutable_value_info(), "h", TP::FLOAT, {"batch", "?", "8"});
  auto* out = g->add_output();
  out->set_name("y");  // no type at all: stays unknown
  auto graph = importOk(model);
  ASSERT_TRUE(graph);
  const TensorType& x = graph->findValue("x")->type();
  ASSERT_TRUE(x.hasRank());
  EXPECT_TRUE((*x.shape)[0].isSymbolic());
  EXPECT_EQ((*x.shape)[0].symbolName(), "batch");
  EXPECT_TRUE((*x.shape)[1].isUnknown());
  EXPECT_EQ((*x.shape)[2], Dim(8));
  EXPECT_EQ(graph->findValue("h")->type().toString(), "f32[batch, ?, 8]");
  EXPECT_TRUE(graph->findValue("y")->type().isUnknown());
}

/// If branches become nested Graphs; a branch reading an outer value gets a
/// producer-less value of the same name and type (outer-scope reference).
//          x ----------+
//          |           |   then: y = Relu(x)   (x from outer scope)
//   Greater(x,zero)->c |   else: y = Neg(x)
//          |           |
//          If(c) ------+-> y
TEST(OnnxImport, ParsesIfBranchesAndResolvesOuterScopeByName) {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "x", TP::FLOAT, {"1"});
  *g->add_initializer() = floatTensor("zero", {1}, {0.f});
  addNode(g, "Greater", {"x", "zero"}, {"c"});
  auto* ifNode = addNode(g, "If", {"c"}, {"y"}, "if");
  auto* thenG = addGraphAttr(ifNode, "then_branch");
  thenG->set_name("then");
  addNode(thenG, "Relu", {"x"}, {"t"});
  addValueInfo(thenG->mutable_output(), "t", TP::FLOAT, {"1"});
  auto* elseG = addGraphAttr(ifNode, "else_branch");
  elseG->set_name("else");
  addNode(elseG, "Neg", {"x"}, {"e"});
  addValueInfo(elseG->mutable_output(), "e", TP::FLOAT, {"1"});
  addValueInfo(g->mutable_output(), "y", TP::FLOAT, {"1"});

  auto graph = importOk(model);
  ASSERT_TRUE(graph);
  const auto& thenGraph = graph->findNode("if")->attr("then_branch")->asGraph();
  ASSERT_TRUE(thenGraph);
  EXPECT_EQ(thenGraph->name(), "then");
  EXPECT_TRUE(thenGraph->inputs().empty());
  Value* captured = thenGraph->findValue("x");
  ASSERT_TRUE(captured);
  EXPECT_EQ(captured->producer(), nullptr);
  EXPECT_FALSE(captured->isGraphInput());
  EXPECT_FALSE(captured->isInitializer());
  EXPECT_EQ(captured->type().toString(), "f32[1]");
  EXPECT_NE(captured, graph->findValue("x"));  // each graph owns its values
  EXPECT_EQ(graph->findNode("if")->attr("else_branch")->asGraph()->outputs()[0]->name(), "e");
}

/// A Loop body is parsed with its own inputs (iteration, condition, carried)
/// and may read values of the main graph.
TEST(OnnxImport, ParsesLoopBody) {
  ::onnx::ModelProto model = emptyModel(11);
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "n", TP::INT64, {});
  addValueInfo(g->mutable_input(), "acc0", TP::FLOAT, {"2"});
  addValueInfo(g->mutable_input(), "step", TP::FLOAT, {"2"});
  auto* loop = addNode(g, "Loop", {"n", "", "acc0"}, {"acc"}, "loop");
  auto* body = addGraphAttr(loop, "body");
  addValueInfo(body->mutable_input(), "i", TP::INT64, {});
  addValueInfo(body->mutable_input(), "cond_in", TP::BOOL, {});
  addValueInfo(body->mutable_input(), "acc_in", TP::FLOAT, {"2"});
  addNode(body, "Identity", {"cond_in"}, {"cond_out"});
  addNode(body, "Add", {"acc_in", "step"}, {"acc_out"});
  addValueInfo(body->mutable_output(), "cond_out", TP::BOOL, {});
  addValueInfo(body->mutable_output(), "acc_out", TP::FLOAT, {"2"});
  addValueInfo(g->mutable_output(), "acc", TP::FLOAT, {"2"});

  auto graph = importOk(model);
  ASSERT_TRUE(graph);
  Node* l = graph->findNode("loop");
  ASSERT_EQ(l->numInputs(), 3u);
  EXPECT_EQ(l->input(1), nullptr);  // omitted optional condition
  const auto& b = l->attr("body")->asGraph();
  EXPECT_THAT(names(b->inputs()), ::testing::ElementsAre("i", "cond_in", "acc_in"));
  EXPECT_EQ(b->numNodes(), 2u);
  ASSERT_TRUE(b->findValue("step"));
  EXPECT_EQ(b->findValue("step")->producer(), nullptr);
  EXPECT_EQ(graph->opsetImports().at(""), 11);
}

/// Old exporters list every initializer as a graph input too; such values
/// are imported as constants and dropped from the input list.
TEST(OnnxImport, InitializerAlsoListedAsInputIsAConstant) {
  ::onnx::ModelProto model = addReluModel();
  model.set_ir_version(3);
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "w", TP::FLOAT, {"3"});
  auto graph = importOk(model);
  ASSERT_TRUE(graph);
  EXPECT_THAT(names(graph->inputs()), ::testing::ElementsAre("x"));
  EXPECT_TRUE(graph->findValue("w")->isInitializer());
}

/// An op without a schema fails with one line naming op, domain, opset and
/// node.
TEST(OnnxImport, UnknownOpIsOneClearError) {
  ::onnx::ModelProto model = addReluModel();
  model.mutable_graph()->mutable_node(1)->set_op_type("FancyRelu");
  Status s = importError(model);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "<memory>: unsupported op 'FancyRelu' (domain 'ai.onnx', opset 17) at node 'relu': "
            "subgraph has no definition for it");
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
}

/// The same error inside an If branch, for an unnamed node.
TEST(OnnxImport, UnknownOpInsideSubgraphIsReported) {
  ::onnx::ModelProto model = emptyModel(13);
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "c", TP::BOOL, {});
  auto* ifNode = addNode(g, "If", {"c"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* b = addGraphAttr(ifNode, branch);
    addNode(b, "Mystery", {"c"}, {std::string("r_") + branch});
    addValueInfo(b->mutable_output(), std::string("r_") + branch, TP::BOOL, {});
  }
  addValueInfo(g->mutable_output(), "y", TP::BOOL, {});
  Status s = importError(model);
  EXPECT_THAT(s.message(), MatchesRegex(".*unsupported op 'Mystery' \\(domain 'ai.onnx', "
                                        "opset 13\\) at node #0 \\(output 'r_then_branch'\\).*"));
}

/// allowUnknownOps keeps such nodes, schema-less.
TEST(OnnxImport, AllowUnknownOpsKeepsTheNode) {
  ::onnx::ModelProto model = addReluModel();
  model.mutable_graph()->mutable_node(1)->set_op_type("FancyRelu");
  ImportOptions options;
  options.allowUnknownOps = true;
  auto graph = importOk(model, options);
  ASSERT_TRUE(graph);
  Node* n = graph->findNode("relu");
  EXPECT_EQ(n->opType(), "FancyRelu");
  EXPECT_EQ(n->schema(), nullptr);
}

/// Typed data fields decode into the tensor's element type.
TEST(OnnxImport, DecodesTypedDataFields) {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  auto tensor = [&](const char* name, int type, std::vector<int64_t> dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  };
  auto* i8 = tensor("i8", TP::INT8, {2});
  i8->add_int32_data(-3);
  i8->add_int32_data(100);
  auto* b = tensor("b", TP::BOOL, {2});
  b->add_int32_data(0);
  b->add_int32_data(5);
  auto* h = tensor("h", TP::FLOAT16, {1});
  h->add_int32_data(0x3C00);  // 1.0 in IEEE half
  auto* u32 = tensor("u32", TP::UINT32, {1});
  u32->add_uint64_data(4000000000u);
  auto* d = tensor("d", TP::DOUBLE, {1});
  d->add_double_data(2.5);
  auto* s = tensor("s", TP::STRING, {2});
  s->add_string_data("ab");
  s->add_string_data("");
  auto* scalar = tensor("scalar", TP::FLOAT, {});
  scalar->add_float_data(4.f);
  tensor("empty", TP::FLOAT, {0, 3});
  for (const char* name : {"i8", "b", "h", "u32", "d", "s", "scalar", "empty"})
    addNode(g, "Identity", {name}, {std::string(name) + "_out"});
  addValueInfo(g->mutable_output(), "i8_out", TP::INT8, {"2"});

  auto graph = importOk(model);
  ASSERT_TRUE(graph);
  auto data = [&](const char* name) { return *graph->findValue(name)->initializer(); };
  EXPECT_EQ(data("i8").toInt64Vector(), (std::vector<int64_t>{-3, 100}));
  EXPECT_EQ(data("b").toInt64Vector(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(data("h").elementAsDouble(0), 1.0);
  EXPECT_EQ(data("u32").elementAsInt(0), 4000000000);
  EXPECT_EQ(data("d").elementAsDouble(0), 2.5);
  EXPECT_EQ(data("s").strings(), (std::vector<std::string>{"ab", ""}));
  EXPECT_TRUE(data("scalar").dims().empty());
  EXPECT_EQ(data("scalar").elementAsDouble(0), 4.0);
  EXPECT_EQ(data("empty").numElements(), 0);
}

/// "" inputs are omitted optional inputs (null); trailing "" outputs are
/// dropped and a "" output before a named one keeps its slot.
TEST(OnnxImport, OmittedOptionalInputsAndOutputs) {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "x", TP::FLOAT, {"4"});
  *g->add_initializer() = floatTensor("hi", {}, {6.f});
  addNode(g, "Clip", {"x", "", "hi"}, {"y"}, "clip");
  addNode(g, "Split", {"y"}, {"", "b", ""}, "split");
  addValueInfo(g->mutable_output(), "b", TP::FLOAT, {"2"});
  auto graph = importOk(model);
  ASSERT_TRUE(graph);
  Node* clip = graph->findNode("clip");
  ASSERT_EQ(clip->numInputs(), 3u);
  EXPECT_EQ(clip->input(1), nullptr);
  Node* split = graph->findNode("split");
  ASSERT_EQ(split->numOutputs(), 2u);
  EXPECT_EQ(split->output(1)->name(), "b");
  EXPECT_EQ(split->output(0)->name(), "split_unused");
}

/// Nodes listed out of topological order still import (order is rebuilt).
TEST(OnnxImport, AcceptsNodesOutOfOrder) {
  ::onnx::ModelProto model = emptyModel();
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "x", TP::FLOAT, {"2"});
  addNode(g, "Relu", {"h"}, {"y"}, "second");
  addNode(g, "Neg", {"x"}, {"h"}, "first");
  addValueInfo(g->mutable_output(), "y", TP::FLOAT, {"2"});
  auto graph = importOk(model);
  ASSERT_TRUE(graph);
  auto order = graph->topologicalOrder();
  ASSERT_TRUE(order.isOk());
  EXPECT_EQ((*order)[0]->name(), "first");
}

/// A call to a model-local function becomes a node with the function body
/// attached as its "body" graph attribute (how fused regions come back).
TEST(OnnxImport, LocalFunctionCallGetsBodyAttribute) {
  ::onnx::ModelProto model = emptyModel();
  auto* opset = model.add_opset_import();
  opset->set_domain("subgraph.test");
  opset->set_version(1);
  auto* f = model.add_functions();
  f->set_name("Region0");
  f->set_domain("subgraph.test");
  f->add_input("a");
  f->add_output("r");
  auto* fo = f->add_opset_import();
  fo->set_domain("");
  fo->set_version(17);
  auto* relu = f->add_node();
  relu->set_op_type("Relu");
  relu->add_input("a");
  relu->add_output("r");
  auto* g = model.mutable_graph();
  addValueInfo(g->mutable_input(), "x", TP::FLOAT, {"3"});
  addNode(g, "Region0", {"x"}, {"y"}, "fused")->set_domain("subgraph.test");
  addValueInfo(g->mutable_output(), "y", TP::FLOAT, {"3"});

  auto graph = importOk(model);
  ASSERT_TRUE(graph);
  Node* fused = graph->findNode("fused");
  EXPECT_EQ(fused->qualifiedOpType(), "subgraph.test.Region0");
  ASSERT_TRUE(fused->attr("body"));
  const auto& body = fused->attr("body")->asGraph();
  EXPECT_THAT(names(body->inputs()), ::testing::ElementsAre("a"));
  EXPECT_EQ(body->findValue("a")->type().toString(), "f32[3]");  // from the call site
  EXPECT_EQ(body->numNodes(), 1u);
}

/// inputShapes pins dynamic dims of named inputs.
TEST(OnnxImport, InputShapesFixDynamicDims) {
  ImportOptions options;
  options.inputShapes["x"] = {5, 3};
  auto graph = importOk(addReluModel(), options);
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->findValue("x")->type().toString(), "f32[5, 3]");
  EXPECT_EQ(graph->findValue("s")->type().toString(), "f32[5, 3]");  // inferred
}

/// inputShapes naming no input is an error that lists the real inputs.
TEST(OnnxImport, InputShapesUnknownNameIsError) {
  ImportOptions options;
  options.inputShapes["nope"] = {1};
  Status s = importError(addReluModel(), options);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(),
              HasSubstr("a shape is given for 'nope', which is not a graph input (inputs: x)"));
}

/// inputShapes must agree with the declared rank and static dims.
TEST(OnnxImport, InputShapesRankOrStaticDimMismatchIsError) {
  ImportOptions options;
  options.inputShapes["x"] = {1, 3, 4};
  EXPECT_THAT(importError(addReluModel(), options).message(), HasSubstr("declares rank 2"));
  options.inputShapes["x"] = {1, 4};
  EXPECT_THAT(importError(addReluModel(), options).message(), HasSubstr("the model fixes it to 3"));
}

/// The CLI's NAME=dims syntax.
TEST(OnnxImport, ParsesInputShapeSpecs) {
  auto ok = parseInputShapeSpec("input:0=1,3,224,224");
  ASSERT_TRUE(ok.isOk());
  EXPECT_EQ(ok->first, "input:0");
  EXPECT_EQ(ok->second, (std::vector<int64_t>{1, 3, 224, 224}));
  auto scalar = parseInputShapeSpec("s=");
  ASSERT_TRUE(scalar.isOk());
  EXPECT_TRUE(scalar->second.empty());
  for (const char* bad : {"x", "=1", "x=1,", "x=1,,2", "x=-1", "x=a", "x=1.5"})
    EXPECT_FALSE(parseInputShapeSpec(bad).isOk()) << bad;
}

}  // namespace
}  // namespace subgraph
