//===- tests/core/graph_mutation_test.cpp - Graph mutation invariants -----===//
//
// Every public mutation of Graph must leave producer and use lists
// consistent (the invariants listed in graph.h). Each test applies one
// mutation and checks the result with `linksAreConsistent`, an oracle written
// here independently of the verifier. A randomized test applies long random
// sequences of mutations to a Graph and to a naive shadow model (plain id
// tables) and compares the two after every step.
//
// Set SUBGRAPH_TEST_SEED to replay a randomized run.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/ir/text_format.h"

namespace subgraph {
namespace {

const TensorType kF32x4(DataType::kFloat32, {4});

// Independent check of the invariants in graph.h: every node input is
// recorded exactly once in its value's use list and vice versa, every output
// points back at its producer, names map to their values and the live
// counts are right.
::testing::AssertionResult linksAreConsistent(const Graph& g) {
  size_t nodes = 0, values = 0;
  for (Node* n : g.nodes()) {
    ++nodes;
    if (g.node(n->id()) != n || n->graph() != &g)
      return ::testing::AssertionFailure() << "node #" << n->id() << " is not where its id says";
    for (size_t i = 0; i < n->numInputs(); ++i) {
      Value* v = n->input(i);
      if (!v) continue;
      if (g.value(v->id()) != v)
        return ::testing::AssertionFailure()
               << "node #" << n->id() << " input " << i << " is not a live value";
      auto count = std::count(v->uses().begin(), v->uses().end(), Use{n, static_cast<uint32_t>(i)});
      if (count != 1)
        return ::testing::AssertionFailure()
               << "value '" << v->name() << "' records the use by #" << n->id() << " input " << i
               << " " << count << " times";
    }
    for (size_t j = 0; j < n->numOutputs(); ++j) {
      Value* v = n->output(j);
      if (!v || v->producer() != n || v->producerIndex() != j)
        return ::testing::AssertionFailure()
               << "node #" << n->id() << " output " << j << " does not point back at it";
    }
  }
  for (Value* v : g.values()) {
    ++values;
    if (g.value(v->id()) != v || g.findValue(v->name()) != v)
      return ::testing::AssertionFailure() << "value '" << v->name() << "' is not findable";
    for (const Use& use : v->uses())
      if (g.node(use.user->id()) != use.user || use.user->input(use.inputIndex) != v)
        return ::testing::AssertionFailure()
               << "value '" << v->name() << "' lists a stale use by #" << use.user->id();
    if (Node* p = v->producer(); p && (g.node(p->id()) != p || p->output(v->producerIndex()) != v))
      return ::testing::AssertionFailure() << "value '" << v->name() << "' has a stale producer";
  }
  for (Value* v : g.outputs())
    if (!v || g.value(v->id()) != v)
      return ::testing::AssertionFailure() << "a graph output is not a live value";
  if (nodes != g.numNodes() || values != g.numValues())
    return ::testing::AssertionFailure()
           << "live counts are off: " << nodes << " nodes vs " << g.numNodes() << ", " << values
           << " values vs " << g.numValues();
  return ::testing::AssertionSuccess();
}

std::vector<std::string> names(const std::vector<Node*>& nodes) {
  std::vector<std::string> out;
  for (Node* n : nodes) out.push_back(n->name());
  return out;
}

std::vector<Use> usesOf(const Value* v) { return {v->uses().begin(), v->uses().end()}; }

/// Moving a node into another graph, then rebinding its edges there and
/// putting a node of the old graph in its place, leaves both graphs
/// consistent; the moved internal value goes with it.
TEST(GraphMutation, AdoptNodeAndRebindLeavesBothGraphsConsistent) {
  //   x -> Relu a -> t -> Neg b -> y      (a and b move into `body`; t with them)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %t = Relu(%x) @a
      %y = Neg(%t) @b
      return %y
    })");
  Value* x = g->findValue("x");
  Value* t = g->findValue("t");
  Value* y = g->findValue("y");
  Node* a = g->findNode("a");
  Node* b = g->findNode("b");
  Graph body("body");
  body.adoptNode(a);
  body.adoptNode(b);
  body.adoptValue(t);
  body.rebindInput(a, 0, body.addInput("x", kF32x4));
  Value* inner = body.createValue("y", kF32x4);
  body.rebindOutput(b, 0, inner);
  body.addOutput(inner);
  g->dropForeignUses(std::vector<Value*>{x});
  Node* fused = g->addNode(&a->opKey(), {x}, {y}, {}, "fused");
  EXPECT_TRUE(linksAreConsistent(*g));
  EXPECT_TRUE(linksAreConsistent(body));
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(usesOf(x), (std::vector<Use>{{fused, 0}}));
  EXPECT_EQ(y->producer(), fused);
  EXPECT_EQ(g->findValue("t"), nullptr);
  EXPECT_EQ(body.findValue("t"), t);
  EXPECT_EQ(a->graph(), &body);
  EXPECT_EQ(body.node(a->id()), a);
}

//   %w read by Relu a and Neg b
const char* kTwoReaders = R"(
    graph @g(%w: f32[4]) {
      %a = Relu(%w) @a
      %b = Neg(%w) @b
      return %a, %b
    })";

//   kTwoReaders; a moves out and is rebound to a body input
/// A moved node's use of a value with a short list goes at once, keeping
/// the order of the others; rebindInput() says nothing is left to drop.
TEST(GraphMutation, RebindInputDropsTheUseFromAShortListAtOnce) {
  auto g = parseGraphOrThrow(kTwoReaders);
  Value* w = g->findValue("w");
  Node* a = g->findNode("a");
  Node* b = g->findNode("b");
  Graph body("body");
  body.adoptNode(a);
  EXPECT_FALSE(body.rebindInput(a, 0, body.addInput("w", kF32x4)));
  EXPECT_EQ(usesOf(w), (std::vector<Use>{{b, 0}}));
  EXPECT_EQ(a->input(0)->graph(), &body);
}

