//===- runtime/reference/attention.cpp - Attention (opset 23) -------------===//
//
// The reference kernel of ONNX's Attention, which the attention idiom pass
// writes for what exporters spell out: per batch and query head,
// scores = Q x K^T * scale, then the softcap, the causal mask and the
// attention mask (a bool mask gives -inf where false, a float one is
// added; a mask shorter than the key sequence is padded with -inf), then a
// Softmax whose fully masked rows are zeros, then x V. Grouped-query
// attention shares each key/value head among q_num_heads / kv_num_heads
// query heads. past_key and past_value are concatenated before K and V.
//
// Each (batch, head) pair copies its Q, K and V rows into contiguous
// buffers of the compute type (f32 for f16 and bf16), multiplies with the
// blocked GEMM and runs the Softmax on the rows; pairs run in parallel.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "reference/gemm.h"
#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

// Where element (b, h, s, d) of a Q, K or V operand lives: 3-D operands are
// [batch, seq, heads * size], 4-D ones [batch, heads, seq, size].
struct Layout {
  int64_t batch = 0, head = 0, seq = 0;
  int64_t offset(int64_t b, int64_t h, int64_t s) const { return b * batch + h * head + s * seq; }
};

Layout layoutOf(bool threeD, int64_t heads, int64_t seq, int64_t size) {
  if (threeD) return {seq * heads * size, size, heads * size};
  return {heads * seq * size, seq * size, size};
}

// The sizes one run works on, from the input dims.
struct Geometry {
  bool threeD = false;
  int64_t batch = 0, qHeads = 0, kvHeads = 0, qSeq = 0, kvSeq = 0, past = 0;
  int64_t headSize = 0, vHeadSize = 0;
  int64_t total() const { return past + kvSeq; }
};

// Mask strides broadcast to [batch, qHeads, qSeq, maskLen] (0 where the
// mask repeats); maskLen is the mask's last dim, padded up to total().
struct MaskView {
  bool present = false;
  bool isBool = false;
  int64_t strides[4] = {0, 0, 0, 0};
  int64_t length = 0;
};

// The mask's strides broadcast to [batch, qHeads, qSeq, its last dim], or
// nullopt with `why` set when it does not broadcast there.
std::optional<MaskView> maskView(const std::vector<int64_t>& dims, DataType dtype,
                                 const Geometry& g, std::string& why) {
  MaskView m;
  m.present = true;
  m.isBool = dtype == DataType::kBool;
  const int64_t target[4] = {g.batch, g.qHeads, g.qSeq, g.total()};
  if (dims.size() > 4 || dims.empty()) {
    why = "attn_mask must have rank 1 to 4, got " + dimsToString(dims);
    return std::nullopt;
  }
  const size_t lead = 4 - dims.size();
  int64_t stride = 1;
  for (size_t i = 4; i-- > lead;) {
    const int64_t d = dims[i - lead];
    const bool fits = i == 3 ? d <= target[3] : (d == 1 || d == target[i]);
    if (!fits) {
      why = "attn_mask " + dimsToString(dims) + " does not broadcast to " +
            dimsToString(std::vector<int64_t>(target, target + 4));
      return std::nullopt;
    }
    m.strides[i] = (d == 1 && i != 3) ? 0 : stride;
    stride *= d;
  }
  m.length = dims.back();
  return m;
}

// Writes present_key (out = 1) or present_value (out = 2), [batch,
// kvHeads, total, size]: the past rows, then the new ones.
template <typename T>
void writePresent(const RunContext& ctx, const Geometry& g, const T* past, const T* cur, size_t out,
                  int64_t size, const Layout& l) {
  if (ctx.numOutputs() <= out || !ctx.output(out).valid()) return;
  T* dst = ctx.output(out).mutableData<T>();
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t h = 0; h < g.kvHeads; ++h)
      for (int64_t j = 0; j < g.total(); ++j) {
        const T* src = j < g.past ? past + ((b * g.kvHeads + h) * g.past + j) * size
                                  : cur + l.offset(b, h, j - g.past);
        std::copy(src, src + size, dst + ((b * g.kvHeads + h) * g.total() + j) * size);
      }
}

class AttentionKernel final : public Kernel {
 public:
  explicit AttentionKernel(const Node& node)
      : qHeads_(node.getInt("q_num_heads", 0)),
        kvHeads_(node.getInt("kv_num_heads", 0)),
        causal_(node.getInt("is_causal", 0) != 0),
        mode_(node.getInt("qk_matmul_output_mode", 0)),
        softcap_(node.getFloat("softcap", 0.0f)) {
    if (const Attribute* s = node.attr("scale")) scale_ = s->asFloat();
  }

