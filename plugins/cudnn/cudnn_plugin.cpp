//===- plugins/cudnn/cudnn_plugin.cpp - The cuDNN backend plugin's entry ---===//
//
// Backend `cudnn`: fused Conv/BatchNormalization/Add/activation, MatMul and
// Gemm with bias and activation, pooling and element-wise chains, each run
// as one cuDNN 9 operation graph on an NVIDIA GPU (docs/cudnn.md).
//
// The entry point asks CUDA for a device first. Without one it refuses with
// SG_UNAVAILABLE and one line ("cudnn: no CUDA device (...)"): the loader
// reports it as the plugin's error, `subgraph plugins` lists the plugin as
// unavailable, and SUBGRAPH_BACKEND=cudnn fails with that line (or is
// skipped with a warning under --allow-fallback), like any plugin that
// cannot load.
//
// SUBGRAPH_CUDNN_SELECTION_ONLY=1 loads it anyway, for selection and
// partitioning without a GPU (tests, `subgraph partition` on a laptop):
// regions are then accepted on the host-side plan alone (no engine check is
// possible), and every kernel creator declines, so the regions run on
// subgraph's default executor. Nothing is ever computed on a fake device.
//
//===----------------------------------------------------------------------===//
#include <subgraph/sdk/plugin.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "device.h"
#include "region_plan.h"
#include "selection.h"

namespace {

namespace sdk = subgraph::sdk;
namespace cudnn = subgraph::cudnn;

/// Whether environment variable `name` is "1".
bool envFlag(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "1") == 0;
}

/// One fused region: planned at creation (host only), compiled for the
/// device in the session prologue, run per request.
class CudnnRegionKernel final : public sdk::Kernel {
 public:
  CudnnRegionKernel(const sdk::NodeView& node, const sdk::KernelContext& context, bool haveDevice) {
    // Without a device the kernel declines whatever the plan would be, so
    // decline before planning: a plan copies and folds every weight.
    if (!haveDevice)
      throw sdk::Unsupported(
          "cudnn: selection-only mode (no CUDA device used); the region runs on "
          "the default executor");
    std::optional<sdk::GraphView> body = node.body();
    if (!body) throw sdk::Unsupported("cudnn: fused node '" + node.name() + "' has no body");
    cudnn::PlanResult planned = cudnn::buildRegionPlan(*body);
    if (!planned.plan) throw sdk::Unsupported(planned.reason);
    plan_ = std::move(*planned.plan);
    name_ = node.name();
    // The session's precision (`run --precision`, through the kernel
    // context); the plugin option `cudnn.precision` wins, then
    // $SUBGRAPH_CUDNN_PRECISION, which selection also reads.
    std::string precision = context.option("precision", context.precision);
    precision_ =
        precision.empty() ? cudnn::precisionFromEnvironment() : cudnn::parsePrecision(precision);
  }

  void sessionPrologue() override {
    // SUBGRAPH_CUDNN_VERBOSE=1 names each region's engine, and prints where
    // its time went when the session ends (docs/cudnn.md).
    const bool verbose = envFlag("SUBGRAPH_CUDNN_VERBOSE");
    const cudnn::Precision precision = precision_;
    region_ = std::make_unique<cudnn::DeviceRegion>(plan_, precision, name_, verbose);
    if (verbose)
      std::fprintf(stderr, "cudnn: %s (%s, %s): %s\n", name_.c_str(), plan_.summary.c_str(),
                   cudnn::precisionName(precision), region_->engine().c_str());
  }

  void run(std::span<const sdk::Tensor> in, std::span<const sdk::Tensor> out) override {
    if (!region_) throw sdk::Error("cudnn: run before the session prologue");
    if (in.size() != plan_.inputTensors.size() || out.size() != plan_.outputTensors.size())
      throw sdk::Error("cudnn: the fused node's arity does not match its plan");
    std::vector<const float*> inputs;
    std::vector<float*> outputs;
    for (size_t i = 0; i < in.size(); ++i) {
      check(in[i], plan_.tensors[static_cast<size_t>(plan_.inputTensors[i])], "input", i);
      inputs.push_back(in[i].data<const float>());
    }
    for (size_t o = 0; o < out.size(); ++o) {
      check(out[o], plan_.tensors[static_cast<size_t>(plan_.outputTensors[o])], "output", o);
      outputs.push_back(out[o].data<float>());
    }
    region_->run(inputs, outputs);
  }

 private:
  /// Plans are built for static shapes: a request of another shape is an
  /// error, not a silent wrong answer.
  static void check(const sdk::Tensor& t, const cudnn::PlanTensor& p, const char* what, size_t i) {
    int64_t planned = 1;
    for (int64_t d : p.dims) planned *= d;
    if (t.dtype() != sdk::DataType::kFloat32 || t.numElements() != planned)
      throw sdk::Error("cudnn: " + std::string(what) + " " + std::to_string(i) +
                       " does not have the planned float32 shape");
  }

  cudnn::RegionPlan plan_;
  std::string name_;
  cudnn::Precision precision_ = cudnn::Precision::kFp32;
  std::unique_ptr<cudnn::DeviceRegion> region_;
};

}  // namespace

SUBGRAPH_PLUGIN("cudnn", "0.1.0",
                "cuDNN 9 on NVIDIA GPUs: Conv+BN+Add+activation, MatMul/Gemm+bias+activation, "
                "pooling and element-wise chains as fused operation graphs") {
  // Selection-only mode never touches the device, even where there is one,
  // so partitions (and the tests) are the same on every machine.
  const bool haveDevice = !envFlag("SUBGRAPH_CUDNN_SELECTION_ONLY");
  if (haveDevice) {
    if (std::string noDevice = cudnn::probeDevice(); !noDevice.empty())
      throw sdk::Error(
          "cudnn: " + noDevice + "; set SUBGRAPH_CUDNN_SELECTION_ONLY=1 to partition without a GPU",
          SG_UNAVAILABLE);
  }
  cudnn::addCudnnProperties(
      plugin, haveDevice ? cudnn::EngineCheck(&cudnn::checkEngine) : cudnn::EngineCheck(),
      cudnn::selectionOptionsFromEnvironment());
  for (const char* op : cudnn::kFusedOps)
    plugin.addKernel(op, [haveDevice](const sdk::NodeView& node, const sdk::KernelContext& ctx) {
      return std::make_unique<CudnnRegionKernel>(node, ctx, haveDevice);
    });
}
