//===- examples/emulated_device/emulated_device.cpp - An accelerator on the CPU -===//
//
// The emulation behind EmulatedDevice (see emulated_device.h for what it
// guarantees): device memory as a PROT_NONE address range with a host
// buffer per allocation, one worker thread per queue, and events that are
// marker tasks on a queue.
//
//===----------------------------------------------------------------------===//
#include "emulated_device.h"

#include <sys/mman.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace subgraph::emudev {
namespace {

using Clock = std::chrono::steady_clock;

/// Bytes left unused after every allocation: a pointer one past the end of
/// one block is then never the start of the next, so an off-by-one range
/// is reported instead of silently reading a neighbour.
constexpr size_t kRedZone = 64;
/// The smallest alignment of device memory (a cache line, as GPUs give).
constexpr size_t kMinAlignment = 64;
/// The address range tried first (1 TiB: reserving costs nothing, and
/// addresses are never reused) and the smallest tried when mmap refuses.
constexpr size_t kLargestReserve = size_t{1} << 40;
constexpr size_t kSmallestReserve = size_t{1} << 30;
/// What fresh memory and a pending copy's host destination read as: all
/// bits set, a NaN in every float type, never a plausible number.
constexpr int kPoisonByte = 0xFF;

std::string hexAddress(uintptr_t address) {
  char text[2 + 2 * sizeof(uintptr_t)] = {'0', 'x'};
  auto [end, ec] = std::to_chars(text + 2, text + sizeof(text), address, 16);
  (void)ec;  // the buffer holds every uintptr_t
  return std::string(text, end);
}

std::string hexAddress(const void* ptr) { return hexAddress(reinterpret_cast<uintptr_t>(ptr)); }

sdk::Error notDeviceMemory(const std::string& what, const std::string& why) {
  return sdk::Error("emudev: " + what + " is not device memory (" + why + ")");
}

}  // namespace

/// A queue: a FIFO of tasks and the worker thread that runs them.
struct EmulatedDevice::QueueState {
  std::mutex mutex;
  std::condition_variable wake;  // the worker: a task arrived, or stop
  std::condition_variable idle;  // synchronize: the queue ran dry
  std::deque<std::function<void()>> tasks;
  bool running = false;  // the worker is inside a task
  bool stopping = false;
  std::exception_ptr error;  // the first error since the last synchronize
  // While a capture is open: where pushed work goes instead of the worker.
  std::shared_ptr<std::vector<std::function<void()>>> recording;
  std::thread worker;

  QueueState() : worker([this] { work(); }) {}

  void push(std::function<void()> task) {
    {
      std::lock_guard lock(mutex);
      if (stopping) throw sdk::Error("emudev: work submitted to a queue being destroyed");
      if (recording) {
        recording->push_back(std::move(task));
        return;
      }
      tasks.push_back(std::move(task));
    }
    wake.notify_one();
  }

  bool capturing() {
    std::lock_guard lock(mutex);
    return recording != nullptr;
  }

  /// Waits until every task submitted so far has run.
  void drain() {
    std::unique_lock lock(mutex);
    idle.wait(lock, [&] { return tasks.empty() && !running; });
  }

  std::exception_ptr peekError() {
    std::lock_guard lock(mutex);
    return error;
  }

  std::exception_ptr takeError() {
    std::lock_guard lock(mutex);
    return std::exchange(error, nullptr);
  }

  /// Lets the worker finish what is queued, then joins it.
  void stop() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    wake.notify_one();
    worker.join();
  }

 private:
  void work() {
    std::unique_lock lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return stopping || !tasks.empty(); });
      if (tasks.empty()) return;  // stopping, and nothing left to run
      std::function<void()> task = std::move(tasks.front());
      tasks.pop_front();
      running = true;
      lock.unlock();
      std::exception_ptr failed;
      try {
        task();
      } catch (...) {
        failed = std::current_exception();
      }
      task = nullptr;  // its captures die outside the lock
      lock.lock();
      running = false;
      if (failed && !error) error = failed;
      if (tasks.empty()) idle.notify_all();
    }
  }
};

/// An event. Each record() starts a new generation; its marker task sets
/// `reached` to that generation when the queue gets there, so waiters
/// compare generations and a re-record never releases an old waiter early.
struct EmulatedDevice::EventState {
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t recorded = 0;     // generation of the last record(); 0: never
  uint64_t reached = 0;      // generation of the last marker that ran
  Clock::time_point at;      // when `reached` was reached
  std::exception_ptr error;  // the queue's error when it was reached

