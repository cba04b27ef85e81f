//===- plugins/onednn/backend/registration.cpp - The plugin's registrations -===//
//
// Nothing but registrations (after pinning the library in the process,
// which its OpenMP threads need): the plugin's layouts and copies, then each
// family's properties in priority order (longer fusions first, so a Conv is
// not taken by a shorter pattern before a longer one sees it), each with
// its family's kernel creator for the fused op.
//
//===----------------------------------------------------------------------===//
#include <subgraph/sdk/plugin.h>

#include "attention_family.h"
#include "binary_family.h"
#include "channel_scale_family.h"
#include "concat_family.h"
#include "conv_family.h"
#include "deconv_family.h"
#include "eltwise_family.h"
#include "gather_family.h"
#include "index_family.h"
#include "layernorm_family.h"
#include "layout_copies.h"
#include "matmul_family.h"
#include "pooling_family.h"
#include "process_lifetime.h"
#include "quantized_family.h"
#include "resize_family.h"
#include "select_family.h"
#include "softmax_family.h"
#include "transpose_family.h"

namespace {

using subgraph::onednn::Family;

namespace sdk = subgraph::sdk;

// After convFamily, which depends on the session.
Family (*const kFamilies[])() = {
    subgraph::onednn::matmulFamily,
    subgraph::onednn::attentionFamily,
    subgraph::onednn::quantizedFamily,
    subgraph::onednn::poolingFamily,
    subgraph::onednn::deconvFamily,
    subgraph::onednn::resizeFamily,
    subgraph::onednn::layernormFamily,
    subgraph::onednn::softmaxFamily,
    subgraph::onednn::concatFamily,
    subgraph::onednn::channelScaleFamily,
    // After every family that takes an Add or a Mul as a post-op.
    subgraph::onednn::binaryFamily,
    subgraph::onednn::gatherFamily,
    subgraph::onednn::transposeFamily,
    subgraph::onednn::selectFamily,
    // Last: a chain of activations is what the families above leave over.
    subgraph::onednn::eltwiseFamily,
    // Integer and bool steps no float family reads (position ids).
    subgraph::onednn::indexFamily,
};

// Every family, in priority order, for one session.
std::vector<Family> familiesFor(const sdk::KernelContext& session) {
  std::vector<Family> out;
  out.push_back(subgraph::onednn::convFamily(session));
  for (Family (*make)() : kFamilies) out.push_back(make());
  return out;
}

std::vector<std::unique_ptr<sdk::SubgraphProperty>> propertiesFor(
    const sdk::KernelContext& session) {
  std::vector<std::unique_ptr<sdk::SubgraphProperty>> out;
  for (Family& family : familiesFor(session))
    for (auto& property : family.properties) out.push_back(std::move(property));
  return out;
}

void addOptions(sdk::Plugin& plugin) {
  plugin.addOption({.name = "precision",
                    .values = {"fp32", "bf16"},
                    .defaultValue = "the session's precision",
                    .doc = "bf16 computes in bfloat16 on AVX512-BF16/AMX CPUs; fp32 keeps oneDNN "
                           "exact in a session of another precision"});
  plugin.addOption({.name = "fusion",
                    .values = {"all", "act", "bn", "none"},
                    .defaultValue = "all",
                    .doc = "how much a Conv region takes: everything, BN and activations, BN "
                           "only, or the bare Conv (to measure what fusion buys)"});
  plugin.addOption({.name = "winograd",
                    .values = {"on", "off"},
                    .defaultValue = "on",
                    .doc = "off keeps fp32 3x3 stride-1 convolutions on the direct algorithm"});
}

}  // namespace

SUBGRAPH_PLUGIN(
    "onednn", "1.0.0",
    "oneDNN CPU backend: fused Conv/BN/sum/activation, MatMul/Gemm, attention, pooling, "
    "normalization, softmax, concat and element-wise regions in blocked layouts") {
  // OpenMP's threads outlive any unload (process_lifetime.h).
  subgraph::onednn::pinLibraryForProcessLifetime();
  subgraph::onednn::registerLayouts(plugin);
  addOptions(plugin);
  // The properties depend on the session (option `fusion`); the kernels,
  // one per property of the default session (which has them all), do not.
  for (Family& family : familiesFor(sdk::KernelContext{}))
    for (const auto& property : family.properties)
      // oneDNN runs on OpenMP: a request must not run other kernels beside
      // one of these. Two requests may: each call runs on its thread's
      // stream with an OpenMP team of the session's size
      // (kernels/dnnl_context.h), and what a kernel prepares per shape is
      // synchronized (kernels/shape_cache.h).
      plugin.addKernel("subgraph.onednn." + property->name(), family.creator,
                       {.usesOwnThreads = true, .concurrentRequests = true});
  plugin.setProperties(&propertiesFor);
}
