//===- tests/core/text_format_test.cpp - Text format round trips and errors ===//
//
// Checks that the text format prints and parses graphs exactly: each test
// writes a tiny graph in the text format (with an ASCII sketch above it),
// parses it, asserts the structure that came out, and checks that printing
// the parsed graph and parsing that again prints identically. Error tests
// assert the exact "<source>:<line>:<col>: <message>" of each class of
// syntax error.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/text_format.h"

#include "subgraph/zoo/zoo.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <sstream>

namespace subgraph {
namespace {

using ::testing::HasSubstr;

/// Parses `text`, prints it, parses the print and prints again; both prints
/// must agree. Returns the first parsed graph.
std::unique_ptr<Graph> roundTrip(std::string_view text) {
  auto graph = parseGraphOrThrow(text);
  std::string printed = printGraph(*graph);
  auto reparsed = parseGraphOrThrow(printed);
  EXPECT_EQ(printGraph(*reparsed), printed) << "first print:\n" << printed;
  return graph;
}

/// The error message parseGraph gives for `text`, or "" if it parsed.
std::string parseError(std::string_view text) {
  auto result = parseGraph(text);
  return result.isOk() ? std::string() : result.status().message();
}

//   %x -> Relu -> %y
/// The smallest graph prints exactly as written.
TEST(TextFormat, PrintsMinimalGraphCanonically) {
  constexpr std::string_view kText =
      "graph @main(%x: f32[1, 3]) {\n"
      "  %y: f32[1, 3] = Relu(%x) @relu\n"
      "  return %y\n"
      "}\n";
  auto g = parseGraphOrThrow(kText);
  ASSERT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(printGraph(*g), kText);
  Node* relu = g->findNode("relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->opType(), "Relu");
  EXPECT_EQ(relu->input(0), g->inputs()[0]);
  EXPECT_EQ(g->outputs()[0], relu->output(0));
  EXPECT_EQ(relu->output(0)->type(), TensorType(DataType::kFloat32, {1, 3}));
}

/// Asserts that two graphs hold the same names, types, constants, opsets,
/// inputs, outputs and nodes (compared in topological order), recursing into
/// subgraph attributes.
void expectSameGraph(const Graph& a, const Graph& b);

void expectSameAttr(const Attribute& a, const Attribute& b) {
  ASSERT_EQ(a.name(), b.name());
  ASSERT_EQ(a.kind(), b.kind()) << "attribute " << a.name();
  if (a.kind() == AttrKind::kGraph) {
    expectSameGraph(*a.asGraph(), *b.asGraph());
  } else if (a.kind() == AttrKind::kGraphs) {
    ASSERT_EQ(a.asGraphs().size(), b.asGraphs().size());
    for (size_t i = 0; i < a.asGraphs().size(); ++i)
      expectSameGraph(*a.asGraphs()[i], *b.asGraphs()[i]);
  } else {
    EXPECT_TRUE(a == b) << "attribute " << a.name() << " differs";
  }
}

std::vector<std::string> valueNames(std::span<Value* const> values) {
  std::vector<std::string> names;
  for (Value* v : values) names.push_back(v ? v->name() : "_");
  return names;
}

void expectSameGraph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.name(), b.name());
  EXPECT_EQ(a.opsetImports(), b.opsetImports());
  EXPECT_EQ(valueNames(a.inputs()), valueNames(b.inputs()));
  EXPECT_EQ(valueNames(a.outputs()), valueNames(b.outputs()));
  for (size_t i = 0; i < a.inputs().size() && i < b.inputs().size(); ++i)
    EXPECT_EQ(a.inputs()[i]->type(), b.inputs()[i]->type()) << a.inputs()[i]->name();
  ASSERT_EQ(a.initializers().size(), b.initializers().size());
  for (Value* c : a.initializers()) {
    Value* other = b.findValue(c->name());
    ASSERT_NE(other, nullptr) << "constant " << c->name();
    ASSERT_TRUE(other->isInitializer()) << c->name();
    EXPECT_TRUE(*c->initializer() == *other->initializer()) << "constant " << c->name();
  }
  auto orderA = a.topologicalOrder(), orderB = b.topologicalOrder();
  ASSERT_TRUE(orderA.isOk() && orderB.isOk());
  ASSERT_EQ(orderA->size(), orderB->size());
  for (size_t i = 0; i < orderA->size(); ++i) {
    const Node& x = *(*orderA)[i];
    const Node& y = *(*orderB)[i];
    EXPECT_EQ(x.qualifiedOpType(), y.qualifiedOpType());
    EXPECT_EQ(x.domain(), y.domain());
    EXPECT_EQ(x.name(), y.name());
    EXPECT_EQ(valueNames(x.inputs()), valueNames(y.inputs()));
    EXPECT_EQ(valueNames(x.outputs()), valueNames(y.outputs()));
    for (size_t k = 0; k < x.numOutputs() && k < y.numOutputs(); ++k)
      EXPECT_EQ(x.output(k)->type(), y.output(k)->type());
    ASSERT_EQ(x.attributes().size(), y.attributes().size()) << x.displayName();
    for (size_t k = 0; k < x.attributes().size(); ++k)
      expectSameAttr(x.attributes()[k], y.attributes()[k]);
  }
}

//   %"conv1/out:0" -> "my op".X -> %"a b"
/// Names that are not bare are quoted and survive unchanged: values, nodes,
/// the graph, attribute names, dim symbols and ops outside identifier syntax.
TEST(TextFormat, RoundTripsQuotedNames) {
  auto g = roundTrip(R"(
    graph @"my graph"(%"conv1/out:0": f32["batch size", 3]) {
      %"a b" = "my-domain.X"(%"conv1/out:0") {"weird key" = 1} @"conv 1/x"
      %"\"q\"\n" = "return"(%"a b")
      return %"a b", %"\"q\"\n"
    })");
  EXPECT_EQ(g->name(), "my graph");
  EXPECT_EQ(g->inputs()[0]->name(), "conv1/out:0");
  EXPECT_EQ(g->inputs()[0]->type().shape->at(0), Dim::symbol("batch size"));
  Node* n = g->findNode("conv 1/x");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->domain(), "my-domain");
  EXPECT_EQ(n->opType(), "X");
  EXPECT_EQ(n->attr("weird key")->asInt(), 1);
  EXPECT_NE(g->findValue("\"q\"\n"), nullptr);
  EXPECT_EQ(g->findValue("\"q\"\n")->producer()->opType(), "return");
  EXPECT_THAT(printGraph(*g), HasSubstr("%\"\\\"q\\\"\\n\" = \"return\"(%\"a b\")"));
}

//   %x, _, %b -> Conv -> %y      (bias given, and an omitted middle input)
/// `_` leaves an optional input out; its slot stays null.
TEST(TextFormat, RoundTripsOmittedOptionalInputs) {
  auto g = roundTrip(R"(
    graph @g(%x: f32[1, 4], %s: f32[4], %b: f32[4]) {
      %y = test.Norm(%x, _, %b)
      %z = test.Norm(%y, %s, _)
      return %z
    })");
  Node* n = g->findValue("y")->producer();
  ASSERT_EQ(n->numInputs(), 3u);
  EXPECT_EQ(n->input(1), nullptr);
  EXPECT_EQ(n->input(2)->name(), "b");
  EXPECT_EQ(g->findValue("z")->producer()->input(2), nullptr);
  EXPECT_EQ(g->findValue("s")->uses().size(), 1u);
}

//            /-> %a --.
//   %x -> Split        +-> Concat -> %y ; %b is also returned twice
//            \-> %b --'
/// A node may define several results, and an output may be listed twice.
TEST(TextFormat, RoundTripsMultipleResultsAndRepeatedOutputs) {
  auto g = roundTrip(R"(
    graph @g(%x: f32[2, 8]) {
      %a: f32[2, 4], %b: f32[2, 4] = Split(%x) {axis = 1} @split
      %y = Concat(%a, %b) {axis = 1}
      return %y, %b, %b
    })");
  Node* split = g->findNode("split");
  ASSERT_EQ(split->numOutputs(), 2u);
  EXPECT_EQ(split->output(1)->name(), "b");
  EXPECT_EQ(split->output(1)->producerIndex(), 1u);
  EXPECT_EQ(valueNames(g->outputs()), (std::vector<std::string>{"y", "b", "b"}));
}