/// Negative: a list longer than kShortUseList is not compacted one moved
/// reader at a time; the use stays, and rebindInput() says so, until
/// dropForeignUses().
TEST(GraphMutation, RebindInputLeavesALongListToDropForeignUses) {
  std::string text = "graph @g(%w: f32[4]) {\n";
  const size_t readers = Graph::kShortUseList + 1;
  for (size_t i = 0; i < readers; ++i)
    text += "  %r" + std::to_string(i) + " = Relu(%w) @n" + std::to_string(i) + "\n";
  text += "  return %r0";
  for (size_t i = 1; i < readers; ++i) text += ", %r" + std::to_string(i);
  text += "\n}";
  auto g = parseGraphOrThrow(text);
  Value* w = g->findValue("w");
  Node* first = g->findNode("n0");
  Graph body("body");
  body.adoptNode(first);
  EXPECT_TRUE(body.rebindInput(first, 0, body.addInput("w", kF32x4)));
  ASSERT_EQ(w->uses().size(), readers);
  EXPECT_EQ(w->uses()[0].user, first);
  g->dropForeignUses(std::vector<Value*>{w}, std::vector<Node*>{first});
  ASSERT_EQ(w->uses().size(), readers - 1);
  for (const Use& u : w->uses()) EXPECT_NE(u.user, first);
}

//   %w read by Relu a, Neg b, Exp c, Sin d (in that order); a and c move out
/// Told which nodes moved, dropForeignUses() drops exactly their uses and
/// keeps the others in order; b, whose address lies between a's and c's,
/// keeps its use (the address set is exact, not a range).
TEST(GraphMutation, DropForeignUsesOfListedMovedNodes) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%w: f32[4]) {
      %a = Relu(%w) @a
      %b = Neg(%w) @b
      %c = Exp(%w) @c
      %d = Sin(%w) @d
      return %a, %b, %c, %d
    })");
  Value* w = g->findValue("w");
  Node* a = g->findNode("a");
  Node* b = g->findNode("b");
  Node* c = g->findNode("c");
  Node* d = g->findNode("d");
  Graph body("body");
  body.adoptNode(a);
  body.adoptNode(c);
  const std::vector<Node*> moved{c, a};
  g->dropForeignUses(std::vector<Value*>{w}, moved);
  EXPECT_EQ(usesOf(w), (std::vector<Use>{{b, 0}, {d, 0}}));
}

/// Negative: a use by a node still in the graph is never dropped, also
/// when no moved node is listed (the path that loads each reader).
TEST(GraphMutation, DropForeignUsesKeepsUsesWhenNothingMoved) {
  //   kTwoReaders
  auto g = parseGraphOrThrow(kTwoReaders);
  Value* w = g->findValue("w");
  Node* a = g->findNode("a");
  Node* b = g->findNode("b");
  g->dropForeignUses(std::vector<Value*>{w}, std::vector<Node*>{});
  EXPECT_EQ(usesOf(w), (std::vector<Use>{{a, 0}, {b, 0}}));
}

//   %x -> Relu(a) -> Neg(b) -> %y
/// edgesAdded() counts every edge that appears (a node's inputs and its
/// outputs' producer link, a rewired input) and never goes down; removing
/// a node or an input adds nothing.
TEST(GraphMutation, CountsTheEdgesThatAppear) {
  Graph g("g");
  Value* x = g.addInput("x", kF32x4);
  EXPECT_EQ(g.edgesAdded(), 0u);
  Node* a = g.addNode("Relu", {x}, 1, {}, "a");
  EXPECT_EQ(g.edgesAdded(), 2u) << "one input and one produced output";
  Node* b = g.addNode("Neg", {a->output(0)}, 1, {}, "b");
  EXPECT_EQ(g.edgesAdded(), 4u);
  g.setNodeInput(b, 0, x);
  EXPECT_EQ(g.edgesAdded(), 5u) << "rewiring adds the new use";
  const uint64_t before = g.edgesAdded();
  g.removeNode(b);
  g.removeNode(a);
  EXPECT_EQ(g.edgesAdded(), before) << "removing edges must not count";
}

/// Negative: until the caller rebinds them, the moved node's edges cross
/// the graphs, and the old graph still lists its use; adoptValue refuses a
/// graph output and a name the new graph already has.
TEST(GraphMutation, DoesNotRebindEdgesOnItsOwn) {
  //   x -> Relu a -> y
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) @a
      return %y
    })");
  Value* x = g->findValue("x");
  Node* a = g->findNode("a");
  Graph body("body");
  body.adoptNode(a);
  EXPECT_EQ(a->input(0), x);             // still the old graph's value
  EXPECT_EQ(x->uses().size(), 1u);       // still listed there
  EXPECT_FALSE(linksAreConsistent(*g));  // y's producer is in another graph
  EXPECT_THROW(body.adoptValue(g->findValue("y")), Error);
  Value* own = g->addInitializer("c", Tensor::splat(DataType::kFloat32, {4}, 1.0));
  body.addInput("c", kF32x4);
  EXPECT_THROW(body.adoptValue(own), Error);
  EXPECT_EQ(own->graph(), g.get());
}

/// addNode records one use per input slot, including a value read twice.
TEST(GraphMutation, AddNodeRecordsUsesAndProducer) {
  //   x
  //   |\      (x feeds both operands of the Add about to be added)
  //   Add add
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      return %x
    })");
  Value* x = g->findValue("x");
  Node* add = g->addNode("Add", {x, x}, 1, {}, "add");
  ASSERT_TRUE(linksAreConsistent(*g));
  EXPECT_EQ(usesOf(x), (std::vector<Use>{{add, 0}, {add, 1}}));
  EXPECT_EQ(add->output(0)->producer(), add);
  EXPECT_EQ(add->output(0)->name(), "add");
  EXPECT_EQ(g->numNodes(), 1u);
}

