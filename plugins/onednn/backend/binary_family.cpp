//===- plugins/onednn/backend/binary_family.cpp - Broadcasting binary regions -===//
//
// The binary family; see binary_family.h. What must not fuse: an operand
// other than f32, a scalar constant (the element-wise family's linear
// step), operands whose dims are not known to broadcast (a symbolic dim
// against another symbol), both operands broadcast, and a Sub or Div whose
// first operand is the one broadcast (oneDNN broadcasts only its second
// source, and these do not commute).
//
//===----------------------------------------------------------------------===//
#include "binary_family.h"

#include <map>

#include "binary.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

const std::map<std::string, dnnl::algorithm, std::less<>>& algorithms() {
  static const std::map<std::string, dnnl::algorithm, std::less<>> kAlgorithms = {
      {"Add", dnnl::algorithm::binary_add}, {"Sub", dnnl::algorithm::binary_sub},
      {"Mul", dnnl::algorithm::binary_mul}, {"Div", dnnl::algorithm::binary_div},
      {"Max", dnnl::algorithm::binary_max}, {"Min", dnnl::algorithm::binary_min}};
  return kAlgorithms;
}

// Whether dims a and b broadcast with only one of them broadcast (and that
// one second for Sub and Div); symbolic dims match only the same symbol.
sdk::Decision broadcasts(const sdk::NodeView& n) {
  sdk::ValueView a = n.input(0), b = n.input(1);
  if (!a.rank() || !b.rank()) return sdk::Decision::no("an operand has no known rank");
  const int32_t rank = std::max(*a.rank(), *b.rank());
  bool aBroadcast = false, bBroadcast = false;
  for (int32_t i = 0; i < rank; ++i) {
    const int32_t ia = i - (rank - *a.rank()), ib = i - (rank - *b.rank());
    const int64_t da = ia < 0 ? 1 : a.dims()[static_cast<size_t>(ia)];
    const int64_t db = ib < 0 ? 1 : b.dims()[static_cast<size_t>(ib)];
    if (da == db && da >= 0) continue;
    if (da < 0 || db < 0) {
      std::optional<std::string> sa = ia < 0 ? std::nullopt : a.dimSymbol(ia);
      std::optional<std::string> sb = ib < 0 ? std::nullopt : b.dimSymbol(ib);
      if (sa && sb && *sa == *sb) continue;
      if ((da == 1 && db < 0) || (db == 1 && da < 0)) {
        (da == 1 ? aBroadcast : bBroadcast) = true;
        continue;
      }
      return sdk::Decision::no("the operands' dims are not known to broadcast");
    }
    if (da != 1 && db != 1) return sdk::Decision::no("the operands do not broadcast");
    (da == 1 ? aBroadcast : bBroadcast) = true;
  }
  if (aBroadcast && bBroadcast) return sdk::Decision::no("both operands are broadcast");
  const bool commutes = n.opTypeView() != "Sub" && n.opTypeView() != "Div";
  if (aBroadcast && !commutes)
    return sdk::Decision::no("the first operand of a Sub or Div is the one broadcast");
  return sdk::Decision::yes();
}

std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("binary");
  p.add(sdk::OpPattern("Add|Sub|Mul|Div|Max|Min").where([](const sdk::NodeView& n) {
    if (n.numInputs() != 2 || !n.input(0) || !n.input(1)) return sdk::Decision::no("not binary");
    for (size_t i = 0; i < 2; ++i) {
      if (n.input(i).dtype() != sdk::DataType::kFloat32)
        return sdk::Decision::no("an operand is not f32");
      if (scalarOf(n.input(i)))
        return sdk::Decision::no("a scalar constant operand (the element-wise family's)");
    }
    return broadcasts(n);
  }));
  return std::make_unique<sdk::PatternProperty>("binary", std::move(p));
}

// One operand: a region input, or a constant held here.
struct Operand {
  size_t input = static_cast<size_t>(-1);
  std::vector<float> constant;
  std::vector<int64_t> dims;
};

class BinaryRegionKernel final : public RegionKernel {
 public:
  BinaryRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    const sdk::NodeView& n = body.single("binary", "Add|Sub|Mul|Div|Max|Min");
    auto algorithm = algorithms().find(n.opType());
    if (algorithm == algorithms().end()) throw Unsupported("a binary region holds " + n.opType());
    binary_.emplace(algorithm->second);
    for (size_t i = 0; i < 2; ++i) {
      if (isConstant(n.input(i))) {
        operands_[i].constant = floatsOf(n.input(i));
        operands_[i].dims = n.input(i).dims();
      } else {
        operands_[i].input = body.inputIndex(n.input(i));
      }
    }
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      return std::vector<sdk::Shape>{
          {sdk::DataType::kFloat32, binary_->outputDims(dimsOf(0, inputs), dimsOf(1, inputs))}};
    });
  }

  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] { return binary_->prepare(dimsOf(0, inputs), dimsOf(1, inputs)); });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte> scratch) override {
    guarded(inputs, [&] {
      binary_->execute(dimsOf(0, inputs), dimsOf(1, inputs), dataOf(0, inputs), dataOf(1, inputs),
                       outputs[0].data<float>(), scratch.data());
    });
  }

 private:
  std::span<const int64_t> dimsOf(size_t i, const std::vector<sdk::Shape>& inputs) const {
    const Operand& o = operands_[i];
    return o.input == static_cast<size_t>(-1) ? std::span<const int64_t>(o.dims)
                                              : std::span<const int64_t>(inputs[o.input].dims);
  }
  std::span<const int64_t> dimsOf(size_t i, std::span<const sdk::Tensor> inputs) const {
    const Operand& o = operands_[i];
    return o.input == static_cast<size_t>(-1) ? std::span<const int64_t>(o.dims)
                                              : inputs[o.input].dims();
  }
  const float* dataOf(size_t i, std::span<const sdk::Tensor> inputs) const {
    const Operand& o = operands_[i];
    return o.input == static_cast<size_t>(-1) ? o.constant.data() : inputs[o.input].data<float>();
  }

  std::optional<Binary> binary_;
  Operand operands_[2];
};

}  // namespace

Family binaryFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<BinaryRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
