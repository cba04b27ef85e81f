//===- tests/core/verifier_test.cpp - One test per class of bad graph -----===//
//
// Each test writes a tiny graph (text format where the text can express the
// defect, the Graph API where only a broken mutation can), runs verify() and
// asserts that the one-line message names the node and value involved.
// Valid graphs (a real ResNet block, bodies capturing outer values) must
// verify cleanly, which is what the DoesNotReject* tests pin down.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "subgraph/ir/text_format.h"

namespace subgraph {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Test-only ops in the "test" domain, for rules the built-in table may not
// exercise: an op-specific VerifyFn and a variadic operand with a minimum.
void registerTestSchemas() {
  static const bool registered = [] {
    OpSchema even;
    even.domain = "test";
    even.name = "EvenOnly";
    even.inputs = {{"X", Arity::kSingle, "T", "", 1}};
    even.outputs = {{"Y", Arity::kSingle, "T", "", 1}};
    even.attributes = {{"n", AttrKind::kInt, true, std::nullopt, "Must be even."}};
    even.typeConstraints = {{"T", {DataType::kFloat32}}};
    even.verify = [](const Node& node) {
      if (node.getInt("n") % 2 == 0) return Status::ok();
      return Status::invalid("test.EvenOnly node '" + node.displayName() +
                             "': n = " + std::to_string(node.getInt("n")) + " is odd");
    };
    OpSchema pack;
    pack.domain = "test";
    pack.name = "PackAtLeastTwo";
    pack.inputs = {{"first", Arity::kOptional, "", "", 1}, {"rest", Arity::kVariadic, "", "", 2}};
    pack.outputs = {{"Y", Arity::kSingle, "", "", 1}};
    OpSchema quiet;  // a VerifyFn whose message forgets to name the node
    quiet.domain = "test";
    quiet.name = "AlwaysWrong";
    quiet.outputs = {{"Y", Arity::kSingle, "", "", 1}};
    quiet.verify = [](const Node&) { return Status::invalid("something is off"); };
    for (OpSchema* s : {&even, &pack, &quiet})
      throwIfError(OpRegistry::global().registerSchema(std::move(*s)));
    return true;
  }();
  (void)registered;
}

// The message verify() gives for `graph`, or "" when it verifies.
std::string problem(const Graph& graph, const VerifyOptions& options = {}) {
  return verify(graph, options).message();
}

std::filesystem::path sourceDir() {
  if (const char* env = std::getenv("SUBGRAPH_SOURCE_DIR")) return env;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

//===--- Valid graphs ---------------------------------------------------===//

/// A real ResNet-50 bottleneck block (Conv, BatchNormalization, Relu, Add
/// with typed results and weights) verifies with no problem at all.
TEST(Verifier, AcceptsResNetBlock) {
  // See tests/data/graphs/resnet_block.sg for the sketch:
  //   x -> conv1/bn1/relu -> conv2/bn2/relu -> conv3/bn3 -+-> Add -> Relu -> y
  //   x -> downsample conv/bn ----------------------------+
  auto parsed = parseGraphFile((sourceDir() / "tests/data/graphs/resnet_block.sg").string());
  ASSERT_TRUE(parsed.isOk()) << parsed.status().message();
  const std::unique_ptr<Graph>& g = parsed.value();
  ASSERT_EQ(g->numNodes(), 12u);
  EXPECT_TRUE(verify(*g).isOk()) << verify(*g).message();
  EXPECT_TRUE(verifyAll(*g).empty());
}

/// Omitted optional inputs are fine; a body reading outer values by name is
/// an outer-scope capture, not a dangling value.
TEST(Verifier, DoesNotRejectOptionalInputsOrOuterCaptures) {
  //   x, w -> Conv (no bias) -> c
  //   flag -> If(then: Relu(c), else: Neg(c)) -> r      (c captured by name)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 2, 4, 4], %w: f32[2, 2, 1, 1], %flag: bool[]) {
      %c: f32[1, 2, 4, 4] = Conv(%x, %w, _) @conv
      %r: f32[1, 2, 4, 4] = If(%flag) {
        then_branch = graph @then() {
          %t: f32[1, 2, 4, 4] = Relu(%c) @then_relu
          return %t
        },
        else_branch = graph @else() {
          %e: f32[1, 2, 4, 4] = Neg(%c) @else_neg
          return %e
        }} @if
      return %r
    })");
  EXPECT_EQ(problem(*g), "");
}

//===--- Step 1 and 2: links and definitions ----------------------------===//

