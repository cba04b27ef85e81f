//===- plugins/onednn/backend/softmax_family.cpp - Softmax regions -===//
//
// The Softmax family; see softmax_family.h. What must not fuse: a Softmax
// of an op set older than 13, whose axis means "flatten from here" rather
// than one axis, and inputs of unknown rank.
//
//===----------------------------------------------------------------------===//
#include "softmax_family.h"

#include "normalization.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

using partition::Decision;
using partition::OpMatcher;
using partition::PatternBuilder;
using partition::PatternProperty;

std::unique_ptr<partition::SubgraphProperty> makeProperty() {
  PatternBuilder b("softmax");
  b.add(OpMatcher("Softmax").where([](const Node& n) {
    const Value* x = n.input(0);
    if (!x || !x->type().hasRank() || x->type().dtype != DataType::kFloat32)
      return Decision::no("the input is not f32 of known rank");
    // Old semantics coerce to 2-D at `axis`; that is one axis only when it
    // is the last one.
    auto rank = static_cast<int64_t>(x->type().shape->size());
    int64_t axis = n.getInt("axis", -1);
    return Decision::noIf(axis != -1 && axis != rank - 1,
                          "only the last axis (opset 13 and older forms agree there)");
  }));
  return std::make_unique<PatternProperty>("softmax", buildPattern(b));
}

class SoftmaxRegionKernel final : public RegionKernel {
 public:
  explicit SoftmaxRegionKernel(const Node& region) : softmax_(-1) {
    RegionBody body(region);
    input_ = body.inputIndex(body.single("softmax", "Softmax").input(0));
  }

  Status resize(runtime::ResizeContext& ctx) const override {
    return guarded(ctx, [&] {
      runtime::TensorDesc out = ctx.inputDesc(input_);
      ctx.requestScratch(softmax_.prepare(out.dims));
      ctx.setOutput(0, std::move(out));
    });
  }

  Status run(runtime::RunContext& ctx) const override {
    return guarded(ctx, [&] {
      softmax_.execute(ctx.input(input_).dims(), ctx.input(input_).data<float>(),
                       ctx.output(0).mutableData<float>(), ctx.scratch().data());
    });
  }

 private:
  mutable Softmax softmax_;
  size_t input_ = 0;
};

}  // namespace

std::vector<std::pair<std::string, partition::PropertyFactory>> softmaxProperties() {
  return {{"softmax", makeProperty}};
}

runtime::KernelCreator softmaxKernelCreator() { return creatorOf<SoftmaxRegionKernel>(); }

}  // namespace subgraph::onednn
