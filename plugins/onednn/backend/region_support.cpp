//===- plugins/onednn/backend/region_support.cpp - Shared pieces of the families -===//
//
// Layouts, body reading, activations and predicates shared by the onednn
// fusion families; see region_support.h.
//
//===----------------------------------------------------------------------===//
#include "region_support.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include <oneapi/tbb/task_arena.h>

#include "dnnl_context.h"

namespace subgraph::onednn {
namespace {

// One Layout object per blocked format; the runtime compares by address.
class BlockedLayout final : public runtime::Layout {
 public:
  BlockedLayout(Format format, std::string_view name) : format_(format), name_(name) {}
  std::string_view name() const override { return name_; }
  size_t byteSize(DataType, std::span<const int64_t> dims) const override {
    return formatBytes(dims, format_);
  }

 private:
  Format format_;
  std::string_view name_;
};

const BlockedLayout kBlocked16Layout(Format::kBlocked16, "nChw16c");
const BlockedLayout kNhwcBf16Layout(Format::kNhwcBf16, "nhwc.bf16");

}  // namespace

const runtime::Layout* layoutOf(Format format) {
  switch (format) {
    case Format::kPlain: return nullptr;
    case Format::kBlocked16: return &kBlocked16Layout;
    case Format::kNhwcBf16: return &kNhwcBf16Layout;
  }
  return nullptr;
}

bool bf16Mode() {
  // The backend's own variable wins over the generic one that
  // `subgraph run --precision` sets, so a mixed-backend run can keep
  // oneDNN in fp32.
  const char* env = std::getenv("SUBGRAPH_ONEDNN_PRECISION");
  if (!env || !*env) env = std::getenv("SUBGRAPH_PRECISION");
  return env && std::strcmp(env, "bf16") == 0;
}

bool winogradAllowed() {
  const char* env = std::getenv("SUBGRAPH_ONEDNN_WINOGRAD");
  return !env || (std::strcmp(env, "0") != 0 && std::strcmp(env, "off") != 0);
}

Format blockedFormat() { return bf16Mode() ? Format::kNhwcBf16 : Format::kBlocked16; }

RegionBody::RegionBody(const Node& region) {
  const Attribute* body = region.attr("body");
  if (!body || body->kind() != AttrKind::kGraph || !body->asGraph())
    throw Unsupported("the region has no body graph");
  graph_ = body->asGraph();
  StatusOr<std::vector<Node*>> order = graph_->topologicalOrder();
  if (!order.isOk()) throw Unsupported("the body has a cycle");
  nodes_ = std::move(order).value();
}

const Node& RegionBody::single(std::string_view family, std::string_view op) const {
  if (nodes_.size() != 1 || numOutputs() != 1)
    throw Unsupported("a " + std::string(family) + " region holds one " + std::string(op));
  return *nodes_.front();
}

const Node* RegionBody::find(std::string_view opType) const {
  const Node* found = nullptr;
  for (const Node* n : nodes_) {
    if (n->opType() != opType) continue;
    if (found) throw Unsupported("the body has several " + std::string(opType) + " nodes");
    found = n;
  }
  return found;
}

size_t RegionBody::inputIndex(const Value* value) const {
  std::span<Value* const> inputs = graph_->inputs();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] == value) return i;
  throw Unsupported("value '" + (value ? value->name() : std::string("?")) +
                    "' is not an input of the region");
}

bool RegionBody::isInput(const Value* value) const {
  for (const Value* v : graph_->inputs())
    if (v == value) return true;
  return false;
}

const Tensor* constantOf(const Value* value) {
  return value && !value->isGraphInput() ? value->initializer() : nullptr;
}

std::vector<float> floatsOf(const Value* value) {
  const Tensor* t = constantOf(value);
  if (!t || t->dtype() != DataType::kFloat32)
    throw Unsupported("'" + (value ? value->name() : std::string("?")) +
                      "' is not an f32 constant");
  std::span<const float> data = t->data<float>();
  return {data.begin(), data.end()};
}

std::optional<float> scalarOf(const Value* value) {
  const Tensor* t = constantOf(value);
  if (!t || t->dtype() != DataType::kFloat32 || t->numElements() != 1) return std::nullopt;
  return t->data<float>()[0];
}

