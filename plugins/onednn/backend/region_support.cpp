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
#include <set>
#include <string>
#include <vector>

#include "dnnl_context.h"

namespace subgraph::onednn {
namespace {

const sdk::Layout* gBlocked16 = nullptr;
const sdk::Layout* gNhwcBf16 = nullptr;

}  // namespace

void setLayouts(const sdk::Layout* blocked16, const sdk::Layout* nhwcBf16) {
  gBlocked16 = blocked16;
  gNhwcBf16 = nhwcBf16;
}

const sdk::Layout* layoutOf(Format format) {
  switch (format) {
    case Format::kPlain: return nullptr;
    case Format::kBlocked16: return gBlocked16;
    case Format::kNhwcBf16: return gNhwcBf16;
  }
  return nullptr;
}

bool bf16Mode(const sdk::KernelContext& context) {
  // The backend's own option wins over the session's precision, so a
  // mixed-backend run can keep oneDNN in fp32.
  return context.option("precision", context.precision) == "bf16";
}

bool winogradAllowed(const sdk::KernelContext& context) {
  return context.option("winograd", "on") != "off";
}

Format blockedFormat(const sdk::NodeView& region, const sdk::KernelContext& context) {
  // A value re-quantized later must keep its f32 bits: a bf16 rounding
  // moves it to another quantization level.
  if (!bf16Mode(context) || requantizer(region.output(0))) return Format::kBlocked16;
  return Format::kNhwcBf16;
}

RegionBody::RegionBody(const sdk::NodeView& region) {
  std::optional<sdk::GraphView> body = region.body();
  if (!body) throw Unsupported("the region has no body graph");
  // The host lists a graph's nodes in topological order.
  nodes_ = body->nodes();
  inputs_ = body->inputs();
  numOutputs_ = body->outputs().size();
}

const sdk::NodeView& RegionBody::single(std::string_view family, std::string_view op) const {
  if (nodes_.size() != 1 || numOutputs() != 1)
    throw Unsupported("a " + std::string(family) + " region holds one " + std::string(op));
  return nodes_.front();
}

std::optional<sdk::NodeView> RegionBody::find(std::string_view opType) const {
  std::optional<sdk::NodeView> found;
  for (const sdk::NodeView& n : nodes_) {
    if (n.opType() != opType || !n.domain().empty()) continue;
    if (found) throw Unsupported("the body has several " + std::string(opType) + " nodes");
    found = n;
  }
  return found;
}

size_t RegionBody::inputIndex(const sdk::ValueView& value) const {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i] == value) return i;
  throw Unsupported("value '" + (value ? value.name() : std::string("?")) +
                    "' is not an input of the region");
}

bool RegionBody::isInput(const sdk::ValueView& value) const {
  for (const sdk::ValueView& v : inputs_)
    if (v == value) return true;
  return false;
}

bool isConstant(const sdk::ValueView& value) { return value && value.isConstant(); }

std::vector<float> floatsOf(const sdk::ValueView& value) {
  if (!isConstant(value) || value.dtype() != sdk::DataType::kFloat32)
    throw Unsupported("'" + (value ? value.name() : std::string("?")) + "' is not an f32 constant");
  std::span<const float> data = value.constantData<float>();
  return {data.begin(), data.end()};
}

std::optional<float> scalarOf(const sdk::ValueView& value) {
  if (!isConstant(value) || value.dtype() != sdk::DataType::kFloat32) return std::nullopt;
  std::span<const float> data = value.constantData<float>();
  if (data.size() != 1) return std::nullopt;
  return data[0];
}

size_t numUses(const sdk::ValueView& value) { return value ? value.consumers().size() : 0; }

