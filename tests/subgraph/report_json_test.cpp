//===- tests/subgraph/report_json_test.cpp - Streamed report JSON vs a DOM ===//
//
// writeReportJson() streams the report instead of building an nlohmann
// document; its bytes must be exactly those of the document it replaced.
// The reference below is that document, kept here (and only here) as the
// oracle: zoo models partitioned by the built-in backends, nested-graph
// regions, hostile names and awkward doubles must all print the same, in
// every indent.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "partition_test_util.h"
#include "subgraph/partition/backend_registry.h"
#include "subgraph/partition/partition_report.h"
#include "subgraph/zoo/zoo.h"

namespace subgraph::partition {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing;
using Json = nlohmann::ordered_json;

// The report as the nlohmann document that reportToJson() built before it
// streamed: the oracle for the layout, number formatting and escaping.
std::string domJson(const PartitionReport& report, int indent) {
  Json regions = Json::array();
  for (const RegionReport& r : report.regions) {
    regions.push_back(Json{{"id", r.id},
                           {"backend", r.backend},
                           {"property", r.property},
                           {"fused_node", r.fusedNode},
                           {"variant", r.variant},
                           {"nodes", r.nodes},
                           {"inputs", r.inputs},
                           {"outputs", r.outputs}});
    if (!r.scope.empty()) regions.back()["scope"] = r.scope;
  }
  Json rejected = Json::array();
  for (const RejectedNode& n : report.rejected)
    rejected.push_back(
        Json{{"node", n.node}, {"op", n.op}, {"kind", n.kind}, {"reason", n.reason}});
  Json contested = Json::array();
  for (const ContestedNode& c : report.contested)
    contested.push_back(Json{{"node", c.node},
                             {"backend", c.backend},
                             {"claimed_by", c.claimedBy},
                             {"region", c.region}});
  Json json{{"backends", report.backends},      {"regions", std::move(regions)},
            {"nodes_total", report.nodesTotal}, {"nodes_in_regions", report.nodesInRegions},
            {"rejected", std::move(rejected)},  {"contested", std::move(contested)},
            {"skipped", report.skipped},        {"partition_ms", report.partitionMs}};
  return json.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// The streamed JSON, through a stream and as a string, equals the DOM's in
// the CLI's indent, in one line, and in two other indents.
void expectSameBytesAsDom(const PartitionReport& report) {
  for (int indent : {2, -1, 0, 4}) {
    const std::string expected = domJson(report, indent);
    std::ostringstream os;
    writeReportJson(report, os, indent);
    EXPECT_TRUE(os.str() == expected) << "indent " << indent << ", streamed:\n"
                                      << os.str().substr(0, 2000) << "\nDOM:\n"
                                      << expected.substr(0, 2000);
    EXPECT_TRUE(reportToJson(report, indent) == expected) << "reportToJson, indent " << indent;
  }
}

PartitionReport partitionZooModel(std::unique_ptr<Graph> graph,
                                  const std::vector<std::string>& backendNames) {
  registerBuiltinBackends();
  auto backends = instantiateBackends(backendNames).value();
  PartitionReport report = partitionOk(*graph, backends);
  report.partitionMs = 12.345678901234567;  // a run's time, with all its digits
  return report;
}

/// Zoo models partitioned by each built-in backend, alone and in priority
/// order (contested nodes), print the DOM's bytes.
TEST(ReportJson, ZooModelsMatchTheDom) {
  for (const std::vector<std::string>& backends : std::vector<std::vector<std::string>>{
           {"convbn"}, {"convbnrelu"}, {"convaddrelu"}, {"convbnrelu", "convbn"}, {}}) {
    SCOPED_TRACE(backends.empty() ? "no backend" : backends[0]);
    expectSameBytesAsDom(partitionZooModel(zoo::buildResNet50(), backends));
    expectSameBytesAsDom(partitionZooModel(zoo::buildMobileNetV2(), backends));
  }
  zoo::SyntheticOptions synthetic;
  synthetic.nodes = 3000;
  synthetic.unsupportedFraction = 0.1;
  expectSameBytesAsDom(partitionZooModel(zoo::buildSynthetic(synthetic).value(), {"convbnrelu"}));
}

//   If(%c) then: %x -> Relu(t1) -> Neg(t2) -> Sin(t3)   else: Exp(e1)
/// Regions of nested graphs carry a "scope" key, last, and their left-out
/// nodes a scoped name; both print as the DOM does.
TEST(ReportJson, NestedGraphRegionsMatchTheDom) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[2], %c: bool[]) {
      %y = If(%c) {
        then_branch = graph @then() {
          %a = Relu(%x) @t1
          %b = Neg(%a) @t2
          %s = Sin(%b) @t3
          return %s
        },
        else_branch = graph @else() {
          %e = Exp(%x) @e1
          return %e
        }} @branch
      return %y
    })");
  PartitionReport report = partitionOk(*g, opBackend({"Relu", "Neg", "Exp"}));
  ASSERT_EQ(report.regions.size(), 2u);
  ASSERT_EQ(report.regions[0].scope, "branch.then_branch");
  expectSameBytesAsDom(report);
  EXPECT_THAT(reportToJson(report), HasSubstr("\"scope\": \"branch.then_branch\""));
}

