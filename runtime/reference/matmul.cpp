//===- runtime/reference/matmul.cpp - MatMul and Gemm ---------------------===//
//
// MatMul with numpy semantics (1-d operands promoted and the added dim
// dropped again, batch dims broadcast) and Gemm (optional transposes, alpha,
// beta, a bias C broadcast to [M, N]). f32 and f64 go through the blocked
// GEMM; the other allowed types (integers, f16, bf16) use a plain loop in
// their compute type, which is exact for integers.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "reference/gemm.h"
#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

constexpr unsigned kMatMulTypes = kFloatTypes | kIndexTypes | kUnsignedInts;

// C[m, n] (+)= alpha * sum_k op(A)[m, k] op(B)[k, n], for any element type.
template <typename T>
void matmulGeneric(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const T* a,
                   int64_t lda, const T* b, int64_t ldb, bool accumulate, T* c, int64_t ldc) {
  using C = Compute<T>;
  parallelFor(m, n * k, [&](int64_t begin, int64_t end) {
    std::vector<C> row(static_cast<size_t>(n));
    for (int64_t i = begin; i < end; ++i) {
      std::fill(row.begin(), row.end(), C(0));
      for (int64_t p = 0; p < k; ++p) {
        C av = load(ta ? a[p * lda + i] : a[i * lda + p]);
        for (int64_t j = 0; j < n; ++j)
          row[static_cast<size_t>(j)] += av * load(tb ? b[j * ldb + p] : b[p * ldb + j]);
      }
      for (int64_t j = 0; j < n; ++j) {
        C v = static_cast<C>(
            alpha == 1.0
                ? row[static_cast<size_t>(j)]
                : static_cast<C>(alpha * static_cast<double>(row[static_cast<size_t>(j)])));
        c[i * ldc + j] = accumulate ? store<T>(load(c[i * ldc + j]) + v) : store<T>(v);
      }
    }
  });
}

template <typename T>
void matmulAny(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const T* a,
               int64_t lda, const T* b, int64_t ldb, bool accumulate, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    gemm(ta, tb, m, n, k, static_cast<T>(alpha), a, lda, b, ldb, accumulate ? T(1) : T(0), c, ldc);
  else
    matmulGeneric(ta, tb, m, n, k, alpha, a, lda, b, ldb, accumulate, c, ldc);
}

