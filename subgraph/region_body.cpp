//===- subgraph/region_body.cpp - A region as a standalone graph ----------===//
//
// Body extraction in O(region nodes + their edges), using epoch-stamped
// id-indexed tables so that a region never pays for the size of the graph.
// Whether a value is read outside every region (a graph output, or a value
// a nested graph captures by name) is precomputed once per graph, because
// Value::isGraphOutput() scans the output list.
//
//===----------------------------------------------------------------------===//
#include "subgraph/region_body.h"

#include <algorithm>

namespace subgraph::partition::detail {
namespace {

// A body's values take the names of the outer graph's, which are unique,
// except the fresh names of unmerged repeated reads (freshName()).
constexpr Graph::NameCheck kNew = Graph::NameCheck::kKnownNew;

}  // namespace

void RegionBodyBuilder::reserve(size_t nodes, size_t values) {
  nodeMark_.reserve(nodes);
  valueMark_.reserve(values);
  bodyValue_.reserve(values);
  readOutside_.reserve(values);
  touched_.reserve(values);
}

std::shared_ptr<Graph> RegionBodyBuilder::newBody(std::span<Node* const> members,
                                                  std::string name) const {
  auto body = std::make_shared<Graph>(std::move(name));
  // Size the body's tables once: every value of the body stands for an
  // input or output of a member, so their count bounds the values.
  size_t valueBound = 0;
  for (Node* n : members) valueBound += n->numInputs() + n->numOutputs();
  body->reserve(members.size(), valueBound);
  body->shareOpsetImports(*graph_);
  return body;
}

// A fresh body name for an unmerged duplicate read; it must clash with
// neither the body nor the outer graph, whose names the body reuses.
std::string RegionBodyBuilder::freshName(const Graph& body, const std::string& base) const {
  for (size_t k = 1;; ++k) {
    std::string candidate = base + "_dup" + std::to_string(k);
    if (!body.findValue(candidate) && !graph_->findValue(candidate)) return candidate;
  }
}

void RegionBodyBuilder::reset(const Graph& graph, const std::set<std::string>& captured) {
  graph_ = &graph;
  nodeMark_.assign(graph.nodeIdBound(), 0);
  valueMark_.assign(graph.valueIdBound(), 0);
  bodyValue_.assign(graph.valueIdBound(), nullptr);
  readOutside_.assign(graph.valueIdBound(), 0);
  touched_.assign(graph.valueIdBound(), 0);
  for (Value* out : graph.outputs()) readOutside_[out->id()] = 1;
  for (const std::string& name : captured)
    if (const Value* v = graph.findValue(name)) readOutside_[v->id()] = 1;
  mark_ = 0;
}

bool RegionBodyBuilder::escapes(const Value& value) const {
  if (readOutside_[value.id()] || (touched_[value.id()] & kReadByMoved)) return true;
  for (const Use& use : value.uses())
    if (!inRegion(use.user)) return true;
  return false;
}

RegionBody RegionBodyBuilder::build(std::span<Node* const> members, std::string name,
                                    const PropertyOptions& options, std::vector<Value*>& inlined) {
  markMembers(members);

  RegionBody result;
  result.body = newBody(members, std::move(name));
  Graph& body = *result.body;

  for (Node* n : members) {
    std::vector<Value*> inputs;
    inputs.reserve(n->numInputs());
    for (Value* v : n->inputs()) {
      if (!v) {
        inputs.push_back(nullptr);
      } else if (inRegion(v->producer())) {
        // Members come in topological order, so an internal value is
        // already mapped.
        inputs.push_back(mapped(v));
      } else if (options.inlineConstants && v->isInitializer() && !v->isGraphInput()) {
        if (!isMapped(v)) {
          bind(v, body.shareInitializer(*v, kNew));
          inlined.push_back(v);
        }
        inputs.push_back(mapped(v));
      } else if (!isMapped(v)) {
        inputs.push_back(bind(v, body.addInput(v->name(), v->type(), kNew)));
        result.inputs.push_back(v);
      } else if (options.mergeDuplicatedInputs) {
        inputs.push_back(mapped(v));
      } else {
        // An unmerged repeated read of an outer value gets its own input.
        inputs.push_back(body.addInput(freshName(body, v->name()), v->type()));
        result.inputs.push_back(v);
      }
    }
    std::vector<Value*> outputs;
    outputs.reserve(n->numOutputs());
    for (Value* v : n->outputs())
      outputs.push_back(bind(v, body.createValue(v->name(), v->type(), kNew)));
    std::vector<Attribute> attrs(n->attributes().begin(), n->attributes().end());
    body.addNode(&n->opKey(), std::move(inputs), std::move(outputs), std::move(attrs), n->name());
  }

  for (Node* n : members)
    for (Value* v : n->outputs())
      if (v->producer() == n && escapes(*v)) {
        body.addOutput(mapped(v));
        result.outputs.push_back(v);
      }
  return result;
}

RegionBody RegionBodyBuilder::move(std::span<Node* const> members, std::string name,
                                   const PropertyOptions& options, std::vector<Value*>& inlined,
                                   std::vector<Value*>& touched) {
  markMembers(members);

  // Decide every slot first: a moved node or value takes a body id, after
  // which the id-indexed tables no longer describe it.
  size_t inputSlots = 0;
  for (Node* n : members) inputSlots += n->numInputs();
  slots_.clear();
  for (Node* n : members) {
    for (Value* v : n->inputs()) {
      if (!v) {
        slots_.push_back(Slot::kNone);
      } else if (inRegion(v->producer())) {
        slots_.push_back(escapes(*v) ? Slot::kInternalEscaping : Slot::kInternal);
      } else if (options.inlineConstants && v->isInitializer() && !v->isGraphInput()) {
        // The body takes a constant only the region reads; one read by
        // more nodes than the region has inputs is read outside it.
        bool own = !readOutside_[v->id()] && !(touched_[v->id()] & kReadByMoved) &&
                   v->uses().size() <= inputSlots &&
                   std::all_of(v->uses().begin(), v->uses().end(),
                               [&](const Use& u) { return inRegion(u.user); });
        slots_.push_back(own ? Slot::kOwnConstant : Slot::kSharedConstant);
      } else {
        slots_.push_back(Slot::kOuter);
      }
    }
    for (Value* v : n->outputs())
      slots_.push_back(v->producer() == n && !escapes(*v) ? Slot::kInternal : Slot::kEscaping);
  }

  RegionBody result;
  result.body = newBody(members, std::move(name));
  Graph& body = *result.body;
  // Points member n's input k, which reads outer value v, at body value
  // `inner`. Outer values whose lists keep a use by a moved node are
  // listed once per pass for dropForeignUses().
  auto rebind = [&](Node* n, size_t k, Value* v, Value* inner) {
    uint8_t& flags = touched_[v->id()];
    flags |= kReadByMoved;
    if (body.rebindInput(n, k, inner) && !(flags & kListed)) {
      flags |= kListed;
      touched.push_back(v);
    }
  };
  std::vector<Value*> escaping;  // outer values the body outputs stand for
  size_t slot = 0;
  for (Node* n : members) {
    body.adoptNode(n);
    for (size_t k = 0; k < n->numInputs(); ++k) {
      Value* v = n->input(k);
      switch (slots_[slot++]) {
        case Slot::kNone:
        case Slot::kInternal:  // moved with its producer, uses and all
          break;
        case Slot::kInternalEscaping:
          // Members come in topological order, so it is already mapped.
          rebind(n, k, v, mapped(v));
          break;
        case Slot::kOwnConstant:
          if (v->graph() != &body) body.adoptValue(v);
          break;
        case Slot::kSharedConstant:
          if (!isMapped(v)) {
            bind(v, body.shareInitializer(*v, kNew));
            inlined.push_back(v);
          }
          rebind(n, k, v, mapped(v));
          break;
        case Slot::kOuter:
          if (isMapped(v) && options.mergeDuplicatedInputs) {
            rebind(n, k, v, mapped(v));
          } else {
            // A first read becomes a body input; an unmerged repeated read
            // gets one of its own.
            rebind(n, k, v,
                   isMapped(v) ? body.addInput(freshName(body, v->name()), v->type())
                               : bind(v, body.addInput(v->name(), v->type(), kNew)));
            result.inputs.push_back(v);
          }
          break;
        case Slot::kEscaping: break;  // not an input slot
      }
    }
    for (size_t i = 0; i < n->numOutputs(); ++i) {
      Value* v = n->output(i);
      if (slots_[slot++] == Slot::kInternal) {
        body.adoptValue(v);
      } else {
        body.rebindOutput(n, i, bind(v, body.createValue(v->name(), v->type(), kNew)));
        if (v->producer() == n) escaping.push_back(v);
      }
    }
  }
  for (Value* v : escaping) {
    body.addOutput(mapped(v));
    result.outputs.push_back(v);
  }
  return result;
}

}  // namespace subgraph::partition::detail
