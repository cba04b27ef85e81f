//===- plugins/onednn/backend/matmul_family.cpp - MatMul/Gemm + bias + activation regions -===//
//
// The matmul family; see matmul_family.h. What must not fuse, and why:
//  * an Add whose operand is not a 1-D constant of N elements as the bias
//    (that is a residual, or a broadcast oneDNN's bias cannot express);
//  * Gemm with transA or a non-constant B: the kernel reorders B once;
//  * a run-time B whose batch dims differ from A's (broadcasting batches).
//
//===----------------------------------------------------------------------===//
#include "matmul_family.h"

#include <cmath>
#include <stdexcept>

#include "fused_matmul.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

using predicates::Predicate;

// B is a 2-D f32 constant: weights reordered once.
Predicate constantMatrixB() {
  return [](const sdk::NodeView& n) -> sdk::Decision {
    sdk::ValueView b = n.input(1);
    if (!isConstant(b) || b.dims().size() != 2 || b.dtype() != sdk::DataType::kFloat32)
      return sdk::Decision::no("B is not a 2-D f32 constant");
    return sdk::Decision::yes();
  };
}

// One operand is a 1-D f32 constant: the bias.
Predicate hasBiasOperand() {
  return [](const sdk::NodeView& n) -> sdk::Decision {
    for (size_t i = 0; i < n.numInputs(); ++i) {
      sdk::ValueView in = n.input(i);
      if (isConstant(in) && in.dims().size() == 1 && in.dtype() == sdk::DataType::kFloat32)
        return sdk::Decision::yes();
    }
    return sdk::Decision::no("no 1-D f32 constant operand to use as bias");
  };
}

// Integer attribute `name` (or its schema default) equals `value`.
Predicate intAttrEquals(std::string name, int64_t value) {
  return [name = std::move(name), value](const sdk::NodeView& n) -> sdk::Decision {
    const std::string expected = std::to_string(value);
    if (!n.hasAttr(name))
      return sdk::Decision::no("attribute '" + name + "' is absent, expected " + expected);
    // A non-integer attribute reads as the fallback, which differs from
    // `value`: it is "not" the value too.
    if (n.attrInt(name, value + 1) != value)
      return sdk::Decision::no("attribute '" + name + "' is not " + expected);
    return sdk::Decision::yes();
  };
}

sdk::OpPattern weightsMatMul(bool interior) {
  sdk::OpPattern m("MatMul");
  m.where(constantMatrixB()).where([](const sdk::NodeView& n) -> sdk::Decision {
    sdk::ValueView a = n.input(0);
    if (!a || !a.rank() || *a.rank() < 2 || a.dtype() != sdk::DataType::kFloat32)
      return sdk::Decision::no("A is not an f32 tensor of rank 2 or more");
    return sdk::Decision::yes();
  });
  if (interior) m.oneUse();
  return m;
}

sdk::OpPattern biasAdd() { return sdk::OpPattern("Add").where(hasBiasOperand()); }

// A property named after its pattern, so the two names cannot drift.
std::unique_ptr<sdk::SubgraphProperty> makeProperty(sdk::Pattern pattern) {
  std::string name = pattern.name();
  return std::make_unique<sdk::PatternProperty>(std::move(name), std::move(pattern));
}

// MatMul -> bias Add -> [residual Add] -> [activation]: one pattern for
// matmul_bias and what were matmul_bias_act and matmul_bias_add (the
// kernel's sum post-op, then its eltwise one). Each step only feeds the
// next when there is one.
sdk::Pattern biasPattern() {
  sdk::Pattern p("matmul_bias");
  size_t mm = p.add(weightsMatMul(true));
  size_t bias = p.add(biasAdd().onlyFeedsNext());
  size_t res =
      p.add(sdk::OpPattern("Add").where(predicates::sameShapes()).onlyFeedsNext().optional());
  size_t act = p.add(activationPattern().optional());
  p.connect(mm, bias).connect(bias, res).connect(res, act, 0);
  return p;
}

// Gemm -> [activation]: one pattern for gemm and what was gemm_act.
sdk::Pattern gemmPattern() {
  sdk::Pattern p("gemm");
  sdk::OpPattern gemm("Gemm");
  gemm.where(intAttrEquals("transA", 0))
      .where(constantMatrixB())
      .where([](const sdk::NodeView& n) -> sdk::Decision {
        if (n.numInputs() > 2 && n.input(2) && !isConstant(n.input(2)))
          return sdk::Decision::no("C is not a constant");
        return sdk::Decision::yes();
      })
      .onlyFeedsNext();
  size_t g = p.add(gemm);
  size_t a = p.add(activationPattern().optional());
  p.connect(g, a, 0);
  return p;
}

