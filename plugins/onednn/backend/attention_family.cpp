//===- plugins/onednn/backend/attention_family.cpp - Attention regions -===//
//
// The Attention family; see attention_family.h. What must not fuse, each
// said in the partition report: operands other than f32, a bool mask,
// grouped heads, past keys and values, the present and qk outputs, a
// softcap, causal masking (the kernel has no causal frontier yet: the
// reference runs those), and a Split that is not three column slices of
// the last axis each read once, as Q, K and V in that order.
//
//===----------------------------------------------------------------------===//
#include "attention_family.h"

#include <cmath>

#include "attention.h"
#include "region_support.h"

namespace subgraph::onednn {
namespace {

using predicates::Predicate;

// What the kernel runs: MHA on f32, no cache, no extra outputs.
Predicate runnableAttention() {
  return [](const sdk::NodeView& n) -> sdk::Decision {
    for (size_t i = 0; i < 3; ++i)
      if (!n.input(i) || n.input(i).dtype() != sdk::DataType::kFloat32)
        return sdk::Decision::no("Q, K and V are not all f32");
    if (n.numInputs() > 3 && n.input(3) && n.input(3).dtype() != sdk::DataType::kFloat32)
      return sdk::Decision::no("the mask is not f32 (a bool mask is not planned)");
    if (n.numInputs() > 4 && n.input(4)) return sdk::Decision::no("past keys are not planned");
    for (size_t i = 1; i < n.numOutputs(); ++i)
      if (n.output(i) && numUses(n.output(i)) > 0)
        return sdk::Decision::no("present or qk outputs are read");
    if (n.attrInt("is_causal", 0) != 0) return sdk::Decision::no("causal masking is not planned");
    if (n.attrFloat("softcap", 0.0f) != 0.0f) return sdk::Decision::no("a softcap is not planned");
    std::optional<int32_t> rank = n.input(0).rank();
    if (!rank || (*rank != 3 && *rank != 4)) return sdk::Decision::no("Q is not 3-D or 4-D");
    if (*rank == 3 && n.attrInt("q_num_heads", 0) != n.attrInt("kv_num_heads", 0))
      return sdk::Decision::no("grouped heads are not planned");
    if (*rank == 4 && n.input(1).rank() == 4 && n.input(0).dims()[1] != n.input(1).dims()[1])
      return sdk::Decision::no("grouped heads are not planned");
    return sdk::Decision::yes();
  };
}

// A Split of the last axis into three equal parts, each read once.
Predicate threeEqualColumnSlices() {
  return [](const sdk::NodeView& n) -> sdk::Decision {
    std::optional<int32_t> rank = n.input(0).rank();
    int64_t axis = n.attrInt("axis", 0);
    if (!rank || (axis != -1 && axis != *rank - 1))
      return sdk::Decision::no("the Split is not of the last axis");
    if (n.numOutputs() != 3) return sdk::Decision::no("the Split has not three outputs");
    std::vector<int64_t> sizes;
    if (n.numInputs() > 1 && n.input(1)) {
      if (!isConstant(n.input(1))) return sdk::Decision::no("the split sizes are not constants");
      auto s = n.input(1).constantData<int64_t>();
      sizes.assign(s.begin(), s.end());
    } else {
      sizes = n.attrInts("split");
    }
    if (!sizes.empty() && (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[1] != sizes[2]))
      return sdk::Decision::no("the three slices are not equal");
    return sdk::Decision::yes();
  };
}

std::unique_ptr<sdk::SubgraphProperty> packedProperty() {
  sdk::Pattern p("attention_packed");
  size_t split = p.add(sdk::OpPattern("Split").where(threeEqualColumnSlices()).oneUse());
  size_t att = p.add(sdk::OpPattern("Attention").where(runnableAttention()));
  p.connect(split, att, 0, 0).connect(split, att, 1, 1).connect(split, att, 2, 2);
  return std::make_unique<sdk::PatternProperty>("attention_packed", std::move(p));
}

std::unique_ptr<sdk::SubgraphProperty> plainProperty() {
  sdk::Pattern p("attention");
  p.add(sdk::OpPattern("Attention").where(runnableAttention()));
  return std::make_unique<sdk::PatternProperty>("attention", std::move(p));
}

class AttentionRegionKernel final : public RegionKernel {
 public:
  AttentionRegionKernel(const sdk::NodeView& region, const sdk::KernelContext& context)
      : RegionKernel(context) {
    RegionBody body(region);
    if (body.numOutputs() != 1) throw Unsupported("the region has several outputs");
    std::optional<sdk::NodeView> att = body.find("Attention");
    if (!att) throw Unsupported("an attention region holds no Attention");
    if (!runnableAttention()(*att)) throw Unsupported("the Attention is not one the kernel runs");
    heads_ = att->attrInt("q_num_heads", 0);
    if (att->hasAttr("scale")) scale_ = att->attrFloat("scale", 1.0f);
    if (std::optional<sdk::NodeView> split = body.find("Split")) {
      packed_ = body.inputIndex(split->input(0));
    } else {
      for (size_t i = 0; i < 3; ++i) operands_[i] = body.inputIndex(att->input(i));
    }
    if (att->numInputs() > 3 && att->input(3)) {
      sdk::ValueView mask = att->input(3);
      if (isConstant(mask)) {
        // A causal mask folded to a constant lives in the body.
        constantMask_ = floatsOf(mask);
        constantMaskDims_ = mask.dims();
      } else {
        mask_ = body.inputIndex(mask);
      }
    }
  }

