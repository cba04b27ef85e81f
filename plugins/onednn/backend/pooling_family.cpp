//===- plugins/onednn/backend/pooling_family.cpp - Pooling regions -===//
//
// The pooling family; see pooling_family.h. What must not fuse: pools that
// are not 2-D (oneDNN's NCHW kernel), auto_pad (the kernel reads explicit
// pads), and MaxPool asked for its indices output.
//
//===----------------------------------------------------------------------===//
#include "pooling_family.h"

#include "pooling.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

std::unique_ptr<sdk::SubgraphProperty> makeProperty() {
  sdk::Pattern p("pool");
  p.add(sdk::OpPattern("MaxPool|AveragePool|GlobalAveragePool|GlobalMaxPool")
            .where(predicates::outputRank(4))
            .where([](const sdk::NodeView& n) {
              // The global pools have no auto_pad; the others must not use it.
              if (n.attrString("auto_pad", "NOTSET") != "NOTSET")
                return sdk::Decision::no("auto_pad is not supported (explicit pads only)");
              return sdk::Decision::yes();
            })
            .where(predicates::onlyFirstOutputUsed())
            .where([](const sdk::NodeView& n) {
              if (n.opTypeView() == "MaxPool" && n.attrInt("storage_order", 0) != 0)
                return sdk::Decision::no("column-major indices are not supported");
              return sdk::Decision::yes();
            }));
  return std::make_unique<sdk::PatternProperty>("pool", std::move(p));
}

class PoolRegionKernel final : public UnaryRegionKernel<Pooling> {
 public:
  PoolRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : UnaryRegionKernel<Pooling>(context) {
    RegionBody body(region);
    const sdk::NodeView& n = body.single("pool", "pool");
    PoolSpec spec;
    const std::string op = n.opType();
    spec.global = op.rfind("Global", 0) == 0;
    bool isMax = op == "MaxPool" || op == "GlobalMaxPool";
    spec.kind = isMax                               ? PoolSpec::Kind::kMax
                : n.attrInt("count_include_pad", 0) ? PoolSpec::Kind::kAverageIncludePad
                                                    : PoolSpec::Kind::kAverageExcludePad;
    if (!spec.global) {
      std::vector<int64_t> k = n.attrInts("kernel_shape", {});
      std::vector<int64_t> s = n.attrInts("strides", {1, 1});
      std::vector<int64_t> d = n.attrInts("dilations", {1, 1});
      std::vector<int64_t> p = n.attrInts("pads", {0, 0, 0, 0});
      if (k.size() != 2 || s.size() != 2 || d.size() != 2 || p.size() != 4)
        throw Unsupported("not a 2-D pool");
      spec.kernel = {k[0], k[1]};
      spec.strides = {s[0], s[1]};
      spec.dilations = {d[0], d[1]};
      spec.pads = {p[0], p[1], p[2], p[3]};
      spec.ceilMode = n.attrInt("ceil_mode", 0) != 0;
    }
    spec.format = blockedFormat(region, context);
    input_ = body.inputIndex(n.input(0));
    core_ = std::make_unique<Pooling>(spec);
  }
};

}  // namespace

Family poolingFamily() {
  Family f;
  f.properties.push_back(makeProperty());
  f.creator = creatorOf<PoolRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
