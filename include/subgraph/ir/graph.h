//===- subgraph/ir/graph.h - The graph: owner of nodes and values -*- C++ -*-===//
//
// A Graph owns its Nodes and Values and is the only place that links them, so
// producer and use lists are consistent after every public call. Node and
// value ids are indices into append-only tables: they are stable for the life
// of the graph and never reused, and a removed node leaves a null slot.
//
// Invariants kept by every mutation (the verifier checks them too):
//  * each use (n, i) of value v appears in v.uses() iff n.input(i) == v;
//  * each output v of node n has v.producer() == n and
//    n.output(v.producerIndex()) == v;
//  * value names are unique within the graph.
// The one deliberate escape hatch is addNode() with pre-made outputs, which
// importers use and which can produce a value with two producers; verify()
// reports that.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <iterator>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "subgraph/ir/attribute.h"
#include "subgraph/ir/node.h"
#include "subgraph/ir/tensor.h"
#include "subgraph/ir/types.h"
#include "subgraph/ir/value.h"
#include "subgraph/support/status.h"

namespace subgraph {

/// A forward range over the non-null entries of a table of unique_ptrs.
template <typename T>
class LiveRange {
 public:
  using Table = std::vector<std::unique_ptr<T>>;
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T*;
    using difference_type = std::ptrdiff_t;
    using pointer = T**;
    using reference = T*;

    iterator() = default;
    iterator(typename Table::const_iterator it, typename Table::const_iterator end)
        : it_(it), end_(end) {
      skip();
    }
    T* operator*() const { return it_->get(); }
    iterator& operator++() {
      ++it_;
      skip();
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const iterator& a, const iterator& b) { return a.it_ == b.it_; }
    friend bool operator!=(const iterator& a, const iterator& b) { return a.it_ != b.it_; }

   private:
    void skip() {
      while (it_ != end_ && !*it_) ++it_;
    }
    typename Table::const_iterator it_{};
    typename Table::const_iterator end_{};
  };

  explicit LiveRange(const Table& table) : table_(&table) {}
  iterator begin() const { return iterator(table_->begin(), table_->end()); }
  iterator end() const { return iterator(table_->end(), table_->end()); }

 private:
  const Table* table_;
};

