//===- plugins/onednn/backend/matmul_family.cpp - MatMul/Gemm + bias + activation regions -===//
//
// The matmul family; see matmul_family.h. What must not fuse, and why:
//  * an Add whose operand is not a 1-D constant of N elements as the bias
//    (that is a residual, or a broadcast oneDNN's bias cannot express);
//  * a GELU whose constants are not sqrt(2), 1 and 1/2: then it is some
//    other function;
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

namespace sp = subgraph::partition::predicates;
using partition::Decision;
using partition::OpMatcher;
using partition::PatternBuilder;
using partition::PatternProperty;

// B is a 2-D f32 constant: weights reordered once.
partition::NodePredicate constantMatrixB() {
  return [](const Node& n) {
    const Tensor* b = constantOf(n.input(1));
    return Decision::noIf(!b || b->dims().size() != 2 || b->dtype() != DataType::kFloat32,
                          "B is not a 2-D f32 constant");
  };
}

// One operand is a 1-D f32 constant: the bias.
partition::NodePredicate hasBiasOperand() {
  return [](const Node& n) {
    for (const Value* in : n.inputs()) {
      const Tensor* t = constantOf(in);
      if (t && t->dims().size() == 1 && t->dtype() == DataType::kFloat32) return Decision::yes();
    }
    return Decision::no("no 1-D f32 constant operand to use as bias");
  };
}

OpMatcher weightsMatMul(bool interior) {
  OpMatcher m("MatMul");
  m.where(constantMatrixB()).where([](const Node& n) {
    const Value* a = n.input(0);
    return Decision::noIf(!a || !a->type().hasRank() || a->type().shape->size() < 2 ||
                              a->type().dtype != DataType::kFloat32,
                          "A is not an f32 tensor of rank 2 or more");
  });
  if (interior) m.where(sp::hasOneUse());
  return m;
}

OpMatcher biasAdd(bool interior) {
  OpMatcher m("Add");
  m.where(hasBiasOperand());
  if (interior) m.where(sp::hasOneUse());
  return m;
}

partition::PropertyFactory property(std::string name, std::function<PatternBuilder()> build) {
  return [name = std::move(name), build = std::move(build)] {
    return std::make_unique<PatternProperty>(name, buildPattern(build()));
  };
}

PatternBuilder geluPattern() {
  // x = MatMul + bias; y = x * (erf(x / sqrt2) + 1) * 0.5. x has two
  // readers, both inside the region.
  PatternBuilder b("matmul_bias_gelu");
  size_t mm = b.add(weightsMatMul(true));
  size_t bias = b.add(OpMatcher("Add").where(hasBiasOperand()));
  size_t div = b.add(OpMatcher("Div")
                         .where(predicates::hasScalarConstant(std::sqrt(2.0f)))
                         .where(sp::hasOneUse()));
  size_t erf = b.add(OpMatcher("Erf").where(sp::hasOneUse()));
  size_t one =
      b.add(OpMatcher("Add").where(predicates::hasScalarConstant(1.0f)).where(sp::hasOneUse()));
  size_t mul = b.add(OpMatcher("Mul").where(sp::hasOneUse()));
  size_t half = b.add(OpMatcher("Mul").where(predicates::hasScalarConstant(0.5f)));
  b.connect(mm, bias).connect(bias, div, 0).connect(div, erf, 0).connect(erf, one);
  b.connect(bias, mul).connect(one, mul).connect(mul, half);
  return b;
}

PatternBuilder biasResidualPattern() {
  PatternBuilder b("matmul_bias_add");
  size_t mm = b.add(weightsMatMul(true));
  size_t bias = b.add(biasAdd(true));
  size_t res = b.add(OpMatcher("Add").where(predicates::sameShapes()));
  b.connect(mm, bias).connect(bias, res);
  return b;
}

PatternBuilder biasActPattern() {
  PatternBuilder b("matmul_bias_act");
  size_t mm = b.add(weightsMatMul(true));
  size_t bias = b.add(biasAdd(false));
  b.connect(mm, bias);
  return b;
}