  std::optional<std::vector<sdk::Shape>> resize(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] {
      AttentionProblem p = problem(dimsOf(inputs));
      std::vector<int64_t> y = heads_ > 0
                                   ? std::vector<int64_t>{p.batch, p.qSeq, p.heads * p.vHeadSize}
                                   : std::vector<int64_t>{p.batch, p.heads, p.qSeq, p.vHeadSize};
      return std::vector<sdk::Shape>{{sdk::DataType::kFloat32, std::move(y)}};
    });
  }

  // Per head: Sq x T x (D + Dv) multiply-adds.
  double workOf(std::span<const std::span<const int64_t>> dims) const override {
    std::vector<std::vector<int64_t>> d;
    for (auto s : dims) d.emplace_back(s.begin(), s.end());
    try {
      AttentionProblem p = problem(d);
      return static_cast<double>(p.batch * p.heads * p.qSeq) * static_cast<double>(p.kvSeq) *
             static_cast<double>(p.headSize + p.vHeadSize);
    } catch (const std::invalid_argument&) {
      return 0;  // resize() says what is wrong with the dims
    }
  }

  size_t scratchBytes(const std::vector<sdk::Shape>& inputs) override {
    return guarded(inputs, [&] { return attention_.prepare(problem(dimsOf(inputs))); });
  }

