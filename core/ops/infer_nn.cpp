//===- core/ops/infer_nn.cpp - Inference and checks for conv and pooling --===//
//
// Output sizes of sliding-window ops follow the ONNX formulas:
//
//   NOTSET      out = floor((in + pad_begin + pad_end - eff_k) / stride) + 1
//               (ceil with ceil_mode, dropping a last window that would
//               start in the end padding, as PyTorch and ONNX Runtime do)
//   VALID       out = floor((in - eff_k) / stride) + 1
//   SAME_*      out = ceil(in / stride)
//   transposed  out = stride * (in - 1) + output_padding + eff_k - pads
//               (in * stride for SAME_*), or output_shape when given
//
// where eff_k = (k - 1) * dilation + 1. A symbolic spatial dim passes
// through when the formula is the identity (stride 1 and "same" padding),
// and is unknown otherwise. Conv and its transpose also check channels
// against the weights and the group count; the verify functions run the
// same checks so that a verifier catches them without inference.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "infer_helpers.h"
#include "op_functions.h"

namespace subgraph::ops {
namespace {

// The window attributes of a conv or pool, filled with their defaults.
struct Window {
  std::string autoPad;
  std::vector<int64_t> kernel;  // empty when it is not known statically
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // [begin..., end...]
  bool ceilMode = false;
};

// Reads and validates the window attributes for `k` spatial axes. `weights`
// (W's spatial dims, when known) supplies a missing kernel_shape.
StatusOr<Window> readWindow(const Node& node, size_t k, const std::vector<int64_t>& weights) {
  Window w;
  w.autoPad = node.getString("auto_pad", "NOTSET");
  if (w.autoPad != "NOTSET" && w.autoPad != "SAME_UPPER" && w.autoPad != "SAME_LOWER" &&
      w.autoPad != "VALID")
    return nodeError(
        node, "auto_pad '" + w.autoPad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  auto list = [&](const char* name, size_t size, int64_t fill, int64_t min,
                  std::vector<int64_t>& out) -> Status {
    // The default is made only when the attribute is absent: this runs for
    // every Conv and pool of a graph, in inference and in verification.
    if (node.hasAttr(name))
      out = node.getInts(name);
    else
      out.assign(size, fill);
    if (out.size() != size)
      return nodeError(node, std::string(name) + " " + intsToString(out) + " has " +
                                 std::to_string(out.size()) + " entries, expected " +
                                 std::to_string(size) + " for " + std::to_string(k) +
                                 " spatial dims");
    for (int64_t v : out)
      if (v < min)
        return nodeError(node, std::string(name) + " " + intsToString(out) +
                                   " must be >= " + std::to_string(min));
    return Status::ok();
  };
  if (node.hasAttr("kernel_shape")) {
    SUBGRAPH_RETURN_IF_ERROR(list("kernel_shape", k, 1, 1, w.kernel));
    if (!weights.empty() && w.kernel != weights)
      return nodeError(node, "kernel_shape " + intsToString(w.kernel) +
                                 " does not match the weights' spatial dims " +
                                 intsToString(weights));
  } else {
    w.kernel = weights;
    for (int64_t v : weights)
      if (v < 1) return nodeError(node, "W has an empty spatial dim " + intsToString(weights));
  }
  SUBGRAPH_RETURN_IF_ERROR(list("strides", k, 1, 1, w.strides));
  SUBGRAPH_RETURN_IF_ERROR(list("dilations", k, 1, 1, w.dilations));
  SUBGRAPH_RETURN_IF_ERROR(list("pads", 2 * k, 0, 0, w.pads));
  w.ceilMode = node.getInt("ceil_mode", 0) != 0;
  return w;
}

// Output size of one spatial axis of a forward window op.
StatusOr<Dim> windowOutput(const InferenceContext& ctx, const Window& w, size_t axis,
                           const Dim& in) {
  if (w.kernel.empty()) return Dim::unknown();
  const int64_t s = w.strides[axis];
  const size_t k = w.strides.size();
  const int64_t padBegin = w.autoPad == "NOTSET" ? w.pads[axis] : 0;
  const int64_t padEnd = w.autoPad == "NOTSET" ? w.pads[axis + k] : 0;
  const bool same = w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER";
  const CheckedInt effK = (CheckedInt(w.kernel[axis]) - 1) * w.dilations[axis] + 1;
  const CheckedInt pads = CheckedInt(padBegin) + padEnd;
  const CheckedInt padded = CheckedInt(in.isStatic() ? in.size() : 0) + pads;
  const CheckedInt span = padded - effK;
  if (!effK.ok() || !span.ok())
    return ctx.fail("window sizes of spatial dim " + std::to_string(axis) + " overflow");
  if (!in.isStatic()) {
    bool identity = s == 1 && (same || pads.value() == effK.value() - 1);
    return identity ? in : Dim::unknown();
  }
  if (same) return Dim(in.size() == 0 ? 0 : (in.size() - 1) / s + 1);
  if (span.value() < 0)
    return ctx.fail("spatial dim " + std::to_string(axis) + " of size " +
                    std::to_string(in.size()) + " (padded " + std::to_string(padded.value()) +
                    ") is smaller than the effective kernel " + std::to_string(effK.value()));
  // span / s + 1, rounded up with ceil_mode; cannot overflow since s >= 1.
  int64_t out = span.value() / s + (w.ceilMode && span.value() % s != 0 ? 1 : 0) + 1;
  // With ceil_mode the last window must start inside the input or the
  // begin padding; ONNX Runtime and PyTorch drop it otherwise.
  const CheckedInt lastStart = CheckedInt(out - 1) * s - padBegin;
  if (w.ceilMode && lastStart.ok() && lastStart.value() >= in.size()) --out;
  return Dim(out);
}

// Spatial dims of a static shape from `first` on, or empty if any is not
// static.
std::vector<int64_t> staticTail(const Shape* shape, size_t first) {
  std::vector<int64_t> out;
  if (!shape) return out;
  for (size_t i = first; i < shape->size(); ++i) {
    if (!(*shape)[i].isStatic()) return {};
    out.push_back((*shape)[i].size());
  }
  return out;
}

// Channel and rank checks shared by Conv/ConvTranspose inference and
// verification. `transposed` swaps W's in/out channel axes.
Status checkConvOperands(const Node& node, const Shape* x, const Shape* w, const Shape* b,
                         bool transposed) {
  const int64_t group = node.getInt("group", 1);
  if (group < 1) return nodeError(node, "group " + std::to_string(group) + " must be >= 1");
  if (x && x->size() < 3)
    return nodeError(node, "X must have rank >= 3 ([N, C, spatial...]), got " + shapeToString(*x));
  if (w && w->size() < 3) return nodeError(node, "W must have rank >= 3, got " + shapeToString(*w));
  if (x && w && x->size() != w->size())
    return nodeError(node, "X " + shapeToString(*x) + " and W " + shapeToString(*w) +
                               " must have the same rank");
  if (!x || !w) return Status::ok();
  const Dim& c = (*x)[1];
  if (!transposed) {
    const Dim& wc = (*w)[1];
    const CheckedInt expected = CheckedInt(wc.isStatic() ? wc.size() : 0) * group;
    if (c.isStatic() && wc.isStatic() && (!expected.ok() || c.size() != expected.value()))
      return nodeError(node, "X has " + std::to_string(c.size()) + " channels but W " +
                                 shapeToString(*w) + " with group " + std::to_string(group) +
                                 " expects " +
                                 (expected.ok() ? std::to_string(expected.value()) : "more"));
    if (c.isStatic() && c.size() % group != 0)
      return nodeError(node, "group " + std::to_string(group) + " does not divide the " +
                                 std::to_string(c.size()) + " input channels");
    const Dim& m = (*w)[0];
    if (m.isStatic() && m.size() % group != 0)
      return nodeError(node, "group " + std::to_string(group) + " does not divide the " +
                                 std::to_string(m.size()) + " output channels");
    if (b && b->size() == 1 && (*b)[0].isStatic() && m.isStatic() && (*b)[0] != m)
      return nodeError(node, "bias B " + shapeToString(*b) + " does not match the " +
                                 std::to_string(m.size()) + " output channels");
  } else {
    const Dim& wc = (*w)[0];
    if (c.isStatic() && wc.isStatic() && c.size() != wc.size())
      return nodeError(node, "X has " + std::to_string(c.size()) + " channels but W " +
                                 shapeToString(*w) + " expects " + std::to_string(wc.size()));
    if (c.isStatic() && c.size() % group != 0)
      return nodeError(node, "group " + std::to_string(group) + " does not divide the " +
                                 std::to_string(c.size()) + " input channels");
    const Dim& mPerGroup = (*w)[1];
    const CheckedInt outChannels = CheckedInt(mPerGroup.isStatic() ? mPerGroup.size() : 0) * group;
    if (b && b->size() == 1 && (*b)[0].isStatic() && mPerGroup.isStatic() && outChannels.ok() &&
        (*b)[0].size() != outChannels.value())
      return nodeError(node, "bias B " + shapeToString(*b) + " does not match the " +
                                 std::to_string(outChannels.value()) + " output channels");
  }
  if (b && b->size() != 1) return nodeError(node, "bias B must be 1-D, got " + shapeToString(*b));
  return Status::ok();
}

const Shape* shapeOf(const Value* v) { return v && v->type().shape ? &*v->type().shape : nullptr; }

// Spatial rank from X, else from W; nullopt when neither rank is known.
std::optional<size_t> spatialRank(const Shape* x, const Shape* w) {
  if (x && x->size() >= 2) return x->size() - 2;
  if (w && w->size() >= 2) return w->size() - 2;
  return std::nullopt;
}

DataType firstDtype(const InferenceContext& ctx, size_t a, size_t b) {
  DataType t = ctx.inputType(a).dtype;
  return t != DataType::kUndefined ? t : ctx.inputType(b).dtype;
}

}  // namespace

Status inferConv(InferenceContext& ctx) {
  return inferConvLike(ctx, 0, 1, 2, firstDtype(ctx, 0, 1));
}

Status inferConvLike(InferenceContext& ctx, size_t xInput, size_t wInput,
                     std::optional<size_t> bInput, DataType dtype) {
  const Node& node = ctx.node();
  const Shape* x = inputShape(ctx, xInput);
  const Shape* w = inputShape(ctx, wInput);
  const Shape* b = bInput ? inputShape(ctx, *bInput) : nullptr;
  SUBGRAPH_RETURN_IF_ERROR(checkConvOperands(node, x, w, b, false));
  TensorType out(dtype);
  std::optional<size_t> k = spatialRank(x, w);
  if (!k) {
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  StatusOr<Window> window = readWindow(node, *k, staticTail(w, 2));
  if (!window.isOk()) return window.status();
  Shape shape = {x ? (*x)[0] : Dim(), w ? (*w)[0] : Dim()};
  for (size_t i = 0; i < *k; ++i) {
    StatusOr<Dim> d = x ? windowOutput(ctx, window.value(), i, (*x)[i + 2]) : Dim::unknown();
    if (!d.isOk()) return d.status();
    shape.push_back(d.value());
  }
  out.shape = std::move(shape);
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyConv(const Node& node) {
  const Shape* x = shapeOf(node.input(0));
  const Shape* w = shapeOf(node.input(1));
  SUBGRAPH_RETURN_IF_ERROR(checkConvOperands(node, x, w, shapeOf(node.input(2)), false));
  if (std::optional<size_t> k = spatialRank(x, w)) {
    StatusOr<Window> window = readWindow(node, *k, staticTail(w, 2));
    if (!window.isOk()) return window.status();
  }
  return Status::ok();
}

Status inferConvTranspose(InferenceContext& ctx) {
  const Node& node = ctx.node();
  const Shape* x = inputShape(ctx, 0);
  const Shape* w = inputShape(ctx, 1);
  SUBGRAPH_RETURN_IF_ERROR(checkConvOperands(node, x, w, inputShape(ctx, 2), true));
  TensorType out(firstDtype(ctx, 0, 1));
  std::optional<size_t> k = spatialRank(x, w);
  if (!k) {
    ctx.setOutputType(0, std::move(out));
    return Status::ok();
  }
  StatusOr<Window> windowOr = readWindow(node, *k, staticTail(w, 2));
  if (!windowOr.isOk()) return windowOr.status();
  const Window& window = windowOr.value();
  std::vector<int64_t> outputPadding = node.getInts("output_padding", std::vector<int64_t>(*k, 0));
  if (outputPadding.size() != *k)
    return ctx.fail("output_padding " + intsToString(outputPadding) + " has " +
                    std::to_string(outputPadding.size()) + " entries, expected " +
                    std::to_string(*k));
  std::vector<int64_t> outputShape = node.getInts("output_shape");
  if (!outputShape.empty() && outputShape.size() != *k && outputShape.size() != *k + 2)
    return ctx.fail("output_shape " + intsToString(outputShape) + " has " +
                    std::to_string(outputShape.size()) + " entries, expected " +
                    std::to_string(*k));

  const int64_t group = node.getInt("group", 1);
  Dim channels;
  if (w && (*w)[1].isStatic() && (CheckedInt((*w)[1].size()) * group).ok())
    channels = Dim((*w)[1].size() * group);
  else if (w && group == 1)
    channels = (*w)[1];
  Shape shape = {x ? (*x)[0] : Dim(), channels};
  for (size_t i = 0; i < *k; ++i) {
    if (!outputShape.empty()) {
      const int64_t size = outputShape[outputShape.size() - *k + i];
      if (size < 0) return ctx.fail("output_shape " + intsToString(outputShape) + " is negative");
      shape.push_back(Dim(size));
      continue;
    }
    const Dim in = x ? (*x)[i + 2] : Dim();
    if (!in.isStatic() || window.kernel.empty()) {
      shape.push_back(Dim::unknown());
      continue;
    }
    const int64_t s = window.strides[i];
    const bool same = window.autoPad == "SAME_UPPER" || window.autoPad == "SAME_LOWER";
    const CheckedInt effK = (CheckedInt(window.kernel[i]) - 1) * window.dilations[i] + 1;
    const CheckedInt pads = window.autoPad != "NOTSET"
                                ? CheckedInt(0)
                                : CheckedInt(window.pads[i]) + window.pads[i + *k];
    const CheckedInt size = same ? CheckedInt(in.size()) * s
                                 : CheckedInt(s) * (in.size() - 1) + outputPadding[i] + effK - pads;
    if (!size.ok()) return ctx.fail("spatial dim " + std::to_string(i) + " overflows");
    if (size.value() <= 0)
      return ctx.fail("spatial dim " + std::to_string(i) + " would have size " +
                      std::to_string(size.value()));
    shape.push_back(Dim(size.value()));
  }
  out.shape = std::move(shape);
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyConvTranspose(const Node& node) {
  const Shape* x = shapeOf(node.input(0));
  const Shape* w = shapeOf(node.input(1));
  SUBGRAPH_RETURN_IF_ERROR(checkConvOperands(node, x, w, shapeOf(node.input(2)), true));
  if (std::optional<size_t> k = spatialRank(x, w)) {
    StatusOr<Window> window = readWindow(node, *k, staticTail(w, 2));
    if (!window.isOk()) return window.status();
  }
  return Status::ok();
}

Status inferPool(InferenceContext& ctx) {
  const Node& node = ctx.node();
  const Shape* x = inputShape(ctx, 0);
  TensorType out(ctx.inputType(0).dtype);
  if (!node.hasAttr("kernel_shape"))
    return ctx.fail("required attribute 'kernel_shape' is missing");
  if (x) {
    if (x->size() < 3)
      return ctx.fail("X must have rank >= 3 ([N, C, spatial...]), got " + shapeToString(*x));
    const size_t k = x->size() - 2;
    StatusOr<Window> window = readWindow(node, k, {});
    if (!window.isOk()) return window.status();
    Shape shape = {(*x)[0], (*x)[1]};
    for (size_t i = 0; i < k; ++i) {
      StatusOr<Dim> d = windowOutput(ctx, window.value(), i, (*x)[i + 2]);
      if (!d.isOk()) return d.status();
      shape.push_back(d.value());
    }
    out.shape = std::move(shape);
  }
  if (ctx.numOutputs() > 1) {
    TensorType indices = out;
    indices.dtype = DataType::kInt64;
    ctx.setOutputType(1, std::move(indices));
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

Status verifyPool(const Node& node) {
  const int64_t ceilMode = node.getInt("ceil_mode", 0);
  if (ceilMode != 0 && ceilMode != 1)
    return nodeError(node, "ceil_mode " + std::to_string(ceilMode) + " must be 0 or 1");
  const Shape* x = shapeOf(node.input(0));
  std::vector<int64_t> kernel = node.getInts("kernel_shape");
  if (x && x->size() < 3)
    return nodeError(node, "X must have rank >= 3 ([N, C, spatial...]), got " + shapeToString(*x));
  size_t k = x ? x->size() - 2 : kernel.size();
  StatusOr<Window> window = readWindow(node, k, {});
  return window.isOk() ? Status::ok() : window.status();
}

Status inferGlobalPool(InferenceContext& ctx) {
  TensorType out(ctx.inputType(0).dtype);
  if (const Shape* x = inputShape(ctx, 0)) {
    if (x->size() < 3)
      return ctx.fail("X must have rank >= 3 ([N, C, spatial...]), got " + shapeToString(*x));
    Shape shape = {(*x)[0], (*x)[1]};
    shape.resize(x->size(), Dim(1));
    out.shape = std::move(shape);
  }
  ctx.setOutputType(0, std::move(out));
  return Status::ok();
}

}  // namespace subgraph::ops
