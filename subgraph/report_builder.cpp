//===- subgraph/report_builder.cpp - The partition report of one run ------===//
//
// The left-out nodes are written into RejectedNodes (names back to back,
// each op, kind and reason text stored once and referred to by index),
// reserved once from a count and a sampled name length: on a large graph
// that matches little this list is most of the report, and a record of
// four strings per node had been half of such a run (docs/partitioning.md,
// "Where the time goes").
//
//===----------------------------------------------------------------------===//
#include "subgraph/report_builder.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>

namespace subgraph::partition::detail {
namespace {

const char* reasonKindName(ReasonKind kind) {
  switch (kind) {
    case ReasonKind::kNone:
    case ReasonKind::kNoSelector: return "no-selector";
    case ReasonKind::kAlreadyFused: return "already-fused";
    case ReasonKind::kCycle: return "cycle";
    case ReasonKind::kFilter: return "filter";
    case ReasonKind::kMinSize: return "min-size";
    case ReasonKind::kRejected: return "rejected";
  }
  return "no-selector";
}

// The partition state a lower-priority backend's selector would have seen
// before the first pass: every node of the graph that is not fused yet.
class AllAvailable final : public PartitionState {
 public:
  explicit AllAvailable(const RunState& run) : run_(run) {}
  bool available(const Node& node) const override {
    return node.graph() == &run_.graph && !run_.isFused(node);
  }

 private:
  const RunState& run_;
};

// The total length of the left-out nodes' names, estimated from an even
// sample of them, for reserving the report's name buffer once. Too small a
// reservation doubles the buffer, which on a large graph copies megabytes
// into a fresh block twice their size (a fixed guess per name did, short
// of the zoo's names: docs/partitioning.md); measuring every name would
// load every node once more. The sample costs a few dozen loads.
size_t estimateNameBytes(const RunState& run, const std::vector<NodeId>& inputOrder,
                         size_t rejected) {
  constexpr size_t kSamples = 64;
  const size_t step = std::max<size_t>(1, inputOrder.size() / kSamples);
  size_t sampled = 0, bytes = 0;
  for (size_t i = 0; i < inputOrder.size() && sampled < kSamples; i += step) {
    const NodeId id = inputOrder[i];
    const Node* n = run.regionOf[id] < 0 ? run.graph.node(id) : nullptr;
    if (!n) continue;
    // An unnamed node reports its displayName(), "#" and its id.
    bytes += n->name().empty() ? 8 : n->name().size();
    ++sampled;
  }
  if (sampled == 0) return rejected * 16;
  // A quarter over the sample's mean covers the longer names a sample
  // misses (names grow with their index) without doubling.
  return rejected * bytes / sampled * 5 / 4 + 64;
}

// Reserves the report's left-out list for the nodes of `inputOrder` in no
// region, exactly: a doubling vector would hold up to twice the room, and
// three times while it moves. The names are not measured first: that
// would be one more cache miss per node on a large graph, to save a few
// doublings of one buffer.
void reserveLeftOut(RunState& run, const std::vector<NodeId>& inputOrder) {
  size_t rejected = 0;
  for (NodeId id : inputOrder) rejected += run.regionOf[id] < 0;
  RejectedNodes& out = run.report.rejected;
  out.reserve(out.size() + rejected, estimateNameBytes(run, inputOrder, rejected));
}

// Lists node `id`, taken by a region, as contested by every backend after
// its region's (in priority order) whose bit `wishes` sets.
void addContested(RunState& run, NodeId id, uint64_t wishes, std::span<SubgraphBackend> backends) {
  PartitionReport& report = run.report;
  // Region ids count on across nested graphs; this run's lists start at 0.
  const auto position = static_cast<size_t>(run.regionOf[id] - run.firstRegionId);
  const size_t owner = run.regionBackend[position];
  const RegionReportView region = report.regions.view(position);
  std::string name;
  for (size_t k = 0; k < region.numNodes; ++k)
    if (report.regions.nodeId(region, k) == id) name = report.regions.node(region, k);
  for (size_t b = owner + 1; b < backends.size() && b < 64; ++b)
    if (wishes & (uint64_t{1} << b))
      report.contested.push_back(
          ContestedNode{name, backends[b].name, std::string(region.backend), region.id});
}

// Writes the left-out nodes into the report, one add() per node. Op and
// kind texts, and the fixed reasons, are interned once, not per node: a
// graph no backend applies to rejects every node for the same reason. The
// noted reasons are added once per text NodeReasons holds.
class LeftOutWriter {
 public:
  LeftOutWriter(RunState& run, std::span<SubgraphBackend> backends)
      : run_(run), out_(run.report.rejected), reportText_(run.reasons.texts().size(), kUnset) {
    for (size_t k = 0; k < kReasonKinds; ++k)
      kindIndex_[k] = out_.intern(reasonKindName(static_cast<ReasonKind>(k)));
    matchedNone_ = out_.intern("no selector matched");
    noSelector_ = backends.empty() ? out_.intern("no backend is active") : matchedNone_;
  }