//   %x [N, 3, ?, ?] -> Shape -> %s [4];  %m: unknown rank;  %u: nothing known
/// Dims may be static, symbolic or unknown; rank or the whole type may be
/// unknown; a shape may be known with an unknown element type.
TEST(TextFormat, RoundTripsSymbolicAndUnknownTypes) {
  auto g = roundTrip(R"(
    graph @g(%x: f32[N, 3, ?, seq_len], %m: i64, %u, %k: ?[2, B]) {
      %s: i64[4] = Shape(%x)
      %t = Identity(%u)
      return %s, %t, %m, %k
    })");
  const TensorType& x = g->inputs()[0]->type();
  ASSERT_TRUE(x.hasRank());
  EXPECT_EQ(x.shape->at(0), Dim::symbol("N"));
  EXPECT_EQ(x.shape->at(1), Dim(3));
  EXPECT_TRUE(x.shape->at(2).isUnknown());
  EXPECT_EQ(x.shape->at(3), Dim::symbol("seq_len"));
  EXPECT_EQ(g->inputs()[1]->type(), TensorType(DataType::kInt64));
  EXPECT_TRUE(g->inputs()[2]->type().isUnknown());
  EXPECT_EQ(g->inputs()[3]->type(), TensorType(DataType::kUndefined, {2, Dim::symbol("B")}));
  EXPECT_TRUE(g->findValue("t")->type().isUnknown());
  EXPECT_THAT(printGraph(*g),
              HasSubstr("graph @g(%x: f32[N, 3, ?, seq_len], %m: i64, %u, %k: ?[2, B])"));
}

