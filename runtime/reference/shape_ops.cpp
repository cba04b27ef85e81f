//===- runtime/reference/shape_ops.cpp - Shape-only ops -------------------===//
//
// Ops that change how bytes are viewed, not the bytes: Reshape, Flatten,
// Squeeze, Unsqueeze, Identity and inference-mode Dropout, whose output may
// share the input's memory (Kernel::outputAliasesInput) so they usually cost
// nothing; plus Shape and Size, which read only the input's desc. Training-mode
// Dropout draws its mask from a seeded generator.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <random>

#include "reference/kernel_util.h"
#include "reference/kernels.h"
#include "subgraph/support/checked_int.h"

namespace subgraph::runtime::reference {
namespace {

// Shared run() for every view op: copy only when the session did not alias.
Status copyThrough(RunContext& ctx) {
  const TensorView& in = ctx.input(0);
  const TensorView& out = ctx.output(0);
  if (in.raw() != out.raw() && in.byteSize() > 0) std::memcpy(out.raw(), in.raw(), in.byteSize());
  return Status::ok();
}

class ViewKernel : public Kernel {
 public:
  std::optional<size_t> outputAliasesInput(size_t output) const override {
    return output == 0 ? std::optional<size_t>(0) : std::nullopt;
  }
  Status run(RunContext& ctx) const override { return copyThrough(ctx); }
};

class ReshapeKernel final : public ViewKernel {
 public:
  explicit ReshapeKernel(const Node& node) : allowZero_(node.getInt("allowzero", 0) != 0) {}
  std::vector<size_t> shapeInputs() const override { return {1}; }

  Status resize(ResizeContext& ctx) const override {
    if (!ctx.hasInput(1)) return ctx.fail("the shape input is required");
    const TensorDesc& x = ctx.inputDesc(0);
    std::vector<int64_t> shape = readInts(*ctx.inputContent(1));
    CheckedInt known = 1;
    int64_t inferAt = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0 && !allowZero_) {
        if (i >= x.dims.size())
          return ctx.fail("shape " + dimsToString(shape) + " copies dim " + std::to_string(i) +
                          " but the input " + x.toString() + " has only " +
                          std::to_string(x.dims.size()));
        shape[i] = x.dims[i];
      }
      if (shape[i] == -1) {
        if (inferAt >= 0) return ctx.fail("shape " + dimsToString(shape) + " has more than one -1");
        inferAt = static_cast<int64_t>(i);
        continue;
      }
      if (shape[i] < 0) return ctx.fail("shape " + dimsToString(shape) + " has a negative dim");
      known = known * shape[i];
    }
    // The shape comes from model data: a product past int64 is no size.
    if (!known.ok())
      return ctx.fail("shape " + dimsToString(shape) + " has more elements than int64 holds");
    const int64_t total = x.numElements();
    if (inferAt >= 0) {
      if (known.value() == 0 || total % known.value() != 0)
        return ctx.fail("cannot reshape " + x.toString() + " to " + dimsToString(shape));
      shape[static_cast<size_t>(inferAt)] = total / known.value();
    } else if (known.value() != total) {
      return ctx.fail("cannot reshape " + x.toString() + " (" + std::to_string(total) +
                      " elements) to " + dimsToString(shape));
    }
    ctx.setOutput(0, TensorDesc{x.dtype, shape, nullptr});
    return Status::ok();
  }

 private:
  bool allowZero_;
};

class FlattenKernel final : public ViewKernel {
 public:
  explicit FlattenKernel(const Node& node) : axis_(node.getInt("axis", 1)) {}
  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const int64_t rank = static_cast<int64_t>(x.dims.size());
    int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis > rank)
      return ctx.fail("axis " + std::to_string(axis_) + " is out of range for " + x.toString());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= x.dims[static_cast<size_t>(d)];
    ctx.setOutput(0, TensorDesc{x.dtype, {outer, inner}, nullptr});
    return Status::ok();
  }

 private:
  int64_t axis_;
};

