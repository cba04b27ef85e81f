//===- tests/subgraph/partition_report_test.cpp - Report JSON and table ---===//
//
// The report's JSON layout (the keys tools rely on) and the human summary.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/partition_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "partition_test_util.h"

namespace subgraph::partition {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace testing;

PartitionReport sampleReport() {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %s = Sin(%a) @s
      %y = Neg(%s) @b
      return %y
    })");
  return partitionOk(*g, opBackend({"Relu", "Neg"}));
}

//   %x -> Relu -> Sin -> Neg -> %y
/// The JSON has every documented key, regions with their nodes and
/// boundary values, and one rejected entry per left-out node.
TEST(PartitionReport, JsonHasTheDocumentedLayout) {
  nlohmann::json json = nlohmann::json::parse(reportToJson(sampleReport()));
  for (const char* key : {"backends", "regions", "nodes_total", "nodes_in_regions", "rejected",
                          "contested", "skipped", "partition_ms"})
    EXPECT_TRUE(json.contains(key)) << key;
  ASSERT_EQ(json["regions"].size(), 2u);
  const auto& r0 = json["regions"][0];
  EXPECT_EQ(r0["id"], 0);
  EXPECT_EQ(r0["backend"], "test");
  EXPECT_EQ(r0["property"], "ops");
  EXPECT_EQ(r0["nodes"], nlohmann::json::array({"a"}));
  EXPECT_EQ(r0["inputs"], nlohmann::json::array({"x"}));
  EXPECT_EQ(r0["outputs"], nlohmann::json::array({"a"}));
  EXPECT_EQ(json["nodes_total"], 3);
  EXPECT_EQ(json["nodes_in_regions"], 2);
  ASSERT_EQ(json["rejected"].size(), 1u);
  EXPECT_EQ(json["rejected"][0]["node"], "s");
  EXPECT_EQ(json["rejected"][0]["kind"], "no-selector");
  EXPECT_EQ(json["rejected"][0]["reason"], "not selected by test/ops: Sin is unsupported");
  EXPECT_TRUE(json["partition_ms"].is_number());
}

/// Node names that are not UTF-8 do not break the JSON writer.
TEST(PartitionReport, JsonToleratesInvalidUtf8) {
  PartitionReport report;
  report.rejected.push_back(RejectedNode{"bad\xff", 0, "Op", "no-selector", "no selector matched"});
  nlohmann::json json = nlohmann::json::parse(reportToJson(report));
  EXPECT_EQ(json["rejected"].size(), 1u);
}

/// RejectedNodes gives back what was put in, in order, whether added as
/// whole entries or through interned texts, and a copy outlives the
/// original (it owns its names and texts).
TEST(RejectedNodes, ReadsBackWhatWasAddedInOrder) {
  RejectedNodes list;
  list.push_back(RejectedNode{"first", 3, "Sin", "no-selector", "no selector matched"});
  const uint32_t op = list.intern("Cos");
  const uint32_t kind = list.intern("filter");
  const uint32_t reason = list.intern("dropped by Filter");
  list.append("", 7, op, kind, reason);
  list.append("a-much-longer-name-than-fits-inline", RejectedNode::kNoId, op, kind, reason);
  EXPECT_EQ(list.intern("Sin"), list.intern("Sin")) << "a text is stored once";

  std::vector<RejectedNode> copied;
  {
    RejectedNodes copy = list;
    list = RejectedNodes();
    // The copy's index keys on its own texts, and a move keeps them put.
    EXPECT_EQ(copy.intern("Cos"), op);
    RejectedNodes moved = std::move(copy);
    EXPECT_EQ(moved.intern("dropped by Filter"), reason);
    for (const RejectedNode& n : moved) copied.push_back(n);
  }
  ASSERT_EQ(copied.size(), 3u);
  EXPECT_EQ(copied[0].node, "first");
  EXPECT_EQ(copied[0].nodeId, 3u);
  EXPECT_EQ(copied[0].op, "Sin");
  EXPECT_EQ(copied[0].kind, "no-selector");
  EXPECT_EQ(copied[0].reason, "no selector matched");
  EXPECT_EQ(copied[1].node, "");
  EXPECT_EQ(copied[1].nodeId, 7u);
  EXPECT_EQ(copied[1].op, "Cos");
  EXPECT_EQ(copied[1].kind, "filter");
  EXPECT_EQ(copied[1].reason, "dropped by Filter");
  EXPECT_EQ(copied[2].node, "a-much-longer-name-than-fits-inline");
  EXPECT_EQ(copied[2].nodeId, RejectedNode::kNoId);
  EXPECT_TRUE(list.empty());
}

/// A list longer than one storage chunk (2^16 entries) reads back every
/// entry across the chunk boundaries, reserved up front or not, and a copy
/// reads the same.
TEST(RejectedNodes, ReadsBackAcrossChunks) {
  constexpr size_t kEntries = 3 * 65536 + 5;
  for (bool reserve : {false, true}) {
    RejectedNodes list;
    if (reserve) list.reserve(kEntries, kEntries * 7);
    const uint32_t op = list.intern("Sin");
    const uint32_t kind = list.intern("no-selector");
    for (size_t i = 0; i < kEntries; ++i)
      list.append("n" + std::to_string(i), static_cast<NodeId>(i), op, kind, kind);
    const RejectedNodes copy = list;
    ASSERT_EQ(list.size(), kEntries);
    ASSERT_EQ(copy.size(), kEntries);
    size_t i = 0;
    for (const RejectedNode& n : copy) {
      if (n.node != "n" + std::to_string(i) || n.nodeId != i) {
        ADD_FAILURE() << "entry " << i << " reads '" << n.node << "' #" << n.nodeId
                      << (reserve ? " (reserved)" : "");
        break;
      }
      ++i;
    }
    EXPECT_EQ(i, kEntries);
    for (size_t k : {size_t{65535}, size_t{65536}, size_t{65537}, kEntries - 1})
      EXPECT_EQ(list[k].node, "n" + std::to_string(k));
  }
}

