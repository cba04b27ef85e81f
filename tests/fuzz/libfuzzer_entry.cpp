//===- tests/fuzz/libfuzzer_entry.cpp - libFuzzer's entry point for one harness -===//
//
// Compiled once per fuzz executable with SUBGRAPH_FUZZ_FUNCTION naming the
// harness (tests/fuzz/CMakeLists.txt), so the harness bodies stay plain
// functions that the GCC-built replay test calls too.
//
//===----------------------------------------------------------------------===//
#include "fuzz_harness.h"

#ifndef SUBGRAPH_FUZZ_FUNCTION
#error "SUBGRAPH_FUZZ_FUNCTION must name the harness function"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return subgraph::fuzz::SUBGRAPH_FUZZ_FUNCTION(data, size);
}