  void waitFor(uint64_t generation) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return reached >= generation; });
  }
};

/// The host ranges that queued copies have yet to read (copyToDevice
/// sources) or write (copyToHost destinations). A destination reads as
/// 0xFF from its submission until its copy runs, except bytes that an
/// earlier queued copy still has to read: a device runs the two in queue
/// order, so those are poisoned only once that read is done.
class EmulatedDevice::HostCopies {
 public:
  /// Registers the source of a queued copyToDevice.
  uint64_t addRead(const void* ptr, size_t bytes) {
    std::lock_guard lock(mutex_);
    reads_.emplace(++next_, rangeOf(ptr, bytes));
    return next_;
  }
  /// Registers the destination of a queued copyToHost and poisons what no
  /// pending read covers.
  uint64_t addWrite(void* ptr, size_t bytes) {
    std::lock_guard lock(mutex_);
    writes_.emplace(++next_, rangeOf(ptr, bytes));
    poisonUnread(rangeOf(ptr, bytes));
    return next_;
  }
  /// A source has been read: what it held of pending destinations may now
  /// be poisoned.
  void readDone(uint64_t id) {
    std::lock_guard lock(mutex_);
    auto it = reads_.find(id);
    if (it == reads_.end()) return;
    const Range read = it->second;
    reads_.erase(it);
    for (const auto& [other, write] : writes_)
      poisonUnread({std::max(read.begin, write.begin), std::min(read.end, write.end)});
  }
  /// A destination has been written.
  void writeDone(uint64_t id) {
    std::lock_guard lock(mutex_);
    writes_.erase(id);
  }

 private:
  struct Range {
    uintptr_t begin, end;
  };
  static Range rangeOf(const void* ptr, size_t bytes) {
    const auto begin = reinterpret_cast<uintptr_t>(ptr);
    return {begin, begin + bytes};
  }

  /// Fills the bytes of `range` that no pending read covers with 0xFF.
  void poisonUnread(Range range) {
    if (range.begin >= range.end) return;
    std::vector<Range> covered;
    for (const auto& [id, read] : reads_)
      if (read.begin < range.end && range.begin < read.end) covered.push_back(read);
    std::sort(covered.begin(), covered.end(),
              [](const Range& a, const Range& b) { return a.begin < b.begin; });
    uintptr_t cursor = range.begin;
    for (const Range& r : covered) {
      if (r.begin > cursor) poison(cursor, std::min(r.begin, range.end));
      cursor = std::max(cursor, r.end);
    }
    if (cursor < range.end) poison(cursor, range.end);
  }
  static void poison(uintptr_t begin, uintptr_t end) {
    std::memset(reinterpret_cast<void*>(begin), kPoisonByte, end - begin);
  }

  std::mutex mutex_;
  std::map<uint64_t, Range> reads_, writes_;
  uint64_t next_ = 0;
};

EmulatedDevice::EmulatedDevice(Options options)
    : options_(options), hostCopies_(std::make_unique<HostCopies>()) {}

EmulatedDevice::~EmulatedDevice() {
  std::map<void*, std::shared_ptr<QueueState>> queues;
  {
    std::lock_guard lock(handleMutex_);
    queues.swap(queues_);
  }
  for (auto& [handle, queue] : queues) queue->stop();
  if (base_) munmap(reinterpret_cast<void*>(base_), reserved_);
}

std::string EmulatedDevice::description() const {
  return "emulated on the host CPU: memory the host cannot read, one worker thread per queue";
}

//===--- Memory -----------------------------------------------------------===//

void EmulatedDevice::reserveAddressRange() {
  for (size_t size = kLargestReserve; size >= kSmallestReserve; size /= 2) {
    void* p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
      base_ = reinterpret_cast<uintptr_t>(p);
      reserved_ = size;
      return;
    }
  }
}

