//===- subgraph/partition_report.cpp - Report as JSON and as a table ------===//
//
// Serializes PartitionReport. JSON keys keep a fixed order (ordered_json)
// so reports diff cleanly between runs; the table groups regions by
// backend and property, and left-out nodes by the kind of decision.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/partition_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace subgraph::partition {

RejectedNode RejectedNodes::operator[](size_t i) const {
  const Entry& e = entry(i);
  const size_t begin = i == 0 ? 0 : entry(i - 1).nameEnd;
  return RejectedNode{names_.substr(begin, e.nameEnd - begin), e.nodeId, texts_[e.op],
                      texts_[e.kind], texts_[e.reason]};
}

void RejectedNodes::reserve(size_t n, size_t nameBytes) {
  // Room for the chunk list now; each chunk takes its share when append()
  // starts it.
  reserved_ = std::max(reserved_, n);
  chunks_.reserve((n + kChunk - 1) >> kChunkShift);
  names_.reserve(nameBytes);
}

void RejectedNodes::push_back(const RejectedNode& node) {
  append(node.node, node.nodeId, intern(node.op), intern(node.kind), intern(node.reason));
}

RejectedNodes::RejectedNodes(const RejectedNodes& other)
    : names_(other.names_),
      texts_(other.texts_),
      chunks_(other.chunks_),
      size_(other.size_),
      reserved_(other.reserved_) {
  reindex();
}

RejectedNodes& RejectedNodes::operator=(const RejectedNodes& other) {
  if (this != &other) {
    chunks_ = other.chunks_;
    size_ = other.size_;
    reserved_ = other.reserved_;
    names_ = other.names_;
    texts_ = other.texts_;
    reindex();
  }
  return *this;
}

void RejectedNodes::reindex() {
  textIndex_.clear();
  for (size_t i = 0; i < texts_.size(); ++i)
    textIndex_.emplace(texts_[i], static_cast<uint32_t>(i));
}

uint32_t RejectedNodes::intern(std::string_view text) {
  if (auto it = textIndex_.find(text); it != textIndex_.end()) return it->second;
  const auto index = static_cast<uint32_t>(texts_.size());
  textIndex_.emplace(texts_.emplace_back(text), index);
  return index;
}

uint32_t RejectedNodes::addText(std::string text) {
  texts_.push_back(std::move(text));
  return static_cast<uint32_t>(texts_.size() - 1);
}

void RejectedNodes::append(std::string_view node, NodeId nodeId, uint32_t op, uint32_t kind,
                           uint32_t reason) {
  names_.append(node);
  if (chunks_.empty() || chunks_.back().size() == kChunk) {
    chunks_.emplace_back();
    if (reserved_ > size_) chunks_.back().reserve(std::min(kChunk, reserved_ - size_));
  }
  chunks_.back().push_back(Entry{names_.size(), nodeId, op, kind, reason});
  ++size_;
}

std::string reportToJson(const PartitionReport& report, int indent) {
  using Json = nlohmann::ordered_json;
  Json regions = Json::array();
  for (const RegionReport& r : report.regions) {
    regions.push_back(Json{{"id", r.id},
                           {"backend", r.backend},
                           {"property", r.property},
                           {"fused_node", r.fusedNode},
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
  // Replace invalid UTF-8 (node names come from arbitrary model files)
  // instead of throwing halfway through writing a report.
  return json.dump(indent, ' ', false, Json::error_handler_t::replace);
}

void printReportSummary(const PartitionReport& report, std::ostream& os) {
  std::string backends;
  for (const auto& b : report.backends) backends += (backends.empty() ? "" : ",") + b;
  double share = report.nodesTotal ? 100.0 * static_cast<double>(report.nodesInRegions) /
                                         static_cast<double>(report.nodesTotal)
                                   : 0.0;
  os << fmt::format("partitioned {} nodes for backend(s) {} in {:.2f} ms\n", report.nodesTotal,
                    backends.empty() ? "(none)" : backends, report.partitionMs);
  os << fmt::format("  {} regions hold {} nodes ({:.1f}%); {} nodes left out\n",
                    report.regions.size(), report.nodesInRegions, share, report.rejected.size());

  struct Row {
    size_t regions = 0, nodes = 0, minSize = SIZE_MAX, maxSize = 0;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;
  for (const RegionReport& r : report.regions) {
    Row& row = rows[{r.backend, r.property}];
    ++row.regions;
    row.nodes += r.nodes.size();
    row.minSize = std::min(row.minSize, r.nodes.size());
    row.maxSize = std::max(row.maxSize, r.nodes.size());
  }
  if (!rows.empty()) {
    os << fmt::format("\n  {:<16} {:<20} {:>8} {:>8} {:>10}\n", "backend", "property", "regions",
                      "nodes", "size");
    for (const auto& [key, row] : rows)
      os << fmt::format(
          "  {:<16} {:<20} {:>8} {:>8} {:>10}\n", key.first, key.second, row.regions, row.nodes,
          row.minSize == row.maxSize ? fmt::format("{}", row.minSize)
                                     : fmt::format("{}-{}", row.minSize, row.maxSize));
  }
  if (!report.rejected.empty()) {
    std::map<std::string, size_t> byKind;
    for (const RejectedNode& n : report.rejected) ++byKind[n.kind];
    os << "\n  left out, by reason:\n";
    for (const auto& [kind, count] : byKind) os << fmt::format("  {:>8}  {}\n", count, kind);
    // Name a few of the informative ones; "no selector matched" is the
    // common, self-explanatory case.
    size_t shown = 0;
    for (const RejectedNode& n : report.rejected) {
      if (n.kind == "no-selector" || shown == 5) continue;
      if (shown++ == 0) os << "\n  e.g.\n";
      os << fmt::format("    {} ({}): {}\n", n.node, n.op, n.reason);
    }
  }
  for (const std::string& s : report.skipped) os << "  skipped " << s << "\n";
  if (!report.contested.empty())
    os << fmt::format("  {} node(s) wanted by a lower-priority backend were claimed first\n",
                      report.contested.size());
}

}  // namespace subgraph::partition
