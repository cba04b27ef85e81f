//===- tests/cli/traversal_test.cpp - partition --traversal ---------------===//
//
// The properties of a backend share one ranking and one surgery
// (Traversal::kPerBackend) and must fuse what one pass per property over
// the graph the previous one fused does (per-property, the older order). This pins it for the
// shipped plugins and the built-in backends on every zoo model, through the CLI as a user runs it.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

const std::filesystem::path kPluginDir = SUBGRAPH_CLI_TEST_PLUGIN_DIR;

// Each region as its property and its member names, sorted, so that two
// reports compare whatever order their regions were numbered in.
using Regions = std::vector<std::pair<std::string, std::vector<std::string>>>;

Regions regionsOf(const std::string& json) {
  Regions regions;
  const nlohmann::json report = nlohmann::json::parse(json);
  for (const auto& region : report["regions"]) {
    std::vector<std::string> nodes = region["nodes"];
    std::sort(nodes.begin(), nodes.end());
    regions.emplace_back(region["property"], std::move(nodes));
  }
  std::sort(regions.begin(), regions.end());
  return regions;
}

Regions partitioned(const std::string& model, const std::string& backend,
                    const std::string& traversal) {
  CliResult r = runCli(
      {"partition", model, "--backend", backend, "--json", "--traversal", traversal}, {}, 300);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return r.exitCode == 0 ? regionsOf(r.out) : Regions{};
}

std::vector<std::string> backendsToCompare() {
  // The built-in backends in one list: each is a backend of its own.
  std::vector<std::string> backends = {"convbnrelu,convaddrelu,convbn"};
  for (const char* plugin : {"onednn", "example_convbn", "cudnn"})
    if (std::filesystem::exists(kPluginDir / (std::string(plugin) + ".so")))
      backends.push_back(plugin);
  return backends;
}

// What must not change between the orders: the nodes fused, and how many
// regions each property made. Which of two seeds of one property takes a
// node both want follows the rank order, which per-property computes again
// after every surgery and per-backend once, on the graph as loaded: on the
// zoo's MobileNetV3 the head's Add joins the other of its two convs.
std::map<std::string, size_t> regionsPerProperty(const Regions& regions) {
  std::map<std::string, size_t> counts;
  for (const auto& [property, nodes] : regions) ++counts[property];
  return counts;
}

std::set<std::string> fusedNodes(const Regions& regions) {
  std::set<std::string> nodes;
  for (const auto& region : regions) nodes.insert(region.second.begin(), region.second.end());
  return nodes;
}

// One zoo model as the test partitions it: its name and the `zoo` arguments
// that write it (after `zoo`, before `-o`).
struct ZooModel {
  std::string name;
  std::string file;  // the file name the model is written to
  std::vector<std::string> zooArgs;
  /// How many (backend, model) pairs may differ in their regions: MobileNetV3
  /// has the one rank tie described above.
  size_t ties = 0;
};

void PrintTo(const ZooModel& model, std::ostream* os) { *os << model.name; }

// One ctest test per model (each a few partitions per backend; all of them
// in one test made it the last, longest test of the sanitizer run).
class CliTraversal : public ::testing::TestWithParam<ZooModel> {};

/// Every zoo model, every backend: one traversal per backend fuses the
/// same nodes into as many regions of each property as one pass per
/// property. Negative: no node is fused by one order and not the other,
/// and neither order fails where the other succeeds.
TEST_P(CliTraversal, PerBackendFusesWhatPerPropertyFuses) {
  // cuDNN partitions without a GPU only when asked to (docs/cudnn.md).
  setenv("SUBGRAPH_CUDNN_SELECTION_ONLY", "1", 1);
  const ZooModel& zoo = GetParam();
  TempDir dir;
  const std::string model = (dir.path() / zoo.file).string();
  std::vector<std::string> args = {"zoo"};
  args.insert(args.end(), zoo.zooArgs.begin(), zoo.zooArgs.end());
  args.insert(args.end(), {"-o", model});
  ASSERT_EQ(runCli(args).exitCode, 0) << zoo.name;
  size_t fused = 0, identical = 0, compared = 0;
  for (const std::string& backend : backendsToCompare()) {
    Regions perBackend = partitioned(model, backend, "per-backend");
    Regions perProperty = partitioned(model, backend, "per-property");
    EXPECT_EQ(fusedNodes(perBackend), fusedNodes(perProperty)) << backend << " on " << zoo.name;
    EXPECT_EQ(regionsPerProperty(perBackend), regionsPerProperty(perProperty))
        << backend << " on " << zoo.name;
    identical += perBackend == perProperty;
    ++compared;
    fused += perBackend.size();
  }
  EXPECT_GT(fused, 0u) << "nothing was fused in " << zoo.name << ": the comparison proves nothing";
  // All but the known tie are the very same regions.
  EXPECT_GE(identical + zoo.ties, compared);
}

INSTANTIATE_TEST_SUITE_P(
    ZooModels, CliTraversal,
    ::testing::Values(ZooModel{"resnet50", "resnet50.onnx", {"resnet50"}},
                      ZooModel{"mobilenetv2", "mobilenetv2.onnx", {"mobilenetv2"}},
                      ZooModel{"mobilenetv3", "mobilenetv3.onnx", {"mobilenetv3"}, 1},
                      ZooModel{"bert", "bert.onnx", {"bert"}},
                      ZooModel{"synthetic",
                               "synthetic.sg",
                               {"synthetic", "--nodes", "3000", "--unsupported-fraction", "0.1",
                                "--shape", "residual"}}),
    [](const ::testing::TestParamInfo<ZooModel>& model) { return model.param.name; });

/// Negative: an unknown order is a usage error, before the model is read.
TEST_F(CliTraversal, UnknownTraversalIsAUsageError) {
  EXPECT_TRUE(failsWithOneLine(
      runCli({"partition", "missing.onnx", "--backend", "convbn", "--traversal", "per-node"}), 2,
      "--traversal"));
}

}  // namespace
}  // namespace subgraph::cli::testing