  void add(NodeId id) {
    const Node* n = run_.graph.node(id);
    if (!n) {
      out_.push_back(RejectedNode{"#" + std::to_string(id), RejectedNode::kNoId, "", "removed",
                                  "removed from the graph by a PostPartition hook"});
      return;
    }
    ReasonKind kind = run_.reasons.kind(id);
    const uint32_t reason = reasonOf(*n, kind);
    auto [op, newOp] = opIndex_.try_emplace(&n->opKey(), 0);
    if (newOp) op->second = out_.intern(n->qualifiedOpType());
    std::string_view name = n->name();
    if (name.empty()) {
      unnamed_ = n->displayName();
      name = unnamed_;
    }
    out_.append(name, id, op->second, kindIndex_[static_cast<size_t>(kind)], reason);
  }

 private:
  static constexpr uint32_t kUnset = UINT32_MAX;

  // The report's index of `n`'s reason text; `kind` becomes kAlreadyFused
  // for a fused node of the input.
  uint32_t reasonOf(const Node& n, ReasonKind& kind) {
    const uint32_t text = run_.reasons.textIndex(n.id());
    if (kind <= ReasonKind::kNoSelector && isFusedOp(n)) {
      // Never offered to a selector (RunState::isFused()), so nothing
      // noted it.
      kind = ReasonKind::kAlreadyFused;
      return out_.intern("already a fused node (" + n.qualifiedOpType() +
                         "); fused nodes are final");
    }
    if (kind == ReasonKind::kNone) return noSelector_;
    if (text == NodeReasons::kNoText) return matchedNone_;
    // Most texts name their node and so are distinct: each moves into the
    // report once, unhashed, however many nodes share it.
    uint32_t& added = reportText_[text];
    if (added == kUnset) added = out_.addText(std::move(run_.reasons.texts()[text]));
    return added;
  }

  RunState& run_;
  RejectedNodes& out_;
  std::unordered_map<const OpKey*, uint32_t> opIndex_;
  std::array<uint32_t, kReasonKinds> kindIndex_;
  uint32_t matchedNone_ = 0;
  uint32_t noSelector_ = 0;
  std::string unnamed_;
  // The report's index of each of run.reasons' texts, once added.
  std::vector<uint32_t> reportText_;
};

}  // namespace

std::vector<uint64_t> lowerPriorityWishes(const RunState& run, std::span<SubgraphBackend> backends,
                                          const PartitionOptions& options) {
  std::vector<uint64_t> wanted(run.inputBound, 0);
  AllAvailable state(run);
  for (size_t b = 1; b < backends.size() && b < 64; ++b)
    for (auto& property : backends[b].properties) {
      if (options.forTraining && property->options().inferenceOnly) continue;
      std::unique_ptr<SubgraphSelectorV2> selector = property->CreateSubgraphSelectorV2();
      if (!selector) continue;
      for (Node* n : run.graph.nodes()) {
        if (!state.available(*n)) continue;
        selector->Reset();
        if (selector->Select(NodeView(*n, state))) wanted[n->id()] |= uint64_t{1} << b;
      }
    }
  return wanted;
}

void fillReport(RunState& run, const std::vector<NodeId>& inputOrder,
                const std::vector<uint64_t>& wanted, std::span<SubgraphBackend> backends) {
  reserveLeftOut(run, inputOrder);
  LeftOutWriter leftOut(run, backends);
  for (size_t i = 0; i < inputOrder.size(); ++i) {
    const NodeId id = inputOrder[i];
    // A left-out node's name and op are read from the node object: start
    // the load 8 nodes ahead (no effect on what is reported).
    if (i + 8 < inputOrder.size()) {
      if (const Node* ahead = run.graph.node(inputOrder[i + 8])) __builtin_prefetch(ahead);
    }
    if (run.regionOf[id] < 0) {
      leftOut.add(id);
      continue;
    }
    ++run.report.nodesInRegions;
    if (id < wanted.size() && wanted[id]) addContested(run, id, wanted[id], backends);
  }
}

void mergeNestedReport(PartitionReport&& nested, const Node& owner, const std::string& attr,
                       PartitionReport& report) {
  const std::string scope = owner.displayName() + "." + attr;
  report.phases += nested.phases;
  for (RegionReport r : nested.regions) {
    r.scope = r.scope.empty() ? scope : scope + "/" + r.scope;
    report.regions.push_back(r);
  }
  for (const RejectedNode& n : nested.rejected)
    report.rejected.push_back(
        RejectedNode{scope + ":" + n.node, RejectedNode::kNoId, n.op, n.kind, n.reason});
  for (ContestedNode& c : nested.contested) {
    c.node = scope + ":" + c.node;
    report.contested.push_back(std::move(c));
  }
  report.nodesTotal += nested.nodesTotal;
  report.nodesInRegions += nested.nodesInRegions;
}

}  // namespace subgraph::partition::detail