PatternBuilder gemmPattern(bool act) {
  PatternBuilder b(act ? "gemm_act" : "gemm");
  OpMatcher gemm("Gemm");
  gemm.where(sp::attrEquals("transA", int64_t{0}))
      .where(constantMatrixB())
      .where([](const Node& n) {
        return Decision::noIf(n.numInputs() > 2 && n.input(2) && !constantOf(n.input(2)),
                              "C is not a constant");
      });
  if (act) gemm.where(sp::hasOneUse());
  size_t g = b.add(gemm);
  if (act) {
    size_t a =
        b.add(OpMatcher::anyOf(activationOps()).where(predicates::isTranslatableActivation()));
    b.connect(g, a, 0);
  }
  return b;
}

// B is a 2-D constant, or A and B have the same rank (2 or more) and the
// same static batch dims: what the kernel takes without broadcasting.
partition::NodePredicate operandsFit() {
  return [](const Node& n) {
    const Value* a = n.input(0);
    const Value* b = n.input(1);
    if (!a || !b || !a->type().hasRank() || a->type().shape->size() < 2)
      return Decision::no("A has no known rank of 2 or more");
    if (a->type().dtype != DataType::kFloat32) return Decision::no("A is not f32");
    if (constantOf(b)) return constantMatrixB()(n);
    if (!b->type().hasRank() || b->type().shape->size() != a->type().shape->size())
      return Decision::no("A and B differ in rank (batch broadcasting)");
    const Shape& sa = *a->type().shape;
    const Shape& sb = *b->type().shape;
    for (size_t i = 0; i + 2 < sa.size(); ++i)
      if (!sa[i].isStatic() || !(sa[i] == sb[i]))
        return Decision::no("batch dims of A and B are not the same static sizes");
    return Decision::yes();
  };
}

PatternBuilder scaledPattern() {
  PatternBuilder b("matmul_scale");
  size_t mm = b.add(OpMatcher("MatMul").where(operandsFit()).where(sp::hasOneUse()));
  size_t scale = b.add(OpMatcher::anyOf({"Div", "Mul"})
                           .where(predicates::hasScalarConstant())
                           .where([](const Node& n) {
                             // x / c, not c / x.
                             return Decision::noIf(n.opType() == "Div" && !scalarOf(n.input(1)),
                                                   "the divisor is not the constant");
                           }));
  b.connect(mm, scale);
  return b;
}

PatternBuilder plainPattern() {
  PatternBuilder b("matmul");
  b.add(OpMatcher("MatMul").where(operandsFit()));
  return b;
}

