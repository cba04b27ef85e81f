//===- plugins/host/device_queue.cpp - A plugin's own device (ABI 3) ------===//
//
// See device_queue.h. A submission's completion is a deferred future:
// whoever first needs the step's result (a host step reading a device
// value, the end of the run) synchronizes the event recorded after it. An
// event is destroyed with the last copy of its completion, so a completion
// nobody waits for does not leak one.
//
//===----------------------------------------------------------------------===//
#include "device_queue.h"

#include <cctype>
#include <cstring>
#include <future>
#include <shared_mutex>

#include "host_api.h"
#include "plugin_tables.h"
#include "subgraph/plugins/crash_handler.h"

namespace subgraph::plugins::adapters {
namespace {

// One plugin event, destroyed when the last completion holding it dies.
class Event {
 public:
  Event(std::shared_ptr<const LoadedPlugin> plugin, void* handle)
      : plugin_(std::move(plugin)), device_(plugin_->table().device), handle_(handle) {}
  ~Event() {
    if (handle_) device_->event_destroy(device_->user, handle_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void* handle() const { return handle_; }

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;  // keeps the library loaded
  const SgDeviceDesc* device_;
  void* handle_;
};

runtime::TaskCompletion ready(Status status) {
  std::promise<Status> p;
  p.set_value(std::move(status));
  return p.get_future().share();
}

}  // namespace

bool isAcceleratorDevice(const SgDeviceDesc* d) {
  return d && d->abi_version >= 3 && d->struct_size >= SG_DEVICE_DESC_V3_SIZE && d->kind &&
         std::strcmp(d->kind, "cpu") != 0;
}

runtime::Device deviceOf(const SgDeviceDesc& d) {
  return runtime::Device{d.kind, isAcceleratorDevice(&d) ? d.id : 0};
}

std::string checkAcceleratorDevice(const SgPlugin& p) {
  const SgDeviceDesc& d = *p.device;
  std::string kind = d.kind;
  for (char c : kind)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return "device kind '" + kind + "' is not a name (letters, digits, '_')";
  if (!d.queue_create || !d.queue_destroy || !d.queue_synchronize || !d.event_create ||
      !d.event_destroy || !d.event_record || !d.event_synchronize || !d.queue_wait_event)
    return "device '" + kind + "' lacks a queue or event slot (all are required since ABI 3)";
  if (d.id < 0) return "device '" + kind + "' has a negative id";
  if (d.abi_version >= 5 && d.struct_size >= sizeof(SgDeviceDesc)) {
    int slots = (d.queue_begin_capture != nullptr) + (d.queue_end_capture != nullptr) +
                (d.graph_launch != nullptr) + (d.graph_destroy != nullptr);
    if (slots != 0 && slots != 4)
      return "device '" + kind + "' has " + std::to_string(slots) +
             " of the four capture slots (all or none, since ABI 5)";
  }
  for (size_t i = 0; i < p.num_kernels; ++i) {
    const SgKernelDesc& k = *p.kernels[i];
    if (k.abi_version < 3 || k.struct_size < SG_KERNEL_DESC_V3_SIZE || !k.run_on_queue)
      return "kernel for '" + std::string(k.op_type) + "' runs on device '" + kind +
             "' but has no run_on_queue";
  }
  bool up = false, down = false;
  for (size_t i = 0; i < (hasV2Slots(p) ? p.num_copies : 0); ++i) {
    const SgCopyDesc& c = *p.copies[i];
    if (!hasV3Slots(c) || c.direction == SG_COPY_ON_HOST) continue;
    if (c.direction > SG_COPY_ON_DEVICE)
      return "copy " + std::to_string(i) + " has unknown direction " + std::to_string(c.direction);
    if (!c.run_on_queue) return "device copy " + std::to_string(i) + " has no run_on_queue";
    up = up || (c.direction == SG_COPY_HOST_TO_DEVICE && !c.from && !c.to);
    down = down || (c.direction == SG_COPY_DEVICE_TO_HOST && !c.from && !c.to);
  }
  if (!up || !down)
    return "device '" + kind + "' lacks a plain copy " + (up ? "to the host" : "from the host") +
           " (SgCopyDesc with direction SG_COPY_" + (up ? "DEVICE_TO_HOST" : "HOST_TO_DEVICE") +
           " and no layouts)";
  return {};
}

PluginQueue::PluginQueue(std::shared_ptr<const LoadedPlugin> plugin, void* queue)
    : plugin_(std::move(plugin)), device_(plugin_->table().device), queue_(queue) {}

StatusOr<std::unique_ptr<PluginQueue>> PluginQueue::create(
    std::shared_ptr<const LoadedPlugin> plugin) {
  const SgDeviceDesc* d = plugin->table().device;
  SgMessage m;
  void* queue = nullptr;
  SgStatus st;
  {
    PluginCallScope scope(plugin->name(), "queue_create", nullptr);
    st = d->queue_create(d->user, &queue, &m);
  }
  if (st != SG_OK || !queue)
    return Status::invalid("plugin '" + plugin->name() + "': cannot create a queue on device '" +
                           d->kind + "': " + host::messageOr(m, "no message"));
  return std::unique_ptr<PluginQueue>(new PluginQueue(std::move(plugin), queue));
}

PluginQueue::~PluginQueue() {
  waitIdle();
  PluginCallScope scope(plugin_->name(), "queue_destroy", nullptr);
  device_->queue_destroy(device_->user, queue_);
}

std::string PluginQueue::prefix() const {
  return "plugin '" + plugin_->name() + "' device " + deviceOf(*device_).toString() + ": ";
}

void PluginQueue::waitIdle() {
  SgMessage m;
  PluginCallScope scope(plugin_->name(), "queue_synchronize", nullptr);
  // An error here belongs to a step whose own completion reports it too.
  (void)device_->queue_synchronize(device_->user, queue_, &m);
}

runtime::TaskCompletion PluginQueue::submit(std::function<Status()> task) {
  return submitImpl(std::move(task), nullptr);
}

runtime::TaskCompletion PluginQueue::submitTimed(std::function<Status()> task, double* deviceMs) {
  return submitImpl(std::move(task), deviceMs);
}

runtime::TaskCompletion PluginQueue::submitImpl(std::function<Status()> task, double* deviceMs) {
  // A capture on another thread holds the queue: this work must not land
  // in its recording.
  std::shared_lock<std::shared_mutex> shared(captureMutex_);
  auto event = [&]() -> StatusOr<std::shared_ptr<Event>> {
    SgMessage m;
    void* handle = nullptr;
    PluginCallScope scope(plugin_->name(), "event_record", nullptr);
    if (device_->event_create(device_->user, &handle, &m) != SG_OK || !handle)
      return Status(StatusCode::kPluginFailure,
                    prefix() + "event_create: " + host::messageOr(m, "failed"));
    auto e = std::make_shared<Event>(plugin_, handle);
    if (device_->event_record(device_->user, handle, queue_, &m) != SG_OK)
      return Status(StatusCode::kPluginFailure,
                    prefix() + "event_record: " + host::messageOr(m, "failed"));
    return e;
  };
  std::shared_ptr<Event> start;
  if (deviceMs && device_->event_elapsed_ms) {
    StatusOr<std::shared_ptr<Event>> made = event();
    if (made.isOk()) start = std::move(made).value();
  }
  Status submitted = runtime::runGuarded(task);
  if (!submitted.isOk()) return ready(std::move(submitted));
  StatusOr<std::shared_ptr<Event>> end = event();
  if (!end.isOk()) return ready(end.status());
  // The completion may outlive this queue (a frame's last completions), so
  // it keeps what it needs itself.
  auto wait = [plugin = plugin_, device = device_, prefix = prefix(), start,
               end = std::move(end).value(), deviceMs]() -> Status {
    SgMessage m;
    PluginCallScope scope(plugin->name(), "event_synchronize", nullptr);
    if (device->event_synchronize(device->user, end->handle(), &m) != SG_OK)
      return Status::invalid(prefix + host::messageOr(m, "the queue's work failed"));
    double ms = 0;
    if (start &&
        device->event_elapsed_ms(device->user, start->handle(), end->handle(), &ms, &m) == SG_OK)
      *deviceMs = ms;
    return Status::ok();
  };
  return std::async(std::launch::deferred, std::move(wait)).share();
}

namespace {

/// Captured work: the plugin's graph, destroyed with the last owner.
class PluginGraph final : public runtime::CapturedWork {
 public:
  PluginGraph(std::shared_ptr<const LoadedPlugin> plugin, void* graph)
      : plugin_(std::move(plugin)), device_(plugin_->table().device), graph_(graph) {}
  ~PluginGraph() override {
    PluginCallScope scope(plugin_->name(), "graph_destroy", nullptr);
    device_->graph_destroy(device_->user, graph_);
  }
  void* handle() const { return graph_; }

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;  // keeps the library loaded
  const SgDeviceDesc* device_;
  void* graph_;
};

}  // namespace

bool PluginQueue::canCapture() const {
  return device_->struct_size >= sizeof(SgDeviceDesc) && device_->abi_version >= 5 &&
         device_->queue_begin_capture && device_->queue_end_capture && device_->graph_launch &&
         device_->graph_destroy;
}

Status PluginQueue::beginCapture() {
  if (!canCapture()) return runtime::WorkQueue::beginCapture();
  std::unique_lock<std::shared_mutex> lock(captureMutex_);
  SgMessage m;
  SgStatus st;
  {
    PluginCallScope scope(plugin_->name(), "queue_begin_capture", nullptr);
    st = device_->queue_begin_capture(device_->user, queue_, &m);
  }
  if (st != SG_OK)
    return Status(StatusCode::kPluginFailure,
                  prefix() + "queue_begin_capture: " + host::messageOr(m, "failed"));
  capturing_ = std::move(lock);
  return Status::ok();
}

Status PluginQueue::record(const std::function<Status()>& task) {
  if (!capturing_.owns_lock()) return Status::invalid(prefix() + "record() outside a capture");
  return runtime::runGuarded(task);
}

StatusOr<std::shared_ptr<runtime::CapturedWork>> PluginQueue::endCapture() {
  if (!capturing_.owns_lock()) return Status::invalid(prefix() + "endCapture() without a capture");
  std::unique_lock<std::shared_mutex> lock = std::move(capturing_);
  SgMessage m;
  void* graph = nullptr;
  SgStatus st;
  {
    PluginCallScope scope(plugin_->name(), "queue_end_capture", nullptr);
    st = device_->queue_end_capture(device_->user, queue_, &graph, &m);
  }
  if (st != SG_OK || !graph)
    return Status(StatusCode::kPluginFailure,
                  prefix() + "queue_end_capture: " + host::messageOr(m, "no graph"));
  return std::shared_ptr<runtime::CapturedWork>(std::make_shared<PluginGraph>(plugin_, graph));
}

runtime::TaskCompletion PluginQueue::launch(const runtime::CapturedWork& work) {
  void* graph = static_cast<const PluginGraph&>(work).handle();
  return submitImpl(
      [&]() -> Status {
        SgMessage m;
        PluginCallScope scope(plugin_->name(), "graph_launch", nullptr);
        if (device_->graph_launch(device_->user, graph, queue_, &m) != SG_OK)
          return Status(StatusCode::kPluginFailure,
                        prefix() + "graph_launch: " + host::messageOr(m, "failed"));
        return Status::ok();
      },
      nullptr);
}

}  // namespace subgraph::plugins::adapters
