//===- plugins/onednn/backend/select_family.cpp - Mask regions ------------===//
//
// The select family; see select_family.h. What must not fuse: a Where
// whose branches are not scalar f32 constants (a select between tensors),
// a condition of another type than bool, int32, int64 or f32, a Cast to
// anything but bool, and an Expand or reshape whose dims are not static.
//
//===----------------------------------------------------------------------===//
#include "select_family.h"

#include "region_support.h"
#include "select.h"

namespace subgraph::onednn {
namespace {

constexpr int64_t kOnnxBool = 9;  // TensorProto.BOOL

std::optional<ConditionType> conditionType(sdk::DataType t) {
  switch (t) {
    case sdk::DataType::kBool: return ConditionType::kBool;
    case sdk::DataType::kInt32: return ConditionType::kInt32;
    case sdk::DataType::kInt64: return ConditionType::kInt64;
    case sdk::DataType::kFloat32: return ConditionType::kFloat32;
    default: return std::nullopt;
  }
}

std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("select");
  size_t where = p.add(sdk::OpPattern("Where").where([](const sdk::NodeView& n) {
    if (n.numInputs() != 3 || !scalarOf(n.input(1)) || !scalarOf(n.input(2)))
      return sdk::Decision::no("the branches are not scalar f32 constants");
    if (!n.input(0) || n.input(0).dtype() != sdk::DataType::kBool)
      return sdk::Decision::no("the condition is not bool");
    return sdk::Decision::yes();
  }));
  size_t expand = p.add(sdk::OpPattern("Expand").staticShapes().onlyFeedsNext().optional());
  size_t reshape = p.add(sdk::OpPattern("Reshape|Unsqueeze|Squeeze|Flatten")
                             .staticShapes()
                             .onlyFeedsNext()
                             .optional());
  size_t cast = p.add(sdk::OpPattern("Cast")
                          .where([](const sdk::NodeView& n) {
                            if (n.attrInt("to", 0) != kOnnxBool)
                              return sdk::Decision::no("the Cast is not to bool");
                            if (!n.input(0) || !conditionType(n.input(0).dtype()))
                              return sdk::Decision::no("the Cast's input is no bool, int or f32");
                            return sdk::Decision::yes();
                          })
                          .onlyFeedsNext()
                          .optional());
  p.connect(expand, where, 0).connect(reshape, expand, 0).connect(cast, reshape, 0);
  return std::make_unique<sdk::PatternProperty>("select", std::move(p));
}

class SelectRegionKernel final : public RegionKernel {
 public:
  SelectRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    std::optional<sdk::NodeView> where = body.find("Where");
    if (!where) throw Unsupported("a select region holds no Where");
    whenTrue_ = *scalarOf(where->input(1));
    whenFalse_ = *scalarOf(where->input(2));
    const sdk::NodeView& head = body.nodes().front();
    sdk::ValueView source = head.input(0);
    input_ = body.inputIndex(source);
    std::optional<ConditionType> type = conditionType(source.dtype());
    if (!type) throw Unsupported("the condition's type is not read here");
    type_ = *type;
    for (const sdk::NodeView& n : body.nodes()) {
      if (n.opTypeView() == "Expand") expanded_ = n.output(0).dims();
      if (n.opTypeView() != "Expand" && n.opTypeView() != "Where" && n.opTypeView() != "Cast")
        reshaped_ = n.output(0).dims();
    }
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      return std::vector<sdk::Shape>{{sdk::DataType::kFloat32, outDims(inputs[input_].dims)}};
    });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte>) override {
    guarded(inputs, [&] {
      const sdk::Tensor& c = inputs[input_];
      std::vector<int64_t> cond = condDims(c.dims());
      runSelect(type_, cond, c.raw(), outDims(c.dims()), whenTrue_, whenFalse_,
                outputs[0].data<float>());
    });
  }

 private:
  // The condition's dims as the Where reads it: reshaped, when it is.
  std::vector<int64_t> condDims(std::span<const int64_t> source) const {
    if (reshaped_.empty()) return std::vector<int64_t>(source.begin(), source.end());
    int64_t a = 1, b = 1;
    for (int64_t d : source) a *= d;
    for (int64_t d : reshaped_) b *= d;
    if (a != b) throw std::invalid_argument("select: the reshape does not fit the condition");
    return reshaped_;
  }
  std::vector<int64_t> outDims(std::span<const int64_t> source) const {
    std::vector<int64_t> cond = condDims(source);
    return expanded_.empty() ? cond : selectDims(cond, expanded_);
  }

  ConditionType type_ = ConditionType::kBool;
  size_t input_ = 0;
  float whenTrue_ = 0, whenFalse_ = 0;
  std::vector<int64_t> reshaped_, expanded_;
};

}  // namespace

Family selectFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<SelectRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
