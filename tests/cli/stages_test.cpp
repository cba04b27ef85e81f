//===- tests/cli/stages_test.cpp - Pipeline stages under memory limits ----===//
//
// api::planStages and `subgraph partition --stages/--devices/--memory-limit`:
// stages are contiguous in one topological order (values flow forward, so
// no cycle between stages), each fits its device's memory, their costs
// balance, and among cuts as balanced the one crossing the fewest bytes is
// taken; when no cut fits, one line says so.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "cli_runner.h"
#include "subgraph/api/stages.h"
#include "subgraph/ir/text_format.h"

namespace subgraph::cli::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Four MatMuls of equal cost whose outputs alternate thin (64 floats) and
// fat (512 floats).
constexpr const char* kAlternating = R"(
  graph @g(%x: f32[1, 512]) {
    %wa = const f32[512, 64] splat(0.01)
    %wb = const f32[64, 512] splat(0.01)
    %wc = const f32[512, 64] splat(0.01)
    %wd = const f32[64, 512] splat(0.01)
    %a = MatMul(%x, %wa) @a
    %b = MatMul(%a, %wb) @b
    %c = MatMul(%b, %wc) @c
    %d = MatMul(%c, %wd) @d
    return %d
  })";

std::vector<size_t> stageSizes(const api::StagePlan& plan) {
  std::vector<size_t> sizes;
  for (const api::Stage& s : plan.stages) sizes.push_back(s.nodes.size());
  return sizes;
}

/// Three stages over four equal nodes: any 2-1-1 split balances as well,
/// and the one cutting at the two thin values is taken (the greedy first
/// cut, after the fat %b, would cross 2304 bytes).
TEST(Stages, BalancedCutsCrossTheFewestBytes) {
  std::unique_ptr<Graph> g = parseGraphOrThrow(kAlternating);
  StatusOr<api::StagePlan> plan = api::planStages(*g, {{"d0", 0}, {"d1", 0}, {"d2", 0}});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  EXPECT_THAT(stageSizes(*plan), ElementsAre(1u, 2u, 1u));
  EXPECT_EQ(plan->crossingBytes, 2u * 64 * 4);
  EXPECT_EQ(plan->stages[0].sends.size(), 1u);
  EXPECT_EQ(plan->stages[0].sends[0].name, "a");
  EXPECT_EQ(plan->stages[0].sends[0].toStage, 1);
}

/// Branches: every value a stage reads comes from the same or an earlier
/// stage (no cycle between stages), and each stage fits its limit.
TEST(Stages, StagesRespectEdgesAndMemoryLimits) {
  std::unique_ptr<Graph> g = parseGraphOrThrow(R"(
    graph @g(%x: f32[64, 256]) {
      %w1 = const f32[256, 256] splat(0.01)
      %w2 = const f32[256, 256] splat(0.02)
      %w3 = const f32[256, 256] splat(0.03)
      %w4 = const f32[256, 256] splat(0.04)
      %a = MatMul(%x, %w1) @a
      %b = MatMul(%a, %w2) @b
      %c = MatMul(%a, %w3) @c
      %s = Add(%b, %c) @s
      %r = Relu(%s) @r
      %d = MatMul(%r, %w4) @d
      %y = Add(%d, %a) @y
      return %y
    })");
  // Two 256 KiB weights and the activations beside them never fit one
  // stage: four stages, one MatMul each.
  const uint64_t limit = 600 * 1024;
  StatusOr<api::StagePlan> plan =
      api::planStages(*g, {{"emu:0", limit}, {"emu:1", limit}, {"emu:2", limit}, {"emu:3", limit}});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  std::map<std::string, size_t> stageOf;
  for (size_t k = 0; k < plan->stages.size(); ++k) {
    EXPECT_LE(plan->stages[k].memoryBytes(), limit) << "stage " << k;
    EXPECT_GT(plan->stages[k].weightBytes, 0u);
    for (const std::string& n : plan->stages[k].nodes) stageOf[n] = k;
  }
  ASSERT_EQ(stageOf.size(), g->numNodes());
  for (const Node* node : g->nodes())
    for (size_t i = 0; i < node->numInputs(); ++i) {
      const Node* from = node->input(i) ? node->input(i)->producer() : nullptr;
      if (from) {
        EXPECT_LE(stageOf[from->displayName()], stageOf[node->displayName()])
            << from->displayName() << " -> " << node->displayName();
      }
    }
}