//   %x -> test.AllKinds -> %y     (one attribute of every kind)
/// Every attribute kind keeps its kind and value, including empty typed
/// lists and floats that look like integers.
TEST(TextFormat, RoundTripsEveryAttributeKind) {
  auto g = roundTrip(R"(
    graph @g(%x: f32[2]) {
      %y = test.AllKinds(%x) {i = -3, f = 1.0, tiny = 1e-05, s = "a\tb\\c\"", is = [1, -2, 9223372036854775807],
                              fs = [1.0, 2.5, -0.0], ss = ["a", "", "b c"], ei = ints[], ef = floats[],
                              es = strings[], eg = graphs[], fl = floats[1, 2], t = f32[2] [1.0, 2.0],
                              it = i64[2, 2] [1, 2, 3, 4], st = str[] ["x"],
                              g = graph @body() { return %x }}
      return %y
    })");
  Node* n = g->findValue("y")->producer();
  auto kind = [&](std::string_view name) { return n->attr(name)->kind(); };
  EXPECT_EQ(kind("i"), AttrKind::kInt);
  EXPECT_EQ(n->getInt("i"), -3);
  EXPECT_EQ(kind("f"), AttrKind::kFloat);
  EXPECT_EQ(n->getFloat("f"), 1.0f);
  EXPECT_EQ(n->getFloat("tiny"), 1e-05f);
  EXPECT_EQ(n->getString("s"), "a\tb\\c\"");
  EXPECT_EQ(n->getInts("is"), (std::vector<int64_t>{1, -2, INT64_MAX}));
  EXPECT_EQ(kind("fs"), AttrKind::kFloats);
  EXPECT_TRUE(std::signbit(n->getFloats("fs")[2]));
  EXPECT_EQ(n->getStrings("ss"), (std::vector<std::string>{"a", "", "b c"}));
  EXPECT_EQ(kind("ei"), AttrKind::kInts);
  EXPECT_EQ(kind("ef"), AttrKind::kFloats);
  EXPECT_EQ(kind("es"), AttrKind::kStrings);
  EXPECT_EQ(kind("eg"), AttrKind::kGraphs);
  EXPECT_TRUE(n->attr("eg")->asGraphs().empty());
  EXPECT_EQ(kind("fl"), AttrKind::kFloats);
  EXPECT_EQ(n->getFloats("fl"), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_TRUE(n->attr("t")->asTensor() ==
              Tensor::fromVector<float>(DataType::kFloat32, {2}, {1, 2}));
  EXPECT_EQ(n->attr("it")->asTensor().toInt64Vector(), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(n->attr("st")->asTensor().strings(), (std::vector<std::string>{"x"}));
  EXPECT_EQ(n->attr("g")->asGraph()->name(), "body");
  std::string printed = printGraph(*g);
  EXPECT_THAT(printed, HasSubstr("ei = ints[], ef = floats[], es = strings[], eg = graphs[]"));
  EXPECT_THAT(printed, HasSubstr("f = 1.0, tiny = 1e-05"));
  EXPECT_THAT(printed, HasSubstr("fl = [1.0, 2.0]"));
}

//   %c -> If(then: %x -> Relu, else: %x -> Neg) -> %r
//   %n -> Loop(body(%i, %cond, %acc) -> Add(%acc, %x)) -> %out
/// Subgraph attributes nest, read outer-scope values by name (left as free
/// values inside the body, as in ONNX), and lists of graphs round-trip.
TEST(TextFormat, RoundTripsNestedSubgraphs) {
  auto g = roundTrip(R"(
    graph @main(%c: bool[], %x: f32[4], %n: i64[]) {
      %r: f32[4] = If(%c) {
        then_branch = graph @then() {
          %t = Relu(%x)
          return %t
        },
        else_branch = graph @else() {
          %e = Neg(%x) {inner = graph @deeper() { return %x }}
          return %e
        }} @if
      %out = Loop(%n, _, %x) {body = graph @body(%i: i64[], %cond: bool[], %acc: f32[4]) {
          %next = Add(%acc, %x)
          return %cond, %next
        }}
      %w = test.Branches(%x) {branches = [graph @a() { return %x }, graph @b() { return %r }]}
      return %r, %out, %w
    })");
  Node* ifNode = g->findNode("if");
  ASSERT_NE(ifNode, nullptr);
  const Graph& thenBranch = *ifNode->attr("then_branch")->asGraph();
  EXPECT_EQ(thenBranch.name(), "then");
  ASSERT_EQ(thenBranch.numNodes(), 1u);
  Value* captured = thenBranch.findValue("x");
  ASSERT_NE(captured, nullptr);
  EXPECT_EQ(captured->producer(), nullptr);
  EXPECT_FALSE(captured->isGraphInput());
  EXPECT_NE(captured, g->findValue("x")) << "a body must not link to outer values directly";
  const Graph& elseBranch = *ifNode->attr("else_branch")->asGraph();
  Node* neg = *elseBranch.nodes().begin();
  EXPECT_EQ(neg->attr("inner")->asGraph()->name(), "deeper");
  const Graph& body = *g->findValue("out")->producer()->attr("body")->asGraph();
  EXPECT_EQ(valueNames(body.inputs()), (std::vector<std::string>{"i", "cond", "acc"}));
  EXPECT_EQ(valueNames(body.outputs()), (std::vector<std::string>{"cond", "next"}));
  const auto& branches = g->findValue("w")->producer()->attr("branches")->asGraphs();
  ASSERT_EQ(branches.size(), 2u);
  EXPECT_EQ(branches[1]->name(), "b");
  // The outer x is used by If? No: only by Loop, test.Branches and nested
  // graphs by name; the outer graph's own use list ignores bodies.
  EXPECT_EQ(g->findValue("x")->uses().size(), 2u);
}

/// Subgraphs without a name take the attribute's name; without `()` they
/// have no inputs.
TEST(TextFormat, NamesUnnamedSubgraphsAfterTheirAttribute) {
  auto g = roundTrip(R"(
    graph @main(%c: bool[]) {
      %r = If(%c) {then_branch = graph { return %c }, else_branch = graph { return %c }}
      %s = test.Multi(%c) {bs = graphs[graph { return %c }], cs = [graph { return %c }]}
      return %r, %s
    })");
  Node* n = g->findValue("r")->producer();
  EXPECT_EQ(n->attr("then_branch")->asGraph()->name(), "then_branch");
  Node* multi = g->findValue("s")->producer();
  EXPECT_EQ(multi->attr("bs")->asGraphs()[0]->name(), "bs");
  EXPECT_EQ(multi->attr("cs")->asGraphs()[0]->name(), "cs");
  EXPECT_THAT(printGraph(*g), HasSubstr("then_branch = graph @then_branch() {"));
}

//   constants only -> Identity
/// NaN (with payloads and sign), infinities and -0.0 keep their exact bits
/// in attributes and constants of every float type.
TEST(TextFormat, RoundTripsSpecialFloatsBitExactly) {
  auto g = roundTrip(R"(
    graph @g() {
      %f = const f32[7] [nan, -nan, nan(0x7fc00001), inf, -inf, -0.0, 1.4e-45]
      %d = const f64[3] [nan(0x7ff0000000000001), -0.0, 5e-324]
      %h = const f16[5] [nan, nan(0x7c01), -0.0, 65504.0, 6e-08]
      %b = const bf16[3] [-nan, 3.3895314e+38, 1e-40]
      %y = Identity(%f) {a = nan, b = -inf, c = -0.0, d = [nan(0xffc00002), inf]}
      return %y, %d, %h, %b
    })");
  const Tensor& f = *g->findValue("f")->initializer();
  auto fbits = [&](int i) { return std::bit_cast<uint32_t>(f.data<float>()[i]); };
  EXPECT_EQ(fbits(0), 0x7fc00000u);
  EXPECT_EQ(fbits(1), 0xffc00000u);
  EXPECT_EQ(fbits(2), 0x7fc00001u);
  EXPECT_EQ(fbits(3), 0x7f800000u);
  EXPECT_EQ(fbits(5), 0x80000000u);
  EXPECT_EQ(fbits(6), 1u);
  const Tensor& d = *g->findValue("d")->initializer();
  EXPECT_EQ(std::bit_cast<uint64_t>(d.data<double>()[0]), 0x7ff0000000000001ULL);
  EXPECT_EQ(std::bit_cast<uint64_t>(d.data<double>()[2]), 1ULL);
  const Tensor& h = *g->findValue("h")->initializer();
  EXPECT_EQ(h.data<uint16_t>()[0], 0x7e00);
  EXPECT_EQ(h.data<uint16_t>()[1], 0x7c01);
  EXPECT_EQ(h.data<uint16_t>()[2], 0x8000);
  EXPECT_EQ(h.data<uint16_t>()[3], 0x7bff);
  EXPECT_EQ(h.data<uint16_t>()[4], 0x0001);
  const Tensor& b = *g->findValue("b")->initializer();
  EXPECT_EQ(b.data<uint16_t>()[0], 0xffc0);
  EXPECT_EQ(b.data<uint16_t>()[1], 0x7f7f);
  Node* id = g->findValue("y")->producer();
  EXPECT_TRUE(std::isnan(id->getFloat("a")));
  EXPECT_TRUE(std::signbit(id->getFloat("c")));
  EXPECT_EQ(std::bit_cast<uint32_t>(id->getFloats("d")[0]), 0xffc00002u);
  std::string printed = printGraph(*g);
  EXPECT_THAT(printed, HasSubstr("[nan, -nan, nan(0x7fc00001), inf, -inf, -0.0, 1e-45]"));
  EXPECT_THAT(printed, HasSubstr("{a = nan, b = -inf, c = -0.0, d = [nan(0xffc00002), inf]}"));
}

/// f16 constants print with the fewest digits that identify the half, so
/// 0.1 stays "0.1" rather than the float spelling of the nearest half.
TEST(TextFormat, PrintsF16WithShortestDigits) {
  auto g = roundTrip(R"(
    graph @g() {
      %h = const f16[3] [0.1, 1.0, 0.333]
      return %h
    })");
  const Tensor& h = *g->findValue("h")->initializer();
  EXPECT_EQ(h.data<uint16_t>()[0], 0x2e66);  // nearest half to 0.1
  EXPECT_THAT(printGraph(*g), HasSubstr("f16[3] [0.1, 1.0, 0.333]"));
}

/// Every one of the 65536 f16 and bf16 bit patterns survives print and
/// parse bit-exactly.
TEST(TextFormat, RoundTripsEverySixteenBitFloatPattern) {
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16}) {
    std::vector<uint16_t> all(65536);
    for (uint32_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
    auto g = std::make_unique<Graph>("g");
    Value* c = g->addInitializer("c", Tensor::fromVector<uint16_t>(dtype, {65536}, all));
    g->addOutput(c);
    auto back = parseGraphOrThrow(printGraph(*g));
    const Tensor& t = *back->findValue("c")->initializer();
    ASSERT_EQ(t.dtype(), dtype);
    for (uint32_t i = 0; i < all.size(); ++i)
      ASSERT_EQ(t.data<uint16_t>()[i], all[i]) << dataTypeName(dtype) << " pattern " << i;
  }
}

/// Random f32/f64 bit patterns survive print and parse bit-exactly. The
/// seed is printed so a failure can be replayed.
TEST(TextFormat, RoundTripsRandomFloatBitPatterns) {
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::printf("RoundTripsRandomFloatBitPatterns seed: %llu\n",
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> f32(4096);
  std::vector<uint64_t> f64(4096);
  for (auto& v : f32) v = static_cast<uint32_t>(rng());
  for (auto& v : f64) v = rng();
  auto g = std::make_unique<Graph>("g");
  g->addOutput(g->addInitializer("a", Tensor::fromVector(DataType::kFloat32, {4096}, f32)));
  g->addOutput(g->addInitializer("b", Tensor::fromVector(DataType::kFloat64, {4096}, f64)));
  auto back = parseGraphOrThrow(printGraph(*g));
  EXPECT_TRUE(*back->findValue("a")->initializer() == *g->findValue("a")->initializer());
  EXPECT_TRUE(*back->findValue("b")->initializer() == *g->findValue("b")->initializer());
}

//   const tensors of every element type -> returned
/// Integer limits of every width, bools and escaped strings round-trip;
/// equal elements print as splat, a single element as a list.
TEST(TextFormat, RoundTripsEveryElementType) {
  auto g = roundTrip(R"(
    graph @g() {
      %i8 = const i8[2] [-128, 127]
      %u8 = const u8[2] [0, 255]
      %i16 = const i16[2] [-32768, 32767]
      %u16 = const u16[1] [65535]
      %i32 = const i32[2] [-2147483648, 2147483647]
      %u32 = const u32[1] [4294967295]
      %i64 = const i64[2] [-9223372036854775808, 9223372036854775807]
      %u64 = const u64[1] [18446744073709551615]
      %b = const bool[3] [true, false, true]
      %s = const str[2, 2] ["plain", "tab\there", "quote\"", "\x01\x7f ünïcode"]
      %sp = const str[3] splat("same")
      %z = const f32[0] []
      %one = const f32[] [2.5]
      %many = const i64[2, 3] splat(7)
      return %i8, %u8, %i16, %u16, %i32, %u32, %i64, %u64, %b, %s, %sp, %z, %one, %many
    })");
  EXPECT_EQ(g->findValue("i8")->initializer()->toInt64Vector(), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(g->findValue("i64")->initializer()->toInt64Vector(),
            (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
  EXPECT_EQ(g->findValue("u64")->initializer()->data<uint64_t>()[0], UINT64_MAX);
  EXPECT_EQ(g->findValue("b")->initializer()->toInt64Vector(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(g->findValue("s")->initializer()->strings()[3], "\x01\x7f ünïcode");
  EXPECT_EQ(g->findValue("sp")->initializer()->strings(), (std::vector<std::string>(3, "same")));
  EXPECT_EQ(g->findValue("z")->initializer()->numElements(), 0);
  EXPECT_TRUE(g->findValue("one")->initializer()->dims().empty());
  EXPECT_EQ(g->findValue("many")->initializer()->toInt64Vector(), (std::vector<int64_t>(6, 7)));
  std::string printed = printGraph(*g);
  EXPECT_THAT(printed, HasSubstr("%s = const str[2, 2] [\"plain\", \"tab\\there\", \"quote\\\"\", "
                                 "\"\\x01\\x7f ünïcode\"]"));
  EXPECT_THAT(printed, HasSubstr("%many = const i64[2, 3] splat(7)"));
  EXPECT_THAT(printed, HasSubstr("%one = const f32[] [2.5]"));
  EXPECT_THAT(printed, HasSubstr("%u16 = const u16[1] [65535]"));
}

//   %y = Relu(%x) written before %x = Neg(%in)
/// A value may be used before the line defining it; printing puts the
/// nodes back in topological order.
TEST(TextFormat, ParsesForwardReferencesAndPrintsTopologically) {
  auto g = roundTrip(R"(
    graph @g(%in: f32[2]) {
      %y = Relu(%x) @second
      %x = Neg(%in) @first
      return %y
    })");
  Node* second = g->findNode("second");
  Node* first = g->findNode("first");
  EXPECT_EQ(second->input(0)->producer(), first);
  EXPECT_LT(second->id(), first->id());
  std::string printed = printGraph(*g);
  EXPECT_LT(printed.find("@first"), printed.find("@second"));
}

//   %a -> A -> %b -> B -> %a   (a cycle, kept for the verifier)
/// Cyclic graphs parse (the verifier, not the parser, rejects them) and
/// print in node-id order.
TEST(TextFormat, ParsesCyclesWithoutComplaint) {
  auto g = roundTrip(R"(
    graph @g() {
      %a = test.A(%b) @A
      %b = test.B(%a) @B
      return %a
    })");
  EXPECT_FALSE(g->topologicalOrder().isOk());
  EXPECT_EQ(g->findNode("A")->input(0)->producer(), g->findNode("B"));
  EXPECT_EQ(g->findNode("B")->input(0)->producer(), g->findNode("A"));
}

//   %ghost (never defined) -> Relu -> %y
/// A value used but never defined is left dangling for the verifier.
TEST(TextFormat, LeavesUndefinedValuesDangling) {
  auto g = roundTrip(R"(
    graph @g() {
      %y = Relu(%ghost)
      return %y, %nowhere
    })");
  Value* ghost = g->findValue("ghost");
  ASSERT_NE(ghost, nullptr);
  EXPECT_EQ(ghost->producer(), nullptr);
  EXPECT_FALSE(ghost->isGraphInput());
  EXPECT_FALSE(ghost->isInitializer());
  EXPECT_EQ(g->findValue("nowhere")->producer(), nullptr);
}

//   %x, %w (input with default data) -> MatMul -> %y
/// An initializer may also be a graph input (old ONNX style): it is listed
/// in the header and given data by a `const` line.
TEST(TextFormat, RoundTripsInitializerThatIsAlsoAnInput) {
  auto g = roundTrip(R"(
    graph @g(%x: f32[1, 2], %w: f32[2, 2]) {
      %c = const f32[2] splat(1.0)
      %w = const f32[2, 2] [1.0, 2.0, 3.0, 4.0]
      %y = MatMul(%x, %w)
      %z = Add(%y, %c)
      return %z
    })");
  Value* w = g->findValue("w");
  EXPECT_TRUE(w->isGraphInput());
  EXPECT_TRUE(w->isInitializer());
  EXPECT_EQ(valueNames(g->inputs()), (std::vector<std::string>{"x", "w"}));
  std::string printed = printGraph(*g);
  EXPECT_LT(printed.find("%w = const"), printed.find("%c = const"))
      << "constants that are inputs print first, in input order";
}

//   %x -> onednn.ConvBnRelu -> %y ; test.Sink(%y) has no results
/// Domain-qualified ops split at the last dot; ops without a schema parse
/// as plain nodes; a node may have no results; opset imports round-trip.
TEST(TextFormat, RoundTripsDomainsOpsetsAndResultlessNodes) {
  auto g = roundTrip(R"(
    # A comment before the graph.
    graph @g(%x: f32[1]) opset(ai.onnx = 17, com.microsoft = 1, "odd domain" = 3) {  # trailing
      %y = onednn.ConvBnRelu(%x)
      %z = com.microsoft.FusedGemm(%y)
      test.Sink(%z)
      return
    })");
  EXPECT_EQ(g->opsetImports().at(""), 17);
  EXPECT_EQ(g->opsetImports().at("com.microsoft"), 1);
  EXPECT_EQ(g->opsetImports().at("odd domain"), 3);
  Node* fused = g->findValue("z")->producer();
  EXPECT_EQ(fused->domain(), "com.microsoft");
  EXPECT_EQ(fused->opType(), "FusedGemm");
  EXPECT_EQ(fused->schema(), nullptr);
  EXPECT_EQ(g->numNodes(), 3u);
  EXPECT_TRUE(g->outputs().empty());
  EXPECT_THAT(printGraph(*g),
              HasSubstr("opset(ai.onnx = 17, com.microsoft = 1, \"odd domain\" = 3) {"));
}

/// Windows line endings, tabs and a UTF-8 byte order mark are accepted;
/// columns still count from the start of the line after the mark.
TEST(TextFormat, AcceptsBomCrlfAndTabs) {
  auto g = parseGraphOrThrow(
      "\xEF\xBB\xBFgraph @g(%x: f32[2]) {\r\n\t%y = Relu(%x)\r\n\treturn %y\r\n}\r\n");
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(parseError("\xEF\xBB\xBFgrph"),
            "<input>:1:1: expected 'graph' at the start of the input, found identifier 'grph'");
}

/// printNode gives the node's line without indentation; printTypes=false
/// drops result types.
TEST(TextFormat, PrintsSingleNodes) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %y: f32[2] = LeakyRelu(%x) {alpha = 0.1} @act
      return %y
    })");
  Node* n = g->findNode("act");
  EXPECT_EQ(printNode(*n), "%y: f32[2] = LeakyRelu(%x) {alpha = 0.1} @act");
  PrintOptions noTypes;
  noTypes.printTypes = false;
  EXPECT_EQ(printNode(*n, noTypes), "%y = LeakyRelu(%x) {alpha = 0.1} @act");
}

/// With elision on, big constants show a preview that the parser refuses
/// with an explanation instead of inventing data.
TEST(TextFormat, ElidesLargeConstantsOnlyOnRequest) {
  auto g = std::make_unique<Graph>("g");
  std::vector<float> data(100);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  g->addOutput(g->addInitializer("w", Tensor::fromVector(DataType::kFloat32, {10, 10}, data)));
  g->addOutput(g->addInitializer("s", Tensor::splat(DataType::kFloat32, {10, 10}, 0.5)));
  PrintOptions elide;
  elide.elideConstantsOver = 16;
  std::string printed = printGraph(*g, elide);
  EXPECT_THAT(printed, HasSubstr("%w = const f32[10, 10] [0.0, 1.0, 2.0, 3.0, ...]"));
  EXPECT_THAT(printed, HasSubstr("%s = const f32[10, 10] splat(0.5)"));
  EXPECT_THAT(parseError(printed), HasSubstr("<input>:2:47: constant data was elided"));
  EXPECT_THAT(printGraph(*g), HasSubstr("97.0, 98.0, 99.0]"));
}

/// A scratch directory for the external data tests, removed afterwards.
struct ScratchDir {
  ScratchDir() {
    char pattern[] = "/tmp/sg_text_XXXXXX";
    path = mkdtemp(pattern);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  void write(const std::string& name, const std::string& contents) const {
    std::ofstream(path / name, std::ios::binary) << contents;
  }
  std::filesystem::path path;
};

/// Printed with an external data stream, constants of at least the
/// threshold go to it (64-byte aligned) and the text names file, offset and
/// byte count; splats, strings and small constants stay inline. The .sg
/// then parses back from its directory bit for bit; the same text parsed
/// from memory, with no directory, is refused (not read from the working
/// directory).
TEST(TextFormat, RoundTripsExternalDataBesideTheFile) {
  auto g = std::make_unique<Graph>("g");
  std::vector<float> big(300), small = {1.5f, 2.5f, 3.5f, 4.5f};
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = std::bit_cast<float>(static_cast<uint32_t>(0x3f800001u + i));
  g->addOutput(g->addInitializer("a", Tensor::fromVector(DataType::kFloat32, {300}, big)));
  g->addOutput(g->addInitializer("s", Tensor::splat(DataType::kFloat32, {1000}, 0.5)));
  g->addOutput(g->addInitializer("b", Tensor::fromVector(DataType::kFloat32, {3, 100}, big)));
  g->addOutput(g->addInitializer("c", Tensor::fromVector(DataType::kFloat32, {4}, small)));
  ScratchDir dir;
  std::ostringstream data;
  PrintOptions print;
  print.externalData = &data;
  print.externalDataLocation = "m.sg.data";
  std::string text = printGraph(*g, print);
  EXPECT_THAT(text, HasSubstr("%a = const f32[300] external(\"m.sg.data\", 0, 1200)"));
  EXPECT_THAT(text, HasSubstr("%b = const f32[3, 100] external(\"m.sg.data\", 1216, 1200)"));
  EXPECT_THAT(text, HasSubstr("%s = const f32[1000] splat(0.5)"));
  EXPECT_THAT(text, HasSubstr("%c = const f32[4] [1.5, 2.5, 3.5, 4.5]"));
  EXPECT_EQ(data.str().size(), 2416u);
  dir.write("m.sg", text);
  dir.write("m.sg.data", data.str());
  StatusOr<std::unique_ptr<Graph>> back = parseGraphFile((dir.path / "m.sg").string());
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(printGraph(**back), printGraph(*g));
  EXPECT_THAT(parseError(text), HasSubstr("has no directory to read it from"));
}

/// Hostile or broken references fail with one line at the reference: a
/// path leaving the directory, a count that does not match the shape, a
/// range past the end of the file (checked before allocating), a missing
/// file, a directory or FIFO instead of a file, strings.
TEST(TextFormatErrors, RejectsExternalDataOutsideItsFileOrRange) {
  ScratchDir dir;
  dir.write("w.data", std::string(64, '\0'));
  std::filesystem::create_directory(dir.path / "sub");
  mkfifo((dir.path / "fifo").c_str(), 0600);
  auto error = [&](const std::string& data) {
    dir.write("g.sg", "graph @g() {\n  %w = const f32[4] " + data + "\n  return %w\n}\n");
    StatusOr<std::unique_ptr<Graph>> r = parseGraphFile((dir.path / "g.sg").string());
    return r.isOk() ? std::string("(parsed)") : r.status().message();
  };
  EXPECT_EQ(error(R"(external("w.data", 16, 16))"), "(parsed)");
  EXPECT_THAT(error(R"(external("/etc/passwd", 0, 16))"), HasSubstr("an absolute path"));
  EXPECT_THAT(error(R"(external("../w.data", 0, 16))"), HasSubstr("'..' in the path"));
  EXPECT_THAT(error(R"(external("sub/../../w.data", 0, 16))"), HasSubstr("'..' in the path"));
  EXPECT_THAT(error(R"(external("w.data", 0, 8))"),
              HasSubstr("external data holds 8 bytes, but f32[4] needs 16"));
  EXPECT_THAT(error(R"(external("w.data", 56, 16))"), HasSubstr("lie past its end (64 bytes)"));
  EXPECT_THAT(error(R"(external("w.data", 18446744073709551615, 16))"),
              HasSubstr("lie past its end"));
  EXPECT_THAT(error(R"(external("none.data", 0, 16))"), HasSubstr("no such file"));
  EXPECT_THAT(error(R"(external("sub", 0, 16))"), HasSubstr("not a regular file"));
  EXPECT_THAT(error(R"(external("fifo", 0, 16))"), HasSubstr("not a regular file"));
  EXPECT_THAT(error(R"(external("", 0, 16))"), HasSubstr("an empty file name"));
  EXPECT_THAT(error("external(\"w.data\", 0)"), HasSubstr("expected ',' after the offset"));
  EXPECT_THAT(error(R"(external("w.data", -1, 16))"), HasSubstr("g.sg:2:"));
  // Ranges may not overlap: a text repeating one range cannot multiply
  // memory past what the data file holds.
  dir.write("big.data", std::string(32, '\0'));
  std::string repeat = "graph @g() {\n";
  for (int i = 0; i < 3; ++i)
    repeat += "  %w" + std::to_string(i) + " = const f32[4] external(\"big.data\", 0, 16)\n";
  dir.write("r.sg", repeat + "  return %w0, %w1, %w2\n}\n");
  StatusOr<std::unique_ptr<Graph>> repeated = parseGraphFile((dir.path / "r.sg").string());
  ASSERT_FALSE(repeated.isOk());
  EXPECT_THAT(repeated.status().message(),
              HasSubstr("r.sg:4:31: external data 'big.data': the graph reads more bytes than its "
                        "data files hold (32)"));
  dir.write("s.sg",
            "graph @g() {\n  %w = const str[1] external(\"w.data\", 0, 8)\n  return %w\n}\n");
  StatusOr<std::unique_ptr<Graph>> strings = parseGraphFile((dir.path / "s.sg").string());
  ASSERT_FALSE(strings.isOk());
  EXPECT_THAT(strings.status().message(), HasSubstr("a str constant cannot be external data"));
}

/// A graph built through the API (not parsed) survives print and parse with
/// every name, type, attribute and constant intact.
TEST(TextFormat, PreservesGraphsBuiltThroughTheApi) {
  Graph g("api");
  g.setOpsetImport("", 18);
  Value* x = g.addInput("x", TensorType(DataType::kFloat32, {Dim::symbol("N"), 3}));
  Value* w = g.addInitializer(
      "w", Tensor::fromVector<float>(DataType::kFloat32, {3}, {0.1f, -0.0f, 3e38f}));
  auto body = std::make_shared<Graph>("body");
  body->addOutput(body->addNode("Relu", {body->createValue("x")})->output(0));
  Node* mul =
      g.addNode("Mul", {x, w}, 1,
                {Attribute("alpha", 0.25f), Attribute("axes", std::vector<int64_t>{}),
                 Attribute("names", std::vector<std::string>{"p", "q"}), Attribute("body", body),
                 Attribute("bodies", std::vector<std::shared_ptr<Graph>>{body, body})},
                "mul");
  mul->output(0)->setType(TensorType(DataType::kFloat32, {Dim::symbol("N"), 3}));
  Node* split = g.addNode("Split", {mul->output(0), nullptr}, 2, {}, "split");
  g.addOutput(split->output(1));
  g.addOutput(split->output(0));
  auto parsed = parseGraphOrThrow(printGraph(g));
  expectSameGraph(g, *parsed);
  EXPECT_EQ(printGraph(*parsed), printGraph(g));
}

//===--- Every registered op ----------------------------------------------===//

/// A value of `kind` for an attribute that has no default.
AttrValue synthesizeAttr(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return int64_t{1};
    case AttrKind::kFloat: return 0.5f;
    case AttrKind::kString: return std::string("x");
    case AttrKind::kInts: return std::vector<int64_t>{1, 2};
    case AttrKind::kFloats: return std::vector<float>{0.5f, -1.0f};
    case AttrKind::kStrings: return std::vector<std::string>{"a", "b"};
    case AttrKind::kTensor: return Tensor::fromVector<float>(DataType::kFloat32, {2}, {1.0f, 2.0f});
    case AttrKind::kGraph:
    case AttrKind::kGraphs: {
      auto body = std::make_shared<Graph>("body");
      Value* in = body->addInput("b_in", TensorType(DataType::kFloat32, {2}));
      body->addOutput(body->addNode("Identity", {in})->output(0));
      if (kind == AttrKind::kGraph) return body;
      return std::vector<std::shared_ptr<Graph>>{body, body};
    }
  }
  return int64_t{0};
}

/// The type given to an operand: its constraint's first allowed dtype.
TensorType operandType(const OpSchema& schema, const OperandSpec& spec) {
  DataType dtype = DataType::kFloat32;
  if (const TypeConstraint* tc = schema.findTypeConstraint(spec.typeConstraint))
    if (!tc->allowed.empty()) dtype = tc->allowed.front();
  return TensorType(dtype, {2, Dim::symbol("N")});
}

/// Adds a node of `schema`: `full` gives every optional operand, two values
/// per variadic operand and every attribute; otherwise optional operands
/// are omitted (`_`), variadics get their minimum and only required
/// attributes are set.
Node* addOpNode(Graph& g, const OpSchema& schema, bool full) {
  std::vector<Value*> inputs;
  for (const OperandSpec& spec : schema.inputs) {
    size_t count =
        spec.arity != Arity::kVariadic
            ? 1
            : std::max<size_t>(static_cast<size_t>(std::max(spec.minCount, 0)), full ? 2 : 0);
    for (size_t k = 0; k < count; ++k) {
      if (spec.arity == Arity::kOptional && !full) {
        inputs.push_back(nullptr);
        continue;
      }
      inputs.push_back(g.addInput(g.uniqueValueName("in"), operandType(schema, spec)));
    }
  }
  size_t numOutputs = 0;
  for (const OperandSpec& spec : schema.outputs)
    numOutputs += spec.arity == Arity::kVariadic
                      ? std::max<size_t>(static_cast<size_t>(std::max(spec.minCount, 0)), 2)
                      : 1;
  std::vector<Attribute> attrs;
  for (const AttrSpec& spec : schema.attributes)
    if (full || spec.required)
      attrs.emplace_back(spec.name,
                         spec.defaultValue ? *spec.defaultValue : synthesizeAttr(spec.kind));
  Node* node =
      g.addNode(schema.qualifiedName(), inputs, numOutputs, attrs, full ? "full" : "minimal");
  size_t k = 0;
  for (const OperandSpec& spec : schema.outputs) {
    size_t count = spec.arity == Arity::kVariadic
                       ? std::max<size_t>(static_cast<size_t>(std::max(spec.minCount, 0)), 2)
                       : 1;
    for (size_t i = 0; i < count; ++i) node->output(k++)->setType(operandType(schema, spec));
  }
  for (Value* out : node->outputs()) g.addOutput(out);
  return node;
}

//   %in... -> <Op> (all operands, all attributes) -> outputs
//   %in... -> <Op> (optional operands omitted, required attributes) -> outputs
/// Every op in the registry prints and parses back identically, resolving
/// to the same schema. The op table registers far more than 40 ops, so a
/// smaller registry means it is missing rather than that there is nothing
/// to check.
TEST(TextFormatOps, RoundTripsEveryRegisteredOp) {
  std::vector<const OpSchema*> schemas = OpRegistry::global().schemas();
  ASSERT_GE(schemas.size(), 40u) << "the built-in op table is not registered";
  for (const OpSchema* schema : schemas) {
    SCOPED_TRACE(schema->qualifiedName());
    Graph g("op_" + schema->name);
    addOpNode(g, *schema, /*full=*/true);
    addOpNode(g, *schema, /*full=*/false);
    std::string printed = printGraph(g);
    auto parsed = parseGraph(printed);
    ASSERT_TRUE(parsed.isOk()) << parsed.status().message() << "\n" << printed;
    EXPECT_EQ(printGraph(**parsed), printed);
    expectSameGraph(g, **parsed);
    for (Node* n : (*parsed)->nodes()) EXPECT_EQ(n->schema(), schema);
  }
}

//===--- Whole models -----------------------------------------------------===//

/// Real-shaped models with random weights (a small BERT, synthetic residual
/// and transformer chains) survive print and parse exactly.
TEST(TextFormatModels, RoundTripsZooModels) {
  std::vector<std::unique_ptr<Graph>> models;
  zoo::BertOptions bert;
  bert.layers = 2;
  bert.hidden = 16;
  bert.heads = 2;
  bert.intermediate = 32;
  bert.sequenceLength = 8;
  models.push_back(zoo::buildBert({}, bert));
  for (zoo::SyntheticShape shape :
       {zoo::SyntheticShape::kResidual, zoo::SyntheticShape::kTransformer}) {
    zoo::SyntheticOptions options;
    options.nodes = 300;
    options.unsupportedFraction = 0.1;
    options.shape = shape;
    models.push_back(zoo::buildSynthetic(options).value());
  }
  for (const auto& model : models) {
    SCOPED_TRACE(model->name());
    std::string printed = printGraph(*model);
    auto parsed = parseGraphOrThrow(printed);
    expectSameGraph(*model, *parsed);
    EXPECT_EQ(printGraph(*parsed), printed);
  }
}

//===--- Errors: one test per class of malformed input -------------------===//

/// Input must start with the `graph` keyword.
TEST(TextFormatErrors, RejectsMissingGraphKeyword) {
  EXPECT_EQ(parseError("\n  grph @g() {}"),
            "<input>:2:3: expected 'graph' at the start of the input, found identifier 'grph'");
}

/// An empty input is not a graph.
TEST(TextFormatErrors, RejectsEmptyInput) {
  EXPECT_EQ(parseError("  # only a comment\n"),
            "<input>:2:1: expected 'graph' at the start of the input, found end of input");
}

/// Strings must close on the line they open.
TEST(TextFormatErrors, RejectsUnterminatedString) {
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo(%x) {s = \"abc\n}"),
            "<input>:2:21: unterminated string: missing closing '\"' before end of line");
  EXPECT_EQ(parseError("graph @\"g"),
            "<input>:1:8: unterminated string: missing closing '\"' before end of input");
}

/// Only the documented escapes are allowed; the error points at the escape.
TEST(TextFormatErrors, RejectsUnknownEscape) {
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {s = \"ab\\q\"}\n}"),
            "<input>:2:22: unknown escape '\\' followed by 'q' in string (use \\\" \\\\ \\n \\t "
            "\\r or \\xHH)");
}

/// A character outside the grammar is named, even a control byte.
TEST(TextFormatErrors, RejectsStrayCharacters) {
  EXPECT_EQ(parseError("graph @g() {\n  $y = Foo()\n}"), "<input>:2:3: unexpected character '$'");
  EXPECT_EQ(parseError(std::string("graph @g() {\n \x01}")),
            "<input>:2:2: unexpected character byte 0x01");
}

/// A sigil needs a name after it.
TEST(TextFormatErrors, RejectsSigilWithoutName) {
  EXPECT_EQ(parseError("graph @g(% ) {}"),
            "<input>:1:10: expected a name or a quoted string after '%', found ' '");
  EXPECT_EQ(parseError("graph @g(%\"\") {}"), "<input>:1:10: value name must not be empty");
}

/// Graph inputs are separated by commas and closed by ')'.
TEST(TextFormatErrors, RejectsMalformedInputList) {
  EXPECT_EQ(parseError("graph @g(%x: f32[2] %y) {}"),
            "<input>:1:21: expected ',' or ')' in the graph inputs, found value %y");
  EXPECT_EQ(parseError("graph @g(x) {}"),
            "<input>:1:10: expected a graph input such as '%x', found identifier 'x'");
}

/// Element types must be one of the known short names.
TEST(TextFormatErrors, RejectsUnknownElementType) {
  EXPECT_EQ(parseError("graph @g(%x: f33[2]) {}"),
            "<input>:1:14: unknown element type 'f33' (expected f16, bf16, f32, f64, i8, i16, i32, "
            "i64, u8, u16, u32, u64, bool or str)");
}

/// Dims are non-negative integers, symbols or '?'.
TEST(TextFormatErrors, RejectsBadDims) {
  EXPECT_EQ(parseError("graph @g(%x: f32[-1]) {}"),
            "<input>:1:18: integer -1 is out of range for a dimension (dims are >= 0) [0, "
            "9223372036854775807]");
  EXPECT_EQ(parseError("graph @g(%x: f32[2, 1.5]) {}"),
            "<input>:1:21: expected a dimension (an integer, a symbol such as 'N', or '?'), found "
            "float 1.5");
}

/// Defining a value twice is an error that points at both definitions.
TEST(TextFormatErrors, RejectsValueDefinedTwice) {
  EXPECT_EQ(parseError("graph @g(%x) {\n  %y = Relu(%x)\n  %y = Neg(%x)\n  return %y\n}"),
            "<input>:3:3: value %y is already defined at 2:3");
  EXPECT_EQ(parseError("graph @g(%x, %x) {}"), "<input>:1:14: value %x is already defined at 1:10");
  EXPECT_EQ(parseError("graph @g(%x) {\n  %x = Relu(%x)\n}"),
            "<input>:2:3: value %x is already defined at 1:10");
  EXPECT_EQ(parseError("graph @g() {\n  %a, %a = Split(%x)\n}"),
            "<input>:2:7: value %a is already defined at 2:3");
}

/// A constant defines one value and takes its type from its data.
TEST(TextFormatErrors, RejectsMalformedConstants) {
  EXPECT_EQ(parseError("graph @g() {\n  %a, %b = const f32[1] [1.0]\n}"),
            "<input>:2:7: a constant defines exactly one value");
  EXPECT_EQ(parseError("graph @g() {\n  %a: f32[1] = const f32[1] [1.0]\n}"),
            "<input>:2:7: a constant takes its type from its data; remove the ': <type>' on %a");
  EXPECT_EQ(parseError("graph @g() {\n  %a = const f32[N] splat(1.0)\n}"),
            "<input>:2:14: a constant's shape must be static, got [N]");
  EXPECT_EQ(parseError("graph @g() {\n  %a = const f32 splat(1.0)\n}"),
            "<input>:2:18: expected the constant's shape, e.g. '[2, 3]' ('[]' for a scalar), found "
            "identifier 'splat'");
  EXPECT_EQ(parseError("graph @g() {\n  %a = const f32 [1.0]\n}"),
            "<input>:2:19: expected a dimension (an integer, a symbol such as 'N', or '?'), found "
            "float 1.0");
}

/// The element count must match the shape exactly.
TEST(TextFormatErrors, RejectsWrongElementCount) {
  EXPECT_EQ(parseError("graph @g() {\n  %a = const i32[3] [1, 2]\n}"),
            "<input>:2:26: too few elements: shape [3] holds 3 but 2 were given (opened at 2:21)");
  EXPECT_EQ(parseError("graph @g() {\n  %a = const i32[1] [1, 2]\n}"),
            "<input>:2:25: too many elements: shape [1] holds 1");
}

/// Element values must fit their element type.
TEST(TextFormatErrors, RejectsOutOfRangeElements) {
  EXPECT_EQ(parseError("graph @g() {\n  %a = const u8[2] [1, 256]\n}"),
            "<input>:2:24: integer 256 is out of range for u8 [0, 255]");
  EXPECT_EQ(parseError("graph @g() {\n  %a = const i8[1] [1.5]\n}"),
            "<input>:2:21: expected an integer element of i8, found float 1.5");
  EXPECT_EQ(parseError("graph @g() {\n  %a = const f32[1] [1e39]\n}"),
            "<input>:2:22: number 1e39 is out of range for f32");
  EXPECT_EQ(parseError("graph @g() {\n  %a = const f16[1] [70000]\n}"),
            "<input>:2:22: number 70000 is out of range for f16");
  EXPECT_EQ(parseError("graph @g() {\n  %a = const bf16[1] [1e-45]\n}"),
            "<input>:2:23: number 1e-45 is out of range for bf16");
  EXPECT_EQ(parseError("graph @g() {\n  %a = const f32[1] [nan(0x3f800000)]\n}"),
            "<input>:2:22: nan(0x3f800000) is not a NaN bit pattern of f32");
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {k = 99999999999999999999}\n}"),
            "<input>:2:19: integer 99999999999999999999 is out of range");
}