namespace {

// Max(x, c) and Min(x, c) with a one-element constant c are a clip with one
// infinite bound (tf2onnx writes Max(LeakyRelu(x), c)). c must not raise
// x's rank by broadcasting, and x must not be a constant as well.
std::optional<Activation> boundOf(const sdk::NodeView& node) {
  if (node.numInputs() != 2) return std::nullopt;
  size_t constant = scalarOf(node.input(1)) ? 1 : 0;
  std::optional<float> c = scalarOf(node.input(constant));
  sdk::ValueView x = node.input(1 - constant);
  if (!c || !x || isConstant(x) || x.dtype() != sdk::DataType::kFloat32) return std::nullopt;
  std::optional<int32_t> xRank = x.rank(), cRank = node.input(constant).rank();
  if (!xRank || !cRank || *cRank > *xRank) return std::nullopt;
  if (node.opTypeView() == "Max") return Activation{Activation::Kind::kClip, *c, INFINITY};
  return Activation{Activation::Kind::kClip, -INFINITY, *c};
}

}  // namespace

std::optional<Activation> activationOf(const sdk::NodeView& node) {
  using K = Activation::Kind;
  if (!node.inOnnxDomain()) return std::nullopt;
  const std::string_view op = node.opTypeView();
  if (op == "Relu") return Activation{K::kRelu};
  if (op == "Sigmoid") return Activation{K::kSigmoid};
  if (op == "Tanh") return Activation{K::kTanh};
  if (op == "HardSwish") return Activation{K::kHardSwish};
  if (op == "Gelu") {
    std::string approximate = node.attrString("approximate", "none");
    if (approximate == "none") return Activation{K::kGeluErf};
    if (approximate == "tanh") return Activation{K::kGeluTanh};
    return std::nullopt;
  }
  if (op == "LeakyRelu") return Activation{K::kLeakyRelu, node.attrFloat("alpha", 0.01f)};
  if (op == "HardSigmoid")
    return Activation{K::kHardSigmoid, node.attrFloat("alpha", 0.2f), node.attrFloat("beta", 0.5f)};
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
    if (node.hasAttr("min")) lo = node.attrFloat("min", lo);
    if (node.hasAttr("max")) hi = node.attrFloat("max", hi);
    return Activation{K::kClip, lo, hi};
  }
  if (op == "Max" || op == "Min") return boundOf(node);
  return std::nullopt;
}

std::string activationOps() {
  return "Relu|LeakyRelu|Clip|Sigmoid|HardSigmoid|HardSwish|Tanh|Gelu|Max|Min";
}

