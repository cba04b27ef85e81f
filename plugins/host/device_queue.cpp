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

#include <algorithm>
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
  Event(std::shared_ptr<const LoadedPlugin> plugin, const SgDeviceDesc* device, void* handle)
      : plugin_(std::move(plugin)), device_(device), handle_(handle) {}
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

namespace {

// The reason `d`'s queue, event and capture slots are unusable, or "".
std::string checkDeviceSlots(const SgDeviceDesc& d) {
  std::string kind = d.kind;
  for (char c : kind)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return "device kind '" + kind + "' is not a name (letters, digits, '_')";
  if (!d.queue_create || !d.queue_destroy || !d.queue_synchronize || !d.event_create ||
      !d.event_destroy || !d.event_record || !d.event_synchronize || !d.queue_wait_event)
    return "device '" + kind + "' lacks a queue or event slot (all are required since ABI 3)";
  if (d.id < 0) return "device '" + kind + "' has a negative id";
  if (d.abi_version >= 5 && d.struct_size >= SG_DEVICE_DESC_V5_SIZE) {
    int slots = (d.queue_begin_capture != nullptr) + (d.queue_end_capture != nullptr) +
                (d.graph_launch != nullptr) + (d.graph_destroy != nullptr);
    if (slots != 0 && slots != 4)
      return "device '" + kind + "' has " + std::to_string(slots) +
             " of the four capture slots (all or none, since ABI 5)";
  }
  return {};
}

// The reason `copies` cannot serve device `kind` (a plain copy each way), or "".
std::string checkDeviceCopies(std::span<const SgCopyDesc* const> copies, const std::string& kind) {
  bool up = false, down = false;
  for (size_t i = 0; i < copies.size(); ++i) {
    const SgCopyDesc& c = *copies[i];
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

}  // namespace

std::span<const SgCopyDesc* const> copiesOf(const SgPlugin& p, const SgDeviceDesc& d) {
  if (hasV6Slots(d) && d.num_copies > 0 && d.copies) return {d.copies, d.num_copies};
  if (!hasV2Slots(p) || !p.copies) return {};
  return {p.copies, p.num_copies};
}

std::string checkAcceleratorDevice(const SgPlugin& p) {
  const SgDeviceDesc& d = *p.device;
  if (std::string bad = checkDeviceSlots(d); !bad.empty()) return bad;
  for (size_t i = 0; i < p.num_kernels; ++i) {
    const SgKernelDesc& k = *p.kernels[i];
    if (k.abi_version < 3 || k.struct_size < SG_KERNEL_DESC_V3_SIZE || !k.run_on_queue)
      return "kernel for '" + std::string(k.op_type) + "' runs on device '" + d.kind +
             "' but has no run_on_queue";
  }
  return checkDeviceCopies(copiesOf(p, d), d.kind);
}

std::string checkSessionDevice(const SgPlugin& p, const SgDeviceDesc* d, size_t index) {
  std::string what = "device " + std::to_string(index) + " of devices_for";
  if (!d) return what + " is null";
  if (d->abi_version < 6 || d->struct_size < sizeof(SgDeviceDesc))
    return what + " is not a version 6 device table (abi_version " +
           std::to_string(d->abi_version) + ", struct_size " + std::to_string(d->struct_size) + ")";
  if (!d->kind || std::strcmp(d->kind, p.device->kind) != 0 || !d->allocate || !d->deallocate)
    return what + " is not a '" + p.device->kind + "' device with allocate and deallocate";
  if (d->id != static_cast<int32_t>(index))
    return what + " has id " + std::to_string(d->id) + " (ids count 0, 1, ... in order)";
  if (std::string bad = checkDeviceSlots(*d); !bad.empty()) return what + ": " + bad;
  if (index > 0 && (d->num_copies == 0 || !d->copies))
    return what + " has no copies of its own (SgDeviceDesc::copies)";
  if (std::string bad = checkDeviceCopies(copiesOf(p, *d), d->kind); !bad.empty())
    return what + ": " + bad;
  return {};
}

PluginQueue::PluginQueue(std::shared_ptr<const LoadedPlugin> plugin, const SgDeviceDesc* device,
                         void* queue)
    : plugin_(std::move(plugin)), device_(device), queue_(queue) {}

StatusOr<std::unique_ptr<PluginQueue>> PluginQueue::create(
    std::shared_ptr<const LoadedPlugin> plugin, const SgDeviceDesc* d) {
  SgMessage m;
  void* queue = nullptr;
  SgStatus st;
  {
    PluginCallScope scope(plugin->name(), "queue_create", nullptr);
    st = d->queue_create(d->user, &queue, &m);
  }
  if (st != SG_OK || !queue)
    return Status::invalid("plugin '" + plugin->name() + "': cannot create a queue on device " +
                           deviceOf(*d).toString() + ": " + host::messageOr(m, "no message"));
  return std::unique_ptr<PluginQueue>(new PluginQueue(std::move(plugin), d, queue));
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
    auto e = std::make_shared<Event>(plugin_, device_, handle);
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
  PluginGraph(std::shared_ptr<const LoadedPlugin> plugin, const SgDeviceDesc* device, void* graph)
      : plugin_(std::move(plugin)), device_(device), graph_(graph) {}
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
  return device_->struct_size >= SG_DEVICE_DESC_V5_SIZE && device_->abi_version >= 5 &&
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
  return std::shared_ptr<runtime::CapturedWork>(
      std::make_shared<PluginGraph>(plugin_, device_, graph));
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

namespace subgraph::plugins {

StatusOr<std::vector<const SgDeviceDesc*>> LoadedPlugin::devices(
    const PluginRunOptions& options) const {
  if (!adapters::isAcceleratorDevice(plugin_->device)) return std::vector<const SgDeviceDesc*>{};
  if (!adapters::hasV6Slots(*plugin_) || !plugin_->devices_for)
    return std::vector<const SgDeviceDesc*>{plugin_->device};
  StatusOr<std::span<const SgDeviceDesc* const>> list =
      adapters::sessionTable(*this, "devices_for", plugin_->devices_for, options);
  if (!list.isOk()) return list.status();
  const std::string who = "plugin '" + name() + "' devices_for: ";
  if (list->empty()) return Status(StatusCode::kPluginFailure, who + "no device");
  std::vector<const SgDeviceDesc*> out(list->begin(), list->end());
  for (size_t k = 0; k < out.size(); ++k)
    if (std::string bad = adapters::checkSessionDevice(*plugin_, out[k], k); !bad.empty())
      return Status(StatusCode::kPluginFailure, who + bad);
  return out;
}

StatusOr<int> LoadedPlugin::deviceIndex(const PluginRunOptions& options) const {
  const std::string& name = options.device;
  size_t colon = name.rfind(':');
  if (!adapters::isAcceleratorDevice(plugin_->device) || colon == std::string::npos ||
      name.compare(0, colon, plugin_->device->kind) != 0)
    return 0;
  std::string digits = name.substr(colon + 1);
  if (digits.empty() || digits.size() > 4 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return Status::invalid("device '" + name + "': the index after ':' is not a number from 0");
  int index = std::stoi(digits);
  if (index == 0) return 0;
  StatusOr<std::vector<const SgDeviceDesc*>> all = devices(options);
  if (!all.isOk()) return all.status();
  if (static_cast<size_t>(index) >= all->size())
    return Status::invalid("device '" + name + "': plugin '" + this->name() +
                           "' gives this session " + std::to_string(all->size()) + " '" +
                           plugin_->device->kind + "' device" + (all->size() == 1 ? "" : "s") +
                           (adapters::hasV6Slots(*plugin_) && plugin_->devices_for
                                ? " (its options may give more: `subgraph plugins`)"
                                : " (it has one device)"));
  return index;
}

}  // namespace subgraph::plugins
