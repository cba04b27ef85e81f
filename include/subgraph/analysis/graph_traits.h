//===- subgraph/analysis/graph_traits.h - The IR as a Boost.Graph -*- C++ -*-===//
//
// Lets Boost.Graph algorithms (topological_sort, depth_first_search,
// write_graphviz, ...) run directly on a `const subgraph::Graph`, without
// copying it into an adjacency_list. The IR already stores both directions
// of every data edge (a value's producer and its use list), so every
// traversal below is a walk over existing vectors.
//
// The view:
//  * vertex  = `subgraph::Node*`; removed nodes (null slots) are skipped;
//  * edge    = `subgraph::IrEdge`: (producer, consumer, value, input index).
//    A node that reads the same value twice has two parallel edges;
//  * out-edges of n: for each output v that n really produces
//    (v->producer() == n), each use of v;
//  * in-edges of n: each non-null input that has a producer.
// Graph inputs, initializers and dangling values have no producer, so they
// contribute no edges. Out- and in-edges describe the same edge set as long
// as the graph's use lists are consistent (which Graph guarantees and
// verify() checks).
//
// Models: VertexListGraph, EdgeListGraph, IncidenceGraph, BidirectionalGraph
// and AdjacencyGraph, plus a `vertex_index` property map.
//
// The `vertex_index` map is dense in [0, num_vertices), which Boost's
// default colour maps require (they are arrays of num_vertices entries).
// It equals the node id while the graph has no removed nodes; once ids have
// holes it is the rank of the id among live nodes (a table built in one pass
// when the map is created). For tables indexed by the node id itself, use
// `nodeIdMap()` and size them with `Graph::nodeIdBound()`.
//
// The view is only valid while the graph is not mutated.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <boost/graph/graph_traits.hpp>
#include <boost/graph/properties.hpp>
#include <boost/iterator/iterator_facade.hpp>
#include <boost/property_map/property_map.hpp>

#include "subgraph/ir/graph.h"

namespace subgraph {

/// A data edge of the IR seen as a Boost.Graph edge: `value`, produced by
/// `source`, is input number `inputIndex` of `target`.
struct IrEdge {
  Node* source = nullptr;   ///< The producer of `value`.
  Node* target = nullptr;   ///< The node reading `value`.
  Value* value = nullptr;   ///< The value flowing along the edge.
  uint32_t inputIndex = 0;  ///< Which input of `target` reads `value`.

