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

Family (*const kFamilies[])() = {
    subgraph::onednn::convFamily,
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

}  // namespace

SUBGRAPH_PLUGIN(
    "onednn", "1.0.0",
    "oneDNN CPU backend: fused Conv/BN/sum/activation, MatMul/Gemm, attention, pooling, "
    "normalization, softmax, concat and element-wise regions in blocked layouts") {
  // OpenMP's threads outlive any unload (process_lifetime.h).
  subgraph::onednn::pinLibraryForProcessLifetime();
  subgraph::onednn::registerLayouts(plugin);
  for (Family (*make)() : kFamilies) {
    Family family = make();
    for (auto& property : family.properties) {
      std::string op = "subgraph.onednn." + property->name();
      plugin.addProperty(std::move(property));
      // oneDNN runs on OpenMP: the session must not run other kernels
      // beside one of these.
      plugin.addKernel(op, family.creator, {.usesOwnThreads = true});
    }
  }
}
