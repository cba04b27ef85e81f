//===- tests/core/zoo_test.cpp - The model zoo ----------------------------===//
//
// The zoo models must be valid graphs with exactly the published structure
// (ResNet-50's op histogram is pinned node for node), infer to the right
// output shape for any batch, and get weights that depend on the seed alone:
// the same seed gives identical bytes, a different seed different ones, and
// a pinned value guards against the generator drifting across platforms.
// Synthetic graphs must hit the requested node count and Sin share.
//
//===----------------------------------------------------------------------===//
#include "subgraph/zoo/zoo.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <map>

#include "subgraph/ir/shape_inference.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/zoo/random.h"

namespace subgraph::zoo {
namespace {

using ::testing::HasSubstr;

std::map<std::string, size_t> opHistogram(const Graph& g) {
  std::map<std::string, size_t> counts;
  for (const Node* n : g.nodes()) ++counts[n->qualifiedOpType()];
  return counts;
}

int64_t parameterCount(const Graph& g) {
  int64_t count = 0;
  for (const Value* v : g.initializers()) count += v->initializer()->numElements();
  return count;
}

/// Forgets the declared output type, infers, and returns what inference
/// computed for "output".
TensorType inferredOutputType(Graph& g) {
  g.outputs()[0]->setType(TensorType());
  Status inferred = inferShapes(g);
  EXPECT_TRUE(inferred.isOk()) << inferred.message();
  return g.outputs()[0]->type();
}

void expectValid(const Graph& g) {
  Status valid = verify(g);
  EXPECT_TRUE(valid.isOk()) << g.name() << ": " << valid.message();
}

/// ResNet-50 has torchvision's layout: the exact op histogram, names and
/// interface.
TEST(Zoo, ResNet50HasTorchvisionLayout) {
  std::unique_ptr<Graph> g = buildResNet50();
  expectValid(*g);
  EXPECT_EQ(g->numNodes(), 175u);
  std::map<std::string, size_t> expected = {
      {"Conv", 53},   {"BatchNormalization", 53}, {"Relu", 49},   {"Add", 16},
      {"MaxPool", 1}, {"GlobalAveragePool", 1},   {"Flatten", 1}, {"Gemm", 1}};
  EXPECT_EQ(opHistogram(*g), expected);
  for (const char* name : {"conv1", "bn1", "layer1.0.conv1", "layer1.0.downsample.0",
                           "layer1.0.downsample.1", "layer4.2.conv3", "fc"})
    EXPECT_NE(g->findNode(name), nullptr) << name;
  // v1.5: the stride sits on the 3x3 conv, not on the first 1x1.
  EXPECT_EQ(g->findNode("layer2.0.conv2")->getInts("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(g->findNode("layer2.0.conv1")->getInts("strides"), (std::vector<int64_t>{1, 1}));
  // Convs have no bias: BatchNormalization follows every one.
  for (const Node* n : g->nodes())
    if (n->opType() == "Conv") {
      EXPECT_EQ(n->numInputs(), 2u) << n->name();
      ASSERT_EQ(n->output(0)->uses().size(), 1u);
      EXPECT_EQ(n->output(0)->uses()[0].user->opType(), "BatchNormalization");
    }
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->inputs()[0]->name(), "input");
  EXPECT_EQ(g->inputs()[0]->type(), TensorType(DataType::kFloat32, {1, 3, 224, 224}));
  EXPECT_EQ(g->outputs()[0]->name(), "output");
  EXPECT_EQ(g->outputs()[0]->type(), TensorType(DataType::kFloat32, {1, 1000}));
  // torchvision's 25,557,032 parameters plus the BatchNormalization running
  // mean and variance (buffers in PyTorch, initializers here) of all 26,560
  // normalized channels.
  EXPECT_EQ(parameterCount(*g), 25'557'032 + 2 * 26'560);
}

/// Shape inference carries the batch through to [N, 1000], static or
/// symbolic.
TEST(Zoo, ResNet50InfersOutputShapeForAnyBatch) {
  for (int64_t batch : {1, 4}) {
    std::unique_ptr<Graph> g = buildResNet50({.batch = batch});
    EXPECT_EQ(inferredOutputType(*g), TensorType(DataType::kFloat32, {batch, 1000}))
        << "batch " << batch;
  }
  std::unique_ptr<Graph> g = buildResNet50({.batch = 0});
  EXPECT_EQ(inferredOutputType(*g), TensorType(DataType::kFloat32, {Dim::symbol("N"), 1000}));
}

/// MobileNetV3 (segmentation): torchvision's mobilenet_v3_small blocks
/// (11 inverted residuals, 9 with squeeze-excite, 5x5 depthwise convs),
/// HardSwish/HardSigmoid as torch exports them, and a head with Resize and
/// ConvTranspose; the symbolic batch reaches the output.
TEST(Zoo, MobileNetV3HasTorchvisionBlocksAndSegmentationHead) {
  std::unique_ptr<Graph> g = buildMobileNetV3Seg({.batch = 0});
  expectValid(*g);
  std::map<std::string, size_t> expected = {{"Conv", 56},
                                            {"BatchNormalization", 35},
                                            {"HardSwish", 18},
                                            {"Relu", 15},
                                            {"GlobalAveragePool", 10},
                                            {"HardSigmoid", 10},
                                            {"Mul", 10},
                                            {"Add", 7},
                                            {"Resize", 1},
                                            {"ConvTranspose", 1}};
  EXPECT_EQ(opHistogram(*g), expected);
  size_t depthwise = 0, fiveByFive = 0;
  for (const Node* n : g->nodes()) {
    if (n->opType() == "Conv" && n->getInt("group", 1) > 1) {
      ++depthwise;
      if (n->input(1)->type().shape->at(3) == Dim(5)) ++fiveByFive;
    }
    if (n->opType() == "HardSigmoid") {
      EXPECT_FLOAT_EQ(n->getFloat("alpha", 0.2f), 1.0f / 6.0f) << n->name();
    }
  }
  EXPECT_EQ(depthwise, 11u);
  EXPECT_EQ(fiveByFive, 8u);
  EXPECT_EQ(inferredOutputType(*g),
            TensorType(DataType::kFloat32, {Dim::symbol("N"), Dim(21), Dim(56), Dim(56)}));
}

/// MobileNetV2: depthwise convs, ReLU6 as Clip with constant min/max
/// inputs, and the residual Adds of torchvision's layout.
TEST(Zoo, MobileNetV2HasTorchvisionLayout) {
  std::unique_ptr<Graph> g = buildMobileNetV2({.batch = 2});
  expectValid(*g);
  std::map<std::string, size_t> expected = {
      {"Conv", 52}, {"BatchNormalization", 52}, {"Clip", 35},
      {"Add", 10},  {"GlobalAveragePool", 1},   {"Flatten", 1},
      {"Gemm", 1}};
  EXPECT_EQ(opHistogram(*g), expected);
  size_t depthwise = 0;
  for (const Node* n : g->nodes()) {
    if (n->opType() == "Conv" && n->getInt("group", 1) > 1) {
      ++depthwise;
      EXPECT_EQ(n->input(1)->type().shape->at(1), Dim(1)) << n->name();
    }
    if (n->opType() == "Clip") {
      ASSERT_EQ(n->numInputs(), 3u);
      EXPECT_TRUE(n->input(1)->isInitializer() && n->input(2)->isInitializer());
    }
  }
  EXPECT_EQ(depthwise, 17u);
  EXPECT_EQ(inferredOutputType(*g), TensorType(DataType::kFloat32, {2, 1000}));
  // torchvision's 3,504,872 parameters, the running statistics of 17,056
  // normalized channels, and Clip's two scalars.
  EXPECT_EQ(parameterCount(*g), 3'504'872 + 2 * 17'056 + 2);
}

/// A small BERT has 33 nodes per layer with the attention and GELU ops, and
/// infers [N, S, hidden].
TEST(Zoo, BertLayerHasAttentionAndGelu) {
  BertOptions small{
      .layers = 2, .hidden = 64, .heads = 4, .intermediate = 128, .sequenceLength = 16};
  std::unique_ptr<Graph> g = buildBert({.batch = 3}, small);
  expectValid(*g);
  EXPECT_EQ(g->numNodes(), 66u);
  std::map<std::string, size_t> expected = {{"MatMul", 16},
                                            {"Add", 18},
                                            {"Reshape", 8},
                                            {"Transpose", 8},
                                            {"Div", 4},
                                            {"Softmax", 2},
                                            {"LayerNormalization", 4},
                                            {"Erf", 2},
                                            {"Mul", 4}};
  EXPECT_EQ(opHistogram(*g), expected);
  EXPECT_EQ(g->inputs()[0]->type(), TensorType(DataType::kFloat32, {3, 16, 64}));
  EXPECT_EQ(inferredOutputType(*g), TensorType(DataType::kFloat32, {3, 16, 64}));
  EXPECT_NE(g->findNode("encoder.layer.1.attention.self/Softmax"), nullptr);
}

/// BERT-base: 12 layers of 33 nodes and the well-known parameter count of
/// the encoder (85M).
TEST(Zoo, BertBaseHasTwelveLayers) {
  std::unique_ptr<Graph> g = buildBert();
  EXPECT_EQ(g->numNodes(), 12u * 33u);
  // Per layer: 4 attention projections (768x768 + 768), two LayerNorms
  // (2 x 768 each) and the feed-forward pair; plus the shared constants
  // (4 + 3 shape elements and 4 scalars).
  int64_t perLayer =
      4 * (768 * 768 + 768) + 2 * (2 * 768) + (768 * 3072 + 3072) + (3072 * 768 + 768);
  EXPECT_EQ(parameterCount(*g), 12 * perLayer + 4 + 3 + 4);
  EXPECT_EQ(g->outputs()[0]->type(), TensorType(DataType::kFloat32, {1, 128, 768}));
}

/// Bad BERT sizes fail with a message naming them.
TEST(Zoo, BertRejectsHeadsThatDoNotDivideHidden) {
  EXPECT_THAT([] { buildBert({}, {.hidden = 100, .heads = 12}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("not divisible by the number of heads")));
}

/// Weights depend on the seed only: same seed, same bytes; other seed,
/// other bytes.
TEST(Zoo, WeightsAreDeterministicPerSeed) {
  auto a = buildMobileNetV2({.seed = 7}), b = buildMobileNetV2({.seed = 7}),
       c = buildMobileNetV2({.seed = 8});
  size_t compared = 0;
  for (const Value* v : a->initializers()) {
    const Tensor& ta = *v->initializer();
    const Tensor& tb = *b->findValue(v->name())->initializer();
    const Tensor& tc = *c->findValue(v->name())->initializer();
    EXPECT_TRUE(ta == tb) << v->name();
    // Constants such as Clip's 0 and 6 do not depend on the seed.
    if (v->name().rfind("relu6.", 0) != 0) {
      EXPECT_FALSE(ta == tc) << v->name();
      ++compared;
    }
  }
  EXPECT_GT(compared, 200u);
}

/// The generator's output is pinned, so a platform or compiler that
/// changes it fails here rather than silently producing other models.
TEST(Zoo, RandomStreamIsPinned) {
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);  // SplitMix64's published first output
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  // The first weights of MobileNetV2's stem for seed 1, as bit patterns.
  std::unique_ptr<Graph> g = buildMobileNetV2({.seed = 1});
  const Tensor& w = *g->findValue("features.0.0.weight")->initializer();
  std::vector<uint32_t> bits;
  for (size_t i = 0; i < 4; ++i) bits.push_back(std::bit_cast<uint32_t>(w.data<float>()[i]));
  EXPECT_EQ(bits, (std::vector<uint32_t>{0xbe7075ce, 0xbd9d7758, 0xbecd7ed3, 0xbe53ca23}));
}

/// Synthetic graphs have exactly the requested node count, the requested
/// share of Sin, every value
/// typed, and pass the verifier.
TEST(Zoo, SyntheticGraphsHitNodeCountAndSinShare) {
  for (SyntheticShape shape : {SyntheticShape::kResidual, SyntheticShape::kTransformer}) {
    for (int64_t nodes : {1, 7, 1000, 4321}) {
      for (double fraction : {0.0, 0.1, 0.5, 1.0}) {
        SCOPED_TRACE(std::to_string(nodes) + " nodes, fraction " + std::to_string(fraction));
        SyntheticOptions options;
        options.nodes = nodes;
        options.unsupportedFraction = fraction;
        options.shape = shape;
        auto built = buildSynthetic(options);
        ASSERT_TRUE(built.isOk()) << built.status().message();
        Graph& g = **built;
        EXPECT_EQ(static_cast<int64_t>(g.numNodes()), nodes);
        size_t sins = opHistogram(g)["Sin"];
        EXPECT_EQ(static_cast<int64_t>(sins), std::llround(static_cast<double>(nodes) * fraction));
        for (const Value* v : g.values()) EXPECT_FALSE(v->type().isUnknown()) << v->name();
        expectValid(g);
      }
    }
  }
}

/// A residual synthetic graph is built from Conv/BN/Relu/Add blocks with the
/// skip connection, and Sin placement depends on the seed.
TEST(Zoo, SyntheticResidualBlocksAndSeededPlacement) {
  auto build = [](uint64_t seed) {
    SyntheticOptions options;
    options.nodes = 400;
    options.unsupportedFraction = 0.2;
    options.model.seed = seed;
    return buildSynthetic(options);
  };
  auto a = build(1), b = build(1), c = build(2);
  ASSERT_TRUE(a.isOk() && b.isOk() && c.isOk());
  auto sinProducers = [](const Graph& g) {
    std::vector<std::string> names;
    for (const Node* n : g.nodes())
      if (n->opType() == "Sin") names.push_back(n->input(0)->name());
    return names;
  };
  EXPECT_EQ(sinProducers(**a), sinProducers(**b));
  EXPECT_NE(sinProducers(**a), sinProducers(**c));
  std::map<std::string, size_t> hist = opHistogram(**a);
  EXPECT_EQ(hist["Conv"] + hist["BatchNormalization"] + hist["Relu"] + hist["Add"], 320u);
  EXPECT_EQ(hist["Add"], 80u);
  // Each Add closes a skip connection: its second operand is the block's
  // input, i.e. the graph input or the end of the previous block (an Add,
  // or a Sin drawn after it).
  for (const Node* n : (*a)->nodes()) {
    if (n->opType() != "Add") continue;
    const Value* skip = n->input(1);
    EXPECT_TRUE(skip->isGraphInput() || skip->producer()->opType() == "Add" ||
                skip->producer()->opType() == "Sin")
        << n->name();
  }
}

/// Options outside the supported ranges are errors naming the limit.
TEST(Zoo, SyntheticRejectsBadOptions) {
  SyntheticOptions options;
  options.nodes = 0;
  auto zero = buildSynthetic(options);
  ASSERT_FALSE(zero.isOk());
  EXPECT_THAT(zero.status().message(), HasSubstr("outside [1, 20000000]"));
  options.nodes = 10;
  options.unsupportedFraction = 1.5;
  auto fraction = buildSynthetic(options);
  ASSERT_FALSE(fraction.isOk());
  EXPECT_THAT(fraction.status().message(), HasSubstr("fraction"));
  EXPECT_FALSE(parseSyntheticShape("ring").isOk());
  EXPECT_EQ(parseSyntheticShape("transformer").value(), SyntheticShape::kTransformer);
}

/// Models are found by name; an unknown name lists the known ones.
TEST(Zoo, BuildsModelsByName) {
  auto g = buildModel("mobilenetv2");
  ASSERT_TRUE(g.isOk());
  EXPECT_EQ((*g)->name(), "mobilenetv2");
  auto unknown = buildModel("vgg16");
  ASSERT_FALSE(unknown.isOk());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("bert, mobilenetv2, mobilenetv3, resnet50, synthetic"));
  EXPECT_EQ(listModels().size(), 5u);
}

}  // namespace
}  // namespace subgraph::zoo
