//===- subgraph/region_surgery.cpp - Committed regions into fused nodes ---===//
//
// The surgery runs once per pass, after the last seed, in three steps over
// all pending regions: report each and take its members out of the graph
// (in batches), drop the values only regions read, add the fused nodes.
// Doing each step for every region at once, rather than region by region,
// lets the removals share their use-list compactions and name-index
// rebuild; the order of the steps keeps the heap's peak low (see
// materializeAll()). docs/partitioning.md, step 8, describes the result.
//
//===----------------------------------------------------------------------===//
#include "subgraph/region_surgery.h"

#include <algorithm>

#include "subgraph/partition/fused_name.h"

namespace subgraph::partition::detail {

RegionSurgery::RegionSurgery(RunState& run, PassScratch& tables, const std::string& backend,
                             const SubgraphProperty& property, const PropertyOptions& options,
                             const std::string& label, bool lateBodies)
    : run_(run),
      graph_(run.graph),
      tables_(tables),
      bodies_(tables.bodies),
      backend_(backend),
      property_(property),
      options_(options),
      label_(label),
      lateBodies_(lateBodies),
      serial_(++tables.surgerySerial) {
  info_.backend = backend;
  info_.property = property.name();
}

std::string RegionSurgery::bodyName(int regionId) const {
  return fusedNodeName(backend_, info_.property, regionId);
}

RegionBody RegionSurgery::buildBody(std::span<Node* const> part, int regionId) {
  inlinedMark_ = inlined_.size();
  return bodies_.build(part, bodyName(regionId), options_, inlined_);
}

void RegionSurgery::discardBody() { inlined_.resize(inlinedMark_); }

void RegionSurgery::add(int regionId, std::span<Node* const> part, RegionBody body,
                        FusedNode fused) {
  if (!lateBodies_) keepNewInlined(inlinedMark_);
  for (Node* n : part) {
    tables_.taken[n->id()] = regionId;
    if (n->id() < run_.inputBound) run_.reasons.dropText(n->id());
  }
  PendingRegion& region = pending_.emplace_back();
  region.id = regionId;
  region.firstMember = members_.size();
  region.numMembers = part.size();
  region.body = std::move(body);
  region.fused = std::move(fused);
  members_.insert(members_.end(), part.begin(), part.end());
}

void RegionSurgery::keepNewInlined(size_t from) {
  // List each inlined constant once per surgery, not once per region. A
  // surgery's regions are added one after another (each property walks its
  // seeds before the next), and so are its late bodies, so no other
  // surgery's serial comes between two of its marks.
  size_t kept = from;
  for (size_t k = from; k < inlined_.size(); ++k) {
    Value* c = inlined_[k];
    if (tables_.inlinedBy[c->id()] != serial_) {
      tables_.inlinedBy[c->id()] = serial_;
      inlined_[kept++] = c;
    }
  }
  inlined_.resize(kept);
}

Status RegionSurgery::connectAll() {
  // The hooks of a property that fuses without bodies are the defaults,
  // which change nothing; its bodies do not exist yet.
  if (lateBodies_) return Status::ok();
  for (size_t index = 0; index < pending_.size(); ++index) {
    PendingRegion& region = pending_[index];
    Graph& body = *region.body.body;
    const std::string which = "region " + std::to_string(region.id);
    // The escaping values as the body builder listed them, in a buffer
    // reused across regions.
    escaping_.assign(region.body.outputs.begin(), region.body.outputs.end());
    Status in = property_.ConnectSubgraphInputs(body, region.body.inputs);
    if (!in) return fail("ConnectSubgraphInputs failed for " + which + ": " + in.message());
    Status out = property_.ConnectSubgraphOutputs(body, region.body.outputs);
    if (!out) return fail("ConnectSubgraphOutputs failed for " + which + ": " + out.message());
    SUBGRAPH_RETURN_IF_ERROR(checkInputs(region, which));
    SUBGRAPH_RETURN_IF_ERROR(checkOutputs(region, which));
    if (!region.fused.op)
      region.fused.op = OpRegistry::global().intern(fusedDomain(backend_), info_.property);
    if (region.fused.name.empty())
      region.fused.name = fusedNodeName(backend_, info_.property, region.id);
  }
  return Status::ok();
}

Status RegionSurgery::checkInputs(const PendingRegion& region, const std::string& which) const {
  const Graph& body = *region.body.body;
  if (region.body.inputs.size() != body.inputs().size())
    return fail("ConnectSubgraphInputs gave " + which + " " +
                std::to_string(region.body.inputs.size()) + " inputs for a body with " +
                std::to_string(body.inputs().size()));
  const std::vector<int>& taken = tables_.taken;
  for (Value* v : region.body.inputs) {
    if (!v || v->graph() != &graph_)
      return fail("ConnectSubgraphInputs gave " + which +
                  " an input that is not a value of graph '" + graph_.name() + "'");
    if (v->producer() && v->producer()->id() < taken.size() &&
        taken[v->producer()->id()] == region.id)
      return fail("ConnectSubgraphInputs connected " + which + " to its own value '" + v->name() +
                  "'");
  }
  return Status::ok();
}

Status RegionSurgery::checkOutputs(const PendingRegion& region, const std::string& which) {
  // escaping_ holds the outputs as the body builder listed them.
  bool permutation = region.body.outputs == escaping_;  // hooks rarely reorder
  if (!permutation) {
    std::vector<Value*> given = region.body.outputs;
    std::sort(given.begin(), given.end());
    std::sort(escaping_.begin(), escaping_.end());
    permutation = given == escaping_;
  }
  if (!permutation || region.body.outputs.size() != region.body.body->outputs().size())
    return fail("ConnectSubgraphOutputs must keep " + which +
                "'s outputs a permutation of its escaping values");
  return Status::ok();
}

std::vector<FusedRegion> RegionSurgery::materializeAll() {
  std::vector<Value*> internal = reportAndRemoveMembers();
  // The dead values go before the fused nodes exist: freeing them first
  // keeps them, and the list of them, out of the heap's peak.
  removeDeadValues(std::move(internal));
  return addFusedNodes();
}

std::vector<Value*> RegionSurgery::reportAndRemoveMembers() {
  // Report each region and note the values only it reads before its
  // members go; the reports are appended in place. Members
  // leave in a few batches (removeNodes compacts each shared use list,
  // e.g. a weight's, once per batch instead of once per node), each right
  // after its regions were reported: the heap peaks here, with every
  // region body built, and freeing a batch's members before reporting the
  // next lets the later reports reuse their memory instead of adding to
  // the peak. The batches only split the removal; the resulting graph,
  // use lists and report are those of one removal at the end.
  // Each batch rescans the surviving readers of every shared value (a
  // cache miss per reader), so the batches are few: four leave a quarter
  // of the reports in the peak for three extra passes over those lists.
  // Small graphs are batched too: the heap target is per node at every
  // size, and a batch of a small graph costs little.
  constexpr size_t kBatches = 4;
  const size_t batchNodes = members_.size() / kBatches + 1;
  std::vector<Value*> internal;  // computed in a region, read only there
  size_t removedUpTo = 0;        // members_[0, removedUpTo) are gone
  auto removeBatch = [&](size_t end) {
    graph_.removeNodes(std::span<Node* const>(members_).subspan(removedUpTo, end - removedUpTo),
                       /*keepOutputs=*/true);
    removedUpTo = end;
  };
  for (PendingRegion& region : pending_) {
    reportMembers(region);
    if (lateBodies_)
      moveIntoBody(region);
    else
      listInternal(region, internal);
    reportConnections(region);
    const size_t end = region.firstMember + region.numMembers;
    if (!lateBodies_ && end - removedUpTo >= batchNodes) removeBatch(end);
  }
  if (lateBodies_)
    graph_.dropForeignUses(touched_, members_);
  else if (removedUpTo < members_.size())
    removeBatch(members_.size());
  return internal;
}

void RegionSurgery::reportMembers(PendingRegion& region) {
  RegionReports& reports = run_.report.regions;
  reports.beginRegion(region.id, backend_, info_.property);
  const std::span<Node* const> members = membersOf(region);
  region.rank = tables_.dag.rank(*members.front());
  variant_.clear();
  for (Node* n : members) {
    if (!variant_.empty()) variant_ += '+';
    if (!n->domain().empty()) (variant_ += n->domain()) += '.';
    variant_ += n->opType();
    if (n->name().empty())
      reports.addNode(n->displayName(), n->id());
    else
      reports.addNode(n->name(), n->id());
    if (n->id() < run_.inputBound) run_.regionOf[n->id()] = region.id;
  }
}

void RegionSurgery::moveIntoBody(PendingRegion& region) {
  // The members move into the body (their ids change, so after the
  // report); the region accepts as CreateSubgraphNode's default would.
  const size_t inlinedBefore = inlined_.size();
  region.body = bodies_.move(membersOf(region), std::string(), options_, inlined_, touched_);
  keepNewInlined(inlinedBefore);
  info_.id = region.id;
  region.fused = defaultFusedNode(region.body.body, info_);
  // The body is named as the fused node (bodyName()), whose name is made
  // once, there.
  region.body.body->setName(region.fused.name);
}

void RegionSurgery::listInternal(const PendingRegion& region, std::vector<Value*>& internal) const {
  const std::vector<Value*>& outputs = region.body.outputs;
  for (Node* n : membersOf(region))
    for (Value* v : n->outputs())
      if (v->producer() == n && std::find(outputs.begin(), outputs.end(), v) == outputs.end())
        internal.push_back(v);
}

void RegionSurgery::reportConnections(const PendingRegion& region) {
  RegionReports& reports = run_.report.regions;
  reports.endNodes(region.fused.name, variant_);
  // The fused node's connections are exactly the body's outer values.
  for (Value* v : region.body.inputs) reports.addInput(v ? std::string_view(v->name()) : "");
  for (Value* v : region.body.outputs) reports.addOutput(v->name());
}

void RegionSurgery::removeDeadValues(std::vector<Value*> internal) {
  // Escaping values (read outside, or graph outputs) become the fused
  // node's outputs, so outer readers and graph outputs keep pointing at
  // them; values only the region read go. So does an inlined constant
  // (listed once, however many bodies inlined it) that nothing outside
  // the bodies reads: the fused nodes will not read it either, since
  // inlined constants never become body inputs. One batch, before the
  // fused nodes exist: a large graph sheds most of its values here (every
  // weight of every region), which removeValues() does with one rebuild
  // of the name index, and freeing them first keeps them out of the peak.
  // A connection hook may have wired a fused node to any outer value, so
  // a value some fused node will read stays (marked with this surgery's
  // serial in readByFused).
  std::vector<uint32_t>& marks = tables_.readByFused;
  for (const PendingRegion& region : pending_)
    for (const Value* v : region.body.inputs)
      if (v && v->id() < marks.size()) marks[v->id()] = serial_;
  // So does a value a nested graph reads by name, a use no list shows.
  for (const std::string& name : tables_.captured)
    if (const Value* v = graph_.findValue(name); v && v->id() < marks.size())
      marks[v->id()] = serial_;
  std::vector<Value*> dead;
  dead.reserve(internal.size() + inlined_.size());
  auto unused = [&](const Value* v) {
    return marks[v->id()] != serial_ && !v->hasUses() && !v->isGraphInput() && !v->isGraphOutput();
  };
  for (Value* v : internal)
    if (unused(v)) dead.push_back(v);
  for (Value* c : inlined_)
    if (unused(c)) dead.push_back(c);
  graph_.removeValues(dead);
}

std::vector<FusedRegion> RegionSurgery::addFusedNodes() {
  std::vector<FusedRegion> fusedRegions;
  fusedRegions.reserve(pending_.size());
  // The member list is spent; so is each pending region once its fused
  // node exists: dropping them as the fused nodes come lets those reuse
  // their memory, at the heap's peak, instead of adding to it.
  std::vector<Node*>().swap(members_);
  // Adding a fused node writes to each of its outer values (a use on each
  // input, the producer of each output), which by now lie wherever the
  // region's neighbours were: start those loads 4 regions ahead.
  constexpr size_t kAhead = 4;
  for (; !pending_.empty(); pending_.pop_front()) {
    if (kAhead < pending_.size()) {
      const RegionBody& ahead = pending_[kAhead].body;
      for (const Value* v : ahead.inputs)
        if (v) __builtin_prefetch(v, 1);
      for (const Value* v : ahead.outputs) __builtin_prefetch(v, 1);
    }
    PendingRegion& region = pending_.front();
    Node* fused = graph_.addNode(region.fused.op, std::move(region.body.inputs),
                                 std::move(region.body.outputs), std::move(region.fused.attrs),
                                 std::move(region.fused.name));
    run_.markFused(*fused, region.id, region.rank);
    fusedRegions.push_back(FusedRegion{region.id, fused});
  }
  return fusedRegions;
}

}  // namespace subgraph::partition::detail
