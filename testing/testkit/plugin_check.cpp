//===- testing/testkit/plugin_check.cpp - Conformance run of one backend --===//
//
// See plugin_check.h. Random graphs are built from a catalog of
// shape-preserving entries on one [1, 4, 5, 5] float32 tensor, so that any
// entry can feed any other and deleting a node (rewiring its readers to
// its data input) mostly leaves a valid graph: that is what makes
// shrinking simple (a deletion that breaks the graph fails differently and
// is not kept). Entries are single ops (Conv, MatMul, LayerNormalization,
// a broadcast bias Add, ...) or what exporters write in several (Gemm on a
// flattened view, GELU's erf form, an attention block, a Concat split
// back, a Split joined back).
//
//===----------------------------------------------------------------------===//
#include "testkit/plugin_check.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "subgraph/ir/text_format.h"
#include "subgraph/partition/partitioner.h"
#include "subgraph/partition/pattern_selector.h"
#include "subgraph/passes/dead_code_elimination.h"
#include "subgraph/plugin_abi.h"
#include "testkit/partition_oracle.h"

namespace subgraph::testkit {
namespace {

using partition::Decision;
using partition::NodeView;
using partition::SubgraphSelectorV2;

constexpr int64_t kC = 4, kH = 5, kW = 5;

TensorType dataType() { return TensorType(DataType::kFloat32, {1, kC, kH, kW}); }

Tensor randomTensor(RandomSource& rng, std::vector<int64_t> dims, float lo, float hi) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values)
    v = lo + (hi - lo) * static_cast<float>(rng.next() >> 40) / static_cast<float>(1 << 24);
  return Tensor::fromVector(DataType::kFloat32, std::move(dims), values);
}

/// Watches one selector: after every Reset() a fresh selector of the same
/// property is asked the same questions, and the first different answer is
/// reported, because a selector that keeps state across Reset() carves
/// regions that depend on the order seeds are visited in. It is offered
/// every node, whatever seed ops its property declares, and reports a
/// Select that breaks that promise (anything but a reasonless no to a node
/// of another op): the host never offers it such a node, so the regions it
/// would start there silently never form.
class WatchedSelector final : public SubgraphSelectorV2 {
 public:
  WatchedSelector(std::unique_ptr<SubgraphSelectorV2> inner, const partition::SubgraphProperty& p,
                  std::string label, std::vector<std::string>* problems)
      : inner_(std::move(inner)), property_(p), label_(std::move(label)), problems_(problems) {
    if (std::vector<std::string> ops = p.SeedOpTypes(); !ops.empty())
      seeds_ = partition::OpMatcher::anyOf(std::move(ops));
  }
  Decision Select(const NodeView& n) override {
    Decision d = inner_->Select(n);
    if (seeds_ && !seeds_->matchesOpType(n.node()) && (d.canFuse() || !d.reason().empty()))
      record(fmt::format(
          "seeds: the selector of {} declares seed ops {} but answers Select({}), a {}, with "
          "{}; the host offers it only nodes of those ops, so it never sees this one",
          label_, seeds_->describe(), n.node().name(), n.node().opType(),
          d.canFuse() ? "yes" : "no and the reason '" + d.reason() + "'"));
    if (fresh_) compare(d, fresh_->Select(n), "Select(" + n.node().name() + ")");
    return d;
  }
  Decision SelectInput(const NodeView& n, const NodeView& p) override {
    Decision d = inner_->SelectInput(n, p);
    if (fresh_)
      compare(d, fresh_->SelectInput(n, p),
              "SelectInput(" + n.node().name() + ", " + p.node().name() + ")");
    return d;
  }
  Decision SelectOutput(const NodeView& n, const NodeView& c) override {
    Decision d = inner_->SelectOutput(n, c);
    if (fresh_)
      compare(d, fresh_->SelectOutput(n, c),
              "SelectOutput(" + n.node().name() + ", " + c.node().name() + ")");
    return d;
  }
  std::vector<const Node*> Filter(std::span<const Node* const> candidates) override {
    std::vector<const Node*> kept = inner_->Filter(candidates);
    if (fresh_ && fresh_->Filter(candidates) != kept) note("Filter");
    return kept;
  }
  std::string FilterReason(const Node& node) const override { return inner_->FilterReason(node); }
  void Reset() override {
    inner_->Reset();
    fresh_ = property_.CreateSubgraphSelectorV2();
    if (fresh_) fresh_->Reset();
  }

