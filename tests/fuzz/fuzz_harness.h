//===- tests/fuzz/fuzz_harness.h - The fuzz harnesses as plain functions -*- C++ -*-===//
//
// Each harness is a plain function so that one body serves two drivers:
// libFuzzer (a thin LLVMFuzzerTestOneInput wrapper, clang only, built by
// tools/fuzz.sh) and the replay test (tests/fuzz/replay_test.cpp, any
// compiler, run by ctest in every preset), which feeds the seed corpus and
// every file under tests/fuzz/regressions/<harness>/ through the same code.
//
// A harness returns 0 for every input. A bug shows as a crash, a sanitizer
// report, an uncaught exception or a broken invariant (which aborts with a
// one-line message on stderr), never as a return value.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace subgraph::fuzz {

/// Raw bytes -> importOnnxBytes (with tight limits) -> verify; an imported
/// graph must also print and parse back.
int fuzzOnnxImport(const uint8_t* data, size_t size);

/// Bytes as text -> parseGraph; a parsed graph must print, and the printed
/// form must parse back and print identically.
int fuzzTextFormat(const uint8_t* data, size_t size);

/// Bytes drive a random DAG and random selectors, filters, rejections and
/// property options; the partitioned graph is checked against brute-force
/// oracles (acyclic, convex and connected regions, each node in at most one
/// region, inlining gives back the input).
int fuzzPartition(const uint8_t* data, size_t size);

/// Bytes as a text graph with tiny tensors -> a reference-backend session
/// under a memory cap -> compile and run twice on inputs drawn from the
/// text's hash; the caller's inputs must stay unmodified and both runs agree.
int fuzzRun(const uint8_t* data, size_t size);

/// One harness: its name (also the folder name under regressions/) and its
/// function.
struct Harness {
  const char* name;
  int (*fn)(const uint8_t*, size_t);
};

/// Every harness, in a stable order.
const std::vector<Harness>& allHarnesses();

/// Aborts with "fuzz invariant violated: <what>" on stderr. Used for checks
/// that are bugs when they fail, so that libFuzzer records the input.
[[noreturn]] void invariantViolated(const std::string& what);

}  // namespace subgraph::fuzz
