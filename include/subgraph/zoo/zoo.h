//===- subgraph/zoo/zoo.h - Built-in benchmark models ------------*- C++ -*-===//
//
// Models built with subgraph's own graph API, with seeded random weights, so
// that tests, benchmarks and demos need no downloads: the standard CNN and
// transformer workloads (ResNet-50, MobileNetV2, a BERT-base encoder) and
// synthetic graphs of 10^3 to 10^7 nodes for partitioner scaling tests.
// `subgraph zoo NAME -o FILE` writes them as ONNX or text. docs/zoo.md lists
// the models, their sizes and how long they take to build.
//
// Every model has one input named "input" and one output named "output",
// opset 17, and weights that depend only on the seed and the weight's name
// (see random.h). Intermediate values are left untyped for shape inference
// to fill in, except in synthetic graphs, which are typed directly because
// they are too large to want an inference pass just to be usable.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/support/status.h"

namespace subgraph::zoo {

/// Options shared by every zoo model.
struct ModelOptions {
  /// Batch size N of the input; 0 makes it the symbolic dim "N".
  int64_t batch = 1;
  /// Seed of the random weights.
  uint64_t seed = 0;
};

/// ResNet-50 v1.5 as torchvision lays it out (stride on the 3x3 conv of
/// each bottleneck): input f32[N, 3, 224, 224], output f32[N, 1000] logits.
/// 175 nodes: 53 Conv (no bias) each followed by BatchNormalization, 49
/// Relu, 16 residual Add, MaxPool, GlobalAveragePool, Flatten, Gemm. Node
/// and weight names follow torchvision's modules ("layer1.0.conv1",
/// "layer1.0.downsample.0", "fc"; weights "layer1.0.conv1.weight").
std::unique_ptr<Graph> buildResNet50(const ModelOptions& options = {});

/// MobileNetV2 as torchvision lays it out: 17 inverted residual blocks with
/// depthwise convs (group = channels), ReLU6 as Clip(0, 6) with min/max as
/// constant inputs (opset 11+), BatchNormalization after every conv, Add on
/// blocks with stride 1 and equal widths, then GlobalAveragePool, Flatten,
/// Gemm. Input f32[N, 3, 224, 224], output f32[N, 1000]. 152 nodes.
std::unique_ptr<Graph> buildMobileNetV2(const ModelOptions& options = {});

/// MobileNetV3-Small (torchvision's mobilenet_v3_small backbone) under an
/// LR-ASPP-style segmentation head: HardSwish and HardSigmoid activations,
/// squeeze-and-excitation gates (GlobalAveragePool, 1x1 convs with bias,
/// Mul), 5x5 depthwise convs, and a head with a linear Resize (scales 4), a
/// skip branch from the stride-8 features and a stride-2 ConvTranspose.
/// Input f32[N, 3, 224, 224], output f32[N, 21, 56, 56] (21 classes).
std::unique_ptr<Graph> buildMobileNetV3Seg(const ModelOptions& options = {});

/// Size of the BERT encoder; the defaults are BERT-base.
struct BertOptions {
  int64_t layers = 12;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t intermediate = 3072;
  int64_t sequenceLength = 128;
};

/// A BERT-style transformer encoder (post-LayerNorm, as BERT). Input
/// f32[N, S, hidden] is the sum of the token, position and segment
/// embeddings, i.e. embeddings are already applied and there is no attention
/// mask; output f32[N, S, hidden]. Each layer: Q/K/V MatMul+Add, Reshape and
/// Transpose into heads, MatMul, Div by sqrt(head size), Softmax, MatMul,
/// Transpose and Reshape back, output MatMul+Add, residual Add,
/// LayerNormalization, then the feed-forward MatMul+Add, Erf-based GELU
/// x*0.5*(1+Erf(x/sqrt(2))), MatMul+Add, residual Add, LayerNormalization:
/// 33 nodes per layer. Linear weights are stored [in, out], ready for
/// MatMul, as ONNX exporters store them. Throws `Error` for sizes that do
/// not fit (hidden not divisible by heads, a non-positive size).
std::unique_ptr<Graph> buildBert(const ModelOptions& options = {}, const BertOptions& bert = {});

/// The layout of a synthetic graph.
enum class SyntheticShape {
  /// Repeated Conv -> BatchNormalization -> Relu -> Add blocks, the Add
  /// closing a skip connection around the block; f32[N, 4, 8, 8] throughout.
  kResidual,
  /// Repeated MatMul -> Add -> Softmax -> MatMul -> Add (residual) ->
  /// LayerNormalization blocks; f32[N, 8, 16] throughout.
  kTransformer,
};

/// Options of a synthetic graph.
struct SyntheticOptions {
  /// Total number of nodes, exactly.
  int64_t nodes = 1000;
  /// Share of the nodes that are `Sin`, an op no shipped backend claims:
  /// round(nodes * fraction) of them, inserted after seeded random nodes of
  /// the chain so that they split what would otherwise be fusion regions.
  double unsupportedFraction = 0.0;
  SyntheticShape shape = SyntheticShape::kResidual;
  ModelOptions model;
};

/// Largest synthetic graph buildSynthetic() makes; about 0.7 KB of memory
/// per node.
inline constexpr int64_t kMaxSyntheticNodes = 20'000'000;

/// A synthetic graph for partitioner scaling tests. Weights are tiny and
/// shared by all blocks (one splat-free random tensor per role), since these
/// graphs are for partitioning, not for running. Every value is typed and
/// uniquely named by construction ("b12.conv", "s7"), so building takes no
/// inference and no name lookups beyond one hash insert per value. Fails
/// for nodes < 1 or over kMaxSyntheticNodes, or a fraction outside [0, 1].
StatusOr<std::unique_ptr<Graph>> buildSynthetic(const SyntheticOptions& options);

/// Parses "residual" or "transformer".
StatusOr<SyntheticShape> parseSyntheticShape(std::string_view name);

/// A named zoo model, for `subgraph zoo --list` and buildModel().
struct ModelInfo {
  std::string name;
  std::string description;
};

/// Every model buildModel() knows, plus "synthetic", sorted by name.
std::vector<ModelInfo> listModels();

/// Builds "resnet50", "mobilenetv2", "mobilenetv3" or "bert" (BERT-base)
/// by name. The
/// synthetic model takes more options: call buildSynthetic(). An unknown
/// name is a kNotFound error listing the known ones.
StatusOr<std::unique_ptr<Graph>> buildModel(std::string_view name,
                                            const ModelOptions& options = {});

}  // namespace subgraph::zoo
