//===- plugins/host/device_queue.h - A plugin's own device (ABI 3) --------===//
//
// Internal to subgraph::plugins. A plugin whose SgDeviceDesc names memory
// the host cannot read (kind "cuda", "emu", ...) becomes a runtime Backend
// on that device: its queue is one of the plugin's queues, its allocator
// the plugin's allocate/deallocate, and its copies the plugin's
// direction-tagged copies. The runtime already places values per device
// and inserts copies where a value crosses one; these adapters only make
// each step a submission to the plugin's queue whose completion is an
// event, so the host waits where a host step reads a device value and at
// the end of a run, never between two device steps. This file has the
// device and its queues; kernel_adapters.cpp builds the backend on them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>

#include "subgraph/plugin_abi.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/runtime/backend.h"
#include "subgraph/runtime/work_queue.h"

namespace subgraph::plugins::adapters {

/// True if `d` is a device with memory of its own (ABI 3, kind not "cpu").
bool isAcceleratorDevice(const SgDeviceDesc* d);

/// The reason a plugin's accelerator device table is unusable, or "".
std::string checkAcceleratorDevice(const SgPlugin& plugin);
/// The reason device `index` of devices_for's list is unusable, or "": of
/// `plugin.device`'s kind, with id `index`, its queue and event slots, and
/// (past the first) plain copies of its own both ways.
std::string checkSessionDevice(const SgPlugin& plugin, const SgDeviceDesc* device, size_t index);
/// The copies that serve `device`: its own (ABI 6), else the plugin's.
std::span<const SgCopyDesc* const> copiesOf(const SgPlugin& plugin, const SgDeviceDesc& device);

/// One of the plugin's work queues as a runtime WorkQueue. submit() runs the
/// task on the calling thread (the task only submits work to the device
/// queue) and returns a completion that waits on an event recorded after it.
class PluginQueue final : public runtime::WorkQueue {
 public:
  /// Makes a queue on `device`, one of `plugin`'s devices; fails with the
  /// plugin's message.
  static StatusOr<std::unique_ptr<PluginQueue>> create(std::shared_ptr<const LoadedPlugin> plugin,
                                                       const SgDeviceDesc* device);
  /// Waits for the queue's work, then destroys it.
  ~PluginQueue() override;
  PluginQueue(const PluginQueue&) = delete;
  PluginQueue& operator=(const PluginQueue&) = delete;

  runtime::TaskCompletion submit(std::function<Status()> task) override;
  runtime::TaskCompletion submitTimed(std::function<Status()> task, double* deviceMs) override;
  bool isSynchronous() const override { return false; }
  void waitIdle() override;
  /// The plugin's handle, passed to run_on_queue.
  void* handle() const { return queue_; }

  /// True if the device has the ABI 5 capture slots.
  bool canCapture() const override;
  /// Starts a capture; until endCapture, other requests' submissions to
  /// this queue wait (they would land in the recording).
  Status beginCapture() override;
  Status record(const std::function<Status()>& task) override;
  StatusOr<std::shared_ptr<runtime::CapturedWork>> endCapture() override;
  runtime::TaskCompletion launch(const runtime::CapturedWork& work) override;

 private:
  PluginQueue(std::shared_ptr<const LoadedPlugin> plugin, const SgDeviceDesc* device, void* queue);
  runtime::TaskCompletion submitImpl(std::function<Status()> task, double* deviceMs);
  std::string prefix() const;

  std::shared_ptr<const LoadedPlugin> plugin_;
  const SgDeviceDesc* device_;
  void* queue_;
  // Submissions share it; a capture holds it alone from beginCapture to
  // endCapture (on the capturing thread).
  std::shared_mutex captureMutex_;
  std::unique_lock<std::shared_mutex> capturing_;
};

/// The runtime device of an accelerator: its kind and id.
runtime::Device deviceOf(const SgDeviceDesc& d);

}  // namespace subgraph::plugins::adapters