namespace predicates {

Predicate isTranslatableActivation() {
  return [](const sdk::NodeView& node) -> sdk::Decision {
    if (activationOf(node)) return sdk::Decision::yes();
    return sdk::Decision::no("activation parameters are not f32 scalar constants");
  };
}

Predicate sameShapes() {
  return [](const sdk::NodeView& node) -> sdk::Decision {
    if (node.numInputs() != 2 || !node.input(0) || !node.input(1))
      return sdk::Decision::no("not a binary op");
    sdk::ValueView a = node.input(0), b = node.input(1);
    // A symbolic dim (an exported model's batch "N") names one size at run
    // time, so equal symbols are equal sizes; an unknown dim promises
    // nothing. The kernel still checks the residual's dims per shape.
    bool ok = a.rank() && a.rank() == b.rank() && a.dtype() == sdk::DataType::kFloat32 &&
              b.dtype() == sdk::DataType::kFloat32 && a.dims() == b.dims();
    for (int32_t i = 0; ok && i < *a.rank(); ++i) {
      std::optional<std::string> sa = a.dimSymbol(i), sb = b.dimSymbol(i);
      ok = sa && sb && *sa == *sb;
    }
    if (ok) return sdk::Decision::yes();
    return sdk::Decision::no(
        "operands do not have the same f32 shape (a sum post-op cannot broadcast)");
  };
}

Predicate hasScalarConstant(std::optional<float> value) {
  return [value](const sdk::NodeView& node) -> sdk::Decision {
    for (size_t i = 0; i < node.numInputs(); ++i) {
      std::optional<float> v = scalarOf(node.input(i));
      if (v && (!value || std::fabs(*v - *value) <= 1e-6f * std::fabs(*value)))
        return sdk::Decision::yes();
    }
    return sdk::Decision::no(value ? "no scalar constant operand of the expected value"
                                   : "no scalar f32 constant operand");
  };
}

Predicate onlyFirstOutputUsed() {
  return [](const sdk::NodeView& node) -> sdk::Decision {
    for (size_t i = 1; i < node.numOutputs(); ++i) {
      sdk::ValueView v = node.output(i);
      if (v && (numUses(v) > 0 || v.isGraphOutput()))
        return sdk::Decision::no("a statistics output is used");
    }
    return sdk::Decision::yes();
  };
}

Predicate outputRank(size_t rank) { return outputRankIn({rank}); }

Predicate outputRankIn(std::vector<size_t> ranks) {
  return [ranks](const sdk::NodeView& node) -> sdk::Decision {
    std::optional<int32_t> r = node.numOutputs() ? node.output(0).rank() : std::nullopt;
    if (!r) return sdk::Decision::no("output 0 has unknown rank");
    for (size_t rank : ranks)
      if (static_cast<size_t>(*r) == rank) return sdk::Decision::yes();
    std::string expected;
    for (size_t i = 0; i < ranks.size(); ++i)
      expected += (i == 0 ? "" : i + 1 == ranks.size() ? " or " : ", ") + std::to_string(ranks[i]);
    return sdk::Decision::no("output '" + node.output(0).name() + "' has rank " +
                             std::to_string(*r) + ", expected " + expected);
  };
}

Predicate attrEquals(std::string name, std::string value) {
  return [name, value](const sdk::NodeView& node) -> sdk::Decision {
    // Absent means the schema's default, if there is one. One lookup when
    // it holds (a Conv's auto_pad, checked for every Conv); attrString()
    // gives "" for an absent attribute, so an empty value needs the second.
    if (node.attrString(name) == value && (!value.empty() || node.hasAttr(name)))
      return sdk::Decision::yes();
    if (!node.hasAttr(name))
      return sdk::Decision::no("attribute '" + name + "' is absent, expected " + value);
    return sdk::Decision::no("attribute '" + name + "' is not " + value);
  };
}

Predicate onlyLastAxis(std::string reason) {
  return [reason](const sdk::NodeView& n) -> sdk::Decision {
    sdk::ValueView x = n.input(0);
    if (!x || !x.rank() || x.dtype() != sdk::DataType::kFloat32)
      return sdk::Decision::no("the input is not f32 of known rank");
    auto rank = static_cast<int64_t>(*x.rank());
    int64_t axis = n.attrInt("axis", -1);
    if (axis != -1 && axis != rank - 1) return sdk::Decision::no(reason);
    return sdk::Decision::yes();
  };
}

}  // namespace predicates

namespace {

// A quantizer, or a region fused before (the int8 family's regions start
// with DynamicQuantizeLinear) that holds one.
bool quantizes(const sdk::NodeView& n) {
  if (n.is("DynamicQuantizeLinear") || n.is("QuantizeLinear")) return true;
  if (std::optional<sdk::GraphView> body = n.body())
    for (const sdk::NodeView& inner : body->nodes())
      if (inner.is("DynamicQuantizeLinear") || inner.is("QuantizeLinear")) return true;
  return false;
}

// Ops whose outputs hold input values unchanged (or their maximum), and
// regions fused before that hold nothing else.
bool movesValues(const sdk::NodeView& n) {
  static const std::set<std::string> kMoving = {"Concat",   "Relu",    "MaxPool",   "Reshape",
                                                "Flatten",  "Squeeze", "Unsqueeze", "Transpose",
                                                "Identity", "Slice",   "Split",     "Gather"};
  if (std::optional<sdk::GraphView> body = n.body()) {
    for (const sdk::NodeView& inner : body->nodes())
      if (!kMoving.count(inner.opType())) return false;
    return true;
  }
  return kMoving.count(n.opType()) != 0;
}

}  // namespace

