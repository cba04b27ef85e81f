//===- runtime/reference/data_movement.cpp - Ops that move elements -------===//
//
// Transpose, Concat, Split, Slice, Gather, Expand, Tile, Pad, DepthToSpace,
// SpaceToDepth and Trilu. None of them
// computes on element values, so each is written once over unsigned integers
// of the element's width and works for every element type. Parameters that
// decide the output shape (Slice starts/ends/axes/steps, Split sizes, Expand
// shape, Tile repeats, Pad pads) are shape inputs, known at resize time.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <limits>
#include <numeric>

#include "reference/kernel_util.h"
#include "reference/kernels.h"
#include "subgraph/support/checked_int.h"

namespace subgraph::runtime::reference {
namespace {

// 128-bit integers for index formulas whose int64 operands come from the
// model and may sit at the ends of the range (pads near INT64_MIN/MAX).
__extension__ typedef __int128
    Int128;  // NOLINT(modernize-use-using): GCC takes __extension__ only here

Status unsupportedElement(const Node* node, DataType dtype) { return unsupportedType(node, dtype); }

// Transpose: each output row (innermost output dim) gathers from the input
// with the stride of the input dim that the permutation puts last.
class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const Node& node) : perm_(node.getInts("perm")) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    std::vector<int64_t> perm;
    SUBGRAPH_RETURN_IF_ERROR(permutation(ctx, x.dims.size(), perm));
    std::vector<int64_t> out;
    for (int64_t p : perm) out.push_back(x.dims[static_cast<size_t>(p)]);
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    std::vector<int64_t> perm;
    SUBGRAPH_RETURN_IF_ERROR(permutation(ctx, x.rank(), perm));
    const std::vector<int64_t>& outDims = ctx.output(0).dims();
    std::vector<int64_t> inStrides = contiguousStrides(x.dims()), strides;
    for (int64_t p : perm) strides.push_back(inStrides[static_cast<size_t>(p)]);
    bool ok = visitBySize(x.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* px = x.data<E>();
      E* py = ctx.output(0).mutableData<E>();
      const size_t rank = outDims.size();
      if (rank == 0) {
        if (ctx.output(0).numElements()) py[0] = px[0];
        return;
      }
      const int64_t inner = outDims.back(), innerStride = strides.back();
      const int64_t rows = ctx.output(0).numElements() / std::max<int64_t>(inner, 1);
      if (inner == 0) return;
      parallelFor(rows, inner, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          int64_t off = 0, rest = r;
          for (size_t d = rank - 1; d-- > 0;) {
            off += (rest % outDims[d]) * strides[d];
            rest /= outDims[d];
          }
          E* o = py + r * inner;
          for (int64_t i = 0; i < inner; ++i) o[i] = px[off + i * innerStride];
        }
      });
    });
    return ok ? Status::ok() : unsupportedElement(ctx.node(), x.dtype());
  }

 private:
  template <typename Ctx>
  Status permutation(const Ctx& ctx, size_t rank, std::vector<int64_t>& perm) const {
    if (perm_.empty()) {
      for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
      return Status::ok();
    }
    if (perm_.size() != rank)
      return ctx.fail("perm " + dimsToString(perm_) + " does not match rank " +
                      std::to_string(rank));
    std::vector<bool> seen(rank, false);
    for (int64_t p : perm_) {
      int64_t axis = p;
      if (!normalizeAxis(axis, static_cast<int64_t>(rank)) || seen[static_cast<size_t>(axis)])
        return ctx.fail("perm " + dimsToString(perm_) + " is not a permutation");
      seen[static_cast<size_t>(axis)] = true;
      perm.push_back(axis);
    }
    return Status::ok();
  }
  std::vector<int64_t> perm_;
};

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(const Node& node) : axis_(node.getInt("axis", 0)) {
    if (!node.attr("axis")) throwNodeError(node, "the axis attribute is required");
  }

  Status resize(ResizeContext& ctx) const override {
    if (ctx.numInputs() == 0 || !ctx.hasInput(0)) return ctx.fail("needs at least one input");
    const TensorDesc& first = ctx.inputDesc(0);
    int64_t axis = axis_;
    if (!normalizeAxis(axis, static_cast<int64_t>(first.dims.size())))
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range for " + first.toString());
    std::vector<int64_t> out = first.dims;
    out[static_cast<size_t>(axis)] = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      if (!ctx.hasInput(i)) return ctx.fail("input " + std::to_string(i) + " is missing");
      const TensorDesc& in = ctx.inputDesc(i);
      if (in.dtype != first.dtype) return ctx.fail("inputs have different element types");
      bool match = in.dims.size() == first.dims.size();
      for (size_t d = 0; match && d < in.dims.size(); ++d)
        match = d == static_cast<size_t>(axis) || in.dims[d] == first.dims[d];
      if (!match)
        return ctx.fail("input " + std::to_string(i) + " " + in.toString() +
                        " does not match input 0 " + first.toString() + " outside axis " +
                        std::to_string(axis));
      out[static_cast<size_t>(axis)] += in.dims[static_cast<size_t>(axis)];
    }
    ctx.setOutput(0, TensorDesc{first.dtype, out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& y = ctx.output(0);
    int64_t axis = axis_;
    normalizeAxis(axis, static_cast<int64_t>(y.rank()));
    const size_t esize = dataTypeSize(y.dtype());
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < y.rank(); ++d) {
      if (static_cast<int64_t>(d) < axis) outer *= y.dims()[d];
      if (static_cast<int64_t>(d) > axis) inner *= y.dims()[d];
    }
    const size_t rowBytes = static_cast<size_t>(y.dim(axis) * inner) * esize;
    auto* py = static_cast<std::byte*>(y.raw());
    size_t offset = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      const TensorView& in = ctx.input(i);
      const size_t chunk = static_cast<size_t>(in.dim(axis) * inner) * esize;
      const auto* src = static_cast<const std::byte*>(in.raw());
      if (chunk > 0)
        parallelFor(outer, static_cast<int64_t>(chunk), [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r)
            std::memcpy(py + static_cast<size_t>(r) * rowBytes + offset,
                        src + static_cast<size_t>(r) * chunk, chunk);
        });
      offset += chunk;
    }
    return Status::ok();
  }

 private:
  int64_t axis_;
};

