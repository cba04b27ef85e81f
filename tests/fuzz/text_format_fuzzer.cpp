//===- tests/fuzz/text_format_fuzzer.cpp - Bytes through the text-format parser -===//
//
// Any text gives a graph or one error line with a position. A graph that
// parses must print, and printing is a fixed point after one round: the
// printed form parses back and prints the same, since the printer's output
// is the format's canonical spelling (docs/text-format.md).
//
//===----------------------------------------------------------------------===//
#include <string_view>

#include "fuzz_harness.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"

namespace subgraph::fuzz {

int fuzzTextFormat(const uint8_t* data, size_t size) {
  ParseOptions options;
  options.sourceName = "fuzz.sg";
  options.maxGraphDepth = 16;
  // A `splat` of an absurd shape must be refused, not materialized.
  options.maxConstantBytes = uint64_t{1} << 20;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, options);
  if (!graph.isOk()) {
    if (graph.status().message().empty()) invariantViolated("parse failed with an empty message");
    return 0;
  }
  VerifyOptions verifyOptions;
  verifyOptions.allowUnknownOps = true;
  (void)verify(**graph, verifyOptions);
  std::string printed = printGraph(**graph);
  StatusOr<std::unique_ptr<Graph>> again = parseGraph(printed, options);
  if (!again.isOk())
    invariantViolated("printed graph does not parse back: " + again.status().message());
  if (printGraph(**again) != printed) invariantViolated("print(parse(print(g))) != print(g)");
  return 0;
}

}  // namespace subgraph::fuzz
