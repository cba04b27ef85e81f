//===- subgraph/partition/partition_report.h - What was fused, and why not -*- C++ -*-===//
//
// The partitioner's account of one run: every region with its nodes and
// boundary values, and every node left out of all regions with the reason
// for the decision that left it out. It prints as JSON (for tools and the
// `--report` file) and as a summary table (for people).
//
// JSON layout, keys in this order:
//   { "backends": [names],
//     "regions": [{"id", "backend", "property", "fused_node", "variant",
//                  "nodes": [names], "inputs": [names], "outputs": [names],
//                  "scope" (only for a region of a nested graph)}],
//     "nodes_total", "nodes_in_regions",
//     "rejected": [{"node", "op", "kind", "reason"}],
//     "contested": [{"node", "backend", "claimed_by", "region"}],
//     "skipped": [strings], "partition_ms" }
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <iterator>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "subgraph/ir/node.h"

namespace subgraph::partition {

/// One fused region.
struct RegionReport {
  /// Region id, in creation order.
  int id = 0;
  /// Owning backend and property.
  std::string backend;
  std::string property;
  /// Name of the fused node that replaced the region.
  std::string fusedNode;
  /// The members' op types in topological order, joined by '+'
  /// ("Conv+BatchNormalization+Relu"): which variant of a property with
  /// optional members (a fusion family) the region is.
  std::string variant;
  /// Names of the region's nodes (Node::displayName), in topological order.
  std::vector<std::string> nodes;
  /// Ids of the same nodes in the graph as it was before partitioning; they
  /// index a pre-partition clone, e.g. to draw the regions as clusters.
  std::vector<NodeId> nodeIds;
  /// Names of the fused node's inputs and outputs, in order.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  /// Empty for a region of the partitioned graph itself. For a region of a
  /// nested graph (an If branch, a Loop or Scan body), the path to it:
  /// "<node>.<attribute>", joined by '/' for deeper nesting, e.g.
  /// "loop.body/branch.then_branch". nodeIds then index that nested graph.
  std::string scope;
};

namespace detail {

/// An input iterator that hands out a list's elements by value (list[i]),
/// for lists that build each element on access (RegionReports,
/// RejectedNodes): a range-for over `const Element&` works unchanged.
template <typename List, typename Element>
class ByValueIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Element;
  using difference_type = std::ptrdiff_t;
  using reference = Element;
  using pointer = void;
  ByValueIterator() = default;
  ByValueIterator(const List* list, size_t index) : list_(list), index_(index) {}
  Element operator*() const { return (*list_)[index_]; }
  ByValueIterator& operator++() {
    ++index_;
    return *this;
  }
  ByValueIterator operator++(int) {
    ByValueIterator old = *this;
    ++index_;
    return old;
  }
  friend bool operator==(const ByValueIterator& a, const ByValueIterator& b) {
    return a.index_ == b.index_;
  }

 private:
  const List* list_ = nullptr;
  size_t index_ = 0;
};

/// Texts a report list stores once each, by index: intern() finds an equal
/// one or adds it, add() adds without looking (for a text known to be new).
/// A deque, so that the texts stay put as it grows (and when the table is
/// moved) and the index can key on views of them; a copy rebuilds its index
/// on its own texts.
class TextTable {
 public:
  TextTable() = default;
  TextTable(const TextTable& other) : texts_(other.texts_) { reindex(); }
  TextTable& operator=(const TextTable& other);
  TextTable(TextTable&&) = default;
  TextTable& operator=(TextTable&&) = default;

  uint32_t intern(std::string_view text);
  uint32_t add(std::string text);
  const std::string& operator[](uint32_t i) const { return texts_[i]; }

 private:
  void reindex();
  std::deque<std::string> texts_;
  std::unordered_map<std::string_view, uint32_t> index_;
};

}  // namespace detail

/// One region of RegionReports read in place (RegionReports::view): its
/// texts stay in the list, which must outlive the view and not change.
struct RegionReportView {
  int id = 0;
  std::string_view backend;
  std::string_view property;
  std::string_view fusedNode;
  std::string_view variant;
  std::string_view scope;
  size_t numNodes = 0;
  size_t numInputs = 0;
  size_t numOutputs = 0;
  /// Where the region's names start in the list (RegionReports::name()):
  /// its nodes, then its fused node, inputs and outputs.
  size_t firstName = 0;
};

