//===- tests/fuzz/make_seed_corpus.cpp - Writes the seed corpus to disk -===//
//
// fuzz_seed_corpus OUT_DIR [SOURCE_DIR]: writes OUT_DIR/<harness>/<seed>
// for every harness, for tools/fuzz.sh. Existing files are overwritten,
// others (what libFuzzer added) are left alone.
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "seed_corpus.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: fuzz_seed_corpus OUT_DIR [SOURCE_DIR]\n");
    return 2;
  }
  subgraph::fuzz::SeedSources sources;
  if (argc > 2) sources.sourceDir = argv[2];
  // The names of allHarnesses(), spelled out so that this program links
  // only the seed builder, not every harness and library.
  for (const char* harness : {"onnx_import", "text_format", "partition", "run"}) {
    fs::path dir = fs::path(argv[1]) / harness;
    fs::create_directories(dir);
    size_t count = 0, bytes = 0;
    for (const auto& seed : subgraph::fuzz::seedCorpus(harness, sources)) {
      std::ofstream(dir / seed.name, std::ios::binary) << seed.bytes;
      ++count;
      bytes += seed.bytes.size();
    }
    std::printf("%s: %zu seeds, %zu bytes\n", harness, count, bytes);
  }
  return 0;
}