//   %x -> Sin -> Cos -> Sin -> %y, with no backend
/// Negative: sharing the texts does not merge or reorder entries; a graph
/// that no backend applies to still gets one entry per node, in order,
/// each with its own name and op.
TEST(RejectedNodes, SharedTextsDoNotMergeEntries) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Sin(%x) @a
      %b = Cos(%a) @b
      %y = Sin(%b) @c
      return %y
    })");
  PartitionReport report = partitionOk(*g, opBackend({"Relu"}));
  ASSERT_EQ(report.rejected.size(), 3u);
  std::vector<std::string> names, ops;
  for (const RejectedNode& n : report.rejected) {
    names.push_back(n.node);
    ops.push_back(n.op);
    EXPECT_EQ(n.kind, "no-selector");
  }
  EXPECT_THAT(names, ElementsAre("a", "b", "c"));
  EXPECT_THAT(ops, ElementsAre("Sin", "Cos", "Sin"));
  const Node* last = g->findNode("c");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(report.rejected[2].nodeId, last->id());
}

RegionReport sampleRegion(int id, std::string scope = {}) {
  RegionReport r;
  r.id = id;
  r.backend = "be";
  r.property = id % 2 ? "odd" : "even";
  r.fusedNode = "be_" + std::to_string(id);
  r.variant = "Conv+Relu";
  r.nodes = {"conv" + std::to_string(id), "relu" + std::to_string(id)};
  r.nodeIds = {static_cast<NodeId>(2 * id), static_cast<NodeId>(2 * id + 1)};
  r.inputs = {"x" + std::to_string(id), ""};
  r.outputs = {"y" + std::to_string(id)};
  r.scope = std::move(scope);
  return r;
}

void expectSameRegion(const RegionReport& a, const RegionReport& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.property, b.property);
  EXPECT_EQ(a.fusedNode, b.fusedNode);
  EXPECT_EQ(a.variant, b.variant);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.nodeIds, b.nodeIds);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.outputs, b.outputs);
  EXPECT_EQ(a.scope, b.scope);
}

/// RegionReports gives back every field of what was put in, in order,
/// through operator[], at() and view(), in copies and after moves; the
/// shared texts (backend, property, variant) do not merge regions.
TEST(RegionReports, ReadsBackWhatWasAddedInOrder) {
  RegionReports list;
  for (int id = 0; id < 5; ++id) list.push_back(sampleRegion(id, id == 3 ? "loop.body" : ""));
  ASSERT_EQ(list.size(), 5u);
  for (int id = 0; id < 5; ++id)
    expectSameRegion(list[static_cast<size_t>(id)], sampleRegion(id, id == 3 ? "loop.body" : ""));
  RegionReports copy = list;
  list = RegionReports();
  EXPECT_TRUE(list.empty());
  copy.push_back(sampleRegion(5));  // a copy's chunks are full: a new one starts
  ASSERT_EQ(copy.size(), 6u);
  expectSameRegion(copy.at(5), sampleRegion(5));
  expectSameRegion(copy[4], sampleRegion(4));
  const RegionReportView v = copy.view(3);
  EXPECT_EQ(v.fusedNode, "be_3");
  EXPECT_EQ(v.scope, "loop.body");
  EXPECT_EQ(copy.input(v, 1), "");
  EXPECT_EQ(copy.output(v, 0), "y3");
  EXPECT_EQ(copy.nodeId(v, 1), 7u);
  // Not a region past the end.
  EXPECT_THROW(copy.at(6), std::out_of_range);
  std::vector<int> ids;
  for (const RegionReport& r : copy) ids.push_back(r.id);
  EXPECT_THAT(ids, ElementsAre(0, 1, 2, 3, 4, 5));
}

/// Names longer than a chunk, and names that do not fit the rest of one,
/// read back whole.
TEST(RegionReports, ReadsBackNamesAcrossChunks) {
  RegionReports list;
  const std::string huge((size_t{1} << 20) + 3, 'h');
  const std::string big((size_t{1} << 19) + 5, 'b');
  RegionReport r = sampleRegion(0);
  r.nodes = {big, huge, big};
  r.nodeIds = {1, 2, 3};
  r.inputs = {big};
  list.push_back(r);
  list.push_back(sampleRegion(1));
  expectSameRegion(list[0], r);
  expectSameRegion(list[1], sampleRegion(1));
}

/// The summary names the totals, a row per backend/property and the kinds
/// of reasons.
TEST(PartitionReport, SummaryTableShowsTotalsAndReasons) {
  std::ostringstream os;
  printReportSummary(sampleReport(), os);
  std::string text = os.str();
  EXPECT_THAT(text, HasSubstr("partitioned 3 nodes for backend(s) test"));
  EXPECT_THAT(text, HasSubstr("2 regions hold 2 nodes (66.7%); 1 nodes left out"));
  EXPECT_THAT(text,
              HasSubstr("test             ops                         2        2          1"));
  EXPECT_THAT(text, HasSubstr("       1  no-selector"));
}

}  // namespace
}  // namespace subgraph::partition