class SplitKernel final : public Kernel {
 public:
  explicit SplitKernel(const Node& node)
      : axis_(node.getInt("axis", 0)),
        splitAttr_(node.getInts("split")),
        numOutputs_(node.getInt("num_outputs", 0)) {}
  std::vector<size_t> shapeInputs() const override { return {1}; }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    std::vector<int64_t> sizes;
    SUBGRAPH_RETURN_IF_ERROR(
        splitSizes(ctx, x.dims, ctx.hasInput(1) ? ctx.inputContent(1) : nullptr, sizes));
    int64_t axis = axis_;
    normalizeAxis(axis, static_cast<int64_t>(x.dims.size()));
    for (size_t o = 0; o < ctx.numOutputs(); ++o) {
      std::vector<int64_t> dims = x.dims;
      dims[static_cast<size_t>(axis)] = sizes[o];
      ctx.setOutput(o, TensorDesc{x.dtype, dims, nullptr});
    }
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    int64_t axis = axis_;
    normalizeAxis(axis, static_cast<int64_t>(x.rank()));
    const size_t esize = dataTypeSize(x.dtype());
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < x.rank(); ++d) {
      if (static_cast<int64_t>(d) < axis) outer *= x.dims()[d];
      if (static_cast<int64_t>(d) > axis) inner *= x.dims()[d];
    }
    const size_t rowBytes = static_cast<size_t>(x.dim(axis) * inner) * esize;
    const auto* px = static_cast<const std::byte*>(x.raw());
    size_t offset = 0;
    for (size_t o = 0; o < ctx.numOutputs(); ++o) {
      const TensorView& y = ctx.output(o);
      const size_t chunk = static_cast<size_t>(y.dim(axis) * inner) * esize;
      auto* dst = static_cast<std::byte*>(y.raw());
      if (chunk > 0)
        for (int64_t r = 0; r < outer; ++r)
          std::memcpy(dst + static_cast<size_t>(r) * chunk,
                      px + static_cast<size_t>(r) * rowBytes + offset, chunk);
      offset += chunk;
    }
    return Status::ok();
  }

 private:
  Status splitSizes(const ResizeContext& ctx, const std::vector<int64_t>& dims,
                    const TensorView* splitInput, std::vector<int64_t>& sizes) const {
    int64_t axis = axis_;
    if (!normalizeAxis(axis, static_cast<int64_t>(dims.size())))
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range for " +
                      dimsToString(dims));
    const int64_t total = dims[static_cast<size_t>(axis)];
    const int64_t parts = static_cast<int64_t>(ctx.numOutputs());
    sizes = splitInput ? readInts(*splitInput) : splitAttr_;
    if (!sizes.empty()) {
      if (static_cast<int64_t>(sizes.size()) != parts)
        return ctx.fail("split " + dimsToString(sizes) + " has " + std::to_string(sizes.size()) +
                        " entries for " + std::to_string(parts) + " outputs");
      CheckedInt sum = 0;  // sizes from the model may sum past int64
      for (int64_t s : sizes) {
        if (s < 0) return ctx.fail("split " + dimsToString(sizes) + " has a negative size");
        sum = sum + s;
      }
      if (!sum.ok() || sum.value() != total)
        return ctx.fail("split " + dimsToString(sizes) + " does not sum to the axis size " +
                        std::to_string(total));
      return Status::ok();
    }
    // Equal parts; with num_outputs (opset 18) the last part may be smaller.
    int64_t n = numOutputs_ > 0 ? numOutputs_ : parts;
    if (n != parts)
      return ctx.fail("num_outputs " + std::to_string(n) + " differs from the node's outputs");
    int64_t each = numOutputs_ > 0 ? (total + n - 1) / n : total / n;
    if (numOutputs_ == 0 && total % n != 0)
      return ctx.fail("axis size " + std::to_string(total) + " does not split into " +
                      std::to_string(n) + " equal parts");
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::clamp<int64_t>(total - i * each, 0, each));
    return Status::ok();
  }

  int64_t axis_;
  std::vector<int64_t> splitAttr_;
  int64_t numOutputs_;
};