 private:
  void compare(const Decision& used, const Decision& fresh, const std::string& call) {
    if (used.canFuse() != fresh.canFuse()) note(call);
  }
  void note(const std::string& call) {
    record("reset: the selector of " + label_ + " answers " + call +
           " differently after Reset() than a fresh selector does (state survives Reset)");
  }
  // Keeps the first problem only.
  void record(std::string problem) {
    if (problems_ && problems_->empty()) problems_->push_back(std::move(problem));
  }
  std::optional<partition::OpMatcher> seeds_;  // the declared seed ops, if any
  std::unique_ptr<SubgraphSelectorV2> inner_, fresh_;
  const partition::SubgraphProperty& property_;
  std::string label_;
  std::vector<std::string>* problems_;
};

/// Delegates everything to `inner` and watches its selectors.
class WatchedProperty final : public partition::SubgraphProperty {
 public:
  WatchedProperty(std::unique_ptr<SubgraphProperty> inner, std::string label,
                  std::vector<std::string>* problems)
      : inner_(std::move(inner)), label_(std::move(label)), problems_(problems) {
    setOptions(inner_->options());
  }
  std::string name() const override { return inner_->name(); }
  std::unique_ptr<SubgraphSelectorV2> CreateSubgraphSelectorV2() const override {
    std::unique_ptr<SubgraphSelectorV2> s = inner_->CreateSubgraphSelectorV2();
    if (!s) return nullptr;
    return std::make_unique<WatchedSelector>(std::move(s), *inner_, label_, problems_);
  }
  partition::SubgraphNodeResult CreateSubgraphNode(
      std::shared_ptr<Graph> body, const partition::RegionInfo& region) const override {
    return inner_->CreateSubgraphNode(std::move(body), region);
  }
  Status ConnectSubgraphInputs(Graph& body, std::vector<Value*>& inputs) const override {
    return inner_->ConnectSubgraphInputs(body, inputs);
  }
  Status ConnectSubgraphOutputs(Graph& body, std::vector<Value*>& outputs) const override {
    return inner_->ConnectSubgraphOutputs(body, outputs);
  }
  Status PrePartition(const Graph& graph) override { return inner_->PrePartition(graph); }
  Status PostPartition(Graph& graph, std::span<const partition::FusedRegion> regions) override {
    return inner_->PostPartition(graph, regions);
  }
  bool HasPartitionHooks() const override { return inner_->HasPartitionHooks(); }

 private:
  std::unique_ptr<SubgraphProperty> inner_;
  std::string label_;
  std::vector<std::string>* problems_;
};

/// The failure's category: the text before its first ':'.
std::string category(const std::string& failure) { return failure.substr(0, failure.find(':')); }

}  // namespace

StatusOr<BackendUnderTest> BackendUnderTest::open(
    const std::string& nameOrPath, const std::vector<std::filesystem::path>& searchPath) {
  if (nameOrPath.empty() || nameOrPath.find(',') != std::string::npos || nameOrPath == "NONE")
    return Status::invalid("'" + nameOrPath + "' is not one backend name or plugin path");
  plugins::SelectOptions select;
  select.searchPath = searchPath;
  StatusOr<plugins::BackendSelection> selection = plugins::selectBackends(nameOrPath, select);
  if (!selection.isOk()) return selection.status();
  BackendUnderTest b;
  b.selection_ = std::move(selection).value();
  b.name_ = b.selection_.backends().front().name;
  b.plugin_ = b.selection_.backends().front().plugin;
  return b;
}

std::vector<std::string> BackendUnderTest::describe() const {
  std::vector<std::string> lines;
  if (plugin_) {
    const plugins::PluginInfo& i = plugin_->info();
    lines.push_back(fmt::format("plugin:     {} {} (plugin ABI {}): {}", i.name, i.version,
                                i.abiVersion, i.description));
    lines.push_back("path:       " + i.path);
    lines.push_back("properties: " + joinedOrNone(i.properties));
    lines.push_back("ops:        " + joinedOrNone(i.ops));
    lines.push_back("kernels:    " + joinedOrNone(i.kernels));
    lines.push_back("transforms: " + joinedOrNone(i.transforms));
    lines.push_back("device:     " + i.device);
  } else {
    lines.push_back("backend:    " + name_ + " (built into this program)");
    lines.push_back("properties: " + joinedOrNone(propertyNames()));
    lines.push_back(std::string("kernels:    ") +
                    (hasKernels() ? "runtime backend " + name_ : "none"));
  }
  return lines;
}

bool BackendUnderTest::hasKernels() const {
  if (plugin_) return plugin_->hasKernels();
  std::vector<std::string> known = runtime::BackendRegistry::global().names();
  return std::find(known.begin(), known.end(), name_) != known.end();
}