std::optional<Activation> activationOf(const Node& node) {
  using K = Activation::Kind;
  const std::string& op = node.opType();
  if (!node.domain().empty()) return std::nullopt;
  if (op == "Relu") return Activation{K::kRelu};
  if (op == "Sigmoid") return Activation{K::kSigmoid};
  if (op == "Tanh") return Activation{K::kTanh};
  if (op == "HardSwish") return Activation{K::kHardSwish};
  if (op == "LeakyRelu") return Activation{K::kLeakyRelu, node.getFloat("alpha", 0.01f)};
  if (op == "HardSigmoid")
    return Activation{K::kHardSigmoid, node.getFloat("alpha", 0.2f), node.getFloat("beta", 0.5f)};
  if (op == "Clip") {
    // Opset 11+: bounds are optional inputs and must be constants here.
    float lo = -INFINITY, hi = INFINITY;
    if (node.numInputs() > 1 && node.input(1)) {
      std::optional<float> v = scalarOf(node.input(1));
      if (!v) return std::nullopt;
      lo = *v;
    }
    if (node.numInputs() > 2 && node.input(2)) {
      std::optional<float> v = scalarOf(node.input(2));
      if (!v) return std::nullopt;
      hi = *v;
    }
    if (node.hasAttr("min")) lo = node.getFloat("min", lo);
    if (node.hasAttr("max")) hi = node.getFloat("max", hi);
    return Activation{K::kClip, lo, hi};
  }
  return std::nullopt;
}

const std::vector<std::string>& activationOps() {
  static const std::vector<std::string> ops{"Relu",        "LeakyRelu", "Clip", "Sigmoid",
                                            "HardSigmoid", "HardSwish", "Tanh"};
  return ops;
}

namespace predicates {

partition::NodePredicate isTranslatableActivation() {
  return [](const Node& node) {
    return partition::Decision::noIf(!activationOf(node).has_value(),
                                     "activation parameters are not f32 scalar constants");
  };
}

partition::NodePredicate sameShapes() {
  return [](const Node& node) {
    if (node.numInputs() != 2 || !node.input(0) || !node.input(1))
      return partition::Decision::no("not a binary op");
    const TensorType& a = node.input(0)->type();
    const TensorType& b = node.input(1)->type();
    // A symbolic dim (an exported model's batch "N") names one size at run
    // time, so equal symbols are equal sizes; an unknown dim promises
    // nothing. The kernel still checks the residual's dims per shape.
    bool ok = a.hasRank() && a == b && a.dtype == DataType::kFloat32;
    if (ok)
      for (const Dim& d : *a.shape) ok = ok && !d.isUnknown();
    return partition::Decision::noIf(
        !ok, "operands do not have the same f32 shape (a sum post-op cannot broadcast)");
  };
}

partition::NodePredicate hasScalarConstant(std::optional<float> value) {
  return [value](const Node& node) {
    for (const Value* in : node.inputs()) {
      std::optional<float> v = scalarOf(in);
      if (v && (!value || std::fabs(*v - *value) <= 1e-6f * std::fabs(*value)))
        return partition::Decision::yes();
    }
    return partition::Decision::no(value ? "no scalar constant operand of the expected value"
                                         : "no scalar f32 constant operand");
  };
}

partition::NodePredicate onlyFirstOutputUsed() {
  return [](const Node& node) {
    for (size_t i = 1; i < node.numOutputs(); ++i) {
      const Value* v = node.output(i);
      if (v && (!v->uses().empty() || v->isGraphOutput()))
        return partition::Decision::no("a statistics output is used");
    }
    return partition::Decision::yes();
  };
}

}  // namespace predicates

partition::OpMatcher foldableBatchNormMatcher() {
  partition::OpMatcher m("BatchNormalization");
  for (size_t i = 1; i <= 4; ++i) m.where(partition::predicates::inputIsConstant(i));
  m.where(predicates::onlyFirstOutputUsed());
  return m;
}

partition::Pattern buildPattern(const partition::PatternBuilder& builder) {
  StatusOr<partition::Pattern> pattern = builder.build();
  if (!pattern.isOk()) throw Error(pattern.status());
  return std::move(pattern).value();
}

void RegionKernel::useSessionThreads() {
  setCallerThreads(oneapi::tbb::this_task_arena::max_concurrency());
}

runtime::KernelCreator makeCreator(
    std::function<std::unique_ptr<runtime::Kernel>(const Node& region)> factory) {
  return [factory = std::move(factory)](
             const Node& region,
             const runtime::Backend&) -> StatusOr<std::unique_ptr<runtime::Kernel>> {
    try {
      return factory(region);
    } catch (const Unsupported& e) {
      return Status::error(StatusCode::kUnsupported, runtime::nodeErrorPrefix(&region) + e.what());
    } catch (const std::invalid_argument& e) {
      return Status::error(StatusCode::kUnsupported, runtime::nodeErrorPrefix(&region) + e.what());
    } catch (const dnnl::error& e) {
      return Status::error(StatusCode::kUnsupported,
                           runtime::nodeErrorPrefix(&region) + "oneDNN: " + e.what());
    }
  };
}

}  // namespace subgraph::onednn