// Elements from `start` towards `end` (exclusive) in steps of `step`, both
// bounds already clamped to the axis. Written without `end - start + step`,
// which wraps for a step near INT64_MAX (a step from the model).
int64_t sliceLength(int64_t start, int64_t end, int64_t step) {
  const int64_t span = step > 0 ? end - start : start - end;  // |span| <= dim + 1
  if (span <= 0) return 0;
  const uint64_t magnitude =
      step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  return static_cast<int64_t>((static_cast<uint64_t>(span) - 1) / magnitude + 1);
}

// Parameters of one slice, per input dim.
struct SliceSpec {
  std::vector<int64_t> start, step, size;
};

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const Node& node)
      : startsAttr_(node.getInts("starts")),
        endsAttr_(node.getInts("ends")),
        axesAttr_(node.getInts("axes")) {}
  std::vector<size_t> shapeInputs() const override { return {1, 2, 3, 4}; }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    SliceSpec spec;
    SUBGRAPH_RETURN_IF_ERROR(resolve(ctx, x.dims, spec));
    ctx.setOutput(0, TensorDesc{x.dtype, spec.size, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override { return sliceRun(ctx); }

 private:
  std::vector<int64_t> param(const ResizeContext& ctx, size_t i,
                             const std::vector<int64_t>& attr) const {
    return ctx.hasInput(i) ? readInts(*ctx.inputContent(i)) : attr;
  }
  std::vector<int64_t> param(const RunContext& ctx, size_t i,
                             const std::vector<int64_t>& attr) const {
    return ctx.hasInput(i) ? readInts(ctx.input(i)) : attr;
  }

  template <typename Ctx>
  Status resolve(const Ctx& ctx, const std::vector<int64_t>& dims, SliceSpec& spec) const {
    const int64_t rank = static_cast<int64_t>(dims.size());
    std::vector<int64_t> starts = param(ctx, 1, startsAttr_), ends = param(ctx, 2, endsAttr_);
    std::vector<int64_t> axes = param(ctx, 3, axesAttr_), steps = param(ctx, 4, {});
    if (starts.size() != ends.size())
      return ctx.fail("starts " + dimsToString(starts) + " and ends " + dimsToString(ends) +
                      " differ in length");
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size())
      return ctx.fail("starts, ends, axes and steps must have the same length");
    spec.start.assign(dims.size(), 0);
    spec.step.assign(dims.size(), 1);
    spec.size = dims;
    std::vector<bool> seen(dims.size(), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t axis = axes[i];
      if (!normalizeAxis(axis, rank))
        return ctx.fail("axis " + std::to_string(axes[i]) + " is out of range");
      if (seen[static_cast<size_t>(axis)])
        return ctx.fail("axis " + std::to_string(axes[i]) + " is repeated");
      seen[static_cast<size_t>(axis)] = true;
      const int64_t dim = dims[static_cast<size_t>(axis)], step = steps[i];
      if (step == 0) return ctx.fail("steps must not be 0");
      // Clamp as the ONNX spec says; very large magnitudes mean "to the end".
      auto adjust = [dim](int64_t v) { return v < 0 ? (v < -dim ? -1 - dim : v) + dim : v; };
      int64_t start = adjust(starts[i]), end = adjust(ends[i]);
      if (step > 0) {
        start = std::clamp<int64_t>(start, 0, dim);
        end = std::clamp<int64_t>(end, 0, dim);
      } else {
        start = std::clamp<int64_t>(start, 0, dim - 1);
        end = std::clamp<int64_t>(end, -1, dim - 1);
      }
      spec.start[static_cast<size_t>(axis)] = start;
      spec.step[static_cast<size_t>(axis)] = step;
      spec.size[static_cast<size_t>(axis)] = sliceLength(start, end, step);
    }
    return Status::ok();
  }

  Status sliceRun(RunContext& ctx) const {
    const TensorView& x = ctx.input(0);
    SliceSpec spec;
    SUBGRAPH_RETURN_IF_ERROR(resolve(ctx, x.dims(), spec));
    std::vector<int64_t> strides = contiguousStrides(x.dims());
    const size_t rank = x.rank();
    int64_t base = 0;
    for (size_t d = 0; d < rank; ++d) base += spec.start[d] * strides[d];
    bool ok = visitBySize(x.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* px = x.data<E>();
      E* py = ctx.output(0).mutableData<E>();
      const int64_t total = ctx.output(0).numElements();
      if (total == 0) return;
      if (rank == 0) {
        py[0] = px[0];
        return;
      }
      const int64_t inner = spec.size.back(), innerStep = spec.step.back() * strides.back();
      parallelFor(total / inner, inner, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          int64_t off = base, rest = r;
          for (size_t d = rank - 1; d-- > 0;) {
            off += (rest % spec.size[d]) * spec.step[d] * strides[d];
            rest /= spec.size[d];
          }
          E* o = py + r * inner;
          for (int64_t i = 0; i < inner; ++i) o[i] = px[off + i * innerStep];
        }
      });
    });
    return ok ? Status::ok() : unsupportedElement(ctx.node(), x.dtype());
  }

  std::vector<int64_t> startsAttr_, endsAttr_, axesAttr_;
};

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const Node& node) : axis_(node.getInt("axis", 0)) {}

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& idx = ctx.inputDesc(1);
    if (!typeInSet(idx.dtype, kIndexTypes)) return ctx.fail("indices must be int32 or int64");
    int64_t axis = axis_;
    if (!normalizeAxis(axis, static_cast<int64_t>(x.dims.size())))
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range for " + x.toString());
    std::vector<int64_t> out(x.dims.begin(), x.dims.begin() + axis);
    out.insert(out.end(), idx.dims.begin(), idx.dims.end());
    out.insert(out.end(), x.dims.begin() + axis + 1, x.dims.end());
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    std::vector<int64_t> indices = readInts(ctx.input(1));
    int64_t axis = axis_;
    normalizeAxis(axis, static_cast<int64_t>(x.rank()));
    const int64_t dim = x.dim(axis);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < x.rank(); ++d) {
      if (static_cast<int64_t>(d) < axis) outer *= x.dims()[d];
      if (static_cast<int64_t>(d) > axis) inner *= x.dims()[d];
    }
    for (int64_t& i : indices) {
      if (i < -dim || i >= dim)
        return ctx.fail("index " + std::to_string(i) + " is out of range for axis " +
                        std::to_string(axis) + " of size " + std::to_string(dim));
      if (i < 0) i += dim;
    }
    const size_t esize = dataTypeSize(x.dtype());
    const size_t chunk = static_cast<size_t>(inner) * esize;
    const int64_t n = static_cast<int64_t>(indices.size());
    const auto* px = static_cast<const std::byte*>(x.raw());
    auto* py = static_cast<std::byte*>(ctx.output(0).raw());
    if (chunk > 0)
      parallelFor(outer * n, inner, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          int64_t o = r / n, i = r % n;
          std::memcpy(py + static_cast<size_t>(r) * chunk,
                      px + static_cast<size_t>(o * dim + indices[static_cast<size_t>(i)]) * chunk,
                      chunk);
        }
      });
    return Status::ok();
  }

 private:
  int64_t axis_;
};

