//===- plugins/onednn/backend/layernorm_family.cpp - LayerNormalization regions -===//
//
// The LayerNormalization family; see layernorm_family.h. What must not
// fuse: normalization over more than the last axis, a scale or bias that
// is not a constant, and a node whose Mean/InvStdDev outputs are read.
//
//===----------------------------------------------------------------------===//
#include "layernorm_family.h"

#include "normalization.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

namespace sp = subgraph::partition::predicates;
using partition::Decision;
using partition::OpMatcher;
using partition::PatternBuilder;
using partition::PatternProperty;

std::unique_ptr<partition::SubgraphProperty> makeProperty() {
  PatternBuilder b("layernorm");
  b.add(OpMatcher("LayerNormalization")
            .where(sp::inputIsConstant(1))
            .where(sp::inputIsConstant(2))
            .where(predicates::onlyFirstOutputUsed())
            .where([](const Node& n) {
              const Value* x = n.input(0);
              if (!x || !x->type().hasRank() || x->type().dtype != DataType::kFloat32)
                return Decision::no("the input is not f32 of known rank");
              auto rank = static_cast<int64_t>(x->type().shape->size());
              int64_t axis = n.getInt("axis", -1);
              return Decision::noIf(axis != -1 && axis != rank - 1,
                                    "normalizes over more than the last axis");
            }));
  return std::make_unique<PatternProperty>("layernorm", buildPattern(b));
}

class LayerNormRegionKernel final : public RegionKernel {
 public:
  explicit LayerNormRegionKernel(const Node& region) {
    RegionBody body(region);
    const Node& n = body.single("layernorm", "LayerNormalization");
    input_ = body.inputIndex(n.input(0));
    norm_ = std::make_unique<LayerNorm>(floatsOf(n.input(1)), floatsOf(n.input(2)),
                                        n.getFloat("epsilon", 1e-5f));
  }

  Status resize(runtime::ResizeContext& ctx) const override {
    return guarded(ctx, [&] {
      runtime::TensorDesc out = ctx.inputDesc(input_);
      ctx.requestScratch(norm_->prepare(out.dims));
      ctx.setOutput(0, std::move(out));
    });
  }

  Status run(runtime::RunContext& ctx) const override {
    return guarded(ctx, [&] {
      norm_->execute(ctx.input(input_).dims(), ctx.input(input_).data<float>(),
                     ctx.output(0).mutableData<float>(), ctx.scratch().data());
    });
  }

 private:
  std::unique_ptr<LayerNorm> norm_;
  size_t input_ = 0;
};

}  // namespace

std::vector<std::pair<std::string, partition::PropertyFactory>> layernormProperties() {
  return {{"layernorm", makeProperty}};
}

runtime::KernelCreator layernormKernelCreator() { return creatorOf<LayerNormRegionKernel>(); }

}  // namespace subgraph::onednn
