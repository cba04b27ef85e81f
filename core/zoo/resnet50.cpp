//===- core/zoo/resnet50.cpp - ResNet-50 v1.5 -----------------------------===//
//
// torchvision's resnet50: a 7x7 stem, four stages of bottleneck blocks
// (3, 4, 6, 3 blocks; widths 64, 128, 256, 512, expansion 4) and a linear
// classifier. "v1.5" puts a stage's stride on the 3x3 conv of its first
// block rather than on the first 1x1, which is what torchvision ships.
// Every conv is followed by BatchNormalization (hence no conv bias); the
// first block of each stage projects its shortcut with a strided 1x1 conv
// ("downsample"), the others add their input unchanged.
//
//===----------------------------------------------------------------------===//
#include <string>

#include "model_builder.h"

namespace subgraph::zoo {
namespace {

using detail::kLinearGain;
using detail::kReluGain;
using detail::ModelBuilder;

// One bottleneck block named `prefix` ("layer2.0"): 1x1 reduce, 3x3 (with the
// stride), 1x1 expand, plus the shortcut, Add and the final ReLU.
Value* bottleneck(ModelBuilder& b, const std::string& prefix, Value* x, int64_t inC, int64_t width,
                  int64_t stride, bool downsample) {
  int64_t outC = width * 4;
  Value* y = b.conv(prefix + ".conv1", x, inC, width, 1, 1, 1, kReluGain);
  y = b.batchNorm(prefix + ".bn1", y, width);
  y = b.op("Relu", prefix + ".relu", {y});
  y = b.conv(prefix + ".conv2", y, width, width, 3, stride, 1, kReluGain);
  y = b.batchNorm(prefix + ".bn2", y, width);
  y = b.op("Relu", prefix + ".relu_1", {y});
  // No ReLU between this conv and the residual Add: gain 1.
  y = b.conv(prefix + ".conv3", y, width, outC, 1, 1, 1, kLinearGain);
  y = b.batchNorm(prefix + ".bn3", y, outC);
  Value* shortcut = x;
  if (downsample) {
    shortcut = b.conv(prefix + ".downsample.0", x, inC, outC, 1, stride, 1, kLinearGain);
    shortcut = b.batchNorm(prefix + ".downsample.1", shortcut, outC);
  }
  y = b.op("Add", prefix + ".add", {y, shortcut});
  return b.op("Relu", prefix + ".relu_2", {y});
}

}  // namespace

std::unique_ptr<Graph> buildResNet50(const ModelOptions& options) {
  ModelBuilder b("resnet50", options);
  Value* x = b.addImageLikeInput({3, 224, 224});
  x = b.conv("conv1", x, 3, 64, 7, 2, 1, kReluGain);
  x = b.batchNorm("bn1", x, 64);
  x = b.op("Relu", "relu", {x});
  x = b.op("MaxPool", "maxpool", {x},
           {Attribute("kernel_shape", std::vector<int64_t>{3, 3}),
            Attribute("pads", std::vector<int64_t>{1, 1, 1, 1}),
            Attribute("strides", std::vector<int64_t>{2, 2})});

  struct Stage {
    int64_t blocks, width, stride;
  };
  constexpr Stage kStages[] = {{3, 64, 1}, {4, 128, 2}, {6, 256, 2}, {3, 512, 2}};
  int64_t channels = 64;
  for (int s = 0; s < 4; ++s) {
    const Stage& stage = kStages[s];
    for (int64_t i = 0; i < stage.blocks; ++i) {
      std::string prefix = "layer" + std::to_string(s + 1) + "." + std::to_string(i);
      // Only a stage's first block changes resolution or width; that is
      // where the shortcut needs a projection.
      bool first = i == 0;
      x = bottleneck(b, prefix, x, channels, stage.width, first ? stage.stride : 1, first);
      channels = stage.width * 4;
    }
  }
  x = b.op("GlobalAveragePool", "avgpool", {x});
  x = b.op("Flatten", "flatten", {x}, {Attribute("axis", int64_t{1})});
  x = b.linear("fc", x, channels, 1000, "output");
  return b.finish(x, {1000});
}

}  // namespace subgraph::zoo