// Expand(input, shape): broadcast the input to broadcast(input, shape).
class ExpandKernel final : public Kernel {
 public:
  explicit ExpandKernel(const Node&) {}
  std::vector<size_t> shapeInputs() const override { return {1}; }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    std::vector<int64_t> shape = readInts(*ctx.inputContent(1)), out;
    for (int64_t d : shape)
      if (d < 0) return ctx.fail("shape " + dimsToString(shape) + " has a negative dim");
    const std::vector<int64_t>* both[] = {&x.dims, &shape};
    if (!broadcastDims(both, out))
      return ctx.fail("cannot expand " + x.toString() + " to " + dimsToString(shape));
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const std::vector<int64_t>* dims[] = {&x.dims()};
    BroadcastLoop loop(ctx.output(0).dims(), dims);
    bool ok = visitBySize(x.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* px = x.data<E>();
      E* py = ctx.output(0).mutableData<E>();
      loop.run([&](int64_t oo, const int64_t* off, const int64_t* step, int64_t n) {
        for (int64_t i = 0; i < n; ++i) py[oo + i] = px[off[0] + i * step[0]];
      });
    });
    return ok ? Status::ok() : unsupportedElement(ctx.node(), x.dtype());
  }
};

class TileKernel final : public Kernel {
 public:
  explicit TileKernel(const Node&) {}
  std::vector<size_t> shapeInputs() const override { return {1}; }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    std::vector<int64_t> repeats = readInts(*ctx.inputContent(1));
    if (repeats.size() != x.dims.size())
      return ctx.fail("repeats " + dimsToString(repeats) + " does not match the rank of " +
                      x.toString());
    std::vector<int64_t> out;
    for (size_t d = 0; d < repeats.size(); ++d) {
      if (repeats[d] < 0)
        return ctx.fail("repeats " + dimsToString(repeats) + " has a negative entry");
      std::optional<int64_t> dim = (CheckedInt(x.dims[d]) * repeats[d]).get();
      if (!dim)
        return ctx.fail("repeats " + dimsToString(repeats) + " of " + x.toString() +
                        " give a dim past int64");
      out.push_back(*dim);
    }
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const std::vector<int64_t>& outDims = ctx.output(0).dims();
    std::vector<int64_t> strides = contiguousStrides(x.dims());
    bool ok = visitBySize(x.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* px = x.data<E>();
      E* py = ctx.output(0).mutableData<E>();
      const int64_t total = ctx.output(0).numElements();
      if (total == 0) return;
      const size_t rank = outDims.size();
      if (rank == 0) {
        py[0] = px[0];
        return;
      }
      const int64_t inner = outDims.back(), innerDim = x.dims().back();
      parallelFor(total / inner, inner, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          int64_t off = 0, rest = r;
          for (size_t d = rank - 1; d-- > 0;) {
            off += ((rest % outDims[d]) % x.dims()[d]) * strides[d];
            rest /= outDims[d];
          }
          E* o = py + r * inner;
          for (int64_t i = 0; i < inner; ++i) o[i] = px[off + i % innerDim];
        }
      });
    });
    return ok ? Status::ok() : unsupportedElement(ctx.node(), x.dtype());
  }
};

