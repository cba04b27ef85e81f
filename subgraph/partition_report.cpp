//===- subgraph/partition_report.cpp - Report as JSON and as a table ------===//
//
// Serializes PartitionReport. The JSON is written as it goes, never built
// as a document first: a run that leaves 10^6 nodes out has a report of
// 130 MB of text, and an nlohmann DOM of it had cost ~480 MB of peak
// memory and 2-5 s.
// The bytes are still exactly those of nlohmann::ordered_json's dump() of
// the same report (keys in a fixed order, so reports diff cleanly between
// runs), which tests/subgraph/report_json_test.cpp checks against a DOM.
// The table groups regions by backend and property, and left-out nodes by
// the kind of decision.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/partition_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace subgraph::partition {

//===--- RegionReports ----------------------------------------------------===//

namespace {
// Name bytes are kept in chunks of this size (a longer name gets a chunk of
// its own), so the list grows without copying what it holds.
constexpr size_t kNameChunkBytes = size_t{1} << 20;
}  // namespace

namespace detail {

TextTable& TextTable::operator=(const TextTable& other) {
  if (this != &other) {
    texts_ = other.texts_;
    reindex();
  }
  return *this;
}

void TextTable::reindex() {
  index_.clear();
  for (size_t i = 0; i < texts_.size(); ++i) index_.emplace(texts_[i], static_cast<uint32_t>(i));
}

uint32_t TextTable::intern(std::string_view text) {
  if (auto it = index_.find(text); it != index_.end()) return it->second;
  const auto index = static_cast<uint32_t>(texts_.size());
  index_.emplace(texts_.emplace_back(text), index);
  return index;
}

uint32_t TextTable::add(std::string text) {
  texts_.push_back(std::move(text));
  return static_cast<uint32_t>(texts_.size() - 1);
}

}  // namespace detail

std::string_view RegionReports::name(size_t k) const {
  const NameRef& ref = names_[k];
  return std::string_view(chunks_[ref.chunk]).substr(ref.offset, ref.length);
}

void RegionReports::addName(std::string_view name, NodeId id) {
  // A copied list's chunks have no spare capacity; a new chunk then
  // starts, as when the last one is full.
  if (chunks_.empty() || chunks_.back().capacity() - chunks_.back().size() < name.size()) {
    chunks_.emplace_back().reserve(std::max(kNameChunkBytes, name.size()));
  }
  std::string& chunk = chunks_.back();
  names_.push_back(NameRef{static_cast<uint32_t>(chunks_.size() - 1),
                           static_cast<uint32_t>(chunk.size()), static_cast<uint32_t>(name.size()),
                           id});
  chunk.append(name);
}

void RegionReports::beginRegion(int id, std::string_view backend, std::string_view property,
                                std::string_view scope) {
  Entry& e = entries_.emplace_back();
  e.id = id;
  e.backend = texts_.intern(backend);
  e.property = texts_.intern(property);
  e.scope = texts_.intern(scope);
  e.firstName = names_.size();
}

void RegionReports::addNode(std::string_view name, NodeId id) {
  addName(name, id);
  ++entries_.back().numNodes;
}

void RegionReports::endNodes(std::string_view fusedNode, std::string_view variant) {
  addName(fusedNode, 0);
  entries_.back().variant = texts_.intern(variant);
}

void RegionReports::addInput(std::string_view name) {
  addName(name, 0);
  ++entries_.back().numInputs;
}

void RegionReports::addOutput(std::string_view name) {
  addName(name, 0);
  ++entries_.back().numOutputs;
}

void RegionReports::push_back(const RegionReport& region) {
  beginRegion(region.id, region.backend, region.property, region.scope);
  for (size_t k = 0; k < region.nodes.size(); ++k)
    addNode(region.nodes[k], k < region.nodeIds.size() ? region.nodeIds[k] : 0);
  endNodes(region.fusedNode, region.variant);
  for (const std::string& in : region.inputs) addInput(in);
  for (const std::string& out : region.outputs) addOutput(out);
}

