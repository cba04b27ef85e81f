//===- examples/emulated_device/emudev_plugin.cpp - Backend `emudev` ------===//
//
// Backend `emudev`: a test device for CI machines without a GPU (plugin
// ABI 3). Its EmulatedDevice keeps values in memory the host cannot read
// and runs work on queue threads, so a runtime that forgets a copy or a
// wait fails loudly; its regions compute float32 on the CPU, interpreted
// from each region's body by one generic kernel (RegionKernel).
//
// Properties, all inference-only and on static shapes (so a kernel can use
// the fused node's static output types), in pass order:
//  * conv:    Conv (constant weights, optional constant bias) followed by
//             up to three post-ops. One pattern with optional slots,
//             BatchNormalization|Add|Relu, then Add|Relu, then Relu, covers
//             Conv, Conv+BN, Conv+BN+Relu, Conv+BN+Add+Relu (a ResNet
//             bottleneck's tail) and Conv+Add+Relu. Slots rather than one
//             optional node per op because the host's matcher finds a
//             pattern node only through an edge to a matched node, so a
//             skipped BatchNormalization would cut the chain. The Add's
//             other operand may come from anywhere.
//  * pool:    one MaxPool, AveragePool or GlobalAveragePool.
//  * dense:   Flatten or Gemm, optionally followed by a Gemm.
//  * eltwise: one Relu, Add, Mul or Sigmoid left over by the others, so
//             that values need not leave the device for them.
// Every fused op has the same kernel, "subgraph.emudev.<property>". The
// session's precision is accepted whatever it is: the device computes
// float32, which is at least as exact as any precision asked for.
//
//===----------------------------------------------------------------------===//
#include <subgraph/sdk/plugin.h>

#include <memory>
#include <string>
#include <utility>

#include "emulated_device.h"
#include "region_kernel.h"

namespace {

namespace sdk = subgraph::sdk;
using subgraph::emudev::EmulatedDevice;
using subgraph::emudev::RegionKernel;

constexpr sdk::PropertyOptions kInference{.inferenceOnly = true};

/// Every present input and output of `node` is float32.
sdk::Decision allFloat32(const sdk::NodeView& node) {
  for (size_t i = 0; i < node.numInputs(); ++i)
    if (sdk::ValueView v = node.input(i); v && v.dtype() != sdk::DataType::kFloat32)
      return sdk::Decision::no("input '" + v.name() + "' is not float32, the device's only type");
  for (size_t o = 0; o < node.numOutputs(); ++o)
    if (node.output(o).dtype() != sdk::DataType::kFloat32)
      return sdk::Decision::no("output '" + node.output(o).name() + "' is not float32");
  return sdk::Decision::yes();
}

/// A 2-D window op the interpreter handles: float32, rank-4 input,
/// auto_pad NOTSET or VALID, one output.
sdk::Decision windowFits(const sdk::NodeView& node) {
  if (sdk::Decision d = allFloat32(node); !d) return d;
  if (node.input(0).dims().size() != 4) return sdk::Decision::no("only 2-D (rank-4) inputs");
  std::string autoPad = node.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID")
    return sdk::Decision::no("auto_pad " + autoPad + " is not supported");
  if (node.numOutputs() != 1) return sdk::Decision::no("only one output is supported");
  return sdk::Decision::yes();
}

sdk::Decision convFits(const sdk::NodeView& node) {
  if (sdk::Decision d = windowFits(node); !d) return d;
  if (sdk::ValueView bias = node.input(2); bias && !bias.isConstant())
    return sdk::Decision::no("the bias is not a constant");
  return sdk::Decision::yes();
}

sdk::Decision poolFits(const sdk::NodeView& node) {
  if (node.is("GlobalAveragePool")) return allFloat32(node);
  if (sdk::Decision d = windowFits(node); !d) return d;
  if (node.attrInt("ceil_mode", 0) != 0) return sdk::Decision::no("ceil_mode 1 is not supported");
  if (node.attrInt("storage_order", 0) != 0)
    return sdk::Decision::no("storage_order 1 is not supported");
  return sdk::Decision::yes();
}

/// A post-op of a Conv: a BatchNormalization must be the inference form
/// with constant parameters.
sdk::Decision postOpFits(const sdk::NodeView& node) {
  if (sdk::Decision d = allFloat32(node); !d) return d;
  if (!node.is("BatchNormalization")) return sdk::Decision::yes();
  if (node.numOutputs() != 1 || node.attrInt("training_mode", 0) != 0)
    return sdk::Decision::no("not the inference form of BatchNormalization");
  for (size_t i = 1; i <= 4; ++i)
    if (!node.input(i).isConstant())
      return sdk::Decision::no("input " + std::to_string(i) + " is not a constant");
  return sdk::Decision::yes();
}

sdk::Decision denseFits(const sdk::NodeView& node) {
  if (sdk::Decision d = allFloat32(node); !d) return d;
  if (node.is("Gemm") && (node.input(0).dims().size() != 2 || node.input(1).dims().size() != 2))
    return sdk::Decision::no("A and B of a Gemm must be matrices");
  return sdk::Decision::yes();
}

std::unique_ptr<sdk::SubgraphProperty> convProperty() {
  sdk::Pattern p("conv");
  p.add(sdk::OpPattern("Conv").constantInput(1).staticShapes().where(convFits));
  p.add(sdk::OpPattern("BatchNormalization|Add|Relu").optional().staticShapes().where(postOpFits));
  p.add(sdk::OpPattern("Add|Relu").optional().staticShapes().where(postOpFits));
  p.add(sdk::OpPattern("Relu").optional().staticShapes().where(postOpFits));
  p.connect(0, 1).connect(1, 2).connect(2, 3);  // any input: an Add's operand may be either
  return std::make_unique<sdk::PatternProperty>("conv", std::move(p), kInference);
}

std::unique_ptr<sdk::SubgraphProperty> poolProperty() {
  return std::make_unique<sdk::PatternProperty>(
      "pool",
      sdk::Pattern::chain(
          "pool",
          {sdk::OpPattern("MaxPool|AveragePool|GlobalAveragePool").staticShapes().where(poolFits)}),
      kInference);
}

std::unique_ptr<sdk::SubgraphProperty> denseProperty() {
  return std::make_unique<sdk::PatternProperty>(
      "dense",
      sdk::Pattern::chain("dense",
                          {sdk::OpPattern("Flatten|Gemm").staticShapes().where(denseFits),
                           sdk::OpPattern("Gemm").optional().staticShapes().where(denseFits)}),
      kInference);
}

std::unique_ptr<sdk::SubgraphProperty> eltwiseProperty() {
  return std::make_unique<sdk::PatternProperty>(
      "eltwise",
      sdk::Pattern::chain(
          "eltwise", {sdk::OpPattern("Relu|Add|Mul|Sigmoid").staticShapes().where(allFloat32)}),
      kInference);
}

}  // namespace

