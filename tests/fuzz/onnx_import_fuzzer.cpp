//===- tests/fuzz/onnx_import_fuzzer.cpp - Raw bytes through the ONNX importer -===//
//
// The importer's promise (include/subgraph/onnx/onnx_import.h) is that any
// byte string gives a graph or one error line, within the configured limits.
// The limits here are tight so that a single input cannot make the fuzzer
// spend its time allocating: a 1 MiB model, 1 MiB tensors, 10k nodes.
// Whatever imports is then verified, printed and exported again, which
// exercises the code that trusts an imported graph.
//
//===----------------------------------------------------------------------===//
#include <string_view>

#include "fuzz_harness.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/onnx/onnx_export.h"
#include "subgraph/onnx/onnx_import.h"

namespace subgraph::fuzz {

int fuzzOnnxImport(const uint8_t* data, size_t size) {
  ImportOptions options;
  options.maxModelBytes = uint64_t{1} << 20;
  options.maxTensorBytes = uint64_t{1} << 20;
  options.maxTotalInitializerBytes = uint64_t{4} << 20;
  options.maxNodes = 10'000;
  options.maxSubgraphDepth = 8;
  options.maxDimSize = int64_t{1} << 20;
  options.allowUnknownOps = true;
  // Shape inference runs on hostile dims too; that is where overflow bugs
  // live (see the CheckedInt work in core/ir).
  options.runShapeInference = size % 2 == 0;
  options.sourceName = "fuzz.onnx";
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  StatusOr<std::unique_ptr<Graph>> graph = importOnnxBytes(bytes, options);
  if (!graph.isOk()) {
    if (graph.status().message().empty()) invariantViolated("import failed with an empty message");
    return 0;
  }
  VerifyOptions verifyOptions;
  verifyOptions.allowUnknownOps = true;
  verifyOptions.allowUnknownAttributes = true;
  (void)verify(**graph, verifyOptions);
  (void)printGraph(**graph);
  (void)exportOnnxBytes(**graph);
  return 0;
}

}  // namespace subgraph::fuzz
