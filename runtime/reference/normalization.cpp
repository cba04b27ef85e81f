//===- runtime/reference/normalization.cpp - Normalization ops ------------===//
//
// BatchNormalization (inference, and training mode: batch statistics plus
// updated running statistics), LayerNormalization (with the optional Mean
// and InvStdDev outputs), InstanceNormalization, MeanVarianceNormalization
// and LRN. Statistics accumulate in double, so the reference
// stays accurate on long reductions.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <functional>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

class BatchNormKernel final : public Kernel {
 public:
  explicit BatchNormKernel(const Node& node)
      : epsilon_(node.getFloat("epsilon", 1e-5f)),
        momentum_(node.getFloat("momentum", 0.9f)),
        training_(node.getInt("training_mode", 0) != 0) {}

  Status resize(ResizeContext& ctx) const override {
    for (size_t i = 0; i < 5; ++i)
      if (!ctx.hasInput(i)) return ctx.fail("input " + std::to_string(i) + " is missing");
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kFloatTypes)) return unsupportedType(ctx.node(), x.dtype);
    if (x.dims.size() < 2) return ctx.fail("X must have rank >= 2, got " + x.toString());
    const int64_t c = x.dims[1];
    for (size_t i = 1; i < 5; ++i) {
      const TensorDesc& p = ctx.inputDesc(i);
      if (p.numElements() != c || p.dims.size() != 1)
        return ctx.fail("input " + std::to_string(i) + " must be [" + std::to_string(c) +
                        "], got " + p.toString());
      if (!typeInSet(p.dtype, kFloatTypes)) return unsupportedType(ctx.node(), p.dtype);
    }
    ctx.setOutput(0, x);
    if (ctx.numOutputs() > 1 && !training_)
      return ctx.fail("running_mean and running_var outputs need training_mode = 1");
    for (size_t o = 1; o < ctx.numOutputs(); ++o) ctx.setOutput(o, ctx.inputDesc(o == 1 ? 3 : 4));
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const int64_t n = x.dim(0), c = x.dim(1), inner = x.numElements() / std::max<int64_t>(n * c, 1);
    std::vector<double> scale = readDoubles(ctx.input(1)), bias = readDoubles(ctx.input(2));
    std::vector<double> mean = readDoubles(ctx.input(3)), var = readDoubles(ctx.input(4));
    bool ok = visitType<kFloatTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      if (training_) {
        // Batch statistics (population variance) per channel.
        std::vector<double> bmean(static_cast<size_t>(c)), bvar(static_cast<size_t>(c));
        parallelFor(c, n * inner, [&](int64_t b, int64_t e) {
          for (int64_t ch = b; ch < e; ++ch) {
            double s = 0, s2 = 0;
            for (int64_t i = 0; i < n; ++i)
              for (int64_t j = 0; j < inner; ++j)
                s += static_cast<double>(load(px[(i * c + ch) * inner + j]));
            double cnt = static_cast<double>(n * inner);
            double m = cnt > 0 ? s / cnt : 0;
            for (int64_t i = 0; i < n; ++i)
              for (int64_t j = 0; j < inner; ++j) {
                double dv = static_cast<double>(load(px[(i * c + ch) * inner + j])) - m;
                s2 += dv * dv;
              }
            bmean[static_cast<size_t>(ch)] = m;
            bvar[static_cast<size_t>(ch)] = cnt > 0 ? s2 / cnt : 0;
          }
        });
        for (size_t o = 1; o < ctx.numOutputs(); ++o) {
          const std::vector<double>& running = o == 1 ? mean : var;
          const std::vector<double>& batch = o == 1 ? bmean : bvar;
          visitType<kFloatTypes>(ctx.output(o).dtype(), [&](auto otag) {
            using U = typename decltype(otag)::type;
            U* out = ctx.output(o).mutableData<U>();
            for (int64_t ch = 0; ch < c; ++ch)
              out[ch] = store<U>(
                  static_cast<Compute<U>>(running[static_cast<size_t>(ch)] * momentum_ +
                                          batch[static_cast<size_t>(ch)] * (1.0 - momentum_)));
          });
        }
        mean = std::move(bmean);
        var = std::move(bvar);
      }
      // y = x * a + b with a = scale / sqrt(var + eps), b = bias - mean * a.
      std::vector<Compute<T>> a(static_cast<size_t>(c)), b(static_cast<size_t>(c));
      for (size_t ch = 0; ch < static_cast<size_t>(c); ++ch) {
        double av = scale[ch] / std::sqrt(var[ch] + static_cast<double>(epsilon_));
        a[ch] = static_cast<Compute<T>>(av);
        b[ch] = static_cast<Compute<T>>(bias[ch] - mean[ch] * av);
      }
      T* py = ctx.output(0).mutableData<T>();
      parallelFor(n * c, inner, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const size_t ch = static_cast<size_t>(row % c);
          const Compute<T> av = a[ch], bv = b[ch];
          const T* xr = px + row * inner;
          T* yr = py + row * inner;
          for (int64_t j = 0; j < inner; ++j) yr[j] = store<T>(load(xr[j]) * av + bv);
        }
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

 private:
  float epsilon_, momentum_;
  bool training_;
};

