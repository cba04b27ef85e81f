//===- plugins/cudnn/selection.cpp - The cuDNN backend's fusion properties ===//
//
// Hand-written selectors (MXNet semantics) rather than declarative patterns,
// because the conv chain has optional steps in the middle (a Conv may be
// followed directly by Add or Relu), which a pattern with a skipped
// optional node cannot connect through. Each selector grows a linear chain
// from its seed: it only extends the current tail, only when the tail's
// output has that one reader, and only in the order of its stages.
//
//===----------------------------------------------------------------------===//
#include "selection.h"

#include <memory>
#include <optional>
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
  Decision SelectOutput(const NodeView& node, const NodeView& consumer) override {
    if (!tail_ || !(node == *tail_)) return Decision::no();
    if (Decision d = singleUse(node); !d) return d;
    if (Decision d = staticFloat(consumer); !d) return d;
    int next = stageOf(consumer);
    if (next <= stage_) return Decision::no();
    stage_ = next;
    tail_ = consumer;
    return Decision::yes();
  }
  void Reset() override {
    tail_.reset();
    stage_ = 0;
  }

 protected:
  /// The stage `consumer` would take (> the current stage to be accepted),
  /// or 0 if it cannot extend the chain.
  virtual int stageOf(const NodeView& consumer) = 0;
  Decision seed(const NodeView& node, Decision d) {
    if (d) {
      tail_ = node;
      stage_ = 1;
    }
    return d;
  }
  int stage_ = 0;
  std::optional<NodeView> tail_;
};

class ConvSelector final : public ChainSelector {
 public:
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
    if (c.is("BatchNormalization")) return 2;
    if (c.is("Add")) return 3;
    if (isOnnx(c, kActivations)) return 4;
    return 0;
  }
};

class MatMulSelector final : public ChainSelector {
 public:
  Decision Select(const NodeView& n) override {
    if (!n.is("MatMul") && !n.is("Gemm")) return Decision::no();
    if (!n.input(1) || !n.input(1).isConstant())
      return Decision::no("cudnn: " + describe(n) + " has a non-constant right operand");
    return seed(n, staticFloat(n));
  }

 private:
  int stageOf(const NodeView& c) override {
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
  Decision Select(const NodeView& n) override {
    if (!isOnnx(n, kElementwise)) return Decision::no();
    if (n.output(0).dims().size() > 4)
      return Decision::no("cudnn: " + describe(n) + " has rank above 4");
    return seed(n, staticFloat(n));
  }

 private:
  int stageOf(const NodeView& c) override {
    // Stages only count up here: any element-wise op extends the chain.
    if (!isOnnx(c, kElementwise) || stage_ >= kMaxEltwiseChain) return 0;
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

 private:
  EngineCheck check_;
};

template <typename S>
class ChainProperty final : public PlannedProperty {
 public:
  using PlannedProperty::PlannedProperty;
  std::unique_ptr<sdk::SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<S>();
  }
};

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

void addCudnnProperties(sdk::Plugin& plugin, EngineCheck check) {
  plugin.addProperty(std::make_unique<ChainProperty<ConvSelector>>("conv_fused", check));
  plugin.addProperty(std::make_unique<ChainProperty<MatMulSelector>>("matmul_fused", check));
  plugin.addProperty(std::make_unique<PoolProperty>(check));
  plugin.addProperty(std::make_unique<ChainProperty<EltwiseSelector>>("eltwise", check));
}

}  // namespace subgraph::cudnn
