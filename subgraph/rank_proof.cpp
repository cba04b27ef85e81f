//===- subgraph/rank_proof.cpp - Acyclicity from the quotient DAG's ranks -===//
//
// Both proofs compare the ranks at the two ends of edges; see rank_proof.h
// for why that proves acyclicity and docs/partitioning.md (Methodology,
// step 9) for which edges are read when.
//
//===----------------------------------------------------------------------===//
#include "subgraph/rank_proof.h"

namespace subgraph::partition::detail {
namespace {

// The ranks the proofs compare: a node's group rank in the last pass's
// quotient DAG, or, for a fused node that pass made, its region's.
class EdgeRanks {
 public:
  EdgeRanks(const Graph& graph, const QuotientDag& dag, std::span<const uint32_t> fusedRanks)
      : graph_(graph), dag_(dag), fusedRanks_(fusedRanks) {}
  // The rank of a fused node the last pass made, else kNoRank.
  uint32_t ofFused(const Node& n) const {
    return n.id() < fusedRanks_.size() ? fusedRanks_[n.id()] : QuotientDag::kNoRank;
  }
  uint32_t of(const Node& n) const {
    uint32_t rank = dag_.rankAtInit(n);
    return rank != QuotientDag::kNoRank ? rank : ofFused(n);
  }
  // True when every producer in the graph of `node`'s inputs ranks below
  // `rank`, the node's own.
  bool producersBelow(const Node& node, uint32_t rank) const {
    for (const Value* v : node.inputs()) {
      const Node* p = v ? v->producer() : nullptr;
      if (!p || p->graph() != &graph_) continue;
      const uint32_t producerRank = of(*p);
      if (producerRank == QuotientDag::kNoRank || producerRank >= rank) return false;
    }
    return true;
  }

 private:
  const Graph& graph_;
  const QuotientDag& dag_;
  std::span<const uint32_t> fusedRanks_;
};

}  // namespace

bool ranksOrderEveryEdge(const Graph& graph, const QuotientDag& dag,
                         std::span<const uint32_t> fusedRanks) {
  const EdgeRanks ranks(graph, dag, fusedRanks);
  for (const Node* n : graph.nodes()) {
    const uint32_t rank = ranks.of(*n);
    if (rank == QuotientDag::kNoRank || !ranks.producersBelow(*n, rank)) return false;
  }
  return true;
}

bool fusedEdgesFollowRanks(const Graph& graph, std::span<const Node* const> fused,
                           const QuotientDag& dag, std::span<const uint32_t> fusedRanks) {
  const EdgeRanks ranks(graph, dag, fusedRanks);
  for (const Node* f : fused) {
    const uint32_t rank = ranks.ofFused(*f);
    if (rank == QuotientDag::kNoRank || !ranks.producersBelow(*f, rank)) return false;
    for (const Value* v : f->outputs())
      for (const Use& use : v->uses()) {
        if (use.user->graph() != &graph) continue;
        const uint32_t userRank = ranks.of(*use.user);
        if (userRank == QuotientDag::kNoRank || userRank <= rank) return false;
      }
  }
  return true;
}

}  // namespace subgraph::partition::detail
