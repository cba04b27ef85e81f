//===- runtime/reference/determinant.cpp - Det ----------------------------===//
//
// Det(X [..., M, M]) -> Y [...]: the determinant of each square matrix by
// LU decomposition with partial pivoting, in double (then rounded to the
// element type). The matrices of a batch run in parallel.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <utility>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

// Determinant of the m x m row-major matrix `a` (destroyed).
double luDeterminant(std::vector<double>& a, int64_t m) {
  double det = 1;
  for (int64_t col = 0; col < m; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < m; ++r)
      if (std::fabs(a[static_cast<size_t>(r * m + col)]) >
          std::fabs(a[static_cast<size_t>(pivot * m + col)]))
        pivot = r;
    const double p = a[static_cast<size_t>(pivot * m + col)];
    if (p == 0) return 0;
    if (pivot != col) {
      for (int64_t c = 0; c < m; ++c)
        std::swap(a[static_cast<size_t>(pivot * m + c)], a[static_cast<size_t>(col * m + c)]);
      det = -det;
    }
    det *= p;
    for (int64_t r = col + 1; r < m; ++r) {
      const double f = a[static_cast<size_t>(r * m + col)] / p;
      for (int64_t c = col; c < m; ++c)
        a[static_cast<size_t>(r * m + c)] -= f * a[static_cast<size_t>(col * m + c)];
    }
  }
  return det;
}

class DetKernel final : public Kernel {
 public:
  explicit DetKernel(const Node&) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kFloatTypes)) return unsupportedType(ctx.node(), x.dtype);
    const size_t r = x.dims.size();
    if (r < 2 || x.dims[r - 1] != x.dims[r - 2])
      return ctx.fail("X must be [..., M, M], got " + x.toString());
    ctx.setOutput(
        0, TensorDesc{x.dtype, std::vector<int64_t>(x.dims.begin(), x.dims.end() - 2), nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const int64_t m = x.dim(-1), batch = ctx.output(0).numElements();
    visitType<kFloatTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      parallelFor(batch, m * m * m, [&](int64_t begin, int64_t end) {
        std::vector<double> a(static_cast<size_t>(m * m));
        for (int64_t b = begin; b < end; ++b) {
          for (int64_t i = 0; i < m * m; ++i)
            a[static_cast<size_t>(i)] = static_cast<double>(load(px[b * m * m + i]));
          py[b] = store<T>(static_cast<Compute<T>>(luDeterminant(a, m)));
        }
      });
    });
    return Status::ok();
  }
};

}  // namespace

void registerDeterminantKernels(Provider& p) { p.add("Det", creatorFor<DetKernel>()); }

}  // namespace subgraph::runtime::reference