std::vector<std::string> BackendUnderTest::propertyNames() const {
  std::vector<std::string> names;
  StatusOr<std::vector<partition::SubgraphBackend>> made = instantiate();
  if (made.isOk())
    for (const auto& p : made->front().properties) names.push_back(p->name());
  return names;
}

StatusOr<std::vector<partition::SubgraphBackend>> BackendUnderTest::instantiate(
    std::vector<std::string>* resetProblems) const {
  partition::SubgraphBackend backend;
  if (plugin_) {
    backend = plugin_->instantiateBackend();
  } else {
    StatusOr<partition::SubgraphBackend> made =
        partition::BackendRegistry::global().instantiate(name_);
    if (!made.isOk()) return made.status();
    backend = std::move(made).value();
  }
  if (resetProblems)
    for (auto& p : backend.properties) {
      std::string label = name_ + "/" + p->name();
      p = std::make_unique<WatchedProperty>(std::move(p), label, resetProblems);
    }
  std::vector<partition::SubgraphBackend> out;
  out.push_back(std::move(backend));
  return out;
}

StatusOr<partition::PartitionReport> BackendUnderTest::partitionLikeTheProgram(Graph& graph) const {
  return selection_.partition(graph);
}

std::vector<std::string> BackendUnderTest::declaredSeedEntries() const {
  std::set<std::string> declared;
  StatusOr<std::vector<partition::SubgraphBackend>> made = instantiate();
  if (made.isOk())
    for (const auto& p : made->front().properties)
      for (const std::string& op : p->SeedOpTypes()) declared.insert(op);
  std::vector<std::string> entries;
  for (const std::string& e : catalogOps())
    if (declared.count(e) || (e == "BiasAdd" && declared.count("Add"))) entries.push_back(e);
  return entries;
}

namespace {

// The fused regions of `partitioned` that `output` depends on, nearest
// first, as "'<node>' (backend <b>)", at most three; "" if none.
std::string regionsComputing(const Graph& partitioned, const std::string& output) {
  const Value* v = nullptr;
  for (const Value* out : partitioned.outputs())
    if (out && out->name() == output) v = out;
  std::vector<const Node*> queue, regions;
  std::set<const Node*> seen;
  if (v && v->producer()) queue.push_back(v->producer());
  for (size_t i = 0; i < queue.size() && regions.size() < 3; ++i) {
    const Node* n = queue[i];
    if (!seen.insert(n).second) continue;
    if (n->domain().starts_with("subgraph.")) regions.push_back(n);
    for (size_t k = 0; k < n->numInputs(); ++k)
      if (n->input(k) && n->input(k)->producer()) queue.push_back(n->input(k)->producer());
  }
  std::string out;
  for (const Node* r : regions)
    out += fmt::format("{}'{}' (backend {})", out.empty() ? "" : ", ", r->displayName(),
                       r->domain().substr(std::string("subgraph.").size()));
  return out;
}

}  // namespace

std::string BackendUnderTest::compareWithReference(const Graph& graph,
                                                   const std::vector<runtime::NamedTensor>& inputs,
                                                   double tolerance, size_t* kernelSteps) const {
  runtime::SessionOptions refOptions;
  refOptions.threads = 1;
  refOptions.useArena = false;
  runtime::Session ref(refOptions);
  Status s = ref.load(graph);
  if (s.isOk()) s = ref.compile();
  if (!s.isOk()) return "reference: the reference backend cannot run the graph: " + s.message();
  StatusOr<runtime::RunResult> expected = ref.run(inputs);
  if (!expected.isOk())
    return "reference: the reference backend cannot run the graph: " + expected.status().message();

  runtime::SessionOptions options;
  options.threads = 1;
  options.useArena = false;
  auto instances = selection_.runtimeBackends(1);
  if (!instances.isOk()) return "numerics: no runtime backend: " + instances.status().message();
  options.backendInstances = std::move(instances).value();
  runtime::Session session(options);
  s = session.load(graph);
  if (s.isOk())
    s = session.partition([&](Graph& g) -> Status {
      auto report = selection_.partition(g);
      return report.isOk() ? Status::ok() : report.status();
    });
  if (s.isOk()) s = session.compile();
  if (!s.isOk()) return "numerics: the partitioned graph cannot run: " + s.message();
  if (kernelSteps) {
    *kernelSteps = 0;
    for (const runtime::StepInfo& step : session.steps())
      if (step.isRegion && step.backend == name_) ++*kernelSteps;
  }
  StatusOr<runtime::RunResult> actual = session.run(inputs);
  if (!actual.isOk())
    return "numerics: the partitioned graph cannot run: " + actual.status().message();

  for (const runtime::NamedTensor& want : expected->outputs) {
    auto got = std::find_if(actual->outputs.begin(), actual->outputs.end(),
                            [&](const runtime::NamedTensor& t) { return t.name == want.name; });
    if (got == actual->outputs.end()) return "numerics: output %" + want.name + " is missing";
    if (got->tensor.dims() != want.tensor.dims() || got->tensor.dtype() != want.tensor.dtype())
      return "numerics: output %" + want.name + " has another shape or type than the reference's";
    for (int64_t i = 0; i < want.tensor.numElements(); ++i) {
      double a = got->tensor.elementAsDouble(i), b = want.tensor.elementAsDouble(i);
      if (!(std::fabs(a - b) <= tolerance * (1 + std::fabs(b)))) {
        std::string regions = regionsComputing(session.graph(), want.name);
        return fmt::format(
            "numerics: output %{} element {} is {:.6g}, the reference computes {:.6g} "
            "(tolerance {:g}){}",
            want.name, i, a, b, tolerance,
            regions.empty() ? std::string() : "; computed by region " + regions);
      }
    }
  }
  return {};
}

