//===- tests/fuzz/partition_fuzzer.cpp - Fuzzer-driven graphs and selectors -===//
//
// The partitioner property test (tests/subgraph/partition_property_test.cpp)
// draws graphs and selectors from a seeded PRNG; here the fuzzer's bytes
// are the randomness, so coverage feedback steers towards selector answers
// and graph shapes the PRNG rarely produces. The oracles are the same
// brute-force ones, on at most 14 nodes (bit masks):
//  * partitioning succeeds, the result verifies and is acyclic;
//  * every node is in at most one region, and the report accounts for each
//    node once;
//  * each region is convex and weakly connected in the input graph;
//  * inlining every fused node's body gives back the input graph's nodes;
//  * graph inputs and outputs are unchanged.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fuzz_harness.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/partition/partitioner.h"

namespace subgraph::fuzz {
namespace {

using namespace subgraph::partition;

/// The fuzzer's bytes as a stream of small numbers; zeros once exhausted,
/// so every input, however short, describes one complete case.
class ByteStream {
 public:
  ByteStream(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  /// A number in [0, n).
  size_t below(size_t n) { return n == 0 ? 0 : byte() % n; }
  bool percent(size_t p) { return below(100) < p; }
  uint64_t word() {
    uint64_t w = 0;
    for (int i = 0; i < 8; ++i) w = w << 8 | byte();
    return w;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A percentage that depends only on its arguments, so a selector answers
/// the same question the same way every time it is asked.
size_t roll(uint64_t seed, uint64_t what, uint64_t a, uint64_t b) {
  return static_cast<size_t>(mix(seed ^ mix(what ^ mix(a ^ mix(b)))) % 100);
}

std::string numbered(const char* prefix, size_t i) {
  std::string name(prefix);
  name += std::to_string(i);
  return name;
}

struct SelectorConfig {
  uint64_t seed = 0;
  size_t selectPct = 50, inputPct = 50, outputPct = 50, rejectPct = 0;
  size_t growBudget = 0;
  int filterMode = 0;
};

class BytesSelector : public SubgraphSelector {
 public:
  explicit BytesSelector(SelectorConfig config) : c_(config) {}
  Decision Select(const Node& n) override {
    grown_ = 1;
    return Decision::noIf(roll(c_.seed, 1, n.id(), 0) >= c_.selectPct, "fuzz no");
  }
  Decision SelectInput(const Node& n, const Node& p) override {
    return grow(roll(c_.seed, 2, n.id(), p.id()) < c_.inputPct);
  }
  Decision SelectOutput(const Node& n, const Node& c) override {
    return grow(roll(c_.seed, 3, n.id(), c.id()) < c_.outputPct);
  }
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override {
    std::vector<const Node*> kept;
    for (size_t i = 0; i < candidates.size(); ++i)
      if (c_.filterMode == 0 ||
          (c_.filterMode == 1 && roll(c_.seed, 4, candidates[i]->id(), 0) >= 30) ||
          (c_.filterMode == 2 && i == candidates.size() / 2))
        kept.push_back(candidates[i]);
    return kept;
  }
  void Reset() override { grown_ = 0; }

 private:
  Decision grow(bool yes) {
    if (!yes || (c_.growBudget && grown_ >= c_.growBudget)) return false;
    ++grown_;
    return true;
  }
  SelectorConfig c_;
  size_t grown_ = 0;
};

class BytesProperty : public SubgraphProperty {
 public:
  BytesProperty(std::string name, SelectorConfig config, PropertyOptions options)
      : name_(std::move(name)), config_(config) {
    setOptions(options);
  }
  std::string name() const override { return name_; }
  std::unique_ptr<SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<BytesSelector>(config_);
  }
  SubgraphNodeResult CreateSubgraphNode(std::shared_ptr<Graph> body,
                                        const RegionInfo& region) const override {
    if (roll(config_.seed, 5, region.nodes.front()->id(), region.nodes.size()) < config_.rejectPct)
      return SubgraphNodeResult::reject("fuzz rejection");
    return SubgraphProperty::CreateSubgraphNode(std::move(body), region);
  }

 private:
  std::string name_;
  SelectorConfig config_;
};

std::unique_ptr<Graph> buildGraph(ByteStream& in) {
  auto g = std::make_unique<Graph>("fuzz");
  std::vector<Value*> pool;
  size_t numInputs = 1 + in.below(2);
  for (size_t i = 0; i < numInputs; ++i)
    pool.push_back(g->addInput(numbered("in", i), TensorType(DataType::kFloat32, {2})));
  size_t numConsts = in.below(3);
  for (size_t i = 0; i < numConsts; ++i)
    pool.push_back(
        g->addInitializer(numbered("k", i), Tensor::splat(DataType::kFloat32, {2}, 1.0)));
  size_t numNodes = 1 + in.below(14);
  for (size_t i = 0; i < numNodes; ++i) {
    std::vector<Value*> inputs;
    size_t arity = 1 + in.below(3);
    for (size_t k = 0; k < arity; ++k) inputs.push_back(pool[in.below(pool.size())]);
    size_t outs = in.percent(20) ? 2 : 1;
    Node* n = g->addNode("p.Op", inputs, outs, {}, numbered("n", i));
    for (Value* v : n->outputs()) pool.push_back(v);
  }
  for (Value* v : pool)
    if (v->producer() && !v->hasUses()) g->addOutput(v);
  size_t extra = in.below(3);
  for (size_t i = 0; i < extra; ++i) {
    Value* v = pool[in.below(pool.size())];
    if (v->producer() || v->isGraphInput()) g->addOutput(v);
  }
  if (g->outputs().empty()) g->addOutput(pool.back());
  return g;
}

std::vector<SubgraphBackend> buildBackends(ByteStream& in) {
  std::vector<SubgraphBackend> backends;
  size_t numBackends = 1 + in.below(2);
  for (size_t b = 0; b < numBackends; ++b) {
    SubgraphBackend backend;
    backend.name = numbered("b", b);
    size_t numProps = 1 + in.below(2);
    for (size_t p = 0; p < numProps; ++p) {
      SelectorConfig c;
      c.seed = in.word();
      c.selectPct = in.below(101);
      c.inputPct = in.below(101);
      c.outputPct = in.below(101);
      c.growBudget = in.percent(30) ? 1 + in.below(4) : 0;
      c.filterMode = static_cast<int>(in.below(3));
      c.rejectPct = in.percent(80) ? 0 : in.below(60);
      PropertyOptions o;
      o.minRegionSize = 1 + in.below(3);
      o.mergeDuplicatedInputs = in.percent(70);
      o.inlineConstants = in.percent(50);
      o.filterSplit = in.percent(70) ? FilterSplit::kSplit : FilterSplit::kReject;
      backend.properties.push_back(std::make_unique<BytesProperty>(numbered("p", p), c, o));
    }
    backends.push_back(std::move(backend));
  }
  return backends;
}

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

/// The fused graph's nodes with each fused node replaced by its body.
std::multiset<std::string> inlinedNodesOf(const Graph& g) {
  std::multiset<std::string> out;
  for (Node* n : g.nodes()) {
    const Attribute* body = n->attr("body");
    if (!body || body->kind() != AttrKind::kGraph) {
      out.insert(describe(*n, {}));
      continue;
    }
    const Graph& b = *body->asGraph();
    if (b.inputs().size() != n->numInputs() || b.outputs().size() != n->numOutputs())
      invariantViolated("fused node arity differs from its body");
    std::map<const Value*, std::string> outer;
    for (size_t i = 0; i < b.inputs().size(); ++i) outer[b.inputs()[i]] = n->input(i)->name();
    for (Node* inner : b.nodes()) out.insert(describe(*inner, outer));
  }
  return out;
}

std::vector<std::string> namesOf(std::span<Value* const> values) {
  std::vector<std::string> out;
  for (Value* v : values) out.push_back(v->name());
  return out;
}

}  // namespace

int fuzzPartition(const uint8_t* data, size_t size) {
  ByteStream in(data, size);
  std::unique_ptr<Graph> graph = buildGraph(in);
  std::unique_ptr<Graph> original = graph->clone();
  std::vector<SubgraphBackend> backends = buildBackends(in);
  PartitionOptions options;
  options.reportContested = in.percent(50);
  StatusOr<PartitionReport> result = partitionGraph(*graph, backends, options);
  if (!result.isOk()) invariantViolated("partitionGraph failed: " + result.status().message());
  const PartitionReport& report = *result;

  VerifyOptions vo;
  vo.allowUnknownOps = true;
  if (Status s = verify(*graph, vo); !s) invariantViolated("fused graph: " + s.message());
  if (!graph->topologicalOrder().isOk()) invariantViolated("fused graph has a cycle");

  const size_t n = original->nodeIdBound();
  std::vector<int> regionOf(n, -1);
  std::vector<uint64_t> masks;
  for (const RegionReport& r : report.regions) {
    uint64_t mask = 0;
    for (NodeId id : r.nodeIds) {
      if (id >= n || !original->node(id)) invariantViolated("region names an unknown node");
      if (regionOf[id] >= 0) invariantViolated("a node is in two regions");
      regionOf[id] = r.id;
      mask |= uint64_t{1} << id;
    }
    masks.push_back(mask);
  }
  size_t inRegions = 0;
  for (int r : regionOf) inRegions += r >= 0;
  if (report.nodesTotal != original->numNodes() || report.nodesInRegions != inRegions ||
      report.rejected.size() + inRegions != report.nodesTotal)
    invariantViolated("report does not account for every node once");

  // Reachability in the input graph by fixpoint over bit masks (n <= 14).
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
  for (uint64_t m : masks) {
    uint64_t from = 0, to = 0;
    for (size_t i = 0; i < n; ++i) {
      if (m >> i & 1) from |= reach[i];
      if (reach[i] & m) to |= uint64_t{1} << i;
    }
    if (from & to & ~m) invariantViolated("a region is not convex");
    uint64_t seen = m & (~m + 1);
    for (size_t step = 0; step < n; ++step)
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
          if ((m >> i & 1) && (m >> j & 1) && (succ[i] >> j & 1) &&
              (((seen >> i) | (seen >> j)) & 1))
            seen |= (uint64_t{1} << i) | (uint64_t{1} << j);
    if (seen != m) invariantViolated("a region is not connected");
  }
  if (inlinedNodesOf(*graph) != nodesOf(*original))
    invariantViolated("inlining the fused graph does not give back the input graph");
  if (namesOf(graph->inputs()) != namesOf(original->inputs()) ||
      namesOf(graph->outputs()) != namesOf(original->outputs()))
    invariantViolated("graph inputs or outputs changed");
  return 0;
}

}  // namespace subgraph::fuzz
