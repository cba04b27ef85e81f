//===- core/zoo/bert.cpp - BERT-base encoder ------------------------------===//
//
// The encoder stack of BERT as HuggingFace's BertModel exports it, minus the
// embedding layer and attention mask: the graph starts from the summed
// embeddings, f32[N, S, hidden]. Layer i's nodes are named after the module
// path ("encoder.layer.3.attention.self.query/MatMul"), its weights like the
// PyTorch state dict ("encoder.layer.3.attention.self.query.weight"), except
// that linear weights are stored [in, out] for MatMul, as exporters do.
//
// Weights follow BERT's initialization: a spread of 0.02 (here uniform, see
// random.h for why not normal), LayerNorm scale ~1 and bias ~0.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <string>

#include "model_builder.h"

namespace subgraph::zoo {
namespace {

using detail::ModelBuilder;

/// Shared constants of the graph: the reshape targets and scalars that every
/// layer uses, created once.
struct BertConstants {
  Value* splitHeadsShape;  ///< [0, 0, heads, headSize]: 0 copies N and S.
  Value* mergeHeadsShape;  ///< [0, 0, hidden]
  Value* scoreScale;       ///< sqrt(headSize), the attention-score divisor.
  Value* sqrt2;            ///< GELU: x / sqrt(2)
  Value* one;
  Value* half;
};

class BertBuilder {
 public:
  BertBuilder(ModelBuilder& b, const BertOptions& bert) : b_(b), bert_(bert) {
    int64_t headSize = bert.hidden / bert.heads;
    auto scalar = [&](const char* name, double v) {
      return b.constant(name, Tensor::splat(DataType::kFloat32, {}, v));
    };
    c_.splitHeadsShape =
        b.constant("attention.split_heads_shape",
                   Tensor::fromVector<int64_t>(DataType::kInt64, {4},
                                               std::vector<int64_t>{0, 0, bert.heads, headSize}));
    c_.mergeHeadsShape =
        b.constant("attention.merge_heads_shape",
                   Tensor::fromVector<int64_t>(DataType::kInt64, {3},
                                               std::vector<int64_t>{0, 0, bert.hidden}));
    c_.scoreScale = scalar("attention.score_scale", std::sqrt(static_cast<double>(headSize)));
    c_.sqrt2 = scalar("gelu.sqrt2", std::sqrt(2.0));
    c_.one = scalar("gelu.one", 1.0);
    c_.half = scalar("gelu.half", 0.5);
  }

  /// One encoder layer; `outputName` names its final value (for the last
  /// layer, "output").
  Value* layer(int64_t index, Value* x, const std::string& outputName) {
    std::string p = "encoder.layer." + std::to_string(index);
    std::string self = p + ".attention.self";
    Value* q =
        heads(self, "q", dense(self + ".query", x, bert_.hidden, bert_.hidden), {0, 2, 1, 3});
    // K goes straight to [N, heads, headSize, S] so Q x K needs no extra
    // transpose, as exporters emit it.
    Value* k = heads(self, "k", dense(self + ".key", x, bert_.hidden, bert_.hidden), {0, 2, 3, 1});
    Value* v =
        heads(self, "v", dense(self + ".value", x, bert_.hidden, bert_.hidden), {0, 2, 1, 3});
    Value* scores = b_.op("MatMul", self + "/MatMul_qk", {q, k});
    scores = b_.op("Div", self + "/Div", {scores, c_.scoreScale});
    Value* probs = b_.op("Softmax", self + "/Softmax", {scores}, {Attribute("axis", int64_t{-1})});
    Value* context = b_.op("MatMul", self + "/MatMul_pv", {probs, v});
    context = b_.op("Transpose", self + "/Transpose_out", {context},
                    {Attribute("perm", std::vector<int64_t>{0, 2, 1, 3})});
    context = b_.op("Reshape", self + "/Reshape_out", {context, c_.mergeHeadsShape});

    std::string attnOut = p + ".attention.output";
    Value* h = dense(attnOut + ".dense", context, bert_.hidden, bert_.hidden);
    h = b_.op("Add", attnOut + "/Add", {h, x});
    h = layerNorm(attnOut + ".LayerNorm", h);

    Value* f = dense(p + ".intermediate.dense", h, bert_.hidden, bert_.intermediate);
    f = gelu(p + ".intermediate.gelu", f);
    f = dense(p + ".output.dense", f, bert_.intermediate, bert_.hidden);
    f = b_.op("Add", p + ".output/Add", {f, h});
    return layerNorm(p + ".output.LayerNorm", f, outputName);
  }

 private:
  // MatMul by a [in, out] weight, then Add of the bias.
  Value* dense(const std::string& name, Value* x, int64_t in, int64_t out) {
    const double bound = 0.02 * std::sqrt(3.0);  // uniform with std 0.02
    Value* w = b_.uniform(name + ".weight", {in, out}, -bound, bound);
    Value* bias = b_.uniform(name + ".bias", {out}, -0.02, 0.02);
    Value* y = b_.op("MatMul", name + "/MatMul", {x, w});
    return b_.op("Add", name + "/Add", {y, bias});
  }

  // [N, S, hidden] -> [N, S, heads, headSize] -> transposed by `perm`.
  Value* heads(const std::string& self, const std::string& which, Value* x,
               std::vector<int64_t> perm) {
    x = b_.op("Reshape", self + "/Reshape_" + which, {x, c_.splitHeadsShape});
    return b_.op("Transpose", self + "/Transpose_" + which, {x},
                 {Attribute("perm", std::move(perm))});
  }

  Value* layerNorm(const std::string& name, Value* x, const std::string& outputName = {}) {
    Value* scale = b_.uniform(name + ".weight", {bert_.hidden}, 0.95, 1.05);
    Value* bias = b_.uniform(name + ".bias", {bert_.hidden}, -0.02, 0.02);
    return b_.op("LayerNormalization", name, {x, scale, bias},
                 {Attribute("axis", int64_t{-1}), Attribute("epsilon", 1e-12f)}, outputName);
  }

  // x * 0.5 * (1 + erf(x / sqrt(2))), node for node as torch exports it.
  Value* gelu(const std::string& name, Value* x) {
    Value* y = b_.op("Div", name + "/Div", {x, c_.sqrt2});
    y = b_.op("Erf", name + "/Erf", {y});
    y = b_.op("Add", name + "/Add", {y, c_.one});
    y = b_.op("Mul", name + "/Mul", {x, y});
    return b_.op("Mul", name + "/Mul_1", {y, c_.half});
  }

  ModelBuilder& b_;
  BertOptions bert_;
  BertConstants c_{};
};

}  // namespace

std::unique_ptr<Graph> buildBert(const ModelOptions& options, const BertOptions& bert) {
  if (bert.layers < 1 || bert.hidden < 1 || bert.heads < 1 || bert.intermediate < 1 ||
      bert.sequenceLength < 1)
    throw Error("bert: layers, hidden, heads, intermediate and sequence length must be positive");
  if (bert.hidden % bert.heads != 0)
    throw Error("bert: hidden size " + std::to_string(bert.hidden) +
                " is not divisible by the number of heads " + std::to_string(bert.heads));
  ModelBuilder b("bert", options);
  Value* x = b.addImageLikeInput({bert.sequenceLength, bert.hidden});
  BertBuilder layers(b, bert);
  for (int64_t i = 0; i < bert.layers; ++i)
    x = layers.layer(i, x, i + 1 == bert.layers ? "output" : std::string());
  return b.finish(x, {bert.sequenceLength, bert.hidden});
}

}  // namespace subgraph::zoo