/// A graph output that a later stage also reads is sent to it, and a stage
/// model lists it once among its outputs.
TEST(Stages, AGraphOutputALaterStageReadsIsSent) {
  std::unique_ptr<Graph> g = parseGraphOrThrow(R"(
    graph @g(%x: f32[1, 512]) {
      %wa = const f32[512, 512] splat(0.01)
      %wb = const f32[512, 512] splat(0.01)
      %a = MatMul(%x, %wa) @a
      %b = MatMul(%a, %wb) @b
      return %a, %b
    })");
  StatusOr<api::StagePlan> plan = api::planStages(*g, {{"d0", 0}, {"d1", 0}});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  ASSERT_EQ(plan->stages[0].sends.size(), 1u);
  EXPECT_EQ(plan->stages[0].sends[0].name, "a");
  EXPECT_EQ(plan->crossingBytes, 512u * 4);
  StatusOr<std::unique_ptr<Graph>> first = api::stageGraph(*g, *plan, 0);
  StatusOr<std::unique_ptr<Graph>> second = api::stageGraph(*g, *plan, 1);
  ASSERT_TRUE(first.isOk() && second.isOk());
  ASSERT_EQ((*first)->outputs().size(), 1u);  // %a once: a graph output and sent
  EXPECT_EQ((*first)->outputs()[0]->name(), "a");
  ASSERT_EQ((*second)->inputs().size(), 1u);
  EXPECT_EQ((*second)->inputs()[0]->name(), "a");
  EXPECT_FALSE(api::stageGraph(*g, *plan, 2).isOk());
}

/// The negative side: limits no cut can meet fail in one line, naming the
/// node that fits no device, or the devices.
TEST(Stages, NoCutThatFitsIsAnError) {
  std::unique_ptr<Graph> g = parseGraphOrThrow(kAlternating);
  StatusOr<api::StagePlan> tiny = api::planStages(*g, {{"d0", 1024}, {"d1", 1024}});
  ASSERT_FALSE(tiny.isOk());
  EXPECT_EQ(tiny.status().code(), StatusCode::kLimitExceeded);
  EXPECT_THAT(tiny.status().message(),
              HasSubstr("no split into 2 stages fits: node 'a' alone needs more memory"));
  // Each node fits alone (a 128 KiB weight), but two devices hold only two.
  StatusOr<api::StagePlan> few = api::planStages(*g, {{"d0", 200 * 1024}, {"d1", 200 * 1024}});
  ASSERT_FALSE(few.isOk());
  EXPECT_THAT(few.status().message(), HasSubstr("no split into 2 stages fits the devices' memory"));
  EXPECT_EQ(api::planStages(*g, {}).status().code(), StatusCode::kUsage);
}

