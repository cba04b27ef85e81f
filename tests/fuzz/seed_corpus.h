//===- tests/fuzz/seed_corpus.h - Seed inputs for every harness -*- C++ -*-===//
//
// The seed corpus is generated, not committed: zoo models (with their large
// weights shrunk to one element, which keeps the structure and drops the
// megabytes), the ONNX node test models Debian ships in libonnx-testdata,
// and tests/data/graphs/*.sg. tools/fuzz.sh writes it to disk through
// fuzz_seed_corpus; the replay test feeds it to the harnesses in memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace subgraph::fuzz {

/// One seed input.
struct Seed {
  std::string name;   ///< A file name, unique per harness.
  std::string bytes;  ///< The input.
};

/// Where seeds come from.
struct SeedSources {
  /// The repository root (for tests/data/graphs); empty skips those.
  std::string sourceDir;
  /// Folder of ONNX node tests (<dir>/<test>/model.onnx); a missing folder
  /// is skipped.
  std::string onnxTestDataDir = "/usr/share/libonnx-testdata/data/node";
  /// Take every n-th ONNX node test (1: all), to keep replays short.
  size_t onnxStride = 1;
  /// Include ResNet-50 and MobileNetV2 (their random weights take a moment
  /// to build even though the seeds are shrunk).
  bool largeZooModels = true;
};

/// The seeds for the harness named `harness` (see allHarnesses()).
std::vector<Seed> seedCorpus(const std::string& harness, const SeedSources& sources);

}  // namespace subgraph::fuzz
