//===- tests/cli/device_test.cpp - A plugin's own device through the CLI -===//
//
// Plugin ABI 3 as a user meets it, on the emulated test device
// (examples/emulated_device, backend `emudev`): `subgraph plugins` names
// the device, ResNet-50 runs on it with exactly two copies (the input up,
// the output down) and no host wait between regions, matching the
// reference, and --plugin-option reaches the device's kernels through the
// ABI (a per-task delay the device's profile times).
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "subgraph/plugin_abi.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kPluginDir = SUBGRAPH_CLI_TEST_PLUGIN_DIR;

void writeFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

bool haveDevicePlugin() { return std::filesystem::exists(kPluginDir / "emudev.so"); }

TEST(CliDevice, PluginsCommandShowsTheDevice) {
  if (!haveDevicePlugin()) GTEST_SKIP() << "examples/emulated_device was not built";
  CliResult r = runCli({"plugins"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("emudev 1.0.0 (plugin ABI " + std::to_string(SG_PLUGIN_ABI_VERSION) + ")"));
  EXPECT_THAT(r.out, HasSubstr("  device:     emu:0 (emulated on the host CPU"));
  // A host plugin's device line is unchanged.
  EXPECT_THAT(r.out, HasSubstr("  device:     host memory"));
}

/// ResNet-50 on the device: every node in a device region, the input copied
/// up once and the output down once, nothing else crossing, no host wait
/// in the middle of the run, and the result the reference's.
TEST(CliDevice, ResNet50CopiesOnlyItsInputAndOutput) {
  if (!haveDevicePlugin()) GTEST_SKIP() << "examples/emulated_device was not built";
  TempDir dir;
  std::string model = (dir.path() / "r50.onnx").string();
  ASSERT_EQ(runCli({"zoo", "resnet50", "-o", model, "-q"}).exitCode, 0);
  CliResult r = runCli({"run", model, "--backend", "emudev", "--random-inputs", "1", "--check",
                        "--json", "--profile"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json json = nlohmann::json::parse(r.out);
  ASSERT_EQ(json["copies"].size(), 2u) << json["copies"].dump();
  // The steps are listed slowest first, and which copy is slower depends
  // on the machine's load: look them up by name.
  std::map<std::string, size_t> copyBytes;
  for (const auto& c : json["copies"]) copyBytes[c["name"].get<std::string>()] = c["bytes"];
  EXPECT_EQ(copyBytes["copy:input->emu:0"], 1u * 3 * 224 * 224 * 4) << json["copies"].dump();
  EXPECT_EQ(copyBytes["copy:output->cpu:0"], 1000u * 4) << json["copies"].dump();
  EXPECT_TRUE(json["host_waits"].empty()) << json["host_waits"].dump();
  EXPECT_TRUE(json["nodes"].size() == 2u) << "only the copies run outside regions";
  for (const auto& region : json["regions"]) EXPECT_EQ(region["backend"], "emudev");
  EXPECT_EQ(json["regions"].size(), 56u);  // 53 conv, 2 pool, 1 dense
  EXPECT_TRUE(json["outputs"][0]["check"]["ok"].get<bool>());
  // Device memory is planned like host memory: the activations between
  // regions live in the device's frame block.
  bool deviceBlock = false;
  for (const auto& d : json["memory"]["devices"])
    if (d["device"] == "emu:0") deviceBlock = d["dynamic_block_bytes"].get<size_t>() > 0;
  EXPECT_TRUE(deviceBlock) << json["memory"].dump();
}

/// A plugin option reaches the device's kernels through the kernel context
/// (no environment variable): with emudev.delay_us each region first
/// sleeps on the device's queue, and the profile, which times a device step
/// by the device's events rather than by its submission (which returns at
/// once), shows the delay in every region.
TEST(CliDevice, PluginOptionReachesTheDeviceAndTheProfileTimesTheDevice) {
  if (!haveDevicePlugin()) GTEST_SKIP() << "examples/emulated_device was not built";
  TempDir dir;
  std::string model = (dir.path() / "two.sg").string();
  writeFile(model, R"(graph @g(%x: f32[1, 3, 8, 8]) {
  %w = const f32[4, 3, 3, 3] splat(0.25)
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} @conv
  %y = MaxPool(%c) {kernel_shape = [2, 2], strides = [2, 2]} @pool
  return %y
})");
  for (const char* delay : {"0", "20000"}) {
    SCOPED_TRACE(delay);
    CliResult r =
        runCli({"run", model, "--backend", "emudev", "--random-inputs", "1", "--check", "--json",
                "--profile", "--plugin-option", std::string("emudev.delay_us=") + delay});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    nlohmann::json json = nlohmann::json::parse(r.out);
    ASSERT_EQ(json["regions"].size(), 2u);
    for (const auto& region : json["regions"]) {
      if (std::string(delay) == "0")
        EXPECT_LT(region["ms"].get<double>(), 19.0);
      else
        EXPECT_GE(region["ms"].get<double>(), 19.0);
    }
    EXPECT_TRUE(json["host_waits"].empty());
  }
  EXPECT_TRUE(failsWithOneLine(runCli({"run", model, "--backend", "emudev", "--random-inputs", "1",
                                       "--plugin-option", "emudev.delay_us=soon"}),
                               1, "emudev: option delay_us='soon' is not a whole number"));
}

/// --plugin-option must name a chosen plugin and have the PLUGIN.NAME=VALUE
/// form: anything else is a usage error, before any work.
TEST(CliDevice, PluginOptionMistakesAreUsageErrors) {
  const std::string block = std::string(SUBGRAPH_SOURCE_DIR) + "/tests/data/graphs/resnet_block.sg";
  EXPECT_TRUE(failsWithOneLine(
      runCli({"run", block, "--backend", "convbn", "--plugin-option", "precision"}), 2,
      "plugin option 'precision' is not PLUGIN.NAME=VALUE"));
  EXPECT_TRUE(failsWithOneLine(
      runCli({"run", block, "--backend", "convbn", "--plugin-option", "onednn.precision=bf16"}), 2,
      "is for backend 'onednn', which is not chosen (convbn)"));
}

}  // namespace
}  // namespace subgraph::cli::testing
