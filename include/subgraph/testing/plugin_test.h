//===- subgraph/testing/plugin_test.h - GoogleTest kit for backend plugins -*- C++ -*-===//
//
// subgraph::testing, the test library plugin authors link to
// (find_package(subgraph), target subgraph::testing): a GoogleTest fixture
// that loads a plugin and partitions graphs written in subgraph's text
// format, predicates for EXPECT_TRUE/ASSERT_TRUE about the regions, and a
// numerics check against the reference backend:
//
//   class MyPluginTest : public subgraph::testkit::PluginTest {
//    protected:
//     void SetUp() override { ASSERT_TRUE(LoadPlugin("/abs/path/my_backend.so")); }
//   };
//   TEST_F(MyPluginTest, FusesConvBn) {
//     subgraph::testkit::PartitionResult r = Partition(R"(graph @g(...) { ... })");
//     EXPECT_TRUE(HasRegions(r, 1));
//     EXPECT_TRUE(HasRegionWithOps(r, {"Conv", "BatchNormalization"}));
//     EXPECT_TRUE(IsNotFused(r, "relu", "no selector"));
//     EXPECT_TRUE(IsAcyclicAndConvex(r));
//     EXPECT_TRUE(MatchesReference(kGraph, /*seed=*/1));
//   }
//
// The namespace is subgraph::testkit, not subgraph::testing, so that code
// inside namespace subgraph can keep writing `testing::` for GoogleTest.
// The library itself does not link GoogleTest: everything it computes
// comes back as a Verdict, and the inline functions below turn verdicts
// into ::testing::AssertionResult in the test's own GoogleTest.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace subgraph::testkit {

/// Pass or fail, with what went wrong (or what was found) in words.
struct Verdict {
  bool ok = false;
  std::string message;
};

/// One fused region, as the partition report lists it.
struct Region {
  int id = 0;
  std::string backend;               ///< The backend that fused it.
  std::string property;              ///< Its property.
  std::string fusedNode;             ///< Name of the fused node that replaced it.
  std::vector<std::string> nodes;    ///< Node names, in topological order.
  std::vector<std::string> opTypes;  ///< Their op types, in the same order.
};

/// A node in no region, and the report's reason.
struct LeftOutNode {
  std::string node;    ///< Its name.
  std::string op;      ///< Its qualified op type.
  std::string kind;    ///< "no-selector", "filter", "cycle", "min-size", ...
  std::string reason;  ///< The report's reason text.
};

/// The outcome of partitioning one graph with the plugin's backend.
struct PartitionResult {
  /// False if the graph did not parse or partitioning failed; see error.
  bool ok = false;
  std::string error;
  std::vector<Region> regions;
  std::vector<LeftOutNode> leftOut;
  /// The graph after partitioning, in the text format.
  std::string partitionedText;
  /// The partition report as JSON.
  std::string reportJson;
  /// What the oracle found wrong (cycle, non-convex region, node in two
  /// regions, inputs/outputs changed, Reset not honoured); "" if nothing.
  std::string invariantProblem;
};

/// A loaded backend: a plugin by absolute path or by name on the plugin
/// search path ($SUBGRAPH_PLUGIN_PATH, then subgraph's plugin directory).
class Backend {
 public:
  /// Loads `nameOrPath`; null with `*error` set to one line on failure.
  static std::shared_ptr<Backend> open(const std::string& nameOrPath, std::string* error);
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  /// The backend name.
  std::string name() const;
  /// What it registers, one "key: value" line each.
  std::vector<std::string> describe() const;
  /// Parses `graphText` (the text format) and partitions it.
  PartitionResult partition(const std::string& graphText) const;
  /// Runs `graphText` partitioned for this backend and unpartitioned on the
  /// reference backend on random inputs drawn from `seed`; ok if every
  /// output agrees within `tolerance` (absolute plus relative).
  Verdict compareWithReference(const std::string& graphText, uint64_t seed, double tolerance) const;
  /// The `subgraph check-plugin` run: `cases` random graphs from seed
  /// `seed` on; ok if all pass, else the smallest failing graph and seed.
  Verdict conformance(size_t cases, uint64_t seed, const std::vector<std::string>& ops = {}) const;