/// The regions of a report, as a list of RegionReport. A large graph has
/// hundreds of thousands of regions, and a RegionReport of each, with a
/// string per name and a vector per list, took about 500 bytes and eight
/// allocations a region, at the heap's peak. This stores the names in
/// shared chunks and the backend, property, variant and scope texts once
/// each, about 200 bytes a region, and hands out RegionReport values built
/// on access (view() reads one in place).
class RegionReports {
 public:
  using value_type = RegionReport;
  using size_type = size_t;
  using const_iterator = detail::ByValueIterator<RegionReports, RegionReport>;
  using iterator = const_iterator;

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }
  /// Region `i`, copied out.
  RegionReport operator[](size_t i) const;
  /// Region `i`, copied out; throws std::out_of_range past the end.
  RegionReport at(size_t i) const;
  RegionReport front() const { return (*this)[0]; }
  RegionReport back() const { return (*this)[size() - 1]; }
  /// Region `i`, in place.
  RegionReportView view(size_t i) const;
  /// Name `k` of the list (see RegionReportView::firstName).
  std::string_view name(size_t k) const;
  /// The node id stored with name `k` (a region's node names have one).
  NodeId nameId(size_t k) const { return names_[k].id; }
  /// The names of region `i`'s nodes, inputs and outputs, in place.
  std::string_view node(const RegionReportView& r, size_t k) const { return name(r.firstName + k); }
  NodeId nodeId(const RegionReportView& r, size_t k) const { return nameId(r.firstName + k); }
  std::string_view input(const RegionReportView& r, size_t k) const {
    return name(r.firstName + r.numNodes + 1 + k);
  }
  std::string_view output(const RegionReportView& r, size_t k) const {
    return name(r.firstName + r.numNodes + 1 + r.numInputs + k);
  }

  void push_back(const RegionReport& region);

  /// Appends a region without building a RegionReport, in this order:
  /// beginRegion(), addNode() per member, endNodes() with the fused node's
  /// name and the variant, then addInput() and addOutput() per connection,
  /// inputs first.
  void beginRegion(int id, std::string_view backend, std::string_view property,
                   std::string_view scope = {});
  void addNode(std::string_view name, NodeId id);
  void endNodes(std::string_view fusedNode, std::string_view variant);
  void addInput(std::string_view name);
  void addOutput(std::string_view name);

 private:
  struct Entry {
    int id = 0;
    uint32_t backend = 0, property = 0, variant = 0, scope = 0;
    uint32_t numNodes = 0, numInputs = 0, numOutputs = 0;
    size_t firstName = 0;
  };
  // A name: `length` bytes at `offset` of chunk `chunk`.
  struct NameRef {
    uint32_t chunk = 0;
    uint32_t offset = 0;
    uint32_t length = 0;
    NodeId id = 0;
  };
  void addName(std::string_view name, NodeId id);

  // Deques: growing them never moves (or transiently doubles) what they
  // hold, and a region list grows at the heap's peak.
  std::deque<Entry> entries_;
  std::deque<NameRef> names_;
  std::vector<std::string> chunks_;  // name bytes; each keeps its capacity
  detail::TextTable texts_;          // backend, property, variant, scope
};

/// A node left out of every region, and why.
struct RejectedNode {
  /// nodeId of a node that a PostPartition hook removed.
  static constexpr NodeId kNoId = ~NodeId{0};
  /// Node::displayName of the node; for a node of a nested graph, prefixed
  /// by its RegionReport::scope and a ':' ("branch.then_branch:relu").
  std::string node;
  /// Its id in the graph before (and, as it was not fused, after)
  /// partitioning; kNoId if a hook removed it or it is in a nested graph.
  NodeId nodeId = kNoId;
  /// Its qualified op type.
  std::string op;
  /// The kind of decision, for tools: "no-selector", "already-fused",
  /// "cycle", "filter", "min-size", "rejected" or "removed".
  std::string kind;
  /// The reason of the decision that left it out, e.g. "dropped by Filter
  /// of convbn/conv_bn: pattern incomplete".
  std::string reason;
};

/// A RejectedNode read in place: views of the texts of a RejectedNodes
/// entry, valid while that list lives and is not appended to. For readers
/// that go through a long list once, such as the JSON writer, where
/// copying four strings per entry would cost more than writing them.
struct RejectedNodeView {
  /// The fields of RejectedNode, of the same names and meanings.
  std::string_view node;
  NodeId nodeId = RejectedNode::kNoId;
  std::string_view op;
  std::string_view kind;
  std::string_view reason;
};

/// A node that a lower-priority backend would have seeded a region at, but
/// that a higher-priority backend claimed first.
struct ContestedNode {
  /// Node::displayName of the node.
  std::string node;
  /// The lower-priority backend that selected it.
  std::string backend;
  /// The backend whose region holds it, and that region's id.
  std::string claimedBy;
  int region = 0;
};

/// The nodes a partitionGraph() call left out, in the order they were added.
///
/// A run on a model where no backend applies leaves out every node, so this
/// list is as long as the graph. It is stored compactly rather than as a
/// vector of RejectedNode: the names sit back to back in one buffer, and
/// each op type, kind and reason text is stored once and referred to by
/// index, because reasons repeat ("no selector matched"). Four strings per
/// entry made filling the report half the time of a 10^6-node run. Reading
/// gives RejectedNode values, so a range-for over `const RejectedNode&`
/// works unchanged.
class RejectedNodes {
 public:
  using value_type = RejectedNode;
  using size_type = size_t;

