//===- tests/subgraph/partition_property_test.cpp - Random DAGs vs an oracle -===//
//
// Property-based test of the partitioner: random DAGs crossed with random
// selectors, filters, property rejections and options, each result checked
// against brute-force oracles that know nothing of ranks or windows:
//  * the fused graph verifies and is acyclic, and so is the quotient of the
//    input graph by the regions (acyclic across regions);
//  * every region is weakly connected and convex in the input graph;
//  * every node is in at most one region, and the report accounts for each
//    node exactly once (in a region, or rejected with a reason);
//  * inlining every fused node's body gives back the input graph exactly:
//    the same nodes, reading and defining the same value names;
//  * graph inputs and outputs, their order and names, are unchanged;
//  * the selector is Reset before every use;
//  * partitioning a copy again gives the same report and graph.
//
// Cases: SUBGRAPH_PROPTEST_CASES (default 100000). Each case has its own
// seed, printed on failure; SUBGRAPH_PROPTEST_SEED=<seed> replays that one
// case alone.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "partition_test_util.h"

namespace subgraph::partition {
namespace {

using namespace testing;

uint64_t mix(uint64_t x) {
  // splitmix64: portable, unlike std:: distributions.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// "prefix<i>". (Not `"prefix" + std::to_string(i)`: GCC 12 warns about
/// that spelling with a false -Wrestrict in optimized builds, bug 105329.)
std::string numbered(const char* prefix, size_t i) {
  std::string name(prefix);
  name += std::to_string(i);
  return name;
}

/// A deterministic stream of small random numbers.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() { return state_ = mix(state_); }
  /// Uniform-enough integer in [0, n).
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
  bool percent(size_t p) { return below(100) < p; }

 private:
  uint64_t state_;
};

/// A percentage roll that depends only on (seed, what, a, b), so that a
/// selector answers the same question the same way on every retry.
size_t roll(uint64_t seed, uint64_t what, uint64_t a, uint64_t b) {
  return static_cast<size_t>(mix(seed ^ mix(what ^ mix(a ^ mix(b)))) % 100);
}

/// Random behaviour of one property.
struct SelectorConfig {
  uint64_t seed = 0;
  size_t selectPct = 50, inputPct = 50, outputPct = 50;
  size_t growBudget = 0;  // 0: unlimited; else stop after this many nodes
  int filterMode = 0;     // 0 keep all, 1 drop a random subset, 2 drop all but one
  size_t rejectPct = 0;
};

int gResetViolations = 0;

class RandomSelector : public SubgraphSelector {
 public:
  explicit RandomSelector(SelectorConfig config) : c_(config) {}
  Decision Select(const Node& n) override {
    if (used_) ++gResetViolations;
    used_ = true;
    grown_ = 1;
    return Decision::noIf(roll(c_.seed, 1, n.id(), 0) >= c_.selectPct, "random no");
  }
  Decision SelectInput(const Node& n, const Node& p) override {
    return grow(roll(c_.seed, 2, n.id(), p.id()) < c_.inputPct);
  }
  Decision SelectOutput(const Node& n, const Node& c) override {
    return grow(roll(c_.seed, 3, n.id(), c.id()) < c_.outputPct);
  }
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override {
    std::vector<const Node*> kept;
    for (size_t i = 0; i < candidates.size(); ++i) {
      bool keep = c_.filterMode == 0 ||
                  (c_.filterMode == 1 && roll(c_.seed, 4, candidates[i]->id(), 0) >= 30) ||
                  (c_.filterMode == 2 && i == candidates.size() / 2);
      if (keep) kept.push_back(candidates[i]);
    }
    return kept;
  }
  void Reset() override {
    used_ = false;
    grown_ = 0;
  }

 private:
  Decision grow(bool yes) {
    if (!yes || (c_.growBudget && grown_ >= c_.growBudget)) return false;
    ++grown_;
    return true;
  }
  SelectorConfig c_;
  bool used_ = false;
  size_t grown_ = 0;
};

class RandomProperty : public SubgraphProperty {
 public:
  RandomProperty(std::string name, SelectorConfig config, PropertyOptions options)
      : name_(std::move(name)), config_(config) {
    setOptions(options);
  }
  std::string name() const override { return name_; }
  std::unique_ptr<SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<RandomSelector>(config_);
  }
  SubgraphNodeResult CreateSubgraphNode(std::shared_ptr<Graph> body,
                                        const RegionInfo& region) const override {
    if (roll(config_.seed, 5, region.nodes.front()->id(), region.nodes.size()) < config_.rejectPct)
      return SubgraphNodeResult::reject("random rejection");
    return SubgraphProperty::CreateSubgraphNode(std::move(body), region);
  }