/// Huge shapes are refused before anything is allocated.
TEST(TextFormatErrors, RejectsConstantsOverTheSizeLimit) {
  EXPECT_EQ(parseError("graph @g() {\n  %a = const f32[1000000, 1000000] splat(0.0)\n}"),
            "<input>:2:14: constant f32[1000000, 1000000] exceeds the limit of 1073741824 bytes");
  EXPECT_EQ(parseError("graph @g() {\n  %a = const f32[9223372036854775807, 2] splat(0.0)\n}"),
            "<input>:2:14: constant f32[9223372036854775807, 2] exceeds the limit of 1073741824 "
            "bytes");
}

/// Empty lists must say their kind; lists may not mix strings and numbers.
TEST(TextFormatErrors, RejectsAmbiguousLists) {
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {k = []}\n}"),
            "<input>:2:19: an empty list needs its kind: write ints[], floats[], strings[] or "
            "graphs[]");
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {k = [1, \"a\"]}\n}"),
            "<input>:2:23: a list cannot mix numbers and strings");
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {k = ints[1, 2.0]}\n}"),
            "<input>:2:27: expected an integer, found float 2.0");
}

/// Attribute lists need names, '=' and values, each name once.
TEST(TextFormatErrors, RejectsMalformedAttributes) {
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {a = 1, a = 2}\n}"),
            "<input>:2:22: attribute 'a' is given twice");
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {a 1}\n}"),
            "<input>:2:17: expected '=' after attribute name 'a', found integer 1");
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {a = %x}\n}"),
            "<input>:2:19: expected an attribute value (number, string, list, tensor or graph), "
            "found value %x");
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {a = 1 b = 2}\n}"),
            "<input>:2:21: expected ',' or '}' in the attribute list, found identifier 'b'");
}