class LayerNormKernel final : public Kernel {
 public:
  explicit LayerNormKernel(const Node& node)
      : axis_(node.getInt("axis", -1)), epsilon_(node.getFloat("epsilon", 1e-5f)) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kFloatTypes)) return unsupportedType(ctx.node(), x.dtype);
    if (!ctx.hasInput(1)) return ctx.fail("Scale is required");
    int64_t axis = axis_;
    if (!normalizeAxis(axis, static_cast<int64_t>(x.dims.size())))
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range for " + x.toString());
    std::vector<int64_t> normalized(x.dims.begin() + axis, x.dims.end()), out;
    for (size_t i = 1; i < 3; ++i) {
      if (!ctx.hasInput(i)) continue;
      const std::vector<int64_t>* both[] = {&normalized, &ctx.inputDesc(i).dims};
      if (!broadcastDims(both, out) || out != normalized)
        return ctx.fail(std::string(i == 1 ? "Scale " : "B ") + ctx.inputDesc(i).toString() +
                        " does not broadcast to the normalized shape " + dimsToString(normalized));
    }
    ctx.setOutput(0, x);
    std::vector<int64_t> statDims = x.dims;
    for (size_t d = static_cast<size_t>(axis); d < statDims.size(); ++d) statDims[d] = 1;
    for (size_t o = 1; o < ctx.numOutputs(); ++o)
      ctx.setOutput(o, TensorDesc{DataType::kFloat32, statDims, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    int64_t axis = axis_;
    normalizeAxis(axis, static_cast<int64_t>(x.rank()));
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < x.rank(); ++d)
      (static_cast<int64_t>(d) < axis ? outer : inner) *= x.dims()[d];
    std::vector<int64_t> normalized(x.dims().begin() + axis, x.dims().end());
    // Scale and B spread to the full normalized shape once.
    auto spread = [&](size_t i) {
      std::vector<double> full(static_cast<size_t>(inner), i == 1 ? 1.0 : 0.0);
      if (!ctx.hasInput(i)) return full;
      std::vector<double> v = readDoubles(ctx.input(i));
      const std::vector<int64_t>* dims[] = {&ctx.input(i).dims()};
      BroadcastLoop loop(normalized, dims);
      loop.run([&](int64_t oo, const int64_t* off, const int64_t* step, int64_t n) {
        for (int64_t j = 0; j < n; ++j)
          full[static_cast<size_t>(oo + j)] = v[static_cast<size_t>(off[0] + j * step[0])];
      });
      return full;
    };
    std::vector<double> scale = spread(1), bias = spread(2);
    float* meanOut = ctx.numOutputs() > 1 ? ctx.output(1).mutableData<float>() : nullptr;
    float* invOut = ctx.numOutputs() > 2 ? ctx.output(2).mutableData<float>() : nullptr;
    bool ok = visitType<kFloatTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      parallelFor(outer, inner, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* xr = px + r * inner;
          // Two passes: the one-pass E[x^2] - E[x]^2 cancels badly when the
          // mean is large against the spread.
          double s = 0, s2 = 0;
          for (int64_t j = 0; j < inner; ++j) s += static_cast<double>(load(xr[j]));
          double mean = s / static_cast<double>(inner);
          for (int64_t j = 0; j < inner; ++j) {
            double dv = static_cast<double>(load(xr[j])) - mean;
            s2 += dv * dv;
          }
          double var = s2 / static_cast<double>(inner);
          double inv = 1.0 / std::sqrt(var + static_cast<double>(epsilon_));
          if (meanOut) meanOut[r] = static_cast<float>(mean);
          if (invOut) invOut[r] = static_cast<float>(inv);
          T* yr = py + r * inner;
          for (int64_t j = 0; j < inner; ++j)
            yr[j] = store<T>(static_cast<Compute<T>>((static_cast<double>(load(xr[j])) - mean) *
                                                         inv * scale[static_cast<size_t>(j)] +
                                                     bias[static_cast<size_t>(j)]));
        }
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

 private:
  int64_t axis_;
  float epsilon_;
};