  Status resize(ResizeContext& ctx) const override {
    StatusOr<Geometry> g = geometry(ctx);
    if (!g.isOk()) return g.status();
    const DataType t = ctx.inputDesc(0).dtype;
    const Geometry& geo = *g;
    std::vector<int64_t> y =
        geo.threeD ? std::vector<int64_t>{geo.batch, geo.qSeq, geo.qHeads * geo.vHeadSize}
                   : std::vector<int64_t>{geo.batch, geo.qHeads, geo.qSeq, geo.vHeadSize};
    ctx.setOutput(0, TensorDesc{t, y, nullptr});
    if (ctx.numOutputs() > 1)
      ctx.setOutput(1, TensorDesc{t, {geo.batch, geo.kvHeads, geo.total(), geo.headSize}, nullptr});
    if (ctx.numOutputs() > 2)
      ctx.setOutput(2,
                    TensorDesc{t, {geo.batch, geo.kvHeads, geo.total(), geo.vHeadSize}, nullptr});
    if (ctx.numOutputs() > 3)
      ctx.setOutput(3, TensorDesc{t, {geo.batch, geo.qHeads, geo.qSeq, geo.total()}, nullptr});
    if (!ctx.hasInput(3)) return Status::ok();
    const TensorDesc& m = ctx.inputDesc(3);
    if (m.dtype != DataType::kBool && m.dtype != t)
      return ctx.fail("attn_mask must be bool or Q's element type");
    std::string why;
    if (!maskView(m.dims, m.dtype, geo, why)) return ctx.fail(why);
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const Geometry g = geometryOf(ctx);
    bool ok = visitType<kFloatTypes>(ctx.input(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      runTyped<T>(ctx, g);
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), ctx.input(0).dtype());
  }

 private:
  // Checks the inputs against each other; the sizes of the run.
  StatusOr<Geometry> geometry(const ResizeContext& ctx) const {
    const TensorDesc& q = ctx.inputDesc(0);
    const TensorDesc& k = ctx.inputDesc(1);
    const TensorDesc& v = ctx.inputDesc(2);
    if (!typeInSet(q.dtype, kFloatTypes)) return unsupportedType(ctx.node(), q.dtype);
    if (k.dtype != q.dtype || v.dtype != q.dtype)
      return ctx.fail("Q, K and V must have one element type");
    const size_t rank = q.dims.size();
    if ((rank != 3 && rank != 4) || k.dims.size() != rank || v.dims.size() != rank)
      return ctx.fail("Q, K and V must all be 3-D or all 4-D, got " + dimsToString(q.dims) + ", " +
                      dimsToString(k.dims) + " and " + dimsToString(v.dims));
    Geometry g;
    g.threeD = rank == 3;
    g.batch = q.dims[0];
    if (g.threeD) {
      if (qHeads_ <= 0 || kvHeads_ <= 0) return ctx.fail("3-D inputs need q_num_heads");
      g.qHeads = qHeads_;
      g.kvHeads = kvHeads_;
      g.qSeq = q.dims[1];
      g.kvSeq = k.dims[1];
      if (q.dims[2] % qHeads_ || k.dims[2] % kvHeads_ || v.dims[2] % kvHeads_)
        return ctx.fail("a hidden size is not a multiple of its heads");
      g.headSize = q.dims[2] / qHeads_;
      g.vHeadSize = v.dims[2] / kvHeads_;
      if (k.dims[2] / kvHeads_ != g.headSize) return ctx.fail("Q and K head sizes differ");
    } else {
      g.qHeads = q.dims[1];
      g.kvHeads = k.dims[1];
      g.qSeq = q.dims[2];
      g.kvSeq = k.dims[2];
      g.headSize = q.dims[3];
      g.vHeadSize = v.dims[3];
      if (k.dims[3] != g.headSize) return ctx.fail("Q and K head sizes differ");
      if (v.dims[1] != g.kvHeads) return ctx.fail("K and V have different heads");
    }
    if (k.dims[0] != g.batch || v.dims[0] != g.batch) return ctx.fail("batch sizes differ");
    if (v.dims[g.threeD ? 1 : 2] != g.kvSeq) return ctx.fail("K and V sequences differ");
    if (g.kvHeads <= 0 || g.qHeads % g.kvHeads != 0)
      return ctx.fail("query heads are not a multiple of key/value heads");
    return withPast(ctx, g);
  }

