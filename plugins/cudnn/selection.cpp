//===- plugins/cudnn/selection.cpp - The cuDNN backend's fusion properties ===//
//
// Hand-written selectors (MXNet semantics) rather than declarative patterns,
// because the conv chain has optional steps in the middle (a Conv may be
// followed directly by Add or Relu), which a pattern with a skipped
// optional node cannot connect through. Each selector grows a linear chain
// from its seed: it only extends the current tail, only when the tail's
// output has that one reader, and only in the order of its stages. Each
// declares its seed ops (Conv; MatMul and Gemm; the element-wise ops), so
// the host offers it only those nodes.
//
//===----------------------------------------------------------------------===//
#include "selection.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace subgraph::cudnn {
namespace {

using sdk::Decision;
using sdk::NodeView;

const std::set<std::string> kActivations = {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh"};
const std::set<std::string> kElementwise = {"Add",  "Sub",       "Mul",  "Div",     "Max",  "Min",
                                            "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "Abs",
                                            "Neg",  "Exp",       "Log",  "Sqrt"};
/// Longest element-wise chain one region takes.
constexpr int kMaxEltwiseChain = 8;

std::string describe(const NodeView& n) {
  std::string name = n.name();
  return n.opType() + (name.empty() ? "" : " '" + name + "'");
}

bool isOnnx(const NodeView& n, const std::set<std::string>& ops) {
  return n.domain().empty() && ops.count(n.opType()) > 0;
}

/// Float32 with fully static shapes on output 0: what every plan needs.
Decision staticFloat(const NodeView& n) {
  sdk::ValueView y = n.output(0);
  if (!y || y.dtype() != sdk::DataType::kFloat32)
    return Decision::no("cudnn: " + describe(n) + " is not float32");
  if (!y.hasStaticShape()) return Decision::no("cudnn: " + describe(n) + " has a dynamic shape");
  return Decision::yes();
}

/// The tail's output must feed only `consumer`, or fusing would hide a
/// value someone else reads.
Decision singleUse(const NodeView& tail) {
  sdk::ValueView y = tail.output(0);
  if (y.consumers().size() != 1 || y.isGraphOutput())
    return Decision::no("cudnn: " + describe(tail) + "'s output is read outside the chain");
  return Decision::yes();
}

/// A linear chain grown from a seed in stage order.
class ChainSelector : public sdk::SubgraphSelector {
 public:
  ChainSelector(EngineCheck check, SelectionOptions options)
      : check_(std::move(check)), options_(options) {}

  Decision SelectOutput(const NodeView& node, const NodeView& consumer) override {
    if (chain_.empty() || !(node == chain_.back())) return Decision::no();
    if (Decision d = singleUse(node); !d) return d;
    if (Decision d = staticFloat(consumer); !d) return d;
    int next = stageOf(consumer);
    if (next <= stage_) return Decision::no();
    stage_ = next;
    chain_.push_back(consumer);
    return Decision::yes();
  }
  /// Shrinks the chain to what cuDNN has an engine for (trimToEngine).
  std::vector<NodeView> Filter(const std::vector<NodeView>& candidates) override {
    if (!check_ || chain_.size() < 2) return candidates;
    // The chain in stage order, as far as the partitioner kept it; if it
    // kept something else, CreateSubgraphNode decides on the whole.
    std::vector<NodeView> chain;
    for (const NodeView& n : chain_) {
      if (std::find(candidates.begin(), candidates.end(), n) == candidates.end()) break;
      chain.push_back(n);
    }
    if (chain.size() != candidates.size()) return candidates;
    return trimToEngine(std::move(chain), check_);
  }
  void Reset() override {
    chain_.clear();
    stage_ = 0;
  }

 protected:
  /// The stage `consumer` would take (> the current stage to be accepted),
  /// or 0 if it cannot extend the chain.
  virtual int stageOf(const NodeView& consumer) = 0;
  Decision seed(const NodeView& node, Decision d) {
    if (d) {
      chain_ = {node};
      stage_ = 1;
    }
    return d;
  }
  EngineCheck check_;
  SelectionOptions options_;
  int stage_ = 0;
  /// The chain grown so far, seed first; its back is the tail that grows.
  std::vector<NodeView> chain_;
};

class ConvSelector final : public ChainSelector {
 public:
  using ChainSelector::ChainSelector;
  /// What Select takes; it says a reasonless no to every other op.
  static std::vector<std::string> seeds() { return {"Conv"}; }
  Decision Select(const NodeView& n) override {
    if (!n.is("Conv")) return Decision::no();
    if (!n.input(1) || !n.input(1).isConstant())
      return Decision::no("cudnn: " + describe(n) + " has non-constant weights");
    if (n.input(0).dims().size() != 4)
      return Decision::no("cudnn: " + describe(n) + " is not a 2-D convolution");
    return seed(n, staticFloat(n));
  }

 private:
  int stageOf(const NodeView& c) override {
    // Folding a BatchNormalization is a weight transform, not a fusion: it
    // happens with fusion off too.
    if (c.is("BatchNormalization")) return 2;
    if (!options_.fuse) return 0;
    if (c.is("Add")) return 3;
    if (isOnnx(c, kActivations)) return 4;
    return 0;
  }
};

class MatMulSelector final : public ChainSelector {
 public:
  using ChainSelector::ChainSelector;
  static std::vector<std::string> seeds() { return {"MatMul", "Gemm"}; }
  Decision Select(const NodeView& n) override {
    if (!n.is("MatMul") && !n.is("Gemm")) return Decision::no();
    if (!n.input(1) || !n.input(1).isConstant())
      return Decision::no("cudnn: " + describe(n) + " has a non-constant right operand");
    return seed(n, staticFloat(n));
  }

 private:
  int stageOf(const NodeView& c) override {
    if (!options_.fuse) return 0;
    if (c.is("Add")) {
      // The bias: one operand must be constant.
      for (size_t i = 0; i < c.numInputs(); ++i)
        if (c.input(i) && c.input(i).isConstant()) return 2;
      return 0;
    }
    return isOnnx(c, kActivations) ? 3 : 0;
  }
};

class EltwiseSelector final : public ChainSelector {
 public:
  using ChainSelector::ChainSelector;
  static std::vector<std::string> seeds() { return {kElementwise.begin(), kElementwise.end()}; }
  Decision Select(const NodeView& n) override {
    if (!isOnnx(n, kElementwise)) return Decision::no();
    if (n.output(0).dims().size() > 4)
      return Decision::no("cudnn: " + describe(n) + " has rank above 4");
    return seed(n, staticFloat(n));
  }

 private:
  int stageOf(const NodeView& c) override {
    // Stages only count up here: any element-wise op extends the chain.
    if (!options_.fuse || !isOnnx(c, kElementwise) || stage_ >= kMaxEltwiseChain) return 0;
    return stage_ + 1;
  }
};

/// A property whose regions must plan (and pass the engine check).
class PlannedProperty : public sdk::SubgraphProperty {
 public:
  PlannedProperty(std::string name, EngineCheck check, uint32_t minRegionSize = 1)
      : SubgraphProperty(std::move(name), {.inferenceOnly = true, .minRegionSize = minRegionSize}),
        check_(std::move(check)) {}

  sdk::FusedNode CreateSubgraphNode(const sdk::GraphView& body, int) const override {
    PlanResult planned = buildRegionPlan(body);
    if (!planned.plan) return sdk::FusedNode::reject(planned.reason);
    if (check_) {
      if (std::string why = check_(*planned.plan); !why.empty()) return sdk::FusedNode::reject(why);
    }
    return sdk::FusedNode::accept();
  }

 protected:
  EngineCheck check_;
};

template <typename S>
class ChainProperty final : public PlannedProperty {
 public:
  ChainProperty(std::string name, EngineCheck check, SelectionOptions options)
      : PlannedProperty(std::move(name), std::move(check)), options_(options) {}
  std::unique_ptr<sdk::SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<S>(check_, options_);
  }
  /// The selector's seed ops: a pass over the graph costs its Convs (or
  /// matmuls, or element-wise ops), not every node.
  std::vector<std::string> SeedOpTypes() const override { return S::seeds(); }

 private:
  SelectionOptions options_;
};

/// `check`, asked once per plan key (the selectors' trimming and
/// CreateSubgraphNode ask about the same region; ResNet-50 repeats shapes).
EngineCheck memoized(EngineCheck check, Precision precision) {
  if (!check) return check;
  struct Cache {
    std::mutex mutex;
    std::map<std::string, std::string> answers;
  };
  auto cache = std::make_shared<Cache>();
  return [check = std::move(check), cache, precision](const RegionPlan& plan) {
    // The precision is part of the question: fp16 and fp32 have different engines.
    const std::string key = std::string(precisionName(precision)) + ' ' + planKey(plan);
    {
      std::lock_guard<std::mutex> lock(cache->mutex);
      if (auto it = cache->answers.find(key); it != cache->answers.end()) return it->second;
    }
    std::string answer = check(plan);
    std::lock_guard<std::mutex> lock(cache->mutex);
    cache->answers.emplace(key, answer);
    return answer;
  };
}

/// Single pooling nodes: a declarative one-node pattern is enough.
class PoolProperty final : public PlannedProperty {
 public:
  explicit PoolProperty(EngineCheck check) : PlannedProperty("pool", std::move(check)) {
    setPattern(sdk::Pattern::chain("pool", {sdk::OpPattern("MaxPool|AveragePool|GlobalAveragePool")
                                                .staticShapes()
                                                .where([](const NodeView& n) -> Decision {
                                                  if (n.input(0).dims().size() != 4)
                                                    return Decision::no("cudnn: " + describe(n) +
                                                                        " is not 2-D pooling");
                                                  return staticFloat(n);
                                                })}));
  }
};

}  // namespace

