//===- core/ops/infer_attention.cpp - Attention inference and checks ------===//
//
// Shape inference and verification of ONNX's Attention (opset 23). Q, K and
// V are all 3-D ([batch, seq, heads * head_size], with q_num_heads and
// kv_num_heads naming the heads) or all 4-D ([batch, heads, seq,
// head_size]); the query heads are a multiple of the key/value heads
// (grouped-query attention). The checks here are what the reference kernel
// and every backend rely on: a hostile model gets one line naming the node.
//
//===----------------------------------------------------------------------===//
#include <optional>
#include <string>

#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

bool conflicts(const Dim& a, const Dim& b) { return a.isStatic() && b.isStatic() && a != b; }

const Shape* shapeOf(const Value* v) { return v && v->type().shape ? &*v->type().shape : nullptr; }

// The static value of `d`, or nullopt.
std::optional<int64_t> staticSize(const Dim& d) {
  return d.isStatic() ? std::optional<int64_t>(d.size()) : std::nullopt;
}

// `hidden` / `heads` when `hidden` is static, else unknown; fails when it
// does not divide.
StatusOr<Dim> headSize(const InferenceContext& ctx, const Dim& hidden, int64_t heads,
                       const char* what) {
  std::optional<int64_t> h = staticSize(hidden);
  if (!h) return Dim::unknown();
  if (*h % heads != 0)
    return ctx.fail(std::string(what) + " hidden size " + std::to_string(*h) +
                    " is not a multiple of its " + std::to_string(heads) + " heads");
  return Dim(*h / heads);
}

// The sum of two dims when both are static; the other when one is 0.
Dim addDims(const Dim& a, const Dim& b) {
  if (a.isStatic() && b.isStatic()) return Dim(a.size() + b.size());
  if (a.isStatic() && a.size() == 0) return b;
  if (b.isStatic() && b.size() == 0) return a;
  return Dim::unknown();
}

// Dims of Q, K and V as 4-D [batch, heads, seq, head_size] views.
struct Views {
  Shape q, k, v;
};

StatusOr<Views> fourDimViews(const InferenceContext& ctx, const Shape& q, const Shape& k,
                             const Shape& v) {
  const Node& node = ctx.node();
  if (q.size() == 4) return Views{q, k, v};
  int64_t qh = node.getInt("q_num_heads", 0), kvh = node.getInt("kv_num_heads", 0);
  StatusOr<Dim> qd = headSize(ctx, q[2], qh, "Q");
  StatusOr<Dim> kd = headSize(ctx, k[2], kvh, "K");
  StatusOr<Dim> vd = headSize(ctx, v[2], kvh, "V");
  if (!qd.isOk()) return qd.status();
  if (!kd.isOk()) return kd.status();
  if (!vd.isOk()) return vd.status();
  return Views{Shape{q[0], Dim(qh), q[1], *qd}, Shape{k[0], Dim(kvh), k[1], *kd},
               Shape{v[0], Dim(kvh), v[1], *vd}};
}

}  // namespace

Status verifyAttention(const Node& node) {
  const Shape* q = shapeOf(node.input(0));
  const Shape* k = shapeOf(node.input(1));
  const Shape* v = shapeOf(node.input(2));
  for (const Shape* s : {q, k, v})
    if (s && s->size() != 3 && s->size() != 4)
      return nodeError(node, "Q, K and V must be 3-D or 4-D, got " + shapeToString(*s));
  if (q && k && v && (q->size() != k->size() || q->size() != v->size()))
    return nodeError(node, "Q, K and V must have the same rank");
  const bool threeD = q && q->size() == 3;
  const bool hasHeads = node.attr("q_num_heads") || node.attr("kv_num_heads");
  int64_t qh = node.getInt("q_num_heads", 0), kvh = node.getInt("kv_num_heads", 0);
  if (threeD && (qh <= 0 || kvh <= 0))
    return nodeError(node, "3-D Q, K and V need positive q_num_heads and kv_num_heads");
  if (hasHeads && qh > 0 && kvh > 0 && qh % kvh != 0)
    return nodeError(node, "q_num_heads " + std::to_string(qh) +
                               " is not a multiple of kv_num_heads " + std::to_string(kvh));
  if (int64_t mode = node.getInt("qk_matmul_output_mode", 0); mode < 0 || mode > 3)
    return nodeError(node, "qk_matmul_output_mode " + std::to_string(mode) + " is not 0 to 3");
  if (int64_t causal = node.getInt("is_causal", 0); causal != 0 && causal != 1)
    return nodeError(node, "is_causal " + std::to_string(causal) + " is not 0 or 1");
  float softcap = node.getFloat("softcap", 0.0f);
  if (!(softcap >= 0.0f)) return nodeError(node, "softcap must be 0 or positive");
  if ((node.input(4) != nullptr) != (node.input(5) != nullptr))
    return nodeError(node, "past_key and past_value must be given together");
  if ((node.numOutputs() > 1 && node.output(1)) != (node.numOutputs() > 2 && node.output(2)))
    return nodeError(node, "present_key and present_value must be asked for together");
  return Status::ok();
}

Status inferAttention(InferenceContext& ctx) {
  const Node& node = ctx.node();
  SUBGRAPH_RETURN_IF_ERROR(verifyAttention(node));
  const TensorType& qt = ctx.inputType(0);
  const TensorType& vt = ctx.inputType(2);
  for (size_t i = 0; i < ctx.numOutputs(); ++i)
    ctx.setOutputType(i, TensorType(i == 2 ? vt.dtype : qt.dtype));
  const Shape* q = inputShape(ctx, 0);
  const Shape* k = inputShape(ctx, 1);
  const Shape* v = inputShape(ctx, 2);
  if (!q || !k || !v) return Status::ok();
  StatusOr<Views> views = fourDimViews(ctx, *q, *k, *v);
  if (!views.isOk()) return views.status();
  const Views& w = *views;
  if (conflicts(w.q[3], w.k[3]))
    return ctx.fail("Q's head size " + w.q[3].toString() + " differs from K's " +
                    w.k[3].toString());
  Dim past(0);
  if (const Shape* pk = inputShape(ctx, 4)) {
    if (pk->size() != 4) return ctx.fail("past_key must be 4-D, got " + shapeToString(*pk));
    past = (*pk)[2];
  }
  const Dim total = addDims(past, w.k[2]);
  Shape y = q->size() == 3 ? Shape{w.q[0], w.q[2], Dim::unknown()}
                           : Shape{w.q[0], w.q[1], w.q[2], w.v[3]};
  if (q->size() == 3 && w.v[3].isStatic())
    y[2] = Dim(node.getInt("q_num_heads", 0) * w.v[3].size());
  ctx.outputType(0).shape = std::move(y);
  if (ctx.numOutputs() > 1) ctx.outputType(1).shape = Shape{w.k[0], w.k[1], total, w.k[3]};
  if (ctx.numOutputs() > 2) ctx.outputType(2).shape = Shape{w.v[0], w.v[1], total, w.v[3]};
  if (ctx.numOutputs() > 3) ctx.outputType(3).shape = Shape{w.q[0], w.q[1], w.q[2], total};
  return Status::ok();
}

}  // namespace subgraph::ops
