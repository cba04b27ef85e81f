//===- tests/core/boost_graph_test.cpp - Boost.Graph view of the IR -------===//
//
// Runs Boost.Graph algorithms directly on `const Graph` through
// subgraph/analysis/graph_traits.h and checks that what Boost sees (vertices,
// edges, degrees, orders, cycles) agrees with the IR itself.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/graph_concepts.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/graph/topological_sort.hpp>

#include "subgraph/analysis/algorithms.h"
#include "subgraph/analysis/graph_traits.h"
#include "subgraph/ir/graph.h"
#include "subgraph/ir/text_format.h"

namespace subgraph {
namespace {

using Traits = boost::graph_traits<Graph>;

// The diamond used by several tests:
//
//        x      w (constant)
//        |     /
//     Mul m (x * w)
//      /     \   (ym feeds a and b)
//  Relu a   Sigmoid b
//      \     /
//      Add s (ya + yb)
//        |
//     (output)
struct Diamond {
  std::unique_ptr<Graph> owner = parseGraphOrThrow(R"(
    graph @diamond(%x: f32[4]) {
      %w = const f32[4] splat(0.5)
      %ym = Mul(%x, %w) @m
      %ya = Relu(%ym) @a
      %yb = Sigmoid(%ym) @b
      %ys = Add(%ya, %yb) @s
      return %ys
    })");
  const Graph& g = *owner;
  Node* m = g.findNode("m");
  Node* a = g.findNode("a");
  Node* b = g.findNode("b");
  Node* s = g.findNode("s");
};

// Every edge goes from an earlier to a later position of `order`.
::testing::AssertionResult isTopological(const Graph& g, const std::vector<Node*>& order) {
  if (order.size() != g.numNodes())
    return ::testing::AssertionFailure()
           << order.size() << " nodes ordered, graph has " << g.numNodes();
  std::map<Node*, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  auto [first, last] = edges(g);
  for (auto it = first; it != last; ++it)
    if (position.at(it->source) >= position.at(it->target))
      return ::testing::AssertionFailure() << "edge '" << it->value->name() << "' goes backwards";
  return ::testing::AssertionSuccess();
}

// Each node of `cycle` feeds the next, and the last feeds the first.
::testing::AssertionResult isCycle(const Graph& g, const std::vector<Node*>& cycle) {
  if (cycle.empty()) return ::testing::AssertionFailure() << "no cycle found";
  for (size_t i = 0; i < cycle.size(); ++i) {
    Node* from = cycle[i];
    Node* to = cycle[(i + 1) % cycle.size()];
    auto [first, last] = out_edges(from, g);
    if (std::none_of(first, last, [&](const IrEdge& e) { return e.target == to; }))
      return ::testing::AssertionFailure()
             << "'" << from->name() << "' does not feed '" << to->name() << "'";
  }
  return ::testing::AssertionSuccess();
}

using EdgeKey = std::tuple<NodeId, NodeId, ValueId, uint32_t>;
EdgeKey key(const IrEdge& e) {
  return {e.source->id(), e.target->id(), e.value->id(), e.inputIndex};
}

/// The IR models every Boost.Graph concept the header promises.
TEST(BoostGraph, ModelsTheGraphConcepts) {
  BOOST_CONCEPT_ASSERT((boost::VertexListGraphConcept<Graph>));
  BOOST_CONCEPT_ASSERT((boost::EdgeListGraphConcept<Graph>));
  BOOST_CONCEPT_ASSERT((boost::IncidenceGraphConcept<Graph>));
  BOOST_CONCEPT_ASSERT((boost::BidirectionalGraphConcept<Graph>));
  BOOST_CONCEPT_ASSERT((boost::AdjacencyGraphConcept<Graph>));
  BOOST_CONCEPT_ASSERT((boost::ReadablePropertyGraphConcept<Graph, Node*, boost::vertex_index_t>));
  Graph empty;
  EXPECT_EQ(num_vertices(empty), 0u);
  EXPECT_EQ(num_edges(empty), 0u);
  EXPECT_EQ(Traits::null_vertex(), nullptr);
}

/// num_vertices, out_degree and in_degree agree with the IR's own counts;
/// constants and graph inputs contribute no edges.
TEST(BoostGraph, DegreesAgreeWithTheIr) {
  Diamond d;  // sketch above Diamond
  const Graph& g = d.g;
  EXPECT_EQ(num_vertices(g), g.numNodes());
  EXPECT_EQ(num_edges(g), 4u);  // m->a, m->b, a->s, b->s
  for (Node* n : g.nodes()) {
    size_t uses = 0, produced = 0;
    for (Value* v : n->outputs()) uses += v->uses().size();
    for (Value* v : n->inputs()) produced += v->producer() ? 1 : 0;
    EXPECT_EQ(out_degree(n, g), uses) << n->name();
    EXPECT_EQ(in_degree(n, g), produced) << n->name();
    EXPECT_EQ(degree(n, g), uses + produced) << n->name();
  }
  EXPECT_EQ(in_degree(d.m, g), 0u) << "x and w have no producer, so no edge";
  EXPECT_EQ(out_degree(d.m, g), 2u);
  std::vector<Node*> adjacent;
  auto [first, last] = adjacent_vertices(d.m, g);
  adjacent.assign(first, last);
  EXPECT_EQ(adjacent, (std::vector<Node*>{d.a, d.b}));
}

/// Out-edges, in-edges and edges() describe one and the same edge set.
TEST(BoostGraph, InEdgesMirrorOutEdges) {
  Diamond d;  // sketch above Diamond
  const Graph& g = d.g;
  std::multiset<EdgeKey> out, in, all;
  for (Node* n : g.nodes()) {
    auto [o, oe] = out_edges(n, g);
    for (; o != oe; ++o) {
      EXPECT_EQ(source(*o, g), n);
      out.insert(key(*o));
    }
    auto [i, ie] = in_edges(n, g);
    for (; i != ie; ++i) {
      EXPECT_EQ(target(*i, g), n);
      in.insert(key(*i));
    }
  }
  auto [e, ee] = edges(g);
  for (; e != ee; ++e) all.insert(key(*e));
  EXPECT_EQ(out, in);
  EXPECT_EQ(out, all);
  EXPECT_EQ(out.size(), 4u);
}

/// A node reading one value twice has two parallel edges, told apart by
/// the input index.
TEST(BoostGraph, ValueReadTwiceGivesParallelEdges) {
  //   x -> Relu r -> y
  //                  |\      (y feeds both operands)
  //                 Mul m (y * y)
  auto owner = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Relu(%x) @r
      %z = Mul(%y, %y) @m
      return %z
    })");
  const Graph& g = *owner;
  EXPECT_EQ(out_degree(g.findNode("r"), g), 2u);
  EXPECT_EQ(in_degree(g.findNode("m"), g), 2u);
  std::vector<uint32_t> indices;
  auto [first, last] = in_edges(g.findNode("m"), g);
  for (auto it = first; it != last; ++it) indices.push_back(it->inputIndex);
  EXPECT_EQ(indices, (std::vector<uint32_t>{0, 1}));
}

