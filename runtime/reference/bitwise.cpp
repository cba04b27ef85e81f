//===- runtime/reference/bitwise.cpp - Bit shifts -------------------------===//
//
// BitShift: X shifted LEFT or RIGHT by Y bits, elementwise with numpy
// broadcasting, on unsigned integers. Shifting by the element width or more
// gives 0 (all bits shifted out) rather than C++'s undefined behaviour.
//
//===----------------------------------------------------------------------===//
#include "reference/kernel_util.h"
#include "reference/kernels.h"

namespace subgraph::runtime::reference {
namespace {

class BitShiftKernel final : public Kernel {
 public:
  explicit BitShiftKernel(const Node& node) {
    std::string direction = node.getString("direction");
    if (direction != "LEFT" && direction != "RIGHT")
      throwNodeError(node, "direction must be LEFT or RIGHT, got '" + direction + "'");
    left_ = direction == "LEFT";
  }

  Status resize(ResizeContext& ctx) const override {
    const TensorDesc& x = ctx.inputDesc(0);
    const TensorDesc& y = ctx.inputDesc(1);
    if (!typeInSet(x.dtype, kUnsignedInts)) return unsupportedType(ctx.node(), x.dtype);
    if (y.dtype != x.dtype) return ctx.fail("X and Y have different element types");
    const std::vector<int64_t>* shapes[] = {&x.dims, &y.dims};
    std::vector<int64_t> dims;
    if (!broadcastDims(shapes, dims))
      return ctx.fail("shapes " + dimsToString(x.dims) + " and " + dimsToString(y.dims) +
                      " do not broadcast");
    ctx.setOutput(0, TensorDesc{x.dtype, dims, nullptr});
    return Status::ok();
  }

  Status run(RunContext& ctx) const override {
    const TensorView& x = ctx.input(0);
    const TensorView& y = ctx.input(1);
    const std::vector<int64_t>* shapes[] = {&x.dims(), &y.dims()};
    BroadcastLoop loop(ctx.output(0).dims(), shapes);
    bool ok = visitType<kUnsignedInts>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // Promote narrow types to unsigned so the shift itself cannot
      // overflow a signed int.
      using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, T>;
      constexpr T kBits = static_cast<T>(sizeof(T) * 8);
      const T* px = x.data<T>();
      const T* py = y.data<T>();
      T* pz = ctx.output(0).mutableData<T>();
      const bool left = left_;
      loop.run([&](int64_t oo, const int64_t* off, const int64_t* step, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          const W v = px[off[0] + i * step[0]];
          const T s = py[off[1] + i * step[1]];
          pz[oo + i] = s >= kBits ? T(0) : static_cast<T>(left ? v << s : v >> s);
        }
      });
    });
    return ok ? Status::ok() : unsupportedType(ctx.node(), x.dtype());
  }

 private:
  bool left_ = true;
};

}  // namespace

void registerBitwiseKernels(Provider& p) { p.add("BitShift", creatorFor<BitShiftKernel>()); }

}  // namespace subgraph::runtime::reference
