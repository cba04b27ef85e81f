//===- plugins/onednn/backend/gather_family.cpp - Gather regions ----------===//
//
// The gather family; see gather_family.h. What must not fuse: indices that
// are not int32 or int64, data that is neither f32 nor an 8-bit constant
// table whose only reader is a per-tensor DequantizeLinear (constant f32
// scale and zero point), and a DequantizeLinear per axis.
//
//===----------------------------------------------------------------------===//
#include "gather_family.h"

#include "gather.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

bool isInteger8(sdk::DataType t) { return t == sdk::DataType::kUInt8 || t == sdk::DataType::kInt8; }

sdk::Decision gatherable(const sdk::NodeView& n) {
  if (n.numInputs() != 2 || !n.input(0) || !n.input(1)) return sdk::Decision::no("not a Gather");
  sdk::DataType i = n.input(1).dtype();
  if (i != sdk::DataType::kInt64 && i != sdk::DataType::kInt32)
    return sdk::Decision::no("the indices are not int32 or int64");
  if (!n.input(0).rank()) return sdk::Decision::no("the data has no known rank");
  sdk::DataType d = n.input(0).dtype();
  if (d == sdk::DataType::kFloat32) return sdk::Decision::yes();
  if (isInteger8(d) && isConstant(n.input(0))) {
    for (const sdk::NodeView& c : n.consumers())
      if (c.opTypeView() != "DequantizeLinear" || numUses(n.output(0)) != 1)
        return sdk::Decision::no("an 8-bit table whose only reader is not a DequantizeLinear");
    return sdk::Decision::yes();
  }
  return sdk::Decision::no("the data is neither f32 nor an 8-bit constant table");
}

sdk::Decision perTensorDequantize(const sdk::NodeView& n) {
  std::optional<float> scale = n.numInputs() > 1 ? scalarOf(n.input(1)) : std::nullopt;
  if (!scale) return sdk::Decision::no("the scale is not one f32 constant");
  if (n.numInputs() > 2 && n.input(2) &&
      (!isConstant(n.input(2)) || n.input(2).constantBytes().size() != 1))
    return sdk::Decision::no("the zero point is not one 8-bit constant");
  return sdk::Decision::yes();
}

std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("gather");
  size_t g = p.add(sdk::OpPattern("Gather").where(gatherable).onlyFeedsNext());
  size_t d = p.add(sdk::OpPattern("DequantizeLinear").where(perTensorDequantize).optional());
  p.connect(g, d, 0);
  return std::make_unique<sdk::PatternProperty>("gather", std::move(p));
}

class GatherRegionKernel final : public RegionKernel {
 public:
  GatherRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    std::optional<sdk::NodeView> g = body.find("Gather");
    if (!g) throw Unsupported("a gather region holds no Gather");
    spec_.axis = g->attrInt("axis", 0);
    spec_.indices64 = g->input(1).dtype() == sdk::DataType::kInt64;
    data_ = operand(body, g->input(0), dataBytes_, dataDims_);
    indices_ = operand(body, g->input(1), indexBytes_, indexDims_);
    spec_.elementBytes = g->input(0).dtype() == sdk::DataType::kFloat32 ? 4 : 1;
    if (std::optional<sdk::NodeView> dq = body.find("DequantizeLinear")) {
      spec_.dequantize = true;
      spec_.dataSigned = g->input(0).dtype() == sdk::DataType::kInt8;
      spec_.scale = *scalarOf(dq->input(1));
      if (dq->numInputs() > 2 && dq->input(2)) {
        auto z = dq->input(2).constantBytes();
        spec_.zero = spec_.dataSigned ? static_cast<int8_t>(z[0]) : static_cast<uint8_t>(z[0]);
      }
    } else if (spec_.elementBytes != 4) {
      throw Unsupported("an 8-bit gather without its DequantizeLinear");
    }
    outType_ = spec_.dequantize ? sdk::DataType::kFloat32 : g->input(0).dtype();
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      return std::vector<sdk::Shape>{{outType_, gatherDims(spec_, dimsOf(data_, dataDims_, inputs),
                                                           dimsOf(indices_, indexDims_, inputs))}};
    });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte>) override {
    guarded(inputs, [&] {
      try {
        runGather(spec_, dimsOf(data_, dataDims_, inputs), pointerOf(data_, dataBytes_, inputs),
                  dimsOf(indices_, indexDims_, inputs), pointerOf(indices_, indexBytes_, inputs),
                  outputs[0].raw());
      } catch (const std::out_of_range& e) {
        throw sdk::Error(e.what(), SG_INVALID_ARGUMENT);
      }
    });
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  // A region input's index, or kNone with the constant's bytes and dims kept.
  static size_t operand(const RegionBody& body, const sdk::ValueView& v,
                        std::vector<std::byte>& bytes, std::vector<int64_t>& dims) {
    if (!isConstant(v)) return body.inputIndex(v);
    auto b = v.constantBytes();
    bytes.assign(b.begin(), b.end());
    dims = v.dims();
    return kNone;
  }
  template <typename Inputs>
  static std::span<const int64_t> dimsOf(size_t i, const std::vector<int64_t>& dims,
                                         const Inputs& inputs) {
    if (i == kNone) return dims;
    if constexpr (std::is_same_v<Inputs, std::vector<sdk::Shape>>)
      return inputs[i].dims;
    else
      return inputs[i].dims();
  }
  static const void* pointerOf(size_t i, const std::vector<std::byte>& bytes,
                               std::span<const sdk::Tensor> inputs) {
    return i == kNone ? static_cast<const void*>(bytes.data()) : inputs[i].raw();
  }

  GatherSpec spec_;
  size_t data_ = kNone, indices_ = kNone;
  std::vector<std::byte> dataBytes_, indexBytes_;
  std::vector<int64_t> dataDims_, indexDims_;
  sdk::DataType outType_ = sdk::DataType::kFloat32;
};

}  // namespace

Family gatherFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<GatherRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