RegionReportView RegionReports::view(size_t i) const {
  const Entry& e = entries_[i];
  RegionReportView v;
  v.id = e.id;
  v.backend = texts_[e.backend];
  v.property = texts_[e.property];
  v.variant = texts_[e.variant];
  v.scope = texts_[e.scope];
  v.numNodes = e.numNodes;
  v.numInputs = e.numInputs;
  v.numOutputs = e.numOutputs;
  v.firstName = e.firstName;
  v.fusedNode = name(e.firstName + e.numNodes);
  return v;
}

RegionReport RegionReports::operator[](size_t i) const {
  const RegionReportView v = view(i);
  RegionReport r;
  r.id = v.id;
  r.backend = v.backend;
  r.property = v.property;
  r.fusedNode = v.fusedNode;
  r.variant = v.variant;
  r.scope = v.scope;
  r.nodes.reserve(v.numNodes);
  r.nodeIds.reserve(v.numNodes);
  for (size_t k = 0; k < v.numNodes; ++k) {
    r.nodes.emplace_back(node(v, k));
    r.nodeIds.push_back(nodeId(v, k));
  }
  for (size_t k = 0; k < v.numInputs; ++k) r.inputs.emplace_back(input(v, k));
  for (size_t k = 0; k < v.numOutputs; ++k) r.outputs.emplace_back(output(v, k));
  return r;
}

RegionReport RegionReports::at(size_t i) const {
  if (i >= size())
    throw std::out_of_range("region " + std::to_string(i) + " of " + std::to_string(size()));
  return (*this)[i];
}

//===--- RejectedNodes ----------------------------------------------------===//

RejectedNode RejectedNodes::operator[](size_t i) const {
  const Entry& e = entry(i);
  const size_t begin = i == 0 ? 0 : entry(i - 1).nameEnd;
  return RejectedNode{names_.substr(begin, e.nameEnd - begin), e.nodeId, texts_[e.op],
                      texts_[e.kind], texts_[e.reason]};
}

