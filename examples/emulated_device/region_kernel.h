//===- examples/emulated_device/region_kernel.h - emudev's one kernel -*- C++ -*-===//
//
// RegionKernel binds a RegionProgram (the interpreter of one fused
// region's body) to the EmulatedDevice: runOnQueue checks what the host
// passed, then submits a task that translates the device pointers to
// their backing bytes on the queue's worker and runs the program there.
// A host pointer among the tensors (a missing copy) or a tensor of the
// wrong dims is refused at once; memory freed before the task runs makes
// the task fail, and the error surfaces at the queue's next synchronize.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <subgraph/sdk/kernel.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "emulated_device.h"
#include "region_interpreter.h"

namespace subgraph::emudev {

/// The kernel of every fused region of backend `emudev`.
class RegionKernel final : public sdk::Kernel {
 public:
  /// Runs `program` on `device`'s queues; `name` (the fused node's)
  /// appears in messages.
  RegionKernel(std::shared_ptr<const RegionProgram> program, EmulatedDevice& device,
               std::string name);

  /// The kernel of fused region node `fused`: reads and compiles its body.
  /// Throws sdk::Unsupported for a body the interpreter cannot run. The
  /// session's plugin option `delay_us` (`--plugin-option
  /// emudev.delay_us=N`) makes each run first sleep N microseconds on the
  /// queue: a slow device, which widens the window in which a host that
  /// forgot a wait reads an unfinished value.
  static std::unique_ptr<RegionKernel> create(const sdk::NodeView& fused,
                                              const sdk::KernelContext& context,
                                              EmulatedDevice& device);

  /// Submits the region to `queue` and returns without waiting. Inputs and
  /// outputs must be device memory of the region's static dims, float32.
  void runOnQueue(sdk::Queue queue, std::span<const sdk::Tensor> inputs,
                  std::span<const sdk::Tensor> outputs, std::span<std::byte> scratch) override;
  /// Refuses: a device kernel runs only through runOnQueue.
  void run(std::span<const sdk::Tensor> inputs, std::span<const sdk::Tensor> outputs) override;

 private:
  void checkTensor(const sdk::Tensor& t, const std::vector<int64_t>& dims,
                   const std::string& what) const;

  // Shared with the submitted tasks, which may outlive the kernel.
  std::shared_ptr<const RegionProgram> program_;
  EmulatedDevice& device_;
  std::string name_;
  std::chrono::microseconds delay_{0};
};

}  // namespace subgraph::emudev