// Normalizes X over the dims not in `keep` (every (n, c) plane for
// InstanceNormalization, the `axes` complement for MVN): y = (x - mean) *
// inv + shift per kept index.
template <typename T>
void normalizeGroups(const TensorView& x, const TensorView& y, const std::vector<bool>& reduced,
                     const std::function<void(int64_t keptIndex, double mean, double var,
                                              double& scale, double& shift)>& coeffs) {
  std::vector<int64_t> strides = contiguousStrides(x.dims());
  std::vector<int64_t> keptDims, keptStrides, redDims, redStrides;
  for (size_t d = 0; d < x.rank(); ++d) {
    (reduced[d] ? redDims : keptDims).push_back(x.dims()[d]);
    (reduced[d] ? redStrides : keptStrides).push_back(strides[d]);
  }
  int64_t groups = 1, count = 1;
  for (int64_t d : keptDims) groups *= d;
  for (int64_t d : redDims) count *= d;
  const T* px = x.data<T>();
  T* py = y.mutableData<T>();
  parallelFor(groups, count, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> offsets(static_cast<size_t>(count));
    std::vector<int64_t> idx(redDims.size());
    for (int64_t gi = begin; gi < end; ++gi) {
      int64_t base = 0, rest = gi;
      for (size_t k = keptDims.size(); k-- > 0;) {
        base += (rest % keptDims[k]) * keptStrides[k];
        rest /= keptDims[k];
      }
      std::fill(idx.begin(), idx.end(), 0);
      for (int64_t r = 0; r < count; ++r) {
        int64_t off = base;
        for (size_t k = 0; k < redDims.size(); ++k) off += idx[k] * redStrides[k];
        offsets[static_cast<size_t>(r)] = off;
        for (size_t k = redDims.size(); k-- > 0;) {
          if (++idx[k] < redDims[k]) break;
          idx[k] = 0;
        }
      }
      double s = 0, s2 = 0;
      for (int64_t off : offsets) s += static_cast<double>(load(px[off]));
      const double mean = count ? s / static_cast<double>(count) : 0.0;
      for (int64_t off : offsets) {
        double d = static_cast<double>(load(px[off])) - mean;
        s2 += d * d;
      }
      const double var = count ? s2 / static_cast<double>(count) : 0.0;
      double scale = 1, shift = 0;
      coeffs(gi, mean, var, scale, shift);
      for (int64_t off : offsets)
        py[off] =
            store<T>(static_cast<Compute<T>>(static_cast<double>(load(px[off])) * scale + shift));
    }
  });
}

// InstanceNormalization(input, scale[C], B[C]) over the spatial dims.
class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(const Node& node) : epsilon_(node.getFloat("epsilon", 1e-5f)) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kFloatTypes)) return unsupportedType(ctx.node(), x.dtype);
    if (x.dims.size() < 3) return ctx.fail("input must be [N, C, D1, ...], got " + x.toString());
    for (size_t i = 1; i < 3; ++i)
      if (!ctx.hasInput(i) || ctx.inputDesc(i).numElements() != x.dims[1])
        return ctx.fail(std::string(i == 1 ? "scale" : "B") + " must have " +
                        std::to_string(x.dims[1]) + " elements");
    ctx.setOutput(0, x);
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    std::vector<double> scale = readDoubles(ctx.input(1)), bias = readDoubles(ctx.input(2));
    std::vector<bool> reduced(x.rank(), true);
    reduced[0] = reduced[1] = false;
    const int64_t c = x.dim(1);
    const double eps = epsilon_;
    visitType<kFloatTypes>(x.dtype(), [&](auto tag) {
      normalizeGroups<typename decltype(tag)::type>(
          x, ctx.output(0), reduced, [&](int64_t g, double mean, double var, double& a, double& b) {
            const size_t ch = static_cast<size_t>(g % c);
            a = scale[ch] / std::sqrt(var + eps);
            b = bias[ch] - mean * a;
          });
    });
    return Status::ok();
  }

 private:
  float epsilon_;
};

// MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over `axes`,
// as the ONNX function body defines it.
class MvnKernel final : public Kernel {
 public:
  explicit MvnKernel(const Node& node) : axes_(node.getInts("axes", {0, 2, 3})) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kFloatTypes)) return unsupportedType(ctx.node(), x.dtype);
    for (int64_t a : axes_) {
      int64_t axis = a;
      if (!normalizeAxis(axis, static_cast<int64_t>(x.dims.size())))
        return ctx.fail("axis " + std::to_string(a) + " is out of range for " + x.toString());
    }
    ctx.setOutput(0, x);
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    std::vector<bool> reduced(x.rank(), false);
    for (int64_t a : axes_) {
      int64_t axis = a;
      normalizeAxis(axis, static_cast<int64_t>(x.rank()));
      reduced[static_cast<size_t>(axis)] = true;
    }
    visitType<kFloatTypes>(x.dtype(), [&](auto tag) {
      normalizeGroups<typename decltype(tag)::type>(
          x, ctx.output(0), reduced, [](int64_t, double mean, double var, double& a, double& b) {
            a = 1.0 / (std::sqrt(var) + 1e-9);
            b = -mean * a;
          });
    });
    return Status::ok();
  }

 private:
  std::vector<int64_t> axes_;
};

// LRN across channels: y = x / (bias + alpha / size * sum of squares in the
// window [c - floor((size-1)/2), c + ceil((size-1)/2)]) ^ beta.
class LrnKernel final : public Kernel {
 public:
  explicit LrnKernel(const Node& node)
      : alpha_(node.getFloat("alpha", 1e-4f)),
        beta_(node.getFloat("beta", 0.75f)),
        bias_(node.getFloat("bias", 1.0f)),
        size_(node.getInt("size", 0)),
        workLimit_(kernelWorkLimit()) {
    if (size_ <= 0) throwNodeError(node, "size must be a positive integer");
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kFloatTypes)) return unsupportedType(ctx.node(), x.dtype);
    if (x.dims.size() < 2) return ctx.fail("input must be [N, C, ...], got " + x.toString());
    // Each element sums a window of `size` channels (clamped to the
    // channels there are): size sets the work, not the tensor alone.
    CheckedInt elements = 1;
    for (int64_t d : x.dims) elements = elements * d;
    SUBGRAPH_RETURN_IF_ERROR(checkKernelWork(ctx.node(), elements * std::min(size_, x.dims[1] + 1),
                                             workLimit_, "size " + std::to_string(size_)));
    ctx.setOutput(0, x);
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const int64_t n = x.dim(0), c = x.dim(1), inner = x.numElements() / std::max<int64_t>(n * c, 1);
    // A window past the channels adds nothing: clamping it keeps a
    // model-given size near INT64_MAX from overflowing ch + after.
    const int64_t before = std::min((size_ - 1) / 2, c), after = std::min(size_ - 1 - before, c);
    visitType<kFloatTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      parallelFor(n * c, inner * std::min(size_, c + 1), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t b = r / c, ch = r % c;
          for (int64_t i = 0; i < inner; ++i) {
            double sq = 0;
            for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after);
                 ++k) {
              double v = static_cast<double>(load(px[(b * c + k) * inner + i]));
              sq += v * v;
            }
            double v = static_cast<double>(load(px[r * inner + i]));
            py[r * inner + i] = store<T>(static_cast<Compute<T>>(
                v / std::pow(static_cast<double>(bias_) +
                                 static_cast<double>(alpha_) / static_cast<double>(size_) * sq,
                             static_cast<double>(beta_))));
          }
        }
      });
    });
    return Status::ok();
  }

 private:
  float alpha_, beta_, bias_;
  int64_t size_;
  uint64_t workLimit_;  // WorkLimits::kernelWork of the session; 0: none
};

}  // namespace

void registerNormalizationKernels(Provider& p) {
  p.add("BatchNormalization", creatorFor<BatchNormKernel>());
  p.add("LayerNormalization", creatorFor<LayerNormKernel>());
  p.add("InstanceNormalization", creatorFor<InstanceNormKernel>());
  p.add("MeanVarianceNormalization", creatorFor<MvnKernel>());
  p.add("LRN", creatorFor<LrnKernel>());
}

}  // namespace subgraph::runtime::reference
