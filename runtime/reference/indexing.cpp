//===- runtime/reference/indexing.cpp - Index-driven gathers and scatters -===//
//
// GatherElements, GatherND, ScatterElements, ScatterND (with the add, mul,
// max and min reductions), OneHot and NonZero: ops whose element positions
// come from an index tensor. Every index is range-checked (negative indices
// count from the end) and an out-of-range index fails the request with the
// index, the axis and its size, instead of touching memory it should not.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

// Checks `i` against `size` and makes it non-negative.
bool fixIndex(int64_t& i, int64_t size) {
  if (i < -size || i >= size) return false;
  if (i < 0) i += size;
  return true;
}

Status badIndex(const RunContext& ctx, int64_t index, int64_t axis, int64_t size) {
  return ctx.fail("index " + std::to_string(index) + " is out of range for axis " +
                  std::to_string(axis) + " of size " + std::to_string(size));
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction readReduction(const Node& node) {
  std::string r = node.getString("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  throwNodeError(node, "unknown reduction '" + r + "'");
}

template <typename T>
void combine(T& dst, T src, Reduction r) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (r) {
      case Reduction::kAdd:
      case Reduction::kMax: dst = dst || src; break;
      case Reduction::kMul:
      case Reduction::kMin: dst = dst && src; break;
      default: dst = src; break;
    }
  } else {
    auto a = load(dst), b = load(src);
    switch (r) {
      case Reduction::kAdd: dst = store<T>(static_cast<Compute<T>>(a + b)); break;
      case Reduction::kMul: dst = store<T>(static_cast<Compute<T>>(a * b)); break;
      case Reduction::kMax: dst = store<T>(std::max(a, b)); break;
      case Reduction::kMin: dst = store<T>(std::min(a, b)); break;
      default: dst = src; break;
    }
  }
}

class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(const Node& node) : axis_(node.getInt("axis", 0)) {}
  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& idx = ctx.inputDesc(1);
    int64_t axis = axis_;
    if (!normalizeAxis(axis, static_cast<int64_t>(x.dims.size())))
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range for " + x.toString());
    if (!typeInSet(idx.dtype, kIndexTypes)) return ctx.fail("indices must be int32 or int64");
    if (idx.dims.size() != x.dims.size())
      return ctx.fail("indices and data must have the same rank");
    ctx.setOutput(0, TensorDesc{x.dtype, idx.dims, nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const TensorView& idxView = ctx.input(1);
    int64_t axis = axis_;
    normalizeAxis(axis, static_cast<int64_t>(x.rank()));
    std::vector<int64_t> indices = readInts(idxView);
    std::vector<int64_t> xs = contiguousStrides(x.dims());
    const std::vector<int64_t>& id = idxView.dims();
    for (size_t d = 0; d < id.size(); ++d)
      if (static_cast<int64_t>(d) != axis && id[d] > x.dims()[d])
        return ctx.fail("indices dim " + std::to_string(d) + " exceeds the data's");
    const size_t es = dataTypeSize(x.dtype());
    const auto* px = static_cast<const std::byte*>(x.raw());
    auto* py = static_cast<std::byte*>(ctx.output(0).raw());
    const int64_t dim = x.dim(axis);
    for (int64_t i = 0, n = static_cast<int64_t>(indices.size()); i < n; ++i) {
      int64_t rest = i, off = 0;
      for (size_t d = id.size(); d-- > 0;) {
        int64_t c = rest % id[d];
        rest /= id[d];
        if (static_cast<int64_t>(d) == axis) {
          c = indices[static_cast<size_t>(i)];
          if (!fixIndex(c, dim)) return badIndex(ctx, indices[static_cast<size_t>(i)], axis, dim);
        }
        off += c * xs[d];
      }
      std::memcpy(py + static_cast<size_t>(i) * es, px + static_cast<size_t>(off) * es, es);
    }
    return Status::ok();
  }

 private:
  int64_t axis_;
};

