//===- core/zoo/synthetic.cpp - Synthetic graphs for scaling tests ---------===//
//
// Long chains of small blocks, with a chosen share of `Sin` nodes that no
// shipped backend claims, to measure how partitioning scales from 10^3 to
// 10^7 nodes. Building must stay linear and cheap, so this file uses the raw
// Graph API: op keys are interned once, every value gets its type and a
// unique name ("b12.conv", "s7") at creation, and no inference or
// name-uniqueness search runs. Ops take no attributes (1x1 convs, default
// axes), which keeps a node to a few hundred bytes.
//
// Sin placement: the Sin count is fixed first, round(nodes * fraction), then
// spread over the "after node i" slots of the regular nodes by selection
// sampling (Knuth's Algorithm S), which picks an exact number of slots
// uniformly at random in one pass. A Sin after a Conv separates it from its
// BatchNormalization, one after a MatMul from its bias Add, and so on: each
// splits a would-be fusion region.
//
//===----------------------------------------------------------------------===//
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "model_builder.h"
#include "subgraph/zoo/random.h"

namespace subgraph::zoo {
namespace {

/// Emits the chain: regular nodes block by block, each followed by the Sin
/// nodes its slot drew.
class SyntheticBuilder {
 public:
  SyntheticBuilder(Graph& graph, const SyntheticOptions& options, TensorType type)
      : graph_(graph), type_(std::move(type)), rng_(streamFor(options.model.seed, "synthetic")) {
    auto total = options.nodes;
    int64_t sins = std::llround(static_cast<double>(total) * options.unsupportedFraction);
    regularLeft_ = total - sins;
    // With more Sin than regular nodes, every slot gets `base` and some one
    // more; with fewer, base is 0 and `extraLeft_` slots get one.
    base_ = regularLeft_ > 0 ? sins / regularLeft_ : sins;
    extraLeft_ = regularLeft_ > 0 ? sins % regularLeft_ : 0;
    sin_ = OpRegistry::global().intern("", "Sin");
  }

  int64_t regularNodes() const { return regularLeft_; }

  /// Emits `sins` Sin nodes for a graph without regular nodes.
  Value* sinChain(Value* x) { return appendSins(x, base_); }

  /// Adds a node of `op` reading `inputs`; its output is `name`, typed
  /// like every value of the graph. Then appends the Sin nodes drawn for
  /// this slot and returns the last value.
  Value* emit(const OpKey* op, std::string name, std::vector<Value*> inputs) {
    Value* out = graph_.createValue(name, type_);
    graph_.addNode(op, std::move(inputs), {out}, {}, std::move(name));
    int64_t sins = base_;
    if (extraLeft_ > 0 &&
        static_cast<int64_t>(rng_.below(static_cast<uint64_t>(regularLeft_))) < extraLeft_) {
      ++sins;
      --extraLeft_;
    }
    --regularLeft_;
    return appendSins(out, sins);
  }

 private:
  Value* appendSins(Value* x, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      std::string name = "s" + std::to_string(sinIndex_++);
      Value* out = graph_.createValue(name, type_);
      graph_.addNode(sin_, {x}, {out}, {}, std::move(name));
      x = out;
    }
    return x;
  }