  // past_key [batch, kvHeads, past, headSize] and past_value likewise.
  static StatusOr<Geometry> withPast(const ResizeContext& ctx, Geometry g) {
    if (ctx.hasInput(4) != ctx.hasInput(5))
      return ctx.fail("past_key and past_value must be given together");
    if (!ctx.hasInput(4)) return g;
    const TensorDesc& pk = ctx.inputDesc(4);
    const TensorDesc& pv = ctx.inputDesc(5);
    if (pk.dtype != ctx.inputDesc(0).dtype || pv.dtype != pk.dtype)
      return ctx.fail("past_key and past_value must have Q's element type");
    std::vector<int64_t> wantK{g.batch, g.kvHeads, pk.dims.size() == 4 ? pk.dims[2] : -1,
                               g.headSize};
    std::vector<int64_t> wantV{g.batch, g.kvHeads, wantK[2], g.vHeadSize};
    if (pk.dims != wantK || pv.dims != wantV)
      return ctx.fail("past_key " + dimsToString(pk.dims) + " or past_value " +
                      dimsToString(pv.dims) + " does not fit K and V");
    g.past = wantK[2];
    return g;
  }

  Geometry geometryOf(const RunContext& ctx) const {
    // resize() checked the same dims; rebuild the sizes without the checks.
    const auto& q = ctx.input(0).dims();
    const auto& k = ctx.input(1).dims();
    const auto& v = ctx.input(2).dims();
    Geometry g;
    g.threeD = q.size() == 3;
    g.batch = q[0];
    g.qHeads = g.threeD ? qHeads_ : q[1];
    g.kvHeads = g.threeD ? kvHeads_ : k[1];
    g.qSeq = q[g.threeD ? 1 : 2];
    g.kvSeq = k[g.threeD ? 1 : 2];
    g.headSize = g.threeD ? q[2] / qHeads_ : q[3];
    g.vHeadSize = g.threeD ? v[2] / kvHeads_ : v[3];
    if (ctx.hasInput(4)) g.past = ctx.input(4).dims()[2];
    return g;
  }

  template <typename T>
  void runTyped(RunContext& ctx, const Geometry& g) const;

  int64_t qHeads_, kvHeads_;
  bool causal_;
  int64_t mode_;
  float softcap_;
  std::optional<float> scale_;
};

// One (batch, head) pair's work buffers, in the compute type C.
template <typename C>
struct HeadBuffers {
  std::vector<C> q, k, v, scores, y;
};

// Softmax along each row of `s` ([rows, cols]); a row whose every entry is
// -inf (fully masked) becomes zeros, as ONNX's Attention specifies.
template <typename C>
void softmaxRows(C* s, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    C* row = s + i * cols;
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t j = 0; j < cols; ++j) m = std::max(m, row[j]);
    if (m == -std::numeric_limits<C>::infinity()) {
      std::fill(row, row + cols, C(0));
      continue;
    }
    C sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += row[j] = std::exp(row[j] - m);
    for (int64_t j = 0; j < cols; ++j) row[j] /= sum;
  }
}

// C = alpha * A x op(B) for row-major buffers, through the blocked GEMM.
inline void product(bool transB, int64_t m, int64_t n, int64_t k, double alpha, const float* a,
                    const float* b, float* c) {
  gemm(false, transB, m, n, k, static_cast<float>(alpha), a, k, b, transB ? k : n, 0.0f, c, n);
}
inline void product(bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                    const double* b, double* c) {
  gemm(false, transB, m, n, k, alpha, a, k, b, transB ? k : n, 0.0, c, n);
}