  /// Edges are equal when they denote the same use of the same value.
  friend bool operator==(const IrEdge& a, const IrEdge& b) {
    return a.value == b.value && a.target == b.target && a.inputIndex == b.inputIndex &&
           a.source == b.source;
  }
  /// Negation of operator==.
  friend bool operator!=(const IrEdge& a, const IrEdge& b) { return !(a == b); }
};

/// Iterates a node's out-edges: each use of each output the node produces.
class IrOutEdgeIterator : public boost::iterator_facade<IrOutEdgeIterator, IrEdge,
                                                        boost::forward_traversal_tag, IrEdge> {
 public:
  /// A singular iterator, as Boost's concepts require.
  IrOutEdgeIterator() = default;
  /// Positions at the first out-edge of `node` at or after (output, use);
  /// `output == node->numOutputs()` is the end position.
  IrOutEdgeIterator(Node* node, size_t output, size_t use)
      : node_(node), output_(output), use_(use) {
    settle();
  }

 private:
  friend class boost::iterator_core_access;

  IrEdge dereference() const {
    Value* value = node_->output(output_);
    const Use& use = value->uses()[use_];
    return IrEdge{node_, use.user, value, use.inputIndex};
  }
  void increment() {
    ++use_;
    settle();
  }
  bool equal(const IrOutEdgeIterator& other) const {
    return node_ == other.node_ && output_ == other.output_ && use_ == other.use_;
  }
  // Moves forward to a real use, skipping outputs without uses and outputs
  // another node claims as its own (an invalid "second producer" link).
  void settle() {
    while (output_ < node_->numOutputs()) {
      Value* value = node_->output(output_);
      if (value && value->producer() == node_ && use_ < value->uses().size()) return;
      ++output_;
      use_ = 0;
    }
    use_ = 0;
  }

  Node* node_ = nullptr;
  size_t output_ = 0;
  size_t use_ = 0;
};

/// Iterates a node's in-edges: each non-null input that has a producer.
class IrInEdgeIterator : public boost::iterator_facade<IrInEdgeIterator, IrEdge,
                                                       boost::forward_traversal_tag, IrEdge> {
 public:
  /// A singular iterator, as Boost's concepts require.
  IrInEdgeIterator() = default;
  /// Positions at the first in-edge of `node` at or after input `index`.
  IrInEdgeIterator(Node* node, size_t index) : node_(node), index_(index) { settle(); }

 private:
  friend class boost::iterator_core_access;

  IrEdge dereference() const {
    Value* value = node_->input(index_);
    return IrEdge{value->producer(), node_, value, static_cast<uint32_t>(index_)};
  }
  void increment() {
    ++index_;
    settle();
  }
  bool equal(const IrInEdgeIterator& other) const {
    return node_ == other.node_ && index_ == other.index_;
  }
  void settle() {
    while (index_ < node_->numInputs()) {
      Value* value = node_->input(index_);
      if (value && value->producer()) return;
      ++index_;
    }
  }

  Node* node_ = nullptr;
  size_t index_ = 0;
};

/// Iterates every edge of the graph: the out-edges of each live node in id
/// order.
class IrEdgeIterator
    : public boost::iterator_facade<IrEdgeIterator, IrEdge, boost::forward_traversal_tag, IrEdge> {
 public:
  /// Iterator over the graph's live nodes.
  using NodeIterator = LiveRange<Node>::iterator;

  /// A singular iterator, as Boost's concepts require.
  IrEdgeIterator() = default;
  /// Positions at the first edge of the nodes in [node, end).
  IrEdgeIterator(NodeIterator node, NodeIterator end) : node_(node), end_(end) {
    if (node_ != end_) edge_ = IrOutEdgeIterator(*node_, 0, 0);
    settle();
  }

 private:
  friend class boost::iterator_core_access;

  IrEdge dereference() const { return *edge_; }
  void increment() {
    ++edge_;
    settle();
  }
  bool equal(const IrEdgeIterator& other) const {
    if (node_ != other.node_) return false;
    return node_ == end_ || edge_ == other.edge_;
  }
  // Skips nodes whose out-edges are exhausted.
  void settle() {
    while (node_ != end_) {
      Node* n = *node_;
      if (edge_ != IrOutEdgeIterator(n, n->numOutputs(), 0)) return;
      ++node_;
      if (node_ != end_) edge_ = IrOutEdgeIterator(*node_, 0, 0);
    }
  }

  NodeIterator node_{};
  NodeIterator end_{};
  IrOutEdgeIterator edge_{};
};

/// Iterates the consumers of a node's outputs (one entry per out-edge, so a
/// consumer reading two outputs appears twice).
class IrAdjacencyIterator : public boost::iterator_facade<IrAdjacencyIterator, Node*,
                                                          boost::forward_traversal_tag, Node*> {
 public:
  /// A singular iterator, as Boost's concepts require.
  IrAdjacencyIterator() = default;
  /// Wraps an out-edge iterator.
  explicit IrAdjacencyIterator(IrOutEdgeIterator edge) : edge_(edge) {}

 private:
  friend class boost::iterator_core_access;

  Node* dereference() const { return (*edge_).target; }
  void increment() { ++edge_; }
  bool equal(const IrAdjacencyIterator& other) const { return edge_ == other.edge_; }

  IrOutEdgeIterator edge_{};
};

/// The `vertex_index` property map: a dense index in [0, num_vertices). See
/// the file comment for why it is not always the node id.
class NodeIndexMap {
 public:
  /// Property-map typedefs required by Boost: Node* -> size_t, read-only.
  using key_type = Node*;
  using value_type = size_t;
  using reference = size_t;
  using category = boost::readable_property_map_tag;

  /// An identity-on-id map; valid for graphs without removed nodes.
  NodeIndexMap() = default;
  /// Builds the map for `graph` (O(nodeIdBound) once, and only when the
  /// graph has removed nodes).
  explicit NodeIndexMap(const Graph& graph) {
    if (graph.numNodes() == graph.nodeIdBound()) return;
    auto ranks = std::make_shared<std::vector<uint32_t>>(graph.nodeIdBound(), 0);
    uint32_t next = 0;
    for (Node* n : graph.nodes()) (*ranks)[n->id()] = next++;
    ranks_ = std::move(ranks);
  }
  /// The dense index of `node`.
  size_t operator[](Node* node) const { return ranks_ ? (*ranks_)[node->id()] : node->id(); }
  /// Boost's property-map read access.
  friend size_t get(const NodeIndexMap& map, Node* node) { return map[node]; }

 private:
  // Shared so that copies (Boost passes property maps by value) stay cheap.
  std::shared_ptr<const std::vector<uint32_t>> ranks_;
};

/// A property map from a node to its id, for tables sized with
/// Graph::nodeIdBound().
struct NodeIdMap {
  /// Property-map typedefs required by Boost: Node* -> size_t, read-only.
  using key_type = Node*;
  using value_type = size_t;
  using reference = size_t;
  using category = boost::readable_property_map_tag;

