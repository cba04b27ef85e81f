//===- runtime/reference/normalization.cpp - Normalization ops ------------===//
//
// BatchNormalization (inference, and training mode: batch statistics plus
// updated running statistics) and LayerNormalization (with the optional Mean
// and InvStdDev outputs). Statistics accumulate in double, so the reference
// stays accurate on long reductions.
//
//===----------------------------------------------------------------------===//
#include <cmath>

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

}  // namespace

void registerNormalizationKernels(Provider& p) {
  p.add("BatchNormalization", creatorFor<BatchNormKernel>());
  p.add("LayerNormalization", creatorFor<LayerNormKernel>());
}

}  // namespace subgraph::runtime::reference