class ScatterElementsKernel final : public Kernel {
 public:
  explicit ScatterElementsKernel(const Node& node)
      : axis_(node.getInt("axis", 0)), reduction_(readReduction(node)) {}
  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    int64_t axis = axis_;
    if (!normalizeAxis(axis, static_cast<int64_t>(x.dims.size())))
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range for " + x.toString());
    if (!typeInSet(ctx.inputDesc(1).dtype, kIndexTypes))
      return ctx.fail("indices must be int32 or int64");
    if (ctx.inputDesc(1).dims != ctx.inputDesc(2).dims)
      return ctx.fail("indices and updates must have the same dims");
    if (ctx.inputDesc(2).dtype != x.dtype)
      return ctx.fail("updates and data differ in element type");
    if (ctx.inputDesc(1).dims.size() != x.dims.size())
      return ctx.fail("indices and data must have the same rank");
    ctx.setOutput(0, x);
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    int64_t axis = axis_;
    normalizeAxis(axis, static_cast<int64_t>(x.rank()));
    std::vector<int64_t> indices = readInts(ctx.input(1));
    const std::vector<int64_t>& id = ctx.input(1).dims();
    for (size_t d = 0; d < id.size(); ++d)
      if (static_cast<int64_t>(d) != axis && id[d] > x.dims()[d])
        return ctx.fail("indices dim " + std::to_string(d) + " exceeds the data's");
    std::vector<int64_t> xs = contiguousStrides(x.dims());
    const int64_t dim = x.dim(axis);
    Status st;
    visitType<kAllTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = ctx.output(0).mutableData<T>();
      if (py != x.data<T>() && x.byteSize()) std::memcpy(py, x.raw(), x.byteSize());
      const T* pu = ctx.input(2).data<T>();
      for (int64_t i = 0, n = static_cast<int64_t>(indices.size()); i < n && st.isOk(); ++i) {
        int64_t rest = i, off = 0;
        for (size_t d = id.size(); d-- > 0;) {
          int64_t c = rest % id[d];
          rest /= id[d];
          if (static_cast<int64_t>(d) == axis) {
            c = indices[static_cast<size_t>(i)];
            if (!fixIndex(c, dim)) {
              st = badIndex(ctx, indices[static_cast<size_t>(i)], axis, dim);
              break;
            }
          }
          off += c * xs[d];
        }
        if (st.isOk()) combine(py[off], pu[i], reduction_);
      }
    });
    return st;
  }

 private:
  int64_t axis_;
  Reduction reduction_;
};

// The data offsets GatherND and ScatterND address: indices[..., k] picks
// the first k dims (after batch_dims), each tuple addressing a slice of
// `sliceSize` elements.
struct NdAddressing {
  int64_t batch = 1, perBatch = 1, k = 0, sliceSize = 1, batchStride = 0;
  std::vector<int64_t> offsets;  // element offset of every slice, in index order
};

Status ndOffsets(const RunContext& ctx, const TensorView& data, const TensorView& idx,
                 int64_t batchDims, NdAddressing& a) {
  const auto& dd = data.dims();
  const auto& id = idx.dims();
  a.k = id.back();
  std::vector<int64_t> ds = contiguousStrides(dd);
  for (int64_t d = 0; d < batchDims; ++d) a.batch *= dd[static_cast<size_t>(d)];
  a.batchStride = batchDims > 0 ? ds[static_cast<size_t>(batchDims - 1)] : 0;
  for (size_t d = static_cast<size_t>(batchDims + a.k); d < dd.size(); ++d) a.sliceSize *= dd[d];
  for (size_t d = static_cast<size_t>(batchDims); d + 1 < id.size(); ++d) a.perBatch *= id[d];
  std::vector<int64_t> values = readInts(idx);
  a.offsets.resize(static_cast<size_t>(a.batch * a.perBatch));
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t t = 0; t < a.perBatch; ++t) {
      int64_t off = b * a.batchStride;
      const int64_t* tuple = values.data() + (b * a.perBatch + t) * a.k;
      for (int64_t j = 0; j < a.k; ++j) {
        const size_t d = static_cast<size_t>(batchDims + j);
        int64_t c = tuple[j];
        if (!fixIndex(c, dd[d])) return badIndex(ctx, tuple[j], static_cast<int64_t>(d), dd[d]);
        off += c * ds[d];
      }
      a.offsets[static_cast<size_t>(b * a.perBatch + t)] = off;
    }
  return Status::ok();
}

