//===- plugins/cudnn/cuda_device.cpp - The GPU as the plugin's device -----===//
//
// See cuda_device.h. Staging buffers come from the pinned caching
// allocator and go back to it from a host callback queued after the copy,
// so a buffer is reused only once the copy engine is done with it
// (host callbacks may not call CUDA, and DeviceAllocator::deallocate
// does not).
//
//===----------------------------------------------------------------------===//
#include "cuda_device.h"

#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "device.h"
#include "layout.h"
#include "region_plan.h"

namespace subgraph::cudnn {
namespace {

cudaStream_t streamOf(sdk::Queue q) { return static_cast<cudaStream_t>(q.handle); }

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw sdk::Error(std::string("cudnn: ") + what + ": " + cudaGetErrorString(e));
}

int64_t count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

/// Bytes of a float32 tensor of `dims` in a device layout of `width`-byte
/// elements; 0 for any other element type.
size_t layoutBytes(sdk::DataType dtype, std::span<const int64_t> dims, size_t width) {
  if (dtype != sdk::DataType::kFloat32) return 0;
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  return n * width;
}

// The work a copy down leaves to its host callback.
struct Unpack {
  CudaDevice* device;
  void* staging;
  float* dst;
  std::vector<int64_t> dims;
  DeviceElement element;
};

void CUDART_CB unpackOnHost(void* user) {
  std::unique_ptr<Unpack> u(static_cast<Unpack*>(user));
  try {
    unpackFromDevice(u->staging, u->dst, u->dims, u->element);
  } catch (const std::exception& e) {
    u->device->fail(std::string("cudnn: unpacking a copy to the host: ") + e.what());
  }
  pinnedAllocator().deallocate(u->staging);
}

void CUDART_CB releaseStaging(void* staging) { pinnedAllocator().deallocate(staging); }

std::vector<int64_t> dimsOf(const sdk::Tensor& t) { return {t.dims().begin(), t.dims().end()}; }

/// A copy up into a device layout: pack now (the host source is complete
/// when the copy is submitted), copy in queue order, free the staging after.
void copyUp(const sdk::Tensor& src, const sdk::Tensor& dst, DeviceElement element, sdk::Queue q) {
  void* staging = pinnedAllocator().allocate(dst.bytes());
  try {
    packForDevice(src.data<const float>(), staging, dimsOf(src), element);
    check(cudaMemcpyAsync(dst.raw(), staging, dst.bytes(), cudaMemcpyHostToDevice, streamOf(q)),
          "cudaMemcpyAsync (to the device)");
  } catch (...) {
    pinnedAllocator().deallocate(staging);
    throw;
  }
  check(cudaLaunchHostFunc(streamOf(q), &releaseStaging, staging), "cudaLaunchHostFunc");
}

/// A copy down from a device layout: the host destination is written only
/// in queue order, by the callback after the copy.
void copyDown(CudaDevice& device, const sdk::Tensor& src, const sdk::Tensor& dst,
              DeviceElement element, sdk::Queue q) {
  void* staging = pinnedAllocator().allocate(src.bytes());
  auto work =
      std::make_unique<Unpack>(Unpack{&device, staging, dst.data<float>(), dimsOf(dst), element});
  try {
    check(cudaMemcpyAsync(staging, src.raw(), src.bytes(), cudaMemcpyDeviceToHost, streamOf(q)),
          "cudaMemcpyAsync (to the host)");
    check(cudaLaunchHostFunc(streamOf(q), &unpackOnHost, work.get()), "cudaLaunchHostFunc");
  } catch (...) {
    pinnedAllocator().deallocate(staging);
    throw;
  }
  work.release();  // the callback owns it now
}

}  // namespace

void packForDevice(const float* src, void* dst, const std::vector<int64_t>& dims,
                   DeviceElement element) {
  auto transposeOrCopy = [&](auto* out, auto convert) {
    if (dims.size() == 4)
      transposeBatches(src, out, dims[0], dims[1], dims[2] * dims[3], convert);
    else
      convertElements(src, out, count(dims), convert);
  };
  switch (element) {
    case DeviceElement::kFloat32: return transposeOrCopy(static_cast<float*>(dst), kSameFloat);
    case DeviceElement::kFloat16: return transposeOrCopy(static_cast<uint16_t*>(dst), floatToHalf);
    case DeviceElement::kBfloat16:
      return transposeOrCopy(static_cast<uint16_t*>(dst), floatToBfloat16);
  }
}

void unpackFromDevice(const void* src, float* dst, const std::vector<int64_t>& dims,
                      DeviceElement element) {
  auto transposeOrCopy = [&](const auto* in, auto convert) {
    if (dims.size() == 4)
      transposeBatches(in, dst, dims[0], dims[2] * dims[3], dims[1], convert);
    else
      convertElements(in, dst, count(dims), convert);
  };
  switch (element) {
    case DeviceElement::kFloat32:
      return transposeOrCopy(static_cast<const float*>(src), kSameFloat);
    case DeviceElement::kFloat16:
      return transposeOrCopy(static_cast<const uint16_t*>(src), halfToFloat);
    case DeviceElement::kBfloat16:
      return transposeOrCopy(static_cast<const uint16_t*>(src), bfloat16ToFloat);
  }
}