/// boost::topological_sort on the IR yields an order in which every edge
/// points forward, and the wrapper returns it front to back.
TEST(BoostGraph, TopologicalSortGivesValidOrder) {
  Diamond d;  // sketch above Diamond
  std::vector<Node*> reversed;
  boost::topological_sort(d.g, std::back_inserter(reversed));
  std::vector<Node*> order(reversed.rbegin(), reversed.rend());
  EXPECT_TRUE(isTopological(d.g, order));

  auto wrapped = topologicalSortBoost(d.g);
  ASSERT_TRUE(wrapped.isOk()) << wrapped.status().message();
  EXPECT_TRUE(isTopological(d.g, wrapped.value()));
  EXPECT_EQ(wrapped.value().front(), d.m);
  EXPECT_EQ(wrapped.value().back(), d.s);
}

// Counts the back edges a depth-first search meets.
struct BackEdgeCounter : boost::default_dfs_visitor {
  explicit BackEdgeCounter(int* count) : count_(count) {}
  void back_edge(const IrEdge&, const Graph&) const { ++*count_; }
  int* count_;
};

/// depth_first_search meets no back edge in a DAG and findCycle is empty.
TEST(BoostGraph, FindsNoCycleInDag) {
  Diamond d;  // sketch above Diamond
  int backEdges = 0;
  boost::depth_first_search(d.g, boost::visitor(BackEdgeCounter(&backEdges)));
  EXPECT_EQ(backEdges, 0);
  EXPECT_TRUE(findCycle(d.g).empty());
}