// Every kind of string the escaper treats differently: quotes, backslashes,
// each control character, DEL, two- three- and four-byte UTF-8, and
// malformed UTF-8 (lone continuation, overlong, surrogate, past U+10FFFF,
// a sequence cut by a bad byte or by the end of the string).
std::vector<std::string> awkwardNames() {
  std::vector<std::string> names = {"",
                                    "plain",
                                    "quote\"d",
                                    "back\\slash",
                                    "\\\"",
                                    "tab\there",
                                    "del\x7f",
                                    "caf\xc3\xa9",
                                    "\xe4\xb8\xad",
                                    "\xf0\x9f\x98\x80!",
                                    "bad\xff",
                                    "\x80lone",
                                    "\xc0\x80overlong",
                                    "\xed\xa0\x80surrogate",
                                    "\xf4\x90\x80\x80"
                                    "big",
                                    "cut\xe4\xb8",
                                    "cut\xe4\xb8x",
                                    "\xe0\x80\x80",
                                    "\xf0\x80\x80\x80",
                                    "\xc3",
                                    "\xf0\x9f\x98",
                                    "\xc3\xc3\xa9"};
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls += static_cast<char>(c);
  names.push_back(controls);
  names.push_back(std::string("nul\0inside", 10));
  return names;
}

/// Names with quotes, backslashes, control characters, non-ASCII and
/// invalid UTF-8, in every string field of the report, print as the DOM
/// with error_handler_t::replace prints them.
TEST(ReportJson, AwkwardNamesMatchTheDom) {
  PartitionReport report;
  for (const std::string& name : awkwardNames()) {
    report.backends.push_back(name);
    report.skipped.push_back(name);
    report.rejected.push_back(RejectedNode{name, 1, name, name, name});
    report.contested.push_back(ContestedNode{name, name, name, -3});
    RegionReport region;
    region.id = static_cast<int>(report.regions.size());
    region.backend = region.property = region.fusedNode = region.variant = region.scope = name;
    region.nodes = region.inputs = region.outputs = {name, name};
    report.regions.push_back(region);
  }
  expectSameBytesAsDom(report);
}

/// Huge, tiny, negative, whole and non-finite times print as nlohmann
/// prints them ("1.0", "1e+16", "null"), including values whose Grisu2
/// digits are not the shortest ones (fmt's "{}" would differ).
TEST(ReportJson, DoublesMatchTheDom) {
  const double inf = std::numeric_limits<double>::infinity();
  PartitionReport report;
  report.nodesTotal = std::numeric_limits<size_t>::max();
  for (double ms : {0.0, -0.0, 1.0, 100.0, 0.1, 1e15, 1e16, 1e-4, 1e-5, 5e-324,
                    2.2250738585072014e-308, 1.7976931348623157e308, -1e300, 4612.6831644821395,
                    3943.9251728801228, std::nan(""), inf, -inf}) {
    report.partitionMs = ms;
    SCOPED_TRACE(ms);
    expectSameBytesAsDom(report);
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> millis(0.0, 5000.0);
  for (int i = 0; i < 2000; ++i) {
    report.partitionMs = millis(rng);
    ASSERT_EQ(reportToJson(report, -1), domJson(report, -1)) << report.partitionMs;
  }
}

/// Random byte strings, mostly malformed, escape exactly as the DOM
/// escapes them (a naive oracle run many times, as graphcycles_test does).
TEST(ReportJson, RandomBytesMatchTheDom) {
  std::mt19937 rng(11);
  // Bytes drawn from the classes the UTF-8 decoder tells apart.
  const std::vector<unsigned char> pool = {0x00, 0x1f, 'a',  '"',  '\\', 0x7f, 0x80, 0x8f, 0x90,
                                           0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe1, 0xed,
                                           0xee, 0xef, 0xf0, 0xf1, 0xf4, 0xf5, 0xff};
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1), length(0, 12);
  for (int round = 0; round < 200; ++round) {
    PartitionReport report;
    for (int i = 0; i < 50; ++i) {
      std::string name;
      for (size_t n = length(rng); n > 0; --n) name += static_cast<char>(pool[pick(rng)]);
      report.skipped.push_back(name);
    }
    const std::string expected = domJson(report, -1);
    ASSERT_EQ(reportToJson(report, -1), expected) << "round " << round;
  }
}

/// A report far past the writer's 64 KiB chunk, with a name longer than a
/// chunk, prints the same across the chunk boundaries.
TEST(ReportJson, LargeReportMatchesTheDomAcrossChunks) {
  PartitionReport report;
  const uint32_t op = report.rejected.intern("Sin");
  const uint32_t kind = report.rejected.intern("no-selector");
  const uint32_t reason = report.rejected.intern("no selector matched");
  for (size_t i = 0; i < 20000; ++i)
    report.rejected.append("n\xc3\xa9" + std::to_string(i), static_cast<NodeId>(i), op, kind,
                           reason);
  report.rejected.push_back(RejectedNode{std::string(200000, 'x') + "\xff", 1, "Op", "k", "r"});
  report.nodesTotal = report.rejected.size();
  expectSameBytesAsDom(report);
}

/// Negative: invalid UTF-8 must not reach the output. Every malformed
/// name becomes U+FFFD, so the text is JSON a strict parser accepts (as
/// before, where nlohmann replaced it), and writing never throws.
TEST(ReportJson, InvalidUtf8DoesNotProduceInvalidJson) {
  PartitionReport report;
  for (const std::string& name : awkwardNames())
    report.rejected.push_back(RejectedNode{name, 1, "Op", "no-selector", name});
  std::string text;
  ASSERT_NO_THROW(text = reportToJson(report));
  Json parsed;
  ASSERT_NO_THROW(parsed = Json::parse(text));  // parse() rejects invalid UTF-8
  EXPECT_EQ(parsed["rejected"][10]["node"], "bad\xef\xbf\xbd");
  EXPECT_EQ(parsed["rejected"][15]["node"], "cut\xef\xbf\xbd") << "a cut sequence: one U+FFFD";
  EXPECT_THAT(text, Not(HasSubstr("\xff")));
}

}  // namespace
}  // namespace subgraph::partition