/// removeNode deletes the outputs and drops the uses the node made.
TEST(GraphMutation, RemoveNodeDropsUsesAndOutputs) {
  //   x -> Relu a -> y      (a is removed; y is unused)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) @a
      return %x
    })");
  Value* x = g->findValue("x");
  ValueId y = g->findValue("y")->id();
  g->removeNode(g->findNode("a"));
  ASSERT_TRUE(linksAreConsistent(*g));
  EXPECT_FALSE(x->hasUses());
  EXPECT_EQ(g->value(y), nullptr);
  EXPECT_EQ(g->findValue("y"), nullptr);
  EXPECT_EQ(g->numNodes(), 0u);
}

/// A node whose output is still read cannot be removed, and the failed call
/// changes nothing.
TEST(GraphMutation, DoesNotRemoveNodeWithUsedOutput) {
  //   x -> Relu a -> Relu b -> (output)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) @a
      %z = Relu(%y) @b
      return %z
    })");
  try {
    g->removeNode(g->findNode("a"));
    FAIL() << "removeNode accepted a node whose output is used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'a'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(g->removeNode(g->findNode("b")), Error);  // b's output is a graph output
  EXPECT_TRUE(linksAreConsistent(*g));
  EXPECT_EQ(g->numNodes(), 2u);
}

/// removeNode(keepOutputs) leaves the outputs, uses intact and without a
/// producer; addNode(key, inputs, outputs) re-attaches them to a new node.
TEST(GraphMutation, RemoveNodeKeepingOutputsThenReattach) {
  //   x -> Relu a -> y -> Relu b -> (output)
  // becomes
  //   x -> Sigmoid a2 -> y -> Relu b -> (output)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) @a
      %z = Relu(%y) @b
      return %z
    })");
  Value* x = g->findValue("x");
  Value* y = g->findValue("y");
  Node* b = g->findNode("b");
  NodeId oldId = g->findNode("a")->id();

  g->removeNode(g->findNode("a"), /*keepOutputs=*/true);
  ASSERT_TRUE(linksAreConsistent(*g));
  EXPECT_EQ(y->producer(), nullptr);
  EXPECT_EQ(usesOf(y), (std::vector<Use>{{b, 0}}));
  EXPECT_FALSE(x->hasUses());
  EXPECT_EQ(g->node(oldId), nullptr);

  const OpKey* sigmoid = OpRegistry::global().intern("", "Sigmoid");
  Node* a2 = g->addNode(sigmoid, {x}, {y}, {}, "a2");
  ASSERT_TRUE(linksAreConsistent(*g));
  EXPECT_EQ(y->producer(), a2);
  EXPECT_EQ(y->producerIndex(), 0u);
  EXPECT_EQ(usesOf(x), (std::vector<Use>{{a2, 0}}));
  EXPECT_NE(a2->id(), oldId);
}

/// replaceAllUsesWith moves every use and every graph-output slot.
TEST(GraphMutation, ReplaceAllUsesWithMovesUsesAndGraphOutputs) {
  //      x
  //     / \      (x feeds a and b)
  //  Relu a  Relu b
  //   |  \    |
  //   |   Add c (ya + yb)
  //  out0    out1
  // then every use of ya is replaced by yb.
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %ya = Relu(%x) @a
      %yb = Relu(%x) @b
      %yc = Add(%ya, %yb) @c
      return %ya, %yc
    })");
  Value* ya = g->findValue("ya");
  Value* yb = g->findValue("yb");
  Node* c = g->findNode("c");
  g->replaceAllUsesWith(ya, yb);
  ASSERT_TRUE(linksAreConsistent(*g));
  EXPECT_FALSE(ya->hasUses());
  EXPECT_EQ(c->input(0), yb);
  EXPECT_EQ(usesOf(yb), (std::vector<Use>{{c, 1}, {c, 0}}));
  EXPECT_EQ(g->outputs()[0], yb);
  EXPECT_EQ(g->outputs()[1], g->findValue("yc"));
  g->removeNode(g->findNode("a"));  // now dead
  EXPECT_TRUE(linksAreConsistent(*g));
}

/// insertBetween with a consumer redirects only that consumer's uses.
TEST(GraphMutation, InsertBetweenOneConsumer) {
  //        x  -> (output 0)
  //      /   \   (x feeds a and b)
  //  Relu a  Relu b
  // Identity id is inserted between x and b only.
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %ya = Relu(%x) @a
      %yb = Relu(%x) @b
      return %x, %ya, %yb
    })");
  Value* x = g->findValue("x");
  Node* a = g->findNode("a");
  Node* b = g->findNode("b");
  Node* id = g->insertBetween(x, b, "Identity", {}, "id");
  ASSERT_TRUE(linksAreConsistent(*g));
  EXPECT_EQ(a->input(0), x);
  EXPECT_EQ(b->input(0), id->output(0));
  EXPECT_EQ(usesOf(x), (std::vector<Use>{{a, 0}, {id, 0}}));
  EXPECT_EQ(g->outputs()[0], x);
  EXPECT_EQ(id->output(0)->type(), kF32x4);
}

/// insertBetween without a consumer redirects every use and graph output.
TEST(GraphMutation, InsertBetweenAllConsumers) {
  //        x  -> (output 0)
  //      /   \   (x feeds a and b)
  //  Relu a  Relu b
  // Identity id is inserted after x for everyone.
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %ya = Relu(%x) @a
      %yb = Relu(%x) @b
      return %x, %ya, %yb
    })");
  Value* x = g->findValue("x");
  Node* id = g->insertBetween(x, nullptr, "Identity", {}, "id");
  ASSERT_TRUE(linksAreConsistent(*g));
  EXPECT_EQ(usesOf(x), (std::vector<Use>{{id, 0}}));
  EXPECT_EQ(g->findNode("a")->input(0), id->output(0));
  EXPECT_EQ(g->findNode("b")->input(0), id->output(0));
  EXPECT_EQ(g->outputs()[0], id->output(0));
}