/// A node input with no producer that is neither an input nor a constant.
TEST(Verifier, RejectsDanglingValue) {
  //   x -> Relu a      ghost (never defined) -> Relu b
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %b = Relu(%ghost) @b
      return %a, %b
    })");
  EXPECT_EQ(problem(*g),
            "Relu node 'b' reads value 'ghost' (input 0), which has no producer and is neither a "
            "graph input nor a constant");
}

/// Removing a producer but keeping its output leaves the consumer dangling.
TEST(Verifier, RejectsValueWhosePoducerWasRemoved) {
  //   x -> Relu a -> y -> Relu b      (a removed, y kept)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) @a
      %z = Relu(%y) @b
      return %z
    })");
  g->removeNode(g->findNode("a"), /*keepOutputs=*/true);
  EXPECT_THAT(problem(*g), StartsWith("Relu node 'b' reads value 'y' (input 0), which has no"));
}

/// A graph output that nothing defines.
TEST(Verifier, RejectsDanglingGraphOutput) {
  //   x -> Relu a -> (output 0);  nowhere -> (output 1)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      return %a, %nowhere
    })");
  EXPECT_EQ(problem(*g),
            "graph output 1 ('nowhere') has no producer and is neither a graph input nor a "
            "constant");
}

/// addNode with a pre-made output that already has a producer gives the
/// value two producers; both nodes are named.
TEST(Verifier, RejectsValueWithTwoProducers) {
  //   x -> Relu first  -> y
  //   x -> Neg  second -> y      (same value)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) @first
      return %y
    })");
  g->addNode(OpRegistry::global().intern("", "Neg"), {g->findValue("x")}, {g->findValue("y")}, {},
             "second");
  EXPECT_EQ(problem(*g),
            "value 'y' has two producers: Neg node 'second' and Relu node 'first' "
            "(its output 0)");
}

/// A graph input that a node also computes.
TEST(Verifier, RejectsGraphInputThatIsAlsoProduced) {
  //   x -> Relu r -> (output);   Neg n writes x
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %r = Relu(%x) @r
      return %r
    })");
  Value* x = g->findValue("x");
  g->addNode(OpRegistry::global().intern("", "Neg"), {g->findValue("r")}, {x}, {}, "n");
  EXPECT_EQ(problem(*g, {.checkSchemas = false}),
            "graph input 'x' is also computed by Neg node 'n' (output 0)");
}

/// A node left pointing at a value that was freed (two-producer escape
/// hatch, then the other producer removed) is reported, not dereferenced.
TEST(Verifier, RejectsNodeOutputPointingAtRemovedValue) {
  //   x -> Relu first -> y      (y then claimed by Neg second, which is
  //                              removed together with y)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) @first
      return %x
    })");
  Node* second = g->addNode(OpRegistry::global().intern("", "Neg"), {g->findValue("x")},
                            {g->findValue("y")}, {}, "second");
  g->removeNode(second);
  Status status = verify(*g);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(),
            "Relu node 'first' output 0 points at a value that is not in graph "
            "'g' (removed, or from another graph)");
}

/// A body graph node linked straight to an outer Value (instead of
/// capturing it by name) is reported with the path to the body.
TEST(Verifier, RejectsBodyLinkedToOuterValueDirectly) {
  //   flag -> If(then: Relu(x) linked to the outer x) -> r
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4], %flag: bool[]) {
      %r = If(%flag) {then_branch = graph @then() { return %flag },
                      else_branch = graph @else() { return %flag }} @if
      return %r
    })");
  auto body = std::make_shared<Graph>("linked");
  Node* relu = body->addNode("Relu", {}, 1, {}, "relu");
  body->addOutput(relu->output(0));
  // The outer x also records this stray use, which the outer graph reports
  // first; the body's own problem must still be found.
  body->setNodeInput(relu, 0, g->findValue("x"));
  g->findNode("if")->setAttr("then_branch", body);
  std::vector<Status> problems = verifyAll(*g);
  ASSERT_FALSE(problems.empty());
  std::string all;
  for (const Status& s : problems) all += s.message() + "\n";
  EXPECT_THAT(all, HasSubstr("in If node 'if' attribute 'then_branch': Relu node 'relu' input 0 "
                             "reads value 'x' of enclosing graph 'g' directly"));
}

