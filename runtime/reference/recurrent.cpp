//===- runtime/reference/recurrent.cpp - RNN, GRU, LSTM -------------------===//
//
// The ONNX recurrent layers, step by step as the spec writes them (gate
// orders: GRU z, r, h; LSTM i, o, f, c; peepholes P = [Pi, Po, Pf]):
//
//   RNN:  H = f(W x + R H + Wb + Rb)
//   GRU:  z = f(Wz x + Rz H + Wbz + Rbz),  r = f(Wr x + Rr H + Wbr + Rbr)
//         h = g(Wh x + Rh (r . H) + Rbh + Wbh)          linear_before_reset 0
//         h = g(Wh x + r . (Rh H + Rbh) + Wbh)          linear_before_reset 1
//         H = (1 - z) . h + z . H
//   LSTM: i = f(Wi x + Ri H + Pi . C + Wbi + Rbi)  (i = 1 - f with input_forget)
//         f = f(Wf x + Rf H + Pf . C + Wbf + Rbf),  c = g(Wc x + Rc H + Wbc + Rbc)
//         C = f . C + i . c,  o = f(Wo x + Ro H + Po . C + Wbo + Rbo),  H = o . h(C)
//
// with `clip` bounding every activation's input. Directions forward, reverse
// and bidirectional; `layout` 0 ([seq, batch, ...]) or 1 ([batch, seq,
// ...]); per-batch sequence_lens (steps past a sequence's end give zeros in
// Y, and the reverse direction starts at the sequence's last step); the
// activation list with activation_alpha / activation_beta consumed in order
// by the functions that take them, each defaulting as its ONNX op does.
//
// Arithmetic is in double. Each (direction, batch entry) pair is an
// independent recurrence, so the pairs run in parallel.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cctype>
#include <cmath>
#include <type_traits>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

enum class Cell { kRnn, kGru, kLstm };

int gatesOf(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 3 : 4; }
size_t functionsOf(Cell c) { return c == Cell::kRnn ? 1 : c == Cell::kGru ? 2 : 3; }

