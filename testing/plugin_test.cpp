//===- testing/plugin_test.cpp - subgraph::testing, the installed test kit -===//
//
// The library behind include/subgraph/testing/plugin_test.h. It links the
// whole of subgraph (IR, partitioner, runtime, plugin loader) statically
// and hides it (--exclude-libs), so a plugin author's test depends on one
// shared library whose interface is std:: types only.
//
//===----------------------------------------------------------------------===//
#include "subgraph/testing/plugin_test.h"

#include <algorithm>

#include "subgraph/ir/text_format.h"
#include "subgraph/partition/partitioner.h"
#include "testkit/partition_oracle.h"
#include "testkit/plugin_check.h"

namespace subgraph::testkit {

struct Backend::Impl {
  BackendUnderTest backend;
};

Backend::Backend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Backend::~Backend() = default;

std::shared_ptr<Backend> Backend::open(const std::string& nameOrPath, std::string* error) {
  StatusOr<BackendUnderTest> opened = BackendUnderTest::open(nameOrPath);
  if (!opened.isOk()) {
    if (error) *error = opened.status().message();
    return nullptr;
  }
  auto impl = std::make_unique<Impl>(Impl{std::move(opened).value()});
  return std::shared_ptr<Backend>(new Backend(std::move(impl)));
}

std::string Backend::name() const { return impl_->backend.name(); }

std::vector<std::string> Backend::describe() const { return impl_->backend.describe(); }

PartitionResult Backend::partition(const std::string& graphText) const {
  PartitionResult result;
  StatusOr<std::unique_ptr<Graph>> parsed = parseGraph(graphText);
  if (!parsed.isOk()) {
    result.error = "the graph does not parse: " + parsed.status().message();
    return result;
  }
  std::unique_ptr<Graph> original = std::move(parsed).value();
  std::unique_ptr<Graph> graph = original->clone();
  std::vector<std::string> resetProblems;
  auto made = impl_->backend.instantiate(&resetProblems);
  if (!made.isOk()) {
    result.error = made.status().message();
    return result;
  }
  StatusOr<partition::PartitionReport> report = partition::partitionGraph(*graph, *made);
  if (!report.isOk()) {
    result.error = "partitioning fails: " + report.status().message();
    return result;
  }
  result.ok = true;
  for (const partition::RegionReport& r : report->regions) {
    Region region{r.id, r.backend, r.property, r.fusedNode, r.nodes, {}};
    for (NodeId id : r.nodeIds)
      region.opTypes.push_back(original->node(id) ? original->node(id)->opType() : "?");
    result.regions.push_back(std::move(region));
  }
  for (const partition::RejectedNode& n : report->rejected)
    result.leftOut.push_back({n.node, n.op, n.kind, n.reason});
  result.partitionedText = printGraph(*graph);
  result.reportJson = partition::reportToJson(*report);
  result.invariantProblem = checkPartition(*original, *graph, *report);
  if (result.invariantProblem.empty() && !resetProblems.empty())
    result.invariantProblem = resetProblems.front();
  return result;
}

Verdict Backend::compareWithReference(const std::string& graphText, uint64_t seed,
                                      double tolerance) const {
  StatusOr<std::unique_ptr<Graph>> parsed = parseGraph(graphText);
  if (!parsed.isOk()) return {false, "the graph does not parse: " + parsed.status().message()};
  const Graph& graph = **parsed;
  std::string problem =
      impl_->backend.compareWithReference(graph, randomInputs(graph, seed), tolerance);
  if (!problem.empty()) return {false, problem + " (input seed " + std::to_string(seed) + ")"};
  return {true, "outputs agree with the reference"};
}

Verdict Backend::conformance(size_t cases, uint64_t seed,
                             const std::vector<std::string>& ops) const {
  CheckOptions options;
  options.cases = cases;
  options.seed = seed;
  options.ops = ops;
  CheckSummary summary = runConformance(impl_->backend, options);
  std::string text = std::to_string(summary.passed) + " passed, " + std::to_string(summary.failed) +
                     " failed; " + std::to_string(summary.casesWithRegions) + " of " +
                     std::to_string(cases) + " cases formed regions";
  for (const CaseFailure& f : summary.failures) text += "\n" + formatFailure(f, name());
  // A run in which nothing was fused, or no kernel ran, tested nothing.
  if (std::string why = unexercised(summary, name()); !why.empty())
    return {false, text + ": " + why};
  return {summary.failed == 0, text};
}

Verdict checkRegionCount(const PartitionResult& r, size_t count) {
  if (!r.ok) return {false, r.error};
  if (r.regions.size() == count) return {true, std::to_string(count) + " regions"};
  return {false, "expected " + std::to_string(count) + " regions, the partitioner made " +
                     std::to_string(r.regions.size())};
}

namespace {
std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return "{" + out + "}";
}

std::string regionsListed(const PartitionResult& r, bool ops) {
  std::string out;
  for (const Region& region : r.regions)
    out += "\n  region " + std::to_string(region.id) + ": " +
           listed(ops ? region.opTypes : region.nodes);
  return out.empty() ? " none" : out;
}

/// A region whose op types (`ops`) or node names are exactly `wanted`.
Verdict regionWithExactly(const PartitionResult& r, std::vector<std::string> wanted, bool ops) {
  if (!r.ok) return {false, r.error};
  std::sort(wanted.begin(), wanted.end());
  for (const Region& region : r.regions) {
    std::vector<std::string> have = ops ? region.opTypes : region.nodes;
    std::sort(have.begin(), have.end());
    if (have == wanted)
      return {true, "region " + std::to_string(region.id) + " has " + listed(wanted)};
  }
  return {false, std::string("no region has exactly the ") + (ops ? "ops " : "nodes ") +
                     listed(wanted) + "; regions:" + regionsListed(r, ops)};
}
}  // namespace

Verdict checkRegionWithOps(const PartitionResult& r, std::vector<std::string> ops) {
  return regionWithExactly(r, std::move(ops), true);
}

Verdict checkRegionWithNodes(const PartitionResult& r, std::vector<std::string> nodes) {
  return regionWithExactly(r, std::move(nodes), false);
}

Verdict checkNotFused(const PartitionResult& r, const std::string& node,
                      const std::string& reasonPart) {
  if (!r.ok) return {false, r.error};
  for (const Region& region : r.regions)
    if (std::find(region.nodes.begin(), region.nodes.end(), node) != region.nodes.end())
      return {false, "node '" + node + "' is fused, in region " + std::to_string(region.id)};
  for (const LeftOutNode& n : r.leftOut)
    if (n.node == node) {
      if (n.reason.find(reasonPart) != std::string::npos)
        return {true, "node '" + node + "': " + n.reason};
      return {false, "node '" + node + "' is not fused, but its reason is '" + n.reason +
                         "', which does not contain '" + reasonPart + "'"};
    }
  return {false, "the graph has no node '" + node + "'"};
}

Verdict checkInvariants(const PartitionResult& r) {
  if (!r.ok) return {false, r.error};
  if (!r.invariantProblem.empty()) return {false, r.invariantProblem};
  return {true, "acyclic, every region convex"};
}

}  // namespace subgraph::testkit
