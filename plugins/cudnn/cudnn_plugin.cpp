//===- plugins/cudnn/cudnn_plugin.cpp - The cuDNN backend plugin's entry ---===//
//
// Backend `cudnn`: fused Conv/BatchNormalization/Add/activation, MatMul and
// Gemm with bias and activation, pooling and element-wise chains, each run
// as one cuDNN 9 operation graph on an NVIDIA GPU (docs/cudnn.md). The GPU
// is the plugin's device (plugin ABI 3, cuda_device.h): values stay in its
// memory, channels-last, between regions, and cross to the host only where
// a host node or a graph output reads them.
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
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "device.h"
#include "region_plan.h"
#include "selection.h"

namespace {

namespace sdk = subgraph::sdk;
namespace cudnn = subgraph::cudnn;

void addOptions(sdk::Plugin& plugin) {
  plugin.addOption({.name = "precision",
                    .values = {"fp32", "tf32", "fp16", "bf16"},
                    .defaultValue = "the session's precision",
                    .doc = "what the regions compute in; selection checks engines in it too"});
  plugin.addOption({.name = "fusion",
                    .values = {"on", "off"},
                    .defaultValue = "on",
                    .doc = "off: one ONNX compute op per region (a BN still folds into its "
                           "Conv), to measure what fusion buys"});
  plugin.addOption({.name = "verbose",
                    .values = {"on", "off"},
                    .defaultValue = "off",
                    .doc = "on: print each region's cuDNN engine when the session starts"});
}

/// Whether environment variable `name` is "1": only for
/// SUBGRAPH_CUDNN_SELECTION_ONLY, which decides at load time, before any
/// session exists, whether the plugin touches a device at all.
bool envFlag(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "1") == 0;
}

/// One fused region: planned at creation (host only), compiled for the
/// device in the session prologue, submitted to the session's stream per
/// request with its operands in device memory (plugin ABI 3).
class CudnnRegionKernel final : public sdk::Kernel {
 public:
  /// `layouts` is empty without a device (selection-only mode).
  CudnnRegionKernel(const sdk::NodeView& node, const sdk::KernelContext& context,
                    std::optional<cudnn::DeviceLayouts> layouts) {
    // Without a device the kernel declines whatever the plan would be, so
    // decline before planning: a plan copies and folds every weight.
    if (!layouts)
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
    // context), unless the plugin option `cudnn.precision` sets another:
    // the rule selection followed (selectionOptionsFor), so the engine
    // checked at partition time is the engine that runs.
    precision_ = cudnn::selectionOptionsFor(context).precision;
    verbose_ = context.option("verbose", "off") == "on";
    layout_ = precision_ == cudnn::Precision::kFp16   ? layouts->f16
              : precision_ == cudnn::Precision::kBf16 ? layouts->bf16
                                                      : layouts->f32;
  }

  void sessionPrologue() override {
    region_ = std::make_unique<cudnn::DeviceRegion>(plan_, precision_, name_);
    // The plugin option `cudnn.verbose=on` names each region's engine
    // (docs/cudnn.md).
    if (verbose_)
      std::fprintf(stderr, "cudnn: %s (%s, %s): %s\n", name_.c_str(), plan_.summary.c_str(),
                   cudnn::precisionName(precision_), region_->engine().c_str());
  }

  // Every operand lives in the plugin's device layout, so a value passed
  // between two cuDNN regions is never copied.
  const sdk::Layout* inputLayout(size_t) const override { return layout_; }
  const sdk::Layout* outputLayout(size_t) const override { return layout_; }

  size_t scratchBytes(const std::vector<sdk::Shape>&) override {
    return region_ ? region_->workspaceBytes() : 0;
  }

  void runOnQueue(sdk::Queue queue, std::span<const sdk::Tensor> in,
                  std::span<const sdk::Tensor> out, std::span<std::byte> scratch) override {
    if (!region_) throw sdk::Error("cudnn: run before the session prologue");
    if (in.size() != plan_.inputTensors.size() || out.size() != plan_.outputTensors.size())
      throw sdk::Error("cudnn: the fused node's arity does not match its plan");
    if (scratch.size() < region_->workspaceBytes())
      throw sdk::Error("cudnn: the host gave less workspace than the plan needs");
    std::vector<void*> inputs, outputs;
    for (size_t i = 0; i < in.size(); ++i) {
      check(in[i], plan_.tensors[static_cast<size_t>(plan_.inputTensors[i])], "input", i);
      inputs.push_back(in[i].raw());
    }
    for (size_t o = 0; o < out.size(); ++o) {
      check(out[o], plan_.tensors[static_cast<size_t>(plan_.outputTensors[o])], "output", o);
      outputs.push_back(out[o].raw());
    }
    region_->enqueue(static_cast<CUstream_st*>(queue.handle), inputs, outputs,
                     scratch.empty() ? nullptr : scratch.data());
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
  bool verbose_ = false;
  const sdk::Layout* layout_ = nullptr;
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
  // With a device, values live in its memory between regions (ABI 3).
  std::optional<cudnn::DeviceLayouts> layouts;
  if (haveDevice) {
    auto device = std::make_unique<cudnn::CudaDevice>();
    layouts = cudnn::addDeviceLayouts(plugin, *device);
    plugin.setDevice(std::move(device));
  }
  addOptions(plugin);
  // Selection depends on the session: its precision decides which engines
  // exist, and `fusion` how much a region takes.
  plugin.setProperties([haveDevice](const sdk::KernelContext& session) {
    cudnn::SelectionOptions options = cudnn::selectionOptionsFor(session);
    cudnn::EngineCheck check;
    if (haveDevice)
      check = [precision = options.precision](const cudnn::RegionPlan& plan) {
        return cudnn::checkEngine(plan, precision);
      };
    return cudnn::cudnnProperties(std::move(check), options);
  });
  for (const char* op : cudnn::kFusedOps)
    plugin.addKernel(op, [layouts](const sdk::NodeView& node, const sdk::KernelContext& ctx) {
      return std::make_unique<CudnnRegionKernel>(node, ctx, layouts);
    });
}
