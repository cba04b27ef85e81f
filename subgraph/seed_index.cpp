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
  for (size_t k = 0; k < byKind_.size(); ++k) {
    if (!matcher.matchesOpType(*representative_[k])) continue;
    // Each kind's list is ascending, and kinds interleave: merging each
    // into the positions so far keeps them sorted in linear steps.
    const size_t before = result_.size();
    result_.insert(result_.end(), byKind_[k].begin(), byKind_[k].end());
    std::inplace_merge(result_.begin(), result_.begin() + static_cast<std::ptrdiff_t>(before),
                       result_.end());
  }
  return result_;
}

bool SeedIndex::hasAny(const std::vector<Node*>& order, const OpMatcher& matcher) {
  if (!built_) build(order);
  return std::any_of(representative_.begin(), representative_.end(),
                     [&](const Node* n) { return matcher.matchesOpType(*n); });
}

}  // namespace subgraph::partition::detail
