//===- tests/fuzz/harness_common.cpp - The table of harnesses -===//
//
// The list of harnesses, so that the replay test, the seed corpus writer
// and tools/fuzz.sh agree on names. (The libFuzzer executables link only
// their own harness, so they do not need it.)
//
//===----------------------------------------------------------------------===//
#include "fuzz_harness.h"

namespace subgraph::fuzz {

const std::vector<Harness>& allHarnesses() {
  static const std::vector<Harness> harnesses = {
      {"onnx_import", fuzzOnnxImport},
      {"text_format", fuzzTextFormat},
      {"partition", fuzzPartition},
      {"run", fuzzRun},
  };
  return harnesses;
}

}  // namespace subgraph::fuzz
