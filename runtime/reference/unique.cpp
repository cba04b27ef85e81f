//===- runtime/reference/unique.cpp - Unique ------------------------------===//
//
// Unique(X) -> (Y, indices, inverse_indices, counts), as numpy.unique: the
// distinct elements of the flattened X, or with `axis` the distinct slices
// along it. Slices compare lexicographically in row-major order of the
// slice (the axis moved to the front); floats compare by value with every
// NaN equal to every other NaN and larger than any number, a total order
// that keeps the sort well defined. `sorted` = 1 lists them in ascending
// order, 0 in order of first occurrence; indices are first occurrences.
// The output size depends on the data, so X is a shape input.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

// X seen as [outer, n, inner]: n slices of outer * inner elements.
struct SliceGeometry {
  int64_t outer = 1, n = 1, inner = 1;
};

// The distinct slices: group g is represented by slice first[g]; slice j
// belongs to group inverse[j]; counts[g] slices are in group g.
struct Groups {
  std::vector<int64_t> first, inverse, counts;
};

template <typename C>
bool totalLess(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename T>
Groups groupSlices(const T* x, const SliceGeometry& g, bool sorted) {
  // -1, 0, 1 as slice a orders before, with, after slice b.
  auto compare = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t i = 0; i < g.inner; ++i) {
        auto va = load(x[(o * g.n + a) * g.inner + i]);
        auto vb = load(x[(o * g.n + b) * g.inner + i]);
        if (totalLess(va, vb)) return -1;
        if (totalLess(vb, va)) return 1;
      }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(g.n));
  std::iota(order.begin(), order.end(), 0);
  // Stable, so each run of equal slices starts with its first occurrence.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  Groups out;
  out.inverse.assign(static_cast<size_t>(g.n), 0);
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || compare(order[k - 1], order[k]) != 0) {
      out.first.push_back(order[k]);
      out.counts.push_back(0);
    }
    out.inverse[static_cast<size_t>(order[k])] = static_cast<int64_t>(out.first.size()) - 1;
    ++out.counts.back();
  }
  if (sorted) return out;
  // Renumber the groups by first occurrence.
  const size_t groups = out.first.size();
  std::vector<int64_t> byFirst(groups), rank(groups);
  std::iota(byFirst.begin(), byFirst.end(), 0);
  std::sort(byFirst.begin(), byFirst.end(), [&](int64_t a, int64_t b) {
    return out.first[static_cast<size_t>(a)] < out.first[static_cast<size_t>(b)];
  });
  Groups re;
  for (size_t k = 0; k < groups; ++k) {
    rank[static_cast<size_t>(byFirst[k])] = static_cast<int64_t>(k);
    re.first.push_back(out.first[static_cast<size_t>(byFirst[k])]);
    re.counts.push_back(out.counts[static_cast<size_t>(byFirst[k])]);
  }
  for (int64_t& v : out.inverse) v = rank[static_cast<size_t>(v)];
  re.inverse = std::move(out.inverse);
  return re;
}

class UniqueKernel final : public Kernel {
 public:
  explicit UniqueKernel(const Node& node)
      : hasAxis_(node.hasAttr("axis")),
        axis_(node.getInt("axis", 0)),
        sorted_(node.getInt("sorted", 1) != 0) {}
  std::vector<size_t> shapeInputs() const override { return {0}; }

  Status resize(ResizeContext& ctx) const override {
    const TensorView& x = *ctx.inputContent(0);
    SliceGeometry g;
    int64_t axis = 0;
    SUBGRAPH_RETURN_IF_ERROR(geometry(ctx, x, g, axis));
    Groups groups;
    SUBGRAPH_RETURN_IF_ERROR(group(ctx, x, g, groups));
    const int64_t count = static_cast<int64_t>(groups.first.size());
    std::vector<int64_t> y = {count};
    if (hasAxis_) {
      y = x.dims();
      y[static_cast<size_t>(axis)] = count;
    }
    ctx.setOutput(0, TensorDesc{x.dtype(), y, nullptr});
    if (ctx.numOutputs() > 1) ctx.setOutput(1, TensorDesc{DataType::kInt64, {count}, nullptr});
    if (ctx.numOutputs() > 2) ctx.setOutput(2, TensorDesc{DataType::kInt64, {g.n}, nullptr});
    if (ctx.numOutputs() > 3) ctx.setOutput(3, TensorDesc{DataType::kInt64, {count}, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    SliceGeometry g;
    int64_t axis = 0;
    SUBGRAPH_RETURN_IF_ERROR(geometry(ctx, x, g, axis));
    Groups groups;
    SUBGRAPH_RETURN_IF_ERROR(group(ctx, x, g, groups));
    const int64_t count = static_cast<int64_t>(groups.first.size());
    const size_t blockBytes = static_cast<size_t>(g.inner) * dataTypeSize(x.dtype());
    const auto* src = static_cast<const std::byte*>(x.raw());
    auto* dst = static_cast<std::byte*>(ctx.output(0).raw());
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t k = 0; k < count; ++k)
        std::memcpy(
            dst + static_cast<size_t>(o * count + k) * blockBytes,
            src + static_cast<size_t>(o * g.n + groups.first[static_cast<size_t>(k)]) * blockBytes,
            blockBytes);
    auto write = [&](size_t output, const std::vector<int64_t>& v) {
      if (ctx.numOutputs() > output && !v.empty())
        std::memcpy(ctx.output(output).raw(), v.data(), v.size() * sizeof(int64_t));
    };
    write(1, groups.first);
    write(2, groups.inverse);
    write(3, groups.counts);
    return Status::ok();
  }

 private:
  template <typename Ctx>
  Status geometry(const Ctx& ctx, const TensorView& x, SliceGeometry& g, int64_t& axis) const {
    if (!typeInSet(x.dtype(), kAllTypes)) return unsupportedType(ctx.node(), x.dtype());
    if (!hasAxis_) {
      g.n = x.numElements();
      return Status::ok();
    }
    axis = axis_;
    if (!normalizeAxis(axis, static_cast<int64_t>(x.rank())))
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range for " +
                      x.desc().toString());
    for (size_t d = 0; d < x.rank(); ++d) {
      if (static_cast<int64_t>(d) < axis) g.outer *= x.dims()[d];
      if (static_cast<int64_t>(d) > axis) g.inner *= x.dims()[d];
    }
    g.n = x.dim(axis);
    return Status::ok();
  }

  template <typename Ctx>
  Status group(const Ctx& ctx, const TensorView& x, const SliceGeometry& g, Groups& out) const {
    bool ok = visitType<kAllTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      out = groupSlices(x.data<T>(), g, sorted_);
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

  bool hasAxis_;
  int64_t axis_;
  bool sorted_;
};

}  // namespace

void registerUniqueKernels(Provider& p) { p.add("Unique", creatorFor<UniqueKernel>()); }

}  // namespace subgraph::runtime::reference