// B is a 2-D constant, or A and B have the same rank (2 or more) and the
// same static batch dims: what the kernel takes without broadcasting.
Predicate operandsFit() {
  return [](const sdk::NodeView& n) -> sdk::Decision {
    sdk::ValueView a = n.input(0);
    sdk::ValueView b = n.input(1);
    if (!a || !b || !a.rank() || *a.rank() < 2)
      return sdk::Decision::no("A has no known rank of 2 or more");
    if (a.dtype() != sdk::DataType::kFloat32) return sdk::Decision::no("A is not f32");
    if (isConstant(b)) return constantMatrixB()(n);
    if (!b.rank() || *b.rank() != *a.rank())
      return sdk::Decision::no("A and B differ in rank (batch broadcasting)");
    std::vector<int64_t> sa = a.dims();
    std::vector<int64_t> sb = b.dims();
    // -1 marks a symbolic or unknown dim: not static.
    for (size_t i = 0; i + 2 < sa.size(); ++i)
      if (sa[i] < 0 || sa[i] != sb[i])
        return sdk::Decision::no("batch dims of A and B are not the same static sizes");
    return sdk::Decision::yes();
  };
}

// An activation, or a scale by a scalar constant (x / c, x * c, c * x),
// as the eltwise post-op that ends a plain matmul region.
sdk::OpPattern scaleOrActivation() {
  sdk::OpPattern step(activationOps() + "|Div|Mul");
  step.where([](const sdk::NodeView& n) -> sdk::Decision {
    if (activationOf(n)) return sdk::Decision::yes();
    if (n.opTypeView() != "Div" && n.opTypeView() != "Mul")
      return sdk::Decision::no("activation parameters are not f32 scalar constants");
    if (n.opTypeView() == "Div" && !scalarOf(n.input(1)))
      return sdk::Decision::no("the divisor is not the constant");
    return predicates::hasScalarConstant()(n);
  });
  return step;
}

// MatMul -> [residual Add] -> [scale or activation]: one pattern for
// matmul, what was matmul_scale, and a MatMul without a bias followed by
// its residual or its activation (GPT-2's projections, which have no
// bias). The scale comes after the sum, as the kernel's post-ops apply it.
sdk::Pattern plainPattern() {
  sdk::Pattern p("matmul");
  size_t mm = p.add(sdk::OpPattern("MatMul").where(operandsFit()).onlyFeedsNext());
  size_t res =
      p.add(sdk::OpPattern("Add").where(predicates::sameShapes()).onlyFeedsNext().optional());
  size_t last = p.add(scaleOrActivation().optional());
  p.connect(mm, res).connect(res, last, 0);
  return p;
}

