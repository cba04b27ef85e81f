//===- tests/fuzz/invariant.cpp - How a harness reports a broken invariant -===//
//
// One abort path for every harness, linked into the libFuzzer executables
// and the replay test alike.
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <cstdlib>

#include "fuzz_harness.h"

namespace subgraph::fuzz {

void invariantViolated(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
  std::fflush(stderr);
  // abort() rather than a return code: libFuzzer saves the input as a crash
  // and gtest's replay reports a death, both naming this line.
  std::abort();
}

}  // namespace subgraph::fuzz