/// A cycle planted in a chain is found by DFS and returned in feed order.
TEST(BoostGraph, FindsPlantedCycle) {
  //   x -> Add p (x + t) -> Relu q -> Relu r -> Relu t -> (output)
  //             ^-------------------------------------+
  auto owner = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %yp = Add(%x, %yt) @p
      %yq = Relu(%yp) @q
      %yr = Relu(%yq) @r
      %yt = Relu(%yr) @t
      return %yt
    })");
  const Graph& g = *owner;
  Node* p = g.findNode("p");
  Node* q = g.findNode("q");
  Node* r = g.findNode("r");
  Node* t = g.findNode("t");

  int backEdges = 0;
  boost::depth_first_search(g, boost::visitor(BackEdgeCounter(&backEdges)));
  EXPECT_EQ(backEdges, 1);
  std::vector<Node*> cycle = findCycle(g);
  EXPECT_TRUE(isCycle(g, cycle));
  EXPECT_EQ(cycle, (std::vector<Node*>{p, q, r, t}));
  EXPECT_EQ(describeCycle(cycle),
            "Add node 'p' -> Relu node 'q' -> Relu node 'r' -> Relu node 't' -> Add node 'p'");

  auto order = topologicalSortBoost(g);
  ASSERT_FALSE(order.isOk());
  EXPECT_NE(order.status().message().find("Relu node 'q'"), std::string::npos)
      << order.status().message();
}

/// A node reading its own output is a cycle of one.
TEST(BoostGraph, FindsSelfLoop) {
  //   x -> Add a (x + a) --+
  //          ^-------------+
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y = Add(%x, %y) @a
      return %y
    })");
  EXPECT_EQ(findCycle(*g), (std::vector<Node*>{g->findNode("a")}));
}

/// Removed nodes are not vertices; vertex_index stays dense so Boost's
/// default colour maps (num_vertices entries) remain in bounds, while
/// nodeIdMap keeps the raw ids.
TEST(BoostGraph, SkipsRemovedNodes) {
  //   x -> Relu r0 -> Relu r1 -> Relu r2 -> Relu r3 -> (output)
  // then r1 and r2 are bypassed and removed (ids 1 and 2 become holes).
  auto owner = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %y0 = Relu(%x) @r0
      %y1 = Relu(%y0) @r1
      %y2 = Relu(%y1) @r2
      %y3 = Relu(%y2) @r3
      return %y3
    })");
  Graph& g = *owner;
  std::vector<Node*> chain;
  for (const char* name : {"r0", "r1", "r2", "r3"}) chain.push_back(g.findNode(name));
  g.setNodeInput(chain[3], 0, chain[0]->output(0));
  g.removeNode(chain[2]);
  g.removeNode(chain[1]);

  EXPECT_EQ(num_vertices(g), 2u);
  std::vector<Node*> seen;
  auto [first, last] = vertices(g);
  seen.assign(first, last);
  EXPECT_EQ(seen, (std::vector<Node*>{chain[0], chain[3]}));
  EXPECT_EQ(num_edges(g), 1u);

  auto index = get(boost::vertex_index, g);
  EXPECT_EQ(get(index, chain[0]), 0u);
  EXPECT_EQ(get(index, chain[3]), 1u);
  EXPECT_EQ(get(boost::vertex_index, g, chain[3]), 1u);
  EXPECT_EQ(get(nodeIdMap(g), chain[3]), 3u);

  std::vector<Node*> reversed;
  boost::topological_sort(g, std::back_inserter(reversed));
  EXPECT_EQ(reversed, (std::vector<Node*>{chain[3], chain[0]}));
}

// Labels Boost's plain DOT with the node's name.
struct NameWriter {
  const Graph* g;
  void operator()(std::ostream& os, Node* n) const { os << "[label=\"" << n->name() << "\"]"; }
};

/// boost::write_graphviz runs directly on the IR, with default and custom
/// writers.
TEST(BoostGraph, WriteGraphvizRuns) {
  Diamond d;  // sketch above Diamond
  std::ostringstream plain;
  boost::write_graphviz(plain, d.g);
  std::string text = plain.str();
  EXPECT_EQ(text.rfind("digraph G {", 0), 0u) << text;
  size_t arrows = 0;
  for (size_t at = text.find("->"); at != std::string::npos; at = text.find("->", at + 2)) ++arrows;
  EXPECT_EQ(arrows, num_edges(d.g));
  EXPECT_NE(text.find("0->1"), std::string::npos) << text;  // m -> a, by vertex index

  std::ostringstream labelled;
  boost::write_graphviz(labelled, d.g, NameWriter{&d.g});
  EXPECT_NE(labelled.str().find("[label=\"s\"]"), std::string::npos) << labelled.str();
}

}  // namespace
}  // namespace subgraph