CudaDevice::CudaDevice() {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) description_ = prop.name;
}

void* CudaDevice::allocate(size_t bytes, size_t /*alignment: cudaMalloc gives 256*/) {
  try {
    return deviceAllocator().allocate(bytes);
  } catch (const std::exception&) {
    return nullptr;
  }
}

void CudaDevice::deallocate(void* ptr) { deviceAllocator().deallocate(ptr); }

sdk::Queue CudaDevice::createQueue() {
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  return sdk::Queue{s};
}

void CudaDevice::destroyQueue(sdk::Queue queue) {
  cudaStreamSynchronize(streamOf(queue));
  cudaStreamDestroy(streamOf(queue));
}

void CudaDevice::fail(std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.empty()) pending_ = std::move(message);
}

void CudaDevice::throwPending() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pending_.empty()) return;
  std::string message = std::move(pending_);
  pending_.clear();
  throw sdk::Error(message);
}

void CudaDevice::synchronize(sdk::Queue queue) {
  check(cudaStreamSynchronize(streamOf(queue)), "cudaStreamSynchronize");
  throwPending();
}

void* CudaDevice::createEvent() {
  cudaEvent_t e = nullptr;
  check(cudaEventCreate(&e), "cudaEventCreate");
  return e;
}

void CudaDevice::destroyEvent(void* event) { cudaEventDestroy(static_cast<cudaEvent_t>(event)); }

void CudaDevice::record(void* event, sdk::Queue queue) {
  check(cudaEventRecord(static_cast<cudaEvent_t>(event), streamOf(queue)), "cudaEventRecord");
}

void CudaDevice::synchronizeEvent(void* event) {
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize");
  throwPending();
}

void CudaDevice::waitEvent(sdk::Queue queue, void* event) {
  check(cudaStreamWaitEvent(streamOf(queue), static_cast<cudaEvent_t>(event), 0),
        "cudaStreamWaitEvent");
}

double CudaDevice::elapsedMs(void* start, void* end) {
  float ms = 0;
  if (cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)) !=
      cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return ms;
}

void CudaDevice::copyToDevice(sdk::Queue queue, const sdk::Tensor& src, const sdk::Tensor& dst) {
  check(cudaMemcpyAsync(dst.raw(), src.raw(), dst.bytes(), cudaMemcpyHostToDevice, streamOf(queue)),
        "cudaMemcpyAsync (to the device)");
}

void CudaDevice::copyToHost(sdk::Queue queue, const sdk::Tensor& src, const sdk::Tensor& dst) {
  check(cudaMemcpyAsync(dst.raw(), src.raw(), dst.bytes(), cudaMemcpyDeviceToHost, streamOf(queue)),
        "cudaMemcpyAsync (to the host)");
}

void CudaDevice::copyOnDevice(sdk::Queue queue, const sdk::Tensor& src, const sdk::Tensor& dst) {
  check(
      cudaMemcpyAsync(dst.raw(), src.raw(), dst.bytes(), cudaMemcpyDeviceToDevice, streamOf(queue)),
      "cudaMemcpyAsync (on the device)");
}

DeviceLayouts addDeviceLayouts(sdk::Plugin& plugin, CudaDevice& device) {
  DeviceLayouts l;
  auto layout = [&](const char* name, size_t width) {
    return plugin.addLayout(name, [width](sdk::DataType t, std::span<const int64_t> dims) {
      return layoutBytes(t, dims, width);
    });
  };
  l.f32 = layout("nhwc", 4);
  l.f16 = layout("nhwc.f16", 2);
  l.bf16 = layout("nhwc.bf16", 2);
  const std::pair<const sdk::Layout*, DeviceElement> kinds[] = {{l.f32, DeviceElement::kFloat32},
                                                                {l.f16, DeviceElement::kFloat16},
                                                                {l.bf16, DeviceElement::kBfloat16}};
  sdk::CopyOptions f32{.dtype = sdk::DataType::kFloat32};
  for (const auto& [to, element] : kinds) {
    DeviceElement e = element;
    plugin.addDeviceCopy(
        nullptr, to, sdk::CopyDirection::kHostToDevice,
        [e](sdk::Queue q, const sdk::Tensor& s, const sdk::Tensor& d) { copyUp(s, d, e, q); }, f32);
    plugin.addDeviceCopy(
        to, nullptr, sdk::CopyDirection::kDeviceToHost,
        [&device, e](sdk::Queue q, const sdk::Tensor& s, const sdk::Tensor& d) {
          copyDown(device, s, d, e, q);
        },
        f32);
  }
  return l;
}

void CudaDevice::beginCapture(sdk::Queue queue) {
  check(cudaStreamBeginCapture(streamOf(queue), cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture");
}

void* CudaDevice::endCapture(sdk::Queue queue) {
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(streamOf(queue), &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  check(made, "cudaGraphInstantiate");
  return exec;
}

void CudaDevice::launch(void* graph, sdk::Queue queue) {
  check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), streamOf(queue)), "cudaGraphLaunch");
}

void CudaDevice::destroyGraph(void* graph) {
  cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph));
}

}  // namespace subgraph::cudnn