/// insertBetween refuses a consumer that does not read the value.
TEST(GraphMutation, DoesNotInsertBetweenForNonConsumer) {
  //   x -> Relu a      y -> Relu b      (b does not read x)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4], %y: f32[4]) {
      %ya = Relu(%x) @a
      %yb = Relu(%y) @b
      return %ya, %yb
    })");
  EXPECT_THROW(g->insertBetween(g->findValue("x"), g->findNode("b"), "Identity"), Error);
  EXPECT_TRUE(linksAreConsistent(*g));
  EXPECT_EQ(g->numNodes(), 2u);
}

/// setNodeInput replaces, clears and grows input slots.
TEST(GraphMutation, SetNodeInputReplacesClearsAndGrows) {
  //   x -> Clip c (input, min?, max?)      y unused
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4], %y: f32[4]) {
      %z = Clip(%x) @c
      return %z
    })");
  Value* x = g->findValue("x");
  Value* y = g->findValue("y");
  Node* c = g->findNode("c");
  g->setNodeInput(c, 0, y);
  ASSERT_TRUE(linksAreConsistent(*g));
  EXPECT_FALSE(x->hasUses());
  EXPECT_EQ(usesOf(y), (std::vector<Use>{{c, 0}}));

  g->setNodeInput(c, 2, x);  // grows: slot 1 becomes an omitted (null) input
  ASSERT_TRUE(linksAreConsistent(*g));
  ASSERT_EQ(c->numInputs(), 3u);
  EXPECT_EQ(c->input(1), nullptr);
  EXPECT_EQ(usesOf(x), (std::vector<Use>{{c, 2}}));

  g->setNodeInput(c, 2, nullptr);
  ASSERT_TRUE(linksAreConsistent(*g));
  EXPECT_FALSE(x->hasUses());

  g->appendNodeInput(c, y);
  ASSERT_TRUE(linksAreConsistent(*g));
  EXPECT_EQ(usesOf(y), (std::vector<Use>{{c, 0}, {c, 3}}));
}

/// Node ids are table indices: stable across removals and never reused.
TEST(GraphMutation, NodeIdsAreStableAndNeverReused) {
  //   x -> Relu a -> Relu b -> Relu c -> (output)
  // c is rewired to read a, b removed, then d added.
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %ya = Relu(%x) @a
      %yb = Relu(%ya) @b
      %yc = Relu(%yb) @c
      return %yc
    })");
  Node* a = g->findNode("a");
  Node* c = g->findNode("c");
  NodeId aId = a->id(), bId = g->findNode("b")->id(), cId = c->id();
  EXPECT_EQ((std::vector<NodeId>{aId, bId, cId}), (std::vector<NodeId>{0, 1, 2}));
  g->setNodeInput(c, 0, a->output(0));
  g->removeNode(g->findNode("b"));
  Node* d = g->addNode("Relu", {g->findValue("x")}, 1, {}, "d");
  ASSERT_TRUE(linksAreConsistent(*g));
  EXPECT_EQ(g->node(aId), a);
  EXPECT_EQ(g->node(bId), nullptr);
  EXPECT_EQ(g->node(cId), c);
  EXPECT_EQ(d->id(), 3u);
  EXPECT_EQ(g->nodeIdBound(), 4u);
  EXPECT_EQ(g->numNodes(), 3u);
  std::vector<NodeId> live;
  for (Node* n : g->nodes()) live.push_back(n->id());
  EXPECT_EQ(live, (std::vector<NodeId>{aId, cId, 3u}));
}

/// clone() keeps ids (holes included), names, attributes, use order and
/// graph inputs/outputs, and shares nothing mutable with the original.
TEST(GraphMutation, ClonePreservesIdsNamesAndUses) {
  //      x         w (constant)
  //     / \       /
  //  Relu a  Mul m (x * w)      (a is removed before cloning -> id hole)
  //           |
  //          Add s (m + x) -> (output)
  auto g = parseGraphOrThrow(R"(
    graph @orig(%x: f32[4]) {
      %w = const f32[4] splat(2.0)
      %ya = Relu(%x) @a
      %ym = Mul(%x, %w) {note = "keep"} @m
      %s = Add(%ym, %x) @s
      return %s
    })");
  NodeId removedId = g->findNode("a")->id();
  g->removeNode(g->findNode("a"));
  Node* s = g->findNode("s");
  Value* x = g->findValue("x");

  std::unique_ptr<Graph> copy = g->clone();
  ASSERT_TRUE(linksAreConsistent(*copy));
  EXPECT_EQ(copy->name(), "orig");
  EXPECT_EQ(copy->nodeIdBound(), g->nodeIdBound());
  EXPECT_EQ(copy->valueIdBound(), g->valueIdBound());
  EXPECT_EQ(copy->node(removedId), nullptr);
  for (Node* n : g->nodes()) {
    Node* cn = copy->node(n->id());
    ASSERT_NE(cn, nullptr);
    EXPECT_NE(cn, n);
    EXPECT_EQ(cn->name(), n->name());
    EXPECT_EQ(cn->opType(), n->opType());
    EXPECT_EQ(cn->attributes().size(), n->attributes().size());
  }
  EXPECT_EQ(copy->findNode("m")->getString("note"), "keep");
  for (Value* v : g->values()) {
    Value* cv = copy->value(v->id());
    ASSERT_NE(cv, nullptr);
    EXPECT_EQ(cv->name(), v->name());
    EXPECT_EQ(cv->type(), v->type());
    ASSERT_EQ(cv->uses().size(), v->uses().size());
    for (size_t k = 0; k < v->uses().size(); ++k) {
      EXPECT_EQ(cv->uses()[k].user->id(), v->uses()[k].user->id());
      EXPECT_EQ(cv->uses()[k].inputIndex, v->uses()[k].inputIndex);
    }
  }
  EXPECT_TRUE(copy->findValue("w")->isInitializer());
  EXPECT_EQ(copy->inputs()[0]->name(), "x");
  EXPECT_EQ(copy->outputs()[0]->name(), "s");

  copy->setNodeInput(copy->node(s->id()), 1, copy->findValue("w"));
  EXPECT_EQ(s->input(1), x) << "mutating the clone changed the original";
  EXPECT_TRUE(linksAreConsistent(*g));
  EXPECT_TRUE(linksAreConsistent(*copy));
}