// Squeeze and Unsqueeze: axes from the attribute (before opset 13) or the
// optional second input.
class SqueezeKernel final : public ViewKernel {
 public:
  SqueezeKernel(const Node& node, bool unsqueeze)
      : unsqueeze_(unsqueeze),
        hasAttr_(node.attr("axes") != nullptr),
        axesAttr_(node.getInts("axes")) {}
  std::vector<size_t> shapeInputs() const override { return {1}; }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    std::vector<int64_t> axes = ctx.hasInput(1) ? readInts(*ctx.inputContent(1)) : axesAttr_;
    if (unsqueeze_ && axes.empty() && !hasAttr_ && !ctx.hasInput(1))
      return ctx.fail("axes are required");
    std::vector<int64_t> out;
    if (unsqueeze_) {
      const int64_t rank = static_cast<int64_t>(x.dims.size() + axes.size());
      std::vector<bool> inserted(static_cast<size_t>(rank), false);
      for (int64_t a : axes) {
        int64_t axis = a;
        if (!normalizeAxis(axis, rank))
          return ctx.fail("axis " + std::to_string(a) + " is out of range for output rank " +
                          std::to_string(rank));
        if (inserted[static_cast<size_t>(axis)])
          return ctx.fail("axis " + std::to_string(a) + " is repeated");
        inserted[static_cast<size_t>(axis)] = true;
      }
      size_t next = 0;
      for (int64_t d = 0; d < rank; ++d)
        out.push_back(inserted[static_cast<size_t>(d)] ? 1 : x.dims[next++]);
    } else {
      const int64_t rank = static_cast<int64_t>(x.dims.size());
      std::vector<bool> removed(x.dims.size(), false);
      for (int64_t a : axes) {
        int64_t axis = a;
        if (!normalizeAxis(axis, rank))
          return ctx.fail("axis " + std::to_string(a) + " is out of range for " + x.toString());
        if (x.dims[static_cast<size_t>(axis)] != 1)
          return ctx.fail("cannot squeeze axis " + std::to_string(a) + " of " + x.toString() +
                          ": its size is not 1");
        removed[static_cast<size_t>(axis)] = true;
      }
      for (size_t d = 0; d < x.dims.size(); ++d) {
        bool drop = axes.empty() ? x.dims[d] == 1 : removed[d];
        if (!drop) out.push_back(x.dims[d]);
      }
    }
    ctx.setOutput(0, TensorDesc{x.dtype, out, nullptr});
    return Status::ok();
  }

 private:
  bool unsqueeze_;
  bool hasAttr_;
  std::vector<int64_t> axesAttr_;
};

class IdentityKernel final : public ViewKernel {
 public:
  explicit IdentityKernel(const Node&) {}
  Status resize(ResizeContext& ctx) const override {
    ctx.setOutput(0, ctx.inputDesc(0));
    return Status::ok();
  }
};