std::string joinedOrNone(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

std::vector<runtime::NamedTensor> randomInputs(const Graph& graph, uint64_t seed) {
  SeededRandom rng(mix(seed ^ 0x1a2b3c4dULL));
  std::vector<runtime::NamedTensor> inputs;
  for (Value* v : graph.inputs()) {
    std::vector<int64_t> dims;
    if (v->type().shape)
      for (const Dim& d : *v->type().shape) dims.push_back(d.isStatic() ? d.size() : 1);
    inputs.push_back({v->name(), randomTensor(rng, dims, -2.0f, 2.0f)});
  }
  return inputs;
}

std::vector<std::string> catalogOps() {
  return {"Conv",
          "BatchNormalization",
          "Relu",
          "Sigmoid",
          "Tanh",
          "Abs",
          "Neg",
          "LeakyRelu",
          "Clip",
          "Identity",
          "Add",
          "Mul",
          "Sub",
          "Max",
          "Min",
          "MaxPool",
          "AveragePool",
          "Softmax",
          "MatMul",
          "Gemm",
          "BiasAdd",
          "Div",
          "Erf",
          "Gelu",
          "Transpose",
          "Reshape",
          "Concat",
          "Split",
          "LayerNormalization",
          "Attention"};
}

namespace {

// Builds the nodes of one catalog entry: constants named after the entry,
// inner nodes named "<name>.<step>", the last one `name`.
class CatalogBuilder {
 public:
  CatalogBuilder(Graph& graph, RandomSource& rng, const std::string& name)
      : graph_(graph), rng_(rng), name_(name) {}

  Value* constant(const std::string& suffix, std::vector<int64_t> dims, float lo, float hi) {
    return graph_.addInitializer(name_ + suffix, randomTensor(rng_, std::move(dims), lo, hi));
  }
  Value* scalar(const std::string& suffix, float v) {
    return graph_.addInitializer(name_ + suffix, Tensor::splat(DataType::kFloat32, {}, v));
  }
  Value* ints(const std::string& suffix, std::vector<int64_t> v) {
    const auto n = static_cast<int64_t>(v.size());
    return graph_.addInitializer(name_ + suffix,
                                 Tensor::fromVector(DataType::kInt64, {n}, std::move(v)));
  }
  /// A node of `op`; `step` empty makes it the entry's last node.
  Value* node(const std::string& op, std::vector<Value*> inputs, std::vector<int64_t> dims,
              std::vector<Attribute> attrs = {}, const std::string& step = {}, size_t outputs = 1) {
    Node* n = graph_.addNode(op, inputs, outputs, std::move(attrs),
                             step.empty() ? name_ : name_ + "." + step);
    Shape shape(dims.begin(), dims.end());
    for (size_t o = 0; o < outputs; ++o)
      n->output(o)->setType(TensorType(DataType::kFloat32, shape));
    return n->output(0);
  }

 private:
  Graph& graph_;
  RandomSource& rng_;
  const std::string& name_;
};

const std::vector<int64_t> kData = {1, kC, kH, kW};

// The composite entries: several nodes each, what exporters write for a
// dense layer, GELU, attention, a concat or a split, ending in the
// [1, 4, 5, 5] type every entry keeps.
Value* addComposite(CatalogBuilder& b, RandomSource& rng, const std::string& op, Value* data,
                    Value* other) {
  if (op == "Gemm") {  // 2-D only: flattened to [20, 5] and back
    Value* flat =
        b.node("Reshape", {data, b.ints(".flat", {kC * kH, kW})}, {kC * kH, kW}, {}, "flatten");
    Value* dense =
        b.node("Gemm",
               {flat, b.constant(".w", {kW, kW}, -0.5f, 0.5f), b.constant(".b", {kW}, -0.5f, 0.5f)},
               {kC * kH, kW}, {{"transB", int64_t{rng.percent(50) ? 1 : 0}}}, "gemm");
    return b.node("Reshape", {dense, b.ints(".shape", kData)}, kData);
  }
  if (op == "Gelu") {  // x * 0.5 * (1 + erf(x / sqrt(2))), as torch exports it
    Value* d = b.node("Div", {data, b.scalar(".sqrt2", 1.4142135f)}, kData, {}, "div");
    Value* e = b.node("Erf", {d}, kData, {}, "erf");
    Value* a = b.node("Add", {e, b.scalar(".one", 1.0f)}, kData, {}, "add");
    Value* m = b.node("Mul", {data, a}, kData, {}, "mul");
    return b.node("Mul", {m, b.scalar(".half", 0.5f)}, kData);
  }
  if (op == "Attention") {  // softmax(q k^T / sqrt(d)) v, q k v projections of x
    auto project = [&](const char* which) {
      return b.node("MatMul", {data, b.constant(std::string(".w") + which, {kW, kW}, -0.5f, 0.5f)},
                    kData, {}, which);
    };
    Value* q = project("q");
    Value* k = project("k");
    Value* v = project("v");
    Value* kt = b.node("Transpose", {k}, kData, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}}, "kt");
    Value* s = b.node("MatMul", {q, kt}, kData, {}, "scores");
    Value* scaled = b.node("Div", {s, b.scalar(".scale", 2.236068f)}, kData, {}, "scale");
    Value* p = b.node("Softmax", {scaled}, kData, {{"axis", int64_t{-1}}}, "softmax");
    return b.node("MatMul", {p, v}, kData);
  }
  const std::vector<int64_t> wide = {1, kC, kH, 2 * kW};
  if (op == "Concat") {  // joined on W, then split back
    Value* c =
        b.node("Concat", {data, other ? other : data}, wide, {{"axis", int64_t{3}}}, "concat");
    return b.node("Split", {c, b.ints(".split", {kW, kW})}, kData, {{"axis", int64_t{3}}}, {}, 2);
  }
  // Split: H in two parts [2, 3], joined again in the other order.
  Node* split = b.node("Split", {data, b.ints(".split", {2, kH - 2})}, kData,
                       {{"axis", int64_t{2}}}, "split", 2)
                    ->producer();
  split->output(0)->setType(TensorType(DataType::kFloat32, Shape{1, kC, 2, kW}));
  split->output(1)->setType(TensorType(DataType::kFloat32, Shape{1, kC, kH - 2, kW}));
  return b.node("Concat", {split->output(1), split->output(0)}, kData, {{"axis", int64_t{2}}});
}

}  // namespace

