//===- subgraph/seed_index.h - Nodes that can seed a property -*- C++ -*-===//
//
// A property that declares its seed ops (SubgraphProperty::SeedOpTypes; a
// pattern's anchor) says no, without a reason, to every other node. Its
// walk then need not offer it every node: this index lists, per op kind,
// the positions in the quotient DAG's order of the nodes of that kind, so
// a walk visits only the nodes that can seed it, still in rank order.
// Built in one look at each node on first use after the order changes (a
// backend that fused something), it turns a backend with many properties
// from one full traversal per property into one per backend plus the
// seeds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "subgraph/ir/node.h"
#include "subgraph/partition/pattern_selector.h"

namespace subgraph::partition::detail {

class SeedIndex {
 public:
  /// Forgets the index; the next positions() call rebuilds it from the
  /// order it is given. Call whenever that order is recomputed.
  void invalidate() { built_ = false; }

  /// Positions in `order`, ascending, of the nodes whose op is one of
  /// `opTypes` (written as OpMatcher takes them: "Conv", "domain.Op").
  const std::vector<uint32_t>& positions(const std::vector<Node*>& order,
                                         const std::vector<std::string>& opTypes);

  /// True if some node of `order` matches `matcher`'s op types (any node,
  /// for a matcher of any op).
  bool hasAny(const std::vector<Node*>& order, const OpMatcher& matcher);

 private:
  void build(const std::vector<Node*>& order);

  bool built_ = false;
  // One entry per op kind: a node of that kind, and the kind's positions.
  std::vector<const Node*> representative_;
  std::vector<std::vector<uint32_t>> byKind_;
  std::unordered_map<const OpKey*, uint32_t> kindOf_;
  std::vector<uint32_t> result_;
};

}  // namespace subgraph::partition::detail