std::optional<std::string> requantizer(const sdk::ValueView& value) {
  constexpr size_t kMaxVisited = 256;  // a bound, not a search of the whole graph
  std::vector<sdk::ValueView> work{value};
  std::set<std::string> seen;
  while (!work.empty() && seen.size() < kMaxVisited) {
    sdk::ValueView v = work.back();
    work.pop_back();
    if (!v || !seen.insert(v.name()).second) continue;
    for (const sdk::NodeView& c : v.consumers()) {
      if (quantizes(c)) return c.name();
      if (movesValues(c))
        for (size_t o = 0; o < c.numOutputs(); ++o) work.push_back(c.output(o));
    }
  }
  return std::nullopt;
}

namespace predicates {

Predicate resultNotRequantized(std::string what) {
  return [what](const sdk::NodeView& n) -> sdk::Decision {
    if (std::optional<std::string> q = requantizer(n.output(0)))
      return sdk::Decision::no("its result is re-quantized by '" + *q + "', and " + what +
                               " would not round exactly as the reference does");
    return sdk::Decision::yes();
  };
}

}  // namespace predicates

sdk::OpPattern convLikePattern(const char* op, std::vector<size_t> ranks) {
  sdk::OpPattern m(op);
  m.constantInput(1)
      .where(predicates::outputRankIn(std::move(ranks)))
      .where(predicates::attrEquals("auto_pad", "NOTSET"))
      .where([](const sdk::NodeView& n) {
        if (n.numInputs() > 2 && n.input(2) && !isConstant(n.input(2)))
          return sdk::Decision::no("the bias is not a constant");
        return sdk::Decision::yes();
      });
  return m;
}

ConvGeometry convGeometryOf(const sdk::NodeView& conv, bool oneD) {
  const size_t axes = oneD ? 1 : 2;
  std::vector<int64_t> strides = conv.attrInts("strides", std::vector<int64_t>(axes, 1));
  std::vector<int64_t> dilations = conv.attrInts("dilations", std::vector<int64_t>(axes, 1));
  std::vector<int64_t> pads = conv.attrInts("pads", std::vector<int64_t>(2 * axes, 0));
  if (strides.size() != axes || dilations.size() != axes || pads.size() != 2 * axes)
    throw Unsupported("strides, dilations or pads do not match the conv's rank");
  ConvGeometry g;
  if (oneD) {
    g.strides = {1, strides[0]};
    g.dilations = {1, dilations[0]};
    g.pads = {0, pads[0], 0, pads[1]};
  } else {
    g.strides = {strides[0], strides[1]};
    g.dilations = {dilations[0], dilations[1]};
    g.pads = {pads[0], pads[1], pads[2], pads[3]};
  }
  return g;
}

std::vector<int64_t> as2d(std::span<const int64_t> dims) {
  std::vector<int64_t> out(dims.begin(), dims.end());
  if (out.size() == 3) out.insert(out.begin() + 2, 1);
  return out;
}

sdk::OpPattern foldableBatchNormPattern() {
  sdk::OpPattern m("BatchNormalization");
  for (uint32_t i = 1; i <= 4; ++i) m.constantInput(i);
  m.where(predicates::onlyFirstOutputUsed());
  return m;
}

sdk::OpPattern activationPattern() {
  return sdk::OpPattern(activationOps()).where(predicates::isTranslatableActivation());
}

double elementsOf(std::span<const int64_t> dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

double RegionKernel::workOf(std::span<const std::span<const int64_t>> dims) const {
  double elements = 0;
  for (std::span<const int64_t> d : dims) elements += elementsOf(d);
  return elements * kMacsPerElement;
}

int RegionKernel::teamFor(double work) const {
  int session = threads_ > 0 ? threads_ : defaultThreads();
  double shares = std::floor(work / kMacsPerThread);
  return shares >= session ? session : std::max(1, static_cast<int>(shares));
}

void RegionKernel::useThreads(int team) { setCallerThreads(team); }

}  // namespace subgraph::onednn
