//===- api/stages.cpp - Pipeline stages under memory limits ---------------===//
//
// See subgraph/api/stages.h. The search: the smallest largest-stage cost
// for which a greedy left-to-right cut (each stage as long as its cost and
// memory allow) needs no more stages than there are devices, found by
// bisection; then each cut in turn moves, within 5% of that cost and what
// still leaves the rest coverable, to where the fewest bytes cross. Memory is estimated
// while stages grow (weights once each, activations live from their
// producer, or from the stage's start when received, to their last reader
// in the stage, or to its end when sent on) and checked at the end with the
// runtime's memory planner, whose fragmentation can only add bytes: a stage
// over its limit then shrinks that device's budget and the search reruns.
//
//===----------------------------------------------------------------------===//
#include "subgraph/api/stages.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "subgraph/ir/shape_inference.h"
#include "subgraph/runtime/memory_planner.h"
#include "subgraph/support/bytes.h"

namespace subgraph::api {
namespace {

// How much above the most balanced largest stage a cut may go to cross
// fewer bytes.
constexpr double kBalanceSlack = 0.05;

uint64_t valueBytes(const Value* v) {
  if (!v || !v->type().shape || !isStaticShape(*v->type().shape)) return 0;
  uint64_t n = dataTypeSize(v->type().dtype);
  for (const Dim& d : *v->type().shape) n *= static_cast<uint64_t>(std::max<int64_t>(d.size(), 0));
  return n;
}

double elements(const Value* v) {
  if (!v || !v->type().shape || !isStaticShape(*v->type().shape)) return 1;
  double n = 1;
  for (const Dim& d : *v->type().shape) n *= static_cast<double>(std::max<int64_t>(d.size(), 0));
  return n;
}

// The last static dim of `v`'s shape, or `at` from the end; 1 if unknown.
double dim(const Value* v, size_t fromEnd) {
  if (!v || !v->type().shape || !isStaticShape(*v->type().shape)) return 1;
  const Shape& s = *v->type().shape;
  return fromEnd < s.size() ? static_cast<double>(s[s.size() - 1 - fromEnd].size()) : 1;
}

const Graph* bodyOf(const Node& n) {
  if (n.domain().empty()) return nullptr;
  const Attribute* body = n.attr("body");
  return body && body->kind() == AttrKind::kGraph ? body->asGraph().get() : nullptr;
}

// Estimated multiply-adds of one node.
double nodeCost(const Node& n) {
  if (const Graph* body = bodyOf(n)) {
    double sum = 0;
    for (const Node* inner : body->nodes()) sum += nodeCost(*inner);
    return std::max(sum, 1.0);
  }
  const Value* out = n.numOutputs() ? n.output(0) : nullptr;
  const std::string& op = n.opType();
  if (op == "Conv" && n.numInputs() > 1 && n.input(1) && n.input(1)->type().shape) {
    double perOutput = 1;
    const Shape& w = *n.input(1)->type().shape;
    for (size_t i = 1; i < w.size(); ++i)
      perOutput *= w[i].isStatic() ? static_cast<double>(w[i].size()) : 1;
    return elements(out) * perOutput;
  }
  if ((op == "MatMul" || op == "Gemm") && n.numInputs() > 0)
    return elements(out) * dim(n.input(0), op == "Gemm" && n.getInt("transA", 0) ? 1 : 0);
  double sum = 0;
  for (size_t o = 0; o < n.numOutputs(); ++o) sum += elements(n.output(o));
  return std::max(sum, 1.0);
}

// The constants a node reads: its initializer inputs and, for a fused
// region, the constants inside its body.
void weightsOf(const Node& n, std::vector<const Value*>& out) {
  for (size_t i = 0; i < n.numInputs(); ++i)
    if (n.input(i) && n.input(i)->initializer()) out.push_back(n.input(i));
  if (const Graph* body = bodyOf(n))
    for (const Node* inner : body->nodes()) weightsOf(*inner, out);
}

/// The graph, flattened for the search.
struct Chain {
  std::vector<const Node*> nodes;  // topological order
  std::vector<double> cost;
  std::vector<std::vector<const Value*>> weights, inputs, outputs;
  std::unordered_map<const Value*, size_t> producer;  // activations only
  std::unordered_map<const Value*, size_t> lastUse;   // the last reader
  std::unordered_set<const Value*> graphOutputs;      // held to their stage's end
  std::vector<uint64_t> crossing;                     // bytes over cut p
};

Status buildChain(const Graph& graph, Chain& c) {
  StatusOr<std::vector<Node*>> order = graph.topologicalOrder();
  if (!order.isOk()) return order.status();
  const size_t n = order->size();
  for (size_t p = 0; p < n; ++p) {
    const Node* node = (*order)[p];
    c.nodes.push_back(node);
    c.cost.push_back(nodeCost(*node));
    c.weights.emplace_back();
    weightsOf(*node, c.weights.back());
    c.inputs.emplace_back();
    for (size_t i = 0; i < node->numInputs(); ++i)
      if (const Value* v = node->input(i); v && !v->initializer()) {
        c.inputs.back().push_back(v);
        c.lastUse[v] = std::max(c.lastUse.count(v) ? c.lastUse[v] : 0, p);
      }
    c.outputs.emplace_back();
    for (size_t o = 0; o < node->numOutputs(); ++o)
      if (const Value* v = node->output(o)) {
        c.outputs.back().push_back(v);
        c.producer[v] = p;
      }
  }
  for (const Value* v : graph.outputs()) c.graphOutputs.insert(v);
  // Bytes over each cut: a value produced before it and read after it.
  std::vector<int64_t> delta(n + 2, 0);
  for (const auto& [v, at] : c.producer) {
    auto last = c.lastUse.find(v);
    size_t end = last == c.lastUse.end() ? at : last->second;
    if (end <= at) continue;
    delta[at + 1] += static_cast<int64_t>(valueBytes(v));
    delta[end + 1] -= static_cast<int64_t>(valueBytes(v));
  }
  c.crossing.assign(n + 1, 0);
  int64_t run = 0;
  for (size_t p = 0; p <= n; ++p) c.crossing[p] = static_cast<uint64_t>(run += delta[p]);
  return Status::ok();
}

/// A stage growing node by node, with its memory estimated as it grows.
class Growth {
 public:
  Growth(const Chain& c, size_t begin) : c_(c), begin_(begin), end_(begin) {}