// Pad(data, pads?, constant_value?, axes?) in constant, reflect, edge or wrap
// mode; negative pads crop.
class PadKernel final : public Kernel {
 public:
  explicit PadKernel(const Node& node)
      : mode_(node.getString("mode", "constant")),
        padsAttr_(node.getInts("pads")),
        valueAttr_(node.getFloat("value", 0.0f)) {
    if (mode_ == "constant")
      kind_ = Mode::kConstant;
    else if (mode_ == "reflect")
      kind_ = Mode::kReflect;
    else if (mode_ == "edge")
      kind_ = Mode::kEdge;
    else if (mode_ == "wrap")
      kind_ = Mode::kWrap;
    else
      throwNodeError(node, "unknown mode '" + mode_ + "'");
  }
  std::vector<size_t> shapeInputs() const override { return {1, 3}; }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    std::vector<int64_t> begin, end;
    SUBGRAPH_RETURN_IF_ERROR(resolve(ctx, x.dims, ctx.hasInput(1) ? ctx.inputContent(1) : nullptr,
                                     ctx.hasInput(3) ? ctx.inputContent(3) : nullptr, begin, end));
    std::vector<int64_t> out;
    for (size_t d = 0; d < x.dims.size(); ++d) {
      // Pads come from the model; a sum near INT64_MAX must not wrap into a
      // small, wrong size. Summed in 128 bits, since a huge begin and a
      // huge negative end can still give a valid size.
      const Int128 wide = Int128{x.dims[d]} + begin[d] + end[d];
      if (wide > std::numeric_limits<int64_t>::max())
        return ctx.fail("pads " + std::to_string(begin[d]) + " and " + std::to_string(end[d]) +
                        " on axis " + std::to_string(d) + " overflow int64");
      const int64_t size = wide < 0 ? -1 : static_cast<int64_t>(wide);
      if (size < 0)
        return ctx.fail("pads crop axis " + std::to_string(d) + " of " + x.toString() +
                        " below zero");
      if (mode_ != "constant" && x.dims[d] == 0 && size > 0)
        return ctx.fail(mode_ + " padding of an empty axis " + std::to_string(d));
      if (mode_ == "reflect" && (begin[d] >= x.dims[d] || end[d] >= x.dims[d]) &&
          (begin[d] > 0 || end[d] > 0))
        return ctx.fail("reflect pads on axis " + std::to_string(d) +
                        " must be smaller than its size " + std::to_string(x.dims[d]));
      out.push_back(size);
    }
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    std::vector<int64_t> begin, end;
    SUBGRAPH_RETURN_IF_ERROR(resolve(ctx, x.dims(), ctx.hasInput(1) ? &ctx.input(1) : nullptr,
                                     ctx.hasInput(3) ? &ctx.input(3) : nullptr, begin, end));
    const std::vector<int64_t>& outDims = ctx.output(0).dims();
    const std::vector<int64_t>& inDims = x.dims();
    std::vector<int64_t> strides = contiguousStrides(inDims);
    const size_t rank = inDims.size();
    bool ok = visitType<kAllTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T fill{};
      if (ctx.hasInput(2) && ctx.input(2).numElements() > 0)
        fill = ctx.input(2).data<T>()[0];
      else
        fill = store<T>(static_cast<Compute<T>>(valueAttr_));
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      const int64_t total = ctx.output(0).numElements();
      if (rank == 0 || total == 0) {
        if (total == 1) py[0] = px[0];
        return;
      }
      // Rows of the last axis: the outer coordinates map to one input row
      // (or to the fill value) per output row, and the last axis maps
      // through a table made once per run, so no element divides.
      const int64_t width = outDims[rank - 1];
      std::vector<int64_t> lastSource(static_cast<size_t>(width));
      for (int64_t o = 0; o < width; ++o)
        lastSource[static_cast<size_t>(o)] = source(begin, inDims, rank - 1, o);
      parallelFor(total / width, width, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          T* row = py + r * width;
          int64_t rest = r, off = 0;
          bool inside = true;
          for (size_t d = rank - 1; d-- > 0;) {
            int64_t c = source(begin, inDims, d, rest % outDims[d]);
            rest /= outDims[d];
            if (c < 0) {
              inside = false;
              break;
            }
            off += c * strides[d];
          }
          const int64_t step = strides[rank - 1];
          for (int64_t o = 0; o < width; ++o) {
            const int64_t c = lastSource[static_cast<size_t>(o)];
            row[o] = inside && c >= 0 ? px[off + c * step] : fill;
          }
        }
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

