//===- runtime/reference/generators.cpp - Ops that make tensors -----------===//
//
// Constant (every value_* attribute form except strings), ConstantOfShape,
// Range and EyeLike. Their outputs depend only on attributes and shape inputs, so the
// session usually computes them once per plan, at resize time.
//
//===----------------------------------------------------------------------===//
#include <cmath>

#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(const Node& node) {
    if (const Attribute* a = node.attr("value")) {
      value_ = a->asTensor();
    } else if (const Attribute* f = node.attr("value_float")) {
      value_ = Tensor::fromVector<float>(DataType::kFloat32, {}, {f->asFloat()});
    } else if (const Attribute* fs = node.attr("value_floats")) {
      value_ = Tensor::fromVector<float>(
          DataType::kFloat32, {static_cast<int64_t>(fs->asFloats().size())}, fs->asFloats());
    } else if (const Attribute* i = node.attr("value_int")) {
      value_ = Tensor::fromVector<int64_t>(DataType::kInt64, {}, {i->asInt()});
    } else if (const Attribute* is = node.attr("value_ints")) {
      value_ = Tensor::fromVector<int64_t>(
          DataType::kInt64, {static_cast<int64_t>(is->asInts().size())}, is->asInts());
    } else if (node.attr("value_string") || node.attr("value_strings")) {
      throw Error(StatusCode::kUnsupported,
                  nodeErrorPrefix(&node) + "string constants are not supported at run time");
    } else {
      throwNodeError(node, "has no value attribute");
    }
    if (value_.dtype() == DataType::kString)
      throw Error(StatusCode::kUnsupported,
                  nodeErrorPrefix(&node) + "string constants are not supported at run time");
  }

  Status resize(ResizeContext& ctx) const override {
    ctx.setOutput(0, TensorDesc{value_.dtype(), value_.dims(), nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    if (!value_.bytes().empty())
      std::memcpy(ctx.output(0).raw(), value_.bytes().data(), value_.bytes().size());
    return Status::ok();
  }

 private:
  Tensor value_;
};

class ConstantOfShapeKernel final : public Kernel {
 public:
  explicit ConstantOfShapeKernel(const Node& node) {
    if (const Attribute* a = node.attr("value")) {
      value_ = a->asTensor();
      if (value_.numElements() != 1) throwNodeError(node, "value must hold exactly one element");
      if (value_.dtype() == DataType::kString)
        throw Error(StatusCode::kUnsupported,
                    nodeErrorPrefix(&node) + "string values are not supported");
    } else {
      value_ = Tensor::fromVector<float>(DataType::kFloat32, {1}, {0.0f});
    }
  }
  std::vector<size_t> shapeInputs() const override { return {0}; }

  Status resize(ResizeContext& ctx) const override {
    std::vector<int64_t> dims = readInts(*ctx.inputContent(0));
    for (int64_t d : dims)
      if (d < 0) return ctx.fail("shape " + dimsToString(dims) + " has a negative dim");
    ctx.setOutput(0, TensorDesc{value_.dtype(), dims, nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const size_t esize = dataTypeSize(value_.dtype());
    auto* out = static_cast<std::byte*>(ctx.output(0).raw());
    for (int64_t i = 0, n = ctx.output(0).numElements(); i < n; ++i)
      std::memcpy(out + static_cast<size_t>(i) * esize, value_.bytes().data(), esize);
    return Status::ok();
  }

 private:
  Tensor value_;
};

// Range(start, limit, delta): ceil((limit - start) / delta) elements.
class RangeKernel final : public Kernel {
 public:
  explicit RangeKernel(const Node&) {}
  std::vector<size_t> shapeInputs() const override { return {0, 1, 2}; }

  Status resize(ResizeContext& ctx) const override {
    DataType dt = ctx.inputDesc(0).dtype;
    if (!typeInSet(dt, kFloatTypes | kSignedInts)) return unsupportedType(ctx.node(), dt);
    for (size_t i = 0; i < 3; ++i) {
      if (ctx.inputDesc(i).numElements() != 1)
        return ctx.fail("start, limit and delta must be scalars, input " + std::to_string(i) +
                        " is " + ctx.inputDesc(i).toString());
      if (ctx.inputDesc(i).dtype != dt)
        return ctx.fail("start, limit and delta must have one element type");
    }
    double start = readDoubles(*ctx.inputContent(0))[0],
           limit = readDoubles(*ctx.inputContent(1))[0];
    double delta = readDoubles(*ctx.inputContent(2))[0];
    if (delta == 0) return ctx.fail("delta must not be 0");
    double count = std::ceil((limit - start) / delta);
    if (!(count < 1e12))
      return ctx.fail("range of " + std::to_string(count) + " elements is too large");
    ctx.setOutput(0, TensorDesc{dt, {std::max<int64_t>(0, static_cast<int64_t>(count))}, nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    visitType<kFloatTypes | kSignedInts>(ctx.output(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = Compute<T>;
      C start = load(ctx.input(0).data<T>()[0]), delta = load(ctx.input(2).data<T>()[0]);
      T* out = ctx.output(0).mutableData<T>();
      // start + i * delta, as the spec and numpy compute it.
      for (int64_t i = 0, n = ctx.output(0).numElements(); i < n; ++i)
        out[i] = store<T>(static_cast<C>(start + static_cast<C>(i) * delta));
    });
    return Status::ok();
  }
};

// EyeLike(input): a 2-d tensor of input's dims with ones on diagonal k, of
// the dtype attribute's type (else the input's).
class EyeLikeKernel final : public Kernel {
 public:
  explicit EyeLikeKernel(const Node& node) : k_(node.getInt("k", 0)) {
    if (node.attr("dtype")) dtype_ = static_cast<DataType>(node.getInt("dtype"));
  }
  bool readsInputData() const override { return false; }
  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    if (x.dims.size() != 2) return ctx.fail("input must be 2-d, got " + x.toString());
    DataType dt = dtype_.value_or(x.dtype);
    if (!typeInSet(dt, kAllTypes)) return unsupportedType(ctx.node(), dt);
    ctx.setOutput(0, TensorDesc{dt, x.dims, nullptr});
    return Status::ok();
  }
  Status run(RunContext& ctx) const override {
    const TensorView& y = ctx.output(0);
    const int64_t rows = y.dim(0), cols = y.dim(1);
    visitType<kAllTypes>(y.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.mutableData<T>();
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          py[i * cols + j] = store<T>(static_cast<Compute<T>>(j - i == k_ ? 1 : 0));
    });
    return Status::ok();
  }

 private:
  int64_t k_;
  std::optional<DataType> dtype_;
};

}  // namespace

void registerGeneratorKernels(Provider& p) {
  p.add("EyeLike", creatorFor<EyeLikeKernel>());
  p.add("Constant", creatorFor<ConstantKernel>());
  p.add("ConstantOfShape", creatorFor<ConstantOfShapeKernel>());
  p.add("Range", creatorFor<RangeKernel>());
}

}  // namespace subgraph::runtime::reference