class MatMulRegionKernel final : public RegionKernel {
 public:
  MatMulRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    MatMulSpec spec;
    const sdk::NodeView& first = body.nodes().front();
    sdk::ValueView last = first.output(0);
    if (first.opType() == "MatMul") {
      aInput_ = body.inputIndex(first.input(0));
      if (isConstant(first.input(1))) {
        std::vector<int64_t> w = first.input(1).dims();
        if (w.size() != 2) throw Unsupported("B is not 2-D");
        spec.weights = floatsOf(first.input(1));
        spec.k = w[0];
        spec.n = w[1];
      } else {
        bInput_ = body.inputIndex(first.input(1));
      }
    } else if (first.opType() == "Gemm") {
      readGemm(body, first, spec);
    } else {
      throw Unsupported("a matmul region starts with " + first.opType());
    }
    for (const sdk::NodeView& n : body.nodes()) {
      if (n == first) continue;
      const std::string op = n.opType();
      sdk::ValueView other(n.api(), nullptr);
      if (n.numInputs() == 2) other = n.input(0) == last ? n.input(1) : n.input(0);
      if (op == "Add" && spec.bias.empty() && !spec.sumResidual && spec.activations.empty() &&
          isConstant(other)) {
        spec.bias = floatsOf(other);
      } else if (op == "Add" && body.isInput(other) && spec.activations.empty()) {
        spec.sumResidual = true;
        residualInput_ = body.inputIndex(other);
      } else if ((op == "Div" || op == "Mul") && scalarOf(other)) {
        float c = *scalarOf(other);
        spec.activations.push_back({Activation::Kind::kLinear, op == "Div" ? 1.0f / c : c, 0.0f});
      } else if (std::optional<Activation> a = activationOf(n)) {
        spec.activations.push_back(*a);
      } else {
        throw Unsupported("unexpected " + op + " in a matmul region");
      }
      last = n.output(0);
    }
    spec.bf16 = bf16Mode(context);
    mm_ = std::make_unique<FusedMatMul>(std::move(spec));
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      std::vector<int64_t> out = mm_->outputDims(inputs[aInput_].dims, runtimeB(inputs));
      // Matched on equal (possibly symbolic) shapes; the sum reads the
      // residual as the output's shape.
      if (residualInput_ != kNone && inputs[residualInput_].dims != out)
        throw std::invalid_argument("matmul: the residual's dims differ from the output's");
      return std::vector<sdk::Shape>{{sdk::DataType::kFloat32, std::move(out)}};
    });
  }

  // [.., M, K] x [K, N]: each element of A meets N columns of B.
  double workOf(std::span<const std::span<const int64_t>> dims) const override {
    double n = static_cast<double>(mm_->spec().n);
    if (bInput_ != kNone && !dims[bInput_].empty()) n = static_cast<double>(dims[bInput_].back());
    return elementsOf(dims[aInput_]) * n;
  }

  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] { return mm_->prepare(inputs[aInput_].dims, runtimeB(inputs)); });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte> scratch) override {
    guarded(inputs, [&] {
      const sdk::Tensor& a = inputs[aInput_];
      const float* b = bInput_ != kNone ? inputs[bInput_].data<float>() : nullptr;
      std::span<const int64_t> bDims;
      if (bInput_ != kNone) bDims = inputs[bInput_].dims();
      const float* residual =
          residualInput_ != kNone ? inputs[residualInput_].data<float>() : nullptr;
      mm_->execute(a.dims(), bDims, a.data<float>(), b, residual, outputs[0].data<float>(),
                   scratch.data());
    });
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  // B's dims when B is a run-time input; empty with constant weights.
  std::span<const int64_t> runtimeB(const std::vector<sdk::Shape>& inputs) const {
    if (bInput_ == kNone) return {};
    return inputs[bInput_].dims;
  }

  // Gemm: alpha folds into the weights, beta into the bias; transB means
  // the weights are stored [N, K] and are transposed here, once.
  void readGemm(const RegionBody& body, const sdk::NodeView& gemm, MatMulSpec& spec) {
    aInput_ = body.inputIndex(gemm.input(0));
    if (gemm.attrInt("transA", 0) != 0) throw Unsupported("transA is not supported");
    if (!isConstant(gemm.input(1)) || gemm.input(1).dims().size() != 2)
      throw Unsupported("B is not a 2-D constant");
    std::vector<int64_t> w = gemm.input(1).dims();
    std::vector<float> b = floatsOf(gemm.input(1));
    float alpha = gemm.attrFloat("alpha", 1.0f), beta = gemm.attrFloat("beta", 1.0f);
    bool transB = gemm.attrInt("transB", 0) != 0;
    int64_t rows = w[0], cols = w[1];
    spec.k = transB ? cols : rows;
    spec.n = transB ? rows : cols;
    spec.weights.resize(b.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        size_t from = static_cast<size_t>(r * cols + c);
        size_t to = transB ? static_cast<size_t>(c * rows + r) : from;
        spec.weights[to] = alpha * b[from];
      }
    if (gemm.numInputs() > 2 && gemm.input(2)) {
      std::vector<float> c = floatsOf(gemm.input(2));
      if (c.size() == 1) c.assign(static_cast<size_t>(spec.n), c[0]);
      if (c.size() != static_cast<size_t>(spec.n))
        throw Unsupported("C is not a bias of N elements");
      for (float& x : c) x *= beta;
      spec.bias = std::move(c);
    }
  }

  std::unique_ptr<FusedMatMul> mm_;
  size_t aInput_ = kNone;
  size_t bInput_ = kNone;
  size_t residualInput_ = kNone;
};

}  // namespace

Family matmulFamily() {
  Family f;
  f.properties.push_back(makeProperty(biasPattern()));
  f.properties.push_back(makeProperty(gemmPattern()));
  f.properties.push_back(makeProperty(plainPattern()));
  f.creator = creatorOf<MatMulRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