/// topologicalOrder breaks ties by id, so equal graphs give equal orders,
/// and a node inserted later still lands right after its producer.
TEST(GraphMutation, TopologicalOrderIsDeterministic) {
  //        x
  //      / | \   (x feeds c, b and a; created in that order: ids 0, 1, 2)
  //  Relu c Relu b Relu a
  //      \  |  /
  //       Sum s
  // then Identity i is inserted between b and s (id 4).
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %yc = Relu(%x) @c
      %yb = Relu(%x) @b
      %ya = Relu(%x) @a
      %s = Sum(%yc, %yb, %ya) @s
      return %s
    })");
  g->insertBetween(g->findValue("yb"), g->findNode("s"), "Identity", {}, "i");

  auto order = g->topologicalOrder();
  ASSERT_TRUE(order.isOk()) << order.status().message();
  EXPECT_EQ(names(order.value()), (std::vector<std::string>{"c", "b", "a", "i", "s"}));
  std::unique_ptr<Graph> copy = g->clone();
  auto again = copy->topologicalOrder();
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(names(again.value()), names(order.value()));
}

/// A node whose nested graph reads a value by name comes after that
/// value's producer, even when the producer has the larger id.
TEST(GraphMutation, TopologicalOrderKeepsReadsByName) {
  //   If(%c) then: return %late (by name)       (If first: id 0)
  //   %x -> Relu late                             (id 1)
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4], %c: bool[]) {
      %y = If(%c) {
        then_branch = graph @then() { return %late },
        else_branch = graph @else() { return %x }} @branch
      %late = Relu(%x) @late
      return %y
    })");
  ASSERT_LT(g->findNode("branch")->id(), g->findNode("late")->id());
  auto order = g->topologicalOrder();
  ASSERT_TRUE(order.isOk()) << order.status().message();
  EXPECT_EQ(names(order.value()), (std::vector<std::string>{"late", "branch"}));
}

/// A cycle is reported by name instead of yielding a partial order.
TEST(GraphMutation, DoesNotOrderCyclicGraph) {
  //   x -> Add p (x + x) -> Relu q
  // then p's second input is pointed at q's output, closing a cycle.
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %yp = Add(%x, %x) @p
      %yq = Relu(%yp) @q
      return %yq
    })");
  g->setNodeInput(g->findNode("p"), 1, g->findValue("yq"));
  ASSERT_TRUE(linksAreConsistent(*g));
  auto order = g->topologicalOrder();
  ASSERT_FALSE(order.isOk());
  EXPECT_NE(order.status().message().find("cycle"), std::string::npos);
}

// The name index changes representation as a graph grows: a graph with few
// value ids scans its values, a larger one keeps a hash table with
// tombstones for removed names. Lookups must agree across the switch, after
// renames and removals, with a removed name free for reuse, and in a clone.
TEST(GraphMutation, FindValueAcrossIndexGrowthRenameAndRemoval) {
  Graph g;
  std::vector<Value*> values;
  for (int i = 0; i < 200; ++i) {
    values.push_back(g.createValue("v" + std::to_string(i), kF32x4));
    for (int j = 0; j <= i; j += 37)
      ASSERT_EQ(g.findValue("v" + std::to_string(j)), values[static_cast<size_t>(j)]) << i;
  }
  for (int i = 0; i < 200; i += 3)
    g.renameValue(values[static_cast<size_t>(i)], "r" + std::to_string(i));
  for (int i = 1; i < 200; i += 3) g.removeValue(values[static_cast<size_t>(i)]);
  for (int i = 1; i < 200; i += 6) g.createValue("v" + std::to_string(i));  // reuse freed names
  std::unique_ptr<Graph> copy = g.clone();
  for (const Graph* graph : {&g, copy.get()}) {
    for (int i = 0; i < 200; ++i) {
      std::string v = "v" + std::to_string(i), r = "r" + std::to_string(i);
      if (i % 3 == 0) {
        EXPECT_EQ(graph->findValue(r), graph->value(static_cast<ValueId>(i))) << r;
        EXPECT_EQ(graph->findValue(v), nullptr) << v << " was renamed";
      } else if (i % 3 == 1) {
        EXPECT_EQ(graph->findValue(v) != nullptr, i % 6 == 1) << v;
      } else {
        EXPECT_EQ(graph->findValue(v), graph->value(static_cast<ValueId>(i))) << v;
      }
    }
    EXPECT_EQ(graph->uniqueValueName("v2"), "v2_1");
  }
  EXPECT_TRUE(linksAreConsistent(g));
  // Negative: names stay unique whichever representation holds them.
  EXPECT_THROW(g.createValue("v2"), Error);
  EXPECT_THROW(g.renameValue(values[2], "r3"), Error);
  Graph small;
  small.createValue("a");
  EXPECT_THROW(small.createValue("a"), Error);
  EXPECT_EQ(small.findValue("b"), nullptr);
}

/// findOrCreateValue() finds a name wherever the index holds it and
/// otherwise creates the value as createValue() would, reusing a removed
/// name's tombstone, before and after the index exists and when reserve()
/// sized it up front; its graph then matches one built with createValue().
TEST(GraphMutation, FindOrCreateValueAgreesWithFindThenCreate) {
  for (size_t reserved : {size_t{0}, size_t{500}}) {
    Graph g, plain;
    g.reserve(0, reserved);
    std::vector<Value*> made;
    for (int i = 0; i < 300; ++i) {
      const std::string name = "v" + std::to_string(i);
      made.push_back(g.findOrCreateValue(name));
      plain.createValue(name);
      ASSERT_EQ(g.findOrCreateValue(name), made.back()) << name;
      ASSERT_EQ(g.findOrCreateValue("v" + std::to_string(i / 2)), made[static_cast<size_t>(i / 2)]);
    }
    for (int i = 0; i < 300; i += 4) g.removeValue(made[static_cast<size_t>(i)]);
    for (int i = 0; i < 300; i += 8) {
      Value* again = g.findOrCreateValue("v" + std::to_string(i));  // a tombstone's name
      EXPECT_EQ(again->id(), g.valueIdBound() - 1);
      EXPECT_EQ(g.findValue(again->name()), again);
    }
    for (int i = 1; i < 300; i += 4)
      EXPECT_EQ(g.findOrCreateValue("v" + std::to_string(i)), made[static_cast<size_t>(i)]);
    EXPECT_EQ(g.numValues(), 300u - 300u / 4 + 300u / 8 + 1);
    EXPECT_TRUE(linksAreConsistent(g));
    for (int i = 1; i < 300; i += 4)
      EXPECT_EQ(plain.findValue("v" + std::to_string(i))->id(), made[static_cast<size_t>(i)]->id());
  }
  // Negative: an empty name has no value to find, and is not made up.
  Graph g;
  EXPECT_THROW(g.findOrCreateValue(""), Error);
  EXPECT_EQ(g.numValues(), 0u);
}