Value* addCatalogNode(Graph& graph, RandomSource& rng, const std::string& op, Value* data,
                      Value* other, const std::string& name) {
  CatalogBuilder b(graph, rng, name);
  if (op == "Gemm" || op == "Gelu" || op == "Attention" || op == "Concat" || op == "Split")
    return addComposite(b, rng, op, data, other);
  std::vector<Value*> inputs = {data};
  std::vector<Attribute> attrs;
  std::string type = op;
  if (op == "Conv") {
    int64_t k = rng.percent(50) ? 3 : 1, pad = k / 2;
    inputs.push_back(b.constant(".w", {kC, kC, k, k}, -0.5f, 0.5f));
    if (rng.percent(50)) inputs.push_back(b.constant(".b", {kC}, -0.5f, 0.5f));
    attrs = {{"dilations", std::vector<int64_t>{1, 1}},
             {"group", int64_t{1}},
             {"kernel_shape", std::vector<int64_t>{k, k}},
             {"pads", std::vector<int64_t>{pad, pad, pad, pad}},
             {"strides", std::vector<int64_t>{1, 1}}};
  } else if (op == "BatchNormalization") {
    inputs.push_back(b.constant(".scale", {kC}, 0.5f, 1.5f));
    inputs.push_back(b.constant(".bias", {kC}, -0.5f, 0.5f));
    inputs.push_back(b.constant(".mean", {kC}, -0.5f, 0.5f));
    inputs.push_back(b.constant(".var", {kC}, 0.5f, 1.5f));
    attrs = {{"epsilon", 1e-5f}, {"momentum", 0.9f}};
  } else if (op == "LeakyRelu") {
    attrs = {{"alpha", 0.1f}};
  } else if (op == "Clip") {
    inputs.push_back(b.scalar(".min", 0));
    inputs.push_back(b.scalar(".max", 1));
  } else if (op == "Add" || op == "Mul" || op == "Sub" || op == "Max" || op == "Min") {
    inputs.push_back(other ? other : data);
  } else if (op == "MaxPool" || op == "AveragePool") {
    attrs = {{"kernel_shape", std::vector<int64_t>{3, 3}},
             {"pads", std::vector<int64_t>{1, 1, 1, 1}},
             {"strides", std::vector<int64_t>{1, 1}}};
  } else if (op == "Softmax") {
    attrs = {{"axis", int64_t{rng.percent(50) ? 1 : -1}}};
  } else if (op == "MatMul") {
    // By constant weights (a dense layer) or by a run-time tensor (batched).
    inputs.push_back(rng.percent(60) ? b.constant(".w", {kW, kW}, -0.5f, 0.5f)
                                     : (other ? other : data));
  } else if (op == "BiasAdd") {
    // A constant broadcast along the last axis (a dense layer's bias) or
    // per channel.
    type = "Add";
    inputs.push_back(rng.percent(50) ? b.constant(".b", {kW}, -0.5f, 0.5f)
                                     : b.constant(".b", {1, kC, 1, 1}, -0.5f, 0.5f));
  } else if (op == "Div") {
    inputs.push_back(b.scalar(".d", 1.0f + static_cast<float>(rng.below(4))));
  } else if (op == "Transpose") {
    attrs = {{"perm", std::vector<int64_t>{0, 1, 3, 2}}};
  } else if (op == "Reshape") {
    inputs.push_back(
        b.ints(".shape", rng.percent(50) ? kData : std::vector<int64_t>{1, kC, -1, kW}));
  } else if (op == "LayerNormalization") {
    inputs.push_back(b.constant(".scale", {kW}, 0.5f, 1.5f));
    inputs.push_back(b.constant(".bias", {kW}, -0.5f, 0.5f));
    attrs = {{"axis", int64_t{-1}}, {"epsilon", 1e-5f}};
  }
  return b.node(type, inputs, kData, std::move(attrs));
}