/// A node needs an op name and a parenthesized operand list.
TEST(TextFormatErrors, RejectsMalformedNodes) {
  EXPECT_EQ(parseError("graph @g() {\n  %y = (%x)\n}"),
            "<input>:2:8: expected an op name or 'const' after '=', found '('");
  EXPECT_EQ(parseError("graph @g() {\n  %y = Relu %x\n}"),
            "<input>:2:13: expected '(' after op name 'Relu', found value %x");
  EXPECT_EQ(parseError("graph @g() {\n  %y = Add(%a %b)\n}"),
            "<input>:2:15: expected ',' or ')' in the operand list, found value %b");
  EXPECT_EQ(parseError("graph @g() {\n  %y Relu(%x)\n}"),
            "<input>:2:6: expected ',' or '=' after a result, found identifier 'Relu'");
  EXPECT_EQ(parseError("graph @g() {\n  %y = return(%x)\n}"),
            "<input>:2:8: 'return' is a reserved word; quote it to use it as an op name");
}

/// `return` ends the graph; nothing may follow it but '}'.
TEST(TextFormatErrors, RejectsStatementsAfterReturn) {
  EXPECT_EQ(parseError("graph @g(%x) {\n  return %x\n  %y = Relu(%x)\n}"),
            "<input>:3:3: expected '}' after the return statement, which ends the graph, found "
            "value %y");
}