template <typename T>
void AttentionKernel::runTyped(RunContext& ctx, const Geometry& g) const {
  using C = Compute<T>;
  const T* q = ctx.input(0).data<T>();
  const T* k = ctx.input(1).data<T>();
  const T* v = ctx.input(2).data<T>();
  const T* pastK = ctx.hasInput(4) ? ctx.input(4).data<T>() : nullptr;
  const T* pastV = ctx.hasInput(5) ? ctx.input(5).data<T>() : nullptr;
  const int64_t total = g.total();
  const Layout ql = layoutOf(g.threeD, g.qHeads, g.qSeq, g.headSize);
  const Layout kl = layoutOf(g.threeD, g.kvHeads, g.kvSeq, g.headSize);
  const Layout vl = layoutOf(g.threeD, g.kvHeads, g.kvSeq, g.vHeadSize);
  const Layout yl = layoutOf(g.threeD, g.qHeads, g.qSeq, g.vHeadSize);
  const double scale = scale_ ? *scale_ : 1.0 / std::sqrt(static_cast<double>(g.headSize));
  MaskView mask;
  std::string why;
  if (ctx.hasInput(3))
    mask = *maskView(ctx.input(3).dims(), ctx.input(3).dtype(), g, why);  // checked in resize
  // The key/value row j of head hk: from the past below `past`, else K/V.
  auto keyRow = [&](int64_t b, int64_t hk, int64_t j, int64_t size, const T* past, const T* cur,
                    const Layout& l) -> const T* {
    if (j < g.past) return past + ((b * g.kvHeads + hk) * g.past + j) * size;
    return cur + l.offset(b, hk, j - g.past);
  };
  const TensorView* qkOut =
      ctx.numOutputs() > 3 && ctx.output(3).valid() ? &ctx.output(3) : nullptr;
  const int64_t group = g.qHeads / g.kvHeads;
  const int64_t pairCost = g.qSeq * total * (g.headSize + g.vHeadSize);
  parallelFor(g.batch * g.qHeads, pairCost, [&](int64_t begin, int64_t end) {
    HeadBuffers<C> buf;
    buf.q.resize(static_cast<size_t>(g.qSeq * g.headSize));
    buf.k.resize(static_cast<size_t>(total * g.headSize));
    buf.v.resize(static_cast<size_t>(total * g.vHeadSize));
    buf.scores.resize(static_cast<size_t>(g.qSeq * total));
    buf.y.resize(static_cast<size_t>(g.qSeq * g.vHeadSize));
    for (int64_t pair = begin; pair < end; ++pair) {
      const int64_t b = pair / g.qHeads, h = pair % g.qHeads, hk = h / group;
      for (int64_t i = 0; i < g.qSeq; ++i)
        for (int64_t d = 0; d < g.headSize; ++d)
          buf.q[static_cast<size_t>(i * g.headSize + d)] = load(q[ql.offset(b, h, i) + d]);
      for (int64_t j = 0; j < total; ++j) {
        const T* kr = keyRow(b, hk, j, g.headSize, pastK, k, kl);
        const T* vr = keyRow(b, hk, j, g.vHeadSize, pastV, v, vl);
        for (int64_t d = 0; d < g.headSize; ++d)
          buf.k[static_cast<size_t>(j * g.headSize + d)] = load(kr[d]);
        for (int64_t d = 0; d < g.vHeadSize; ++d)
          buf.v[static_cast<size_t>(j * g.vHeadSize + d)] = load(vr[d]);
      }
      C* s = buf.scores.data();
      product(true, g.qSeq, total, g.headSize, scale, buf.q.data(), buf.k.data(), s);
      auto emit = [&](int64_t mode) {
        if (!qkOut || mode_ != mode) return;
        T* out = qkOut->mutableData<T>() + pair * g.qSeq * total;
        for (int64_t e = 0; e < g.qSeq * total; ++e) out[e] = store<T>(s[e]);
      };
      emit(0);
      if (softcap_ > 0.0f)
        for (int64_t e = 0; e < g.qSeq * total; ++e)
          s[e] = static_cast<C>(softcap_ * std::tanh(s[e] / softcap_));
      emit(1);
      for (int64_t i = 0; i < g.qSeq; ++i) {
        C* row = s + i * total;
        if (causal_)
          for (int64_t j = i + g.past + 1; j < total; ++j)
            row[j] = -std::numeric_limits<C>::infinity();
        if (!mask.present) continue;
        const int64_t base = b * mask.strides[0] + h * mask.strides[1] + i * mask.strides[2];
        for (int64_t j = 0; j < total; ++j) {
          if (j >= mask.length) {
            row[j] = -std::numeric_limits<C>::infinity();
          } else if (mask.isBool) {
            if (!ctx.input(3).data<uint8_t>()[base + j * mask.strides[3]])
              row[j] = -std::numeric_limits<C>::infinity();
          } else {
            row[j] += load(ctx.input(3).data<T>()[base + j * mask.strides[3]]);
          }
        }
      }
      emit(2);
      softmaxRows(s, g.qSeq, total);
      emit(3);
      product(false, g.qSeq, g.vHeadSize, total, 1.0, s, buf.v.data(), buf.y.data());
      T* y = ctx.output(0).mutableData<T>();
      for (int64_t i = 0; i < g.qSeq; ++i)
        for (int64_t d = 0; d < g.vHeadSize; ++d)
          y[yl.offset(b, h, i) + d] = store<T>(buf.y[static_cast<size_t>(i * g.vHeadSize + d)]);
    }
  });
  writePresent(ctx, g, pastK, k, 1, g.headSize, kl);
  writePresent(ctx, g, pastV, v, 2, g.vHeadSize, vl);
}

}  // namespace

void registerAttentionKernels(Provider& p) { p.add("Attention", creatorFor<AttentionKernel>()); }

}  // namespace subgraph::runtime::reference
