//===- tests/fuzz/partition_fuzzer.cpp - Fuzzer-driven graphs and selectors -===//
//
// The partitioner property test (tests/subgraph/partition_property_test.cpp)
// draws graphs and selectors from a seeded PRNG; here the fuzzer's bytes
// are the randomness, so coverage feedback steers towards selector answers
// and graph shapes the PRNG rarely produces. Both use the test kit's random
// graphs and selectors (testing/testkit/random_partition.h) and its
// brute-force oracle (testing/testkit/partition_oracle.h): the result
// verifies and is acyclic, every node is in at most one region and the
// report accounts for each once, each region is convex and weakly connected,
// inlining the fused nodes gives back the input graph, and graph inputs and
// outputs are unchanged.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "fuzz_harness.h"
#include "subgraph/partition/partitioner.h"
#include "testkit/partition_oracle.h"
#include "testkit/random_partition.h"

namespace subgraph::fuzz {
namespace {

/// The fuzzer's bytes as a RandomSource: one byte per small choice, eight
/// per word, zeros once exhausted, so every input, however short,
/// describes one complete case.
class ByteStream final : public testkit::RandomSource {
 public:
  ByteStream(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t next() override {
    uint64_t w = 0;
    for (int i = 0; i < 8; ++i) w = w << 8 | byte();
    return w;
  }
  size_t below(size_t n) override { return n == 0 ? 0 : byte() % n; }

 private:
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace

int fuzzPartition(const uint8_t* data, size_t size) {
  ByteStream in(data, size);
  std::unique_ptr<Graph> graph = testkit::randomStructuralGraph(in);
  std::unique_ptr<Graph> original = graph->clone();
  std::vector<partition::SubgraphBackend> backends = testkit::randomBackends(in);
  partition::PartitionOptions options;
  options.reportContested = in.percent(50);
  StatusOr<partition::PartitionReport> result = partitionGraph(*graph, backends, options);
  if (!result.isOk()) invariantViolated("partitionGraph failed: " + result.status().message());
  if (std::string error = testkit::checkPartition(*original, *graph, *result); !error.empty())
    invariantViolated(error);
  return 0;
}

}  // namespace subgraph::fuzz
