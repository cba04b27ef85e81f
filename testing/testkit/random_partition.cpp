//===- testing/testkit/random_partition.cpp - Random DAGs and selectors ---===//
//
// See random_partition.h. Every choice goes through the RandomSource, in a
// fixed order, so a seed (or a fuzzer input) names exactly one case.
//
//===----------------------------------------------------------------------===//
#include "testkit/random_partition.h"

#include <algorithm>

namespace subgraph::testkit {

using partition::Decision;

Decision RandomSelector::Select(const Node& n) {
  if (used_ && c_.resetViolations) ++*c_.resetViolations;
  used_ = true;
  grown_ = 1;
  return Decision::noIf(roll(c_.seed, 1, n.id(), 0) >= c_.selectPct, "random no");
}

Decision RandomSelector::SelectInput(const Node& n, const Node& p) {
  return grow(roll(c_.seed, 2, n.id(), p.id()) < c_.inputPct);
}

Decision RandomSelector::SelectOutput(const Node& n, const Node& c) {
  return grow(roll(c_.seed, 3, n.id(), c.id()) < c_.outputPct);
}

std::vector<const Node*> RandomSelector::Filter(std::span<const Node* const> candidates) {
  std::vector<const Node*> kept;
  for (size_t i = 0; i < candidates.size(); ++i) {
    bool keep = c_.filterMode == 0 ||
                (c_.filterMode == 1 && roll(c_.seed, 4, candidates[i]->id(), 0) >= 30) ||
                (c_.filterMode == 2 && i == candidates.size() / 2);
    if (keep) kept.push_back(candidates[i]);
  }
  return kept;
}

void RandomSelector::Reset() {
  used_ = false;
  grown_ = 0;
}

Decision RandomSelector::grow(bool yes) {
  if (!yes || (c_.growBudget && grown_ >= c_.growBudget)) return false;
  ++grown_;
  return true;
}

RandomProperty::RandomProperty(std::string name, RandomSelectorConfig config,
                               partition::PropertyOptions options)
    : name_(std::move(name)), config_(config) {
  setOptions(options);
}

std::unique_ptr<partition::SubgraphSelector> RandomProperty::CreateSubgraphSelector() const {
  return std::make_unique<RandomSelector>(config_);
}

partition::SubgraphNodeResult RandomProperty::CreateSubgraphNode(
    std::shared_ptr<Graph> body, const partition::RegionInfo& region) const {
  if (roll(config_.seed, 5, region.nodes.front()->id(), region.nodes.size()) < config_.rejectPct)
    return partition::SubgraphNodeResult::reject("random rejection");
  return SubgraphProperty::CreateSubgraphNode(std::move(body), region);
}

std::unique_ptr<Graph> randomStructuralGraph(RandomSource& rng) {
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

std::vector<partition::SubgraphBackend> randomBackends(RandomSource& rng, int* resetViolations) {
  std::vector<partition::SubgraphBackend> backends;
  size_t numBackends = 1 + rng.below(2);
  for (size_t b = 0; b < numBackends; ++b) {
    partition::SubgraphBackend backend;
    backend.name = numbered("b", b);
    size_t numProps = 1 + rng.below(2);
    for (size_t p = 0; p < numProps; ++p) {
      RandomSelectorConfig c;
      c.seed = rng.next();
      c.selectPct = rng.below(101);
      c.inputPct = rng.below(101);
      c.outputPct = rng.below(101);
      c.growBudget = rng.percent(30) ? 1 + rng.below(4) : 0;
      c.filterMode = rng.percent(70) ? 0 : static_cast<int>(1 + rng.below(2));
      c.rejectPct = rng.percent(80) ? 0 : rng.below(60);
      c.resetViolations = resetViolations;
      partition::PropertyOptions o;
      o.minRegionSize = 1 + rng.below(3);
      o.mergeDuplicatedInputs = rng.percent(70);
      o.inlineConstants = rng.percent(50);
      o.filterSplit =
          rng.percent(70) ? partition::FilterSplit::kSplit : partition::FilterSplit::kReject;
      backend.properties.push_back(std::make_unique<RandomProperty>(numbered("p", p), c, o));
    }
    backends.push_back(std::move(backend));
  }
  return backends;
}

}  // namespace subgraph::testkit
