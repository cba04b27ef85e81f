//===- testing/testkit/partition_oracle.cpp - What a partitioning must keep -===//
//
// See partition_oracle.h. Deliberately simple: quadratic bit sets and
// union-find, so a reader can trust it more than the partitioner it checks.
//
//===----------------------------------------------------------------------===//
#include "testkit/partition_oracle.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "subgraph/ir/verifier.h"

namespace subgraph::testkit {
namespace {

using partition::PartitionReport;
using partition::RegionReport;

/// One node as the oracle compares it: name, op and value names.
std::string describe(const Node& n, const std::map<const Value*, std::string>& outer) {
  std::string s = n.name() + " " + n.qualifiedOpType() + " (";
  for (Value* v : n.inputs()) {
    auto it = v ? outer.find(v) : outer.end();
    s += (!v ? std::string("_") : it != outer.end() ? it->second : v->name()) + ",";
  }
  s += ") -> (";
  for (Value* v : n.outputs()) s += v->name() + ",";
  return s + ")";
}

std::multiset<std::string> nodesOf(const Graph& g) {
  std::multiset<std::string> out;
  for (Node* n : g.nodes()) out.insert(describe(*n, {}));
  return out;
}

/// The fused graph's nodes with every fused node replaced by its body,
/// body inputs renamed to the outer values feeding them.
std::multiset<std::string> inlinedNodesOf(const Graph& g, std::string& error) {
  std::multiset<std::string> out;
  for (Node* n : g.nodes()) {
    const Attribute* attr = n->attr("body");
    if (!attr || attr->kind() != AttrKind::kGraph) {
      out.insert(describe(*n, {}));
      continue;
    }
    const Graph& body = *attr->asGraph();
    std::map<const Value*, std::string> outer;
    if (body.inputs().size() != n->numInputs()) error = "fused node input count differs from body";
    for (size_t i = 0; i < body.inputs().size() && i < n->numInputs(); ++i)
      outer[body.inputs()[i]] = n->input(i)->name();
    if (body.outputs().size() != n->numOutputs())
      error = "fused node output count differs from body";
    for (size_t i = 0; i < body.outputs().size() && i < n->numOutputs(); ++i)
      if (body.outputs()[i]->name() != n->output(i)->name())
        error = "body output '" + body.outputs()[i]->name() + "' is fused output '" +
                n->output(i)->name() + "'";
    for (Node* inner : body.nodes()) out.insert(describe(*inner, outer));
  }
  return out;
}

std::vector<std::string> namesOf(std::span<Value* const> values) {
  std::vector<std::string> out;
  for (Value* v : values) out.push_back(v->name());
  return out;
}

std::vector<std::vector<NodeId>> successors(const Graph& g) {
  std::vector<std::vector<NodeId>> succ(g.nodeIdBound());
  for (Node* node : g.nodes())
    for (Value* out : node->outputs())
      for (const Use& use : out->uses()) succ[node->id()].push_back(use.user->id());
  return succ;
}

size_t find(std::vector<size_t>& parent, size_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

}  // namespace

Reachability::Reachability(const std::vector<std::vector<NodeId>>& succ)
    : n_(succ.size()), words_((succ.size() + 63) / 64), bits_(n_ * words_, 0) {
  // Depth-first post order: every successor's row is complete before ours.
  std::vector<int> state(n_, 0);
  std::vector<std::pair<size_t, size_t>> stack;
  for (size_t root = 0; root < n_; ++root) {
    if (state[root]) continue;
    stack.push_back({root, 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto& [i, k] = stack.back();
      if (k < succ[i].size()) {
        size_t j = succ[i][k++];
        if (state[j] == 1) {  // a cycle: no meaningful relation
          std::fill(bits_.begin(), bits_.end(), 0);
          return;
        }
        if (!state[j]) {
          state[j] = 1;
          stack.push_back({j, 0});
        }
        continue;
      }
      for (NodeId j : succ[i]) {
        bits_[i * words_ + j / 64] |= uint64_t{1} << (j % 64);
        for (size_t w = 0; w < words_; ++w) bits_[i * words_ + w] |= bits_[j * words_ + w];
      }
      state[i] = 2;
      stack.pop_back();
    }
  }
}

Reachability::Reachability(const Graph& graph) : Reachability(successors(graph)) {}

bool Reachability::reaches(NodeId from, NodeId to) const {
  if (from >= n_ || to >= n_) return false;
  return bits_[from * words_ + to / 64] >> (to % 64) & 1;
}

bool isConvex(const Reachability& reach, std::span<const NodeId> region) {
  std::set<NodeId> inside(region.begin(), region.end());
  for (NodeId v = 0; v < reach.size(); ++v) {
    if (inside.count(v)) continue;
    bool fromRegion = false, toRegion = false;
    for (NodeId r : region) {
      fromRegion = fromRegion || reach.reaches(r, v);
      toRegion = toRegion || reach.reaches(v, r);
    }
    if (fromRegion && toRegion) return false;
  }
  return true;
}

std::string nonConvexRegion(const Graph& original, const PartitionReport& report) {
  Reachability reach(original);
  for (const RegionReport& r : report.regions) {
    if (isConvex(reach, r.nodeIds)) continue;
    std::string names;
    for (const std::string& n : r.nodes) names += (names.empty() ? "" : ", ") + n;
    return "region " + std::to_string(r.id) + " (" + names + ") is not convex";
  }
  return {};
}

std::string checkPartition(const Graph& original, const Graph& partitioned,
                           const PartitionReport& report, const OracleOptions& options) {
  VerifyOptions vo;
  vo.allowUnknownOps = true;
  if (Status s = verify(partitioned, vo); !s) return "fused graph does not verify: " + s.message();
  if (!partitioned.topologicalOrder().isOk()) return "fused graph has a cycle";

  const size_t n = original.nodeIdBound();
  std::vector<int> regionOf(n, -1);
  for (size_t k = 0; k < report.regions.size(); ++k)
    for (NodeId id : report.regions[k].nodeIds) {
      if (id >= n || !original.node(id)) return "region names an unknown node";
      if (regionOf[id] >= 0) return "node '" + original.node(id)->name() + "' is in two regions";
      regionOf[id] = static_cast<int>(k);
    }
  size_t inRegions = 0;
  for (int r : regionOf) inRegions += r >= 0;
  if (report.nodesTotal != original.numNodes()) return "nodes_total is wrong";
  if (report.nodesInRegions != inRegions) return "nodes_in_regions is wrong";
  if (report.rejected.size() + inRegions != report.nodesTotal)
    return "rejected list does not cover the nodes outside regions";
  if (options.checkReasons)
    for (const partition::RejectedNode& r : report.rejected)
      if (r.reason.empty()) return "node '" + r.node + "' has no reason";

  std::vector<std::vector<NodeId>> succ = successors(original);
  Reachability reach(succ);
  for (size_t k = 0; k < report.regions.size(); ++k) {
    const RegionReport& r = report.regions[k];
    if (!isConvex(reach, r.nodeIds)) return "region " + std::to_string(r.id) + " is not convex";
    // Weakly connected: union-find over the edges inside the region.
    std::vector<size_t> parent(n);
    std::iota(parent.begin(), parent.end(), 0);
    for (NodeId i : r.nodeIds)
      for (NodeId j : succ[i])
        if (regionOf[j] == static_cast<int>(k)) parent[find(parent, i)] = find(parent, j);
    for (NodeId i : r.nodeIds)
      if (find(parent, i) != find(parent, r.nodeIds.front()))
        return "region " + std::to_string(r.id) + " is not connected";
  }
  // The quotient by all regions together is acyclic: contract each region
  // to one vertex and look for a cycle.
  std::vector<std::vector<NodeId>> quotient(n + report.regions.size());
  auto vertexOf = [&](NodeId i) {
    return regionOf[i] >= 0 ? static_cast<NodeId>(n + regionOf[i]) : i;
  };
  for (NodeId i = 0; i < n; ++i)
    for (NodeId j : succ[i])
      if (vertexOf(i) != vertexOf(j)) quotient[vertexOf(i)].push_back(vertexOf(j));
  std::vector<size_t> indegree(quotient.size(), 0);
  for (const auto& s : quotient)
    for (NodeId j : s) ++indegree[j];
  std::vector<NodeId> ready;
  for (NodeId v = 0; v < quotient.size(); ++v)
    if (!indegree[v]) ready.push_back(v);
  size_t seen = 0;
  while (!ready.empty()) {
    NodeId v = ready.back();
    ready.pop_back();
    ++seen;
    for (NodeId j : quotient[v])
      if (--indegree[j] == 0) ready.push_back(j);
  }
  if (seen != quotient.size()) return "the regions together form a cycle in the input graph";

  if (options.checkInlining) {
    std::string error;
    if (inlinedNodesOf(partitioned, error) != nodesOf(original))
      return "inlining the fused graph does not give back the input graph";
    if (!error.empty()) return error;
  }
  if (namesOf(partitioned.inputs()) != namesOf(original.inputs())) return "graph inputs changed";
  if (namesOf(partitioned.outputs()) != namesOf(original.outputs())) return "graph outputs changed";
  return {};
}

}  // namespace subgraph::testkit
