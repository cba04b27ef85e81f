//===- core/ir/graph.cpp - The graph: owner of nodes and values -----------===//
//
// All producer/use bookkeeping lives here. Use lists are vectors because the
// common value has one or two uses; removal is a linear scan of that short
// list, which beats a hash set in both memory and time.
//
// The name index is a flat linear-probing table of 8-byte slots (32 bits of
// the name's hash and the value id), not a node-based hash map: a map costs
// an allocation and a copy of the name per value, and erasing and inserting
// many names (a partitioner rewriting a large graph) churns the allocator.
// Graphs with at most kLinearNameLookup value ids have no table and scan
// their values, which is as fast for a handful of names and keeps small
// graphs (region bodies, by the thousand) free of per-graph allocations.
//
//===----------------------------------------------------------------------===//
#include "subgraph/ir/graph.h"

#include "subgraph/ir/captures.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <queue>

namespace subgraph {
namespace {

// Splits "domain.Op" at the last dot; "Op" has the default domain.
std::pair<std::string_view, std::string_view> splitQualifiedOp(std::string_view op) {
  size_t dot = op.rfind('.');
  if (dot == std::string_view::npos) return {std::string_view(), op};
  return {op.substr(0, dot), op.substr(dot + 1)};
}

// Nodes and values are the bulk of a large graph; a field that pushed either
// past 128 bytes would move it into the allocator's 160-byte class and cost
// large-graph passes a line per object (node.h). Checked where it matters,
// on 64-bit libstdc++, whose std::string is 32 bytes.
constexpr bool kLp64LibStdCxx = sizeof(void*) == 8 && sizeof(std::string) == 32;
static_assert(!kLp64LibStdCxx || sizeof(Node) <= 128, "Node outgrew two cache lines");
static_assert(!kLp64LibStdCxx || sizeof(Value) <= 128, "Value outgrew two cache lines");

// std::erase_if for a use list (Boost's vector has no overload): keeps the
// order of the uses that stay.
template <typename Pred>
void eraseUsesIf(UseList& uses, Pred pred) {
  uses.erase(std::remove_if(uses.begin(), uses.end(), pred), uses.end());
}

std::unique_ptr<Node> allocateNode(const OpKey* op) {
  if (const OpSchema* schema = op->schema.load(std::memory_order_acquire))
    if (schema->factory) return schema->factory();
  struct PlainNode : Node {};
  return std::make_unique<PlainNode>();
}

// The smallest reservation of values that sizes the name index (reserve()).
constexpr size_t kReservedNameIndex = 1024;

constexpr uint64_t kEmptySlot = 0;
constexpr uint64_t kTombstone = ~uint64_t{0};

uint64_t nameHash(std::string_view name) { return std::hash<std::string_view>()(name); }

uint64_t makeSlot(uint64_t hash, ValueId id) {
  return (hash & 0xffffffff00000000ULL) | (static_cast<uint64_t>(id) + 1);
}

}  // namespace

Graph::Graph(std::string name) : name_(std::move(name)) {}
Graph::~Graph() = default;

const std::map<std::string, int64_t>& Graph::opsetImports() const {
  static const std::map<std::string, int64_t> kNone;
  return opsets_ ? *opsets_ : kNone;
}

void Graph::setOpsetImport(std::string domain, int64_t version) {
  auto opsets = opsets_ ? std::make_shared<std::map<std::string, int64_t>>(*opsets_)
                        : std::make_shared<std::map<std::string, int64_t>>();
  (*opsets)[std::string(canonicalDomain(domain))] = version;
  opsets_ = std::move(opsets);
}

//===--- Name index -----------------------------------------------------===//

Value* Graph::lookupName(std::string_view name) const {
  if (nameSlots_.empty()) {
    for (const auto& v : values_)
      if (v && v->name_ == name) return v.get();
    return nullptr;
  }
  const uint64_t hash = nameHash(name);
  const uint64_t high = hash & 0xffffffff00000000ULL;
  const size_t mask = nameSlots_.size() - 1;
  for (size_t i = static_cast<size_t>(hash) & mask;; i = (i + 1) & mask) {
    uint64_t slot = nameSlots_[i];
    if (slot == kEmptySlot) return nullptr;
    if (slot == kTombstone || (slot & 0xffffffff00000000ULL) != high) continue;
    // Null for a value adoptValue() moved out, whose slot stays behind.
    Value* v = values_[(slot & 0xffffffffULL) - 1].get();
    if (v && v->name_ == name) return v;
  }
}

void Graph::indexName(const Value* value) {
  if (nameSlots_.empty()) {
    // The value is already in values_, so a rebuild indexes it too.
    if (values_.size() > kLinearNameLookup) rebuildNameIndex(liveValues_ + 1);
    return;
  }
  // Keep the load (tombstones included) at most 3/4.
  if ((nameSlotsUsed_ + 1) * 4 > nameSlots_.size() * 3) {
    rebuildNameIndex(liveValues_ + 1);
    return;
  }
  const uint64_t hash = nameHash(value->name_);
  const size_t mask = nameSlots_.size() - 1;
  size_t i = static_cast<size_t>(hash) & mask;
  // The name is absent (callers check), so the first free slot will do.
  while (nameSlots_[i] != kEmptySlot && nameSlots_[i] != kTombstone) i = (i + 1) & mask;
  if (nameSlots_[i] == kEmptySlot) ++nameSlotsUsed_;
  nameSlots_[i] = makeSlot(hash, value->id_);
}

void Graph::unindexName(const Value* value) {
  if (nameSlots_.empty()) return;
  const uint64_t hash = nameHash(value->name_);
  const uint64_t want = makeSlot(hash, value->id_);
  const size_t mask = nameSlots_.size() - 1;
  for (size_t i = static_cast<size_t>(hash) & mask; nameSlots_[i] != kEmptySlot; i = (i + 1) & mask)
    if (nameSlots_[i] == want) {
      nameSlots_[i] = kTombstone;
      return;
    }
}

void Graph::rebuildNameIndex(size_t minEntries) {
  // Half full after a rebuild, so inserts run a while before the next.
  size_t capacity = 32;
  while (capacity < minEntries * 2) capacity *= 2;
  nameSlots_.assign(capacity, kEmptySlot);
  nameSlotsUsed_ = 0;
  const size_t mask = capacity - 1;
  for (const auto& v : values_) {
    if (!v) continue;
    const uint64_t hash = nameHash(v->name_);
    size_t i = static_cast<size_t>(hash) & mask;
    while (nameSlots_[i] != kEmptySlot) i = (i + 1) & mask;
    nameSlots_[i] = makeSlot(hash, v->id_);
    ++nameSlotsUsed_;
  }
}

//===--- Values ---------------------------------------------------------===//

Value* Graph::newValue(std::string name, TensorType type, NameCheck check) {
  if (name.empty()) name = uniqueValueName("v" + std::to_string(values_.size()));
#ifdef NDEBUG
  const bool lookUp = check == NameCheck::kLookUp;
#else
  const bool lookUp = true;  // debug builds check what kKnownNew callers promise
  (void)check;
#endif
  if (lookUp && lookupName(name))
    throw Error("graph '" + name_ + "': a value named '" + name + "' already exists");
  Value* raw = appendValue(std::move(name), std::move(type));
  indexName(raw);
  return raw;
}

Value* Graph::appendValue(std::string name, TensorType type) {
  auto value = std::unique_ptr<Value>(new Value());
  value->graph_ = this;
  value->id_ = static_cast<ValueId>(values_.size());
  value->name_ = std::move(name);
  value->type_ = std::move(type);
  Value* raw = value.get();
  values_.push_back(std::move(value));
  ++liveValues_;
  return raw;
}

Value* Graph::findOrCreateValue(std::string_view name) {
  if (name.empty()) throw Error("graph '" + name_ + "': findOrCreateValue() needs a name");
  // Without an index, or when this insert would push it past its load
  // limit, the plain path builds or grows it.
  if (nameSlots_.empty() || (nameSlotsUsed_ + 1) * 4 > nameSlots_.size() * 3) {
    if (Value* v = lookupName(name)) return v;
    return newValue(std::string(name), {});
  }
  const uint64_t hash = nameHash(name);
  const uint64_t high = hash & 0xffffffff00000000ULL;
  const size_t mask = nameSlots_.size() - 1;
  size_t reusable = SIZE_MAX;  // the first tombstone on the probe path
  size_t i = static_cast<size_t>(hash) & mask;
  for (;; i = (i + 1) & mask) {
    const uint64_t slot = nameSlots_[i];
    if (slot == kEmptySlot) break;
    if (slot == kTombstone) {
      if (reusable == SIZE_MAX) reusable = i;
      continue;
    }
    if ((slot & 0xffffffff00000000ULL) != high) continue;
    Value* v = values_[(slot & 0xffffffffULL) - 1].get();
    if (v && v->name_ == name) return v;
  }
  Value* created = appendValue(std::string(name), {});
  if (reusable == SIZE_MAX) {
    reusable = i;
    ++nameSlotsUsed_;
  }
  nameSlots_[reusable] = makeSlot(hash, created->id_);
  return created;
}

Value* Graph::addInput(std::string name, TensorType type, NameCheck check) {
  Value* v = newValue(std::move(name), std::move(type), check);
  appendInput(v);
  return v;
}

Value* Graph::addInitializer(std::string name, Tensor data) {
  TensorType type = data.type();
  Value* v = newValue(std::move(name), std::move(type));
  v->initializer_ = std::make_shared<const Tensor>(std::move(data));
  return v;
}

Value* Graph::addSharedInitializer(std::string name, std::shared_ptr<const Tensor> data) {
  if (!data) throw Error("graph '" + name_ + "': initializer '" + name + "' has no data");
  Value* v = newValue(std::move(name), data->type());
  v->initializer_ = std::move(data);
  return v;
}

Value* Graph::shareInitializer(const Value& constant, NameCheck check) {
  if (!constant.initializer_)
    throw Error("graph '" + name_ + "': value '" + constant.name() + "' is not a constant");
  Value* v = newValue(constant.name(), constant.type(), check);
  v->initializer_ = constant.initializer_;
  return v;
}

Value* Graph::createValue(std::string name, TensorType type, NameCheck check) {
  return newValue(std::move(name), std::move(type), check);
}

void Graph::appendInput(Value* value) {
  if (value->isGraphInput_)
    throw Error("graph '" + name_ + "': value '" + value->name_ + "' is already an input");
  value->isGraphInput_ = true;
  inputs_.push_back(value);
}

void Graph::setInitializer(Value* value, Tensor data) {
  if (value->producer_)
    throw Error("value '" + value->name_ + "' is computed by a node and cannot be a constant");
  value->type_ = data.type();
  value->initializer_ = std::make_shared<const Tensor>(std::move(data));
}

void Graph::clearInitializer(Value* value) { value->initializer_.reset(); }

void Graph::addOutput(Value* value) { outputs_.push_back(value); }

void Graph::setOutput(size_t index, Value* value) {
  if (index >= outputs_.size())
    throw Error("graph '" + name_ + "' has no output #" + std::to_string(index));
  outputs_[index] = value;
}

void Graph::removeInput(Value* value) {
  auto it = std::find(inputs_.begin(), inputs_.end(), value);
  if (it == inputs_.end()) return;
  inputs_.erase(it);
  value->isGraphInput_ = false;
}

void Graph::removeValue(Value* value) {
  if (value->producer_ || !value->uses_.empty() || value->isGraphInput_ || value->isGraphOutput())
    throw Error("value '" + value->name_ +
                "' cannot be removed: it still has a producer, uses or is a graph input/output");
  unindexName(value);
  --liveValues_;
  values_[value->id_].reset();
}

void Graph::removeValues(std::span<Value* const> values) {
  std::vector<char> seen(values_.size(), 0);
  for (Value* value : values) {
    if (value->graph_ != this || values_[value->id_].get() != value)
      throw Error("value '" + value->name_ + "' cannot be removed: it is not in graph '" + name_ +
                  "'");
    if (seen[value->id_])
      throw Error("value '" + value->name_ + "' is listed twice in one removeValues() batch");
    seen[value->id_] = 1;
    if (value->producer_ || !value->uses_.empty() || value->isGraphInput_ || value->isGraphOutput())
      throw Error("value '" + value->name_ +
                  "' cannot be removed: it still has a producer, uses or is a graph input/output");
  }
  // Probing the index once per value costs a hash and a cache miss each;
  // a rebuild costs one hash per survivor, so it wins once at least half
  // of the values go.
  const bool rebuild = !nameSlots_.empty() && values.size() * 2 >= liveValues_;
  for (Value* value : values) {
    if (!rebuild) unindexName(value);
    --liveValues_;
    values_[value->id_].reset();
  }
  if (rebuild) rebuildNameIndex(liveValues_);
}

std::vector<Value*> Graph::initializers() const {
  std::vector<Value*> out;
  for (Value* v : values())
    if (v->isInitializer()) out.push_back(v);
  return out;
}

Value* Graph::findValue(std::string_view name) const { return lookupName(name); }

void Graph::renameValue(Value* value, std::string name) {
  if (name == value->name_) return;
  if (name.empty() || lookupName(name))
    throw Error("graph '" + name_ + "': cannot rename '" + value->name_ + "' to '" + name +
                "': name is empty or taken");
  unindexName(value);
  value->name_ = std::move(name);
  indexName(value);
}

std::string Graph::uniqueValueName(std::string_view hint) const {
  std::string base(hint.empty() ? "v" : hint);
  if (!lookupName(base)) return base;
  for (size_t n = 1;; ++n) {
    std::string candidate = base + "_" + std::to_string(n);
    if (!lookupName(candidate)) return candidate;
  }
}

//===--- Uses -----------------------------------------------------------===//

void Graph::addUse(Value* value, Node* user, uint32_t index) {
  if (!value) return;
  value->uses_.push_back(Use{user, index});
  ++edgesAdded_;
}

void Graph::dropUse(Value* value, Node* user, uint32_t index) {
  if (!value) return;
  auto& uses = value->uses_;
  auto it = std::find(uses.begin(), uses.end(), Use{user, index});
  if (it != uses.end()) uses.erase(it);
}

//===--- Nodes ----------------------------------------------------------===//

void Graph::reserve(size_t nodes, size_t values) {
  nodes_.reserve(nodes_.size() + nodes);
  values_.reserve(values_.size() + values);
  // Sized for all of them now, the index is not rebuilt (every name hashed
  // again) each time it would have doubled on the way. Only for a large
  // reservation: a bound may overestimate (a region body's counts each
  // member's operands), and a small graph should keep scanning its values
  // instead of carrying an index it may never need.
  const size_t entries = liveValues_ + values;
  if (values >= kReservedNameIndex && nameSlots_.size() < entries * 2) rebuildNameIndex(entries);
}

Node* Graph::addNode(std::string_view op, std::vector<Value*> inputs, size_t numOutputs,
                     std::vector<Attribute> attrs, std::string name) {
  auto [domain, opName] = splitQualifiedOp(op);
  const OpKey* key = OpRegistry::global().intern(domain, opName);
  std::vector<Value*> outputs;
  outputs.reserve(numOutputs);
  std::string hint = name.empty() ? std::string(opName) : name;
  for (size_t i = 0; i < numOutputs; ++i)
    outputs.push_back(
        newValue(uniqueValueName(numOutputs == 1 ? hint : hint + "_out" + std::to_string(i)), {}));
  return addNode(key, std::move(inputs), std::move(outputs), std::move(attrs), std::move(name));
}

Node* Graph::addNode(const OpKey* op, std::vector<Value*> inputs, std::vector<Value*> outputs,
                     std::vector<Attribute> attrs, std::string name) {
  std::unique_ptr<Node> node = allocateNode(op);
  node->graph_ = this;
  node->id_ = static_cast<NodeId>(nodes_.size());
  node->op_ = op;
  node->name_ = std::move(name);
  node->attrs_.assign(std::make_move_iterator(attrs.begin()), std::make_move_iterator(attrs.end()));
  node->inputs_.assign(inputs.begin(), inputs.end());
  node->outputs_.assign(outputs.begin(), outputs.end());
  Node* raw = node.get();
  for (size_t i = 0; i < raw->inputs_.size(); ++i)
    addUse(raw->inputs_[i], raw, static_cast<uint32_t>(i));
  for (size_t i = 0; i < raw->outputs_.size(); ++i) {
    Value* out = raw->outputs_[i];
    out->producer_ = raw;
    out->producerIndex_ = static_cast<uint32_t>(i);
    ++edgesAdded_;
  }
  nodes_.push_back(std::move(node));
  ++liveNodes_;
  return raw;
}

void Graph::removeNode(Node* node, bool keepOutputs) {
  if (!keepOutputs) {
    for (Value* out : node->outputs_)
      if (out->producer_ == node && (!out->uses_.empty() || out->isGraphOutput()))
        throw Error(node->qualifiedOpType() + " node '" + node->displayName() +
                    "' cannot be removed: its output '" + out->name_ +
                    "' is still used or is a graph output");
  }
  for (size_t i = 0; i < node->inputs_.size(); ++i)
    dropUse(node->inputs_[i], node, static_cast<uint32_t>(i));
  for (Value* out : node->outputs_) {
    if (out->producer_ != node) continue;  // a second (invalid) producer
    out->producer_ = nullptr;
    out->producerIndex_ = 0;
    if (!keepOutputs) removeValue(out);
  }
  --liveNodes_;
  nodes_[node->id_].reset();
}

void Graph::removeNodes(std::span<Node* const> nodes, bool keepOutputs) {
  std::vector<char> doomed(nodes_.size(), 0);
  for (Node* node : nodes) doomed[node->id_] = 1;
  if (!keepOutputs) {
    for (Node* node : nodes)
      for (Value* out : node->outputs_) {
        bool usedOutside = std::any_of(out->uses_.begin(), out->uses_.end(),
                                       [&](const Use& u) { return !doomed[u.user->id_]; });
        if (out->producer_ == node && (usedOutside || out->isGraphOutput()))
          throw Error(node->qualifiedOpType() + " node '" + node->displayName() +
                      "' cannot be removed: its output '" + out->name_ +
                      "' is still used or is a graph output");
      }
  }
  std::vector<char> touched(values_.size(), 0);
  for (Node* node : nodes)
    for (Value* in : node->inputs_)
      if (in && !touched[in->id_]) {
        touched[in->id_] = 1;
        eraseUsesIf(in->uses_, [&](const Use& u) { return doomed[u.user->id_] != 0; });
      }
  for (Node* node : nodes) {
    for (Value* out : node->outputs_) {
      if (out->producer_ != node) continue;
      out->producer_ = nullptr;
      out->producerIndex_ = 0;
      if (!keepOutputs) removeValue(out);
    }
    --liveNodes_;
    nodes_[node->id_].reset();
  }
}

Node* Graph::adoptNode(Node* node) {
  Graph* from = node->graph_;
  if (from == this) return node;
  std::unique_ptr<Node> owned = std::move(from->nodes_[node->id_]);
  --from->liveNodes_;
  node->graph_ = this;
  node->id_ = static_cast<NodeId>(nodes_.size());
  nodes_.push_back(std::move(owned));
  ++liveNodes_;
  return node;
}

Value* Graph::adoptValue(Value* value) {
  Graph* from = value->graph_;
  if (from == this) return value;
  if (value->isGraphInput_ || value->isGraphOutput())
    throw Error("value '" + value->name_ + "' cannot move out of graph '" + from->name_ +
                "': it is one of its inputs or outputs");
  if (lookupName(value->name_))
    throw Error("graph '" + name_ + "': a value named '" + value->name_ + "' already exists");
  std::unique_ptr<Value> owned = std::move(from->values_[value->id_]);
  --from->liveValues_;
  value->graph_ = this;
  value->id_ = static_cast<ValueId>(values_.size());
  values_.push_back(std::move(owned));
  ++liveValues_;
  indexName(value);
  return value;
}

bool Graph::rebindInput(Node* node, size_t index, Value* value) {
  Value* old = node->inputs_[index];
  const auto idx = static_cast<uint32_t>(index);
  // Only a long list of the old graph waits for dropForeignUses(); an old
  // value of this graph loses the use at once, as with setNodeInput().
  const bool kept = old && old->graph_ != this && old->uses_.size() > kShortUseList;
  if (old && !kept) dropUse(old, node, idx);
  node->inputs_[index] = value;
  addUse(value, node, idx);
  return kept;
}

void Graph::rebindOutput(Node* node, size_t index, Value* value) {
  node->outputs_[index] = value;
  value->producer_ = node;
  value->producerIndex_ = static_cast<uint32_t>(index);
  ++edgesAdded_;
}

void Graph::dropForeignUses(std::span<Value* const> values) {
  for (Value* value : values)
    eraseUsesIf(value->uses_, [this](const Use& u) { return u.user->graph_ != this; });
}

namespace {

// A set of node addresses as one bit per granule from the lowest listed
// address to the highest. A granule is the largest power of two not above
// sizeof(Node) (128 bytes on LP64 libstdc++): two live nodes start at
// least sizeof(Node) apart, so no granule holds the start of two nodes and
// membership is exact. Built only when the bitmap stays small: at most
// 8 bytes per listed node plus 128 KiB. A 10^6-node graph's moved nodes
// span 200-850 MB of a heap that earlier graphs have used (the benchmark
// measured the span growing from call to call), a bitmap of 0.2-0.8 MB
// that stays in the core's cache; with 16-byte granules it had outgrown
// the bound, and the readers were loaded one by one.
class NodeAddressSet {
 public:
  explicit NodeAddressSet(std::span<Node* const> nodes) {
    if (nodes.empty()) return;
    auto [lo, hi] = std::minmax_element(nodes.begin(), nodes.end(), std::less<const Node*>());
    lo_ = reinterpret_cast<uintptr_t>(*lo);
    hi_ = reinterpret_cast<uintptr_t>(*hi);
    const size_t bits = ((hi_ - lo_) >> kGranuleShift) + 1;
    if (bits / 8 > nodes.size() * 8 + (size_t{128} << 10)) return;
    words_.assign((bits + 63) / 64, 0);
    for (const Node* n : nodes) {
      const size_t bit = (reinterpret_cast<uintptr_t>(n) - lo_) >> kGranuleShift;
      words_[bit / 64] |= uint64_t{1} << (bit % 64);
    }
  }
  bool usable() const { return !words_.empty(); }
  bool contains(const Node* n) const {
    const uintptr_t a = reinterpret_cast<uintptr_t>(n);
    if (a < lo_ || a > hi_) return false;
    const size_t bit = (a - lo_) >> kGranuleShift;
    return (words_[bit / 64] >> (bit % 64)) & 1;
  }