SUBGRAPH_PLUGIN("emudev", "1.0.0",
                "A test device for CI: an accelerator emulated on the CPU, whose memory the host "
                "cannot read and whose queues run on threads of their own; float32 Conv, pooling, "
                "Gemm and elementwise regions") {
  if (plugin.hostAbiVersion() < 3)
    throw sdk::Error("emudev needs a host of plugin ABI 3 or later (devices); this host has " +
                         std::to_string(plugin.hostAbiVersion()),
                     SG_UNAVAILABLE);
  // Devices emu:0, emu:1, ...: a session may use as many as its
  // device_count option says, so that CI has several devices to place
  // pipeline stages on.
  plugin.setDevices(
      [](int index) {
        return std::make_unique<EmulatedDevice>(EmulatedDevice::Options{.id = index});
      },
      [](const sdk::KernelContext& session) {
        std::string count = session.option("device_count", "1");
        if (count.size() != 1 || count[0] < '1' || count[0] > '8')
          throw sdk::Error("emudev: option device_count='" + count +
                           "' is not a whole number from 1 to 8");
        return count[0] - '0';
      });
  plugin.addOption({.name = "device_count",
                    .values = {"1", "2", "3", "4", "5", "6", "7", "8"},
                    .defaultValue = "1",
                    .doc = "how many emulated devices (emu:0 ... emu:<n-1>) a session may place "
                           "pipeline stages on, from 1 to 8"});
  plugin.addOption({.name = "delay_us",
                    .defaultValue = "0",
                    .doc = "microseconds each region's work waits on its queue thread, so "
                           "that a missing wait shows (a whole number from 0 to 10000000)"});

  plugin.addProperty(convProperty());
  plugin.addProperty(poolProperty());
  plugin.addProperty(denseProperty());
  plugin.addProperty(eltwiseProperty());
  for (const char* property : {"conv", "pool", "dense", "eltwise"})
    plugin.addKernel(std::string("subgraph.emudev.") + property,
                     [](const sdk::NodeView& fused, const sdk::KernelContext& context) {
                       return RegionKernel::create(fused, context,
                                                   static_cast<EmulatedDevice&>(*context.device));
                     });
}