/// A BERT-base export (the zoo's, 85M parameters) over two devices of
/// 200 MiB each, less than the whole model needs: each stage fits, the
/// report says what each holds and what crosses, and the staged run gives
/// the one-device outputs exactly.
TEST(CliStages, BertBaseFitsTwoDevicesBelowItsSize) {
  TempDir dir;
  const std::string model = (dir.path() / "bert.sg").string();
  ASSERT_EQ(runCli({"zoo", "bert", "-o", model, "-q"}).exitCode, 0);
  CliResult r = runCli({"partition", model, "--backend", "onednn", "--devices", "emu:0,emu:1",
                        "--memory-limit", "200M", "--json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json json = nlohmann::json::parse(r.out);
  const nlohmann::json& stages = json["stages"]["stages"];
  ASSERT_EQ(stages.size(), 2u);
  uint64_t total = 0;
  for (const nlohmann::json& s : stages) {
    uint64_t bytes = s["weight_bytes"].get<uint64_t>() + s["activation_bytes"].get<uint64_t>();
    EXPECT_LE(bytes, uint64_t{200} << 20) << s.dump();
    total += bytes;
  }
  EXPECT_GT(total, uint64_t{200} << 20);  // the whole model would not fit one
  EXPECT_EQ(stages[0]["device"], "emu:0");
  EXPECT_FALSE(stages[0]["sends"].empty());
  CliResult text = runCli({"partition", model, "--backend", "onednn", "--stages", "2", "-q"});
  EXPECT_THAT(text.out, HasSubstr("stages: 2 (cost imbalance "));
  EXPECT_THAT(text.out, HasSubstr("stage 1 on dev:1: "));
  // Run so, on two emulated devices (emudev's regions of each stage on its
  // own device): each stage's session is held to its device's 200 MiB (its
  // compiled plan, constants and frame), and the outputs are the whole
  // model's on one device, bit for bit.
  const std::string at = dir.path().string();
  CliResult whole = runCli({"run", model, "--backend", "emudev", "--random-inputs", "2",
                            "--output-dir", at + "/whole", "-q"});
  ASSERT_EQ(whole.exitCode, 0) << whole.err;
  CliResult staged = runCli({"run", model, "--backend", "emudev", "--plugin-option",
                             "emudev.device_count=2", "--devices", "emu:0,emu:1", "--memory-limit",
                             "200M", "--random-inputs", "2", "--output-dir", at + "/staged"});
  ASSERT_EQ(staged.exitCode, 0) << staged.err;
  EXPECT_THAT(staged.out, HasSubstr("of 200.0 MiB"));
  const std::string want = readFile(at + "/whole/output.npy");
  ASSERT_FALSE(want.empty());
  EXPECT_TRUE(want == readFile(at + "/staged/output.npy")) << "the staged BERT output differs";
}

/// Each stage written as a model of its own (--stage-models): run one after
/// the other, each fed the graph inputs and what the stages before it sent,
/// they give the whole model's outputs bit for bit (the same kernels run
/// the same regions). The block's second stage reads the graph input again.
TEST(CliStages, StageModelsRunInTurnGiveTheWholeModelsOutputs) {
#if SUBGRAPH_CLI_TEST_HAVE_ONEDNN
  const std::string backend = "onednn";
#else
  const std::string backend = "NONE";
#endif
  TempDir dir;
  const std::string block = std::string(SUBGRAPH_SOURCE_DIR) + "/tests/data/graphs/resnet_block.sg";
  const std::string at = dir.path().string();
  CliResult split = runCli({"partition", block, "--backend", backend, "--stages", "2",
                            "--stage-models", at + "/stages", "-q"});
  ASSERT_EQ(split.exitCode, 0) << split.err;
  auto run = [&](const std::vector<std::string>& args) {
    std::vector<std::string> all = {"run"};
    all.insert(all.end(), args.begin(), args.end());
    for (const std::string& a : {std::string("--backend"), backend, std::string("-q")})
      all.push_back(a);
    CliResult r = runCli(all);
    EXPECT_EQ(r.exitCode, 0) << r.err;
  };
  run({block, "--random-inputs", "3", "--output-dir", at + "/whole"});
  run({at + "/stages/stage0.sg", "--input", "x=" + at + "/whole/inputs/x.npy", "--output-dir",
       at + "/s0"});
  run({at + "/stages/stage1.sg", "--input", "x=" + at + "/whole/inputs/x.npy", "--input",
       "relu2=" + at + "/s0/relu2.npy", "--output-dir", at + "/s1"});
  EXPECT_THAT(readFile(at + "/stages/stage1.sg"), HasSubstr("(%x: f32[1, 256, 56, 56], %relu2:"));
  const std::string whole = readFile(at + "/whole/y.npy");
  ASSERT_FALSE(whole.empty());
  EXPECT_TRUE(whole == readFile(at + "/s1/y.npy")) << "the chained stages' y differs";
  // The negative side: without --stages there are no stage models.
  EXPECT_TRUE(failsWithOneLine(
      runCli({"partition", block, "--backend", "NONE", "--stage-models", at + "/none"}), 2,
      "--stage-models needs --stages or --devices"));
}

/// A small CNN with a free batch: every op keeps the images apart.
constexpr const char* kFreeBatchCnn = R"(
  graph @g(%x: f32[N, 8, 16, 16]) {
    %w1 = const f32[16, 8, 3, 3] splat(0.02)
    %w2 = const f32[16, 16, 3, 3] splat(-0.01)
    %wg = const f32[16, 10] splat(0.05)
    %c1 = Conv(%x, %w1) {pads = [1, 1, 1, 1]} @conv1
    %r1 = Relu(%c1) @relu1
    %c2 = Conv(%r1, %w2) {pads = [1, 1, 1, 1]} @conv2
    %r2 = Relu(%c2) @relu2
    %p = GlobalAveragePool(%r2) @pool
    %f = Flatten(%p) @flatten
    %y = Gemm(%f, %wg) @fc
    return %y
  })";

/// run --stages --micro-batches: the batch of 8 split into 4, stage 0 of
/// micro-batch i+1 beside stage 1 of micro-batch i. The outputs equal the
/// stages run in turn (the program checks that itself) and the model run
/// whole, bit for bit.
TEST(CliStages, PipelinedRunGivesTheWholeRunsOutputs) {
  TempDir dir;
  const std::string model = dir.write("cnn.sg", kFreeBatchCnn);
  const std::string at = dir.path().string();
  CliResult whole = runCli({"run", model, "--shape", "x=8,8,16,16", "--random-inputs", "5",
                            "--output-dir", at + "/whole", "--dynamic-shapes"});
  ASSERT_EQ(whole.exitCode, 0) << whole.err;
  CliResult piped =
      runCli({"run", model, "--shape", "x=8,8,16,16", "--random-inputs", "5", "--stages", "2",
              "--micro-batches", "4", "--runs", "2", "--output-dir", at + "/piped"});
  ASSERT_EQ(piped.exitCode, 0) << piped.err;
  EXPECT_THAT(piped.out, HasSubstr("4 micro-batches over 2 stages, 2 runs: pipelined median"));
  EXPECT_THAT(piped.out, HasSubstr("outputs equal"));
  const std::string want = readFile(at + "/whole/y.npy");
  ASSERT_FALSE(want.empty());
  EXPECT_TRUE(want == readFile(at + "/piped/y.npy")) << "the pipelined y differs";
  // The negative side: a batch the micro-batches do not divide, and a model
  // whose ops mix the rows, are refused in one line.
  EXPECT_TRUE(failsWithOneLine(runCli({"run", model, "--shape", "x=6,8,16,16", "--random-inputs",
                                       "5", "--stages", "2", "--micro-batches", "4"}),
                               2, "which 4 micro-batches do not divide"));
  std::string mixing = kFreeBatchCnn;
  mixing.replace(mixing.find("%y = Gemm(%f, %wg) @fc"), 22,
                 "%g = Gemm(%f, %wg) @fc\n    %y = Softmax(%g) {axis = 0} @mix");
  EXPECT_TRUE(
      failsWithOneLine(runCli({"run", dir.write("mix.sg", mixing), "--shape", "x=8,8,16,16",
                               "--random-inputs", "5", "--stages", "2", "--micro-batches", "4"}),
                       1, "Softmax node 'mix' works along axis 0"));
  EXPECT_TRUE(
      failsWithOneLine(runCli({"run", model, "--random-inputs", "5", "--micro-batches", "4"}), 2,
                       "--micro-batches needs --stages or --devices"));
}

/// The micro-batch's dims are fixed before partitioning, so a plugin that
/// fuses only static shapes (emudev) forms its regions: the stages hold
/// fused nodes, fewer than the model's 7, and the run's outputs equal the
/// stages' in turn.
TEST(CliStages, PipelinedStagesOfADevicePluginHoldItsRegions) {
  TempDir dir;
  const std::string model = dir.write("cnn.sg", kFreeBatchCnn);
  CliResult r = runCli({"run", model, "--backend", "emudev", "--shape", "x=8,8,16,16",
                        "--random-inputs", "5", "--stages", "2", "--micro-batches", "4"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::smatch m0, m1;
  const std::regex stage0("stage 0 on dev:0: (\\d+) nodes"),
      stage1("stage 1 on dev:1: (\\d+) nodes");
  ASSERT_TRUE(std::regex_search(r.out, m0, stage0)) << r.out;
  ASSERT_TRUE(std::regex_search(r.out, m1, stage1)) << r.out;
  EXPECT_LT(std::stoi(m0[1]) + std::stoi(m1[1]), 7) << r.out;
  EXPECT_THAT(r.out, HasSubstr("outputs equal"));
}

/// Stages on 2 and 3 emulated devices (ABI 6: emudev's device_count),
/// each stage's regions on its own device with memory of its own: the
/// pipelined outputs equal the model run whole on one device, bit for
/// bit. A device the session was not given is one line.
TEST(CliStages, StagesOnSeveralDevicesOfOnePlugin) {
  TempDir dir;
  const std::string model = dir.write("cnn.sg", kFreeBatchCnn);
  const std::string at = dir.path().string();
  CliResult whole = runCli({"run", model, "--backend", "emudev", "--shape", "x=6,8,16,16",
                            "--random-inputs", "5", "--output-dir", at + "/whole"});
  ASSERT_EQ(whole.exitCode, 0) << whole.err;
  for (const char* devices : {"emu:0,emu:1", "emu:0,emu:1,emu:2"}) {
    const std::string out = at + "/" + devices;
    CliResult r = runCli({"run", model, "--backend", "emudev", "--plugin-option",
                          "emudev.device_count=3", "--devices", devices, "--shape", "x=6,8,16,16",
                          "--random-inputs", "5", "--micro-batches", "3", "--output-dir", out});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("stage 1 on emu:1:"));
    EXPECT_THAT(r.out, HasSubstr("outputs equal"));
    EXPECT_TRUE(readFile(at + "/whole/y.npy") == readFile(out + "/y.npy")) << devices;
  }
  EXPECT_TRUE(failsWithOneLine(
      runCli({"run", model, "--backend", "emudev", "--devices", "emu:0,emu:1", "--shape",
              "x=6,8,16,16", "--random-inputs", "5", "--micro-batches", "3"}),
      1, "device 'emu:1': plugin 'emudev' gives this session 1 'emu' device"));
}

/// Usage mistakes fail before the model is read; a drawing clusters by
/// stage.
TEST(CliStages, OptionsAndPicture) {
  TempDir dir;
  const std::string model = dir.write("m.sg", kAlternating);
  EXPECT_TRUE(
      failsWithOneLine(runCli({"partition", model, "--backend", "NONE", "--memory-limit", "1M"}), 2,
                       "--memory-limit needs --stages or --devices"));
  EXPECT_TRUE(failsWithOneLine(
      runCli({"partition", model, "--backend", "NONE", "--stages", "3", "--devices", "a,b"}), 2,
      "--stages 3 but --devices names 2 devices"));
  EXPECT_TRUE(failsWithOneLine(runCli({"partition", model, "--backend", "NONE", "--stages", "2",
                                       "--memory-limit", "1M,2M,3M"}),
                               2, "--memory-limit gives 3 limits for 2 devices"));
  EXPECT_TRUE(failsWithOneLine(
      runCli({"partition", model, "--backend", "NONE", "--stages", "2", "--memory-limit", "1K"}), 1,
      "no split into 2 stages fits"));
  const std::string dot = (dir.path() / "m.dot").string();
  CliResult r = runCli({"partition", model, "--backend", "NONE", "--stages", "2", "--dot", dot});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::string text = readFile(dot);
  EXPECT_THAT(text, HasSubstr("stage 0 on dev:0"));
  EXPECT_THAT(text, HasSubstr("stage 1 on dev:1"));
}

}  // namespace
}  // namespace subgraph::cli::testing
