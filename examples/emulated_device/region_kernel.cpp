//===- examples/emulated_device/region_kernel.cpp - emudev's one kernel ---===//
//
// What runOnQueue checks at submission and what its task does on the
// queue's worker (see region_kernel.h).
//
//===----------------------------------------------------------------------===//
#include "region_kernel.h"

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <utility>
#include <vector>

namespace subgraph::emudev {
namespace {

std::string dimsText(std::span<const int64_t> dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

}  // namespace

RegionKernel::RegionKernel(std::shared_ptr<const RegionProgram> program, EmulatedDevice& device,
                           std::string name)
    : program_(std::move(program)), device_(device), name_(std::move(name)) {}

std::unique_ptr<RegionKernel> RegionKernel::create(const sdk::NodeView& fused,
                                                   const sdk::KernelContext& context,
                                                   EmulatedDevice& device) {
  auto program = std::make_shared<const RegionProgram>(readBody(fused));
  auto kernel = std::make_unique<RegionKernel>(std::move(program), device, fused.name());
  std::string delay = context.option("delay_us", "0");
  char* end = nullptr;
  long long us = std::strtoll(delay.c_str(), &end, 10);
  if (delay.empty() || *end != '\0' || us < 0 || us > 10'000'000)
    throw sdk::Error("emudev: option delay_us='" + delay +
                     "' is not a whole number of microseconds from 0 to 10000000");
  kernel->delay_ = std::chrono::microseconds(us);
  return kernel;
}

void RegionKernel::checkTensor(const sdk::Tensor& t, const std::vector<int64_t>& dims,
                               const std::string& what) const {
  if (t.dtype() != sdk::DataType::kFloat32) throw sdk::Error("emudev: " + what + " is not float32");
  if (!std::equal(t.dims().begin(), t.dims().end(), dims.begin(), dims.end()))
    throw sdk::Error("emudev: " + what + " has dims " + dimsText(t.dims()) +
                     ", the region was compiled for " + dimsText(dims));
  if (t.bytes() != static_cast<size_t>(numElements(dims)) * sizeof(float))
    throw sdk::Error("emudev: " + what + " has " + std::to_string(t.bytes()) + " bytes for dims " +
                     dimsText(dims));
  // Early and synchronous: a host pointer here is a copy the host forgot.
  device_.translate(t.raw(), t.bytes(), what);
}

void RegionKernel::runOnQueue(sdk::Queue queue, std::span<const sdk::Tensor> inputs,
                              std::span<const sdk::Tensor> outputs, std::span<std::byte> scratch) {
  (void)scratch;  // intermediates live in the task's own buffers
  if (inputs.size() != program_->numInputs() || outputs.size() != program_->numOutputs())
    throw sdk::Error("emudev: '" + name_ + "' has " + std::to_string(program_->numInputs()) +
                     " inputs and " + std::to_string(program_->numOutputs()) +
                     " outputs, the host passed " + std::to_string(inputs.size()) + " and " +
                     std::to_string(outputs.size()));
  // Only pointers and sizes travel to the task: the Tensors die with this call.
  struct Buffer {
    void* data;
    size_t bytes;
    std::string what;
  };
  std::vector<Buffer> buffers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string what = "input " + std::to_string(i) + " of '" + name_ + "'";
    checkTensor(inputs[i], program_->inputDims(i), what);
    buffers.push_back({inputs[i].raw(), inputs[i].bytes(), std::move(what)});
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    std::string what = "output " + std::to_string(o) + " of '" + name_ + "'";
    checkTensor(outputs[o], program_->outputDims(o), what);
    buffers.push_back({outputs[o].raw(), outputs[o].bytes(), std::move(what)});
  }
  device_.submit(
      queue, [program = program_, &device = device_, buffers = std::move(buffers), delay = delay_] {
        if (delay.count() > 0) std::this_thread::sleep_for(delay);
        // The backing bytes stay alive while the program runs, even if the
        // host frees the memory meanwhile.
        std::vector<std::shared_ptr<std::byte>> held;
        std::vector<const float*> in;
        std::vector<float*> out;
        for (const Buffer& b : buffers) {
          held.push_back(device.translate(b.data, b.bytes, b.what));
          auto* data = reinterpret_cast<float*>(held.back().get());
          if (in.size() < program->numInputs())
            in.push_back(data);
          else
            out.push_back(data);
        }
        program->run(in, out);
      });
}

void RegionKernel::run(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs) {
  (void)inputs;
  (void)outputs;
  throw sdk::Error("emudev: '" + name_ +
                   "' runs only on the device's queues (runOnQueue); the host called run()");
}

}  // namespace subgraph::emudev