//   %v0 .. %v99: producer-less values; %u = Relu(%v5)
/// removeValues drops a batch with one index rebuild when it is most of
/// the graph, or by probing when it is not; either way survivors keep
/// their names, removed names are free again, and links stay consistent.
TEST(GraphMutation, RemoveValuesInBatches) {
  Graph g;
  std::vector<Value*> values;
  for (int i = 0; i < 100; ++i) values.push_back(g.createValue("v" + std::to_string(i), kF32x4));
  Node* relu = g.addNode("Relu", {values[5]}, 1, {}, "u");
  // A small batch (probes the index), then most of the rest (rebuilds it).
  std::vector<Value*> few{values[1], values[2]};
  g.removeValues(few);
  std::vector<Value*> most;
  for (int i = 10; i < 100; ++i) most.push_back(values[static_cast<size_t>(i)]);
  g.removeValues(most);
  EXPECT_EQ(g.numValues(), 9u);  // v0, v3..v9 and relu's output
  for (int i = 0; i < 100; ++i) {
    const bool kept = i == 0 || (i >= 3 && i < 10);
    EXPECT_EQ(g.findValue("v" + std::to_string(i)) != nullptr, kept) << i;
  }
  EXPECT_EQ(g.findValue(relu->output(0)->name()), relu->output(0));
  EXPECT_NE(g.createValue("v50"), nullptr);  // the name is free again
  EXPECT_TRUE(linksAreConsistent(g));
}

/// Negative: a batch holding a value that is still read, or one value
/// twice, is refused before anything is removed.
TEST(GraphMutation, DoesNotRemoveValuesStillInUse) {
  Graph g;
  Value* a = g.createValue("a", kF32x4);
  Value* b = g.createValue("b", kF32x4);
  g.addNode("Relu", {b});
  std::vector<Value*> inUse{a, b};
  EXPECT_THROW(g.removeValues(inUse), Error);
  std::vector<Value*> twice{a, a};
  EXPECT_THROW(g.removeValues(twice), Error);
  EXPECT_EQ(g.findValue("a"), a);
  EXPECT_EQ(g.numValues(), 3u);
  EXPECT_TRUE(linksAreConsistent(g));
}

//===--- Randomized mutations against a shadow model --------------------===//

// A naive model of the graph: plain id tables, updated by hand for each
// mutation, against which the real Graph is compared.
struct ShadowModel {
  std::map<NodeId, std::vector<std::optional<ValueId>>> inputs;
  std::map<NodeId, std::vector<ValueId>> outputs;
  std::map<ValueId, std::optional<NodeId>> producer;  // every live value
  std::vector<ValueId> graphOutputs;

  void replaceEverywhere(ValueId from, ValueId to, bool graphOutputsToo) {
    for (auto& [id, ins] : inputs)
      for (auto& in : ins)
        if (in == from) in = to;
    if (graphOutputsToo)
      for (auto& out : graphOutputs)
        if (out == from) out = to;
  }
  bool isUsed(ValueId v) const {
    for (const auto& [id, ins] : inputs)
      for (const auto& in : ins)
        if (in == v) return true;
    return std::find(graphOutputs.begin(), graphOutputs.end(), v) != graphOutputs.end();
  }
};

// Compares the Graph with the model: same live nodes and values, same
// inputs, producers, use multisets and graph outputs.
::testing::AssertionResult matchesModel(const Graph& g, const ShadowModel& model) {
  std::map<ValueId, std::multiset<std::pair<NodeId, uint32_t>>> expectedUses;
  for (const auto& [id, ins] : model.inputs) {
    Node* n = g.node(id);
    if (!n) return ::testing::AssertionFailure() << "node #" << id << " is missing";
    if (n->numInputs() != ins.size())
      return ::testing::AssertionFailure()
             << "node #" << id << " has " << n->numInputs() << " inputs, model has " << ins.size();
    for (size_t i = 0; i < ins.size(); ++i) {
      Value* v = n->input(i);
      if ((v ? std::optional<ValueId>(v->id()) : std::nullopt) != ins[i])
        return ::testing::AssertionFailure() << "node #" << id << " input " << i << " differs";
      if (ins[i]) expectedUses[*ins[i]].insert({id, static_cast<uint32_t>(i)});
    }
    std::vector<ValueId> outs;
    for (Value* v : n->outputs()) outs.push_back(v->id());
    if (outs != model.outputs.at(id))
      return ::testing::AssertionFailure() << "node #" << id << " outputs differ";
  }
  if (g.numNodes() != model.inputs.size() || g.numValues() != model.producer.size())
    return ::testing::AssertionFailure()
           << "graph has " << g.numNodes() << " nodes and " << g.numValues()
           << " values, model has " << model.inputs.size() << " and " << model.producer.size();
  for (const auto& [vid, producer] : model.producer) {
    Value* v = g.value(vid);
    if (!v) return ::testing::AssertionFailure() << "value #" << vid << " is missing";
    if ((v->producer() ? std::optional<NodeId>(v->producer()->id()) : std::nullopt) != producer)
      return ::testing::AssertionFailure() << "value '" << v->name() << "' producer differs";
    std::multiset<std::pair<NodeId, uint32_t>> uses;
    for (const Use& use : v->uses()) uses.insert({use.user->id(), use.inputIndex});
    if (uses != expectedUses[vid])
      return ::testing::AssertionFailure() << "value '" << v->name() << "' uses differ";
  }
  std::vector<ValueId> outs;
  for (Value* v : g.outputs()) outs.push_back(v->id());
  if (outs != model.graphOutputs) return ::testing::AssertionFailure() << "graph outputs differ";
  return ::testing::AssertionSuccess();
}