  /// Reads the entries as RejectedNode values.
  using const_iterator = detail::ByValueIterator<RejectedNodes, RejectedNode>;
  using iterator = const_iterator;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }
  /// Entry `i` (i < size()), built as a value.
  RejectedNode operator[](size_t i) const;
  /// Entry `i` (i < size()) as views of this list's texts, copying nothing.
  RejectedNodeView view(size_t i) const;
  /// Room for `n` entries in all, and `nameBytes` bytes of names.
  void reserve(size_t n, size_t nameBytes = 0);
  /// Appends a copy of `node`.
  void push_back(const RejectedNode& node);

  /// The index of `text` in the table of op types, kinds and reasons,
  /// adding it when it is new. For producers that append many entries
  /// sharing texts: intern each text once, then append() by index.
  uint32_t intern(std::string_view text);
  /// Adds `text` to the table without looking it up or indexing it, and
  /// returns its index: for a producer that knows the text is (almost
  /// always) new, such as a reason naming the node it is about. Hashing
  /// such a text only to find nothing cost a cache miss or three per node
  /// on a large graph. A later intern() of an equal text adds a copy; the
  /// entries read the same either way.
  uint32_t addText(std::string text);
  /// Appends an entry whose op, kind and reason are intern() indices.
  void append(std::string_view node, NodeId nodeId, uint32_t op, uint32_t kind, uint32_t reason);

 private:
  struct Entry {
    size_t nameEnd;  // names_ offset one past the name; it starts at the previous end.
    NodeId nodeId;
    uint32_t op, kind, reason;
  };
  // The entries sit in chunks of kChunk rather than one array. A report of
  // 10^6 left-out nodes is 24 MB of entries: as one block, past the
  // allocator's 16 MiB limit for blocks it carves from its reusable
  // segments, it would be mapped afresh for every report and the kernel
  // would zero-fill it page by page (a tenth of a 10^6-node transformer
  // partition); 1.5 MB chunks are served, and reused, like any other
  // block. A chunk grows up to kChunk, to what reserve() asked for.
  static constexpr size_t kChunkShift = 16;
  static constexpr size_t kChunk = size_t{1} << kChunkShift;
  const Entry& entry(size_t i) const { return chunks_[i >> kChunkShift][i & (kChunk - 1)]; }

  std::string names_;
  detail::TextTable texts_;  // op types, kinds and reasons
  std::vector<std::vector<Entry>> chunks_;
  size_t size_ = 0;
  size_t reserved_ = 0;  // entries reserve() asked room for
};

/// Where a partitioning's wall time went, in milliseconds, for `-vv` and
/// for benchmarks. The phases are those of docs/partitioning.md; with
/// several backends, gathering the lower-priority wishes for `contested`
/// is in none of them.
struct PartitionPhases {
  /// Setting up and ranking the input graph (the quotient DAG's
  /// topological order).
  double rankMs = 0.0;
  /// Offering nodes to the properties and growing regions, every backend.
  double walkMs = 0.0;
  /// Moving regions into bodies and adding the fused nodes, every backend.
  double surgeryMs = 0.0;
  /// Proving the partitioned graph acyclic.
  double proofMs = 0.0;
  /// Listing the rejected and contested nodes.
  double reportMs = 0.0;

  /// Adds `other`'s times (a nested graph's) to these.
  PartitionPhases& operator+=(const PartitionPhases& other) {
    rankMs += other.rankMs;
    walkMs += other.walkMs;
    surgeryMs += other.surgeryMs;
    proofMs += other.proofMs;
    reportMs += other.reportMs;
    return *this;
  }
};

/// The outcome of one partitionGraph() call.
struct PartitionReport {
  /// Active backends, in priority order.
  std::vector<std::string> backends;
  /// Fused regions, by id.
  RegionReports regions;
  /// Nodes in the graph before partitioning.
  size_t nodesTotal = 0;
  /// Of those, nodes that ended up in a region.
  size_t nodesInRegions = 0;
  /// Every node in no region, in topological order of the input graph.
  RejectedNodes rejected;
  /// Nodes claimed by a higher-priority backend that a lower one wanted.
  std::vector<ContestedNode> contested;
  /// Properties that did not run, as "backend/property: why" (e.g. an
  /// inference-only property when partitioning for training).
  std::vector<std::string> skipped;
  /// Wall time of partitioning, in milliseconds.
  double partitionMs = 0.0;
  /// Where that time went (nested graphs included); not in the JSON text.
  PartitionPhases phases;
};

/// Writes the report as JSON text (layout in the file comment) to `os`,
/// as it goes: nothing the size of the report is built first. The bytes
/// are those nlohmann::ordered_json's dump(indent) gives for the report
/// (keys in the documented order; indent < 0 for one line), with invalid
/// UTF-8 in a name replaced by U+FFFD, as dump's error_handler_t::replace
/// does. Check `os` for write errors afterwards.
void writeReportJson(const PartitionReport& report, std::ostream& os, int indent = 2);
/// The report as JSON text, as writeReportJson() writes it.
std::string reportToJson(const PartitionReport& report, int indent = 2);
/// A human-readable summary: totals, a per-backend/property table, and the
/// most common reasons for nodes left out.
void printReportSummary(const PartitionReport& report, std::ostream& os);

}  // namespace subgraph::partition