void* EmulatedDevice::allocate(size_t bytes, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  alignment = std::max(alignment, kMinAlignment);
  std::lock_guard lock(memoryMutex_);
  if (options_.capacityBytes && bytes > options_.capacityBytes - allocated_) return nullptr;
  if (!base_) reserveAddressRange();
  if (!base_) return nullptr;
  const uintptr_t end = base_ + reserved_;
  uintptr_t address = (base_ + next_ + alignment - 1) & ~(uintptr_t{alignment} - 1);
  // A zero-byte block still takes an address of its own.
  const size_t span = std::max<size_t>(bytes, 1);
  if (address >= end || span > end - address || kRedZone > end - address - span) return nullptr;
  Block block{bytes, std::shared_ptr<std::byte[]>(new std::byte[span])};
  std::memset(block.bytes.get(), kPoisonByte, span);
  blocks_.emplace(address, std::move(block));
  next_ = address + span + kRedZone - base_;
  allocated_ += bytes;
  return reinterpret_cast<void*>(address);
}

void EmulatedDevice::deallocate(void* ptr) {
  std::lock_guard lock(memoryMutex_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks_.end()) return;
  allocated_ -= it->second.size;
  blocks_.erase(it);
}

std::shared_ptr<std::byte> EmulatedDevice::translate(const void* ptr, size_t bytes,
                                                     const std::string& what) const {
  if (bytes == 0) return nullptr;
  if (!ptr) throw notDeviceMemory(what, "a null pointer for " + std::to_string(bytes) + " bytes");
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard lock(memoryMutex_);
  auto it = blocks_.upper_bound(address);
  if (it != blocks_.begin()) {
    --it;
    const Block& block = it->second;
    const size_t offset = address - it->first;
    if (offset < block.size) {
      if (bytes <= block.size - offset)
        return std::shared_ptr<std::byte>(block.bytes, block.bytes.get() + offset);
      throw notDeviceMemory(what, hexAddress(address) + " + " + std::to_string(bytes) +
                                      " bytes runs past the end of the " +
                                      std::to_string(block.size) + "-byte allocation at " +
                                      hexAddress(it->first));
    }
  }
  if (base_ && address >= base_ && address - base_ < reserved_)
    throw notDeviceMemory(
        what, hexAddress(address) + " is in no live allocation: freed, or never allocated");
  throw notDeviceMemory(what, hexAddress(address) +
                                  " is host memory: a copy to the device is "
                                  "missing");
}

bool EmulatedDevice::isDeviceAddress(const void* ptr) const {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard lock(memoryMutex_);
  return base_ && address >= base_ && address - base_ < reserved_;
}

size_t EmulatedDevice::allocatedBytes() const {
  std::lock_guard lock(memoryMutex_);
  return allocated_;
}

//===--- Queues -----------------------------------------------------------===//

std::shared_ptr<EmulatedDevice::QueueState> EmulatedDevice::findQueue(sdk::Queue queue) const {
  std::lock_guard lock(handleMutex_);
  auto it = queues_.find(queue.handle);
  if (it == queues_.end())
    throw sdk::Error("emudev: unknown queue " + hexAddress(queue.handle) +
                     " (destroyed, or never created)");
  return it->second;
}

sdk::Queue EmulatedDevice::createQueue() {
  auto queue = std::make_shared<QueueState>();
  std::lock_guard lock(handleMutex_);
  queues_.emplace(queue.get(), queue);
  return sdk::Queue{queue.get()};
}

void EmulatedDevice::destroyQueue(sdk::Queue queue) {
  std::shared_ptr<QueueState> state;
  {
    std::lock_guard lock(handleMutex_);
    auto it = queues_.find(queue.handle);
    if (it == queues_.end()) return;
    state = std::move(it->second);
    queues_.erase(it);
  }
  state->stop();
}

void EmulatedDevice::synchronize(sdk::Queue queue) {
  std::shared_ptr<QueueState> state = findQueue(queue);
  state->drain();
  if (std::exception_ptr error = state->takeError()) std::rethrow_exception(error);
}

void EmulatedDevice::submit(sdk::Queue queue, std::function<void()> task) {
  findQueue(queue)->push(std::move(task));
}

//===--- Captured work ----------------------------------------------------===//

void EmulatedDevice::refuseWhileCapturing(sdk::Queue queue, const char* what) const {
  if (findQueue(queue)->capturing())
    throw sdk::Error(std::string("emudev: ") + what +
                     " on a queue being captured (a capture records device work only)");
}

void EmulatedDevice::beginCapture(sdk::Queue queue) {
  std::shared_ptr<QueueState> q = findQueue(queue);
  std::lock_guard lock(q->mutex);
  if (q->recording) throw sdk::Error("emudev: the queue is being captured already");
  q->recording = std::make_shared<std::vector<std::function<void()>>>();
}

