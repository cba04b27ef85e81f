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

namespace sp = subgraph::partition::predicates;
using partition::OpMatcher;
using partition::PatternBuilder;
using partition::PatternProperty;

std::unique_ptr<partition::SubgraphProperty> makeProperty() {
  PatternBuilder b("pool");
  b.add(OpMatcher::anyOf({"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"})
            .where(sp::outputRank(4))
            .where([](const Node& n) {
              // The global pools have no auto_pad; the others must not use it.
              return partition::Decision::noIf(n.getString("auto_pad", "NOTSET") != "NOTSET",
                                               "auto_pad is not supported (explicit pads only)");
            })
            .where(predicates::onlyFirstOutputUsed())
            .where([](const Node& n) {
              return partition::Decision::noIf(
                  n.opType() == "MaxPool" && n.getInt("storage_order", 0) != 0,
                  "column-major indices are not supported");
            }));
  return std::make_unique<PatternProperty>("pool", buildPattern(b));
}

class PoolRegionKernel final : public UnaryRegionKernel<Pooling> {
 public:
  explicit PoolRegionKernel(const Node& region) {
    RegionBody body(region);
    const Node& n = body.single("pool", "pool");
    PoolSpec spec;
    const std::string& op = n.opType();
    spec.global = op.rfind("Global", 0) == 0;
    bool isMax = op == "MaxPool" || op == "GlobalMaxPool";
    spec.kind = isMax                              ? PoolSpec::Kind::kMax
                : n.getInt("count_include_pad", 0) ? PoolSpec::Kind::kAverageIncludePad
                                                   : PoolSpec::Kind::kAverageExcludePad;
    if (!spec.global) {
      std::vector<int64_t> k = n.getInts("kernel_shape", {});
      std::vector<int64_t> s = n.getInts("strides", {1, 1});
      std::vector<int64_t> d = n.getInts("dilations", {1, 1});
      std::vector<int64_t> p = n.getInts("pads", {0, 0, 0, 0});
      if (k.size() != 2 || s.size() != 2 || d.size() != 2 || p.size() != 4)
        throw Unsupported("not a 2-D pool");
      spec.kernel = {k[0], k[1]};
      spec.strides = {s[0], s[1]};
      spec.dilations = {d[0], d[1]};
      spec.pads = {p[0], p[1], p[2], p[3]};
      spec.ceilMode = n.getInt("ceil_mode", 0) != 0;
    }
    spec.format = blockedFormat();
    input_ = body.inputIndex(n.input(0));
    core_ = std::make_unique<Pooling>(spec);
  }
};

}  // namespace

std::vector<std::pair<std::string, partition::PropertyFactory>> poolingProperties() {
  return {{"pool", makeProperty}};
}

runtime::KernelCreator poolingKernelCreator() { return creatorOf<PoolRegionKernel>(); }

}  // namespace subgraph::onednn