SelectionOptions selectionOptionsFor(const sdk::KernelContext& session) {
  SelectionOptions options;
  options.fuse = session.option("fusion", "on") != "off";
  options.precision = parsePrecision(session.option("precision", session.precision));
  return options;
}

std::vector<NodeView> trimToEngine(std::vector<NodeView> chain, const EngineCheck& check) {
  PlanResult whole = buildChainPlan(chain);
  if (!check || !whole.plan || check(*whole.plan).empty()) return chain;
  std::vector<NodeView> prefix = chain;
  while (prefix.size() > 1) {
    prefix.pop_back();
    PlanResult p = buildChainPlan(prefix);
    if (p.plan && check(*p.plan).empty()) return prefix;
  }
  return chain;
}

std::vector<std::unique_ptr<sdk::SubgraphProperty>> cudnnProperties(EngineCheck check,
                                                                    SelectionOptions options) {
  check = memoized(std::move(check), options.precision);
  std::vector<std::unique_ptr<sdk::SubgraphProperty>> out;
  out.push_back(std::make_unique<ChainProperty<ConvSelector>>("conv_fused", check, options));
  out.push_back(std::make_unique<ChainProperty<MatMulSelector>>("matmul_fused", check, options));
  out.push_back(std::make_unique<PoolProperty>(check));
  out.push_back(std::make_unique<ChainProperty<EltwiseSelector>>("eltwise", check, options));
  return out;
}

}  // namespace subgraph::cudnn