/// An unclosed graph and trailing input are reported where they occur.
TEST(TextFormatErrors, RejectsUnclosedGraphAndTrailingInput) {
  EXPECT_EQ(parseError("graph @g(%x) {\n  %y = Relu(%x)\n"),
            "<input>:3:1: expected '}' to close the graph, found end of input");
  EXPECT_EQ(parseError("graph @g() {\n  return\n}\ngraph @h() {}"),
            "<input>:4:1: expected end of input after the graph's closing '}', found identifier "
            "'graph'");
}

/// Malformed numbers are caught by the lexer with the offending character.
TEST(TextFormatErrors, RejectsMalformedNumbers) {
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {k = 12abc}\n}"),
            "<input>:2:21: unexpected 'a' after number '12'");
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {k = -x}\n}"),
            "<input>:2:19: expected a number after '-', found 'x'");
}

/// Opset imports list each domain once with an integer version.
TEST(TextFormatErrors, RejectsMalformedOpsets) {
  EXPECT_EQ(parseError("graph @g() opset(ai.onnx = 17, \"\" = 18) {}"),
            "<input>:1:32: opset for domain '' is given twice");
  EXPECT_EQ(parseError("graph @g() opset(ai.onnx = x) {}"),
            "<input>:1:28: expected an opset version number, found identifier 'x'");
}

