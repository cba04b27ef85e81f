//===- plugins/onednn/backend/index_family.cpp - Index regions ------------===//
//
// The index family; see index_family.h. A selector rather than a pattern:
// the steps form small DAGs of any shape (a Cast read by a CumSum and by
// the Mul after it), so a region grows from any such step to every
// neighbour that is one. What must not fuse: a step with a float (or
// other) input or output, a dim that is not static, more than
// kMaxElements elements (then it is not index arithmetic, and a plain
// loop on one thread is the wrong tool), a CumSum whose axis or an Expand
// whose shape is not a constant, and Div or Mod (their errors on zero are
// the reference's to report).
//
//===----------------------------------------------------------------------===//
#include "index_family.h"

#include <array>
#include <map>

#include "index_program.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

constexpr int64_t kMaxElements = 1 << 16;

const std::map<std::string_view, IndexOp>& indexOps() {
  static const std::map<std::string_view, IndexOp> ops = {
      {"Equal", IndexOp::kEqual},     {"Less", IndexOp::kLess},
      {"Greater", IndexOp::kGreater}, {"Not", IndexOp::kNot},
      {"And", IndexOp::kAnd},         {"Or", IndexOp::kOr},
      {"Cast", IndexOp::kCast},       {"Add", IndexOp::kAdd},
      {"Sub", IndexOp::kSub},         {"Mul", IndexOp::kMul},
      {"Where", IndexOp::kWhere},     {"CumSum", IndexOp::kCumSum},
      {"Expand", IndexOp::kExpand},   {"GatherElements", IndexOp::kGatherElements}};
  return ops;
}

std::optional<IndexType> indexType(sdk::DataType t) {
  switch (t) {
    case sdk::DataType::kBool: return IndexType::kBool;
    case sdk::DataType::kInt32: return IndexType::kInt32;
    case sdk::DataType::kInt64: return IndexType::kInt64;
    default: return std::nullopt;
  }
}

sdk::Decision indexValue(const sdk::ValueView& v) {
  if (!v) return sdk::Decision::no("an input is omitted");
  if (!indexType(v.dtype())) return sdk::Decision::no("a value is not bool, int32 or int64");
  if (!v.hasStaticShape()) return sdk::Decision::no("a value's dims are not static");
  int64_t n = 1;
  for (int64_t d : v.dims()) n *= d;
  if (n > kMaxElements) return sdk::Decision::no("a value has more than 2^16 elements");
  return sdk::Decision::yes();
}

// Whether `n` is a step of an index program; a reasonless no for other ops
// (the promise of SeedOpTypes).
sdk::Decision indexable(const sdk::NodeView& n) {
  if (!n.inOnnxDomain() || !indexOps().contains(n.opTypeView())) return sdk::Decision::no();
  const bool cumSum = n.is("CumSum"), expand = n.is("Expand");
  for (size_t i = 0; i < n.numInputs(); ++i) {
    if ((cumSum || expand) && i == 1) {
      if (!isConstant(n.input(1)))
        return sdk::Decision::no(cumSum ? "the axis is not a constant"
                                        : "the shape is not a constant");
      continue;
    }
    if (sdk::Decision d = indexValue(n.input(i)); !d) return d;
  }
  for (size_t i = 0; i < n.numOutputs(); ++i)
    if (sdk::Decision d = indexValue(n.output(i)); !d) return d;
  return sdk::Decision::yes();
}

class IndexSelector final : public sdk::SubgraphSelector {
 public:
  sdk::Decision Select(const sdk::NodeView& n) override { return indexable(n); }
  sdk::Decision SelectInput(const sdk::NodeView&, const sdk::NodeView& producer) override {
    return indexable(producer);
  }
  sdk::Decision SelectOutput(const sdk::NodeView&, const sdk::NodeView& consumer) override {
    return indexable(consumer);
  }
};

class IndexProperty final : public sdk::SubgraphProperty {
 public:
  IndexProperty() : SubgraphProperty("index") {}
  std::unique_ptr<sdk::SubgraphSelector> CreateSubgraphSelector() const override {
    return std::make_unique<IndexSelector>();
  }
  std::vector<std::string> SeedOpTypes() const override {
    std::vector<std::string> seeds;
    for (const auto& [op, _] : indexOps()) seeds.emplace_back(op);
    return seeds;
  }
  bool AcceptsEveryRegion() const override { return true; }
};

