//===- subgraph/property_pass.cpp - A property's regions: the policy ------===//
//
// Seeds, growth, cycle retries, Filter, minimum size, acceptance and the
// reason each node left out gets; see property_pass.h for the methodology
// and docs/partitioning.md for the guarantees and reason texts. Every
// decision is made against the quotient DAG as it stands, which already
// holds every region committed before, so a region that passes its check
// can never form a cycle with another.
//
//===----------------------------------------------------------------------===//
#include "subgraph/property_pass.h"

#include <algorithm>
#include <deque>
#include <typeinfo>

namespace subgraph::partition::detail {

PropertyPass::PropertyPass(RunState& run, PassScratch& tables, const std::string& backend,
                           size_t backendIndex, SubgraphProperty& property)
    : run_(run),
      graph_(run.graph),
      tables_(tables),
      dag_(tables.dag),
      taken_(tables.taken),
      excluded_(tables.excluded),
      candidate_(tables.candidate),
      scratch_(tables.scratch),
      backendIndex_(backendIndex),
      property_(property),
      options_(property.options()),
      label_(backend + "/" + property.name()),
      lateBodies_(property.FusesWithoutBody()),
      notSelectedPrefix_("not selected by " + label_ + ": "),
      surgery_(run, tables, backend, property, options_, label_, lateBodies_) {
  info_.backend = backend;
  info_.property = property.name();
}

Status PropertyPass::start() {
  Status pre = property_.PrePartition(graph_);
  if (!pre) return fail("PrePartition failed: " + pre.message());
  selector_ = property_.CreateSubgraphSelectorV2();
  if (!selector_)
    return fail(
        "creates no selector (override CreateSubgraphSelector or CreateSubgraphSelectorV2)");
  pattern_ = dynamic_cast<PatternSelector*>(selector_.get());
  if (pattern_) pattern_->deferReasons(true);
  exactPattern_ = pattern_ && typeid(*selector_) == typeid(PatternSelector);
  return Status::ok();
}

// oneDNN's conv_hswish needs a HardSigmoid after its Conv: on a model that
// has none, a search from every Conv would fail at that step.
void PropertyPass::checkRequiredOps(SeedIndex& seeds, const std::vector<Node*>& order) {
  if (!pattern_) return;
  pattern_->assumeMissing(
      pattern_->missingRequiredOps([&](const OpMatcher& m) { return seeds.hasAny(order, m); }));
}

Status PropertyPass::connect() {
  Status selection = property_.SelectionStatus();
  if (!selection) return fail("selection failed: " + selection.message());
  return surgery_.connectAll();
}

std::vector<FusedRegion> PropertyPass::materialize() { return surgery_.materializeAll(); }

Status PropertyPass::postPartition(const std::vector<FusedRegion>& fused) {
  Status post = property_.PostPartition(graph_, fused);
  if (!post) return fail("PostPartition failed: " + post.message());
  return Status::ok();
}

// The id-indexed tables of taking, growing and extracting regions are
// filled at the first seed any selector of the traversal takes, not when
// it starts: a traversal that selects nothing, as for a backend that
// matches none of the model, never writes them, tens of megabytes on a
// large graph written only to be dropped (docs/partitioning.md, "Lazy
// tables").
void PropertyPass::prepareRegionTables() {
  // The seed loop does not change the graph, so its bounds are those of
  // the pass's start.
  const NodeId bound = graph_.nodeIdBound();
  taken_.assign(bound, -1);
  excluded_.assign(bound, 0);
  candidate_.assign(bound, 0);
  scratch_.assign(bound, 0);
  tables_.inlinedBy.assign(graph_.valueIdBound(), 0);
  tables_.readByFused.assign(graph_.valueIdBound(), 0);
  tables_.bodies.reset(graph_, tables_.captured);
  tables_.regionTables = true;
}

// "not selected by B/P: <reason>", built with one allocation rather than a
// temporary per '+': a large graph notes one for most seeds a property
// turns down.
std::string PropertyPass::notSelected(const std::string& reason) const {
  std::string text;
  text.reserve(notSelectedPrefix_.size() + reason.size());
  text.append(notSelectedPrefix_).append(reason);
  return text;
}

Status PropertyPass::formRegionFrom(Node* seed) {
  ++tables_.seedMark;
  for (bool retry = false;; retry = true) {
    selector_->Reset();
    Decision select = selector_->Select(NodeView(*seed, *this));
    if (!select) {
      PatternSelector::DeferredReason deferred =
          pattern_ ? pattern_->takeDeferredReason() : nullptr;
      if (!retry && deferred) {
        run_.noteDeferred(*seed, ReasonKind::kNoSelector,
                          {std::move(deferred), &notSelectedPrefix_});
      } else if (!retry) {
        run_.note(*seed, ReasonKind::kNoSelector,
                  select.reason().empty() ? std::string() : notSelected(select.reason()));
      } else {
        const std::string reason = deferred ? deferred("") : select.reason();
        run_.note(*seed, ReasonKind::kCycle,
                  "its region was cut to avoid a cycle, after which " + label_ +
                      " no longer selected it" + (reason.empty() ? "" : ": " + reason));
      }
      return Status::ok();
    }
    if (!tables_.regionTables) prepareRegionTables();
    if (exactPattern_)
      takeMatch();
    else
      grow(seed);
    std::sort(region_.begin(), region_.end(),
              [&](const Node* a, const Node* b) { return dag_.rank(*a) < dag_.rank(*b); });
    std::vector<Reentry> reentered = dag_.findReentries(region_, QuotientDag::Direction::kForward);
    if (reentered.empty()) {
      if (!exactPattern_) return filterAndCommit();
      commit(region_);  // a PatternSelector's Filter keeps its whole match
      return Status::ok();
    }
    excludeForCycle(seed, std::move(reentered));
  }
}

void PropertyPass::grow(Node* seed) {
  ++tables_.candidateMark;
  region_.clear();
  region_.push_back(seed);
  candidate_[seed->id()] = tables_.candidateMark;
  auto offer = [&](Node* n, Node* other, bool isProducer) {
    if (candidate_[other->id()] == tables_.candidateMark || !available(*other)) return;
    NodeView nodeView(*n, *this), otherView(*other, *this);
    Decision d = isProducer ? selector_->SelectInput(nodeView, otherView)
                            : selector_->SelectOutput(nodeView, otherView);
    if (!d) return;
    candidate_[other->id()] = tables_.candidateMark;
    region_.push_back(other);
  };
  for (size_t i = 0; i < region_.size(); ++i) {
    Node* n = region_[i];
    for (Value* in : n->inputs())
      if (in && in->producer()) offer(n, in->producer(), true);
    for (Value* out : n->outputs()) {
      if (out->producer() != n) continue;
      for (const Use& use : out->uses()) offer(n, use.user, false);
    }
  }
}

// A PatternSelector's Select matched available nodes only, each joined to
// an earlier one by a graph edge, and its SelectInput and SelectOutput say
// yes for two matched nodes alone: growing from the anchor would reach
// exactly the match, at the cost of a virtual call and a scan of the match
// per edge.
void PropertyPass::takeMatch() {
  region_.clear();
  for (const Node* n : pattern_->matchedNodes())
    if (n) region_.push_back(const_cast<Node*>(n));
}

std::string PropertyPass::cycleReason(const Reentry& r) const {
  const Node& via = *r.via;
  int region = run_.regionOfFused(via);
  if (region < 0 && via.id() < taken_.size() && taken_[via.id()] >= 0) region = taken_[via.id()];
  std::string where = via.qualifiedOpType() + " '" + via.displayName() + "'";
  if (region >= 0)
    return "would form a cycle with region " + std::to_string(region) + " through node " + where +
           " (" + label_ + ")";
  return "would form a cycle through node " + where + " outside the region (" + label_ + ")";
}

void PropertyPass::excludeForCycle(Node* seed, std::vector<Reentry> reentered) {
  auto contains = [](const std::vector<Reentry>& list, const Node* n) {
    return std::any_of(list.begin(), list.end(), [n](const Reentry& r) { return r.member == n; });
  };
  // Dropping every re-entered member leaves a convex set. Keep the seed:
  // when it is itself re-entered, drop the members that re-enter instead,
  // and when it is both, drop both sides but the seed.
  std::vector<Reentry> drop;
  if (!contains(reentered, seed)) {
    drop = std::move(reentered);
  } else {
    std::vector<Reentry> reentering =
        dag_.findReentries(region_, QuotientDag::Direction::kBackward);
    if (!contains(reentering, seed)) {
      drop = std::move(reentering);
    } else {
      for (auto* list : {&reentered, &reentering})
        for (const Reentry& r : *list)
          if (r.member != seed && !contains(drop, r.member)) drop.push_back(r);
    }
  }
  for (const Reentry& r : drop) {
    excluded_[r.member->id()] = tables_.seedMark;
    run_.note(*r.member, ReasonKind::kCycle, cycleReason(r));
  }
}

Status PropertyPass::filterAndCommit() {
  candidates_.assign(region_.begin(), region_.end());
  std::vector<const Node*> kept = selector_->Filter(candidates_);
  SUBGRAPH_RETURN_IF_ERROR(markKept(kept));
  if (kept.size() == region_.size()) {
    // The grown region is connected by construction and was just found
    // convex, so it stands as it is.
    commit(region_);
    return Status::ok();
  }
  std::vector<Node*> keptNodes = dropFiltered();
  if (keptNodes.empty()) return Status::ok();
  if (options_.filterSplit == FilterSplit::kReject)
    commitUnsplit(keptNodes);
  else
    commitConvexParts(std::move(keptNodes));
  return Status::ok();
}

// Marks Filter's result in scratch_ under a fresh mark, failing the pass
// if it holds a node that was not offered, or one twice: the partitioner
// owns the region, and a selector cannot widen it.
Status PropertyPass::markKept(const std::vector<const Node*>& kept) {
  ++tables_.scratchMark;
  for (const Node* k : kept) {
    if (!k || k->graph() != &graph_ || candidate_[k->id()] != tables_.candidateMark)
      return fail("Filter returned " +
                  (k ? k->qualifiedOpType() + " node '" + k->displayName() + "'"
                     : std::string("a null node")) +
                  ", which is not one of its candidates");
    if (scratch_[k->id()] == tables_.scratchMark)
      return fail("Filter returned node '" + k->displayName() + "' twice");
    scratch_[k->id()] = tables_.scratchMark;
  }
  return Status::ok();
}

// The members markKept() marked, in rank order; the others are noted as
// dropped by Filter.
std::vector<Node*> PropertyPass::dropFiltered() {
  std::vector<Node*> keptNodes;
  for (Node* n : region_) {
    if (scratch_[n->id()] == tables_.scratchMark) {
      keptNodes.push_back(n);
      continue;
    }
    std::string why = selector_->FilterReason(*n);
    run_.note(*n, ReasonKind::kFilter,
              "dropped by Filter of " + label_ + (why.empty() ? "" : ": " + why));
  }
  return keptNodes;
}

// FilterSplit::kReject: the kept set stands as one region if it is
// connected and convex, and nothing of it is fused otherwise.
void PropertyPass::commitUnsplit(const std::vector<Node*>& kept) {
  std::vector<std::vector<Node*>> components = connectedComponents(kept);
  std::string problem;
  if (components.size() > 1)
    problem = std::to_string(components.size()) + " disconnected parts";
  else if (!dag_.findReentries(kept, QuotientDag::Direction::kForward).empty())
    problem = "a set that is not convex";
  if (problem.empty()) {
    commit(kept);
    return;
  }
  for (Node* n : kept)
    run_.note(*n, ReasonKind::kFilter,
              "Filter of " + label_ + " kept " + problem + ", and the property rejects splits");
}

std::vector<std::vector<Node*>> PropertyPass::connectedComponents(const std::vector<Node*>& nodes) {
  const uint32_t inSet = ++tables_.scratchMark;
  for (Node* n : nodes) scratch_[n->id()] = inSet;
  const uint32_t seen = ++tables_.scratchMark;
  std::vector<std::vector<Node*>> components;
  for (Node* start : nodes) {
    if (scratch_[start->id()] == seen) continue;
    std::vector<Node*> component{start};
    scratch_[start->id()] = seen;
    auto reach = [&](Node* other) {
      if (scratch_[other->id()] != inSet) return;
      scratch_[other->id()] = seen;
      component.push_back(other);
    };
    for (size_t i = 0; i < component.size(); ++i) {
      Node* n = component[i];
      for (Value* in : n->inputs())
        if (in && in->producer()) reach(in->producer());
      for (Value* out : n->outputs())
        for (const Use& use : out->uses()) reach(use.user);
    }
    std::sort(component.begin(), component.end(),
              [&](const Node* a, const Node* b) { return dag_.rank(*a) < dag_.rank(*b); });
    components.push_back(std::move(component));
  }
  return components;
}

void PropertyPass::commitConvexParts(std::vector<Node*> kept) {
  // Each step either commits a connected, convex component or splits it
  // into the re-entered members and the rest, both strictly smaller (the
  // lowest-ranked member is never re-entered), so this terminates. A part
  // is checked only after the parts before it were committed: two parts
  // that are each convex may still form a cycle together.
  std::deque<std::vector<Node*>> work;
  for (auto& c : connectedComponents(kept)) work.push_back(std::move(c));
  while (!work.empty()) {
    std::vector<Node*> component = std::move(work.front());
    work.pop_front();
    std::vector<Reentry> reentered =
        dag_.findReentries(component, QuotientDag::Direction::kForward);
    if (reentered.empty()) {
      commit(component);
      continue;
    }
    ++tables_.scratchMark;
    for (const Reentry& r : reentered) scratch_[r.member->id()] = tables_.scratchMark;
    std::vector<Node*> rest, cut;
    for (Node* n : component) (scratch_[n->id()] == tables_.scratchMark ? cut : rest).push_back(n);
    for (auto* side : {&rest, &cut})
      for (auto& c : connectedComponents(*side)) work.push_back(std::move(c));
  }
}

void PropertyPass::commit(std::span<Node* const> part) {
  if (part.size() < options_.minRegionSize) {
    for (Node* n : part)
      run_.note(*n, ReasonKind::kMinSize,
                "region of " + std::to_string(part.size()) +
                    (part.size() == 1 ? " node" : " nodes") + " is below the minimum region size " +
                    std::to_string(options_.minRegionSize) + " of " + label_);
    return;
  }
  const int id = info_.id = run_.nextRegionId;
  RegionBody body;
  FusedNode fused;
  if (!lateBodies_) {
    info_.nodes.assign(part.begin(), part.end());
    body = surgery_.buildBody(part, id);
    SubgraphNodeResult result = property_.CreateSubgraphNode(body.body, info_);
    if (!result.accepted()) {
      surgery_.discardBody();
      for (Node* n : part)
        run_.note(*n, ReasonKind::kRejected,
                  "region rejected by property " + label_ +
                      (result.reason().empty() ? "" : ": " + result.reason()));
      return;
    }
    fused = std::move(result.node());
  }
  ++run_.nextRegionId;
  run_.regionBackend.push_back(backendIndex_);
  dag_.contract(part);
  surgery_.add(id, part, std::move(body), std::move(fused));
}

}  // namespace subgraph::partition::detail