/// Nesting graphs deeper than the limit is an error, not a stack overflow.
TEST(TextFormatErrors, RejectsGraphsNestedTooDeeply) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "graph { %y = If() {b = ";
  EXPECT_EQ(parseError(text), "<input>:1:1473: graphs nested deeper than the limit of 64 levels");
  ParseOptions shallow;
  shallow.maxGraphDepth = 2;
  shallow.sourceName = "deep.sg";
  auto result = parseGraph(
      "graph {\n %y = If() {b = graph {\n %z = If() {b = graph { return }}\n return }}\n return }",
      shallow);
  ASSERT_FALSE(result.isOk());
  EXPECT_EQ(result.status().message(),
            "deep.sg:3:17: graphs nested deeper than the limit of 2 levels");
}

/// Elided constant data ('...') cannot be parsed back.
TEST(TextFormatErrors, RejectsElidedConstants) {
  EXPECT_EQ(parseError("graph @g() {\n  %a = const f32[9] [1.0, ...]\n}"),
            "<input>:2:27: constant data was elided ('...') when it was printed; print with "
            "elideConstantsOver = 0 to get a parseable graph");
}

/// parseGraphOrThrow throws an Error carrying the same message.
TEST(TextFormatErrors, ThrowsFromParseGraphOrThrow) {
  try {
    parseGraphOrThrow("graph @g( {}");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "<input>:1:11: expected a graph input such as '%x', found '{'");
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  }
}

/// Path of a file under tests/data/graphs; ctest passes the source dir in the
/// environment, a direct run of the binary falls back to this file's path.
std::filesystem::path graphFile(const std::string& name) {
  const char* dir = std::getenv("SUBGRAPH_SOURCE_DIR");
  std::filesystem::path root =
      dir ? std::filesystem::path(dir)
          : std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  return root / "tests" / "data" / "graphs" / name;
}

/// The ResNet-50 bottleneck block used by the CLI demo parses into the
/// expected structure and round-trips.
TEST(TextFormat, ParsesResNetBottleneckFile) {
  auto parsed = parseGraphFile(graphFile("resnet_block.sg").string());
  ASSERT_TRUE(parsed.isOk()) << parsed.status().message();
  Graph& g = **parsed;
  EXPECT_EQ(g.name(), "resnet50_layer2_0");
  EXPECT_EQ(g.numNodes(), 12u);
  EXPECT_EQ(g.initializers().size(), 20u);
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.inputs()[0]->type(), TensorType(DataType::kFloat32, {1, 256, 56, 56}));
  Node* conv2 = g.findNode("layer2.0.conv2");
  ASSERT_NE(conv2, nullptr);
  EXPECT_EQ(conv2->attr("strides")->asInts(), (std::vector<int64_t>{2, 2}));
  const Tensor* w = conv2->input(1)->initializer();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dims(), (std::vector<int64_t>{128, 128, 3, 3}));
  EXPECT_FLOAT_EQ(w->data<float>()[1000], 0.02f);
  Node* add = g.findNode("layer2.0.add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->input(0)->producer()->name(), "layer2.0.bn3");
  EXPECT_EQ(add->input(1)->producer()->name(), "layer2.0.downsample.1");
  EXPECT_EQ(g.opsetImports().at(""), 17);
  std::string printed = printGraph(g);
  EXPECT_EQ(printGraph(*parseGraphOrThrow(printed)), printed);
}