RejectedNodeView RejectedNodes::view(size_t i) const {
  const Entry& e = entry(i);
  const size_t begin = i == 0 ? 0 : entry(i - 1).nameEnd;
  return RejectedNodeView{std::string_view(names_).substr(begin, e.nameEnd - begin), e.nodeId,
                          texts_[e.op], texts_[e.kind], texts_[e.reason]};
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

uint32_t RejectedNodes::intern(std::string_view text) { return texts_.intern(text); }

uint32_t RejectedNodes::addText(std::string text) { return texts_.add(std::move(text)); }

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

namespace {

// A JSON writer that lays its output out as nlohmann's serializer does
// (dump(indent): pretty when indent >= 0, else on one line) and sends it
// on in chunks, so what it holds is one chunk, whatever the report's size.
// Keys are written as given: they are our own ASCII literals.
class JsonWriter {
 public:
  // Output goes to `os`, or is appended to `out` when `os` is null.
  JsonWriter(std::ostream* os, std::string* out, int indent)
      : os_(os), out_(out), pretty_(indent >= 0), indent_(indent >= 0 ? indent : 0) {
    buf_.reserve(kFlushBytes + 4096);
  }

  void beginObject() { open('{'); }
  void endObject() { close('}'); }
  void beginArray() { open('['); }
  void endArray() { close(']'); }
  void key(std::string_view name) {
    nextMember();
    buf_.push_back('"');
    append(name);
    append(pretty_ ? "\": " : "\":");
    afterKey_ = true;
  }
  void string(std::string_view text) {
    beginValue();
    buf_.push_back('"');
    appendEscaped(text);
    buf_.push_back('"');
    if (buf_.size() >= kFlushBytes) flush();
  }
  template <typename Int>
  void integer(Int value) {
    beginValue();
    fmt::format_to(std::back_inserter(buf_), "{}", value);
  }
  // nlohmann prints a double with Grisu2, which is round-trip exact but not
  // always the shortest form, and as "1.0" where fmt prints "1": fmt's
  // shortest digits differed for 707 of 10^6 random values in [0, 5000) ms.
  // There is one double per report, so it goes through nlohmann itself.
  void number(double value) {
    beginValue();
    append(nlohmann::json(value).dump());
  }
  void flush() {
    if (os_)
      os_->write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    else
      out_->append(buf_.data(), buf_.size());
    buf_.clear();
  }

 private:
  // Big enough that a write costs little per byte, small enough to stay in
  // cache.
  static constexpr size_t kFlushBytes = size_t{64} << 10;

  void append(std::string_view text) { buf_.append(text.data(), text.data() + text.size()); }
  void open(char bracket) {
    beginValue();
    buf_.push_back(bracket);
    empty_.push_back(true);
  }
  // An empty container closes at once ("[]"), a full one on a new line at
  // its own depth.
  void close(char bracket) {
    const bool wasEmpty = empty_.back();
    empty_.pop_back();
    if (!wasEmpty && pretty_) newLine();
    buf_.push_back(bracket);
  }
  void beginValue() {
    if (afterKey_)
      afterKey_ = false;
    else if (!empty_.empty())
      nextMember();
  }
  void nextMember() {
    if (!empty_.back()) buf_.push_back(',');
    empty_.back() = false;
    if (pretty_) newLine();
  }
  void newLine() {
    buf_.push_back('\n');
    for (size_t i = 0; i < empty_.size() * indent_; ++i) buf_.push_back(' ');
  }
  void appendEscaped(std::string_view text);

  std::ostream* os_;
  std::string* out_;
  bool pretty_;
  size_t indent_;
  fmt::memory_buffer buf_;
  // One entry per open container: whether it has no member yet.
  std::vector<bool> empty_;
  bool afterKey_ = false;
};

// The length of the UTF-8 sequence at text[i] (a byte >= 0x80) if it is
// well formed (Unicode 15, table 3-7: no overlong forms, surrogates or
// code points past U+10FFFF); otherwise, negated, how many bytes to
// replace by one U+FFFD: an invalid lead byte alone, else the lead and the
// continuation bytes that were valid so far, so that the byte that broke
// the sequence is read again as a start. This is how nlohmann's decoder
// with error_handler_t::replace treats them.
ptrdiff_t utf8Sequence(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return -1;
  }
  for (size_t k = 1; k < length; ++k) {
    if (i + k == text.size()) return -static_cast<ptrdiff_t>(k);
    const auto c = static_cast<unsigned char>(text[i + k]);
    if (c < low || c > high) return -static_cast<ptrdiff_t>(k);
    low = 0x80;
    high = 0xBF;
  }
  return static_cast<ptrdiff_t>(length);
}

// Escapes as nlohmann's dump_escaped does with ensure_ascii off: '"', '\\'
// and the control characters below 0x20, in the short form where JSON has
// one; other bytes as they are, but for invalid UTF-8, replaced as above.
// Names are almost always plain ASCII, which goes on in runs.
void JsonWriter::appendEscaped(std::string_view text) {
  size_t run = 0;  // start of the bytes not yet appended
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    append(text.substr(run, i - run));
    if (c >= 0x80) {
      const ptrdiff_t length = utf8Sequence(text, i);
      if (length > 0)
        append(text.substr(i, static_cast<size_t>(length)));
      else
        append("\xEF\xBF\xBD");  // U+FFFD
      i += static_cast<size_t>(length > 0 ? length : -length);
    } else {
      switch (c) {
        case '"': append("\\\""); break;
        case '\\': append("\\\\"); break;
        case '\b': append("\\b"); break;
        case '\t': append("\\t"); break;
        case '\n': append("\\n"); break;
        case '\f': append("\\f"); break;
        case '\r': append("\\r"); break;
        default: fmt::format_to(std::back_inserter(buf_), "\\u{:04x}", c);
      }
      ++i;
    }
    run = i;
  }
  append(text.substr(run));
}