  Graph& graph_;
  TensorType type_;
  SplitMix64 rng_;
  const OpKey* sin_ = nullptr;
  int64_t regularLeft_ = 0;
  int64_t base_ = 0;
  int64_t extraLeft_ = 0;
  int64_t sinIndex_ = 0;
};

const OpKey* key(std::string_view op) { return OpRegistry::global().intern("", op); }

// Conv(1x1) -> BatchNormalization -> Relu -> Add(skip), truncated to the
// nodes still wanted.
Value* residualChain(detail::ModelBuilder& b, SyntheticBuilder& chain, Value* x) {
  constexpr int64_t kChannels = 4;
  Value* w = b.heUniform("conv.weight", {kChannels, kChannels, 1, 1}, kChannels, 1.0);
  Value* scale = b.uniform("bn.weight", {kChannels}, 0.9, 1.1);
  Value* bias = b.uniform("bn.bias", {kChannels}, -0.1, 0.1);
  Value* mean = b.uniform("bn.running_mean", {kChannels}, -0.1, 0.1);
  Value* var = b.uniform("bn.running_var", {kChannels}, 0.9, 1.1);
  const OpKey *conv = key("Conv"), *bn = key("BatchNormalization"), *relu = key("Relu"),
              *add = key("Add");
  for (int64_t block = 0; chain.regularNodes() > 0; ++block) {
    std::string p = "b" + std::to_string(block);
    Value* skip = x;
    x = chain.emit(conv, p + ".conv", {x, w});
    if (chain.regularNodes() == 0) break;
    x = chain.emit(bn, p + ".bn", {x, scale, bias, mean, var});
    if (chain.regularNodes() == 0) break;
    x = chain.emit(relu, p + ".relu", {x});
    if (chain.regularNodes() == 0) break;
    x = chain.emit(add, p + ".add", {x, skip});
  }
  return x;
}

// MatMul -> Add(bias) -> Softmax -> MatMul -> Add(residual) ->
// LayerNormalization, truncated to the nodes still wanted.
Value* transformerChain(detail::ModelBuilder& b, SyntheticBuilder& chain, Value* x,
                        int64_t hidden) {
  Value* w1 = b.heUniform("mm1.weight", {hidden, hidden}, hidden, 1.0);
  Value* bias = b.uniform("mm1.bias", {hidden}, -0.1, 0.1);
  Value* w2 = b.heUniform("mm2.weight", {hidden, hidden}, hidden, 1.0);
  Value* gamma = b.uniform("ln.weight", {hidden}, 0.9, 1.1);
  Value* beta = b.uniform("ln.bias", {hidden}, -0.1, 0.1);
  const OpKey *matmul = key("MatMul"), *add = key("Add"), *softmax = key("Softmax"),
              *layerNorm = key("LayerNormalization");
  for (int64_t block = 0; chain.regularNodes() > 0; ++block) {
    std::string p = "b" + std::to_string(block);
    Value* residual = x;
    x = chain.emit(matmul, p + ".mm1", {x, w1});
    if (chain.regularNodes() == 0) break;
    x = chain.emit(add, p + ".bias", {x, bias});
    if (chain.regularNodes() == 0) break;
    x = chain.emit(softmax, p + ".softmax", {x});
    if (chain.regularNodes() == 0) break;
    x = chain.emit(matmul, p + ".mm2", {x, w2});
    if (chain.regularNodes() == 0) break;
    x = chain.emit(add, p + ".res", {x, residual});
    if (chain.regularNodes() == 0) break;
    x = chain.emit(layerNorm, p + ".ln", {x, gamma, beta});
  }
  return x;
}

}  // namespace

StatusOr<SyntheticShape> parseSyntheticShape(std::string_view name) {
  if (name == "residual") return SyntheticShape::kResidual;
  if (name == "transformer") return SyntheticShape::kTransformer;
  return Status::invalid("unknown synthetic shape '" + std::string(name) +
                         "'; expected residual or transformer");
}

StatusOr<std::unique_ptr<Graph>> buildSynthetic(const SyntheticOptions& options) {
  if (options.nodes < 1 || options.nodes > kMaxSyntheticNodes)
    return Status(StatusCode::kLimitExceeded,
                  "synthetic: node count " + std::to_string(options.nodes) + " is outside [1, " +
                      std::to_string(kMaxSyntheticNodes) + "]");
  if (!(options.unsupportedFraction >= 0.0 && options.unsupportedFraction <= 1.0))
    return Status::invalid(fmt::format("synthetic: unsupported fraction {} is outside [0, 1]",
                                       options.unsupportedFraction));
  if (options.model.batch < 0)
    return Status::invalid("synthetic: batch must be positive (or 0 for a symbolic batch)");

  bool residual = options.shape == SyntheticShape::kResidual;
  detail::ModelBuilder b(residual ? "synthetic_residual" : "synthetic_transformer", options.model);
  constexpr int64_t kSequence = 8, kHidden = 16;
  std::vector<int64_t> rest =
      residual ? std::vector<int64_t>{4, 8, 8} : std::vector<int64_t>{kSequence, kHidden};
  Value* x = b.addImageLikeInput(rest);
  SyntheticBuilder chain(b.graph(), options, x->type());
  if (chain.regularNodes() == 0)
    x = chain.sinChain(x);
  else if (residual)
    x = residualChain(b, chain, x);
  else
    x = transformerChain(b, chain, x, kHidden);
  return b.finish(x, rest);
}

}  // namespace subgraph::zoo