 private:
  template <typename Ctx>
  Status resolve(const Ctx& ctx, const std::vector<int64_t>& dims, const TensorView* padsInput,
                 const TensorView* axesInput, std::vector<int64_t>& begin,
                 std::vector<int64_t>& end) const {
    const int64_t rank = static_cast<int64_t>(dims.size());
    std::vector<int64_t> pads = padsInput ? readInts(*padsInput) : padsAttr_;
    std::vector<int64_t> axes;
    if (axesInput) {
      axes = readInts(*axesInput);
    } else {
      axes.resize(dims.size());
      std::iota(axes.begin(), axes.end(), 0);
    }
    if (pads.size() != 2 * axes.size())
      return ctx.fail("pads " + dimsToString(pads) + " need " + std::to_string(2 * axes.size()) +
                      " entries");
    begin.assign(dims.size(), 0);
    end.assign(dims.size(), 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t axis = axes[i];
      if (!normalizeAxis(axis, rank))
        return ctx.fail("axis " + std::to_string(axes[i]) + " is out of range");
      begin[static_cast<size_t>(axis)] = pads[i];
      end[static_cast<size_t>(axis)] = pads[i + axes.size()];
    }
    return Status::ok();
  }

  // Maps output coordinate `o` of axis `d` to an input one, or -1 for the
  // fill value. In 128 bits: o - begin wraps for a begin near INT64_MIN.
  int64_t source(const std::vector<int64_t>& begin, const std::vector<int64_t>& inDims, size_t d,
                 int64_t o) const {
    const Int128 n = inDims[d];
    const Int128 c = Int128{o} - begin[d];
    if (c >= 0 && c < n) return static_cast<int64_t>(c);
    switch (kind_) {
      case Mode::kConstant: return -1;
      case Mode::kEdge: return c < 0 ? 0 : static_cast<int64_t>(n - 1);
      case Mode::kWrap: return static_cast<int64_t>(((c % n) + n) % n);
      case Mode::kReflect: break;
    }
    if (n == 1) return 0;
    const Int128 period = 2 * (n - 1);  // reflect without repeating the edge
    const Int128 m = ((c % period) + period) % period;
    return static_cast<int64_t>(m < n ? m : period - m);
  }

