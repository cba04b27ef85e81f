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

/// Every zoo model, every backend: one traversal per backend fuses the
/// same nodes into as many regions of each property as one pass per
/// property. Negative: no node is fused by one order and not the other,
/// and neither order fails where the other succeeds.
TEST(CliTraversal, PerBackendFusesWhatPerPropertyFuses) {
  // cuDNN partitions without a GPU only when asked to (docs/cudnn.md).
  setenv("SUBGRAPH_CUDNN_SELECTION_ONLY", "1", 1);
  TempDir dir;
  std::vector<std::string> models;
  for (const char* name : {"resnet50", "mobilenetv2", "mobilenetv3", "bert"}) {
    std::string file = (dir.path() / (std::string(name) + ".onnx")).string();
    ASSERT_EQ(runCli({"zoo", name, "-o", file}).exitCode, 0) << name;
    models.push_back(file);
  }
  std::string synthetic = (dir.path() / "synthetic.sg").string();
  ASSERT_EQ(runCli({"zoo", "synthetic", "--nodes", "3000", "--unsupported-fraction", "0.1",
                    "--shape", "residual", "-o", synthetic})
                .exitCode,
            0);
  models.push_back(synthetic);
  size_t fused = 0, identical = 0, compared = 0;
  for (const std::string& backend : backendsToCompare())
    for (const std::string& model : models) {
      Regions perBackend = partitioned(model, backend, "per-backend");
      Regions perProperty = partitioned(model, backend, "per-property");
      EXPECT_EQ(fusedNodes(perBackend), fusedNodes(perProperty)) << backend << " on " << model;
      EXPECT_EQ(regionsPerProperty(perBackend), regionsPerProperty(perProperty))
          << backend << " on " << model;
      identical += perBackend == perProperty;
      ++compared;
      fused += perBackend.size();
    }
  EXPECT_GT(fused, 0u) << "nothing was fused: the comparison proves nothing";
  // All but the tie above are the very same regions.
  EXPECT_GE(identical + 1, compared);
}

/// Negative: an unknown order is a usage error, before the model is read.
TEST(CliTraversal, UnknownTraversalIsAUsageError) {
  EXPECT_TRUE(failsWithOneLine(
      runCli({"partition", "missing.onnx", "--backend", "convbn", "--traversal", "per-node"}), 2,
      "--traversal"));
}

}  // namespace
}  // namespace subgraph::cli::testing