  void runWithScratch(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs,
                      std::span<std::byte> scratch) override {
    guarded(inputs, [&] {
      std::vector<std::vector<int64_t>> d;
      for (const sdk::Tensor& t : inputs) d.emplace_back(t.dims().begin(), t.dims().end());
      AttentionProblem p = problem(d);
      const float* q = packed_ != kNone ? inputs[packed_].data<float>() : nullptr;
      const float* k = q ? q + p.heads * p.headSize : inputs[operands_[1]].data<float>();
      const float* v = q ? k + p.heads * p.headSize : inputs[operands_[2]].data<float>();
      if (!q) q = inputs[operands_[0]].data<float>();
      const float* mask = mask_ != kNone ? inputs[mask_].data<float>() : nullptr;
      if (!constantMaskDims_.empty()) mask = constantMask_.data();
      attention_.execute(p, q, k, v, mask, outputs[0].data<float>(), scratch.data());
    });
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  static std::vector<std::vector<int64_t>> dimsOf(const std::vector<sdk::Shape>& inputs) {
    std::vector<std::vector<int64_t>> d;
    for (const sdk::Shape& s : inputs) d.push_back(s.dims);
    return d;
  }

  // The problem the input dims describe; throws std::invalid_argument when
  // they do not fit each other.
  AttentionProblem problem(const std::vector<std::vector<int64_t>>& d) const {
    AttentionProblem p;
    if (packed_ != kNone) {
      const std::vector<int64_t>& x = d[packed_];
      if (x.size() != 3 || x[2] % 3 != 0 || heads_ <= 0 || (x[2] / 3) % heads_ != 0)
        throw std::invalid_argument("attention: the packed projection is not [B, S, 3 * H * D]");
      p.batch = x[0];
      p.qSeq = p.kvSeq = x[1];
      p.heads = heads_;
      p.headSize = p.vHeadSize = x[2] / 3 / heads_;
      p.q = p.k = p.v = stridesOf3d(x[1], p.headSize, x[2]);
    } else {
      fromOperands(d[operands_[0]], d[operands_[1]], d[operands_[2]], p);
    }
    p.y = heads_ > 0 ? stridesOf3d(p.qSeq, p.vHeadSize, p.heads * p.vHeadSize)
                     : stridesOf4d(p.heads, p.qSeq, p.vHeadSize);
    p.scale = scale_ ? *scale_ : 1.0f / std::sqrt(static_cast<float>(p.headSize));
    if (mask_ != kNone) withMask(d[mask_], p);
    if (!constantMaskDims_.empty()) withMask(constantMaskDims_, p);
    return p;
  }

  void fromOperands(const std::vector<int64_t>& q, const std::vector<int64_t>& k,
                    const std::vector<int64_t>& v, AttentionProblem& p) const {
    const bool threeD = heads_ > 0;
    if (q.size() != (threeD ? 3u : 4u) || k.size() != q.size() || v.size() != q.size())
      throw std::invalid_argument("attention: Q, K and V have other ranks than planned");
    p.batch = q[0];
    if (threeD) {
      if (q[2] % heads_ || k[2] % heads_ || v[2] % heads_)
        throw std::invalid_argument("attention: a hidden size is not a multiple of the heads");
      p.heads = heads_;
      p.qSeq = q[1];
      p.kvSeq = k[1];
      p.headSize = q[2] / heads_;
      p.vHeadSize = v[2] / heads_;
      p.q = stridesOf3d(p.qSeq, p.headSize, q[2]);
      p.k = stridesOf3d(p.kvSeq, p.headSize, k[2]);
      p.v = stridesOf3d(p.kvSeq, p.vHeadSize, v[2]);
    } else {
      p.heads = q[1];
      p.qSeq = q[2];
      p.kvSeq = k[2];
      p.headSize = q[3];
      p.vHeadSize = v[3];
      p.q = stridesOf4d(p.heads, p.qSeq, p.headSize);
      p.k = stridesOf4d(p.heads, p.kvSeq, p.headSize);
      p.v = stridesOf4d(p.heads, p.kvSeq, p.vHeadSize);
    }
    if (k[0] != p.batch || v[0] != p.batch ||
        (threeD ? k[2] : k[3]) / (threeD ? heads_ : 1) != p.headSize ||
        (threeD ? v[1] : v[2]) != p.kvSeq || (!threeD && (k[1] != p.heads || v[1] != p.heads)))
      throw std::invalid_argument("attention: Q, K and V do not fit each other");
  }

  // The mask's strides, right-aligned to [B, H, Sq, T] (0 where it repeats).
  static void withMask(const std::vector<int64_t>& m, AttentionProblem& p) {
    if (m.empty() || m.size() > 4 || m.back() > p.kvSeq)
      throw std::invalid_argument("attention: the mask does not broadcast to the scores");
    const int64_t target[3] = {p.batch, p.heads, p.qSeq};
    int64_t strides[3] = {0, 0, 0};
    int64_t stride = m.back();
    for (size_t i = m.size() - 1; i-- > 0;) {
      const size_t axis = 4 - m.size() + i;
      if (m[i] != 1 && m[i] != target[axis])
        throw std::invalid_argument("attention: the mask does not broadcast to the scores");
      strides[axis] = m[i] == 1 ? 0 : stride;
      stride *= m[i];
    }
    p.hasMask = true;
    p.mask = {strides[0], strides[1], strides[2]};
    p.maskColumn = 1;
    p.maskLength = m.back();
  }

  FusedAttention attention_;
  int64_t heads_ = 0;  // > 0: 3-D operands with this many heads
  std::optional<float> scale_;
  size_t packed_ = kNone;
  size_t operands_[3] = {kNone, kNone, kNone};
  size_t mask_ = kNone;
  std::vector<float> constantMask_;
  std::vector<int64_t> constantMaskDims_;
};

}  // namespace

Family attentionFamily() {
  Family f;
  f.properties.push_back(packedProperty());
  f.properties.push_back(plainProperty());
  f.creator = creatorOf<AttentionRegionKernel>();
  return f;
}

}  // namespace subgraph::onednn