/// A computation graph: nodes, values, ordered inputs and outputs, and
/// opset imports. Not copyable or movable (nodes point back at it); use
/// clone().
class Graph {
 public:
  explicit Graph(std::string name = "main");
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }

  /// Opset version per domain ("" is ai.onnx), as in an ONNX model.
  const std::map<std::string, int64_t>& opsetImports() const;
  void setOpsetImport(std::string domain, int64_t version);
  /// Gives this graph `other`'s opset imports. They are shared until either
  /// graph changes its own: a partitioner's region bodies all import what
  /// their graph does, and a map each cost a hundred bytes a region.
  void shareOpsetImports(const Graph& other) { opsets_ = other.opsets_; }

  //===--- Values -------------------------------------------------------===//

  /// Whether a new value's name is looked up first. kKnownNew is for a
  /// caller that knows the name is not taken here, such as a partitioner
  /// naming a region body's values after those of a graph, where names are
  /// unique: it saves a lookup per value (debug builds still look it up).
  enum class NameCheck { kLookUp, kKnownNew };

  /// Appends a new graph input. Throws `Error` if the name is taken.
  Value* addInput(std::string name, TensorType type, NameCheck check = NameCheck::kLookUp);
  /// Adds a constant (initializer) value; its type is the tensor's type.
  /// Throws `Error` if the name is taken.
  Value* addInitializer(std::string name, Tensor data);
  /// As addInitializer(), but shares `data` (e.g. another graph's
  /// Value::sharedInitializer()) instead of holding its own copy; tensors
  /// are immutable, so sharing is invisible to readers. `data` must not be
  /// null.
  Value* addSharedInitializer(std::string name, std::shared_ptr<const Tensor> data);
  /// As addSharedInitializer(constant.name(), constant.sharedInitializer()),
  /// with the constant's type as it stands rather than one computed from
  /// the tensor again (a region body shares hundreds of thousands).
  /// `constant` (of any graph) must be an initializer.
  Value* shareInitializer(const Value& constant, NameCheck check = NameCheck::kLookUp);
  /// Creates a value with no producer, for importers that meet a name
  /// before its definition. An empty name gets a fresh unique one.
  Value* createValue(std::string name = {}, TensorType type = {},
                     NameCheck check = NameCheck::kLookUp);
  /// Marks an existing value as the next graph input.
  void appendInput(Value* value);
  /// Attaches (or replaces) constant data on a value without a producer.
  void setInitializer(Value* value, Tensor data);
  /// Drops a value's constant data, turning it back into a plain value.
  void clearInitializer(Value* value);
  /// Appends `value` to the graph outputs (a value may appear twice).
  void addOutput(Value* value);
  /// Replaces graph output number `index`.
  void setOutput(size_t index, Value* value);
  /// Removes `value` from the graph inputs (it stays in the graph).
  void removeInput(Value* value);
  /// Deletes a value that has no producer, no uses and is not a graph
  /// input or output. Throws `Error` otherwise.
  void removeValue(Value* value);
  /// Removes distinct `values` as removeValue() would one by one, checking
  /// all of them before removing any (throws `Error` naming the first that
  /// cannot go). When the batch is at least half the live values, as when
  /// a partitioner drops every constant its region bodies inlined, the name
  /// index is rebuilt once from the survivors instead of probed per value.
  void removeValues(std::span<Value* const> values);

  /// Graph inputs, in order (initializers are not listed unless they were
  /// explicitly made inputs, as old ONNX exporters did).
  std::span<Value* const> inputs() const { return inputs_; }
  /// Graph outputs, in order.
  std::span<Value* const> outputs() const { return outputs_; }
  /// Values with constant data, in id order.
  std::vector<Value*> initializers() const;
  /// All live values in id order.
  LiveRange<Value> values() const { return LiveRange<Value>(values_); }

  /// The value named `name`, or null.
  Value* findValue(std::string_view name) const;
  /// The value named `name`, or else a new one as createValue(name) makes
  /// it, for importers that meet each name many times (a use before or
  /// after its definition). One probe of the name index where findValue()
  /// then createValue() took three. Throws `Error` if `name` is empty.
  Value* findOrCreateValue(std::string_view name);
  /// The value with id `id`, or null if out of range or removed.
  Value* value(ValueId id) const { return id < values_.size() ? values_[id].get() : nullptr; }
  /// Renames a value. Throws `Error` if the new name is taken.
  void renameValue(Value* value, std::string name);
  /// `hint` if no value has that name, else `hint_<n>` for the smallest
  /// free n.
  std::string uniqueValueName(std::string_view hint) const;
  /// Number of live values.
  size_t numValues() const { return liveValues_; }
  /// One past the largest value id ever handed out.
  ValueId valueIdBound() const { return static_cast<ValueId>(values_.size()); }

  //===--- Nodes --------------------------------------------------------===//

  /// Adds a node of `op` ("Relu", or "domain.Op" for other domains) reading
  /// `inputs` (null entries are omitted optional inputs) and defining
  /// `numOutputs` fresh values named after the node or op.
  Node* addNode(std::string_view op, std::vector<Value*> inputs, size_t numOutputs = 1,
                std::vector<Attribute> attrs = {}, std::string name = {});
  /// Adds a node whose outputs are existing values. Each output should have
  /// no producer (importers create them with createValue, and partitioners
  /// reuse the outputs of removed nodes so that names survive); an output
  /// that already has a producer is re-pointed at the new node, which the
  /// verifier then reports as a value with two producers.
  Node* addNode(const OpKey* op, std::vector<Value*> inputs, std::vector<Value*> outputs,
                std::vector<Attribute> attrs = {}, std::string name = {});

  /// Removes a node. Its outputs must be unused and not graph outputs
  /// (throws `Error` naming them otherwise) and are deleted with it. With
  /// `keepOutputs`, outputs stay in the graph, uses intact, as values without
  /// a producer, ready to be re-attached by addNode(op, inputs, outputs).
  void removeNode(Node* node, bool keepOutputs = false);
  /// Removes `nodes` as removeNode(n, keepOutputs) would one by one (without
  /// keepOutputs, an output may be read only by other nodes of the batch),
  /// but compacts each affected use list once: one-by-one removal rescans a
  /// shared value's (e.g. a weight's) whole use list per node, which is
  /// quadratic when a partitioner removes thousands of its readers.
  void removeNodes(std::span<Node* const> nodes, bool keepOutputs = false);
  /// Sets input `index` of `node` (null omits an optional input); grows the
  /// input list with nulls if needed.
  void setNodeInput(Node* node, size_t index, Value* value);
  /// Appends an input to `node`.
  void appendNodeInput(Node* node, Value* value);
  /// Redirects every use of `from`, and every graph-output slot holding it,
  /// to `to`.
  void replaceAllUsesWith(Value* from, Value* to);
  /// Inserts a one-input node of `op` on `value`: the new node reads `value`
  /// and the chosen uses (those of `consumer`, or all uses if null) read its
  /// output instead. Returns the new node.
  Node* insertBetween(Value* value, Node* consumer, std::string_view op,
                      std::vector<Attribute> attrs = {}, std::string name = {});

  /// The node with id `id`, or null if out of range or removed.
  Node* node(NodeId id) const { return id < nodes_.size() ? nodes_[id].get() : nullptr; }
  /// Live nodes in id (creation) order.
  LiveRange<Node> nodes() const { return LiveRange<Node>(nodes_); }
  /// Number of live nodes.
  size_t numNodes() const { return liveNodes_; }
  /// How many edges were ever added: each use a node's input gains and each
  /// value given a producer. Removing edges does not count. A caller that
  /// proved the graph acyclic and sees the same count (and the same nodes)
  /// later knows no cycle can have appeared since.
  uint64_t edgesAdded() const { return edgesAdded_; }
  /// One past the largest node id ever handed out; size id-indexed tables
  /// with it.
  NodeId nodeIdBound() const { return static_cast<NodeId>(nodes_.size()); }
  /// The first node with this name, or null. Linear time.
  Node* findNode(std::string_view name) const;

  //===--- Moving nodes and values between graphs -----------------------===//
  // For code that splits a graph, such as a partitioner moving a region into
  // its body: moving is cheaper than copying and freeing, but it leaves
  // edges that cross the two graphs until the caller rewires them with
  // rebindInput() and rebindOutput() and cleans the old graph with
  // dropForeignUses() and addNode() (whose pre-made outputs take a new
  // producer). The verifier reports any crossing edge left behind.

  /// Moves `node` from its graph into this one under a new id, with its
  /// inputs, outputs and attributes as they are. Returns it.
  Node* adoptNode(Node* node);
  /// Moves `value` from its graph into this one under a new id, with its
  /// producer, uses, type and data as they are. Throws `Error` if it is an
  /// input or output of its graph or its name is taken here. The old
  /// graph's name index keeps a slot for it that lookups skip, so a move
  /// costs no hashing there.
  Value* adoptValue(Value* value);
  /// Points input `index` of `node` (a node of this graph) at `value` (a
  /// value of this graph, or null) and records the use. The node's use in
  /// the old value's list (a value of the graph the node came from) goes
  /// right away if that list is short (at most kShortUseList uses): a
  /// caller moving a region has just read the old value, and visiting it
  /// again later is a cache miss per value on a large graph. A longer list,
  /// such as a shared weight's with thousands of readers, keeps the use
  /// until that graph's dropForeignUses(), which compacts it once for all
  /// of its moved readers. (An old value of this graph loses the use at
  /// once.) Returns true if the use was kept, that is, if the old value
  /// must be passed to dropForeignUses().
  bool rebindInput(Node* node, size_t index, Value* value);
  /// The longest use list rebindInput() drops a moved reader's use from
  /// at once.
  static constexpr size_t kShortUseList = 8;
  /// Makes `value` (of this graph, without a producer) output `index` of
  /// `node` (of this graph). The old output still names `node` as its
  /// producer until a node of its own graph claims it through addNode().
  void rebindOutput(Node* node, size_t index, Value* value);
  /// Removes from the use lists of `values` (values of this graph) every
  /// use by a node that is no longer in this graph, keeping the order of
  /// the others: one pass per value, however many of its readers moved.
  void dropForeignUses(std::span<Value* const> values);
  /// As dropForeignUses(values), for a caller that knows which nodes left:
  /// `movedOut` must list every node that left this graph and that the
  /// lists may still name. Whether a reader left is then looked up in a
  /// bitmap over those nodes' addresses instead of loaded from the reader:
  /// a shared weight's list names readers all over a large graph, a cache
  /// miss each, and several weights' lists name the same readers again.
  /// Falls back to loading the readers when the moved nodes' addresses are
  /// too spread out for a small bitmap. Debug builds check the contract.
  void dropForeignUses(std::span<Value* const> values, std::span<Node* const> movedOut);

  /// Reserves room for `nodes` more nodes and `values` more values, so a
  /// builder that knows its sizes (such as a partitioner extracting region
  /// bodies, or the text parser from a count of lines) allocates each table
  /// once; a reservation of 1024 values or more sizes the name index too.
  void reserve(size_t nodes, size_t values);

  /// Nodes in a topological order (ties broken by id, so the order is
  /// deterministic), or an error naming a node on a cycle. A node whose
  /// nested graphs read a value of this graph by name comes after that
  /// value's producer, as if it read the value.
  StatusOr<std::vector<Node*>> topologicalOrder() const;

  /// A deep copy with the same node and value ids, names and attributes.
  std::unique_ptr<Graph> clone() const;

 private:
  Value* newValue(std::string name, TensorType type, NameCheck check = NameCheck::kLookUp);
  /// Makes and stores a value without indexing its name.
  Value* appendValue(std::string name, TensorType type);
  void addUse(Value* value, Node* user, uint32_t index);
  void dropUse(Value* value, Node* user, uint32_t index);

  // The name index (see graph.cpp): a flat open-addressing table of value
  // ids, built once the graph has more than kLinearNameLookup value ids;
  // smaller graphs scan their values instead, so the thousands of small
  // region bodies a partitioner makes carry no index at all.
  static constexpr size_t kLinearNameLookup = 16;
  Value* lookupName(std::string_view name) const;
  void indexName(const Value* value);
  void unindexName(const Value* value);
  void rebuildNameIndex(size_t minEntries);

  std::string name_;
  // Copy on write (setOpsetImport); null for none.
  std::shared_ptr<const std::map<std::string, int64_t>> opsets_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  size_t liveNodes_ = 0;
  size_t liveValues_ = 0;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  // Slot: (hash >> 32) << 32 | (id + 1); 0 is empty, kTombstone erased.
  std::vector<uint64_t> nameSlots_;
  uint64_t edgesAdded_ = 0;
  size_t nameSlotsUsed_ = 0;  // live entries plus tombstones
};

}  // namespace subgraph
