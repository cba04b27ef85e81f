//===- core/zoo/mobilenetv3.cpp - MobileNetV3-Small with a segmentation head ===//
//
// torchvision's mobilenet_v3_small backbone (width 1.0) under a
// LR-ASPP-style segmentation head, the shape of model that MobileNetV3
// exports to ONNX in practice, and the one in the zoo that exercises the ops
// the other zoo models lack:
//
//   - HardSwish (opset 14) and HardSigmoid (alpha 1/6, torch's Hardsigmoid)
//     activations;
//   - squeeze-and-excitation: GlobalAveragePool -> 1x1 Conv (bias) -> Relu
//     -> 1x1 Conv (bias) -> HardSigmoid -> Mul with the block's features,
//     so a Conv output has two consumers;
//   - 5x5 depthwise convolutions;
//   - a head that upsamples with Resize (linear, scales 4) and a strided
//     ConvTranspose, and adds a skip branch from the stride-8 features.
//
//   input [N,3,224,224] -> backbone (stride 32, 576 ch, 7x7)
//        |  stride-8 features (24 ch, 28x28) ------------------------.
//        v                                                           |
//   1x1 Conv+BN+Relu (128) * HardSigmoid(1x1 Conv(GAP)) -> Resize x4 |
//        -> 1x1 Conv (21) --------------------------------> Add <-- 1x1 Conv (21)
//                                                            |
//                          ConvTranspose 4x4 stride 2 -> output [N,21,56,56]
//
// With --batch 0 the batch dim is the symbol N: one file serves any batch.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <string>

#include "model_builder.h"

