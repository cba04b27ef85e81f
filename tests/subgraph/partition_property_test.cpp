//===- tests/subgraph/partition_property_test.cpp - Random DAGs vs an oracle -===//
//
// Property-based test of the partitioner: random DAGs crossed with random
// selectors, filters, property rejections and options, each result checked
// against brute-force oracles that know nothing of ranks or windows:
//  * the fused graph verifies and is acyclic, and so is the quotient of the
//    input graph by the regions (acyclic across regions);
//  * every region is weakly connected and convex in the input graph;
//  * every node is in at most one region, and the report accounts for each
//    node exactly once (in a region, or rejected with a reason);
//  * inlining every fused node's body gives back the input graph exactly:
//    the same nodes, reading and defining the same value names;
//  * graph inputs and outputs, their order and names, are unchanged;
//  * the selector is Reset before every use;
//  * partitioning a copy again gives the same report and graph.
//
// The random graphs, selectors and the oracle are the test kit's
// (testing/testkit/), shared with the partitioner's fuzzer and `subgraph
// check-plugin`; this file adds Reset() tracking and determinism.
//
// Cases: SUBGRAPH_PROPTEST_CASES (default 100000). Each case has its own
// seed, printed on failure; SUBGRAPH_PROPTEST_SEED=<seed> replays that one
// case alone.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "partition_test_util.h"
#include "testkit/partition_oracle.h"
#include "testkit/random_partition.h"

namespace subgraph::partition {
namespace {

/// Checks one case; returns "" or what is wrong. With `verbose` (a replay)
/// it prints the input graph and the partitioned graph.
std::string checkCase(uint64_t seed, bool verbose = false) {
  testkit::SeededRandom rng(seed);
  std::unique_ptr<Graph> graph = testkit::randomStructuralGraph(rng);
  std::unique_ptr<Graph> original = graph->clone();
  std::unique_ptr<Graph> again = graph->clone();
  int resetViolations = 0;
  std::vector<SubgraphBackend> backends = testkit::randomBackends(rng, &resetViolations);

  if (verbose) std::cout << "input graph:\n" << printGraph(*graph);
  StatusOr<PartitionReport> result = partitionGraph(*graph, backends);
  if (verbose) {
    std::cout << "after partitioning:\n" << printGraph(*graph);
    if (result.isOk()) std::cout << "report:\n" << reportToJson(*result) << "\n";
  }
  if (!result.isOk()) return "partitionGraph failed: " + result.status().message();
  const PartitionReport& report = *result;
  if (resetViolations) return "a selector was reused without Reset()";
  if (std::string error = testkit::checkPartition(*original, *graph, report); !error.empty())
    return error;

  // Determinism, on a copy with freshly made backends of the same seed.
  if (seed % 8 == 0) {
    testkit::SeededRandom replay(seed);
    testkit::randomStructuralGraph(replay);
    std::vector<SubgraphBackend> same = testkit::randomBackends(replay);
    StatusOr<PartitionReport> second = partitionGraph(*again, same);
    if (!second.isOk()) return "second run failed";
    PartitionReport a = report, b = *second;
    a.partitionMs = b.partitionMs = 0;
    if (reportToJson(a) != reportToJson(b)) return "reports differ between identical runs";
    if (printGraph(*graph) != printGraph(*again)) return "graphs differ between identical runs";
  }
  return {};
}

uint64_t envNumber(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  return std::strtoull(text, nullptr, 0);
}

/// Random DAGs x random selectors against the brute-force oracles.
TEST(PartitionProperty, RandomGraphsAgainstOracle) {
  if (const char* replay = std::getenv("SUBGRAPH_PROPTEST_SEED"); replay && *replay) {
    uint64_t seed = std::strtoull(replay, nullptr, 0);
    std::cout << "replaying partition property case seed " << seed << "\n";
    std::string error = checkCase(seed, /*verbose=*/true);
    EXPECT_EQ(error, "") << "case seed " << seed;
    return;
  }
  const uint64_t cases = envNumber("SUBGRAPH_PROPTEST_CASES", 100000);
  const uint64_t base = envNumber("SUBGRAPH_PROPTEST_BASE_SEED", 0x5eed0000);
  std::cout << "partition property test: " << cases << " cases, seeds " << base << ".."
            << base + cases - 1 << "\n";
  size_t failures = 0;
  for (uint64_t i = 0; i < cases && failures < 5; ++i) {
    uint64_t seed = base + i;
    std::string error = checkCase(seed);
    if (error.empty()) continue;
    ++failures;
    ADD_FAILURE() << "case seed " << seed << ": " << error
                  << "\n  replay: SUBGRAPH_PROPTEST_SEED=" << seed
                  << " partition_tests --gtest_filter=PartitionProperty.*";
  }
}

/// The oracle itself must be able to fail: with n0 -> n1 -> n2 and
/// n0 -> n2, {n0, n2} is not convex while {n0, n1} and {n1, n2} are.
TEST(PartitionProperty, OracleDetectsNonConvexRegion) {
  testkit::Reachability reach({{1, 2}, {2}, {}});
  EXPECT_FALSE(testkit::isConvex(reach, std::vector<NodeId>{0, 2}));
  EXPECT_TRUE(testkit::isConvex(reach, std::vector<NodeId>{0, 1}));
  EXPECT_TRUE(testkit::isConvex(reach, std::vector<NodeId>{1, 2}));
}

}  // namespace
}  // namespace subgraph::partition