/// A use list naming a node of another graph (an internal invariant
/// violation) is reported as such, without following the stray pointer.
TEST(Verifier, RejectsUseListNamingForeignNode) {
  //   graph g:   x -> Relu r -> (output)
  //   graph other: Neg stray, linked straight to g's x (so x records it)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %r = Relu(%x) @r
      return %r
    })");
  Graph other("other");
  Node* stray = other.addNode("Neg", {}, 1, {}, "stray");
  other.setNodeInput(stray, 0, g->findValue("x"));
  Status status = verify(*g);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(),
            "value 'x' lists a use by a node that is not in graph 'g' (removed?)");
  EXPECT_EQ(verify(other).message(),
            "Neg node 'stray' input 0 points at a value that is not in "
            "graph 'other' (removed, or from another graph)");
}

//===--- Step 3: cycles -------------------------------------------------===//

/// A cycle is reported with the nodes on it, in feed order.
TEST(Verifier, RejectsCycle) {
  //   x -> Add p (x + c) -> Relu q -> Relu r -> c
  //          ^--------------------------------+
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Add(%x, %c) @p
      %b = Relu(%a) @q
      %c = Relu(%b) @r
      return %c
    })");
  EXPECT_EQ(problem(*g),
            "graph 'g' has a cycle: Add node 'p' -> Relu node 'q' -> Relu node 'r' -> Add node "
            "'p'");
}

//===--- Step 4: schemas ------------------------------------------------===//

/// An op nobody registered is an error unless allowUnknownOps is set.
TEST(Verifier, RejectsUnknownOp) {
  //   x -> NoSuchOp mystery -> y
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = NoSuchOp(%x) @mystery
      return %y
    })");
  Status status = verify(*g);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_THAT(status.message(), StartsWith("NoSuchOp node 'mystery' uses unknown op 'NoSuchOp'"));
  EXPECT_EQ(problem(*g, {.allowUnknownOps = true}), "");
}

/// Too many inputs for a fixed-arity op.
TEST(Verifier, RejectsWrongInputCount) {
  //   x, x -> Relu r      (Relu takes one input)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x, %x) @r
      return %y
    })");
  EXPECT_EQ(problem(*g), "Relu node 'r' has 2 inputs, but Relu takes exactly 1");
}

/// Too many results for a single-output op.
TEST(Verifier, RejectsWrongOutputCount) {
  //   x -> Relu r -> (a, b)      (Relu produces one output)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a, %b = Relu(%x) @r
      return %a, %b
    })");
  EXPECT_EQ(problem(*g), "Relu node 'r' has 2 outputs, but Relu produces exactly 1");
}

/// A variadic operand with a minimum count enforces it.
TEST(Verifier, RejectsTooFewVariadicInputs) {
  //   _, x -> test.PackAtLeastTwo p      (needs the optional slot plus two)
  registerTestSchemas();
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = test.PackAtLeastTwo(_, %x) @p
      return %y
    })");
  EXPECT_EQ(problem(*g),
            "test.PackAtLeastTwo node 'p' has 2 inputs, but test.PackAtLeastTwo "
            "takes at least 3");
}

/// A required (single) operand left out with `_`.
TEST(Verifier, RejectsMissingRequiredInput) {
  //   x, _ -> Conv c      (W is required)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 2, 4, 4]) {
      %y = Conv(%x, _) @c
      return %y
    })");
  EXPECT_EQ(problem(*g), "Conv node 'c': required input 1 ('W') is missing");
}

/// MaxPool cannot run without kernel_shape.
TEST(Verifier, RejectsMissingRequiredAttribute) {
  //   x -> MaxPool pool      (no kernel_shape)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 2, 4, 4]) {
      %y = MaxPool(%x) {strides = [2, 2]} @pool
      return %y
    })");
  EXPECT_EQ(problem(*g), "MaxPool node 'pool' is missing required attribute 'kernel_shape' (ints)");
}

/// An attribute given with the wrong kind (int where ints is defined).
TEST(Verifier, RejectsWrongAttributeKind) {
  //   x, w -> Conv c {strides = 2}
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 2, 4, 4], %w: f32[2, 2, 1, 1]) {
      %y = Conv(%x, %w) {strides = 2} @c
      return %y
    })");
  EXPECT_EQ(problem(*g), "Conv node 'c': attribute 'strides' is int, but Conv defines it as ints");
}

/// An attribute the op does not define is an error unless allowed.
TEST(Verifier, RejectsUnknownAttribute) {
  //   x -> Relu r {alpha = 0.1}
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) {alpha = 0.1} @r
      return %y
    })");
  EXPECT_EQ(problem(*g), "Relu node 'r' has attribute 'alpha', which Relu does not define");
  EXPECT_EQ(problem(*g, {.allowUnknownAttributes = true}), "");
}