std::unique_ptr<Graph> randomCatalogGraph(uint64_t seed, const std::vector<std::string>& ops,
                                          const std::vector<std::string>& others) {
  SeededRandom rng(mix(seed));
  auto g = std::make_unique<Graph>("case");
  std::vector<Value*> pool;
  size_t numInputs = 1 + rng.below(2);
  for (size_t i = 0; i < numInputs; ++i) pool.push_back(g->addInput(numbered("x", i), dataType()));
  size_t numNodes = 2 + rng.below(11);
  auto pick = [&] {
    // Prefer recent values so graphs are deep as well as wide.
    size_t back = rng.below(std::min<size_t>(pool.size(), 3));
    return rng.percent(70) ? pool[pool.size() - 1 - back] : pool[rng.below(pool.size())];
  };
  for (size_t i = 0; i < numNodes; ++i) {
    bool touched = !ops.empty() && (others.empty() || rng.percent(70));
    const std::vector<std::string>& from = touched ? ops : others;
    const std::string& op = from[rng.below(from.size())];
    Value* data = pick();
    Value* other = pick();
    pool.push_back(addCatalogNode(*g, rng, op, data, other, numbered("n", i)));
  }
  for (Value* v : pool)
    if (v->producer() && !v->hasUses()) g->addOutput(v);
  if (rng.percent(20)) g->addOutput(pool[numInputs + rng.below(pool.size() - numInputs)]);
  return g;
}