 private:
  std::string name_;
  SelectorConfig config_;
};

/// A random DAG of 1-14 nodes: graph inputs, constants (sometimes shared),
/// nodes with 1-3 inputs drawn from earlier values (repeats allowed, as in
/// x + x) and 1-2 outputs, and graph outputs that cover every unread value
/// plus random extra ones (repeats allowed).
std::unique_ptr<Graph> randomGraph(Rng& rng) {
  auto g = std::make_unique<Graph>("random");
  std::vector<Value*> pool;
  size_t numInputs = 1 + rng.below(2);
  for (size_t i = 0; i < numInputs; ++i)
    pool.push_back(g->addInput(numbered("in", i), TensorType(DataType::kFloat32, {2})));
  size_t numConsts = rng.below(3);
  for (size_t i = 0; i < numConsts; ++i)
    pool.push_back(
        g->addInitializer(numbered("k", i), Tensor::splat(DataType::kFloat32, {2}, 1.0)));
  size_t numNodes = 1 + rng.below(14);
  for (size_t i = 0; i < numNodes; ++i) {
    std::vector<Value*> inputs;
    size_t arity = 1 + rng.below(3);
    for (size_t k = 0; k < arity; ++k) {
      // Prefer recent values so graphs are deep as well as wide.
      size_t back = rng.below(std::min<size_t>(pool.size(), 4));
      inputs.push_back(rng.percent(70) ? pool[pool.size() - 1 - back]
                                       : pool[rng.below(pool.size())]);
    }
    size_t outs = rng.percent(20) ? 2 : 1;
    Node* n = g->addNode("p.Op", inputs, outs, {}, numbered("n", i));
    for (Value* v : n->outputs()) pool.push_back(v);
  }
  for (Value* v : pool)
    if (v->producer() && !v->hasUses()) g->addOutput(v);
  size_t extra = rng.below(3);
  for (size_t i = 0; i < extra; ++i) {
    Value* v = pool[rng.below(pool.size())];
    if (v->producer() || v->isGraphInput()) g->addOutput(v);
  }
  if (g->outputs().empty()) g->addOutput(pool.back());
  return g;
}

std::vector<SubgraphBackend> randomBackends(Rng& rng) {
  std::vector<SubgraphBackend> backends;
  size_t numBackends = 1 + rng.below(2);
  for (size_t b = 0; b < numBackends; ++b) {
    std::vector<std::unique_ptr<SubgraphProperty>> properties;
    size_t numProps = 1 + rng.below(2);
    for (size_t p = 0; p < numProps; ++p) {
      SelectorConfig c;
      c.seed = rng.next();
      c.selectPct = rng.below(101);
      c.inputPct = rng.below(101);
      c.outputPct = rng.below(101);
      c.growBudget = rng.percent(30) ? 1 + rng.below(4) : 0;
      c.filterMode = rng.percent(70) ? 0 : static_cast<int>(1 + rng.below(2));
      c.rejectPct = rng.percent(80) ? 0 : rng.below(60);
      PropertyOptions o;
      o.minRegionSize = 1 + rng.below(3);
      o.mergeDuplicatedInputs = rng.percent(70);
      o.inlineConstants = rng.percent(50);
      o.filterSplit = rng.percent(70) ? FilterSplit::kSplit : FilterSplit::kReject;
      properties.push_back(std::make_unique<RandomProperty>(numbered("p", p), c, o));
    }
    backends.push_back(makeBackend(numbered("b", b), std::move(properties)));
  }
  return backends;
}

/// One node as the oracle compares it: name, op and value names.
std::string describe(const std::string& name, const std::string& op,
                     const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs) {
  std::string s = name + " " + op + " (";
  for (const auto& i : inputs) s += i + ",";
  s += ") -> (";
  for (const auto& o : outputs) s += o + ",";
  return s + ")";
}

/// The input graph's nodes, as multiset of descriptions.
std::multiset<std::string> nodesOf(const Graph& g) {
  std::multiset<std::string> out;
  for (Node* n : g.nodes()) {
    std::vector<std::string> ins, outs;
    for (Value* v : n->inputs()) ins.push_back(v ? v->name() : "_");
    for (Value* v : n->outputs()) outs.push_back(v->name());
    out.insert(describe(n->name(), n->qualifiedOpType(), ins, outs));
  }
  return out;
}

/// The fused graph's nodes with every fused node replaced by its body,
/// body inputs renamed to the outer values feeding them.
std::multiset<std::string> inlinedNodesOf(const Graph& g, std::string& error) {
  std::multiset<std::string> out;
  for (Node* n : g.nodes()) {
    const Graph* body = bodyOf(*n);
    if (!body) {
      std::vector<std::string> ins, outs;
      for (Value* v : n->inputs()) ins.push_back(v ? v->name() : "_");
      for (Value* v : n->outputs()) outs.push_back(v->name());
      out.insert(describe(n->name(), n->qualifiedOpType(), ins, outs));
      continue;
    }
    std::map<const Value*, std::string> outer;
    if (body->inputs().size() != n->numInputs()) error = "fused node input count differs from body";
    for (size_t i = 0; i < body->inputs().size() && i < n->numInputs(); ++i)
      outer[body->inputs()[i]] = n->input(i)->name();
    if (body->outputs().size() != n->numOutputs())
      error = "fused node output count differs from body";
    for (size_t i = 0; i < body->outputs().size() && i < n->numOutputs(); ++i)
      if (body->outputs()[i]->name() != n->output(i)->name())
        error = "body output '" + body->outputs()[i]->name() + "' is fused output '" +
                n->output(i)->name() + "'";
    for (Node* inner : body->nodes()) {
      std::vector<std::string> ins, outs;
      for (Value* v : inner->inputs())
        ins.push_back(!v ? "_" : outer.count(v) ? outer[v] : v->name());
      for (Value* v : inner->outputs()) outs.push_back(v->name());
      out.insert(describe(inner->name(), inner->qualifiedOpType(), ins, outs));
    }
  }
  return out;
}

/// True if no node outside `mask` is both reachable from it and reaches
/// it; `reach[i]` is the set of nodes reachable from node i.
bool isConvex(const std::vector<uint64_t>& reach, uint64_t mask) {
  uint64_t out = 0, in = 0;
  for (size_t i = 0; i < reach.size(); ++i) {
    if (mask >> i & 1) out |= reach[i];
    if (reach[i] & mask) in |= uint64_t{1} << i;
  }
  return (out & in & ~mask) == 0;
}

/// Checks one case; returns "" or what is wrong. With `verbose` (a replay)
/// it prints the input graph and the partitioned graph.
std::string checkCase(uint64_t seed, bool verbose = false) {
  Rng rng(seed);
  std::unique_ptr<Graph> graph = randomGraph(rng);
  std::unique_ptr<Graph> original = graph->clone();
  std::unique_ptr<Graph> again = graph->clone();
  std::vector<SubgraphBackend> backends = randomBackends(rng);

  gResetViolations = 0;
  if (verbose) std::cout << "input graph:\n" << printGraph(*graph);
  StatusOr<PartitionReport> result = partitionGraph(*graph, backends);
  if (verbose) {
    std::cout << "after partitioning:\n" << printGraph(*graph);
    if (result.isOk()) std::cout << "report:\n" << reportToJson(*result) << "\n";
  }
  if (!result.isOk()) return "partitionGraph failed: " + result.status().message();
  const PartitionReport& report = *result;
  if (gResetViolations) return "a selector was reused without Reset()";

  VerifyOptions vo;
  vo.allowUnknownOps = true;
  if (Status s = verify(*graph, vo); !s) return "fused graph does not verify: " + s.message();
  if (!graph->topologicalOrder().isOk()) return "fused graph has a cycle";

  // Regions as masks over input node ids.
  const size_t n = original->nodeIdBound();
  std::vector<int> regionOf(n, -1);
  std::vector<uint64_t> masks;
  for (const RegionReport& r : report.regions) {
    uint64_t mask = 0;
    for (NodeId id : r.nodeIds) {
      if (id >= n || !original->node(id)) return "region names an unknown node";
      if (regionOf[id] >= 0) return "node " + std::to_string(id) + " is in two regions";
      regionOf[id] = r.id;
      mask |= uint64_t{1} << id;
    }
    masks.push_back(mask);
  }
  size_t inRegions = 0;
  for (int r : regionOf) inRegions += r >= 0;
  if (report.nodesTotal != original->numNodes()) return "nodes_total is wrong";
  if (report.nodesInRegions != inRegions) return "nodes_in_regions is wrong";
  if (report.rejected.size() + inRegions != report.nodesTotal)
    return "rejected list does not cover the nodes outside regions";
  for (const RejectedNode& r : report.rejected)
    if (r.reason.empty()) return "node '" + r.node + "' has no reason";

  // Brute-force reachability in the input graph (n <= 14).
  std::vector<uint64_t> succ(n, 0), reach(n, 0);
  for (Node* node : original->nodes())
    for (Value* out : node->outputs())
      for (const Use& use : out->uses()) succ[node->id()] |= uint64_t{1} << use.user->id();
  for (size_t round = 0; round < n; ++round)
    for (size_t i = 0; i < n; ++i) {
      uint64_t r = succ[i];
      for (size_t j = 0; j < n; ++j)
        if (succ[i] >> j & 1) r |= reach[j];
      reach[i] = r;
    }
  for (size_t k = 0; k < masks.size(); ++k) {
    uint64_t m = masks[k];
    if (!isConvex(reach, m)) return "region " + std::to_string(k) + " is not convex";
    // Weakly connected: flood over edges inside the mask.
    uint64_t seen = m & (~m + 1);
    for (size_t step = 0; step < n; ++step)
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
          if ((m >> i & 1) && (m >> j & 1) && (succ[i] >> j & 1) &&
              (((seen >> i) | (seen >> j)) & 1))
            seen |= (uint64_t{1} << i) | (uint64_t{1} << j);
    if (seen != m) return "region " + std::to_string(k) + " is not connected";
  }
  // The quotient by all regions together is acyclic: no region reaches
  // itself through nodes or regions outside it.
  std::vector<uint64_t> groupSucc;
  auto groupOf = [&](size_t i) { return regionOf[i] >= 0 ? masks[regionOf[i]] : uint64_t{1} << i; };
  for (size_t i = 0; i < n; ++i)
    if (original->node(static_cast<NodeId>(i))) {
      uint64_t g = groupOf(i);
      uint64_t frontier = 0;
      for (size_t j = 0; j < n; ++j)
        if ((g >> j & 1)) frontier |= succ[j];
      frontier &= ~g;
      uint64_t closure = frontier;
      for (size_t step = 0; step < n; ++step)
        for (size_t j = 0; j < n; ++j)
          if (closure >> j & 1) closure |= succ[j] | groupOf(j);
      if (closure & g) return "quotient graph has a cycle through node " + std::to_string(i);
    }

  std::string error;
  if (inlinedNodesOf(*graph, error) != nodesOf(*original))
    return "inlining the fused graph does not give back the input graph";
  if (!error.empty()) return error;
  if (names(graph->inputs()) != names(original->inputs())) return "graph inputs changed";
  if (names(graph->outputs()) != names(original->outputs())) return "graph outputs changed";

  // Determinism, on a copy with freshly made backends of the same seed.
  if (seed % 8 == 0) {
    Rng replay(seed);
    randomGraph(replay);
    std::vector<SubgraphBackend> same = randomBackends(replay);
    StatusOr<PartitionReport> second = partitionGraph(*again, same);
    if (!second.isOk()) return "second run failed";
    PartitionReport a = report, b = *second;
    a.partitionMs = b.partitionMs = 0;
    if (reportToJson(a) != reportToJson(b)) return "reports differ between identical runs";
    if (printGraph(*graph) != printGraph(*again)) return "graphs differ between identical runs";
  }
  return {};
}

uint64_t envNumber(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  return std::strtoull(text, nullptr, 0);
}

/// Random DAGs x random selectors against the brute-force oracles.
TEST(PartitionProperty, RandomGraphsAgainstOracle) {
  if (const char* replay = std::getenv("SUBGRAPH_PROPTEST_SEED"); replay && *replay) {
    uint64_t seed = std::strtoull(replay, nullptr, 0);
    std::cout << "replaying partition property case seed " << seed << "\n";
    std::string error = checkCase(seed, /*verbose=*/true);
    EXPECT_EQ(error, "") << "case seed " << seed;
    return;
  }
  const uint64_t cases = envNumber("SUBGRAPH_PROPTEST_CASES", 100000);
  const uint64_t base = envNumber("SUBGRAPH_PROPTEST_BASE_SEED", 0x5eed0000);
  std::cout << "partition property test: " << cases << " cases, seeds " << base << ".."
            << base + cases - 1 << "\n";
  size_t failures = 0;
  for (uint64_t i = 0; i < cases && failures < 5; ++i) {
    uint64_t seed = base + i;
    std::string error = checkCase(seed);
    if (error.empty()) continue;
    ++failures;
    ADD_FAILURE() << "case seed " << seed << ": " << error
                  << "\n  replay: SUBGRAPH_PROPTEST_SEED=" << seed
                  << " partition_tests --gtest_filter=PartitionProperty.*";
  }
}

/// The oracle itself must be able to fail: with n0 -> n1 -> n2 and
/// n0 -> n2, {n0, n2} is not convex while {n0, n1} and {n1, n2} are.
TEST(PartitionProperty, OracleDetectsNonConvexRegion) {
  std::vector<uint64_t> reach = {0b110, 0b100, 0};
  EXPECT_FALSE(isConvex(reach, 0b101));
  EXPECT_TRUE(isConvex(reach, 0b011));
  EXPECT_TRUE(isConvex(reach, 0b110));
}

}  // namespace
}  // namespace subgraph::partition