namespace subgraph::zoo {
namespace {

using detail::kLinearGain;
using detail::kReluGain;
using detail::ModelBuilder;

// torchvision's _make_divisible: round to a multiple of 8, never more than
// 10% down.
int64_t makeDivisible(double v) {
  auto rounded = std::max<int64_t>(8, static_cast<int64_t>(v + 4) / 8 * 8);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += 8;
  return rounded;
}

// Conv + BN + activation ("RE": Relu, "HS": HardSwish), named as
// torchvision's Conv2dNormActivation children.
Value* convBnAct(ModelBuilder& b, const std::string& prefix, Value* x, int64_t inC, int64_t outC,
                 int64_t kernel, int64_t stride, int64_t group, bool hardswish) {
  x = b.conv(prefix + ".0", x, inC, outC, kernel, stride, group, kReluGain);
  x = b.batchNorm(prefix + ".1", x, outC);
  return b.op(hardswish ? "HardSwish" : "Relu", prefix + ".2", {x});
}

// A 1x1 Conv with a bias, as torch exports nn.Conv2d(bias=True).
Value* conv1x1Bias(ModelBuilder& b, const std::string& name, Value* x, int64_t inC, int64_t outC,
                   double gain) {
  Value* w = b.heUniform(name + ".weight", {outC, inC, 1, 1}, inC, gain);
  double bound = 1.0 / std::sqrt(static_cast<double>(inC));
  Value* bias = b.uniform(name + ".bias", {outC}, -bound, bound);
  return b.op("Conv", name, {x, w, bias},
              {Attribute("kernel_shape", std::vector<int64_t>{1, 1}),
               Attribute("pads", std::vector<int64_t>{0, 0, 0, 0}),
               Attribute("strides", std::vector<int64_t>{1, 1})});
}

Value* hardSigmoid(ModelBuilder& b, const std::string& name, Value* x) {
  // torch.nn.Hardsigmoid exports with alpha 1/6 (ONNX's default is 0.2).
  return b.op("HardSigmoid", name, {x}, {Attribute("alpha", 1.0f / 6.0f), Attribute("beta", 0.5f)});
}

// Squeeze-and-excitation: the features scaled per channel by a gate
// computed from their global average.
Value* squeezeExcite(ModelBuilder& b, const std::string& prefix, Value* x, int64_t channels) {
  int64_t squeeze = makeDivisible(static_cast<double>(channels) / 4);
  Value* s = b.op("GlobalAveragePool", prefix + ".avgpool", {x});
  s = conv1x1Bias(b, prefix + ".fc1", s, channels, squeeze, kReluGain);
  s = b.op("Relu", prefix + ".relu", {s});
  s = conv1x1Bias(b, prefix + ".fc2", s, squeeze, channels, kLinearGain);
  s = hardSigmoid(b, prefix + ".scale_activation", s);
  return b.op("Mul", prefix + ".mul", {x, s});
}

struct BlockSetting {
  int64_t inC, kernel, expanded, outC;
  bool se, hardswish;
  int64_t stride;
};

Value* invertedResidual(ModelBuilder& b, const std::string& prefix, Value* x,
                        const BlockSetting& s) {
  Value* y = x;
  int layer = 0;
  auto child = [&](int i) { return prefix + ".block." + std::to_string(i); };
  if (s.expanded != s.inC)
    y = convBnAct(b, child(layer++), y, s.inC, s.expanded, 1, 1, 1, s.hardswish);
  y = convBnAct(b, child(layer++), y, s.expanded, s.expanded, s.kernel, s.stride, s.expanded,
                s.hardswish);
  if (s.se) y = squeezeExcite(b, child(layer++), y, s.expanded);
  y = b.conv(child(layer) + ".0", y, s.expanded, s.outC, 1, 1, 1, kLinearGain);
  y = b.batchNorm(child(layer) + ".1", y, s.outC);
  if (s.stride == 1 && s.inC == s.outC) y = b.op("Add", prefix + ".add", {x, y});
  return y;
}

}  // namespace

std::unique_ptr<Graph> buildMobileNetV3Seg(const ModelOptions& options) {
  ModelBuilder b("mobilenetv3", options);
  Value* x = b.addImageLikeInput({3, 224, 224});
  x = convBnAct(b, "backbone.0", x, 3, 16, 3, 2, 1, /*hardswish=*/true);

  // torchvision's mobilenet_v3_small bneck table.
  constexpr BlockSetting kBlocks[] = {
      {16, 3, 16, 16, true, false, 2},  {16, 3, 72, 24, false, false, 2},
      {24, 3, 88, 24, false, false, 1}, {24, 5, 96, 40, true, true, 2},
      {40, 5, 240, 40, true, true, 1},  {40, 5, 240, 40, true, true, 1},
      {40, 5, 120, 48, true, true, 1},  {48, 5, 144, 48, true, true, 1},
      {48, 5, 288, 96, true, true, 2},  {96, 5, 576, 96, true, true, 1},
      {96, 5, 576, 96, true, true, 1},
  };
  Value* low = nullptr;  // the stride-8 features the head's skip reads
  int index = 1;
  for (const BlockSetting& s : kBlocks) {
    x = invertedResidual(b, "backbone." + std::to_string(index++), x, s);
    if (index == 4) low = x;  // after block 3: 24 channels at 28x28
  }
  Value* high = convBnAct(b, "backbone.12", x, 96, 576, 1, 1, 1, /*hardswish=*/true);

  // LR-ASPP head: a 1x1 branch gated by the global context.
  Value* y = b.conv("head.cbr.0", high, 576, 128, 1, 1, 1, kReluGain);
  y = b.batchNorm("head.cbr.1", y, 128);
  y = b.op("Relu", "head.cbr.2", {y});
  Value* gate = b.op("GlobalAveragePool", "head.scale.0", {high});
  gate = conv1x1Bias(b, "head.scale.1", gate, 576, 128, kLinearGain);
  gate = hardSigmoid(b, "head.scale.2", gate);
  y = b.op("Mul", "head.mul", {y, gate});
  Value* scales =
      b.constant("head.upsample.scales",
                 Tensor::fromVector<float>(DataType::kFloat32, {4}, {1.0f, 1.0f, 4.0f, 4.0f}));
  y = b.op("Resize", "head.upsample", {y, nullptr, scales},
           {Attribute("mode", std::string("linear")),
            Attribute("coordinate_transformation_mode", std::string("half_pixel"))});
  y = conv1x1Bias(b, "head.high_classifier", y, 128, 21, kLinearGain);
  Value* skip = conv1x1Bias(b, "head.low_classifier", low, 24, 21, kLinearGain);
  y = b.op("Add", "head.add", {skip, y});

  // A learned 2x upsampling, as segmentation heads export it.
  Value* w = b.heUniform("head.deconv.weight", {21, 21, 4, 4}, 21 * 4, kLinearGain);
  Value* bias = b.uniform("head.deconv.bias", {21}, -0.1, 0.1);
  y = b.op("ConvTranspose", "head.deconv", {y, w, bias},
           {Attribute("kernel_shape", std::vector<int64_t>{4, 4}),
            Attribute("pads", std::vector<int64_t>{1, 1, 1, 1}),
            Attribute("strides", std::vector<int64_t>{2, 2})});
  return b.finish(y, {21, 56, 56});
}

}  // namespace subgraph::zoo