 private:
  struct Impl;
  explicit Backend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Exactly `count` regions.
Verdict checkRegionCount(const PartitionResult& result, size_t count);
/// A region whose op types are exactly `ops` (as a multiset).
Verdict checkRegionWithOps(const PartitionResult& result, std::vector<std::string> ops);
/// A region whose node names are exactly `nodes` (as a set).
Verdict checkRegionWithNodes(const PartitionResult& result, std::vector<std::string> nodes);
/// `node` in no region, and its reason contains `reasonPart`.
Verdict checkNotFused(const PartitionResult& result, const std::string& node,
                      const std::string& reasonPart);
/// The partitioned graph is acyclic, each region convex, and every other
/// invariant of the oracle holds.
Verdict checkInvariants(const PartitionResult& result);

/// A verdict as GoogleTest's AssertionResult, with the partitioned graph
/// appended on failure when one is known.
inline ::testing::AssertionResult toAssertion(const Verdict& v,
                                              const PartitionResult* r = nullptr) {
  if (v.ok) return ::testing::AssertionSuccess() << v.message;
  ::testing::AssertionResult failure = ::testing::AssertionFailure() << v.message;
  if (r && !r->partitionedText.empty()) failure << "\npartitioned graph:\n" << r->partitionedText;
  return failure;
}

/// EXPECT_TRUE(HasRegions(r, 2)).
inline ::testing::AssertionResult HasRegions(const PartitionResult& r, size_t count) {
  return toAssertion(checkRegionCount(r, count), &r);
}
/// EXPECT_TRUE(HasRegionWithOps(r, {"Conv", "BatchNormalization"})).
inline ::testing::AssertionResult HasRegionWithOps(const PartitionResult& r,
                                                   std::vector<std::string> ops) {
  return toAssertion(checkRegionWithOps(r, std::move(ops)), &r);
}
/// EXPECT_TRUE(HasRegionWithNodes(r, {"conv1", "bn1"})).
inline ::testing::AssertionResult HasRegionWithNodes(const PartitionResult& r,
                                                     std::vector<std::string> nodes) {
  return toAssertion(checkRegionWithNodes(r, std::move(nodes)), &r);
}
/// EXPECT_TRUE(IsNotFused(r, "relu1", "no selector")): `reasonPart` must
/// occur in the report's reason for the node.
inline ::testing::AssertionResult IsNotFused(const PartitionResult& r, const std::string& node,
                                             const std::string& reasonPart) {
  return toAssertion(checkNotFused(r, node, reasonPart), &r);
}
/// EXPECT_TRUE(IsAcyclicAndConvex(r)).
inline ::testing::AssertionResult IsAcyclicAndConvex(const PartitionResult& r) {
  return toAssertion(checkInvariants(r), &r);
}

/// Fixture: load the plugin in SetUp with ASSERT_TRUE(LoadPlugin(...)),
/// then partition graphs and compare numerics in the tests.
class PluginTest : public ::testing::Test {
 protected:
  /// Loads the plugin (absolute path, or name on the search path).
  ::testing::AssertionResult LoadPlugin(const std::string& nameOrPath) {
    std::string error;
    backend_ = Backend::open(nameOrPath, &error);
    if (!backend_) return ::testing::AssertionFailure() << error;
    return ::testing::AssertionSuccess();
  }
  /// The loaded backend (null before LoadPlugin succeeded).
  const std::shared_ptr<Backend>& backend() const { return backend_; }
  /// Parses and partitions `graphText`; fails the test if that fails.
  PartitionResult Partition(const std::string& graphText) {
    if (!backend_) {
      ADD_FAILURE() << "Partition() before a successful LoadPlugin()";
      return {};
    }
    PartitionResult r = backend_->partition(graphText);
    if (!r.ok) ADD_FAILURE() << r.error;
    return r;
  }
  /// EXPECT_TRUE(MatchesReference(text, seed)): the partitioned graph
  /// computes what the reference computes on seeded random inputs.
  ::testing::AssertionResult MatchesReference(const std::string& graphText, uint64_t seed,
                                              double tolerance = 1e-3) {
    if (!backend_) return ::testing::AssertionFailure() << "no plugin loaded";
    return toAssertion(backend_->compareWithReference(graphText, seed, tolerance));
  }
  /// EXPECT_TRUE(PassesConformance(200)): `subgraph check-plugin` in a test;
  /// `ops` (catalog names, as --ops takes) instead of the probed ones.
  ::testing::AssertionResult PassesConformance(size_t cases, uint64_t seed = 1,
                                               const std::vector<std::string>& ops = {}) {
    if (!backend_) return ::testing::AssertionFailure() << "no plugin loaded";
    return toAssertion(backend_->conformance(cases, seed, ops));
  }

 private:
  std::shared_ptr<Backend> backend_;
};

}  // namespace subgraph::testkit
