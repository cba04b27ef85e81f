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