/// An input element type outside the op's type constraint.
TEST(Verifier, RejectsDtypeOutsideConstraint) {
  //   x (i64) , w (i64) -> Conv c      (Conv takes floats only)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: i64[1, 2, 4, 4], %w: i64[2, 2, 1, 1]) {
      %y = Conv(%x, %w) @c
      return %y
    })");
  EXPECT_EQ(problem(*g),
            "Conv node 'c': input 0 ('X', value 'x') has element type i64, but type constraint T "
            "allows only f16, bf16, f32, f64");
}

/// Operands sharing a type constraint must agree on the element type.
TEST(Verifier, RejectsInconsistentDtypesUnderOneConstraint) {
  //   a (f32), b (f16) -> Add s
  auto g = parseGraphOrThrow(R"(
    graph @g(%a: f32[4], %b: f16[4]) {
      %s = Add(%a, %b) @s
      return %s
    })");
  EXPECT_EQ(problem(*g),
            "Add node 's': input 1 ('B', value 'b') has element type f16, but input 0 ('A', value "
            "'a') already bound type constraint T to f32");
}

/// The op's own VerifyFn runs after the generic checks and its message is
/// passed through.
TEST(Verifier, RejectsOpSpecificVerifyFailure) {
  //   x -> test.EvenOnly odd {n = 3}
  registerTestSchemas();
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = test.EvenOnly(%x) {n = 3} @odd
      return %y
    })");
  EXPECT_EQ(problem(*g), "test.EvenOnly node 'odd': n = 3 is odd");
}

/// A built-in op's VerifyFn: Transpose's perm must be a permutation.
TEST(Verifier, RejectsTransposeWithBadPerm) {
  //   x -> Transpose t {perm = [0, 0]}
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2, 3]) {
      %y = Transpose(%x) {perm = [0, 0]} @t
      return %y
    })");
  EXPECT_THAT(problem(*g), AllOf(HasSubstr("'t'"), HasSubstr("perm")));
}

/// A VerifyFn message that does not name the node gets the node prepended.
TEST(Verifier, NamesTheNodeWhenTheOpVerifierDoesNot) {
  //   test.AlwaysWrong w -> y
  registerTestSchemas();
  auto g = parseGraphOrThrow(R"(
    graph @g() {
      %y = test.AlwaysWrong() @w
      return %y
    })");
  EXPECT_EQ(problem(*g), "test.AlwaysWrong node 'w': something is off");
}

/// checkSchemas = false stops after the structural steps.
TEST(Verifier, DoesNotCheckSchemasWhenAskedNotTo) {
  //   x, x -> Relu r      (wrong arity, but only structure is checked)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x, %x) @r
      return %y
    })");
  EXPECT_EQ(problem(*g, {.checkSchemas = false}), "");
}

//===--- Bodies and verifyAll -------------------------------------------===//

/// A problem inside a body names the path to it.
TEST(Verifier, RejectsDanglingValueInsideBody) {
  //   flag -> If(then: Relu(nowhere), else: flag) -> r
  auto g = parseGraphOrThrow(R"(
    graph @g(%flag: bool[]) {
      %r = If(%flag) {
        then_branch = graph @then() {
          %t = Relu(%nowhere) @inner
          return %t
        },
        else_branch = graph @else() { return %flag }} @if
      return %r
    })");
  EXPECT_EQ(problem(*g),
            "in If node 'if' attribute 'then_branch': Relu node 'inner' reads value 'nowhere' "
            "(input 0), which has no producer and is neither a graph input nor a constant");
}

/// verifyAll lists every problem in order; verify returns the first.
TEST(Verifier, VerifyAllReportsEveryProblem) {
  //   ghost -> Relu a;   x, x -> Relu b;   x -> Unknown c
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%ghost) @a
      %b = Relu(%x, %x) @b
      %c = Unknown(%x) @c
      return %a, %b, %c
    })");
  std::vector<Status> problems = verifyAll(*g);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_THAT(problems[0].message(), StartsWith("Relu node 'a' reads value 'ghost'"));
  EXPECT_THAT(problems[1].message(), StartsWith("Relu node 'b' has 2 inputs"));
  EXPECT_THAT(problems[2].message(), StartsWith("Unknown node 'c' uses unknown op"));
  EXPECT_EQ(verify(*g).message(), problems[0].message());
}

}  // namespace
}  // namespace subgraph
