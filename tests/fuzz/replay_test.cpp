//===- tests/fuzz/replay_test.cpp - Seeds and regressions through the harnesses -===//
//
// The cheap half of fuzzing that runs in every CI preset (GCC, Release and
// ASan+UBSan): each harness function gets its generated seed corpus and
// every saved regression input under tests/fuzz/regressions/<harness>/.
// A harness aborts on a bug, so a failure here is a crash with the
// harness's one-line message, and the input named on stdout just before.
// The libFuzzer half (new inputs, coverage feedback) is tools/fuzz.sh.
//
// With SUBGRAPH_FUZZ_REPLAY_STRIDE=n (4 by default in sanitizer builds) only
// every n-th ONNX node test is used and the two large zoo models are
// skipped, to keep the sanitizer run short.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz_harness.h"
#include "seed_corpus.h"

namespace subgraph::fuzz {
namespace {

namespace fs = std::filesystem;

std::string sourceDir() {
  const char* dir = std::getenv("SUBGRAPH_SOURCE_DIR");
  return dir ? dir : SUBGRAPH_FUZZ_SOURCE_DIR;
}

const Harness& harness(const std::string& name) {
  for (const Harness& h : allHarnesses())
    if (name == h.name) return h;
  std::abort();
}

void feed(const Harness& h, const std::string& label, const std::string& bytes) {
  // Printed before the call so that a crash names its input.
  std::printf("[%s] %s (%zu bytes)\n", h.name, label.c_str(), bytes.size());
  std::fflush(stdout);
  h.fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

void replaySeeds(const std::string& name) {
  SeedSources sources;
  sources.sourceDir = sourceDir();
#ifdef SUBGRAPH_FUZZ_DEFAULT_STRIDE
  sources.onnxStride = SUBGRAPH_FUZZ_DEFAULT_STRIDE;
#endif
  if (const char* stride = std::getenv("SUBGRAPH_FUZZ_REPLAY_STRIDE"); stride && *stride)
    sources.onnxStride = std::strtoull(stride, nullptr, 10);
  // Sampling means a slow (sanitizer) build: skip building ResNet-50's and
  // MobileNetV2's random weights too.
  sources.largeZooModels = sources.onnxStride <= 1;
  std::vector<Seed> seeds = seedCorpus(name, sources);
  ASSERT_FALSE(seeds.empty()) << "no seeds for " << name;
  for (const Seed& seed : seeds) feed(harness(name), seed.name, seed.bytes);
  std::printf("%s: %zu seeds replayed\n", name.c_str(), seeds.size());
}

/// Every file under tests/fuzz/regressions/<name>/, sorted.
void replayRegressions(const std::string& name) {
  fs::path dir = fs::path(sourceDir()) / "tests" / "fuzz" / "regressions" / name;
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(dir, ec))
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_regular_file() && entry.path().filename() != "README.md")
        files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    feed(harness(name), file.filename().string(), bytes.str());
  }
  std::printf("%s: %zu regression inputs replayed\n", name.c_str(), files.size());
}

TEST(FuzzReplay, OnnxImportSeeds) { replaySeeds("onnx_import"); }
TEST(FuzzReplay, TextFormatSeeds) { replaySeeds("text_format"); }
TEST(FuzzReplay, PartitionSeeds) { replaySeeds("partition"); }
TEST(FuzzReplay, RunSeeds) { replaySeeds("run"); }

/// Every input a fuzzer ever crashed on stays fixed.
TEST(FuzzReplay, Regressions) {
  for (const Harness& h : allHarnesses()) replayRegressions(h.name);
}

/// The replay must be able to fail: a broken invariant aborts the process.
TEST(FuzzReplayDeathTest, InvariantViolationAborts) {
  EXPECT_DEATH(invariantViolated("test"), "fuzz invariant violated: test");
}

}  // namespace
}  // namespace subgraph::fuzz
