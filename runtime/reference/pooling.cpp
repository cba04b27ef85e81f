//===- runtime/reference/pooling.cpp - Pooling ----------------------------===//
//
// MaxPool (with the optional Indices output and storage_order),
// AveragePool (count_include_pad), GlobalAveragePool and GlobalMaxPool over
// N-d spatial dims, sharing the window geometry of Conv (auto_pad,
// ceil_mode, dilations). Windows are separable, so each output position
// first clips its window per axis and then visits only valid positions;
// (image, channel) planes run in parallel.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <limits>

#include "reference/kernel_util.h"
#include "reference/kernels.h"
#include "reference/window.h"

namespace subgraph::runtime::reference {
namespace {

// Valid positions of one window along one axis.
struct AxisWindow {
  int64_t first;   // input index of the first valid tap
  int64_t count;   // valid taps inside the input
  int64_t padded;  // taps inside the padded input (for count_include_pad)
};

AxisWindow clipAxis(const WindowGeometry& g, size_t axis, int64_t o) {
  const int64_t s = g.strides[axis], d = g.dilations[axis], k = g.kernel[axis];
  const int64_t in = g.inDims[axis], pb = g.padBegin[axis], pe = g.padEnd[axis];
  int64_t start = o * s - pb;
  AxisWindow w{0, 0, 0};
  bool haveFirst = false;
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = start + j * d;
    if (p >= -pb && p < in + pe) ++w.padded;
    if (p < 0 || p >= in) continue;
    if (!haveFirst) {
      w.first = p;
      haveFirst = true;
    }
    ++w.count;
  }
  return w;
}

enum class PoolKind { kMax, kAverage };

template <typename C>
bool isNan(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  return false;
}

class PoolKernel final : public Kernel {
 public:
  PoolKernel(const Node& node, PoolKind kind, bool global)
      : kind_(kind), global_(global), workLimit_(kernelWorkLimit()) {
    if (!global) {
      attrs_ = WindowAttrs::read(node);
      if (attrs_.kernelShape.empty()) throwNodeError(node, "kernel_shape is required");
      countIncludePad_ = node.getInt("count_include_pad", 0) != 0;
      storageOrder_ = node.getInt("storage_order", 0);
      if (storageOrder_ != 0 && storageOrder_ != 1)
        throwNodeError(node, "storage_order must be 0 or 1, got " + std::to_string(storageOrder_));
    }
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    unsigned types = kind_ == PoolKind::kMax && !global_ ? kFloatTypes | kSignedInts | kUnsignedInts
                                                         : kFloatTypes;
    if (!typeInSet(x.dtype, types)) return unsupportedType(ctx.node(), x.dtype);
    if (x.dims.size() < 3) return ctx.fail("X must be [N, C, D1, ...], got " + x.toString());
    WindowGeometry g;
    SUBGRAPH_RETURN_IF_ERROR(geometry(ctx, x.dims, g));
    // Every output element visits every tap of its window, padding too:
    // kernel_shape, not the input, sets that count.
    CheckedInt taps = CheckedInt(x.dims[0]) * x.dims[1];
    for (size_t a = 0; a < g.kernel.size(); ++a) taps = taps * g.outDims[a] * g.kernel[a];
    if (!global_)
      SUBGRAPH_RETURN_IF_ERROR(
          checkKernelWork(ctx.node(), taps, workLimit_, "kernel_shape " + dimsToString(g.kernel)));
    std::vector<int64_t> out = {x.dims[0], x.dims[1]};
    out.insert(out.end(), g.outDims.begin(), g.outDims.end());
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    if (ctx.numOutputs() > 1) {
      if (kind_ != PoolKind::kMax || global_) return ctx.fail("only MaxPool has an Indices output");
      ctx.setOutput(1, TensorDesc{DataType::kInt64, out, nullptr});
    }
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    WindowGeometry g;
    SUBGRAPH_RETURN_IF_ERROR(geometry(ctx, x.dims(), g));
    bool ok = visitType<kFloatTypes | kSignedInts | kUnsignedInts>(
        x.dtype(), [&](auto tag) { runTyped<typename decltype(tag)::type>(ctx, g); });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

 private:
  template <typename Ctx>
  Status geometry(const Ctx& ctx, const std::vector<int64_t>& xDims, WindowGeometry& g) const {
    std::vector<int64_t> spatial(xDims.begin() + 2, xDims.end());
    if (global_) {
      WindowAttrs whole;
      return resolveWindow(whole, spatial, spatial, g);
    }
    Status st = resolveWindow(attrs_, spatial, attrs_.kernelShape, g);
    return st.isOk() ? st : ctx.fail(st.message());
  }

  template <typename T>
  void runTyped(RunContext& ctx, const WindowGeometry& g) const {
    using C = Compute<T>;
    const TensorView& x = ctx.input(0);
    const size_t rank = g.inDims.size();
    int64_t inSize = 1;
    for (int64_t d : g.inDims) inSize *= d;
    const int64_t outSize = g.outSize(), planes = x.dim(0) * x.dim(1);
    const T* px = x.data<T>();
    T* py = ctx.output(0).mutableData<T>();
    int64_t* pidx = ctx.numOutputs() > 1 ? ctx.output(1).mutableData<int64_t>() : nullptr;
    std::vector<int64_t> inStrides = contiguousStrides(g.inDims);
    // Column-major spatial strides, for Indices with storage_order 1.
    std::vector<int64_t> colStrides(rank, 1);
    for (size_t i = 1; i < rank; ++i) colStrides[i] = colStrides[i - 1] * g.inDims[i - 1];
    parallelFor(planes, outSize * g.kernelSize(), [&](int64_t begin, int64_t end) {
      std::vector<int64_t> o(rank), t(rank);
      std::vector<AxisWindow> w(rank);
      for (int64_t plane = begin; plane < end; ++plane) {
        const T* xp = px + plane * inSize;
        std::fill(o.begin(), o.end(), 0);
        for (int64_t oi = 0; oi < outSize; ++oi) {
          int64_t taps = 1, padded = 1;
          for (size_t a = 0; a < rank; ++a) {
            w[a] = clipAxis(g, a, o[a]);
            taps *= w[a].count;
            padded *= w[a].padded;
          }
          C best = std::numeric_limits<C>::lowest();
          if constexpr (std::is_floating_point_v<C>) best = -std::numeric_limits<C>::infinity();
          int64_t bestAt = -1;
          double sum = 0;
          if (taps > 0) {
            std::fill(t.begin(), t.end(), 0);
            for (int64_t tap = 0; tap < taps; ++tap) {
              int64_t at = 0;
              for (size_t a = 0; a < rank; ++a)
                at += (w[a].first + t[a] * g.dilations[a]) * inStrides[a];
              C v = load(xp[at]);
              if (kind_ == PoolKind::kMax) {
                // A NaN anywhere in the window makes the max NaN (numpy's
                // max, and every backend's), wherever in the window it is.
                if (v > best || bestAt < 0 || (isNan(v) && !isNan(best))) {
                  best = v;
                  bestAt = at;
                }
              } else {
                sum += static_cast<double>(v);
              }
              for (size_t a = rank; a-- > 0;) {
                if (++t[a] < w[a].count) break;
                t[a] = 0;
              }
            }
          }
          if (kind_ == PoolKind::kMax) {
            py[plane * outSize + oi] = store<T>(best);
            if (pidx) {
              int64_t index = bestAt;
              if (storageOrder_ == 1 && bestAt >= 0) {
                index = 0;
                int64_t rest = bestAt;
                for (size_t a = 0; a < rank; ++a) {
                  index += (rest / inStrides[a]) * colStrides[a];
                  rest %= inStrides[a];
                }
              }
              pidx[plane * outSize + oi] = plane * inSize + index;
            }
          } else {
            int64_t divisor = countIncludePad_ ? padded : taps;
            py[plane * outSize + oi] =
                store<T>(static_cast<C>(divisor > 0 ? sum / static_cast<double>(divisor) : 0.0));
          }
          for (size_t a = rank; a-- > 0;) {
            if (++o[a] < g.outDims[a]) break;
            o[a] = 0;
          }
        }
      }
    });
  }

  PoolKind kind_;
  bool global_;
  uint64_t workLimit_;  // WorkLimits::kernelWork of the session; 0: none
  WindowAttrs attrs_;
  bool countIncludePad_ = false;
  int64_t storageOrder_ = 0;
};

KernelCreator pool(PoolKind kind, bool global) {
  return [kind, global](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<PoolKernel>(node, kind, global));
  };
}

}  // namespace

void registerPoolingKernels(Provider& p) {
  p.add("MaxPool", pool(PoolKind::kMax, false));
  p.add("AveragePool", pool(PoolKind::kAverage, false));
  p.add("GlobalMaxPool", pool(PoolKind::kMax, true));
  p.add("GlobalAveragePool", pool(PoolKind::kAverage, true));
}

}  // namespace subgraph::runtime::reference
