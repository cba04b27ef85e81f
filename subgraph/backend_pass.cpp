//===- subgraph/backend_pass.cpp - One traversal per backend --------------===//
//
// See backend_pass.h. The walks decide which seeds each property is
// offered; the property passes (property_pass.h) grow, check and commit
// each region; the surgeries (region_surgery.h) change the graph once
// every walk is over.
//
//===----------------------------------------------------------------------===//
#include "subgraph/backend_pass.h"

namespace subgraph::partition::detail {

// What tells whether a hook or the surgery changed the graph: every added
// edge is counted, and node ids are never reused.
struct BackendPass::GraphMark {
  uint64_t edgesAdded = 0;
  NodeId idBound = 0;
  size_t nodes = 0;

  static GraphMark of(const Graph& graph) {
    return GraphMark{graph.edgesAdded(), graph.nodeIdBound(), graph.numNodes()};
  }
  bool operator==(const GraphMark&) const = default;
};

namespace {

// Starts the loads that offering the seed `i` places ahead will wait for
// (`at(i)` is its position in `order`, or order.size() past the end), one
// step of a pointer chase per distance: its node object 16 ahead, the
// node's operand lists 8 ahead (their addresses are in the node, which has
// arrived by then), its first input and output values 4 ahead, and the
// output's use list 2 ahead. Select, the pattern match and the region's
// growth read exactly these. The rank order is nearly allocation order,
// but every node is four separate heap blocks, and on a graph larger than
// the cache the walk otherwise waits for each in turn; prefetching the
// node alone did not help, the chase did (docs/partitioning.md has the
// measurements). It has no effect on what is computed.
template <typename At>
void prefetchSeedsAhead(const std::vector<Node*>& order, size_t i, At at) {
  const size_t n = order.size();
  if (size_t r = at(i + 16); r < n) {
    const char* node = reinterpret_cast<const char*>(order[r]);
    __builtin_prefetch(node);
    __builtin_prefetch(node + 64);
  }
  if (size_t r = at(i + 8); r < n) {
    __builtin_prefetch(order[r]->outputs().data());
    __builtin_prefetch(order[r]->inputs().data());
  }
  if (size_t r = at(i + 4); r < n) {
    const Node* node = order[r];
    if (!node->outputs().empty()) {
      const char* out = reinterpret_cast<const char*>(node->outputs()[0]);
      __builtin_prefetch(out);
      __builtin_prefetch(out + 64);
    }
    if (!node->inputs().empty() && node->inputs()[0]) __builtin_prefetch(node->inputs()[0]);
  }
  if (size_t r = at(i + 2); r < n && !order[r]->outputs().empty())
    __builtin_prefetch(order[r]->outputs()[0]->uses().data());
}

}  // namespace

BackendPass::BackendPass(RunState& run, PassScratch& tables, const std::string& backend,
                         size_t backendIndex, std::span<SubgraphProperty* const> properties)
    : run_(run), tables_(tables) {
  for (SubgraphProperty* property : properties)
    passes_.push_back(
        std::make_unique<PropertyPass>(run, tables, backend, backendIndex, *property));
}

Status BackendPass::run() {
  SUBGRAPH_RETURN_IF_ERROR(start());
  // Whatever happens next may change the graph.
  tables_.dagIsCurrent = false;
  tables_.regionTables = false;
  const GraphMark before = GraphMark::of(run_.graph);
  auto phase = std::chrono::steady_clock::now();
  SUBGRAPH_RETURN_IF_ERROR(walk());
  run_.report.phases.walkMs += millisSince(phase);
  phase = std::chrono::steady_clock::now();
  Status finished = finish(before);
  run_.report.phases.surgeryMs += millisSince(phase);
  return finished;
}

Status BackendPass::start() {
  const GraphMark entry = GraphMark::of(run_.graph);
  for (auto& pass : passes_) SUBGRAPH_RETURN_IF_ERROR(pass->start());
  // A PrePartition hook may have changed the graph.
  if (!tables_.dagIsCurrent || GraphMark::of(run_.graph) != entry) {
    Status init = tables_.dag.init(run_.graph);
    if (!init) return passes_.front()->fail(init.message());
    tables_.seeds.invalidate();
  }
  return Status::ok();
}

Status BackendPass::walk() {
  // Contraction never changes the order, so the walks may read it in place.
  const std::vector<Node*>& order = tables_.dag.order();
  for (auto& pass : passes_) {
    const std::vector<std::string> seedOps = pass->seedOpTypes();
    if (seedOps.empty()) {
      for (size_t r = 0; r < order.size(); ++r) {
        prefetchSeedsAhead(order, r, [](size_t i) { return i; });
        if (isAvailable(run_, tables_, *order[r])) SUBGRAPH_RETURN_IF_ERROR(pass->offer(order[r]));
      }
      continue;
    }
    // Only the nodes that can seed it, in the same order (seed_index.h).
    const std::vector<uint32_t>& seeds = tables_.seeds.positions(order, seedOps);
    pass->checkRequiredOps(tables_.seeds, order);
    for (size_t i = 0; i < seeds.size(); ++i) {
      prefetchSeedsAhead(order, i,
                         [&](size_t k) { return k < seeds.size() ? seeds[k] : order.size(); });
      Node* seed = order[seeds[i]];
      if (isAvailable(run_, tables_, *seed)) SUBGRAPH_RETURN_IF_ERROR(pass->offer(seed));
    }
  }
  // The texts name nodes that the surgery is about to move.
  run_.reasons.resolveDeferred();
  return Status::ok();
}

Status BackendPass::finish(const GraphMark& before) {
  for (auto& pass : passes_) SUBGRAPH_RETURN_IF_ERROR(pass->connect());
  // The surgery adds exactly the fused nodes' edges (an input use each and
  // a producer per output); everything else it does removes edges.
  uint64_t fusedEdges = 0;
  bool changed = false;
  tables_.lastFused.clear();
  std::vector<std::vector<FusedRegion>> fused(passes_.size());
  for (size_t p = 0; p < passes_.size(); ++p) {
    if (passes_[p]->empty()) continue;
    // Moving members into bodies needs the builder to know the graph as
    // the surgeries before left it.
    if (changed && passes_[p]->lateBodies()) tables_.bodies.reset(run_.graph, tables_.captured);
    fused[p] = passes_[p]->materialize();
    changed = true;
    for (const FusedRegion& region : fused[p]) {
      tables_.lastFused.push_back(region.node);
      for (const Value* in : region.node->inputs()) fusedEdges += in != nullptr;
      fusedEdges += region.node->numOutputs();
    }
  }
  const GraphMark afterSurgery = GraphMark::of(run_.graph);
  for (size_t p = 0; p < passes_.size(); ++p)
    SUBGRAPH_RETURN_IF_ERROR(passes_[p]->postPartition(fused[p]));
  const GraphMark after = GraphMark::of(run_.graph);
  tables_.onlyFusedEdgesAdded =
      afterSurgery.edgesAdded - before.edgesAdded == fusedEdges && after == afterSurgery;
  // A walk that fused nothing, and whose hooks added no edge and added or
  // removed no node (ids are never reused), leaves the graph as start()
  // ranked it: the next traversal and the final acyclicity check can trust
  // the ranks instead of reading every edge again. A model that no
  // property of a backend applies to is the common case.
  if (!changed && after == before) tables_.dagIsCurrent = true;
  return Status::ok();
}

}  // namespace subgraph::partition::detail