std::vector<std::string> probeTouchedOps(const BackendUnderTest& backend) {
  std::set<std::string> touched;
  const std::vector<std::string> ops = catalogOps();
  // One instance of the properties serves every probe (making them is most
  // of a probe's cost: patterns are built and op names checked); a probe
  // that fails gets the next one a fresh instance, since a property may
  // keep a failing selector's error.
  StatusOr<std::vector<partition::SubgraphBackend>> made = backend.instantiate();
  auto probe = [&](const std::vector<std::string>& chain, uint64_t variant) {
    SeededRandom rng(7 + variant);
    Graph g("probe");
    Value* x = g.addInput("x", dataType());
    Value* v = x;
    for (size_t i = 0; i < chain.size(); ++i)
      v = addCatalogNode(g, rng, chain[i], v, x, numbered("p", i));
    g.addOutput(v);
    if (!made.isOk()) return;
    partition::PartitionOptions po;
    po.reportContested = false;
    StatusOr<partition::PartitionReport> report = partition::partitionGraph(g, *made, po);
    if (!report.isOk()) {
      made = backend.instantiate();
      return;
    }
    // A composite entry's inner nodes are named "<entry>.<step>".
    for (const partition::RegionReport& r : report->regions)
      for (const std::string& node : r.nodes)
        for (size_t i = 0; i < chain.size(); ++i)
          if (node == numbered("p", i) || node.starts_with(numbered("p", i) + "."))
            touched.insert(chain[i]);
  };
  for (const std::string& a : ops) {
    probe({a}, 0);
    for (const std::string& b : ops) probe({a, b}, 0);
  }
  // From what the selectors declare they start at: other random operands
  // (constant or run-time weights, other broadcasts) and one more step.
  for (const std::string& seed : backend.declaredSeedEntries())
    for (const std::string& b : ops) {
      for (uint64_t variant = 1; variant < 3; ++variant) probe({seed, b}, variant);
      for (const std::string& c : ops) probe({seed, b, c}, 0);
    }
  return {touched.begin(), touched.end()};
}

std::string unexercised(const CheckSummary& summary, const std::string& backendName) {
  if (summary.failed != 0) return {};
  if (summary.casesWithRegions == 0)
    return fmt::format(
        "no case formed a region, so '{}' was not exercised (its selectors fuse: {}); name the "
        "ops it fuses with --ops",
        backendName, joinedOrNone(summary.touchedOps));
  if (summary.numerics && summary.casesWithKernels == 0)
    return fmt::format(
        "regions formed in {} cases but '{}''s kernels ran in none (each declined, so the "
        "regions ran their bodies on the reference backend): its kernels were not exercised",
        summary.casesWithRegions, backendName);
  return {};
}

std::string checkGraph(const BackendUnderTest& backend, const Graph& graph, uint64_t inputSeed,
                       const CheckOptions& options, CaseStats* stats) {
  std::unique_ptr<Graph> work = graph.clone();
  std::vector<std::string> resetProblems;
  StatusOr<std::vector<partition::SubgraphBackend>> made = backend.instantiate(&resetProblems);
  if (!made.isOk()) return "instantiate: " + made.status().message();
  partition::PartitionOptions po;
  po.reportContested = false;
  StatusOr<partition::PartitionReport> report = partition::partitionGraph(*work, *made, po);
  if (!report.isOk()) return "partitioning: " + report.status().message();
  if (std::string e = checkPartition(graph, *work, *report); !e.empty()) return "invariant: " + e;
  for (const partition::RejectedNode& r : report->rejected)
    if (r.kind == "cycle")
      return "cycle: a region the selector proposed would create a cycle, and the partitioner had "
             "to cut node '" +
             r.node + "' (" + r.op + ") out of it: " + r.reason +
             ". Fix the selector: a region must be convex, so SelectInput/SelectOutput must not "
             "add a node that reads, through nodes left outside, a value the region produces "
             "(answer no there, or also select the nodes in between)";
  if (!resetProblems.empty()) return resetProblems.front();
  const bool formed = !report->regions.empty();
  if (stats) stats->formedRegions = formed;
  if (options.numerics && backend.hasKernels()) {
    size_t kernelSteps = 0;
    std::string failure = backend.compareWithReference(graph, randomInputs(graph, inputSeed),
                                                       options.tolerance, &kernelSteps);
    if (stats) stats->ranKernels = formed && failure.empty() && kernelSteps > 0;
    return failure;
  }
  return {};
}

namespace {

// checkGraph, or the caller's replacement for it (CheckOptions::runCase).
std::string checkCase(const BackendUnderTest& backend, const Graph& graph, uint64_t inputSeed,
                      const CheckOptions& options, CaseStats* stats = nullptr) {
  return options.runCase ? options.runCase(graph, inputSeed, stats)
                         : checkGraph(backend, graph, inputSeed, options, stats);
}

}  // namespace