class RandomMutator {
 public:
  RandomMutator(Graph& g, ShadowModel& model, uint64_t seed) : g_(g), model_(model), rng_(seed) {}

  // Applies one random mutation to both the graph and the model; returns
  // a short description for failure messages.
  std::string step() {
    switch (pick(9)) {
      case 0:
      case 1: return addNode();
      case 2: return removeNode();
      case 3: return replaceAllUses();
      case 4: return insertBetween();
      case 5: return setInput();
      case 6: return appendInput();
      case 7: return addOutput();
      default: return removeValue();
    }
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool coin() { return pick(2) == 0; }

  Value* randomValue() {
    std::vector<Value*> all(g_.values().begin(), g_.values().end());
    return all.empty() ? nullptr : all[pick(all.size())];
  }
  Node* randomNode() {
    std::vector<Node*> all(g_.nodes().begin(), g_.nodes().end());
    return all.empty() ? nullptr : all[pick(all.size())];
  }
  void recordNode(Node* n) {
    auto& ins = model_.inputs[n->id()];
    ins.clear();
    for (Value* v : n->inputs()) ins.push_back(v ? std::optional<ValueId>(v->id()) : std::nullopt);
    auto& outs = model_.outputs[n->id()];
    outs.clear();
    for (Value* v : n->outputs()) {
      outs.push_back(v->id());
      model_.producer[v->id()] = n->id();
    }
  }

  std::string addNode() {
    size_t numInputs = pick(3), numOutputs = 1 + pick(2);
    std::vector<Value*> ins;
    for (size_t i = 0; i < numInputs; ++i)
      ins.push_back(coin() || i == 0 ? randomValue() : nullptr);
    Node* n = g_.addNode("test.Any", ins, numOutputs);
    recordNode(n);
    return "addNode #" + std::to_string(n->id());
  }

  std::string removeNode() {
    Node* n = randomNode();
    if (!n) return "removeNode (no node)";
    NodeId id = n->id();
    std::vector<ValueId> outs = model_.outputs.at(id);
    bool used = std::any_of(outs.begin(), outs.end(), [&](ValueId v) { return model_.isUsed(v); });
    bool keep = coin();
    if (used && !keep) {
      EXPECT_THROW(g_.removeNode(n), Error) << "removed #" << id << " despite used outputs";
      return "removeNode #" + std::to_string(id) + " (refused)";
    }
    g_.removeNode(n, keep);
    model_.inputs.erase(id);
    model_.outputs.erase(id);
    for (ValueId v : outs) {
      if (keep)
        model_.producer[v] = std::nullopt;
      else
        model_.producer.erase(v);
    }
    if (keep && coin()) {  // re-attach the kept outputs to a fresh node
      std::vector<Value*> outValues;
      for (ValueId v : outs) outValues.push_back(g_.value(v));
      Node* fresh =
          g_.addNode(OpRegistry::global().intern("test", "Any"), {randomValue()}, outValues);
      recordNode(fresh);
      return "removeNode #" + std::to_string(id) + " kept, re-attached to #" +
             std::to_string(fresh->id());
    }
    return "removeNode #" + std::to_string(id) + (keep ? " kept" : "");
  }

  std::string replaceAllUses() {
    Value* from = randomValue();
    Value* to = randomValue();
    if (!from || !to) return "replaceAllUsesWith (no value)";
    g_.replaceAllUsesWith(from, to);
    model_.replaceEverywhere(from->id(), to->id(), /*graphOutputsToo=*/true);
    return "replaceAllUsesWith '" + from->name() + "' -> '" + to->name() + "'";
  }

  std::string insertBetween() {
    Value* v = randomValue();
    if (!v) return "insertBetween (no value)";
    Node* consumer = nullptr;
    if (v->hasUses() && coin()) consumer = v->uses()[pick(v->uses().size())].user;
    std::vector<std::pair<NodeId, uint32_t>> moved;
    for (const Use& use : v->uses())
      if (!consumer || use.user == consumer) moved.push_back({use.user->id(), use.inputIndex});
    Node* n = g_.insertBetween(v, consumer, "test.Any");
    for (auto [user, index] : moved) model_.inputs[user][index] = n->output(0)->id();
    if (!consumer)
      for (auto& out : model_.graphOutputs)
        if (out == v->id()) out = n->output(0)->id();
    recordNode(n);
    return "insertBetween '" + v->name() + "'";
  }

  std::string setInput() {
    Node* n = randomNode();
    if (!n) return "setNodeInput (no node)";
    size_t index = pick(n->numInputs() + 2);
    Value* v = coin() ? randomValue() : nullptr;
    g_.setNodeInput(n, index, v);
    auto& ins = model_.inputs[n->id()];
    if (index >= ins.size()) ins.resize(index + 1);
    ins[index] = v ? std::optional<ValueId>(v->id()) : std::nullopt;
    return "setNodeInput #" + std::to_string(n->id()) + "[" + std::to_string(index) + "]";
  }

  std::string appendInput() {
    Node* n = randomNode();
    Value* v = randomValue();
    if (!n || !v) return "appendNodeInput (nothing)";
    g_.appendNodeInput(n, v);
    model_.inputs[n->id()].push_back(v->id());
    return "appendNodeInput #" + std::to_string(n->id());
  }

  std::string addOutput() {
    Value* v = randomValue();
    if (!v) return "addOutput (no value)";
    g_.addOutput(v);
    model_.graphOutputs.push_back(v->id());
    return "addOutput '" + v->name() + "'";
  }

  std::string removeValue() {
    if (coin()) {  // keep a supply of producer-less values around
      Value* v = g_.createValue();
      model_.producer[v->id()] = std::nullopt;
      return "createValue '" + v->name() + "'";
    }
    Value* v = randomValue();
    if (!v) return "removeValue (no value)";
    bool removable = !v->producer() && !model_.isUsed(v->id()) && !v->isGraphInput();
    if (!removable) {
      EXPECT_THROW(g_.removeValue(v), Error) << "removed a value still in use";
      return "removeValue '" + v->name() + "' (refused)";
    }
    model_.producer.erase(v->id());
    std::string name = v->name();
    g_.removeValue(v);
    return "removeValue '" + name + "'";
  }

  Graph& g_;
  ShadowModel& model_;
  std::mt19937_64 rng_;
};

uint64_t testSeed() {
  if (const char* env = std::getenv("SUBGRAPH_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return std::random_device()();
}

/// Hundreds of random mutations keep the graph equal to the naive model and
/// its links consistent; clones match the model too.
TEST(GraphMutation, RandomMutationsKeepInvariants) {
  // Starts from two inputs and grows by random mutations; no fixed sketch.
  const uint64_t seed = testSeed();
  std::cout << "[ seed     ] SUBGRAPH_TEST_SEED=" << seed << "\n";
  SCOPED_TRACE("SUBGRAPH_TEST_SEED=" + std::to_string(seed));
  for (int round = 0; round < 8; ++round) {
    Graph g;
    ShadowModel model;
    for (const char* name : {"a", "b"})
      model.producer[g.addInput(name, kF32x4)->id()] = std::nullopt;
    RandomMutator mutator(g, model, seed + static_cast<uint64_t>(round));
    for (int i = 0; i < 250; ++i) {
      std::string what = mutator.step();
      ASSERT_TRUE(linksAreConsistent(g)) << "round " << round << " step " << i << ": " << what;
      ASSERT_TRUE(matchesModel(g, model)) << "round " << round << " step " << i << ": " << what;
      if (i % 50 == 49) {
        std::unique_ptr<Graph> copy = g.clone();
        ASSERT_TRUE(linksAreConsistent(*copy)) << "clone at step " << i;
        ASSERT_TRUE(matchesModel(*copy, model)) << "clone at step " << i;
      }
    }
  }
}

/// Graphs that share their opset imports (shareOpsetImports) each see
/// their own after one changes them: the change copies, and the graph it
/// was shared with keeps what it had.
TEST(GraphOpsets, SharedImportsCopyOnWrite) {
  Graph outer("outer");
  EXPECT_TRUE(outer.opsetImports().empty());
  outer.setOpsetImport("", 17);
  outer.setOpsetImport("ai.onnx.ml", 3);
  Graph body("body");
  body.shareOpsetImports(outer);
  EXPECT_EQ(body.opsetImports(), outer.opsetImports());
  body.setOpsetImport("com.microsoft", 1);
  EXPECT_EQ(body.opsetImports().size(), 3u);
  EXPECT_EQ(body.opsetImports().at("com.microsoft"), 1);
  // Not the outer graph's: it keeps its two.
  EXPECT_EQ(outer.opsetImports().size(), 2u);
  EXPECT_EQ(outer.opsetImports().count("com.microsoft"), 0u);
  outer.setOpsetImport("", 18);
  EXPECT_EQ(body.opsetImports().at(""), 17);
  EXPECT_EQ(outer.clone()->opsetImports().at(""), 18);
}

/// shareInitializer gives another graph the constant itself: name, type
/// and the very tensor; a value that is not a constant is refused.
TEST(GraphInitializers, ShareInitializerSharesNameTypeAndData) {
  auto outer = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %w = const f32[2] [1.0, 2.0]
      %y = Add(%x, %w) @add
      return %y
    })");
  Graph body("body");
  const Value& w = *outer->findValue("w");
  Value* shared = body.shareInitializer(w);
  EXPECT_EQ(shared->name(), "w");
  EXPECT_EQ(shared->type(), w.type());
  EXPECT_EQ(shared->sharedInitializer().get(), w.sharedInitializer().get());
  EXPECT_EQ(shared->graph(), &body);
  EXPECT_EQ(body.findValue("w"), shared);
  // Not a computed value, and not a second constant of the same name.
  EXPECT_THROW(body.shareInitializer(*outer->findValue("y")), Error);
  EXPECT_THROW(body.shareInitializer(w), Error);
}

/// NameCheck::kKnownNew skips the lookup of a name the caller knows is new,
/// but the value is named and found as with a lookup, in a small graph and
/// past the size where the name index is hashed. Negative: a taken name
/// is still refused where the lookup runs (kLookUp, and debug builds).
TEST(GraphValues, KnownNewNamesAreIndexedAsLookedUpOnes) {
  auto outer = parseGraphOrThrow(R"(
    graph @g(%x: f32[2]) {
      %w = const f32[2] [1.0, 2.0]
      return %x
    })");
  Graph body("body");
  constexpr auto kNew = Graph::NameCheck::kKnownNew;
  Value* shared = body.shareInitializer(*outer->findValue("w"), kNew);
  Value* input = body.addInput("x", outer->findValue("x")->type(), kNew);
  std::vector<Value*> made;
  for (int i = 0; i < 40; ++i) made.push_back(body.createValue("v" + std::to_string(i), {}, kNew));
  EXPECT_EQ(body.findValue("w"), shared);
  EXPECT_EQ(body.findValue("x"), input);
  EXPECT_TRUE(input->isGraphInput());
  for (int i = 0; i < 40; ++i) EXPECT_EQ(body.findValue("v" + std::to_string(i)), made[i]);
  EXPECT_THROW(body.createValue("v7"), Error);
#ifndef NDEBUG
  EXPECT_THROW(body.createValue("v7", {}, kNew), Error);
#endif
}

}  // namespace
}  // namespace subgraph
