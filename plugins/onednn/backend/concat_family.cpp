//===- plugins/onednn/backend/concat_family.cpp - Concat regions -===//
//
// The Concat family; see concat_family.h. What must not fuse: inputs that
// are not f32, or whose rank is unknown.
//
//===----------------------------------------------------------------------===//
#include "concat_family.h"

#include "concat.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

using partition::Decision;
using partition::OpMatcher;
using partition::PatternBuilder;
using partition::PatternProperty;

std::unique_ptr<partition::SubgraphProperty> makeProperty() {
  PatternBuilder b("concat");
  b.add(OpMatcher("Concat").where([](const Node& n) {
    for (const Value* in : n.inputs())
      if (!in || in->type().dtype != DataType::kFloat32 || !in->type().hasRank())
        return Decision::no("an input is not f32 of known rank");
    return Decision::noIf(n.numInputs() < 1, "no inputs");
  }));
  return std::make_unique<PatternProperty>("concat", buildPattern(b));
}

class ConcatRegionKernel final : public RegionKernel {
 public:
  explicit ConcatRegionKernel(const Node& region) {
    RegionBody body(region);
    const Node& n = body.single("concat", "Concat");
    // Merged duplicate inputs map several concat operands to one input.
    for (const Value* in : n.inputs()) inputs_.push_back(body.inputIndex(in));
    concat_ = std::make_unique<Concat>(n.getInt("axis", 0));
  }

  Status resize(runtime::ResizeContext& ctx) const override {
    return guarded(ctx, [&] {
      std::vector<std::vector<int64_t>> dims;
      for (size_t i : inputs_) dims.push_back(ctx.inputDesc(i).dims);
      runtime::TensorDesc out;
      out.dims = concat_->outputDims(dims);
      ctx.requestScratch(concat_->prepare(dims));
      ctx.setOutput(0, std::move(out));
    });
  }

  Status run(runtime::RunContext& ctx) const override {
    return guarded(ctx, [&] {
      std::vector<std::vector<int64_t>> dims;
      std::vector<const float*> srcs;
      for (size_t i : inputs_) {
        dims.push_back(ctx.input(i).dims());
        srcs.push_back(ctx.input(i).data<float>());
      }
      concat_->execute(dims, srcs, ctx.output(0).mutableData<float>(), ctx.scratch().data());
    });
  }

 private:
  std::unique_ptr<Concat> concat_;
  std::vector<size_t> inputs_;
};

}  // namespace

std::vector<std::pair<std::string, partition::PropertyFactory>> concatProperties() {
  return {{"concat", makeProperty}};
}

runtime::KernelCreator concatKernelCreator() { return creatorOf<ConcatRegionKernel>(); }

}  // namespace subgraph::onednn