void* EmulatedDevice::endCapture(sdk::Queue queue) {
  std::shared_ptr<QueueState> q = findQueue(queue);
  auto graph = std::make_shared<Graph>();
  {
    std::lock_guard lock(q->mutex);
    if (!q->recording) throw sdk::Error("emudev: endCapture without beginCapture");
    graph->tasks = std::move(*q->recording);
    q->recording.reset();
  }
  std::lock_guard lock(handleMutex_);
  graphs_.emplace(graph.get(), graph);
  return graph.get();
}

void EmulatedDevice::launch(void* graph, sdk::Queue queue) {
  std::shared_ptr<Graph> g;
  {
    std::lock_guard lock(handleMutex_);
    auto it = graphs_.find(graph);
    if (it == graphs_.end())
      throw sdk::Error("emudev: unknown graph " + hexAddress(graph) +
                       " (destroyed, or never made)");
    g = it->second;
  }
  std::shared_ptr<QueueState> q = findQueue(queue);
  if (q->capturing()) throw sdk::Error("emudev: a graph launched into a capture");
  // The recorded tasks run again, in order, each a copy: a replay.
  for (const std::function<void()>& task : g->tasks) q->push(task);
  ++launches_;
}

void EmulatedDevice::destroyGraph(void* graph) {
  std::lock_guard lock(handleMutex_);
  graphs_.erase(graph);
}

//===--- Events -----------------------------------------------------------===//

std::shared_ptr<EmulatedDevice::EventState> EmulatedDevice::findEvent(void* event) const {
  std::lock_guard lock(handleMutex_);
  auto it = events_.find(event);
  if (it == events_.end())
    throw sdk::Error("emudev: unknown event " + hexAddress(event) +
                     " (destroyed, or never created)");
  return it->second;
}

void* EmulatedDevice::createEvent() {
  auto event = std::make_shared<EventState>();
  std::lock_guard lock(handleMutex_);
  events_.emplace(event.get(), event);
  return event.get();
}

void EmulatedDevice::destroyEvent(void* event) {
  std::lock_guard lock(handleMutex_);
  events_.erase(event);
}

void EmulatedDevice::record(void* event, sdk::Queue queue) {
  refuseWhileCapturing(queue, "an event recorded");
  std::shared_ptr<EventState> state = findEvent(event);
  std::shared_ptr<QueueState> q = findQueue(queue);
  uint64_t generation = 0;
  {
    std::lock_guard lock(state->mutex);
    generation = ++state->recorded;
  }
  // The marker runs on q's own worker, so q outlives it: a raw pointer
  // avoids a queue holding a reference to itself.
  q->push([state, generation, queueState = q.get()] {
    std::exception_ptr error = queueState->peekError();
    {
      std::lock_guard lock(state->mutex);
      if (generation > state->reached) {
        state->reached = generation;
        state->at = Clock::now();
        state->error = error;
      }
    }
    state->changed.notify_all();
  });
}

void EmulatedDevice::synchronizeEvent(void* event) {
  std::shared_ptr<EventState> state = findEvent(event);
  std::unique_lock lock(state->mutex);
  const uint64_t generation = state->recorded;
  state->changed.wait(lock, [&] { return state->reached >= generation; });
  if (state->error) std::rethrow_exception(state->error);
}

void EmulatedDevice::waitEvent(sdk::Queue queue, void* event) {
  refuseWhileCapturing(queue, "an event waited for");
  std::shared_ptr<EventState> state = findEvent(event);
  std::shared_ptr<QueueState> q = findQueue(queue);
  uint64_t generation = 0;
  {
    std::lock_guard lock(state->mutex);
    generation = state->recorded;
    if (state->reached >= generation) return;  // nothing left to wait for
  }
  q->push([state, generation] { state->waitFor(generation); });
}

double EmulatedDevice::elapsedMs(void* start, void* end) {
  auto reachedAt = [](EventState& e) -> std::optional<Clock::time_point> {
    std::lock_guard lock(e.mutex);
    if (e.recorded == 0 || e.reached < e.recorded) return std::nullopt;
    return e.at;
  };
  std::optional<Clock::time_point> from = reachedAt(*findEvent(start));
  std::optional<Clock::time_point> to = reachedAt(*findEvent(end));
  if (!from || !to) return -1;
  return std::chrono::duration<double, std::milli>(*to - *from).count();
}

//===--- Copies -----------------------------------------------------------===//

