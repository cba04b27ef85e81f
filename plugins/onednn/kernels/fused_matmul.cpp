//===- plugins/onednn/kernels/fused_matmul.cpp - MatMul/Gemm + bias + eltwise -===//
//
// The cached oneDNN matmul with bias, sum and eltwise post-ops; see
// fused_matmul.h.
//
//===----------------------------------------------------------------------===//
#include "fused_matmul.h"

#include <array>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "dnnl_context.h"

namespace subgraph::onednn {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

namespace {
// Scratch regions start on cache-line boundaries.
size_t aligned(size_t bytes) { return (bytes + 63) / 64 * 64; }
}  // namespace

struct FusedMatMul::Prepared {
  dnnl::matmul primitive;
  dnnl::memory::desc aDesc, bDesc, dstDesc, scratchDesc;
  // bf16 mode: the f32 operands as given, their bf16 copies in scratch, and
  // the reorders between them.
  dnnl::memory::desc aUserDesc, bUserDesc;
  dnnl::reorder aToBf16, bToBf16;
  size_t primitiveScratch = 0, aBytes = 0, bBytes = 0;
  dnnl::memory weights;  // constant B, reordered; empty otherwise
  dnnl::memory bias;
  std::vector<int64_t> outDims;
  size_t scratchBytes = 0;
};

FusedMatMul::FusedMatMul(MatMulSpec spec) : spec_(std::move(spec)) {
  if (!spec_.weights.empty() && (spec_.k < 1 || spec_.n < 1 ||
                                 spec_.weights.size() != static_cast<size_t>(spec_.k * spec_.n)))
    throw std::invalid_argument("matmul: weights must be [K, N] with K, N positive");
  if (!spec_.bias.empty() && !spec_.weights.empty() &&
      spec_.bias.size() != static_cast<size_t>(spec_.n))
    throw std::invalid_argument("matmul: bias must have N elements");
}

std::vector<int64_t> FusedMatMul::outputDims(std::span<const int64_t> a,
                                             std::span<const int64_t> b) const {
  if (a.size() < 2) throw std::invalid_argument("matmul: A must have rank 2 or more");
  std::vector<int64_t> out(a.begin(), a.end());
  if (!spec_.weights.empty()) {
    if (a.back() != spec_.k)
      throw std::invalid_argument(
          fmt::format("matmul: A has {} columns, the weights {} rows", a.back(), spec_.k));
    out.back() = spec_.n;
    return out;
  }
  if (b.size() != a.size() || !std::equal(a.begin(), a.end() - 2, b.begin()))
    throw std::invalid_argument("matmul: A and B must have the same rank and batch dims");
  if (a.back() != b[b.size() - 2])
    throw std::invalid_argument("matmul: inner dims of A and B differ");
  if (!spec_.bias.empty() && spec_.bias.size() != static_cast<size_t>(b.back()))
    throw std::invalid_argument("matmul: bias must have N elements");
  out.back() = b.back();
  return out;
}

std::vector<int64_t> FusedMatMul::key(std::span<const int64_t> a,
                                      std::span<const int64_t> b) const {
  return shapeKey(
      {std::vector<int64_t>(a.begin(), a.end()),
       spec_.weights.empty() ? std::vector<int64_t>(b.begin(), b.end()) : std::vector<int64_t>{}});
}

size_t FusedMatMul::prepare(std::span<const int64_t> aDims, std::span<const int64_t> bDims) {
  std::vector<int64_t> k = key(aDims, bDims);
  if (auto p = cache_.find(k)) return p->scratchBytes;
  auto p = std::make_shared<Prepared>();
  p->outDims = outputDims(aDims, bDims);
  bool constant = !spec_.weights.empty();
  int64_t m = aDims[aDims.size() - 2];
  int64_t kk = aDims.back();
  int64_t n = p->outDims.back();
  dnnl::memory::desc biasDesc;
  if (constant) {
    // Batch dims fold into M: one 2-D matmul with weights reordered once.
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < aDims.size(); ++i) rows *= aDims[i];
    p->aDesc = dnnl::memory::desc({rows, kk}, dt::f32, tag::ab);
    p->bDesc = dnnl::memory::desc({kk, n}, dt::f32, tag::any);
    p->dstDesc = dnnl::memory::desc({rows, n}, dt::f32, tag::ab);
    if (!spec_.bias.empty()) biasDesc = dnnl::memory::desc({1, n}, dt::f32, tag::ab);
  } else {
    int64_t batch = 1;
    for (size_t i = 0; i + 2 < aDims.size(); ++i) batch *= aDims[i];
    p->aDesc = dnnl::memory::desc({batch, m, kk}, dt::f32, tag::abc);
    p->bDesc = dnnl::memory::desc({batch, kk, n}, dt::f32, tag::abc);
    p->dstDesc = dnnl::memory::desc({batch, m, n}, dt::f32, tag::abc);
    if (!spec_.bias.empty()) biasDesc = dnnl::memory::desc({1, 1, n}, dt::f32, tag::abc);
  }
  if (spec_.bf16) {
    // The primitive reads bf16 copies; the user descs stay f32.
    p->aUserDesc = p->aDesc;
    p->aDesc = dnnl::memory::desc(p->aDesc.dims(), dt::bf16, constant ? tag::ab : tag::abc);
    if (constant) {
      p->bDesc = dnnl::memory::desc(p->bDesc.dims(), dt::bf16, tag::any);
    } else {
      p->bUserDesc = p->bDesc;
      p->bDesc = dnnl::memory::desc(p->bDesc.dims(), dt::bf16, tag::abc);
      p->bToBf16 = dnnl::reorder(
          dnnl::reorder::primitive_desc(cpuEngine(), p->bUserDesc, cpuEngine(), p->bDesc));
      p->bBytes = aligned(p->bDesc.get_size());
    }
    p->aToBf16 = dnnl::reorder(
        dnnl::reorder::primitive_desc(cpuEngine(), p->aUserDesc, cpuEngine(), p->aDesc));
    p->aBytes = aligned(p->aDesc.get_size());
  }
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  if (spec_.sumResidual) ops.append_sum(1.0f);
  // Only those oneDNN applies to NaN as ONNX does; execute() applies the
  // rest (activation.h).
  for (size_t i = 0; i < exactPostOps(spec_.activations); ++i)
    appendEltwise(ops, spec_.activations[i]);
  attr.set_post_ops(ops);
  dnnl::matmul::desc desc = spec_.bias.empty()
                                ? dnnl::matmul::desc(p->aDesc, p->bDesc, p->dstDesc)
                                : dnnl::matmul::desc(p->aDesc, p->bDesc, biasDesc, p->dstDesc);
  dnnl::matmul::primitive_desc pd(desc, attr, cpuEngine());
  p->primitive = dnnl::matmul(pd);
  p->scratchDesc = pd.scratchpad_desc();
  p->primitiveScratch = aligned(p->scratchDesc.get_size());
  p->scratchBytes = p->primitiveScratch + p->aBytes + p->bBytes;
  dnnl::stream& stream = threadStream();
  if (constant) {
    p->bDesc = pd.weights_desc();
    dnnl::memory::desc userDesc({kk, n}, dt::f32, tag::ab);
    dnnl::memory user(userDesc, cpuEngine(), const_cast<float*>(spec_.weights.data()));
    p->weights = dnnl::memory(p->bDesc, cpuEngine());
    dnnl::reorder(user, p->weights).execute(stream, user, p->weights);
  }
  if (!spec_.bias.empty()) {
    p->bias = dnnl::memory(biasDesc, cpuEngine());
    std::memcpy(p->bias.get_data_handle(), spec_.bias.data(), spec_.bias.size() * sizeof(float));
  }
  stream.wait();
  return cache_.insert(k, std::move(p))->scratchBytes;
}