void writeMember(JsonWriter& json, std::string_view key, std::string_view value) {
  json.key(key);
  json.string(value);
}

// `count` names, name(k) for k in [0, count).
template <typename Name>
void writeNames(JsonWriter& json, std::string_view key, size_t count, Name name) {
  json.key(key);
  json.beginArray();
  for (size_t k = 0; k < count; ++k) json.string(name(k));
  json.endArray();
}

void writeStrings(JsonWriter& json, std::string_view key, const std::vector<std::string>& list) {
  writeNames(json, key, list.size(), [&](size_t k) -> std::string_view { return list[k]; });
}

// Reads the region in place, as writeRejected() does the left-out nodes.
void writeRegion(JsonWriter& json, const RegionReports& regions, size_t i) {
  const RegionReportView r = regions.view(i);
  json.beginObject();
  json.key("id");
  json.integer(r.id);
  writeMember(json, "backend", r.backend);
  writeMember(json, "property", r.property);
  writeMember(json, "fused_node", r.fusedNode);
  writeMember(json, "variant", r.variant);
  writeNames(json, "nodes", r.numNodes, [&](size_t k) { return regions.node(r, k); });
  writeNames(json, "inputs", r.numInputs, [&](size_t k) { return regions.input(r, k); });
  writeNames(json, "outputs", r.numOutputs, [&](size_t k) { return regions.output(r, k); });
  if (!r.scope.empty()) writeMember(json, "scope", r.scope);
  json.endObject();
}

// Reads the entries in place: a RejectedNode per entry would copy four
// strings for each of up to every node of the graph.
void writeRejected(JsonWriter& json, const RejectedNodes& rejected) {
  json.key("rejected");
  json.beginArray();
  for (size_t i = 0; i < rejected.size(); ++i) {
    const RejectedNodeView n = rejected.view(i);
    json.beginObject();
    writeMember(json, "node", n.node);
    writeMember(json, "op", n.op);
    writeMember(json, "kind", n.kind);
    writeMember(json, "reason", n.reason);
    json.endObject();
  }
  json.endArray();
}

void writeContested(JsonWriter& json, const std::vector<ContestedNode>& contested) {
  json.key("contested");
  json.beginArray();
  for (const ContestedNode& c : contested) {
    json.beginObject();
    writeMember(json, "node", c.node);
    writeMember(json, "backend", c.backend);
    writeMember(json, "claimed_by", c.claimedBy);
    json.key("region");
    json.integer(c.region);
    json.endObject();
  }
  json.endArray();
}

void writeReport(JsonWriter& json, const PartitionReport& report) {
  json.beginObject();
  writeStrings(json, "backends", report.backends);
  json.key("regions");
  json.beginArray();
  for (size_t i = 0; i < report.regions.size(); ++i) writeRegion(json, report.regions, i);
  json.endArray();
  json.key("nodes_total");
  json.integer(report.nodesTotal);
  json.key("nodes_in_regions");
  json.integer(report.nodesInRegions);
  writeRejected(json, report.rejected);
  writeContested(json, report.contested);
  writeStrings(json, "skipped", report.skipped);
  json.key("partition_ms");
  json.number(report.partitionMs);
  json.endObject();
  json.flush();
}

}  // namespace

void writeReportJson(const PartitionReport& report, std::ostream& os, int indent) {
  JsonWriter json(&os, nullptr, indent);
  writeReport(json, report);
}

std::string reportToJson(const PartitionReport& report, int indent) {
  std::string text;
  JsonWriter json(nullptr, &text, indent);
  writeReport(json, report);
  return text;
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
  for (size_t i = 0; i < report.regions.size(); ++i) {
    const RegionReportView r = report.regions.view(i);
    Row& row = rows[{std::string(r.backend), std::string(r.property)}];
    ++row.regions;
    row.nodes += r.numNodes;
    row.minSize = std::min(row.minSize, r.numNodes);
    row.maxSize = std::max(row.maxSize, r.numNodes);
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