/// Unregisters a host copy's range when the copy is over, run or failed.
class EmulatedDevice::HostCopyDone {
 public:
  HostCopyDone(HostCopies& copies, uint64_t id, void (HostCopies::*done)(uint64_t))
      : copies_(copies), id_(id), done_(done) {}
  ~HostCopyDone() { (copies_.*done_)(id_); }
  HostCopyDone(const HostCopyDone&) = delete;
  HostCopyDone& operator=(const HostCopyDone&) = delete;

 private:
  HostCopies& copies_;
  uint64_t id_;
  void (HostCopies::*done_)(uint64_t);
};

void EmulatedDevice::submitOrForget(sdk::Queue queue, uint64_t copy, std::function<void()> task) {
  try {
    submit(queue, std::move(task));
  } catch (...) {
    hostCopies_->readDone(copy);
    hostCopies_->writeDone(copy);
    throw;
  }
}

void EmulatedDevice::checkHostMemory(const sdk::Tensor& t, const char* what) const {
  if (t.bytes() > 0 && !t.raw())
    throw sdk::Error(std::string("emudev: ") + what + " is a null pointer");
  if (isDeviceAddress(t.raw()))
    throw sdk::Error(std::string("emudev: ") + what + " " + hexAddress(t.raw()) +
                     " is device memory where the copy expects host memory");
}

namespace {

void checkSameSize(const sdk::Tensor& src, const sdk::Tensor& dst, const char* copy) {
  if (src.bytes() != dst.bytes())
    throw sdk::Error(std::string("emudev: ") + copy + " from " + std::to_string(src.bytes()) +
                     " bytes into " + std::to_string(dst.bytes()) + " bytes");
}

}  // namespace

void EmulatedDevice::copyToDevice(sdk::Queue queue, const sdk::Tensor& src,
                                  const sdk::Tensor& dst) {
  checkSameSize(src, dst, "copyToDevice");
  checkHostMemory(src, "copyToDevice's source");
  refuseWhileCapturing(queue, "a copy from host memory");
  const size_t bytes = dst.bytes();
  // Checked now for an early, synchronous error, and again when the copy
  // runs, in case the memory was freed meanwhile.
  translate(dst.raw(), bytes, "copyToDevice's destination");
  const void* from = src.raw();
  void* to = dst.raw();
  const uint64_t read = hostCopies_->addRead(from, bytes);
  submitOrForget(queue, read, [this, from, to, bytes, read] {
    HostCopyDone done(*hostCopies_, read, &HostCopies::readDone);
    std::shared_ptr<std::byte> device = translate(to, bytes, "copyToDevice's destination");
    if (bytes) std::memcpy(device.get(), from, bytes);
  });
}

void EmulatedDevice::copyToHost(sdk::Queue queue, const sdk::Tensor& src, const sdk::Tensor& dst) {
  checkSameSize(src, dst, "copyToHost");
  checkHostMemory(dst, "copyToHost's destination");
  refuseWhileCapturing(queue, "a copy into host memory");
  const size_t bytes = src.bytes();
  translate(src.raw(), bytes, "copyToHost's source");
  const void* from = src.raw();
  void* to = dst.raw();
  // Until the queue gets to the copy, the host reads NaNs, not stale data.
  const uint64_t write = hostCopies_->addWrite(to, bytes);
  submitOrForget(queue, write, [this, from, to, bytes, write] {
    HostCopyDone done(*hostCopies_, write, &HostCopies::writeDone);
    std::shared_ptr<std::byte> device = translate(from, bytes, "copyToHost's source");
    if (bytes) std::memcpy(to, device.get(), bytes);
  });
}

void EmulatedDevice::copyOnDevice(sdk::Queue queue, const sdk::Tensor& src,
                                  const sdk::Tensor& dst) {
  checkSameSize(src, dst, "copyOnDevice");
  const size_t bytes = src.bytes();
  translate(src.raw(), bytes, "copyOnDevice's source");
  translate(dst.raw(), bytes, "copyOnDevice's destination");
  const void* from = src.raw();
  void* to = dst.raw();
  submit(queue, [this, from, to, bytes] {
    std::shared_ptr<std::byte> in = translate(from, bytes, "copyOnDevice's source");
    std::shared_ptr<std::byte> out = translate(to, bytes, "copyOnDevice's destination");
    if (bytes) std::memmove(out.get(), in.get(), bytes);
  });
}

}  // namespace subgraph::emudev