 private:
  static constexpr unsigned kGranuleShift = std::bit_width(sizeof(Node)) - 1;
  uintptr_t lo_ = 0;
  uintptr_t hi_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace

void Graph::dropForeignUses(std::span<Value* const> values, std::span<Node* const> movedOut) {
  const NodeAddressSet moved(movedOut);
  if (!moved.usable()) {
    dropForeignUses(values);
    return;
  }
  for (Value* value : values) {
    eraseUsesIf(value->uses_, [&](const Use& u) { return moved.contains(u.user); });
#ifndef NDEBUG
    for (const Use& u : value->uses_)
      if (u.user->graph_ != this)
        throw Error("graph '" + name_ + "': value '" + value->name_ + "' keeps a use by " +
                    u.user->qualifiedOpType() + " node '" + u.user->displayName() +
                    "' of another graph, which dropForeignUses() was not told moved");
#endif
  }
}

void Graph::setNodeInput(Node* node, size_t index, Value* value) {
  if (index >= node->inputs_.size()) node->inputs_.resize(index + 1, nullptr);
  auto idx = static_cast<uint32_t>(index);
  dropUse(node->inputs_[index], node, idx);
  node->inputs_[index] = value;
  addUse(value, node, idx);
}

void Graph::appendNodeInput(Node* node, Value* value) {
  node->inputs_.push_back(value);
  addUse(value, node, static_cast<uint32_t>(node->inputs_.size() - 1));
}

void Graph::replaceAllUsesWith(Value* from, Value* to) {
  if (from == to) return;
  UseList uses = std::move(from->uses_);
  from->uses_.clear();
  for (const Use& use : uses) {
    use.user->inputs_[use.inputIndex] = to;
    addUse(to, use.user, use.inputIndex);
  }
  for (Value*& out : outputs_)
    if (out == from) out = to;
}

Node* Graph::insertBetween(Value* value, Node* consumer, std::string_view op,
                           std::vector<Attribute> attrs, std::string name) {
  std::vector<Use> moved;
  for (const Use& use : value->uses_)
    if (!consumer || use.user == consumer) moved.push_back(use);
  if (consumer && moved.empty())
    throw Error("insertBetween: node '" + consumer->displayName() + "' does not use value '" +
                value->name_ + "'");
  Node* inserted = addNode(op, {value}, 1, std::move(attrs), std::move(name));
  Value* out = inserted->outputs_[0];
  out->type_ = value->type_;
  for (const Use& use : moved) setNodeInput(use.user, use.inputIndex, out);
  if (!consumer)
    for (Value*& o : outputs_)
      if (o == value) o = out;
  return inserted;
}

Node* Graph::findNode(std::string_view name) const {
  for (Node* n : nodes())
    if (n->name_ == name) return n;
  return nullptr;
}

StatusOr<std::vector<Node*>> Graph::topologicalOrder() const {
  // Kahn's algorithm with a min-heap on node id so the order is
  // deterministic and stays close to creation order.
  std::vector<uint32_t> pending(nodes_.size(), 0);
  for (Node* n : nodes())
    for (Value* in : n->inputs_)
      if (in && in->producer_ && in->producer_->graph_ == this) ++pending[n->id_];
  // A node's nested graphs read values of this graph by name: edges from
  // their producers that no use list shows, but that order the node all
  // the same (a partitioner gives the producer a later id, say).
  std::vector<std::vector<NodeId>> hidden;
  for (Node* n : nodes()) {
    if (!holdsNestedGraph(*n)) continue;
    for (const std::string& name : capturedNames(*n)) {
      Value* v = findValue(name);
      if (!v || !v->producer_ || v->producer_ == n) continue;
      if (hidden.empty()) hidden.resize(nodes_.size());
      hidden[v->producer_->id_].push_back(n->id_);
      ++pending[n->id_];
    }
  }
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (Node* n : nodes())
    if (pending[n->id_] == 0) ready.push(n->id_);
  std::vector<Node*> order;
  order.reserve(liveNodes_);
  while (!ready.empty()) {
    Node* n = nodes_[ready.top()].get();
    ready.pop();
    order.push_back(n);
    for (Value* out : n->outputs_) {
      if (out->producer_ != n) continue;
      for (const Use& use : out->uses_)
        if (--pending[use.user->id_] == 0) ready.push(use.user->id_);
    }
    if (!hidden.empty())
      for (NodeId reader : hidden[n->id_])
        if (--pending[reader] == 0) ready.push(reader);
  }
  if (order.size() != liveNodes_) {
    for (Node* n : nodes())
      if (pending[n->id_] != 0)
        return Status::invalid("graph '" + name_ + "' has a cycle through " + n->qualifiedOpType() +
                               " node '" + n->displayName() + "'");
  }
  return order;
}

std::unique_ptr<Graph> Graph::clone() const {
  auto copy = std::make_unique<Graph>(name_);
  copy->opsets_ = opsets_;
  copy->values_.resize(values_.size());
  copy->nodes_.resize(nodes_.size());
  for (const auto& v : values_) {
    if (!v) continue;
    auto nv = std::unique_ptr<Value>(new Value());
    nv->graph_ = copy.get();
    nv->id_ = v->id_;
    nv->name_ = v->name_;
    nv->type_ = v->type_;
    nv->isGraphInput_ = v->isGraphInput_;
    nv->initializer_ = v->initializer_;
    copy->values_[v->id_] = std::move(nv);
  }
  copy->liveValues_ = liveValues_;
  // Same ids and names, so the same index.
  copy->nameSlots_ = nameSlots_;
  copy->nameSlotsUsed_ = nameSlotsUsed_;
  auto map = [&](Value* v) { return v ? copy->values_[v->id_].get() : nullptr; };
  for (const auto& n : nodes_) {
    if (!n) continue;
    std::unique_ptr<Node> nn = allocateNode(n->op_);
    nn->graph_ = copy.get();
    nn->id_ = n->id_;
    nn->op_ = n->op_;
    nn->name_ = n->name_;
    nn->attrs_ = n->attrs_;
    for (Value* in : n->inputs_) nn->inputs_.push_back(map(in));
    for (Value* out : n->outputs_) nn->outputs_.push_back(map(out));
    copy->nodes_[n->id_] = std::move(nn);
  }
  copy->liveNodes_ = liveNodes_;
  // Rebuild links in id order so use lists match the original's order.
  for (const auto& v : values_) {
    if (!v) continue;
    Value* nv = copy->values_[v->id_].get();
    if (v->producer_) {
      nv->producer_ = copy->nodes_[v->producer_->id_].get();
      nv->producerIndex_ = v->producerIndex_;
    }
    for (const Use& use : v->uses_)
      nv->uses_.push_back(Use{copy->nodes_[use.user->id_].get(), use.inputIndex});
  }
  for (Value* in : inputs_) copy->inputs_.push_back(map(in));
  for (Value* out : outputs_) copy->outputs_.push_back(map(out));
  return copy;
}

}  // namespace subgraph
