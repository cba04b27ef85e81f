//===- subgraph/pattern_selector.cpp - Declarative fusion patterns --------===//
//
// Op matchers, predicates, pattern validation and the backtracking matcher
// behind PatternSelector. Patterns are a handful of nodes, so the matcher
// keeps its assignment in a plain vector and checks "already used" by a
// linear scan; a step budget bounds pathological fan-out.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/pattern_selector.h"

#include <algorithm>

#include "subgraph/ir/op_schema.h"

namespace subgraph::partition {
namespace {

// Backtracking steps allowed per match. Real patterns need a few dozen;
// the budget only stops a pathological graph (a node with thousands of
// consumers matching a many-node pattern) from stalling partitioning.
constexpr size_t kMatchStepBudget = 100000;

// Appends "Op 'name'" (the domain-qualified op type and display name).
std::string& appendQuoted(std::string& out, const Node& node) {
  if (!node.domain().empty()) out.append(node.domain()).append(".");
  out.append(node.opType()).append(" '");
  if (node.name().empty())
    out.append(node.displayName());
  else
    out.append(node.name());
  return out.append("'");
}

std::string quoted(const Node& node) {
  std::string out;
  return appendQuoted(out, node);
}

// Appends OpMatcher::describe(): "Conv", "Relu|Clip|HardSwish" or "*".
std::string& appendDescription(std::string& out, const OpMatcher& m) {
  if (m.opTypes().empty()) return out.append("*");
  for (size_t i = 0; i < m.opTypes().size(); ++i)
    (i ? out.append("|") : out).append(m.opTypes()[i]);
  return out;
}

const AttrValue* attrOrDefault(const Node& node, const std::string& name) {
  if (const Attribute* a = node.attr(name)) return &a->value();
  if (const OpSchema* schema = node.schema())
    if (const AttrSpec* spec = schema->findAttr(name))
      if (spec->defaultValue) return &*spec->defaultValue;
  return nullptr;
}

std::string intsToString(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

template <typename T>
NodePredicate attrEqualsImpl(std::string name, T expected, std::string expectedText) {
  return [name = std::move(name), expected = std::move(expected),
          expectedText = std::move(expectedText)](const Node& node) -> Decision {
    const AttrValue* v = attrOrDefault(node, name);
    if (!v) return Decision::no("attribute '" + name + "' is absent, expected " + expectedText);
    const T* actual = std::get_if<T>(v);
    if (!actual)
      return Decision::no("attribute '" + name + "' is " +
                          std::string(attrKindName(static_cast<AttrKind>(v->index()))) +
                          ", expected " + expectedText);
    if (!(*actual == expected))
      return Decision::no("attribute '" + name + "' is not " + expectedText);
    return Decision::yes();
  };
}

bool isZeroSize(const TensorType& type) {
  if (!type.shape) return false;
  for (const Dim& d : *type.shape)
    if (d.isStatic() && d.size() == 0) return true;
  return false;
}

// "<prefix>pattern 'p': why", in one allocation: a graph's anchors are
// turned down by the hundred thousand.
std::string failureText(std::string_view prefix, const Pattern& pattern, std::string_view why) {
  std::string out;
  out.reserve(prefix.size() + pattern.name().size() + why.size() + 12);
  out.append(prefix).append("pattern '").append(pattern.name()).append("': ").append(why);
  return out;
}

// Why the deepest attempt of a search failed, recorded without building
// its text: most anchors either match or fail for a reason nobody reads
// (the node is fused by the next property), so the text is built once, at
// the end, from the deepest failure alone.
struct Failure {
  enum Kind {
    kNone,
    kGraphOutput,         // a: an interior node whose output is a graph output
    kReadOutside,         // a is read by b, outside the match
    kGraphOutputInside,   // a (onlyFeedsNext) is a graph output
    kReadByNonSuccessor,  // a (onlyFeedsNext) is read by b, not its successor
    kBudget,
    kNoCandidate,  // no neighbour of a is m (consumer: a's consumers)
    kUnavailable,  // a is claimed by another region
    kWrongOp,      // a is not m
    kPredicate,    // a fails m's predicate: reason
    kNotConnected,
    kNoNeighbour,  // required m has no matched neighbour
  };
  Failure() = default;
  explicit Failure(Kind k, const Node* first = nullptr, const Node* second = nullptr,
                   const OpMatcher* matcher = nullptr)
      : kind(k), a(first), b(second), m(matcher) {}

  Kind kind = kNone;
  const Node* a = nullptr;
  const Node* b = nullptr;
  const OpMatcher* m = nullptr;
  bool consumer = false;
  std::string reason;

  std::string text() const {
    // One string, appended to: a graph turns down an anchor per node of a
    // kind, and a temporary per '+' cost more than the search.
    std::string out;
    out.reserve(128);
    switch (kind) {
      case kNone: return "no match";
      case kBudget: return "search budget exhausted";
      case kGraphOutput: node(out, a).append(" is a graph output"); break;
      case kReadOutside: node(node(out, a).append(" is read outside the match, by "), b); break;
      case kGraphOutputInside: node(out, a).append(" is a graph output inside the match"); break;
      case kReadByNonSuccessor:
        node(node(out, a).append(" is read by "), b)
            .append(", which is not the next node of the match");
        break;
      case kNoCandidate:
        out.append(consumer ? "no consumer of " : "no producer of an input of ");
        ops(node(out, a).append(" is "));
        break;
      case kUnavailable:
        node(out, a).append(" is not available (claimed by another region)");
        break;
      case kWrongOp: ops(node(out, a).append(" is not ")); break;
      case kPredicate: node(out, a).append(": ").append(reason); break;
      case kNotConnected: node(out, a).append(" is not connected as the pattern requires"); break;
      case kNoNeighbour: ops(out.append("required ")).append(" has no matched neighbour"); break;
    }
    return out;
  }

 private:
  static std::string& node(std::string& out, const Node* n) { return appendQuoted(out, *n); }
  std::string& ops(std::string& out) const { return appendDescription(out, *m); }
};

// Backtracking search for one match; see pattern_selector.h for semantics.
class Matcher {
 public:
  // `found` holds the candidate lists, one per depth; it may come from an
  // earlier search (the lists are cleared before use) and grows to fit.
  // The assignment is kept in `result`'s node list, which keeps its memory
  // from one search to the next (a walk matches once per seed).
  Matcher(const Pattern& pattern, const std::function<bool(const Node&)>& available,
          std::vector<std::vector<const Node*>>& found, PatternMatch& result)
      : pattern_(pattern),
        available_(available),
        result_(result),
        assigned_(result.nodes),
        found_(found) {
    result_.failure.clear();
    assigned_.assign(pattern.nodes().size(), nullptr);
    if (found_.size() < assigned_.size()) found_.resize(assigned_.size());
  }

  /// Matches at `anchor` into the result. A failure away from the anchor
  /// goes to `keep` instead of the result's text when `keep` is given.
  void run(const Node& anchor, Failure* keep = nullptr) {
    // The report names the anchor already, so its reason does not: one
    // text then stands for every anchor the pattern turns down alike.
    Decision d = pattern_.nodes()[0].matchesUnnamed(anchor);
    if (!d) {
      assigned_.clear();
      result_.failure = failureText({}, pattern_, d.reason());
      return;
    }
    assigned_[0] = &anchor;
    if (solve(1)) return;
    assigned_.clear();
    if (keep)
      *keep = std::move(deepest_);
    else
      result_.failure = failureText({}, pattern_, deepest_.text());
  }

 private:
  bool isAvailable(const Node& node) const { return !available_ || available_(node); }
  bool used(const Node* node) const {
    return std::find(assigned_.begin(), assigned_.end(), node) != assigned_.end();
  }
  // Remembers why the deepest attempt failed (the last at that depth):
  // that is the explanation closest to a match, hence the most useful one.
  void fail(size_t depth, Failure failure) {
    if (depth >= deepestDepth_) {
      deepestDepth_ = depth;
      deepest_ = std::move(failure);
    }
  }

  static bool flows(const Node* producer, size_t output, const Node* consumer, int input) {
    Value* v = producer->output(output);
    if (!v) return false;
    if (input >= 0) return consumer->input(static_cast<size_t>(input)) == v;
    for (Value* in : consumer->inputs())
      if (in == v) return true;
    return false;
  }

  // The matched node whose output `output` stands for output `output` of
  // pattern node j: j's own when it is matched; for a skipped optional node
  // decided before `k`, the node feeding it (through its first edge from an
  // earlier node), which the skipped node would have passed through.
  // Null when j is undecided or nothing feeds it.
  const Node* source(size_t j, size_t k, size_t& output) const {
    while (!assigned_[j]) {
      if (j >= k || !pattern_.nodes()[j].isOptional()) return nullptr;
      const Pattern::Edge* in = nullptr;
      for (const Pattern::Edge& e : pattern_.edges())
        if (e.consumer == j && e.producer < j) {
          in = &e;
          break;
        }
      if (!in) return nullptr;
      output = in->output;
      j = in->producer;
    }
    return assigned_[j];
  }

  bool edgesHold(size_t k, const Node* x) const {
    for (const Pattern::Edge& e : pattern_.edges()) {
      size_t output = e.output;
      const Node* producer =
          e.consumer == k && e.producer < k ? source(e.producer, k, output) : nullptr;
      if (producer && !flows(producer, output, x, e.input)) return false;
      if (e.producer == k && e.consumer != k && assigned_[e.consumer] &&
          !flows(x, e.output, assigned_[e.consumer], e.input))
        return false;
    }
    return true;
  }

  // Candidates for pattern node k: neighbours of the first matched node it
  // has a pattern edge with (`from`; for an edge from a skipped optional
  // node, the node it passes through). Returns that edge, or null if no
  // such node is matched.
  const Pattern::Edge* candidates(size_t k, std::vector<const Node*>& out,
                                  const Node*& from) const {
    for (const Pattern::Edge& e : pattern_.edges()) {
      size_t output = e.output;
      const Node* producer =
          e.consumer == k && e.producer < k ? source(e.producer, k, output) : nullptr;
      if (producer) {
        from = producer;
        if (Value* v = producer->output(output))
          for (const Use& use : v->uses())
            if ((e.input < 0 || use.inputIndex == static_cast<uint32_t>(e.input)) &&
                std::find(out.begin(), out.end(), use.user) == out.end())
              out.push_back(use.user);
        return &e;
      }
      if (e.producer == k && e.consumer < k && assigned_[e.consumer]) {
        const Node* c = assigned_[e.consumer];
        from = c;
        for (size_t i = 0; i < c->numInputs(); ++i) {
          if (e.input >= 0 && i != static_cast<size_t>(e.input)) continue;
          Value* in = c->input(i);
          if (in && in->producer() &&
              std::find(out.begin(), out.end(), in->producer()) == out.end())
            out.push_back(in->producer());
        }
        return &e;
      }
    }
    return nullptr;
  }

  // The whole match: every node that requires it has no reader outside.
  bool usesStayInside() {
    for (size_t k = 0; k < assigned_.size(); ++k) {
      const Node* n = assigned_[k];
      if (!n || !pattern_.nodes()[k].requiresUsesInside()) continue;
      for (const Value* v : n->outputs()) {
        if (!v) continue;
        if (v->isGraphOutput()) {
          fail(assigned_.size(), Failure(Failure::kGraphOutput, n));
          return false;
        }
        for (const Use& use : v->uses())
          if (!used(use.user)) {
            fail(assigned_.size(), Failure(Failure::kReadOutside, n, use.user));
            return false;
          }
      }
    }
    return true;
  }

  // Every onlyFeedsNext node that another matched node reads through a
  // pattern edge (resolved past skipped optional nodes) is read by those
  // successors alone.
  bool interiorsFeedOnlyNext() {
    const size_t end = assigned_.size();
    for (size_t k = 0; k < end; ++k) {
      const Node* n = assigned_[k];
      if (!n || !pattern_.nodes()[k].requiresOnlyFeedsNext()) continue;
      successors_.clear();
      for (const Pattern::Edge& e : pattern_.edges()) {
        size_t output = e.output;
        if (assigned_[e.consumer] && source(e.producer, end, output) == n)
          successors_.push_back(assigned_[e.consumer]);
      }
      if (successors_.empty()) continue;  // it ends the match
      for (const Value* v : n->outputs()) {
        if (!v) continue;
        if (v->isGraphOutput()) {
          fail(end, Failure(Failure::kGraphOutputInside, n));
          return false;
        }
        for (const Use& use : v->uses())
          if (std::find(successors_.begin(), successors_.end(), use.user) == successors_.end()) {
            fail(end, Failure(Failure::kReadByNonSuccessor, n, use.user));
            return false;
          }
      }
    }
    return true;
  }

  bool solve(size_t k) {
    if (k == assigned_.size()) return usesStayInside() && interiorsFeedOnlyNext();
    if (++steps_ > kMatchStepBudget) {
      fail(assigned_.size(), Failure(Failure::kBudget));
      return false;
    }
    const OpMatcher& m = pattern_.nodes()[k];
    // Depth k's own list: deeper calls use theirs, never this one.
    std::vector<const Node*>& found = found_[k];
    found.clear();
    const Node* from = nullptr;
    if (const Pattern::Edge* e = candidates(k, found, from)) {
      if (found.empty()) {
        Failure none(Failure::kNoCandidate, from, nullptr, &m);
        none.consumer = e->consumer == k;
        fail(k, std::move(none));
      }
      for (const Node* x : found) {
        if (used(x)) continue;
        if (!isAvailable(*x)) {
          fail(k, Failure(Failure::kUnavailable, x));
          continue;
        }
        if (!m.matchesOpType(*x)) {
          fail(k, Failure(Failure::kWrongOp, x, nullptr, &m));
          continue;
        }
        // Unnamed: the search must not build a text per candidate.
        Decision d = m.matchesUnnamed(*x);
        if (!d) {
          if (k >= deepestDepth_) {  // copy the reason only where it counts
            Failure bad(Failure::kPredicate, x);
            bad.reason = d.reason();
            fail(k, std::move(bad));
          }
          continue;
        }
        if (!edgesHold(k, x)) {
          fail(k, Failure(Failure::kNotConnected, x));
          continue;
        }
        assigned_[k] = x;
        if (solve(k + 1)) return true;
        assigned_[k] = nullptr;
      }
    } else if (!m.isOptional()) {
      fail(k, Failure(Failure::kNoNeighbour, nullptr, nullptr, &m));
    }
    if (m.isOptional()) return solve(k + 1);
    return false;
  }

  const Pattern& pattern_;
  const std::function<bool(const Node&)>& available_;
  PatternMatch& result_;
  std::vector<const Node*>& assigned_;   // result_.nodes
  std::vector<const Node*> successors_;  // scratch of interiorsFeedOnlyNext
  std::vector<std::vector<const Node*>>& found_;
  size_t steps_ = 0;
  size_t deepestDepth_ = 0;
  Failure deepest_;
};

}  // namespace

//===--- OpMatcher --------------------------------------------------------===//

OpMatcher::OpMatcher(std::string opType) {
  opTypes_.push_back(std::move(opType));
  internOpTypes();
}

OpMatcher OpMatcher::anyOf(std::vector<std::string> opTypes) {
  OpMatcher m;
  m.opTypes_ = std::move(opTypes);
  m.internOpTypes();
  return m;
}

void OpMatcher::internOpTypes() {
  // "Conv" names the default domain; "domain.Op" any other. The registry
  // interns keys with the domain's canonical spelling, as it does nodes'.
  keys_.clear();
  for (const std::string& t : opTypes_) {
    const size_t dot = t.rfind('.');
    std::string_view type(t);
    keys_.push_back(dot == std::string::npos
                        ? OpRegistry::global().intern("", type)
                        : OpRegistry::global().intern(type.substr(0, dot), type.substr(dot + 1)));
  }
}

OpMatcher OpMatcher::anyOp() { return OpMatcher(); }

OpMatcher& OpMatcher::where(NodePredicate predicate) {
  predicates_.push_back(std::move(predicate));
  return *this;
}

OpMatcher& OpMatcher::usesStayInside(bool inside) {
  usesInside_ = inside;
  return *this;
}

OpMatcher& OpMatcher::onlyFeedsNext(bool only) {
  onlyFeedsNext_ = only;
  return *this;
}

OpMatcher& OpMatcher::optional(bool isOptional) {
  optional_ = isOptional;
  return *this;
}

bool OpMatcher::matchesOpType(const Node& node) const {
  if (keys_.empty()) return true;
  return std::find(keys_.begin(), keys_.end(), &node.opKey()) != keys_.end();
}

Decision OpMatcher::matches(const Node& node) const {
  Decision d = matchesUnnamed(node);
  if (d) return d;
  return Decision::no(quoted(node) + (matchesOpType(node) ? ": " : " ") + d.reason());
}

Decision OpMatcher::matchesUnnamed(const Node& node) const {
  if (!matchesOpType(node)) return Decision::no("is not " + describe());
  for (const NodePredicate& p : predicates_) {
    Decision d = p(node);
    if (!d) return Decision::no(d.explain("a predicate failed"));
  }
  return Decision::yes();
}

std::string OpMatcher::describe() const {
  std::string out;
  return appendDescription(out, *this);
}

//===--- Predicates -------------------------------------------------------===//

namespace predicates {

NodePredicate attrEquals(std::string name, int64_t value) {
  return attrEqualsImpl<int64_t>(std::move(name), value, std::to_string(value));
}

NodePredicate attrEquals(std::string name, std::string value) {
  std::string text = "'" + value + "'";
  return attrEqualsImpl<std::string>(std::move(name), std::move(value), std::move(text));
}

NodePredicate attrEquals(std::string name, std::vector<int64_t> value) {
  std::string text = intsToString(value);
  return attrEqualsImpl<std::vector<int64_t>>(std::move(name), std::move(value), std::move(text));
}

NodePredicate inputIsConstant(size_t index) {
  return [index](const Node& node) -> Decision {
    Value* v = node.input(index);
    if (!v) return Decision::no("input " + std::to_string(index) + " is absent");
    if (!v->isInitializer() || v->isGraphInput())
      return Decision::no("input " + std::to_string(index) + " ('" + v->name() +
                          "') is not a constant");
    return Decision::yes();
  };
}

NodePredicate hasOneUse() {
  return [](const Node& node) -> Decision {
    for (Value* out : node.outputs()) {
      if (out->uses().size() != 1)
        return Decision::no("output '" + out->name() + "' has " +
                            std::to_string(out->uses().size()) + " uses, expected 1");
      if (out->isGraphOutput())
        return Decision::no("output '" + out->name() + "' is a graph output");
    }
    return Decision::yes();
  };
}

NodePredicate staticShapes() {
  return [](const Node& node) -> Decision {
    for (Value* v : node.inputs())
      if (v && (!v->type().shape || !isStaticShape(*v->type().shape)))
        return Decision::no("input '" + v->name() + "' has a non-static shape " +
                            v->type().toString());
    for (Value* v : node.outputs())
      if (!v->type().shape || !isStaticShape(*v->type().shape))
        return Decision::no("output '" + v->name() + "' has a non-static shape " +
                            v->type().toString());
    return Decision::yes();
  };
}

NodePredicate noZeroSizeDims() {
  return [](const Node& node) -> Decision {
    for (Value* v : node.inputs())
      if (v && isZeroSize(v->type()))
        return Decision::no("input '" + v->name() + "' is empty: " + v->type().toString());
    for (Value* v : node.outputs())
      if (isZeroSize(v->type()))
        return Decision::no("output '" + v->name() + "' is empty: " + v->type().toString());
    return Decision::yes();
  };
}

NodePredicate outputRank(size_t rank) {
  return [rank](const Node& node) -> Decision {
    Value* v = node.output(0);
    if (!v || !v->type().hasRank()) return Decision::no("output 0 has unknown rank");
    if (v->type().rank() != rank)
      return Decision::no("output '" + v->name() + "' has rank " +
                          std::to_string(v->type().rank()) + ", expected " + std::to_string(rank));
    return Decision::yes();
  };
}

}  // namespace predicates

//===--- Pattern and PatternBuilder --------------------------------------===//

Pattern Pattern::chain(std::string name, std::vector<OpMatcher> ops) {
  PatternBuilder builder(std::move(name));
  for (size_t i = 0; i < ops.size(); ++i) {
    builder.add(std::move(ops[i]));
    if (i > 0) builder.connect(i - 1, i, 0, 0);
  }
  return builder.build().value();
}

PatternBuilder::PatternBuilder(std::string name) { pattern_.name_ = std::move(name); }

size_t PatternBuilder::add(OpMatcher matcher) {
  pattern_.nodes_.push_back(std::move(matcher));
  return pattern_.nodes_.size() - 1;
}

PatternBuilder& PatternBuilder::connect(size_t producer, size_t consumer, int input,
                                        size_t output) {
  pattern_.edges_.push_back(Pattern::Edge{producer, consumer, input, output});
  return *this;
}

StatusOr<Pattern> PatternBuilder::build() const {
  const Pattern& p = pattern_;
  auto bad = [&](const std::string& why) {
    return Status::invalid("pattern '" + p.name_ + "': " + why);
  };
  if (p.nodes_.empty()) return bad("it has no nodes");
  if (p.nodes_[0].isOptional()) return bad("the anchor (node 0) cannot be optional");
  for (const Pattern::Edge& e : p.edges_) {
    if (e.producer >= p.nodes_.size() || e.consumer >= p.nodes_.size())
      return bad("an edge refers to node " + std::to_string(std::max(e.producer, e.consumer)) +
                 " but there are only " + std::to_string(p.nodes_.size()));
    if (e.producer == e.consumer)
      return bad("node " + std::to_string(e.producer) + " is connected to itself");
  }
  // True if optional node j, when skipped, passes an input through: a chain
  // of first edges from earlier nodes leads from it to a required node.
  auto passesThrough = [&](size_t j) {
    while (p.nodes_[j].isOptional()) {
      auto in = std::find_if(p.edges_.begin(), p.edges_.end(), [&](const Pattern::Edge& e) {
        return e.consumer == j && e.producer < j;
      });
      if (in == p.edges_.end()) return false;
      j = in->producer;
    }
    return true;
  };
  for (size_t k = 1; k < p.nodes_.size(); ++k) {
    bool connected = false, viaRequired = false;
    for (const Pattern::Edge& e : p.edges_) {
      size_t other = e.consumer == k ? e.producer : e.producer == k ? e.consumer : k;
      if (other >= k) continue;
      connected = true;
      // A required node may follow optional ones that its input passes
      // through (Conv -> [BN] -> Add), not one it merely sits beside.
      bool through = e.consumer == k && passesThrough(other);
      viaRequired = viaRequired || !p.nodes_[other].isOptional() || through;
    }
    if (!connected)
      return bad("node " + std::to_string(k) + " (" + p.nodes_[k].describe() +
                 ") has no edge to an earlier node; list nodes so each one connects to an "
                 "earlier one");
    if (!p.nodes_[k].isOptional() && !viaRequired)
      return bad("required node " + std::to_string(k) + " (" + p.nodes_[k].describe() +
                 ") connects to earlier nodes only through optional ones that pass no input "
                 "through");
  }
  return p;
}

namespace {

// matchPattern() into `result`, keeping a failure away from the anchor in
// `keep` when one is given.
void runMatcher(const Pattern& pattern, const Node& anchor,
                const std::function<bool(const Node&)>& available, Failure* keep,
                PatternMatch& result) {
  // The candidate lists outlive a search, so that the next one (a walk
  // matches once per seed) reuses their memory instead of allocating a
  // list per step. A predicate may itself call matchPattern; that nested
  // search gets lists of its own.
  thread_local std::vector<std::vector<const Node*>> shared;
  thread_local bool busy = false;
  if (busy) {
    std::vector<std::vector<const Node*>> own;
    Matcher(pattern, available, own, result).run(anchor, keep);
    return;
  }
  busy = true;
  struct Release {
    bool& flag;
    ~Release() { flag = false; }
  } release{busy};
  Matcher(pattern, available, shared, result).run(anchor, keep);
}

}  // namespace

PatternMatch matchPattern(const Pattern& pattern, const Node& anchor,
                          const std::function<bool(const Node&)>& available) {
  PatternMatch result;
  runMatcher(pattern, anchor, available, nullptr, result);
  return result;
}

//===--- PatternSelector --------------------------------------------------===//

PatternSelector::PatternSelector(std::shared_ptr<const Pattern> pattern)
    : pattern_(std::move(pattern)) {}

bool PatternSelector::inMatch(const Node& node) const {
  return std::find(match_.nodes.begin(), match_.nodes.end(), &node) != match_.nodes.end();
}

Decision PatternSelector::Select(const NodeView& node) {
  // Most nodes are not anchors; a reasonless no keeps this path free of
  // allocations, and the report says "no selector matched" for them.
  if (!pattern_->nodes()[0].matchesOpType(node.node())) return Decision::no();
  deferred_ = nullptr;
  if (!missingWhy_.empty()) {
    // Whatever the anchor, no search can succeed; its own failure is still
    // the one a search would have reported first. Deferred, the anchor's
    // predicates run only for a text someone reads: most such anchors are
    // fused by a later property (conv_hswish's Convs by conv).
    if (!deferReasons_) return Decision::no(missingReasonFor(node.node(), {}));
    deferred_ = [this, anchor = &node.node()](std::string_view prefix) {
      return missingReasonFor(*anchor, prefix);
    };
    return Decision::no();
  }
  Failure kept;
  runMatcher(
      *pattern_, node.node(), [&node](const Node& other) { return node.available(other); },
      deferReasons_ ? &kept : nullptr, match_);
  if (match_.ok()) return Decision::yes();
  // Moved out: a failed match is not read again before the next Select.
  if (!match_.failure.empty()) return Decision::no(std::move(match_.failure));
  // Failed away from the anchor: the text names a node and is kept unbuilt.
  deferred_ = [failure = std::move(kept), pattern = pattern_.get()](std::string_view prefix) {
    return failureText(prefix, *pattern, failure.text());
  };
  return Decision::no();
}

std::string PatternSelector::missingRequiredOps(
    const std::function<bool(const OpMatcher&)>& hasAny) const {
  // A required node must be matched to a node of one of its op types.
  const std::vector<OpMatcher>& nodes = pattern_->nodes();
  for (size_t k = 1; k < nodes.size(); ++k)
    if (!nodes[k].isOptional() && !nodes[k].opTypes().empty() && !hasAny(nodes[k]))
      return nodes[k].describe();
  return {};
}

void PatternSelector::assumeMissing(const std::string& ops) {
  missingWhy_ = ops.empty() ? std::string() : "the graph has no " + ops;
}

std::string PatternSelector::missingReasonFor(const Node& anchor, std::string_view prefix) const {
  Decision d = pattern_->nodes()[0].matchesUnnamed(anchor);
  return failureText(prefix, *pattern_, d ? std::string_view(missingWhy_) : d.reason());
}

Decision PatternSelector::SelectInput(const NodeView& node, const NodeView& producer) {
  return inMatch(node.node()) && inMatch(producer.node());
}

Decision PatternSelector::SelectOutput(const NodeView& node, const NodeView& consumer) {
  return inMatch(node.node()) && inMatch(consumer.node());
}

std::vector<const Node*> PatternSelector::Filter(std::span<const Node* const> candidates) {
  filterReason_.clear();
  const auto& nodes = pattern_->nodes();
  for (size_t k = 0; k < match_.nodes.size(); ++k) {
    const Node* matched = match_.nodes[k];
    if (!matched || nodes[k].isOptional()) continue;
    if (std::find(candidates.begin(), candidates.end(), matched) == candidates.end()) {
      filterReason_ = "pattern '" + pattern_->name() + "' is incomplete without " +
                      quoted(*matched) + " (" + nodes[k].describe() + ")";
      return {};
    }
  }
  std::vector<const Node*> kept;
  for (const Node* c : candidates)
    if (inMatch(*c)) kept.push_back(c);
  return kept;
}

std::string PatternSelector::FilterReason(const Node& node) const {
  (void)node;
  return filterReason_;
}

void PatternSelector::Reset() {
  // Cleared, not replaced: the next Select reuses the node list's memory.
  match_.nodes.clear();
  match_.failure.clear();
  filterReason_.clear();
}

//===--- PatternProperty --------------------------------------------------===//

PatternProperty::PatternProperty(std::string name, Pattern pattern, PropertyOptions options)
    : name_(std::move(name)), pattern_(std::make_shared<const Pattern>(std::move(pattern))) {
  setOptions(std::move(options));
}

std::unique_ptr<SubgraphSelectorV2> PatternProperty::CreateSubgraphSelectorV2() const {
  return std::make_unique<PatternSelector>(pattern_);
}

}  // namespace subgraph::partition
