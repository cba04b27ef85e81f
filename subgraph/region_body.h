//===- subgraph/region_body.h - A region as a standalone graph -*- C++ -*-===//
//
// Extracts a region of the graph being partitioned into a standalone body
// Graph (internal to subgraph_partition). The body is what a property sees
// in CreateSubgraphNode and what the fused node carries:
//  * each outer value the region reads becomes a body graph input, once per
//    value when duplicated inputs are merged, else once per read;
//  * constants the region reads become body initializers sharing the outer
//    Tensor (no copy) when inlining is on, else they are inputs like any
//    other value;
//  * each value computed in the region and read outside it, or a graph
//    output, becomes a body graph output, once;
//  * every value keeps its outer name, except the extra inputs made for
//    unmerged duplicate reads, which get fresh names.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/partition/subgraph_property.h"

namespace subgraph::partition::detail {

/// A region body and how it connects to the outer graph.
struct RegionBody {
  /// The standalone body graph.
  std::shared_ptr<Graph> body;
  /// Outer value feeding each body input, in body input order.
  std::vector<Value*> inputs;
  /// Outer value each body output stands for, in body output order.
  std::vector<Value*> outputs;
};

/// Reusable id-indexed scratch space for extracting many bodies from one
/// graph without per-region clearing.
class RegionBodyBuilder {
 public:
  /// Prepares for regions of `graph`; call again whenever the graph gained
  /// nodes or values. `captured` names the values that nested graphs read
  /// by name (subgraph/ir/captures.h): reads no use list shows, so such a
  /// value always escapes the region that computes it, and a constant of
  /// that name stays in the graph.
  void reset(const Graph& graph, const std::set<std::string>& captured = {});
  /// Reserves room for graphs of up to `nodes` node ids and `values`
  /// value ids, so that reset() reuses its tables.
  void reserve(size_t nodes, size_t values);
  /// Extracts `members` (in topological order) as a body named `name`,
  /// appending the outer constants it inlines to `inlined` (one list for
  /// all regions of a pass: the partitioner only needs their union).
  RegionBody build(std::span<Node* const> members, std::string name, const PropertyOptions& options,
                   std::vector<Value*>& inlined);
  /// As build(), with the same body (names, order, ids), but moves the
  /// members, and the values only they touch, out of the graph into the body
  /// instead of copying them: no node is copied and nothing is freed. The
  /// region's place is then empty: the caller must add the fused node on
  /// the returned inputs and outputs (which re-points the outputs'
  /// producers) and call Graph::dropForeignUses(touched) before anything
  /// reads the use lists of `touched`, which this appends the outer values
  /// whose lists still name moved readers to (each once per reset()); a
  /// short list loses its moved readers at once (Graph::rebindInput), and
  /// later moves still treat such a value as read outside their region.
  /// Outer constants the body shares rather than takes go to `inlined`.
  RegionBody move(std::span<Node* const> members, std::string name, const PropertyOptions& options,
                  std::vector<Value*>& inlined, std::vector<Value*>& touched);
  /// True if `value` (an output of a member of the region last built)
  /// escapes it: it is read outside the region or is a graph output.
  bool escapes(const Value& value) const;

 private:
  // A node that an earlier move() took out of the graph is in no region
  // of it: its id is now an id of its body.
  bool inRegion(const Node* node) const {
    return node && node->graph() == graph_ && nodeMark_[node->id()] == mark_;
  }
  Value*& mapped(const Value* value) { return bodyValue_[value->id()]; }
  // Records `inner` as the body value standing for `outer`; returns it.
  Value* bind(const Value* outer, Value* inner) {
    valueMark_[outer->id()] = mark_;
    return mapped(outer) = inner;
  }
  // Starts a region: marks `members` as the region's nodes.
  void markMembers(std::span<Node* const> members) {
    ++mark_;
    for (Node* n : members) nodeMark_[n->id()] = mark_;
  }
  bool isMapped(const Value* value) const { return valueMark_[value->id()] == mark_; }

  // How move() treats each input and output slot of the members, decided
  // while every id is still an id of the outer graph.
  enum class Slot : uint8_t {
    kNone,
    kInternal,
    kInternalEscaping,
    kOwnConstant,
    kSharedConstant,
    kOuter,
    kEscaping
  };
  std::shared_ptr<Graph> newBody(std::span<Node* const> members, std::string name) const;
  std::string freshName(const Graph& body, const std::string& base) const;

  const Graph* graph_ = nullptr;
  std::vector<Slot> slots_;
  // By outer value id: kReadByMoved, kListed. A value a moved member read
  // is read outside every later region (by that member's fused node), even
  // once the member's use is gone from its list.
  static constexpr uint8_t kReadByMoved = 1;
  static constexpr uint8_t kListed = 2;  // in move()'s `touched`
  std::vector<uint8_t> touched_;
  std::vector<uint32_t> nodeMark_;
  std::vector<uint32_t> valueMark_;
  std::vector<Value*> bodyValue_;
  std::vector<char> readOutside_;  // a graph output, or read by a nested graph
  uint32_t mark_ = 0;
};

}  // namespace subgraph::partition::detail