std::unique_ptr<Graph> shrinkFailure(const BackendUnderTest& backend, const Graph& graph,
                                     uint64_t inputSeed, const CheckOptions& options) {
  std::unique_ptr<Graph> best = graph.clone();
  const std::string kind = category(checkCase(backend, *best, inputSeed, options));
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<std::string> names;
    for (Node* n : best->nodes()) names.push_back(n->name());
    for (auto it = names.rbegin(); it != names.rend() && !changed; ++it) {
      // Every catalog op keeps the type of its non-constant inputs, so its
      // readers (and the graph outputs it defines) can read one of those
      // instead; try each.
      for (size_t k = 0; k < 2 && !changed; ++k) {
        std::unique_ptr<Graph> candidate = best->clone();
        Node* victim = nullptr;
        for (Node* n : candidate->nodes())
          if (n->name() == *it) victim = n;
        if (!victim || k >= victim->numInputs() || candidate->numNodes() < 2) break;
        Value* replacement = victim->input(k);
        if (!replacement || replacement->isInitializer()) continue;
        for (Value* out : victim->outputs()) candidate->replaceAllUsesWith(out, replacement);
        candidate->removeNode(victim);
        (void)createDeadCodeEliminationPass()->run(*candidate);
        std::string failure = checkCase(backend, *candidate, inputSeed, options);
        if (!failure.empty() && category(failure) == kind) {
          best = std::move(candidate);
          changed = true;
        }
      }
    }
  }
  // Deleting nodes leaves graph outputs that are graph inputs, or repeated;
  // drop those from the return list when the case still fails without them.
  std::string text = printGraph(*best);
  size_t at = text.rfind("\n  return ");
  if (at == std::string::npos) return best;
  size_t from = at + 10, to = text.find('\n', from);
  std::vector<std::string> kept;
  for (Value* v : best->outputs())
    if (!v->isGraphInput() && std::find(kept.begin(), kept.end(), "%" + v->name()) == kept.end())
      kept.push_back("%" + v->name());
  if (kept.empty() || kept.size() == best->outputs().size()) return best;
  std::string list;
  for (const std::string& k : kept) list += (list.empty() ? "" : ", ") + k;
  StatusOr<std::unique_ptr<Graph>> trimmed =
      parseGraph(text.substr(0, from) + list + text.substr(to));
  if (trimmed.isOk()) {
    std::string failure = checkCase(backend, **trimmed, inputSeed, options);
    if (!failure.empty() && category(failure) == kind) return std::move(trimmed).value();
  }
  return best;
}

CheckSummary runConformance(const BackendUnderTest& backend, const CheckOptions& options) {
  CheckSummary summary;
  summary.touchedOps = options.ops.empty() ? probeTouchedOps(backend) : options.ops;
  for (const std::string& op : catalogOps())
    if (std::find(summary.touchedOps.begin(), summary.touchedOps.end(), op) ==
        summary.touchedOps.end())
      summary.otherOps.push_back(op);
  summary.numerics = options.numerics && backend.hasKernels();
  for (size_t i = 0; i < options.cases; ++i) {
    uint64_t seed = options.seed + i;
    std::unique_ptr<Graph> graph = randomCatalogGraph(seed, summary.touchedOps, summary.otherOps);
    if (options.beforeCase) options.beforeCase(seed);
    CaseStats stats;
    std::string failure = checkCase(backend, *graph, seed, options, &stats);
    summary.casesWithRegions += stats.formedRegions ? 1 : 0;
    summary.casesWithKernels += stats.ranKernels ? 1 : 0;
    if (failure.empty()) {
      ++summary.passed;
      continue;
    }
    ++summary.failed;
    if (summary.failures.size() >= options.maxFailuresShown) continue;
    CaseFailure f;
    f.seed = seed;
    f.nodesBefore = f.nodesAfter = graph->numNodes();
    f.what = failure;
    f.graphText = printGraph(*graph);
    // A hung case is not shrunk: every try would cost the whole timeout.
    if (category(failure) != "hung") {
      std::unique_ptr<Graph> small = shrinkFailure(backend, *graph, seed, options);
      f.nodesAfter = small->numNodes();
      f.what = checkCase(backend, *small, seed, options);
      f.graphText = printGraph(*small);
    }
    summary.failures.push_back(std::move(f));
  }
  return summary;
}

std::string formatFailure(const CaseFailure& f, const std::string& target) {
  return fmt::format(
      "case seed {} failed: {}\n  replay: subgraph check-plugin {} --seed {} --cases 1\n"
      "  smallest failing graph ({} of {} nodes):\n{}",
      f.seed, f.what, target, f.seed, f.nodesAfter, f.nodesBefore, f.graphText);
}

}  // namespace subgraph::testkit