  /// Adds the next node if the stage then costs at most `maxCost` and
  /// needs at most `limit` bytes (0: none); false, unchanged, if not.
  bool add(double maxCost, uint64_t limit) {
    const size_t t = end_;
    uint64_t newWeights = 0, received = 0, produced = 0;
    std::vector<const Value*> freshWeights, freshReceived;
    for (const Value* w : c_.weights[t])
      if (!weightSeen_.count(w) &&
          std::find(freshWeights.begin(), freshWeights.end(), w) == freshWeights.end()) {
        freshWeights.push_back(w);
        newWeights += valueBytes(w);
      }
    for (const Value* v : c_.inputs[t]) {
      auto p = c_.producer.find(v);
      bool inside = p != c_.producer.end() && p->second >= begin_;
      if (!inside && !held_.count(v) &&
          std::find(freshReceived.begin(), freshReceived.end(), v) == freshReceived.end()) {
        freshReceived.push_back(v);
        received += valueBytes(v);
      }
    }
    for (const Value* v : c_.outputs[t]) produced += valueBytes(v);
    // A value received now is held from the stage's start.
    const uint64_t peak = std::max(peak_ + received, live_ + received + produced);
    if (end_ > begin_ &&
        (cost_ + c_.cost[t] > maxCost || (limit && weights_ + newWeights + peak > limit)))
      return false;
    cost_ += c_.cost[t];
    weights_ += newWeights;
    weightSeen_.insert(freshWeights.begin(), freshWeights.end());
    held_.insert(freshReceived.begin(), freshReceived.end());
    live_ += received + produced;
    peak_ = peak;
    release(t);
    ++end_;
    return true;
  }

  size_t end() const { return end_; }
  double cost() const { return cost_; }
  uint64_t memory() const { return weights_ + peak_; }

 private:
  void release(size_t t) {
    auto done = [&](const Value* v) {
      auto last = c_.lastUse.find(v);
      return !c_.graphOutputs.count(v) && (last == c_.lastUse.end() || last->second <= t);
    };
    for (const Value* v : c_.inputs[t])
      if (done(v) && released_.insert(v).second) live_ -= valueBytes(v);
    for (const Value* v : c_.outputs[t])
      if (done(v) && released_.insert(v).second) live_ -= valueBytes(v);
  }

