//===- tests/fuzz/seed_corpus.cpp - Building the seed corpus -===//
//
// See seed_corpus.h. The partition harness reads its bytes as a stream of
// random choices, so its seeds are byte patterns rather than models.
//
//===----------------------------------------------------------------------===//
#include "seed_corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/onnx/onnx_export.h"
#include "subgraph/onnx/onnx_import.h"
#include "subgraph/zoo/zoo.h"

namespace subgraph::fuzz {
namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Replaces every initializer of more than 64 elements by a one-element
/// splat of the same rank: shape constants (Reshape targets) survive, the
/// megabytes of weights do not.
void shrinkWeights(Graph& graph) {
  for (Value* v : graph.initializers()) {
    const Tensor* t = v->initializer();
    if (!t || t->numElements() <= 64 || t->dtype() == DataType::kString) continue;
    std::vector<int64_t> ones(t->dims().size(), 1);
    graph.setInitializer(v, Tensor::splat(t->dtype(), ones, 0.5));
  }
}

/// The zoo models, shrunk, by name.
std::vector<std::pair<std::string, std::unique_ptr<Graph>>> zooModels(bool large) {
  std::vector<std::pair<std::string, std::unique_ptr<Graph>>> models;
  if (large) {
    models.emplace_back("resnet50", zoo::buildResNet50());
    models.emplace_back("mobilenetv2", zoo::buildMobileNetV2());
  }
  zoo::BertOptions tiny;
  tiny.layers = 1;
  tiny.hidden = 8;
  tiny.heads = 2;
  tiny.intermediate = 16;
  tiny.sequenceLength = 4;
  models.emplace_back("bert_tiny", zoo::buildBert({}, tiny));
  for (zoo::SyntheticShape shape :
       {zoo::SyntheticShape::kResidual, zoo::SyntheticShape::kTransformer}) {
    zoo::SyntheticOptions options;
    options.nodes = 24;
    options.unsupportedFraction = 0.1;
    options.shape = shape;
    if (auto g = zoo::buildSynthetic(options); g.isOk())
      models.emplace_back(
          shape == zoo::SyntheticShape::kResidual ? "synthetic_residual" : "synthetic_transformer",
          std::move(g).value());
  }
  for (auto& [name, graph] : models) shrinkWeights(*graph);
  return models;
}

/// model.onnx of every `stride`-th ONNX node test, sorted by test name.
std::vector<std::pair<std::string, std::string>> onnxNodeTests(const SeedSources& sources) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  if (!fs::is_directory(sources.onnxTestDataDir, ec)) return {};
  for (const auto& entry : fs::directory_iterator(sources.onnxTestDataDir, ec))
    if (fs::exists(entry.path() / "model.onnx")) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < dirs.size(); i += std::max<size_t>(sources.onnxStride, 1))
    out.emplace_back(dirs[i].filename().string(), readFile(dirs[i] / "model.onnx"));
  return out;
}

std::vector<Seed> textGraphFiles(const SeedSources& sources) {
  std::vector<Seed> seeds;
  std::error_code ec;
  fs::path dir = fs::path(sources.sourceDir) / "tests" / "data" / "graphs";
  if (sources.sourceDir.empty() || !fs::is_directory(dir, ec)) return seeds;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".sg")
      seeds.push_back({entry.path().filename().string(), readFile(entry.path())});
  std::sort(seeds.begin(), seeds.end(),
            [](const Seed& a, const Seed& b) { return a.name < b.name; });
  return seeds;
}

/// ONNX node tests as text graphs, for the harnesses that read text.
std::vector<Seed> onnxTestsAsText(const SeedSources& sources) {
  std::vector<Seed> seeds;
  for (const auto& [name, bytes] : onnxNodeTests(sources)) {
    StatusOr<std::unique_ptr<Graph>> g = importOnnxBytes(bytes);
    if (g.isOk()) seeds.push_back({name + ".sg", printGraph(**g)});
  }
  return seeds;
}

}  // namespace

std::vector<Seed> seedCorpus(const std::string& harness, const SeedSources& sources) {
  std::vector<Seed> seeds;
  if (harness == "onnx_import") {
    for (auto& [name, bytes] : onnxNodeTests(sources)) seeds.push_back({name + ".onnx", bytes});
    for (auto& [name, graph] : zooModels(sources.largeZooModels))
      if (StatusOr<std::string> bytes = exportOnnxBytes(*graph); bytes.isOk())
        seeds.push_back({name + ".onnx", std::move(bytes).value()});
  } else if (harness == "text_format") {
    seeds = textGraphFiles(sources);
    for (auto& [name, graph] : zooModels(sources.largeZooModels))
      seeds.push_back({name + ".sg", printGraph(*graph)});
    for (Seed& s : onnxTestsAsText(sources)) seeds.push_back(std::move(s));
  } else if (harness == "run") {
    seeds = textGraphFiles(sources);
    for (Seed& s : onnxTestsAsText(sources)) seeds.push_back(std::move(s));
  } else if (harness == "partition") {
    // Byte patterns: all zeros, all ones, ramps and a fixed pseudo-random
    // stream, of a few lengths.
    uint64_t state = 0x5eed;
    for (size_t length : {8, 32, 96}) {
      seeds.push_back({"zeros_" + std::to_string(length), std::string(length, '\0')});
      seeds.push_back({"ones_" + std::to_string(length), std::string(length, '\xff')});
      std::string ramp, noise;
      for (size_t i = 0; i < length; ++i) {
        ramp.push_back(static_cast<char>(i * 7));
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        noise.push_back(static_cast<char>(state >> 56));
      }
      seeds.push_back({"ramp_" + std::to_string(length), ramp});
      seeds.push_back({"noise_" + std::to_string(length), noise});
    }
  }
  return seeds;
}

}  // namespace subgraph::fuzz
