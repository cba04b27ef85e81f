//===- plugins/cudnn/cuda_device.h - The GPU as the plugin's device -*- C++ -*-===//
//
// The cuDNN plugin's device under plugin ABI 3: CUDA memory (the caching
// DeviceAllocator), a CUDA stream per session queue, CUDA events, and the
// copies across the device boundary. Values live on the device in the
// plugin's layouts, one per precision:
//  * `nhwc`     float32, channels-last when the logical rank is 4 (what
//               cuDNN's fused convolution engines want), row-major else;
//  * `nhwc.f16` the same order in IEEE binary16 (the fp16 mode);
//  * `nhwc.bf16` the same order in bfloat16 (the bf16 mode).
// A copy up packs the host's NCHW float32 into pinned staging (transposed
// and converted on the host, tiled and parallel; layout.h) and copies it
// asynchronously; a copy down copies into pinned staging and unpacks on
// the stream's host-callback thread, so neither blocks the submitting
// thread and both keep queue order. Errors found on the stream are kept
// and reported by the next synchronize.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <subgraph/sdk/plugin.h>

#include <mutex>
#include <string>

namespace subgraph::cudnn {

/// CUDA device 0 as an sdk::AcceleratorDevice.
class CudaDevice final : public sdk::AcceleratorDevice {
 public:
  CudaDevice();
  std::string kind() const override { return "cuda"; }
  int id() const override { return 0; }
  std::string description() const override { return description_; }

  void* allocate(size_t bytes, size_t alignment) override;
  void deallocate(void* ptr) override;
  sdk::Queue createQueue() override;
  void destroyQueue(sdk::Queue queue) override;
  void synchronize(sdk::Queue queue) override;
  void* createEvent() override;
  void destroyEvent(void* event) override;
  void record(void* event, sdk::Queue queue) override;
  void synchronizeEvent(void* event) override;
  void waitEvent(sdk::Queue queue, void* event) override;
  double elapsedMs(void* start, void* end) override;
  void copyToDevice(sdk::Queue queue, const sdk::Tensor& src, const sdk::Tensor& dst) override;
  void copyToHost(sdk::Queue queue, const sdk::Tensor& src, const sdk::Tensor& dst) override;
  void copyOnDevice(sdk::Queue queue, const sdk::Tensor& src, const sdk::Tensor& dst) override;

  /// CUDA graphs (plugin ABI 5): stream capture in thread-local mode, one
  /// instantiated graph per recording. Not yet run on a GPU; where a
  /// region cannot be captured the host runs its steps one by one.
  bool canCapture() const override { return true; }
  void beginCapture(sdk::Queue queue) override;
  void* endCapture(sdk::Queue queue) override;
  void launch(void* graph, sdk::Queue queue) override;
  void destroyGraph(void* graph) override;

  /// Records an error found on a stream's host-callback thread (which must
  /// not throw); the next synchronize reports it.
  void fail(std::string message);

 private:
  void throwPending();

  std::string description_;
  std::mutex mutex_;
  std::string pending_;  // the first error from a host callback
};

/// The plugin's device layouts, all channels-last for rank 4: float32
/// (`nhwc`), binary16 (`nhwc.f16`) and bfloat16 (`nhwc.bf16`).
struct DeviceLayouts {
  const sdk::Layout* f32 = nullptr;
  const sdk::Layout* f16 = nullptr;
  const sdk::Layout* bf16 = nullptr;
};

/// The element type a device layout holds.
enum class DeviceElement { kFloat32, kFloat16, kBfloat16 };

/// Registers the two layouts and the copies from host NCHW float32 into
/// each and back (the plain copies come from `device`).
DeviceLayouts addDeviceLayouts(sdk::Plugin& plugin, CudaDevice& device);

/// Host side of a copy up: NCHW float32 `src` into `dst` in the layout,
/// channels-last for rank 4, converted to `element`. No CUDA.
void packForDevice(const float* src, void* dst, const std::vector<int64_t>& dims,
                   DeviceElement element);
/// Host side of a copy down: the inverse of packForDevice. No CUDA.
void unpackFromDevice(const void* src, float* dst, const std::vector<int64_t>& dims,
                      DeviceElement element);

}  // namespace subgraph::cudnn
