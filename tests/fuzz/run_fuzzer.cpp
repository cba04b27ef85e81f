//===- tests/fuzz/run_fuzzer.cpp - Small text graphs on the reference backend -===//
//
// The fuzzer writes a text graph; whatever parses is loaded into a
// single-threaded reference session capped at 4 MiB of planned memory,
// compiled and run twice on small inputs derived from the text. The harness
// does not verify the graph itself: Session::load must reject a malformed
// one (a node missing a required input, a node with no outputs) with an
// error, as it does for every caller. Hostile
// shapes, Reshape targets and data-dependent sizes must end in an error
// naming the limit, never in an allocation of their size or a crash.
// Checked: run() never changes the caller's inputs, and a second run of the
// same inputs succeeds whenever the first did (frames are reused).
//
// Loops are in: the session's work limits (4096 loop iterations, 2^24 steps
// per kernel call) bound what a hostile trip count, sampling ratio or window
// asks for, well inside libFuzzer's timeout. The loop time limit stays off:
// a deadline could end one of the two runs and not the other.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "fuzz_harness.h"
#include "subgraph/ir/text_format.h"
#include "subgraph/runtime/session.h"

namespace subgraph::fuzz {
namespace {

using namespace subgraph::runtime;

constexpr int64_t kMaxInputElements = 4096;
constexpr size_t kMaxNodes = 64;

/// True if `graph` and the graphs nested in its attributes have more than
/// kMaxNodes nodes in all.
bool tooMuchWork(const Graph& graph, size_t& nodes) {
  for (Node* n : graph.nodes()) {
    if (++nodes > kMaxNodes) return true;
    for (const Attribute& a : n->attributes()) {
      if (a.kind() == AttrKind::kGraph && a.asGraph() && tooMuchWork(*a.asGraph(), nodes))
        return true;
      if (a.kind() == AttrKind::kGraphs)
        for (const auto& g : a.asGraphs())
          if (g && tooMuchWork(*g, nodes)) return true;
    }
  }
  return false;
}

/// Small values (ints in [-2, 2], floats in [-1, 1]) so that indices are
/// often valid and arithmetic stays finite; other dtypes are zero bytes.
std::optional<Tensor> makeInput(const TensorType& type, uint64_t& state) {
  if (!type.hasRank() || type.dtype == DataType::kString || type.dtype == DataType::kUndefined)
    return std::nullopt;
  std::vector<int64_t> dims;
  int64_t count = 1;
  for (const Dim& d : *type.shape) {
    dims.push_back(d.isStatic() ? d.size() : 2);
    count *= std::max<int64_t>(dims.back(), 1);
    if (count > kMaxInputElements) return std::nullopt;
  }
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const size_t width = dataTypeSize(type.dtype);
  std::vector<std::byte> bytes(static_cast<size_t>(n) * width);
  for (int64_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    int64_t small = static_cast<int64_t>(state >> 61) - 2;  // [-2, 5] -> mostly small
    std::byte* p = bytes.data() + static_cast<size_t>(i) * width;
    auto put = [&](auto value) { std::memcpy(p, &value, sizeof(value)); };
    switch (type.dtype) {
      case DataType::kFloat32: put(static_cast<float>(small) * 0.5f); break;
      case DataType::kFloat64: put(static_cast<double>(small) * 0.5); break;
      case DataType::kInt64: put(small); break;
      case DataType::kInt32: put(static_cast<int32_t>(small)); break;
      case DataType::kInt16: put(static_cast<int16_t>(small)); break;
      case DataType::kInt8: put(static_cast<int8_t>(small)); break;
      case DataType::kUInt8: put(static_cast<uint8_t>(small & 3)); break;
      case DataType::kBool: put(static_cast<uint8_t>(small & 1)); break;
      default: break;
    }
  }
  return Tensor(type.dtype, std::move(dims), std::move(bytes));
}

}  // namespace

int fuzzRun(const uint8_t* data, size_t size) {
  ParseOptions parseOptions;
  parseOptions.maxGraphDepth = 8;
  parseOptions.maxConstantBytes = uint64_t{64} << 10;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text, parseOptions);
  if (!graph.isOk()) return 0;
  size_t nodes = 0;
  if (tooMuchWork(**graph, nodes)) return 0;

  uint64_t state = std::hash<std::string_view>{}(text);
  std::vector<NamedTensor> inputs;
  for (Value* in : (*graph)->inputs()) {
    std::optional<Tensor> t = makeInput(in->type(), state);
    if (!t) return 0;
    inputs.push_back({in->name(), std::move(*t)});
  }
  // Deep copies of the input bytes: Tensor shares its buffer, so comparing
  // against a copied Tensor would not notice a kernel writing into it.
  std::vector<std::vector<std::byte>> before;
  for (const NamedTensor& t : inputs)
    before.emplace_back(t.tensor.bytes().begin(), t.tensor.bytes().end());

  SessionOptions options;
  options.threads = 1;
  options.memoryLimitBytes = uint64_t{4} << 20;
  options.work.loopIterations = 4096;
  options.work.loopSeconds = 0;  // a deadline would make two runs differ
  options.work.kernelWork = uint64_t{1} << 24;
  options.useArena = size % 2 == 0;
  Session session(options);
  Status loaded = session.load(std::move(graph).value());
  if (!loaded.isOk()) {
    if (loaded.message().empty()) invariantViolated("Session::load failed without a message");
    return 0;
  }
  if (!session.compile().isOk()) return 0;
  StatusOr<RunResult> first = session.run(inputs);
  StatusOr<RunResult> second = session.run(inputs);
  if (first.isOk() && !second.isOk())
    invariantViolated("a second run of the same inputs failed: " + second.status().message());
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto now = inputs[i].tensor.bytes();
    if (now.size() != before[i].size() || !std::equal(now.begin(), now.end(), before[i].begin()))
      invariantViolated("run() modified the caller's input '" + inputs[i].name + "'");
  }
  return 0;
}

}  // namespace subgraph::fuzz
