//===- core/zoo/zoo.cpp - The model table ---------------------------------===//
//
// The one list of zoo models by name; `subgraph zoo` and tests look models up
// here, so adding a model is a new file plus one row.
//
//===----------------------------------------------------------------------===//
#include "subgraph/zoo/zoo.h"

#include <algorithm>
#include <functional>

namespace subgraph::zoo {
namespace {

struct ModelEntry {
  std::string_view name;
  std::string_view description;
  std::function<std::unique_ptr<Graph>(const ModelOptions&)> build;
};

const std::vector<ModelEntry>& modelTable() {
  static const std::vector<ModelEntry> kTable = {
      {"bert", "BERT-base encoder: 12 layers, hidden 768, 12 heads, sequence 128 (396 nodes)",
       [](const ModelOptions& o) { return buildBert(o); }},
      {"mobilenetv2", "torchvision MobileNetV2, 224x224 input, 1000 classes (152 nodes)",
       [](const ModelOptions& o) { return buildMobileNetV2(o); }},
      {"mobilenetv3",
       "torchvision MobileNetV3-Small with an LR-ASPP-style segmentation head (HardSwish, "
       "squeeze-excite, Resize, ConvTranspose), 224x224 input, 21 classes",
       [](const ModelOptions& o) { return buildMobileNetV3Seg(o); }},
      {"resnet50", "torchvision ResNet-50 v1.5, 224x224 input, 1000 classes (175 nodes)",
       [](const ModelOptions& o) { return buildResNet50(o); }},
  };
  return kTable;
}

}  // namespace

std::vector<ModelInfo> listModels() {
  std::vector<ModelInfo> models;
  for (const ModelEntry& e : modelTable())
    models.push_back({std::string(e.name), std::string(e.description)});
  models.push_back({"synthetic",
                    "chains of residual or transformer blocks with a share of unsupported Sin "
                    "nodes, 1 to 2e7 nodes"});
  std::sort(models.begin(), models.end(),
            [](const ModelInfo& a, const ModelInfo& b) { return a.name < b.name; });
  return models;
}

StatusOr<std::unique_ptr<Graph>> buildModel(std::string_view name, const ModelOptions& options) {
  for (const ModelEntry& e : modelTable()) {
    if (e.name != name) continue;
    try {
      return e.build(options);
    } catch (const Error& error) {
      return Status(error.code(), std::string(name) + ": " + error.what());
    }
  }
  std::string known;
  for (const ModelInfo& m : listModels()) known += (known.empty() ? "" : ", ") + m.name;
  std::string hint =
      name == "synthetic" ? " (synthetic takes more options; use buildSynthetic)" : "";
  return Status(StatusCode::kNotFound, "unknown zoo model '" + std::string(name) + "'" + hint +
                                           "; known models: " + known);
}

}  // namespace subgraph::zoo