void FusedMatMul::execute(std::span<const int64_t> aDims, std::span<const int64_t> bDims,
                          const float* a, const float* b, const float* residual, float* dst,
                          void* scratch) const {
  std::shared_ptr<const Prepared> p = cache_.get(key(aDims, bDims), "matmul");
  if (spec_.sumResidual && residual != dst) std::memcpy(dst, residual, p->dstDesc.get_size());
  dnnl::engine& engine = cpuEngine();
  dnnl::stream& stream = threadStream();
  auto* bytes = static_cast<std::byte*>(scratch);
  dnnl::memory aMem, bMem;
  if (spec_.bf16) {
    // Convert the run-time operands into the scratch after the primitive's.
    dnnl::memory aUser(p->aUserDesc, engine, const_cast<float*>(a));
    aMem = dnnl::memory(p->aDesc, engine, bytes + p->primitiveScratch);
    p->aToBf16.execute(stream, aUser, aMem);
    if (spec_.weights.empty()) {
      dnnl::memory bUser(p->bUserDesc, engine, const_cast<float*>(b));
      bMem = dnnl::memory(p->bDesc, engine, bytes + p->primitiveScratch + p->aBytes);
      p->bToBf16.execute(stream, bUser, bMem);
    }
  } else {
    aMem = dnnl::memory(p->aDesc, engine, const_cast<float*>(a));
    if (spec_.weights.empty()) bMem = dnnl::memory(p->bDesc, engine, const_cast<float*>(b));
  }
  if (!spec_.weights.empty()) bMem = p->weights;
  dnnl::memory dstMem(p->dstDesc, engine, dst);
  dnnl::memory scratchMem(p->scratchDesc, engine, scratch);
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, aMem},
                                             {DNNL_ARG_WEIGHTS, bMem},
                                             {DNNL_ARG_DST, dstMem},
                                             {DNNL_ARG_SCRATCHPAD, scratchMem}};
  if (!spec_.bias.empty()) args.emplace(DNNL_ARG_BIAS, p->bias);
  p->primitive.execute(stream, args);
  stream.wait();
  const std::span<const Activation> acts = spec_.activations;
  const auto elements = static_cast<int64_t>(p->dstDesc.get_size() / sizeof(float));
  applyOnHost(acts.subspan(exactPostOps(acts)), std::array<int64_t, 1>{elements}, Format::kPlain,
              dst);
}

}  // namespace subgraph::onednn