// One activation function with its parameters.
struct Activation {
  enum Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  } kind = kTanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (kind) {
      case kRelu: return std::max(x, 0.0);
      case kTanh: return std::tanh(x);
      case kSigmoid: return 1 / (1 + std::exp(-x));
      case kAffine: return alpha * x + beta;
      case kLeakyRelu: return x < 0 ? alpha * x : x;
      case kThresholdedRelu: return x > alpha ? x : 0;
      case kScaledTanh: return alpha * std::tanh(beta * x);
      case kHardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
      case kElu: return x < 0 ? alpha * (std::exp(x) - 1) : x;
      case kSoftsign: return x / (1 + std::fabs(x));
      case kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

// Parses the activation list (names are case-insensitive) and hands out
// alphas and betas in order to the functions that take them.
std::vector<Activation> readActivations(const Node& node, Cell cell, size_t directions) {
  std::vector<std::string> names = node.getStrings("activations");
  const size_t per = functionsOf(cell);
  if (names.empty()) {
    static const char* const kDefaults[3][3] = {
        {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const int row = cell == Cell::kRnn ? 0 : cell == Cell::kGru ? 1 : 2;
    for (size_t d = 0; d < directions; ++d)
      for (size_t f = 0; f < per; ++f) names.push_back(kDefaults[row][f]);
  } else if (names.size() == per && directions == 2) {
    std::vector<std::string> twice = names;
    names.insert(names.end(), twice.begin(), twice.end());
  }
  if (names.size() != per * directions)
    throwNodeError(node, "expects " + std::to_string(per * directions) + " activations, got " +
                             std::to_string(names.size()));
  std::vector<float> alphas = node.getFloats("activation_alpha");
  std::vector<float> betas = node.getFloats("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  auto alpha = [&](double fallback) {
    return nextAlpha < alphas.size() ? static_cast<double>(alphas[nextAlpha++]) : fallback;
  };
  auto beta = [&](double fallback) {
    return nextBeta < betas.size() ? static_cast<double>(betas[nextBeta++]) : fallback;
  };
  std::vector<Activation> out;
  for (const std::string& name : names) {
    std::string n;
    for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    Activation a;
    if (n == "relu") {
      a.kind = Activation::kRelu;
    } else if (n == "tanh") {
      a.kind = Activation::kTanh;
    } else if (n == "sigmoid") {
      a.kind = Activation::kSigmoid;
    } else if (n == "affine") {
      a.kind = Activation::kAffine;
      a.alpha = alpha(1.0);
      a.beta = beta(0.0);
    } else if (n == "leakyrelu") {
      a.kind = Activation::kLeakyRelu;
      a.alpha = alpha(0.01);
    } else if (n == "thresholdedrelu") {
      a.kind = Activation::kThresholdedRelu;
      a.alpha = alpha(1.0);
    } else if (n == "scaledtanh") {
      a.kind = Activation::kScaledTanh;
      a.alpha = alpha(1.0);
      a.beta = beta(1.0);
    } else if (n == "hardsigmoid") {
      a.kind = Activation::kHardSigmoid;
      a.alpha = alpha(0.2);
      a.beta = beta(0.5);
    } else if (n == "elu") {
      a.kind = Activation::kElu;
      a.alpha = alpha(1.0);
    } else if (n == "softsign") {
      a.kind = Activation::kSoftsign;
    } else if (n == "softplus") {
      a.kind = Activation::kSoftplus;
    } else {
      throwNodeError(node, "unknown activation '" + name + "'");
    }
    out.push_back(a);
  }
  return out;
}

// Input and output positions under `layout`.
struct Shapes {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool batchFirst = false;
  // Offsets (in elements) into X, Y and the [dirs, batch, hidden] states.
  int64_t x(int64_t t, int64_t b) const {
    return (batchFirst ? b * seq + t : t * batch + b) * input;
  }
  int64_t y(int64_t t, int64_t d, int64_t b) const {
    return (batchFirst ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hidden;
  }
  int64_t state(int64_t d, int64_t b) const {
    return (batchFirst ? b * dirs + d : d * batch + b) * hidden;
  }
};

// The dot product of two f32 rows, in eight interleaved partial sums
// combined in a fixed order: the compiler vectorizes it (a single running
// sum it may not reorder), and every run gives the same bits. The gate
// products of an LSTM step are G*H such rows; accumulated one element at a
// time in double they were 40% of a speech model's run.
float dotF32(const float* a, const float* b, int64_t n) {
  float acc[8] = {};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[k + l] * b[k + l];
  float tail = 0;
  for (; k < n; ++k) tail += a[k] * b[k];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail;
}

class RecurrentKernel final : public Kernel {
 public:
  RecurrentKernel(const Node& node, Cell cell)
      : cell_(cell),
        hiddenSize_(node.getInt("hidden_size", 0)),
        clip_(node.hasAttr("clip") ? node.getFloat("clip") : 0.0f),
        hasClip_(node.hasAttr("clip")),
        batchFirst_(node.getInt("layout", 0) != 0),
        linearBeforeReset_(node.getInt("linear_before_reset", 0) != 0),
        inputForget_(node.getInt("input_forget", 0) != 0) {
    std::string direction = node.getString("direction", "forward");
    if (direction == "forward" || direction.empty()) {
      dirs_ = 1;
    } else if (direction == "reverse") {
      dirs_ = 1;
      reverseOnly_ = true;
    } else if (direction == "bidirectional") {
      dirs_ = 2;
    } else {
      throwNodeError(node, "unknown direction '" + direction + "'");
    }
    if (hasClip_ && !(clip_ > 0))
      throwNodeError(node, "clip must be positive, got " + std::to_string(clip_));
    activations_ = readActivations(node, cell, static_cast<size_t>(dirs_));
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kFloatTypes)) return unsupportedType(ctx.node(), x.dtype);
    for (size_t i : {size_t{1}, size_t{2}, size_t{3}, size_t{5}, size_t{6}, size_t{7}})
      if (ctx.hasInput(i) && ctx.inputDesc(i).dtype != x.dtype)
        return ctx.fail("input " + std::to_string(i) + " differs from X in element type");
    Shapes s;
    SUBGRAPH_RETURN_IF_ERROR(shapes(ctx, s));
    const int64_t g = gatesOf(cell_);
    auto expect = [&](size_t i, std::vector<int64_t> dims, const char* what) -> Status {
      if (!ctx.hasInput(i) || ctx.inputDesc(i).dims == dims) return Status::ok();
      return ctx.fail(std::string(what) + " must be " + dimsToString(dims) + ", got " +
                      ctx.inputDesc(i).toString());
    };
    SUBGRAPH_RETURN_IF_ERROR(expect(1, {s.dirs, g * s.hidden, s.input}, "W"));
    SUBGRAPH_RETURN_IF_ERROR(expect(2, {s.dirs, g * s.hidden, s.hidden}, "R"));
    SUBGRAPH_RETURN_IF_ERROR(expect(3, {s.dirs, 2 * g * s.hidden}, "B"));
    SUBGRAPH_RETURN_IF_ERROR(expect(4, {s.batch}, "sequence_lens"));
    if (ctx.hasInput(4) && ctx.inputDesc(4).dtype != DataType::kInt32)
      return unsupportedType(ctx.node(), ctx.inputDesc(4).dtype);
    std::vector<int64_t> state = s.batchFirst ? std::vector<int64_t>{s.batch, s.dirs, s.hidden}
                                              : std::vector<int64_t>{s.dirs, s.batch, s.hidden};
    SUBGRAPH_RETURN_IF_ERROR(expect(5, state, "initial_h"));
    if (cell_ == Cell::kLstm) {
      SUBGRAPH_RETURN_IF_ERROR(expect(6, state, "initial_c"));
      SUBGRAPH_RETURN_IF_ERROR(expect(7, {s.dirs, 3 * s.hidden}, "P"));
    }
    std::vector<int64_t> y = s.batchFirst ? std::vector<int64_t>{s.batch, s.seq, s.dirs, s.hidden}
                                          : std::vector<int64_t>{s.seq, s.dirs, s.batch, s.hidden};
    for (size_t o = 0; o < ctx.numOutputs(); ++o)
      ctx.setOutput(o, TensorDesc{x.dtype, o == 0 ? y : state, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    Shapes s;
    SUBGRAPH_RETURN_IF_ERROR(shapes(ctx, s));
    std::vector<int64_t> lens(static_cast<size_t>(s.batch), s.seq);
    if (ctx.hasInput(4)) {
      lens = readInts(ctx.input(4));
      for (int64_t b = 0; b < s.batch; ++b)
        if (lens[static_cast<size_t>(b)] < 0 || lens[static_cast<size_t>(b)] > s.seq)
          return ctx.fail("sequence_lens[" + std::to_string(b) +
                          "] = " + std::to_string(lens[static_cast<size_t>(b)]) +
                          " is out of range for " + std::to_string(s.seq) + " steps");
    }
    visitType<kFloatTypes>(ctx.input(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      runTyped<T>(ctx, s, lens);
    });
    return Status::ok();
  }

 private:
  template <typename Ctx>
  Status shapes(const Ctx& ctx, Shapes& s) const {
    auto dimsOf = [&](size_t i) -> const std::vector<int64_t>& {
      if constexpr (std::is_same_v<Ctx, ResizeContext>)
        return ctx.inputDesc(i).dims;
      else
        return ctx.input(i).dims();
    };
    const std::vector<int64_t>& x = dimsOf(0);
    const std::vector<int64_t>& w = dimsOf(1);
    if (x.size() != 3) return ctx.fail("X must have rank 3, got " + dimsToString(x));
    if (w.size() != 3) return ctx.fail("W must have rank 3, got " + dimsToString(w));
    s.batchFirst = batchFirst_;
    s.seq = batchFirst_ ? x[1] : x[0];
    s.batch = batchFirst_ ? x[0] : x[1];
    s.input = x[2];
    s.dirs = dirs_;
    s.hidden = hiddenSize_ > 0 ? hiddenSize_ : w[1] / gatesOf(cell_);
    if (w[0] != dirs_)
      return ctx.fail("W has " + std::to_string(w[0]) + " directions, expected " +
                      std::to_string(dirs_));
    return Status::ok();
  }

  double clip(double v) const {
    return hasClip_ ? std::clamp(v, -double{clip_}, double{clip_}) : v;
  }

  template <typename T>
  void runTyped(RunContext& ctx, const Shapes& s, const std::vector<int64_t>& lens) const {
    const int64_t H = s.hidden, I = s.input, G = gatesOf(cell_);
    auto in = [&](size_t i) { return ctx.hasInput(i) ? ctx.input(i).data<T>() : nullptr; };
    const T *px = in(0), *pw = in(1), *pr = in(2), *pb = in(3), *ph0 = in(5);
    const T *pc0 = cell_ == Cell::kLstm ? in(6) : nullptr,
            *pp = cell_ == Cell::kLstm ? in(7) : nullptr;
    T* py = ctx.numOutputs() > 0 ? ctx.output(0).mutableData<T>() : nullptr;
    T* pyh = ctx.numOutputs() > 1 ? ctx.output(1).mutableData<T>() : nullptr;
    T* pyc = ctx.numOutputs() > 2 ? ctx.output(2).mutableData<T>() : nullptr;
    if (py) std::fill(py, py + ctx.output(0).numElements(), store<T>(Compute<T>(0)));
    const size_t per = functionsOf(cell_);
    parallelFor(s.dirs * s.batch, s.seq * G * H * (I + H), [&](int64_t begin, int64_t end) {
      std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H));
      std::vector<double> gates(static_cast<size_t>(G * H)), rh(static_cast<size_t>(H));
      // f32 copies of h and rh that the f32 dot products read, refreshed
      // where those change: h at each step, rh in a GRU step.
      std::vector<float> hF(static_cast<size_t>(H)), rhF(static_cast<size_t>(H));
      auto toF32 = [](const std::vector<double>& from, std::vector<float>& to) {
        if constexpr (std::is_same_v<T, float>)
          std::transform(from.begin(), from.end(), to.begin(),
                         [](double v) { return static_cast<float>(v); });
      };
      for (int64_t pair = begin; pair < end; ++pair) {
        const int64_t d = pair / s.batch, b = pair % s.batch;
        const bool reverse = reverseOnly_ || d == 1;
        const T* W = pw + d * G * H * I;
        const T* R = pr + d * G * H * H;
        const T* Wb = pb ? pb + d * 2 * G * H : nullptr;
        const T* Rb = pb ? Wb + G * H : nullptr;
        const T* P = pp ? pp + d * 3 * H : nullptr;
        const Activation* act = &activations_[static_cast<size_t>(d) * per];
        for (int64_t j = 0; j < H; ++j) {
          h[static_cast<size_t>(j)] = ph0 ? static_cast<double>(load(ph0[s.state(d, b) + j])) : 0;
          c[static_cast<size_t>(j)] = pc0 ? static_cast<double>(load(pc0[s.state(d, b) + j])) : 0;
        }
        // Gate row `row` of W x + (bias Wb) for input step x, and of R v + Rb.
        // f32 rows take the vectorized dot product of f32 operands (`vF`,
        // v's f32 copy); other types accumulate in double.
        auto wx = [&](int64_t row, const T* x) {
          double acc = Wb ? static_cast<double>(load(Wb[row])) : 0;
          if constexpr (std::is_same_v<T, float>)
            return acc + static_cast<double>(dotF32(W + row * I, x, I));
          for (int64_t k = 0; k < I; ++k)
            acc += static_cast<double>(load(W[row * I + k])) * static_cast<double>(load(x[k]));
          return acc;
        };
        auto rv = [&](int64_t row, const std::vector<double>& v, const std::vector<float>& vF) {
          double acc = Rb ? static_cast<double>(load(Rb[row])) : 0;
          if constexpr (std::is_same_v<T, float>)
            return acc + static_cast<double>(dotF32(R + row * H, vF.data(), H));
          for (int64_t k = 0; k < H; ++k)
            acc += static_cast<double>(load(R[row * H + k])) * v[static_cast<size_t>(k)];
          return acc;
        };
        const int64_t len = lens[static_cast<size_t>(b)];
        for (int64_t step = 0; step < len; ++step) {
          toF32(h, hF);
          const int64_t t = reverse ? len - 1 - step : step;
          const T* x = px + s.x(t, b);
          if (cell_ == Cell::kRnn) {
            for (int64_t j = 0; j < H; ++j)
              gates[static_cast<size_t>(j)] = act[0](clip(wx(j, x) + rv(j, h, hF)));
            std::copy(gates.begin(), gates.begin() + H, h.begin());
          } else if (cell_ == Cell::kGru) {
            double* z = gates.data();
            double* r = z + H;
            for (int64_t j = 0; j < H; ++j) {
              z[j] = act[0](clip(wx(j, x) + rv(j, h, hF)));
              r[j] = act[0](clip(wx(H + j, x) + rv(H + j, h, hF)));
            }
            for (int64_t j = 0; j < H; ++j)
              rh[static_cast<size_t>(j)] = r[j] * h[static_cast<size_t>(j)];
            toF32(rh, rhF);
            double* cand = r + H;
            for (int64_t j = 0; j < H; ++j) {
              double pre;
              if (linearBeforeReset_) {
                pre = wx(2 * H + j, x) + r[j] * rv(2 * H + j, h, hF);
              } else {
                pre = wx(2 * H + j, x) + rv(2 * H + j, rh, rhF);
              }
              cand[j] = act[1](clip(pre));
            }
            for (int64_t j = 0; j < H; ++j)
              h[static_cast<size_t>(j)] = (1 - z[j]) * cand[j] + z[j] * h[static_cast<size_t>(j)];
          } else {
            double* gi = gates.data();
            double* go = gi + H;
            double* gf = go + H;
            double* gc = gf + H;
            for (int64_t j = 0; j < H; ++j) {
              const double cj = c[static_cast<size_t>(j)];
              const double pi = P ? static_cast<double>(load(P[j])) : 0;
              const double pf = P ? static_cast<double>(load(P[2 * H + j])) : 0;
              gf[j] = act[0](clip(wx(2 * H + j, x) + rv(2 * H + j, h, hF) + pf * cj));
              gi[j] = inputForget_ ? 1 - gf[j] : act[0](clip(wx(j, x) + rv(j, h, hF) + pi * cj));
              gc[j] = act[1](clip(wx(3 * H + j, x) + rv(3 * H + j, h, hF)));
              go[j] = wx(H + j, x) + rv(H + j, h, hF);  // Peephole added below, with the new C.
            }
            for (int64_t j = 0; j < H; ++j) {
              double& cj = c[static_cast<size_t>(j)];
              cj = gf[j] * cj + gi[j] * gc[j];
              const double po = P ? static_cast<double>(load(P[H + j])) : 0;
              const double o = act[0](clip(go[j] + po * cj));
              h[static_cast<size_t>(j)] = o * act[2](cj);
            }
          }
          if (py)
            for (int64_t j = 0; j < H; ++j)
              py[s.y(t, d, b) + j] = store<T>(static_cast<Compute<T>>(h[static_cast<size_t>(j)]));
        }
        for (int64_t j = 0; j < H; ++j) {
          if (pyh)
            pyh[s.state(d, b) + j] = store<T>(static_cast<Compute<T>>(h[static_cast<size_t>(j)]));
          if (pyc)
            pyc[s.state(d, b) + j] = store<T>(static_cast<Compute<T>>(c[static_cast<size_t>(j)]));
        }
      }
    });
  }

  Cell cell_;
  int64_t hiddenSize_;
  float clip_;
  bool hasClip_;
  bool batchFirst_;
  bool linearBeforeReset_;
  bool inputForget_;
  bool reverseOnly_ = false;
  int64_t dirs_ = 1;
  std::vector<Activation> activations_;
};

KernelCreator recurrent(Cell cell) {
  return [cell](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<RecurrentKernel>(node, cell));
  };
}

}  // namespace

void registerRecurrentKernels(Provider& p) {
  p.add("RNN", recurrent(Cell::kRnn));
  p.add("GRU", recurrent(Cell::kGru));
  p.add("LSTM", recurrent(Cell::kLstm));
}

}  // namespace subgraph::runtime::reference