// A constant's elements as int64.
std::vector<int64_t> elementsOf(const sdk::ValueView& v) {
  std::vector<int64_t> out;
  switch (v.dtype()) {
    case sdk::DataType::kBool:
      for (std::byte b : v.constantBytes()) out.push_back(b != std::byte{0});
      break;
    case sdk::DataType::kInt32:
      for (int32_t x : v.constantData<int32_t>()) out.push_back(x);
      break;
    case sdk::DataType::kInt64:
      for (int64_t x : v.constantData<int64_t>()) out.push_back(x);
      break;
    default: throw Unsupported("a constant is not bool, int32 or int64");
  }
  return out;
}

class IndexRegionKernel final : public RegionKernel {
 public:
  IndexRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    std::optional<sdk::GraphView> body = region.body();
    if (!body) throw Unsupported("the region has no body");
    for (const sdk::ValueView& in : body->inputs()) program_.addInput(valueOf(in));
    for (const sdk::NodeView& n : body->nodes()) addStep(n);
    for (const sdk::ValueView& out : body->outputs()) program_.addOutput(valueOf(out));
    numOutputs_ = body->outputs().size();
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].dims != program_.inputDims(i))
        throw sdk::Error("index: an input's dims differ from the region's static dims",
                         SG_INVALID_ARGUMENT);
    std::vector<sdk::Shape> out;
    for (size_t i = 0; i < numOutputs_; ++i)
      out.push_back({dtypeOf(program_.outputType(i)), program_.outputDims(i)});
    return out;
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte>) override {
    std::vector<const void*> in;
    std::vector<void*> out;
    for (const sdk::Tensor& t : inputs) in.push_back(t.raw());
    for (const sdk::Tensor& t : outputs) out.push_back(t.raw());
    try {
      program_.run(in, out);
    } catch (const std::invalid_argument& e) {
      throw sdk::Error(e.what(), SG_INVALID_ARGUMENT);
    }
  }

 private:
  static sdk::DataType dtypeOf(IndexType t) {
    switch (t) {
      case IndexType::kBool: return sdk::DataType::kBool;
      case IndexType::kInt32: return sdk::DataType::kInt32;
      case IndexType::kInt64: return sdk::DataType::kInt64;
    }
    return sdk::DataType::kInt64;
  }

  // The program's id of `v`, added (with its data, for a constant) when new.
  int valueOf(const sdk::ValueView& v) {
    auto it = ids_.find(v.handle());
    if (it != ids_.end()) return it->second;
    std::optional<IndexType> type = indexType(v.dtype());
    if (!type || !v.hasStaticShape()) throw Unsupported("a value is not a static integer tensor");
    const int id = program_.addValue(v.dims(), *type);
    if (isConstant(v)) program_.setConstant(id, elementsOf(v));
    ids_.emplace(v.handle(), id);
    return id;
  }

  void addStep(const sdk::NodeView& n) {
    auto op = indexOps().find(n.opTypeView());
    if (op == indexOps().end()) throw Unsupported("an index region holds " + n.opType());
    IndexStep step;
    step.op = op->second;
    const bool axisInput = step.op == IndexOp::kCumSum, shapeInput = step.op == IndexOp::kExpand;
    for (size_t i = 0; i < n.numInputs(); ++i)
      if (!((axisInput || shapeInput) && i == 1)) step.inputs.push_back(valueOf(n.input(i)));
    if (axisInput) {
      std::vector<int64_t> axis = elementsOf(n.input(1));
      if (axis.size() != 1) throw Unsupported("CumSum's axis is not one element");
      step.axis = axis[0];
      step.exclusive = n.attrInt("exclusive", 0) != 0;
      step.reverse = n.attrInt("reverse", 0) != 0;
    }
    if (step.op == IndexOp::kGatherElements) step.axis = n.attrInt("axis", 0);
    step.output = valueOf(n.output(0));
    program_.addStep(std::move(step));
  }

  IndexProgram program_;
  std::map<const SgValue*, int> ids_;
  size_t numOutputs_ = 0;
};

}  // namespace

Family indexFamily() {
  Family f;
  f.properties.push_back(std::make_unique<IndexProperty>());
  f.creator = creatorOf<IndexRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