// Dropout(data, ratio?, training_mode?) -> (output, mask?). Inference mode
// is the identity with an all-true mask.
class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(const Node& node)
      : ratioAttr_(node.getFloat("ratio", 0.5f)),
        seed_(node.getInt("seed", 0)),
        trainingInput_(node.input(2) != nullptr) {}

  std::optional<size_t> outputAliasesInput(size_t output) const override {
    // With a training_mode input the output may differ from the input.
    return output == 0 && !trainingInput_ ? std::optional<size_t>(0) : std::nullopt;
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (!typeInSet(x.dtype, kFloatTypes)) return unsupportedType(ctx.node(), x.dtype);
    ctx.setOutput(0, x);
    if (ctx.numOutputs() > 1) ctx.setOutput(1, TensorDesc{DataType::kBool, x.dims, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    double ratio = ctx.hasInput(1) ? readDoubles(ctx.input(1)).at(0) : ratioAttr_;
    bool training = ctx.hasInput(2) && readInts(ctx.input(2)).at(0) != 0;
    bool* mask = ctx.numOutputs() > 1 ? ctx.output(1).mutableData<bool>() : nullptr;
    const int64_t n = x.numElements();
    if (!training || ratio == 0.0) {
      SUBGRAPH_RETURN_IF_ERROR(copyThrough(ctx));
      if (mask) std::fill(mask, mask + n, true);
      return Status::ok();
    }
    if (ratio < 0.0 || ratio >= 1.0)
      return ctx.fail("ratio must be in [0, 1), got " + std::to_string(ratio));
    std::mt19937_64 rng(static_cast<uint64_t>(seed_));
    std::bernoulli_distribution keep(1.0 - ratio);
    const double scale = 1.0 / (1.0 - ratio);
    visitType<kFloatTypes>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = ctx.output(0).mutableData<T>();
      for (int64_t i = 0; i < n; ++i) {
        bool k = keep(rng);
        if (mask) mask[i] = k;
        py[i] =
            store<T>(static_cast<Compute<T>>(k ? static_cast<double>(load(px[i])) * scale : 0.0));
      }
    });
    return Status::ok();
  }

 private:
  float ratioAttr_;
  int64_t seed_;
  bool trainingInput_;
};

// Shape(data) -> int64 dims[start:end], reading only the input's desc.
class ShapeKernel final : public Kernel {
 public:
  explicit ShapeKernel(const Node& node)
      : start_(node.getInt("start", 0)),
        hasEnd_(node.attr("end") != nullptr),
        end_(node.getInt("end", 0)) {}
  bool readsInputData() const override { return false; }

  Status resize(ResizeContext& ctx) const override {
    auto [b, e] = range(static_cast<int64_t>(ctx.inputDesc(0).dims.size()));
    ctx.setOutput(0, TensorDesc{DataType::kInt64, {e - b}, nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const std::vector<int64_t>& dims = ctx.input(0).dims();
    auto [b, e] = range(static_cast<int64_t>(dims.size()));
    int64_t* out = ctx.output(0).mutableData<int64_t>();
    for (int64_t i = b; i < e; ++i) out[i - b] = dims[static_cast<size_t>(i)];
    return Status::ok();
  }

 private:
  // Negative bounds count from the end; both clamp to [0, rank].
  std::pair<int64_t, int64_t> range(int64_t rank) const {
    auto clampBound = [rank](int64_t v) {
      return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank);
    };
    int64_t b = clampBound(start_), e = hasEnd_ ? clampBound(end_) : rank;
    return {b, std::max(b, e)};
  }
  int64_t start_;
  bool hasEnd_;
  int64_t end_;
};

// Size(data) -> int64 scalar element count, from the desc alone.
class SizeKernel final : public Kernel {
 public:
  explicit SizeKernel(const Node&) {}
  bool readsInputData() const override { return false; }
  Status resize(ResizeContext& ctx) const override {
    ctx.setOutput(0, TensorDesc{DataType::kInt64, {}, nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    *ctx.output(0).mutableData<int64_t>() = ctx.input(0).numElements();
    return Status::ok();
  }
};

KernelCreator squeeze(bool unsqueeze) {
  return [unsqueeze](const Node& node, const Backend&) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(std::make_unique<SqueezeKernel>(node, unsqueeze));
  };
}

}  // namespace

void registerShapeKernels(Provider& p) {
  p.add("Reshape", creatorFor<ReshapeKernel>());
  p.add("Flatten", creatorFor<FlattenKernel>());
  p.add("Squeeze", squeeze(false));
  p.add("Unsqueeze", squeeze(true));
  p.add("Identity", creatorFor<IdentityKernel>());
  p.add("Dropout", creatorFor<DropoutKernel>());
  p.add("Shape", creatorFor<ShapeKernel>());
  p.add("Size", creatorFor<SizeKernel>());
}

}  // namespace subgraph::runtime::reference
