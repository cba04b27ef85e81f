//===- subgraph/seed_index.cpp - Nodes that can seed a property -----------===//
//
// See seed_index.h. Op kinds are told apart by their interned OpKey, so the
// build is one hash lookup per node; a property's op types are matched
// against one node per kind (OpMatcher's own rule for domains), never
// against every node.
//
//===----------------------------------------------------------------------===//
#include "subgraph/seed_index.h"

#include <algorithm>

#include "subgraph/partition/pattern_selector.h"

namespace subgraph::partition::detail {

void SeedIndex::build(const std::vector<Node*>& order) {
  representative_.clear();
  byKind_.clear();
  kindOf_.clear();
  for (uint32_t r = 0; r < order.size(); ++r) {
    const Node* node = order[r];
    auto [it, added] = kindOf_.try_emplace(&node->opKey(), static_cast<uint32_t>(byKind_.size()));
    if (added) {
      representative_.push_back(node);
      byKind_.emplace_back();
    }
    byKind_[it->second].push_back(r);
  }
  built_ = true;
}

const std::vector<uint32_t>& SeedIndex::positions(const std::vector<Node*>& order,
                                                  const std::vector<std::string>& opTypes) {
  if (!built_) build(order);
  const OpMatcher matcher = OpMatcher::anyOf(opTypes);
  result_.clear();
  size_t kinds = 0;
  for (size_t k = 0; k < byKind_.size(); ++k) {
    if (!matcher.matchesOpType(*representative_[k])) continue;
    result_.insert(result_.end(), byKind_[k].begin(), byKind_[k].end());
    ++kinds;
  }
  // Each kind's list is ascending; several kinds interleave.
  if (kinds > 1) std::sort(result_.begin(), result_.end());
  return result_;
}

}  // namespace subgraph::partition::detail