  enum class Mode { kConstant, kReflect, kEdge, kWrap };
  std::string mode_;
  Mode kind_ = Mode::kConstant;
  std::vector<int64_t> padsAttr_;
  float valueAttr_;
};

// DepthToSpace (DCR and CRD modes) and SpaceToDepth on [N, C, H, W].
class DepthSpaceKernel final : public Kernel {
 public:
  DepthSpaceKernel(const Node& node, bool toSpace)
      : toSpace_(toSpace),
        block_(node.getInt("blocksize", 0)),
        crd_(node.getString("mode", "DCR") == "CRD") {
    if (block_ <= 0) throwNodeError(node, "blocksize must be positive");
    std::string mode = node.getString("mode", "DCR");
    if (toSpace && mode != "DCR" && mode != "CRD")
      throwNodeError(node, "unknown mode '" + mode + "'");
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (x.dims.size() != 4) return ctx.fail("input must be [N, C, H, W], got " + x.toString());
    const int64_t b = block_, n = x.dims[0], c = x.dims[1], h = x.dims[2], w = x.dims[3];
    // blocksize comes from the model: b * b, h * b and c * b * b can wrap
    // (a wrapped b * b of 0 would divide by zero).
    const CheckedInt bb = CheckedInt(b) * b;
    if (!bb.ok()) return ctx.fail("blocksize " + std::to_string(b) + " squared overflows int64");
    std::vector<CheckedInt> out;
    if (toSpace_) {
      if (c % bb.value() != 0)
        return ctx.fail("channels " + std::to_string(c) + " are not a multiple of blocksize^2");
      out = {n, c / bb.value(), CheckedInt(h) * b, CheckedInt(w) * b};
    } else {
      if (h % b != 0 || w % b != 0) return ctx.fail("H and W must be multiples of blocksize");
      out = {n, CheckedInt(c) * bb, h / b, w / b};
    }
    std::vector<int64_t> dims;
    for (const CheckedInt& d : out) {
      if (!d.ok())
        return ctx.fail("output dims overflow int64 with blocksize " + std::to_string(b));
      dims.push_back(d.value());
    }
    ctx.setOutput(0, TensorDesc{x.dtype, std::move(dims), nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const TensorView& y = ctx.output(0);
    const int64_t b = block_;
    // Iterate over the space-side tensor [N, C', H*b, W*b]; the depth side
    // holds channel (i*b + j)*C' + c (DCR) or c*b*b + i*b + j (CRD).
    const TensorView& space = toSpace_ ? y : x;
    const TensorView& depth = toSpace_ ? x : y;
    const int64_t n = space.dim(0), c = space.dim(1), hs = space.dim(2), ws = space.dim(3);
    const int64_t h = hs / b, w = ws / b, cd = depth.dim(1);
    bool ok = visitBySize(x.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      E* ps = static_cast<E*>(space.raw());
      E* pd = static_cast<E*>(depth.raw());
      parallelFor(n * c, hs * ws, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t bn = r / c, ch = r % c;
          for (int64_t yy = 0; yy < hs; ++yy)
            for (int64_t xx = 0; xx < ws; ++xx) {
              const int64_t i = yy % b, j = xx % b;
              const int64_t dc = crd_ && toSpace_ ? ch * b * b + i * b + j : (i * b + j) * c + ch;
              const int64_t so = ((bn * c + ch) * hs + yy) * ws + xx;
              const int64_t dof = ((bn * cd + dc) * h + yy / b) * w + xx / b;
              if (toSpace_)
                ps[so] = pd[dof];
              else
                pd[dof] = ps[so];
            }
        }
      });
    });
    return ok ? Status::ok() : unsupportedElement(ctx.node(), x.dtype());
  }

 private:
  bool toSpace_;
  int64_t block_;
  bool crd_;
};