  const Chain& c_;
  size_t begin_, end_;
  double cost_ = 0;
  uint64_t weights_ = 0, live_ = 0, peak_ = 0;
  std::unordered_set<const Value*> weightSeen_, held_, released_;
};

/// Greedy stage ends from `begin` with stages `first..` of `limits`; the
/// ends, or empty when the nodes do not fit in the stages left.
std::vector<size_t> greedy(const Chain& c, size_t begin, size_t first, double maxCost,
                           const std::vector<uint64_t>& limits) {
  std::vector<size_t> ends;
  for (size_t k = first; begin < c.nodes.size(); ++k) {
    if (k >= limits.size()) return {};
    Growth g(c, begin);
    while (g.end() < c.nodes.size() && g.add(maxCost, limits[k])) {
    }
    if (g.end() == begin || (limits[k] && g.memory() > limits[k])) return {};
    ends.push_back(begin = g.end());
  }
  return ends;
}

// The smallest largest-stage cost the greedy cut fits, by bisection.
std::vector<size_t> balancedEnds(const Chain& c, const std::vector<uint64_t>& limits,
                                 double& bound) {
  double total = 0, largest = 0;
  for (double x : c.cost) {
    total += x;
    largest = std::max(largest, x);
  }
  double lo = std::max(largest, total / static_cast<double>(limits.size())), hi = total;
  std::vector<size_t> best = greedy(c, 0, 0, hi, limits);
  if (best.empty()) return {};
  for (int i = 0; i < 60 && hi - lo > 1e-9 * hi; ++i) {
    double mid = (lo + hi) / 2;
    std::vector<size_t> ends = greedy(c, 0, 0, mid, limits);
    if (ends.empty()) {
      lo = mid;
    } else {
      hi = mid;
      best = std::move(ends);
    }
  }
  bound = hi;
  return best;
}

// Moves each cut, in turn, to where the fewest bytes cross, among the ends
// that keep its stage within `bound` and its memory, and leave the rest
// coverable by the stages after it.
std::vector<size_t> fewestCrossing(const Chain& c, const std::vector<uint64_t>& limits,
                                   double bound, std::vector<size_t> ends) {
  size_t begin = 0;
  for (size_t k = 0; k + 1 < ends.size(); ++k) {
    Growth g(c, begin);
    size_t best = ends[k];
    while (g.end() < c.nodes.size() && g.add(bound, limits[k])) {
      const size_t e = g.end();
      if (c.crossing[e] < c.crossing[best] && !greedy(c, e, k + 1, bound, limits).empty()) best = e;
    }
    if (best != ends[k]) {
      std::vector<size_t> rest = greedy(c, best, k + 1, bound, limits);
      ends.resize(k + 1);
      ends[k] = best;
      ends.insert(ends.end(), rest.begin(), rest.end());
    }
    begin = ends[k];
  }
  return ends;
}

// The runtime memory planner's bytes for the activations of [begin, end).
uint64_t plannedActivations(const Chain& c, size_t begin, size_t end) {
  runtime::MemoryPlanner planner;
  std::unordered_map<const Value*, runtime::MemoryPlanner::BufferId> live;
  auto heldToEnd = [&](const Value* v) {
    auto last = c.lastUse.find(v);
    return c.graphOutputs.count(v) || (last != c.lastUse.end() && last->second >= end);
  };
  for (size_t t = begin; t < end; ++t)
    for (const Value* v : c.inputs[t]) {
      auto p = c.producer.find(v);
      if ((p == c.producer.end() || p->second < begin) && !live.count(v))
        live[v] = planner.acquire(valueBytes(v), runtime::MemoryMode::kDynamic);
    }
  for (size_t t = begin; t < end; ++t) {
    for (const Value* v : c.outputs[t])
      live[v] = planner.acquire(valueBytes(v), runtime::MemoryMode::kDynamic);
    auto done = [&](const Value* v) {
      auto last = c.lastUse.find(v);
      return !heldToEnd(v) && (last == c.lastUse.end() || last->second <= t);
    };
    for (const Value* v : c.inputs[t])
      if (live.count(v) && done(v)) planner.release(live[v]), live.erase(v);
    for (const Value* v : c.outputs[t])
      if (live.count(v) && done(v)) planner.release(live[v]), live.erase(v);
  }
  StatusOr<runtime::MemoryPlan> plan = planner.plan();
  return plan.isOk() ? plan->plannedBytes() : 0;
}

Stage describeStage(const Chain& c, size_t begin, size_t end, const std::vector<size_t>& ends) {
  Stage s;
  std::unordered_set<const Value*> seen;
  for (size_t t = begin; t < end; ++t) {
    s.nodes.push_back(c.nodes[t]->displayName());
    s.cost += c.cost[t];
    for (const Value* w : c.weights[t])
      if (seen.insert(w).second) s.weightBytes += valueBytes(w);
    for (const Value* v : c.outputs[t]) {
      auto last = c.lastUse.find(v);
      if (last == c.lastUse.end() || last->second < end) continue;
      int to =
          static_cast<int>(std::upper_bound(ends.begin(), ends.end(), last->second) - ends.begin());
      s.sends.push_back({v->name(), valueBytes(v), to});
    }
  }
  s.activationBytes = plannedActivations(c, begin, end);
  return s;
}

Status noFit(const Chain& c, const std::vector<StageDevice>& devices) {
  // Name the first node that cannot fit a device on its own.
  for (size_t t = 0; t < c.nodes.size(); ++t) {
    bool fits = false;
    for (const StageDevice& d : devices) {
      Growth g(c, t);
      g.add(std::numeric_limits<double>::infinity(), d.memoryLimit);
      fits = fits || !d.memoryLimit || g.memory() <= d.memoryLimit;
    }
    if (!fits)
      return Status(StatusCode::kLimitExceeded,
                    fmt::format("no split into {} stages fits: node '{}' alone needs more memory "
                                "than any device's limit",
                                devices.size(), c.nodes[t]->displayName()));
  }
  return Status(StatusCode::kLimitExceeded,
                fmt::format("no split into {} stages fits the devices' memory limits ({}); give "
                            "more devices or larger limits",
                            devices.size(), [&] {
                              std::string out;
                              for (const StageDevice& d : devices)
                                out += (out.empty() ? "" : ", ") + d.name + " " +
                                       (d.memoryLimit ? formatBytes(d.memoryLimit) : "unlimited");
                              return out;
                            }()));
}

}  // namespace

StatusOr<std::vector<StageDevice>> stageDevices(const std::vector<std::string>& names,
                                                const std::vector<uint64_t>& limits,
                                                const std::string& what) {
  if (limits.size() > 1 && limits.size() != names.size())
    return Status(StatusCode::kUsage,
                  fmt::format("{} gives {} limits for {} devices (one for all, or one each)", what,
                              limits.size(), names.size()));
  std::vector<StageDevice> devices;
  for (size_t k = 0; k < names.size(); ++k)
    devices.push_back({names[k], limits.empty() ? 0 : limits[limits.size() == 1 ? 0 : k]});
  return devices;
}

StatusOr<StagePlan> planStages(const Graph& graph, const std::vector<StageDevice>& devices) {
  if (devices.empty()) return Status(StatusCode::kUsage, "stages: no device to place stages on");
  // Costs and bytes read static shapes, which a graph built in memory may
  // not state yet.
  std::unique_ptr<Graph> typed = graph.clone();
  (void)inferShapes(*typed);
  Chain c;
  SUBGRAPH_RETURN_IF_ERROR(buildChain(*typed, c));
  if (c.nodes.size() < devices.size())
    return Status(StatusCode::kUsage, fmt::format("stages: {} stages for a graph of {} nodes",
                                                  devices.size(), c.nodes.size()));
  std::vector<uint64_t> limits;
  for (const StageDevice& d : devices) limits.push_back(d.memoryLimit);
  // The planner's fragmentation can only add bytes to the estimate: a
  // stage over its limit shrinks its device's budget, and the search reruns.
  for (int attempt = 0; attempt < 6; ++attempt) {
    double bound = 0;
    std::vector<size_t> ends = balancedEnds(c, limits, bound);
    if (ends.empty()) return noFit(c, devices);
    // A stage may cost a little more than the best balance when that lets
    // a cut cross fewer bytes (a block's end instead of its middle).
    ends = fewestCrossing(c, limits, bound * (1 + kBalanceSlack), std::move(ends));
    StagePlan plan;
    bool over = false;
    for (size_t k = 0, begin = 0; k < ends.size(); begin = ends[k++]) {
      Stage s = describeStage(c, begin, ends[k], ends);
      s.device = devices[k].name;
      s.memoryLimit = devices[k].memoryLimit;
      if (s.memoryLimit && s.memoryBytes() > s.memoryLimit) {
        limits[k] -= std::min(limits[k] - 1, s.memoryBytes() - s.memoryLimit);
        over = true;
      }
      plan.crossingBytes += k + 1 < ends.size() ? c.crossing[ends[k]] : 0;
      plan.stages.push_back(std::move(s));
    }
    if (over) continue;
    double total = 0, largest = 0;
    for (const Stage& s : plan.stages) {
      total += s.cost;
      largest = std::max(largest, s.cost);
    }
    plan.imbalance = total > 0 ? largest / (total / static_cast<double>(plan.stages.size())) : 1;
    return plan;
  }
  return noFit(c, devices);
}

namespace {

// The stage graph's value for `v` of the original, made on first use: a
// constant shared, anything else a new input.
Value* stageValue(Graph& stage, const Value* v, std::unordered_map<const Value*, Value*>& map) {
  if (!v) return nullptr;
  if (auto it = map.find(v); it != map.end()) return it->second;
  Value* made =
      v->initializer() ? stage.shareInitializer(*v) : stage.addInput(v->name(), v->type());
  map[v] = made;
  return made;
}

}  // namespace

StatusOr<std::unique_ptr<Graph>> stageGraph(const Graph& graph, const StagePlan& plan, size_t k) {
  if (k >= plan.stages.size())
    return Status(StatusCode::kUsage,
                  fmt::format("stage {} of a plan of {}", k, plan.stages.size()));
  std::unordered_set<std::string> members(plan.stages[k].nodes.begin(), plan.stages[k].nodes.end());
  StatusOr<std::vector<Node*>> order = graph.topologicalOrder();
  if (!order.isOk()) return order.status();
  auto stage = std::make_unique<Graph>(fmt::format("{}_stage{}", graph.name(), k));
  stage->shareOpsetImports(graph);
  std::unordered_map<const Value*, Value*> map;
  for (const Node* node : *order) {
    if (!members.count(node->displayName())) continue;
    std::vector<Value*> inputs, outputs;
    for (size_t i = 0; i < node->numInputs(); ++i)
      inputs.push_back(stageValue(*stage, node->input(i), map));
    for (size_t o = 0; o < node->numOutputs(); ++o) {
      const Value* v = node->output(o);
      outputs.push_back(v ? (map[v] = stage->createValue(v->name(), v->type())) : nullptr);
    }
    std::vector<Attribute> attrs(node->attributes().begin(), node->attributes().end());
    stage->addNode(&node->opKey(), std::move(inputs), std::move(outputs), std::move(attrs),
                   node->name());
  }
  if (stage->numNodes() != members.size())
    return Status(StatusCode::kInternal,
                  fmt::format("stage {}: {} of its {} nodes are in the graph", k, stage->numNodes(),
                              members.size()));
  std::unordered_set<const Value*> added;
  auto output = [&](Value* v) {
    if (v && v->producer() && added.insert(v).second) stage->addOutput(v);
  };
  for (const Value* out : graph.outputs())
    if (auto it = map.find(out); it != map.end()) output(it->second);
  for (const StageValue& sent : plan.stages[k].sends) output(stage->findValue(sent.name));
  return stage;
}

std::string stagesToJson(const StagePlan& plan) {
  nlohmann::ordered_json json;
  json["crossing_bytes"] = plan.crossingBytes;
  json["imbalance"] = plan.imbalance;
  json["stages"] = nlohmann::ordered_json::array();
  for (size_t k = 0; k < plan.stages.size(); ++k) {
    const Stage& s = plan.stages[k];
    nlohmann::ordered_json stage;
    stage["stage"] = k;
    stage["device"] = s.device;
    stage["memory_limit"] = s.memoryLimit;
    stage["weight_bytes"] = s.weightBytes;
    stage["activation_bytes"] = s.activationBytes;
    stage["cost"] = s.cost;
    stage["nodes"] = s.nodes;
    stage["sends"] = nlohmann::ordered_json::array();
    for (const StageValue& v : s.sends)
      stage["sends"].push_back({{"value", v.name}, {"bytes", v.bytes}, {"to_stage", v.toStage}});
    json["stages"].push_back(std::move(stage));
  }
  return json.dump();
}

std::string stagesSummary(const StagePlan& plan) {
  std::string out =
      fmt::format("stages: {} (cost imbalance {:.2f}, {} crossing the cuts)\n", plan.stages.size(),
                  plan.imbalance, formatBytes(plan.crossingBytes));
  for (size_t k = 0; k < plan.stages.size(); ++k) {
    const Stage& s = plan.stages[k];
    out += fmt::format(
        "  stage {} on {}: {} nodes, memory {} ({} weights + {} activations){}, cost {:.3g}\n", k,
        s.device, s.nodes.size(), formatBytes(s.memoryBytes()), formatBytes(s.weightBytes),
        formatBytes(s.activationBytes),
        s.memoryLimit ? " of " + formatBytes(s.memoryLimit) : std::string(), s.cost);
    for (const StageValue& v : s.sends)
      out +=
          fmt::format("    sends %{} ({}) to stage {}\n", v.name, formatBytes(v.bytes), v.toStage);
  }
  return out;
}

}  // namespace subgraph::api