/// Every example graph under tests/data/graphs parses and round-trips.
TEST(TextFormat, ParsesEveryExampleGraphFile) {
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(graphFile("").parent_path())) {
    if (entry.path().extension() != ".sg") continue;
    SCOPED_TRACE(entry.path().string());
    ++count;
    auto parsed = parseGraphFile(entry.path().string());
    ASSERT_TRUE(parsed.isOk()) << parsed.status().message();
    EXPECT_GT((*parsed)->numNodes(), 0u);
    std::string printed = printGraph(**parsed);
    auto reparsed = parseGraphOrThrow(printed);
    EXPECT_EQ(printGraph(*reparsed), printed);
    expectSameGraph(**parsed, *reparsed);
  }
  EXPECT_GE(count, 4u);
}

/// The If example keeps outer-scope reads inside its branches by name.
TEST(TextFormat, ParsesIfExampleWithOuterScopeReads) {
  auto parsed = parseGraphFile(graphFile("if_branches.sg").string());
  ASSERT_TRUE(parsed.isOk()) << parsed.status().message();
  Node* branch = (*parsed)->findNode("branch");
  ASSERT_NE(branch, nullptr);
  const Graph& negate = *branch->attr("else_branch")->asGraph();
  EXPECT_EQ(negate.numNodes(), 2u);
  Value* x = negate.findValue("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->producer(), nullptr);
  EXPECT_EQ(x->uses().size(), 1u);
}

/// Random corruptions of valid text never crash the parser: each either
/// fails with one "<input>:<line>:<col>: ..." line or parses into a graph
/// that round-trips exactly. The seed is printed so a failure can be
/// replayed.
TEST(TextFormat, SurvivesRandomlyCorruptedInput) {
  const std::string seeds[] = {
      R"(graph @g(%x: f32[N, 2], %"q r": i64) opset(ai.onnx = 17) {
  %w = const f32[2] [1.5, nan]
  %s = const str[2] ["a\n", "b"]
  %y: f32[N, 2] = Add(%x, %w) {k = [1, 2], f = 1e-05, s = "x", e = ints[]} @add
  %a, %b = Split(%y, _) {axis = 1, t = f16[2] [0.1, -0.0]}
  %z = If(%c) {then_branch = graph @t() { %u = Relu(%y) return %u }, else_branch = graph { return %a }}
  return %z, %b
})",
  };
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::printf("SurvivesRandomlyCorruptedInput seed: %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const std::string alphabet = "%@\"\\[](){},=:?_.-#0123456789eEnaxfi \n\x01\xff";
  size_t accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text = seeds[rng() % std::size(seeds)];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t pos = rng() % text.size();
      switch (rng() % 4) {
        case 0: text.erase(pos, 1 + rng() % 8); break;
        case 1: text.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        case 2: text[pos] = alphabet[rng() % alphabet.size()]; break;
        default: text.resize(pos); break;
      }
    }
    auto result = parseGraph(text);
    if (!result.isOk()) {
      const std::string& msg = result.status().message();
      ASSERT_THAT(msg, ::testing::MatchesRegex("<input>:[0-9]+:[0-9]+: .+")) << text;
      ASSERT_EQ(msg.find('\n'), std::string::npos) << msg;
      continue;
    }
    ++accepted;
    std::string printed = printGraph(**result);
    auto reparsed = parseGraph(printed);
    ASSERT_TRUE(reparsed.isOk()) << reparsed.status().message() << "\ninput:\n"
                                 << text << "\nprinted:\n"
                                 << printed;
    ASSERT_EQ(printGraph(**reparsed), printed) << "input:\n" << text;
  }
  std::printf("SurvivesRandomlyCorruptedInput: %zu of 3000 corrupted inputs still parsed\n",
              accepted);
}

// A chain of `count` Relu nodes, one statement per line, every name long
// enough to need a heap string of its own.
std::string reluChain(int count) {
  std::string text = "graph @chain(%input_value_of_the_chain: f32[1, 4]) {\n";
  std::string last = "input_value_of_the_chain";
  for (int i = 0; i < count; ++i) {
    std::string next = "relu_output_number_" + std::to_string(i);
    text +=
        "  %" + next + ": f32[1, 4] = Relu(%" + last + ") @relu_node_" + std::to_string(i) + "\n";
    last = next;
  }
  return text + "  return %" + last + "\n}\n";
}

//   %input -> Relu -> Relu -> ... (300 nodes)
/// The parser makes room for about one statement per line of a large input
/// before it starts; the same graph written on a single line (room for
/// none) parses to the very same nodes, values, ids and names.
TEST(TextFormat, ParsesTheSameGraphWithOrWithoutRoomMadeUpFront) {
  const std::string perLine = reluChain(300);
  std::string oneLine = perLine;
  std::replace(oneLine.begin(), oneLine.end(), '\n', ' ');
  auto reserved = parseGraphOrThrow(perLine);
  auto grown = parseGraphOrThrow(oneLine);
  EXPECT_EQ(printGraph(*reserved), perLine);
  EXPECT_EQ(printGraph(*grown), perLine);
  ASSERT_EQ(reserved->valueIdBound(), grown->valueIdBound());
  for (ValueId id = 0; id < reserved->valueIdBound(); ++id) {
    EXPECT_EQ(reserved->value(id)->name(), grown->value(id)->name()) << id;
    EXPECT_EQ(reserved->findValue(grown->value(id)->name()), reserved->value(id)) << id;
  }
}

/// Names with escapes are decoded into storage that must outlive many
/// later tokens; thousands of them (more than one block of that storage)
/// keep their exact bytes, as do names without escapes next to them.
TEST(TextFormat, KeepsEveryDecodedNameIntact) {
  // Value i is spelled %"v\"<i>\n<pad>" and holds v"<i>, a newline, <pad>.
  const std::string pad(20, 'p');
  auto spelled = [&](int i) { return "%\"v\\\"" + std::to_string(i) + "\\n" + pad + "\""; };
  auto decoded = [&](int i) { return "v\"" + std::to_string(i) + "\n" + pad; };
  std::string text = "graph @g(%\"in\\x01\") {\n";
  for (int i = 0; i < 3000; ++i)
    text += "  " + spelled(i) + " = Relu(" + (i ? spelled(i - 1) : "%\"in\\x01\"") + ") @plain" +
            std::to_string(i) + "\n";
  text += "}\n";
  auto g = parseGraphOrThrow(text);
  ASSERT_EQ(g->numNodes(), 3000u);
  for (int i = 0; i < 3000; i += 97) {
    Value* v = g->findValue(decoded(i));
    ASSERT_NE(v, nullptr) << i;
    EXPECT_EQ(v->producer()->name(), "plain" + std::to_string(i));
    EXPECT_EQ(v->producer()->input(0)->name(), i ? decoded(i - 1) : "in\x01");
  }
}

/// Negative: a repeated attribute is found however long the list; past a
/// handful of names the check switches from a scan to a set.
TEST(TextFormatErrors, RejectsARepeatedAttributeInALongList) {
  std::string attrs;
  for (int i = 0; i < 40; ++i) attrs += "a" + std::to_string(i) + " = 1, ";
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {" + attrs + "a7 = 2}\n}"),
            "<input>:2:" + std::to_string(15 + attrs.size()) + ": attribute 'a7' is given twice");
  EXPECT_EQ(parseError("graph @g() {\n  %y = Foo() {a0 = 1, b = 2, a0 = 3}\n}"),
            "<input>:2:30: attribute 'a0' is given twice");
  EXPECT_TRUE(parseGraph("graph @g() {\n  %y = Foo() {" + attrs + "z = 2}\n}").isOk());
}

/// A missing file is a one-line error naming it.
TEST(TextFormat, ReportsMissingFile) {
  auto parsed = parseGraphFile("/nonexistent/graph.sg");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_EQ(parsed.status().message(), "cannot open graph file '/nonexistent/graph.sg'");
}

}  // namespace
}  // namespace subgraph