// Trilu(input, k?): keeps the upper (j - i >= k) or lower (j - i <= k)
// triangle of the last two dims and zeroes the rest.
class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(const Node& node) : upper_(node.getInt("upper", 1) != 0) {}
  Status resize(ResizeContext& ctx) const override {
    if (ctx.inputDesc(0).dims.size() < 2) return ctx.fail("input must have rank >= 2");
    if (ctx.hasInput(1) && ctx.inputDesc(1).numElements() != 1)
      return ctx.fail("k must hold one value");
    ctx.setOutput(0, ctx.inputDesc(0));
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const int64_t k = ctx.hasInput(1) ? readInts(ctx.input(1)).at(0) : 0;
    const int64_t rows = x.dim(-2), cols = x.dim(-1),
                  mats = x.numElements() / std::max<int64_t>(rows * cols, 1);
    bool ok = visitBySize(x.dtype(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      const E* px = x.data<E>();
      E* py = ctx.output(0).mutableData<E>();
      for (int64_t m = 0; m < mats; ++m)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t at = (m * rows + i) * cols + j;
            const bool keep = upper_ ? j - i >= k : j - i <= k;
            py[at] = keep ? px[at] : E{0};
          }
    });
    return ok ? Status::ok() : unsupportedElement(ctx.node(), x.dtype());
  }

 private:
  bool upper_;
};

KernelCreator depthSpace(bool toSpace) {
  return [toSpace](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<DepthSpaceKernel>(node, toSpace));
  };
}

}  // namespace

void registerDataMovementKernels(Provider& p) {
  p.add("DepthToSpace", depthSpace(true));
  p.add("SpaceToDepth", depthSpace(false));
  p.add("Trilu", creatorFor<TriluKernel>());
  p.add("Transpose", creatorFor<TransposeKernel>());
  p.add("Concat", creatorFor<ConcatKernel>());
  p.add("Split", creatorFor<SplitKernel>());
  p.add("Slice", creatorFor<SliceKernel>());
  p.add("Gather", creatorFor<GatherKernel>());
  p.add("Expand", creatorFor<ExpandKernel>());
  p.add("Tile", creatorFor<TileKernel>());
  p.add("Pad", creatorFor<PadKernel>());
}

}  // namespace subgraph::runtime::reference