Status checkNd(const ResizeContext& ctx, const TensorDesc& data, const TensorDesc& idx,
               int64_t batchDims) {
  if (!typeInSet(idx.dtype, kIndexTypes)) return ctx.fail("indices must be int32 or int64");
  if (idx.dims.empty()) return ctx.fail("indices must have rank >= 1");
  const int64_t k = idx.dims.back();
  if (batchDims < 0 ||
      batchDims >= static_cast<int64_t>(std::min(data.dims.size(), idx.dims.size())))
    return ctx.fail("batch_dims " + std::to_string(batchDims) + " is out of range");
  if (k < 0 || batchDims + k > static_cast<int64_t>(data.dims.size()))
    return ctx.fail("indices' last dim " + std::to_string(k) + " is too large for " +
                    data.toString());
  for (int64_t d = 0; d < batchDims; ++d)
    if (data.dims[static_cast<size_t>(d)] != idx.dims[static_cast<size_t>(d)])
      return ctx.fail("batch dims of data and indices differ");
  return Status::ok();
}

class GatherNdKernel final : public Kernel {
 public:
  explicit GatherNdKernel(const Node& node) : batchDims_(node.getInt("batch_dims", 0)) {}
  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& idx = ctx.inputDesc(1);
    SUBGRAPH_RETURN_IF_ERROR(checkNd(ctx, x, idx, batchDims_));
    std::vector<int64_t> out(idx.dims.begin(), idx.dims.end() - 1);
    out.insert(out.end(), x.dims.begin() + batchDims_ + idx.dims.back(), x.dims.end());
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    NdAddressing a;
    SUBGRAPH_RETURN_IF_ERROR(ndOffsets(ctx, ctx.input(0), ctx.input(1), batchDims_, a));
    const size_t es = dataTypeSize(ctx.input(0).dtype()),
                 slice = static_cast<size_t>(a.sliceSize) * es;
    const auto* px = static_cast<const std::byte*>(ctx.input(0).raw());
    auto* py = static_cast<std::byte*>(ctx.output(0).raw());
    for (size_t i = 0; i < a.offsets.size(); ++i)
      if (slice) std::memcpy(py + i * slice, px + static_cast<size_t>(a.offsets[i]) * es, slice);
    return Status::ok();
  }

 private:
  int64_t batchDims_;
};

class ScatterNdKernel final : public Kernel {
 public:
  explicit ScatterNdKernel(const Node& node) : reduction_(readReduction(node)) {}
  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& idx = ctx.inputDesc(1);
    if (!typeInSet(idx.dtype, kIndexTypes)) return ctx.fail("indices must be int32 or int64");
    if (idx.dims.empty() || idx.dims.back() > static_cast<int64_t>(x.dims.size()))
      return ctx.fail("indices' last dim is too large for " + x.toString());
    std::vector<int64_t> want(idx.dims.begin(), idx.dims.end() - 1);
    want.insert(want.end(), x.dims.begin() + idx.dims.back(), x.dims.end());
    if (ctx.inputDesc(2).dims != want)
      return ctx.fail("updates " + ctx.inputDesc(2).toString() + " must have dims " +
                      dimsToString(want));
    if (ctx.inputDesc(2).dtype != x.dtype)
      return ctx.fail("updates and data differ in element type");
    ctx.setOutput(0, x);
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    NdAddressing a;
    SUBGRAPH_RETURN_IF_ERROR(ndOffsets(ctx, x, ctx.input(1), 0, a));
    visitType<kAllTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = ctx.output(0).mutableData<T>();
      if (py != x.data<T>() && x.byteSize()) std::memcpy(py, x.raw(), x.byteSize());
      const T* pu = ctx.input(2).data<T>();
      for (size_t i = 0; i < a.offsets.size(); ++i)
        for (int64_t j = 0; j < a.sliceSize; ++j)
          combine(py[a.offsets[i] + j], pu[static_cast<int64_t>(i) * a.sliceSize + j], reduction_);
    });
    return Status::ok();
  }

 private:
  Reduction reduction_;
};