  /// The id of `node`.
  size_t operator[](Node* node) const { return node->id(); }
  /// Boost's property-map read access.
  friend size_t get(const NodeIdMap&, Node* node) { return node->id(); }
};

/// Returns the node-id property map.
inline NodeIdMap nodeIdMap(const Graph&) { return NodeIdMap(); }

/// Tag types naming the Boost.Graph concepts the IR models.
struct IrTraversalCategory : boost::vertex_list_graph_tag,
                             boost::edge_list_graph_tag,
                             boost::bidirectional_graph_tag,
                             boost::adjacency_graph_tag {};

//===--- Boost.Graph free functions (found by argument-dependent lookup) -===//

/// All live nodes, in id order.
inline std::pair<LiveRange<Node>::iterator, LiveRange<Node>::iterator> vertices(
    const Graph& graph) {
  auto range = graph.nodes();
  return {range.begin(), range.end()};
}
/// Number of live nodes.
inline size_t num_vertices(const Graph& graph) { return graph.numNodes(); }

/// The out-edges of `node`.
inline std::pair<IrOutEdgeIterator, IrOutEdgeIterator> out_edges(Node* node, const Graph&) {
  return {IrOutEdgeIterator(node, 0, 0), IrOutEdgeIterator(node, node->numOutputs(), 0)};
}
/// Number of out-edges of `node` (total uses of the outputs it produces).
inline size_t out_degree(Node* node, const Graph&) {
  size_t degree = 0;
  for (Value* v : node->outputs())
    if (v && v->producer() == node) degree += v->uses().size();
  return degree;
}

/// The in-edges of `node`.
inline std::pair<IrInEdgeIterator, IrInEdgeIterator> in_edges(Node* node, const Graph&) {
  return {IrInEdgeIterator(node, 0), IrInEdgeIterator(node, node->numInputs())};
}
/// Number of inputs of `node` that have a producer.
inline size_t in_degree(Node* node, const Graph&) {
  size_t degree = 0;
  for (Value* v : node->inputs())
    if (v && v->producer()) ++degree;
  return degree;
}
/// in_degree + out_degree, as Boost's BidirectionalGraph defines it.
inline size_t degree(Node* node, const Graph& graph) {
  return in_degree(node, graph) + out_degree(node, graph);
}

/// The consumers of `node`'s outputs, one per out-edge.
inline std::pair<IrAdjacencyIterator, IrAdjacencyIterator> adjacent_vertices(Node* node,
                                                                             const Graph& graph) {
  auto [first, last] = out_edges(node, graph);
  return {IrAdjacencyIterator(first), IrAdjacencyIterator(last)};
}

/// Every edge of the graph.
inline std::pair<IrEdgeIterator, IrEdgeIterator> edges(const Graph& graph) {
  auto range = graph.nodes();
  return {IrEdgeIterator(range.begin(), range.end()), IrEdgeIterator(range.end(), range.end())};
}
/// Number of edges (a linear scan: the IR does not keep a count).
inline size_t num_edges(const Graph& graph) {
  size_t count = 0;
  for (Node* n : graph.nodes()) count += out_degree(n, graph);
  return count;
}

/// The producer end of `edge`.
inline Node* source(const IrEdge& edge, const Graph&) { return edge.source; }
/// The consumer end of `edge`.
inline Node* target(const IrEdge& edge, const Graph&) { return edge.target; }

/// The dense `vertex_index` map of `graph`.
inline NodeIndexMap get(boost::vertex_index_t, const Graph& graph) { return NodeIndexMap(graph); }
/// The dense index of one node; builds the map, so prefer the two-argument
/// form in loops.
inline size_t get(boost::vertex_index_t, const Graph& graph, Node* node) {
  return NodeIndexMap(graph)[node];
}

}  // namespace subgraph

namespace boost {

// Names are spelled ::subgraph:: because boost::subgraph (Boost.Graph's
// subgraph adaptor) would otherwise shadow our namespace here.

/// Boost.Graph traits of the IR; see the file comment for the model.
template <>
struct graph_traits<::subgraph::Graph> {
  using vertex_descriptor = ::subgraph::Node*;
  using edge_descriptor = ::subgraph::IrEdge;
  using vertex_iterator = ::subgraph::LiveRange<::subgraph::Node>::iterator;
  using edge_iterator = ::subgraph::IrEdgeIterator;
  using out_edge_iterator = ::subgraph::IrOutEdgeIterator;
  using in_edge_iterator = ::subgraph::IrInEdgeIterator;
  using adjacency_iterator = ::subgraph::IrAdjacencyIterator;

  using directed_category = bidirectional_tag;
  using edge_parallel_category = allow_parallel_edge_tag;
  using traversal_category = ::subgraph::IrTraversalCategory;

  using vertices_size_type = size_t;
  using edges_size_type = size_t;
  using degree_size_type = size_t;

  /// No node: the null pointer.
  static vertex_descriptor null_vertex() { return nullptr; }
};

/// Algorithms sometimes name the traits of the const graph.
template <>
struct graph_traits<const ::subgraph::Graph> : graph_traits<::subgraph::Graph> {};

/// The IR's `vertex_index` map type.
template <>
struct property_map<::subgraph::Graph, vertex_index_t> {
  using type = ::subgraph::NodeIndexMap;
  using const_type = ::subgraph::NodeIndexMap;
};
/// Same for the const graph.
template <>
struct property_map<const ::subgraph::Graph, vertex_index_t>
    : property_map<::subgraph::Graph, vertex_index_t> {};

}  // namespace boost