class MatMulRegionKernel final : public RegionKernel {
 public:
  explicit MatMulRegionKernel(const Node& region) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    MatMulSpec spec;
    const Node* first = body.nodes().front();
    const Value* last = first->output(0);
    if (first->opType() == "MatMul") {
      aInput_ = body.inputIndex(first->input(0));
      if (constantOf(first->input(1))) {
        const Tensor* w = constantOf(first->input(1));
        if (w->dims().size() != 2) throw Unsupported("B is not 2-D");
        spec.weights = floatsOf(first->input(1));
        spec.k = w->dims()[0];
        spec.n = w->dims()[1];
      } else {
        bInput_ = body.inputIndex(first->input(1));
      }
    } else if (first->opType() == "Gemm") {
      readGemm(body, *first, spec);
    } else {
      throw Unsupported("a matmul region starts with " + first->opType());
    }
    bool sawGelu = false;
    for (const Node* n : body.nodes()) {
      if (n == first) continue;
      const std::string& op = n->opType();
      if (sawGelu) continue;  // the rest of the GELU form, checked by the pattern
      const Value* other =
          n->numInputs() == 2 ? (n->input(0) == last ? n->input(1) : n->input(0)) : nullptr;
      if (op == "Add" && spec.bias.empty() && !spec.sumResidual && spec.activations.empty() &&
          constantOf(other)) {
        spec.bias = floatsOf(other);
      } else if (op == "Add" && body.isInput(other) && spec.activations.empty()) {
        spec.sumResidual = true;
        residualInput_ = body.inputIndex(other);
      } else if (op == "Div" && body.find("Erf")) {
        spec.activations.push_back({Activation::Kind::kGeluErf});
        sawGelu = true;
      } else if ((op == "Div" || op == "Mul") && scalarOf(other)) {
        float c = *scalarOf(other);
        spec.activations.push_back({Activation::Kind::kLinear, op == "Div" ? 1.0f / c : c, 0.0f});
      } else if (std::optional<Activation> a = activationOf(*n)) {
        spec.activations.push_back(*a);
      } else {
        throw Unsupported("unexpected " + op + " in a matmul region");
      }
      last = n->output(0);
    }
    spec.bf16 = bf16Mode();
    mm_ = std::make_unique<FusedMatMul>(std::move(spec));
  }

  Status resize(runtime::ResizeContext& ctx) const override {
    return guarded(ctx, [&] {
      const std::vector<int64_t>& a = ctx.inputDesc(aInput_).dims;
      std::vector<int64_t> b;
      if (bInput_ != kNone) b = ctx.inputDesc(bInput_).dims;
      runtime::TensorDesc out;
      out.dims = mm_->outputDims(a, b);
      // Matched on equal (possibly symbolic) shapes; the sum reads the
      // residual as the output's shape.
      if (residualInput_ != kNone && ctx.inputDesc(residualInput_).dims != out.dims)
        throw std::invalid_argument("matmul: the residual's dims differ from the output's");
      ctx.requestScratch(mm_->prepare(a, b));
      ctx.setOutput(0, std::move(out));
    });
  }

  Status run(runtime::RunContext& ctx) const override {
    return guarded(ctx, [&] {
      const runtime::TensorView& a = ctx.input(aInput_);
      const float* b = bInput_ != kNone ? ctx.input(bInput_).data<float>() : nullptr;
      std::span<const int64_t> bDims;
      if (bInput_ != kNone) bDims = ctx.input(bInput_).dims();
      const float* residual =
          residualInput_ != kNone ? ctx.input(residualInput_).data<float>() : nullptr;
      mm_->execute(a.dims(), bDims, a.data<float>(), b, residual,
                   ctx.output(0).mutableData<float>(), ctx.scratch().data());
    });
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  // Gemm: alpha folds into the weights, beta into the bias; transB means
  // the weights are stored [N, K] and are transposed here, once.
  void readGemm(const RegionBody& body, const Node& gemm, MatMulSpec& spec) {
    aInput_ = body.inputIndex(gemm.input(0));
    if (gemm.getInt("transA", 0) != 0) throw Unsupported("transA is not supported");
    const Tensor* w = constantOf(gemm.input(1));
    if (!w || w->dims().size() != 2) throw Unsupported("B is not a 2-D constant");
    std::vector<float> b = floatsOf(gemm.input(1));
    float alpha = gemm.getFloat("alpha", 1.0f), beta = gemm.getFloat("beta", 1.0f);
    bool transB = gemm.getInt("transB", 0) != 0;
    int64_t rows = w->dims()[0], cols = w->dims()[1];
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

std::vector<std::pair<std::string, partition::PropertyFactory>> matmulProperties() {
  return {
      {"matmul_bias_gelu", property("matmul_bias_gelu", geluPattern)},
      {"matmul_bias_add", property("matmul_bias_add", biasResidualPattern)},
      {"matmul_bias_act", property("matmul_bias_act",
                                   [] {
                                     PatternBuilder b("matmul_bias_act");
                                     size_t mm = b.add(weightsMatMul(true));
                                     size_t bias = b.add(biasAdd(true));
                                     size_t act =
                                         b.add(OpMatcher::anyOf(activationOps())
                                                   .where(predicates::isTranslatableActivation()));
                                     b.connect(mm, bias).connect(bias, act, 0);
                                     return b;
                                   })},
      {"matmul_bias", property("matmul_bias", biasActPattern)},
      {"gemm_act", property("gemm_act", [] { return gemmPattern(true); })},
      {"gemm", property("gemm", [] { return gemmPattern(false); })},
      {"matmul_scale", property("matmul_scale", scaledPattern)},
      {"matmul", property("matmul", plainPattern)},
  };
}

runtime::KernelCreator matmulKernelCreator() { return creatorOf<MatMulRegionKernel>(); }

}  // namespace subgraph::onednn
