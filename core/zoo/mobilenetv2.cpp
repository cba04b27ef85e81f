//===- core/zoo/mobilenetv2.cpp - MobileNetV2 -----------------------------===//
//
// torchvision's mobilenet_v2 (width 1.0): a strided 3x3 stem, 17 inverted
// residual blocks and a 1x1 conv to 1280 channels, then pooling and a linear
// classifier. An inverted residual block expands with a 1x1 conv (skipped
// when the expansion factor is 1), filters with a 3x3 depthwise conv
// (group = channels) and projects back with a linear 1x1 conv; it adds its
// input when stride is 1 and the width is unchanged. ReLU6 is exported as
// Clip with min/max as inputs (opset 11+); one pair of scalar constants
// serves every Clip. Inference drops torchvision's Dropout.
//
//===----------------------------------------------------------------------===//
#include <string>

#include "model_builder.h"

namespace subgraph::zoo {
namespace {

using detail::kLinearGain;
using detail::kReluGain;
using detail::ModelBuilder;

/// Conv, BatchNormalization and ReLU6 named as torchvision's
/// Conv2dNormActivation children: "<prefix>.0", ".1", ".2".
Value* convBnRelu6(ModelBuilder& b, const std::string& prefix, Value* x, int64_t inC, int64_t outC,
                   int64_t kernel, int64_t stride, int64_t group, Value* lo, Value* hi) {
  x = b.conv(prefix + ".0", x, inC, outC, kernel, stride, group, kReluGain);
  x = b.batchNorm(prefix + ".1", x, outC);
  return b.op("Clip", prefix + ".2", {x, lo, hi});
}

Value* invertedResidual(ModelBuilder& b, const std::string& prefix, Value* x, int64_t inC,
                        int64_t outC, int64_t stride, int64_t expand, Value* lo, Value* hi) {
  int64_t hidden = inC * expand;
  Value* y = x;
  int layer = 0;
  auto child = [&](int i) { return prefix + ".conv." + std::to_string(i); };
  if (expand != 1) y = convBnRelu6(b, child(layer++), y, inC, hidden, 1, 1, 1, lo, hi);
  y = convBnRelu6(b, child(layer++), y, hidden, hidden, 3, stride, hidden, lo, hi);
  y = b.conv(child(layer++), y, hidden, outC, 1, 1, 1, kLinearGain);
  y = b.batchNorm(child(layer), y, outC);
  if (stride == 1 && inC == outC) y = b.op("Add", prefix + ".add", {x, y});
  return y;
}

}  // namespace

std::unique_ptr<Graph> buildMobileNetV2(const ModelOptions& options) {
  ModelBuilder b("mobilenetv2", options);
  Value* x = b.addImageLikeInput({3, 224, 224});
  Value* lo = b.constant("relu6.min", Tensor::splat(DataType::kFloat32, {}, 0.0));
  Value* hi = b.constant("relu6.max", Tensor::splat(DataType::kFloat32, {}, 6.0));

  x = convBnRelu6(b, "features.0", x, 3, 32, 3, 2, 1, lo, hi);
  struct Setting {
    int64_t expand, channels, repeats, stride;
  };
  constexpr Setting kSettings[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                   {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t channels = 32;
  int feature = 1;
  for (const Setting& s : kSettings) {
    for (int64_t i = 0; i < s.repeats; ++i) {
      std::string prefix = "features." + std::to_string(feature++);
      x = invertedResidual(b, prefix, x, channels, s.channels, i == 0 ? s.stride : 1, s.expand, lo,
                           hi);
      channels = s.channels;
    }
  }
  x = convBnRelu6(b, "features." + std::to_string(feature), x, channels, 1280, 1, 1, 1, lo, hi);
  x = b.op("GlobalAveragePool", "avgpool", {x});
  x = b.op("Flatten", "flatten", {x}, {Attribute("axis", int64_t{1})});
  x = b.linear("classifier.1", x, 1280, 1000, "output");
  return b.finish(x, {1000});
}

}  // namespace subgraph::zoo
