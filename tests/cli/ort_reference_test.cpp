//===- tests/cli/ort_reference_test.cpp - Whole models against ORT --------===//
//
// The runtime's acceptance check, as a user would run it: generate the
// zoo's ResNet-50, run it with `subgraph run --random-inputs 1 --check`
// (partitioned for Conv+BN, checked against the unpartitioned reference),
// then feed the same input file to ONNX Runtime (tools/ort_run.js) and
// compare the logits to 1e-4 relative. ONNX Runtime is the peer subgraph is
// measured against; `tools/setup.sh test` installs it into bench/. Skips,
// saying how to install it, when it is missing. A second test runs the
// zoo's dynamic-batch MobileNetV3 segmentation model on the onednn backend
// at two batch sizes against the reference and, where installed, ONNX
// Runtime.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace subgraph::cli::testing {
namespace {

namespace fs = std::filesystem;

bool ortAvailable() {
  return fs::exists(fs::path(sourcePath("bench")) / "node_modules" / "onnxruntime-node") &&
         std::system("node --version > /dev/null 2>&1") == 0;
}

// The float32 data of a little-endian .npy file ('<f4', C order); empty
// when the file is not one.
std::vector<float> readNpyF32(const std::string& path) {
  std::string bytes = readFile(path);
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return {};
  size_t headerLen = 0, offset = 0;
  if (bytes[6] == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    offset = 10;
  } else {
    if (bytes.size() < 12) return {};
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  }
  std::string header = bytes.substr(offset, headerLen);
  if (header.find("'<f4'") == std::string::npos || header.find("True") != std::string::npos)
    return {};
  offset += headerLen;
  std::vector<float> data((bytes.size() - offset) / sizeof(float));
  std::memcpy(data.data(), bytes.data() + offset, data.size() * sizeof(float));
  return data;
}

// max |ours - theirs| over max |theirs|: relative to the output's scale, as
// a per-element ratio would divide by values that happen to be near zero.
double errorOverScale(const std::vector<float>& ours, const std::vector<float>& theirs) {
  double maxAbs = 0, scale = 0;
  for (size_t i = 0; i < ours.size() && i < theirs.size(); ++i) {
    maxAbs = std::max(maxAbs, std::fabs(static_cast<double>(ours[i]) - theirs[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(theirs[i])));
  }
  return scale > 0 ? maxAbs / scale : 1.0;
}

// Runs ONNX Runtime (tools/ort_run.js) on `model`, feeding graph input
// "input" from the .npy `subgraph run --output-dir OUT` wrote for it, and
// returns output `name`'s data; empty (with a test failure) if ORT fails.
std::vector<float> ortOutput(const std::string& model, const std::string& out,
                             const std::string& ortOut, const std::string& name) {
  std::string cmd = "node " + sourcePath("tools/ort_run.js") + " " + model +
                    " --input input=" + out + "/inputs/input.npy --out " + ortOut + " > /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return readNpyF32(ortOut + "/0_" + name + ".npy");
}

TEST(CliOrtReference, ResNet50RunMatchesOnnxRuntime) {
  if (!ortAvailable())
    GTEST_SKIP() << "onnxruntime-node not installed: run `cd bench && npm ci --ignore-scripts`";
  TempDir dir;
  std::string model = (dir.path() / "resnet50.onnx").string();
  std::string out = (dir.path() / "out").string(), ortOut = (dir.path() / "ort").string();
  CliResult zoo = runCli({"zoo", "resnet50", "-o", model});
  ASSERT_EQ(zoo.exitCode, 0) << zoo.err;

  CliResult run = runCli(
      {"run", model, "--backend", "convbn", "--random-inputs", "1", "--output-dir", out, "--check"},
      {}, 600);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_THAT(run.out, ::testing::HasSubstr("check output: max abs error"));

  std::string cmd = "node " + sourcePath("tools/ort_run.js") + " " + model +
                    " --input input=" + out + "/inputs/input.npy --out " + ortOut + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  std::vector<float> ours = readNpyF32(out + "/output.npy");
  std::vector<float> theirs = readNpyF32(ortOut + "/0_output.npy");
  ASSERT_EQ(ours.size(), 1000u);
  ASSERT_EQ(theirs.size(), ours.size());
  // Relative to the largest logit: a per-element ratio would divide by
  // logits that happen to be near zero, where summation order alone moves
  // the ratio past any bound.
  double maxAbs = 0, scale = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    maxAbs = std::max(maxAbs, std::fabs(static_cast<double>(ours[i]) - theirs[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(theirs[i])));
  }
  ASSERT_GT(scale, 0.0);
  std::printf(
      "ResNet-50 logits vs ONNX Runtime: max abs error %.3g, relative to max |logit| %.3g\n",
      maxAbs, maxAbs / scale);
  EXPECT_LE(maxAbs / scale, 1e-4);
}

/// A MobileNetV3 segmentation model with a dynamic batch (the zoo's
/// mobilenetv3 written with --batch 0, so its input is f32[N, 3, 224, 224]),
/// run on the onednn backend at two batch sizes: HardSwish, HardSigmoid,
/// BatchNormalization, the residual Adds, the squeeze-excite Muls, Resize
/// and ConvTranspose all fuse into oneDNN regions, leaving nothing to the
/// reference; every output matches the unpartitioned reference (--check)
/// and, where ONNX Runtime is installed, ONNX Runtime on the same input.
TEST(CliOrtReference, MobileNetV3DynamicBatchOnednnMatchesReferenceAndOrt) {
  TempDir dir;
  std::string model = (dir.path() / "mobilenetv3.onnx").string();
  CliResult zoo = runCli({"zoo", "mobilenetv3", "--batch", "0", "-o", model});
  ASSERT_EQ(zoo.exitCode, 0) << zoo.err;

  std::string report = (dir.path() / "report.json").string();
  CliResult part = runCli({"partition", model, "--backend", "onednn", "--report", report});
  ASSERT_EQ(part.exitCode, 0) << part.err;
  nlohmann::json rejected = nlohmann::json::parse(readFile(report))["rejected"];
  std::vector<std::string> leftOps;
  for (const nlohmann::json& r : rejected) leftOps.push_back(r["op"].get<std::string>());
  // Every Add becomes a sum post-op even though its operands' batch is
  // symbolic (the backbone's residuals, and the head's Add of two convs).
  for (const char* fused :
       {"Conv", "BatchNormalization", "HardSwish", "HardSigmoid", "Relu", "Add"})
    EXPECT_THAT(leftOps, ::testing::Not(::testing::Contains(fused))) << fused;
  // The head's Resize and ConvTranspose fuse too (resize, deconv), and
  // the squeeze-excite Muls, a per-channel broadcast of a runtime gate
  // (channel_scale): every node is in a region.
  EXPECT_TRUE(leftOps.empty()) << ::testing::PrintToString(leftOps);

  for (const char* batch : {"1", "2"}) {
    std::string out = (dir.path() / (std::string("out") + batch)).string();
    CliResult run = runCli({"run", model, "--backend", "onednn", "--shape",
                            std::string("input=") + batch + ",3,224,224", "--random-inputs", "1",
                            "--output-dir", out, "--check"},
                           {}, 600);
    ASSERT_EQ(run.exitCode, 0) << run.err;
    EXPECT_THAT(run.out,
                ::testing::HasSubstr(std::string("output output: f32[") + batch + ", 21, 56, 56]"));
    EXPECT_THAT(run.out, ::testing::HasSubstr(", ok\n"));
    if (!ortAvailable()) continue;
    std::vector<float> ours = readNpyF32(out + "/output.npy");
    std::vector<float> theirs =
        ortOutput(model, out, (dir.path() / (std::string("ort") + batch)).string(), "output");
    ASSERT_EQ(ours.size(), static_cast<size_t>(std::stoi(batch)) * 21 * 56 * 56);
    ASSERT_EQ(theirs.size(), ours.size());
    double error = errorOverScale(ours, theirs);
    std::printf("MobileNetV3 batch %s vs ONNX Runtime: max abs error / max |output| %.3g\n", batch,
                error);
    EXPECT_LE(error, 1e-4);
  }
}

/// tests/data/onnx/torch_segnet_dynamic.onnx is what torch.onnx.export
/// writes at opset 13 with batch, height and width dynamic: HardSwish as
/// HardSigmoid + Mul, ReLU6 as Clip with Constant bounds, a Resize by
/// Constant scales and one to the input's size through Shape -> Slice ->
/// Concat (see make_models.py). After the default passes fold those
/// Constants and the size chain, only the decoder's Add of two runtime
/// tensors is left to the reference (the BN after the ConvTranspose folds
/// into it, deconv_bn_act); at
/// two shapes the output matches the reference and ONNX Runtime.
TEST(CliOrtReference, TorchExportedSegNetOnednnMatchesReferenceAndOrt) {
  std::string model = sourcePath("tests/data/onnx/torch_segnet_dynamic.onnx");
  TempDir dir;
  auto leftOps = [&](const std::vector<std::string>& extra) {
    std::string report = (dir.path() / "report.json").string();
    std::vector<std::string> args{"partition",       model,      "--backend", "onednn", "--shape",
                                  "input=1,3,64,64", "--report", report};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult part = runCli(args);
    EXPECT_EQ(part.exitCode, 0) << part.err;
    // A named object: a range-for over a member of the temporary parse()
    // result would read it after it died.
    nlohmann::json parsed = nlohmann::json::parse(readFile(report));
    std::vector<std::string> ops;
    for (const nlohmann::json& r : parsed["rejected"]) ops.push_back(r["op"].get<std::string>());
    std::sort(ops.begin(), ops.end());
    return ops;
  };
  // The decoder's Add of two run-time tensors is a binary region: nothing
  // is left to the reference.
  EXPECT_THAT(leftOps({}), ::testing::IsEmpty());
  // Without the passes, the Clip's bounds and the Resizes' scales and sizes
  // are not constants yet, and nothing folds the size computation.
  std::vector<std::string> raw = leftOps({"--passes", "none"});
  for (const char* op : {"Clip", "Resize", "Shape", "Concat", "Constant"})
    EXPECT_THAT(raw, ::testing::Contains(op)) << op;

  for (const char* shape : {"1,3,64,64", "2,3,48,80"}) {
    std::string out = (dir.path() / (std::string("out") + shape)).string();
    CliResult run =
        runCli({"run", model, "--backend", "onednn", "--shape", std::string("input=") + shape,
                "--random-inputs", "1", "--output-dir", out, "--check"});
    ASSERT_EQ(run.exitCode, 0) << run.err;
    EXPECT_THAT(run.out, ::testing::HasSubstr(", ok\n"));
    if (!ortAvailable()) continue;
    std::vector<float> ours = readNpyF32(out + "/logits.npy");
    std::vector<float> theirs =
        ortOutput(model, out, (dir.path() / (std::string("ort") + shape)).string(), "logits");
    ASSERT_FALSE(ours.empty());
    ASSERT_EQ(theirs.size(), ours.size());
    double error = errorOverScale(ours, theirs);
    std::printf("torch-exported segnet %s vs ONNX Runtime: max abs error / max |output| %.3g\n",
                shape, error);
    EXPECT_LE(error, 1e-4);
  }
}

}  // namespace
}  // namespace subgraph::cli::testing