class MatMulKernel final : public Kernel {
 public:
  explicit MatMulKernel(const Node&) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& a = ctx.inputDesc(0);
    const TensorDesc& b = ctx.inputDesc(1);
    if (!typeInSet(a.dtype, kMatMulTypes)) return unsupportedType(ctx.node(), a.dtype);
    if (b.dtype != a.dtype) return ctx.fail("A and B have different element types");
    if (a.dims.empty() || b.dims.empty()) return ctx.fail("MatMul operands must have rank >= 1");
    Shapes s;
    if (!shapes(a.dims, b.dims, s))
      return ctx.fail("shapes " + dimsToString(a.dims) + " and " + dimsToString(b.dims) +
                      " are not compatible for MatMul");
    ctx.setOutput(0, TensorDesc{a.dtype, s.out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& a = ctx.input(0);
    const TensorView& b = ctx.input(1);
    Shapes s;
    shapes(a.dims(), b.dims(), s);
    bool ok = visitType<kMatMulTypes>(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const std::vector<int64_t>* dims[] = {&s.batchA, &s.batchB};
      BroadcastLoop loop(s.batch, dims);
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* pc = ctx.output(0).mutableData<T>();
      const int64_t strideA = s.m * s.k, strideB = s.k * s.n, strideC = s.m * s.n;
      // One GEMM per batch element; batches run in parallel, and each GEMM
      // may split further on the same arena.
      loop.run([&](int64_t oo, const int64_t* off, const int64_t* step, int64_t count) {
        for (int64_t i = 0; i < count; ++i) {
          int64_t ia = off[0] + i * step[0], ib = off[1] + i * step[1];
          matmulAny<T>(false, false, s.m, s.n, s.k, 1.0, pa + ia * strideA, s.k, pb + ib * strideB,
                       s.n, false, pc + (oo + i) * strideC, s.n);
        }
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), a.dtype());
  }

 private:
  struct Shapes {
    int64_t m = 1, n = 1, k = 1;
    std::vector<int64_t> batchA, batchB, batch, out;
  };

  static bool shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b, Shapes& s) {
    std::vector<int64_t> ad = a, bd = b;
    bool aVec = ad.size() == 1, bVec = bd.size() == 1;
    if (aVec) ad.insert(ad.begin(), 1);
    if (bVec) bd.push_back(1);
    s.m = ad[ad.size() - 2];
    s.k = ad.back();
    s.n = bd.back();
    if (bd[bd.size() - 2] != s.k) return false;
    s.batchA.assign(ad.begin(), ad.end() - 2);
    s.batchB.assign(bd.begin(), bd.end() - 2);
    const std::vector<int64_t>* both[] = {&s.batchA, &s.batchB};
    if (!broadcastDims(both, s.batch)) return false;
    s.out = s.batch;
    if (!aVec) s.out.push_back(s.m);
    if (!bVec) s.out.push_back(s.n);
    return true;
  }
};

class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(const Node& node)
      : alpha_(node.getFloat("alpha", 1.0f)),
        beta_(node.getFloat("beta", 1.0f)),
        transA_(node.getInt("transA", 0) != 0),
        transB_(node.getInt("transB", 0) != 0) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& a = ctx.inputDesc(0);
    const TensorDesc& b = ctx.inputDesc(1);
    if (!typeInSet(a.dtype, kMatMulTypes)) return unsupportedType(ctx.node(), a.dtype);
    if (a.dims.size() != 2 || b.dims.size() != 2)
      return ctx.fail("A and B must be matrices, got " + a.toString() + " and " + b.toString());
    if (b.dtype != a.dtype) return ctx.fail("A and B have different element types");
    int64_t m = transA_ ? a.dims[1] : a.dims[0], k = transA_ ? a.dims[0] : a.dims[1];
    int64_t kb = transB_ ? b.dims[1] : b.dims[0], n = transB_ ? b.dims[0] : b.dims[1];
    if (k != kb)
      return ctx.fail("inner dims differ: op(A) is [" + std::to_string(m) + ", " +
                      std::to_string(k) + "], op(B) is [" + std::to_string(kb) + ", " +
                      std::to_string(n) + "]");
    if (ctx.hasInput(2)) {
      const TensorDesc& c = ctx.inputDesc(2);
      std::vector<int64_t> mn = {m, n}, out;
      const std::vector<int64_t>* both[] = {&mn, &c.dims};
      if (c.dims.size() > 2 || !broadcastDims(both, out) || out != mn)
        return ctx.fail("C " + c.toString() + " does not broadcast to [" + std::to_string(m) +
                        ", " + std::to_string(n) + "]");
    }
    ctx.setOutput(0, TensorDesc{a.dtype, {m, n}, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& a = ctx.input(0);
    const TensorView& b = ctx.input(1);
    const TensorView& y = ctx.output(0);
    const int64_t m = y.dim(0), n = y.dim(1), k = transA_ ? a.dim(0) : a.dim(1);
    bool ok = visitType<kMatMulTypes>(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.mutableData<T>();
      bool withC = ctx.hasInput(2) && beta_ != 0.0f;
      if (withC) {
        // Y = beta * broadcast(C), then Y += alpha * op(A) op(B).
        std::vector<int64_t> mn = {m, n};
        const std::vector<int64_t>* dims[] = {&ctx.input(2).dims()};
        BroadcastLoop loop(mn, dims);
        const T* pc = ctx.input(2).data<T>();
        const double beta = beta_;
        loop.run([&](int64_t oo, const int64_t* off, const int64_t* step, int64_t count) {
          for (int64_t i = 0; i < count; ++i)
            py[oo + i] = store<T>(static_cast<Compute<T>>(
                beta * static_cast<double>(load(pc[off[0] + i * step[0]]))));
        });
      }
      matmulAny<T>(transA_, transB_, m, n, k, alpha_, a.data<T>(), a.dim(1), b.data<T>(), b.dim(1),
                   withC, py, n);
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), a.dtype());
  }

 private:
  float alpha_, beta_;
  bool transA_, transB_;
};

}  // namespace

void registerMatMulKernels(Provider& p) {
  p.add("MatMul", creatorFor<MatMulKernel>());
  p.add("Gemm", creatorFor<GemmKernel>());
}

}  // namespace subgraph::runtime::reference