// OneHot(indices, depth, values = [off, on]) inserting a depth-sized axis.
class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(const Node& node) : axis_(node.getInt("axis", -1)) {}
  std::vector<size_t> shapeInputs() const override { return {1}; }
  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& idx = ctx.inputDesc(0);
    if (ctx.inputDesc(1).numElements() != 1) return ctx.fail("depth must hold one value");
    if (ctx.inputDesc(2).numElements() != 2) return ctx.fail("values must hold [off, on]");
    const int64_t depth = static_cast<int64_t>(readDoubles(*ctx.inputContent(1))[0]);
    if (depth < 1) return ctx.fail("depth must be positive, got " + std::to_string(depth));
    int64_t axis = axis_;
    if (!normalizeAxis(axis, static_cast<int64_t>(idx.dims.size()) + 1))
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range");
    std::vector<int64_t> out = idx.dims;
    out.insert(out.begin() + axis, depth);
    ctx.setOutput(0, TensorDesc{ctx.inputDesc(2).dtype, out, nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const TensorView& y = ctx.output(0);
    int64_t axis = axis_;
    normalizeAxis(axis, static_cast<int64_t>(y.rank()));
    const int64_t depth = y.dim(axis);
    std::vector<double> idx = readDoubles(ctx.input(0));
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < y.rank(); ++d) {
      if (static_cast<int64_t>(d) < axis) outer *= y.dims()[d];
      if (static_cast<int64_t>(d) > axis) inner *= y.dims()[d];
    }
    const size_t es = dataTypeSize(y.dtype());
    const auto* vals = static_cast<const std::byte*>(ctx.input(2).raw());
    auto* py = static_cast<std::byte*>(y.raw());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t d = 0; d < depth; ++d)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t at = static_cast<int64_t>(idx[static_cast<size_t>(o * inner + i)]);
          if (at < 0) at += depth;  // out-of-range indices give an all-off row
          std::memcpy(py + static_cast<size_t>((o * depth + d) * inner + i) * es,
                      vals + (at == d ? es : 0), es);
        }
    return Status::ok();
  }

 private:
  int64_t axis_;
};

// NonZero(X) -> int64 [rank, count]: its shape depends on the data, so X is
// a shape input and the session computes it at resize time.
class NonZeroKernel final : public Kernel {
 public:
  explicit NonZeroKernel(const Node&) {}
  std::vector<size_t> shapeInputs() const override { return {0}; }
  Status resize(ResizeContext& ctx) const override {
    const TensorView& x = *ctx.inputContent(0);
    if (!typeInSet(x.dtype(), kAllTypes)) return unsupportedType(ctx.node(), x.dtype());
    std::vector<double> v = readDoubles(x);
    int64_t count = std::count_if(v.begin(), v.end(), [](double d) { return d != 0; });
    ctx.setOutput(0,
                  TensorDesc{DataType::kInt64, {static_cast<int64_t>(x.rank()), count}, nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    std::vector<double> v = readDoubles(x);
    const int64_t count = ctx.output(0).dim(1), rank = static_cast<int64_t>(x.rank());
    int64_t* py = ctx.output(0).mutableData<int64_t>();
    int64_t k = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
      if (v[static_cast<size_t>(i)] == 0) continue;
      int64_t rest = i;
      for (int64_t d = rank; d-- > 0;) {
        py[d * count + k] = rest % x.dims()[static_cast<size_t>(d)];
        rest /= x.dims()[static_cast<size_t>(d)];
      }
      ++k;
    }
    return Status::ok();
  }
};

}  // namespace

void registerIndexingKernels(Provider& p) {
  p.add("GatherElements", creatorFor<GatherElementsKernel>());
  p.add("GatherND", creatorFor<GatherNdKernel>());
  p.add("ScatterElements", creatorFor<ScatterElementsKernel>());
  p.add("ScatterND", creatorFor<ScatterNdKernel>());
  p.add("OneHot", creatorFor<OneHotKernel>());
  p.add("NonZero", creatorFor<NonZeroKernel>());
}

}  // namespace subgraph::runtime::reference
