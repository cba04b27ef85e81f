//===- examples/emulated_device/emulated_device_test.cpp - The test device's own tests -===//
//
// Tests of backend `emudev` without a host: the device sources are compiled
// into this program, so each test drives EmulatedDevice, RegionProgram or
// RegionKernel directly. They check what makes the device useful in CI,
// that host mistakes fail loudly (device memory is unreadable, a host
// pointer is refused, an unfinished copy reads NaN), and that the queues
// and events order work as the ABI says; then the interpreter's ops
// against values computed by hand and against a naive convolution.
// Ordering tests hold a queue's worker on a Gate the test opens, so they
// do not depend on timing except where they measure it.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "emulated_device.h"
#include "region_interpreter.h"
#include "region_kernel.h"

namespace subgraph::emudev {
namespace {

using std::chrono::milliseconds;

/// The message of the exception `body` throws, or "" if it throws none.
template <typename F>
std::string errorOf(F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

/// A one-shot gate: tasks wait on it until the test opens it.
class Gate {
 public:
  void open() { promise_.set_value(); }
  void wait() const { future_.wait(); }
  /// A task that holds its queue until the gate opens.
  std::function<void()> task() const {
    return [future = future_] { future.wait(); };
  }

 private:
  std::promise<void> promise_;
  std::shared_future<void> future_ = promise_.get_future().share();
};

/// A float32 tensor description of `count` elements at `data`; `dims`
/// must outlive it.
sdk::Tensor floats(void* data, const std::vector<int64_t>& dims) {
  SgTensor t{};
  t.dtype = SG_DTYPE_FLOAT32;
  t.rank = static_cast<int32_t>(dims.size());
  t.dims = dims.data();
  t.data = data;
  t.bytes = static_cast<size_t>(numElements(dims)) * sizeof(float);
  return sdk::Tensor(t);
}

/// The permissions ("rw-p", "---p") of the mapping holding `ptr`, from
/// /proc/self/maps; "" if no mapping holds it.
std::string mappingPermissions(const void* ptr) {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::string perms;
    in >> std::hex >> start >> dash >> end >> perms;
    if (address >= start && address < end) return perms;
  }
  return "";
}

class EmulatedDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override { queue_ = device_.createQueue(); }

  EmulatedDevice device_;
  sdk::Queue queue_;
};

//===--- Memory -----------------------------------------------------------===//

/// Device memory lies in a PROT_NONE mapping: the host cannot read it.
TEST_F(EmulatedDeviceTest, DevicePointersLieInMemoryTheHostCannotRead) {
  void* p = device_.allocate(256, 64);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(device_.isDeviceAddress(p));
  EXPECT_EQ(mappingPermissions(p), "---p");
  std::vector<float> host(4);
  EXPECT_FALSE(device_.isDeviceAddress(host.data()));
}

/// A host that dereferences a device pointer dies (SIGSEGV; ASan reports
/// the SEGV and exits).
TEST(EmulatedDeviceDeathTest, HostDereferenceOfDevicePointerDies) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        EmulatedDevice device;
        auto* p = static_cast<volatile float*>(device.allocate(64, 64));
        std::printf("%f\n", static_cast<double>(*p));
      },
      "");
}

/// Addresses are aligned, and never handed out twice.
TEST_F(EmulatedDeviceTest, AllocationsAreAlignedAndNeverReused) {
  void* first = device_.allocate(100, 64);
  ASSERT_NE(first, nullptr);
  device_.deallocate(first);
  void* second = device_.allocate(100, 64);
  EXPECT_NE(second, first);
  void* page = device_.allocate(10, 4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(page) % 4096, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(second) % 64, 0u);
  EXPECT_EQ(device_.allocate(16, 3), nullptr) << "an alignment that is not a power of two";
}

/// translate() gives the backing bytes of ranges inside one live
/// allocation and refuses everything else, saying what is wrong.
TEST_F(EmulatedDeviceTest, TranslateRefusesHostPointersAndRangesOutsideAnAllocation) {
  auto* p = static_cast<std::byte*>(device_.allocate(256, 64));
  EXPECT_NE(device_.translate(p + 252, 4, "x"), nullptr);
  std::vector<float> host(64);
  std::string hostError = errorOf([&] { device_.translate(host.data(), 16, "input 0 of 'k'"); });
  EXPECT_NE(hostError.find("emudev: input 0 of 'k' is not device memory ("), std::string::npos)
      << hostError;
  EXPECT_NE(hostError.find("a copy to the device is missing"), std::string::npos) << hostError;
  EXPECT_NE(errorOf([&] { device_.translate(p + 253, 4, "x"); }).find("runs past the end"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { device_.translate(p + 256, 4, "x"); }), "") << "one past the end";
  device_.deallocate(p);
  EXPECT_NE(errorOf([&] { device_.translate(p, 4, "x"); }).find("no live allocation"),
            std::string::npos);
}

/// Fresh device memory reads as NaN, never as plausible zeros.
TEST_F(EmulatedDeviceTest, FreshMemoryIsPoisoned) {
  void* p = device_.allocate(4 * sizeof(float), 64);
  const auto* bytes = reinterpret_cast<const float*>(device_.translate(p, 16, "x").get());
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(bytes[i]));
}

/// Beyond the capacity, allocate() returns null; freeing makes room, and
/// freeing a pointer the device never gave out changes nothing.
TEST(EmulatedDeviceMemory, CapacityLimitsLiveAllocations) {
  EmulatedDevice device({.capacityBytes = 1024});
  void* big = device.allocate(1000, 64);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(device.allocate(100, 64), nullptr);
  int host = 0;
  device.deallocate(&host);
  EXPECT_EQ(device.allocatedBytes(), 1000u);
  device.deallocate(big);
  EXPECT_NE(device.allocate(100, 64), nullptr);
}

/// Two devices (emu:0, emu:1) have memories of their own: one's pointer is
/// not the other's, so a stage that reads another device's value without a
/// copy fails instead of reading it.
TEST(EmulatedDeviceMemory, DevicesDoNotShareMemory) {
  EmulatedDevice first({.id = 0}), second({.id = 1});
  EXPECT_EQ(second.id(), 1);
  void* p = first.allocate(64, 64);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(second.isDeviceAddress(p));
  EXPECT_NE(errorOf([&] { second.translate(p, 4, "x"); }).find("is not device memory"),
            std::string::npos);
  EXPECT_NE(first.translate(p, 4, "x"), nullptr);
}

//===--- Queues -----------------------------------------------------------===//

/// A queue runs its tasks in submission order.
TEST_F(EmulatedDeviceTest, TasksOfAQueueRunInOrder) {
  std::vector<int> order;  // written by the worker only, read after synchronize
  for (int i = 0; i < 1000; ++i) device_.submit(queue_, [&order, i] { order.push_back(i); });
  device_.synchronize(queue_);
  ASSERT_EQ(order.size(), 1000u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(order[i], i);
}

/// Tasks run on the queue's own thread, after submit has returned.
TEST_F(EmulatedDeviceTest, TasksRunAsynchronouslyOnTheQueuesThread) {
  Gate gate;
  std::atomic<bool> ran = false;
  std::thread::id worker;
  device_.submit(queue_, gate.task());
  device_.submit(queue_, [&] {
    worker = std::this_thread::get_id();
    ran = true;
  });
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(ran);
  gate.open();
  device_.synchronize(queue_);
  EXPECT_TRUE(ran);
  EXPECT_NE(worker, std::this_thread::get_id());
}

/// synchronize reports a task's error once; later tasks still run.
TEST_F(EmulatedDeviceTest, SynchronizeReportsATasksErrorOnce) {
  std::atomic<bool> later = false;
  device_.submit(queue_, [] { throw sdk::Error("boom"); });
  device_.submit(queue_, [] { throw sdk::Error("second"); });
  device_.submit(queue_, [&] { later = true; });
  EXPECT_EQ(errorOf([&] { device_.synchronize(queue_); }), "boom");
  EXPECT_EQ(errorOf([&] { device_.synchronize(queue_); }), "");
  EXPECT_TRUE(later);
}

/// destroyQueue runs what is queued first; the handle is then unknown.
TEST_F(EmulatedDeviceTest, DestroyQueueDrainsIt) {
  std::atomic<bool> ran = false;
  device_.submit(queue_, [&] {
    std::this_thread::sleep_for(milliseconds(20));
    ran = true;
  });
  device_.destroyQueue(queue_);
  EXPECT_TRUE(ran);
  EXPECT_NE(errorOf([&] { device_.submit(queue_, [] {}); }).find("unknown queue"),
            std::string::npos);
  device_.destroyQueue(queue_);  // ignored
  queue_ = device_.createQueue();
}

//===--- Events -----------------------------------------------------------===//

/// synchronizeEvent returns only once the work before the record has run.
TEST_F(EmulatedDeviceTest, SynchronizeEventWaitsForPriorWork) {
  std::atomic<bool> done = false;
  void* event = device_.createEvent();
  device_.submit(queue_, [&] {
    std::this_thread::sleep_for(milliseconds(50));
    done = true;
  });
  device_.record(event, queue_);
  device_.synchronizeEvent(event);
  EXPECT_TRUE(done);
  device_.destroyEvent(event);
}

/// An event reports the queue's errors from before its point, not after.
TEST_F(EmulatedDeviceTest, SynchronizeEventReportsErrorsBeforeIt) {
  void* before = device_.createEvent();
  void* after = device_.createEvent();
  device_.record(before, queue_);
  device_.submit(queue_, [] { throw sdk::Error("kernel failed"); });
  device_.record(after, queue_);
  EXPECT_EQ(errorOf([&] { device_.synchronizeEvent(before); }), "");
  EXPECT_EQ(errorOf([&] { device_.synchronizeEvent(after); }), "kernel failed");
  EXPECT_EQ(errorOf([&] { device_.synchronize(queue_); }), "kernel failed");
  device_.destroyEvent(before);
  device_.destroyEvent(after);
}

/// Queue B waits for an event of queue A without blocking the host: the
/// host's waitEvent returns while A is held, B's work runs only after A's.
TEST_F(EmulatedDeviceTest, WaitEventOrdersTwoQueuesWithoutBlockingTheHost) {
  sdk::Queue other = device_.createQueue();
  void* event = device_.createEvent();
  Gate gate;
  std::mutex mutex;
  std::vector<std::string> log;
  auto note = [&](const char* what) {
    std::lock_guard lock(mutex);
    log.push_back(what);
  };
  device_.submit(queue_, gate.task());
  device_.submit(queue_, [&] { note("A"); });
  device_.record(event, queue_);
  // Opens the gate anyway after a while, so a blocking waitEvent fails the
  // test instead of hanging it.
  std::thread rescue([&] {
    std::this_thread::sleep_for(milliseconds(500));
    gate.open();
  });
  auto start = std::chrono::steady_clock::now();
  device_.waitEvent(other, event);
  device_.submit(other, [&] { note("B"); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(250));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_TRUE(log.empty()) << "queue B ran before queue A reached the event";
  rescue.join();
  device_.synchronize(other);
  EXPECT_EQ(log, (std::vector<std::string>{"A", "B"}));
  device_.destroyEvent(event);
  device_.destroyQueue(other);
}

/// elapsedMs measures between two reached events; it is negative while an
/// event has not been reached.
TEST_F(EmulatedDeviceTest, ElapsedMsBetweenReachedEvents) {
  void* start = device_.createEvent();
  void* end = device_.createEvent();
  EXPECT_LT(device_.elapsedMs(start, end), 0) << "never recorded";
  device_.record(start, queue_);
  device_.submit(queue_, [] { std::this_thread::sleep_for(milliseconds(20)); });
  device_.record(end, queue_);
  device_.synchronizeEvent(end);
  EXPECT_GE(device_.elapsedMs(start, end), 19.0);
  device_.destroyEvent(start);
  device_.destroyEvent(end);
}

/// Handles the device never made (or destroyed) are errors, not crashes.
TEST_F(EmulatedDeviceTest, UnknownHandlesAreErrors) {
  int bogus = 0;
  EXPECT_NE(errorOf([&] { device_.synchronize(sdk::Queue{&bogus}); }).find("unknown queue"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { device_.record(&bogus, queue_); }).find("unknown event"),
            std::string::npos);
}

//===--- Copies -----------------------------------------------------------===//

/// copyToHost poisons its destination at once; the real bytes arrive only
/// when the queue runs the copy.
TEST_F(EmulatedDeviceTest, CopyToHostPoisonsTheDestinationUntilTheQueueRunsIt) {
  const std::vector<int64_t> dims{4};
  std::vector<float> src{1, 2, 3, 4}, dst(4, 0.0f);
  void* device = device_.allocate(16, 64);
  Gate gate;
  device_.submit(queue_, gate.task());
  device_.copyToDevice(queue_, floats(src.data(), dims), floats(device, dims));
  device_.copyToHost(queue_, floats(device, dims), floats(dst.data(), dims));
  for (float v : dst) EXPECT_TRUE(std::isnan(v));
  const auto* raw = reinterpret_cast<const unsigned char*>(dst.data());
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(raw[i], 0xFF);
  gate.open();
  device_.synchronize(queue_);
  EXPECT_EQ(dst, src);
}

/// copyToDevice reads the host buffer when it runs, not when submitted.
TEST_F(EmulatedDeviceTest, CopyToDeviceReadsTheHostBufferWhenItRuns) {
  const std::vector<int64_t> dims{2};
  std::vector<float> src{1, 2}, dst(2);
  void* device = device_.allocate(8, 64);
  Gate gate;
  device_.submit(queue_, gate.task());
  device_.copyToDevice(queue_, floats(src.data(), dims), floats(device, dims));
  src = {5, 6};
  gate.open();
  device_.copyToHost(queue_, floats(device, dims), floats(dst.data(), dims));
  device_.synchronize(queue_);
  EXPECT_EQ(dst, (std::vector<float>{5, 6}));
}

//   host X[0..8) --copyToDevice X[0..4)--> A      (queued first)
//   B --copyToHost--> X[0..8)                     (queued after it)
// Reusing X in queue order is legal: the bytes the first copy has yet to
// read keep their values until it has read them, and are poisoned then;
// the others are poisoned at once.
TEST_F(EmulatedDeviceTest, CopyToHostPoisonsBytesAQueuedCopyStillReadsOnlyAfterTheRead) {
  const std::vector<int64_t> four{4}, eight{8};
  std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8}, fromB(8, 9.0f), seenByA(4);
  void* a = device_.allocate(16, 64);
  void* b = device_.allocate(32, 64);
  device_.copyToDevice(queue_, floats(fromB.data(), eight), floats(b, eight));
  device_.synchronize(queue_);
  Gate first, second;
  void* read = device_.createEvent();
  device_.submit(queue_, first.task());
  device_.copyToDevice(queue_, floats(x.data(), four), floats(a, four));
  device_.record(read, queue_);
  device_.submit(queue_, second.task());
  device_.copyToHost(queue_, floats(b, eight), floats(x.data(), eight));
  EXPECT_EQ(std::vector<float>(x.begin(), x.begin() + 4), (std::vector<float>{1, 2, 3, 4}));
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(x[i])) << i;
  first.open();
  device_.synchronizeEvent(read);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(x[i])) << i;
  second.open();
  device_.copyToHost(queue_, floats(a, four), floats(seenByA.data(), four));
  device_.synchronize(queue_);
  EXPECT_EQ(seenByA, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(x, fromB);
  device_.destroyEvent(read);
}

/// Copies refuse memory on the wrong side and mismatched sizes.
TEST_F(EmulatedDeviceTest, CopiesRefuseTheWrongMemory) {
  const std::vector<int64_t> dims{4}, smaller{3};
  std::vector<float> a(4), b(4);
  void* device = device_.allocate(16, 64);
  EXPECT_NE(errorOf([&] {
              device_.copyToDevice(queue_, floats(a.data(), dims), floats(b.data(), dims));
            }).find("not device memory"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              device_.copyToHost(queue_, floats(device, dims), floats(device, dims));
            }).find("is device memory where the copy expects host memory"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              device_.copyToDevice(queue_, floats(a.data(), dims), floats(device, smaller));
            }),
            "");
}

/// copyOnDevice moves bytes between two allocations on the queue.
TEST_F(EmulatedDeviceTest, CopyOnDeviceMovesBytesBetweenAllocations) {
  const std::vector<int64_t> dims{3};
  std::vector<float> src{7, 8, 9}, dst(3);
  void* first = device_.allocate(12, 64);
  void* second = device_.allocate(12, 64);
  device_.copyToDevice(queue_, floats(src.data(), dims), floats(first, dims));
  device_.copyOnDevice(queue_, floats(first, dims), floats(second, dims));
  device_.copyToHost(queue_, floats(second, dims), floats(dst.data(), dims));
  device_.synchronize(queue_);
  EXPECT_EQ(dst, src);
}

//===--- The interpreter --------------------------------------------------===//

/// Builds a BodyGraph by hand.
class BodyBuilder {
 public:
  int input(std::vector<int64_t> dims) {
    int v = value(std::move(dims));
    graph_.inputs.push_back(v);
    return v;
  }
  int constant(std::vector<int64_t> dims, std::vector<float> data) {
    int v = value(std::move(dims));
    graph_.values[v].isConstant = true;
    graph_.values[v].data = std::move(data);
    return v;
  }
  int value(std::vector<int64_t> dims) {
    BodyValue v;
    v.name = "v" + std::to_string(graph_.values.size());
    v.dims = std::move(dims);
    graph_.values.push_back(std::move(v));
    return static_cast<int>(graph_.values.size()) - 1;
  }
  /// A node computing new value `outDims` from `inputs`; returns it.
  int node(std::string op, std::vector<int> inputs, std::vector<int64_t> outDims,
           std::map<std::string, AttrValue> attrs = {}) {
    int out = value(std::move(outDims));
    graph_.nodes.push_back(
        {op, op + std::to_string(graph_.nodes.size()), std::move(inputs), {out}, std::move(attrs)});
    return out;
  }
  void output(int v) { graph_.outputs.push_back(v); }
  const BodyGraph& graph() const { return graph_; }

 private:
  BodyGraph graph_;
};

/// Runs `body` on `inputs`; returns its outputs.
std::vector<std::vector<float>> runBody(const BodyGraph& body,
                                        const std::vector<std::vector<float>>& inputs) {
  RegionProgram program(body);
  std::vector<std::vector<float>> outputs;
  std::vector<const float*> in;
  std::vector<float*> out;
  for (const auto& i : inputs) in.push_back(i.data());
  for (size_t o = 0; o < program.numOutputs(); ++o)
    outputs.emplace_back(static_cast<size_t>(numElements(program.outputDims(o))), NAN);
  for (auto& o : outputs) out.push_back(o.data());
  program.run(in, out);
  return outputs;
}

/// The only output of a one-node body `op` on `inputs`.
std::vector<float> runOne(BodyBuilder& b, int out, const std::vector<std::vector<float>>& inputs) {
  b.output(out);
  return runBody(b.graph(), inputs)[0];
}

//   x: 1x1x3x3 = 1..9, w = 2x2 ones, pads 1, stride 2, bias 0.5
// Each output sums the window's input cells inside the image.
TEST(RegionInterpreter, ConvWithPadsStrideAndBias) {
  BodyBuilder b;
  int x = b.input({1, 1, 3, 3});
  int w = b.constant({1, 1, 2, 2}, {1, 1, 1, 1});
  int bias = b.constant({1}, {0.5f});
  int y =
      b.node("Conv", {x, w, bias}, {1, 1, 2, 2},
             {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}});
  EXPECT_EQ(runOne(b, y, {{1, 2, 3, 4, 5, 6, 7, 8, 9}}),
            (std::vector<float>{1.5f, 5.5f, 11.5f, 28.5f}));
}

/// One Conv configuration for the naive oracle.
struct ConvCase {
  int64_t n, c, h, w, m, group, kh, kw, stride, dilation;
  std::vector<int64_t> pads;
};

/// The definition of a 2-D convolution, one output at a time.
std::vector<float> naiveConv(const ConvCase& k, const std::vector<float>& x,
                             const std::vector<float>& w, int64_t oh, int64_t ow) {
  std::vector<float> y(static_cast<size_t>(k.n * k.m * oh * ow));
  const int64_t cg = k.c / k.group, mg = k.m / k.group;
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t m = 0; m < k.m; ++m)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = 0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t a = 0; a < k.kh; ++a)
              for (int64_t b = 0; b < k.kw; ++b) {
                int64_t ih = i * k.stride - k.pads[0] + a * k.dilation;
                int64_t iw = j * k.stride - k.pads[1] + b * k.dilation;
                if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                int64_t ch = (m / mg) * cg + c;
                sum += x[((n * k.c + ch) * k.h + ih) * k.w + iw] *
                       w[((m * cg + c) * k.kh + a) * k.kw + b];
              }
          y[((n * k.m + m) * oh + i) * ow + j] = static_cast<float>(sum);
        }
  return y;
}

/// Conv agrees with the naive definition over groups, depthwise, strides,
/// dilations, asymmetric pads, 1x1 kernels and batches.
TEST(RegionInterpreter, ConvMatchesANaiveConvolution) {
  const std::vector<ConvCase> cases{
      {1, 3, 7, 6, 5, 1, 3, 3, 1, 1, {1, 1, 1, 1}}, {2, 4, 8, 8, 6, 2, 3, 3, 2, 1, {1, 0, 2, 1}},
      {1, 4, 9, 9, 4, 4, 3, 3, 1, 2, {2, 2, 2, 2}}, {2, 8, 5, 5, 9, 1, 1, 1, 1, 1, {0, 0, 0, 0}},
      {1, 6, 6, 7, 6, 3, 2, 3, 2, 1, {0, 1, 0, 1}}, {1, 5, 4, 4, 7, 1, 1, 1, 2, 1, {0, 0, 0, 0}}};
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (const ConvCase& k : cases) {
    const int64_t oh = (k.h + k.pads[0] + k.pads[2] - k.dilation * (k.kh - 1) - 1) / k.stride + 1;
    const int64_t ow = (k.w + k.pads[1] + k.pads[3] - k.dilation * (k.kw - 1) - 1) / k.stride + 1;
    std::vector<float> x(static_cast<size_t>(k.n * k.c * k.h * k.w));
    std::vector<float> w(static_cast<size_t>(k.m * (k.c / k.group) * k.kh * k.kw));
    for (float& v : x) v = uniform(random);
    for (float& v : w) v = uniform(random);
    BodyBuilder b;
    int xv = b.input({k.n, k.c, k.h, k.w});
    int wv = b.constant({k.m, k.c / k.group, k.kh, k.kw}, w);
    int y = b.node("Conv", {xv, wv}, {k.n, k.m, oh, ow},
                   {{"group", k.group},
                    {"pads", k.pads},
                    {"strides", std::vector<int64_t>{k.stride, k.stride}},
                    {"dilations", std::vector<int64_t>{k.dilation, k.dilation}}});
    std::vector<float> got = runOne(b, y, {x});
    std::vector<float> want = naiveConv(k, x, w, oh, ow);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4) << "case with group " << k.group << ", element " << i;
  }
}

/// BatchNormalization: (x - mean) * scale / sqrt(var + epsilon) + bias.
TEST(RegionInterpreter, BatchNormalizationPerChannel) {
  BodyBuilder b;
  int x = b.input({1, 2, 1, 2});
  int y = b.node("BatchNormalization",
                 {x, b.constant({2}, {1, 2}), b.constant({2}, {0, 1}), b.constant({2}, {1, 1}),
                  b.constant({2}, {3, 0})},
                 {1, 2, 1, 2}, {{"epsilon", 1.0f}});
  EXPECT_EQ(runOne(b, y, {{1, 2, 3, 4}}), (std::vector<float>{0, 0.5f, 5, 7}));
}

/// Add and Mul broadcast like numpy: per row, per column, per channel, scalar.
TEST(RegionInterpreter, AddAndMulBroadcast) {
  {
    BodyBuilder b;
    int y = b.node("Add", {b.input({2, 3}), b.input({3})}, {2, 3});
    EXPECT_EQ(runOne(b, y, {{1, 2, 3, 4, 5, 6}, {10, 20, 30}}),
              (std::vector<float>{11, 22, 33, 14, 25, 36}));
  }
  {
    BodyBuilder b;
    int y = b.node("Mul", {b.input({2, 1}), b.input({2, 3})}, {2, 3});
    EXPECT_EQ(runOne(b, y, {{2, 3}, {1, 2, 3, 4, 5, 6}}),
              (std::vector<float>{2, 4, 6, 12, 15, 18}));
  }
  {
    BodyBuilder b;
    int y =
        b.node("Add", {b.input({1, 2, 2, 1}), b.constant({1, 2, 1, 1}, {100, 200})}, {1, 2, 2, 1});
    EXPECT_EQ(runOne(b, y, {{1, 2, 3, 4}}), (std::vector<float>{101, 102, 203, 204}));
  }
  {
    BodyBuilder b;
    int y = b.node("Mul", {b.input({3}), b.constant({}, {-2})}, {3});
    EXPECT_EQ(runOne(b, y, {{1, 2, 3}}), (std::vector<float>{-2, -4, -6}));
  }
}

TEST(RegionInterpreter, ReluAndSigmoid) {
  BodyBuilder b;
  int r = b.node("Relu", {b.input({3})}, {3});
  int s = b.node("Sigmoid", {r}, {3});
  b.output(r);
  b.output(s);
  std::vector<std::vector<float>> out = runBody(b.graph(), {{-1, 0, std::log(3.0f)}});
  EXPECT_EQ(out[0], (std::vector<float>{0, 0, std::log(3.0f)}));
  EXPECT_FLOAT_EQ(out[1][0], 0.5f);
  EXPECT_FLOAT_EQ(out[1][2], 0.75f);
}

//   x = 1..9 as 3x3, kernel 2x2, stride 2, pads 1: the windows hold
//   {1}, {2, 3}, {4, 7} and {5, 6, 8, 9}.
TEST(RegionInterpreter, MaxAndAveragePoolWithPads) {
  const std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto pool = [&](const char* op, int64_t countIncludePad) {
    BodyBuilder b;
    int y = b.node(op, {b.input({1, 1, 3, 3})}, {1, 1, 2, 2},
                   {{"kernel_shape", std::vector<int64_t>{2, 2}},
                    {"strides", std::vector<int64_t>{2, 2}},
                    {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                    {"count_include_pad", countIncludePad}});
    return runOne(b, y, {x});
  };
  EXPECT_EQ(pool("MaxPool", 0), (std::vector<float>{1, 3, 7, 9}));
  EXPECT_EQ(pool("AveragePool", 0), (std::vector<float>{1, 2.5f, 5.5f, 7}));
  EXPECT_EQ(pool("AveragePool", 1), (std::vector<float>{0.25f, 1.25f, 2.75f, 7}));
}

TEST(RegionInterpreter, GlobalAveragePoolAveragesEachPlane) {
  BodyBuilder b;
  int y = b.node("GlobalAveragePool", {b.input({1, 2, 2, 2})}, {1, 2, 1, 1});
  EXPECT_EQ(runOne(b, y, {{1, 2, 3, 4, 5, 6, 7, 8}}), (std::vector<float>{2.5f, 6.5f}));
}

//   Flatten([2, 1, 2]) -> A = [[1, 2], [3, 4]]; B = [[1, 0], [0, 1], [1, 1]]
//   with transB; Y = 2 * A * B^T + 0.5 * [1, 2, 3].
TEST(RegionInterpreter, FlattenThenGemmWithConstantB) {
  BodyBuilder b;
  int a = b.node("Flatten", {b.input({2, 1, 2})}, {2, 2});
  int y = b.node("Gemm", {a, b.constant({3, 2}, {1, 0, 0, 1, 1, 1}), b.constant({3}, {1, 2, 3})},
                 {2, 3}, {{"transB", int64_t{1}}, {"alpha", 2.0f}, {"beta", 0.5f}});
  EXPECT_EQ(runOne(b, y, {{1, 2, 3, 4}}), (std::vector<float>{2.5f, 5, 7.5f, 6.5f, 9, 15.5f}));
}

//   A^T with A = [[1, 3], [2, 4]] given transposed, B computed: [[1], [1]].
TEST(RegionInterpreter, GemmWithTransposedAAndComputedB) {
  BodyBuilder b;
  int a = b.input({2, 2});
  int bv = b.input({2, 1});
  int y = b.node("Gemm", {a, bv}, {2, 1}, {{"transA", int64_t{1}}});
  EXPECT_EQ(runOne(b, y, {{1, 3, 2, 4}, {1, 1}}), (std::vector<float>{3, 7}));
}

//   %x -> Conv(w = 2) -> BN(+1) -> Add(%skip) -> Relu -> %y
//                           \-> %bn (also a region output)
TEST(RegionInterpreter, ConvBatchNormAddReluChainWithAnEscapingValue) {
  BodyBuilder b;
  int x = b.input({1, 1, 1, 2});
  int skip = b.input({1, 1, 1, 2});
  int conv = b.node("Conv", {x, b.constant({1, 1, 1, 1}, {2})}, {1, 1, 1, 2});
  int bn = b.node("BatchNormalization",
                  {conv, b.constant({1}, {1}), b.constant({1}, {1}), b.constant({1}, {0}),
                   b.constant({1}, {1})},
                  {1, 1, 1, 2}, {{"epsilon", 0.0f}});
  int add = b.node("Add", {bn, skip}, {1, 1, 1, 2});
  int relu = b.node("Relu", {add}, {1, 1, 1, 2});
  b.output(relu);
  b.output(bn);
  std::vector<std::vector<float>> out = runBody(b.graph(), {{1, -2}, {1, 1}});
  EXPECT_EQ(out[0], (std::vector<float>{4, 0}));
  EXPECT_EQ(out[1], (std::vector<float>{3, -3}));
}

/// What the interpreter cannot run is declined with the node and the reason.
TEST(RegionInterpreter, DeclinesWhatItCannotRun) {
  auto declined = [](BodyBuilder& b, int out) {
    b.output(out);
    try {
      RegionProgram program(b.graph());
    } catch (const sdk::Unsupported& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  BodyBuilder softmax;
  EXPECT_NE(declined(softmax, softmax.node("Softmax", {softmax.input({2})}, {2}))
                .find("Softmax 'Softmax0': the interpreter has no Softmax"),
            std::string::npos);
  BodyBuilder same;
  int y = same.node(
      "Conv", {same.input({1, 1, 3, 3}), same.constant({1, 1, 3, 3}, std::vector<float>(9, 1.0f))},
      {1, 1, 3, 3}, {{"auto_pad", std::string("SAME_UPPER")}});
  EXPECT_NE(declined(same, y).find("auto_pad SAME_UPPER"), std::string::npos);
  BodyBuilder weights;
  y = weights.node("Conv", {weights.input({1, 1, 3, 3}), weights.input({1, 1, 1, 1})},
                   {1, 1, 3, 3});
  EXPECT_NE(declined(weights, y).find("the weight is not a constant"), std::string::npos);
  BodyBuilder ceil;
  y = ceil.node("MaxPool", {ceil.input({1, 1, 4, 4})}, {1, 1, 2, 2},
                {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"ceil_mode", int64_t{1}}});
  EXPECT_NE(declined(ceil, y).find("ceil_mode"), std::string::npos);
}

//===--- The region kernel ------------------------------------------------===//

/// A kernel computing Relu over [4].
std::unique_ptr<RegionKernel> reluKernel(EmulatedDevice& device) {
  BodyBuilder b;
  b.output(b.node("Relu", {b.input({4})}, {4}));
  return std::make_unique<RegionKernel>(std::make_shared<const RegionProgram>(b.graph()), device,
                                        "emudev_eltwise_0");
}

/// The kernel reads and writes device memory on the queue.
TEST_F(EmulatedDeviceTest, RegionKernelRunsOnTheQueue) {
  const std::vector<int64_t> dims{4};
  std::vector<float> host{-1, 2, -3, 4}, result(4);
  void* in = device_.allocate(16, 64);
  void* out = device_.allocate(16, 64);
  std::unique_ptr<RegionKernel> kernel = reluKernel(device_);
  Gate gate;
  device_.submit(queue_, gate.task());
  device_.copyToDevice(queue_, floats(host.data(), dims), floats(in, dims));
  std::vector<sdk::Tensor> inputs{floats(in, dims)}, outputs{floats(out, dims)};
  kernel->runOnQueue(queue_, inputs, outputs, {});
  device_.copyToHost(queue_, floats(out, dims), floats(result.data(), dims));
  kernel.reset();  // the queued work keeps what it needs
  gate.open();
  device_.synchronize(queue_);
  EXPECT_EQ(result, (std::vector<float>{0, 2, 0, 4}));
}

/// A host pointer where device memory belongs is a missing copy, refused
/// at submission; so are tensors of other dims.
TEST_F(EmulatedDeviceTest, RegionKernelRefusesHostPointersAndWrongDims) {
  const std::vector<int64_t> dims{4}, other{2, 2};
  std::vector<float> host(4);
  void* out = device_.allocate(16, 64);
  std::unique_ptr<RegionKernel> kernel = reluKernel(device_);
  std::vector<sdk::Tensor> inputs{floats(host.data(), dims)}, outputs{floats(out, dims)};
  std::string missingCopy = errorOf([&] { kernel->runOnQueue(queue_, inputs, outputs, {}); });
  EXPECT_NE(missingCopy.find("input 0 of 'emudev_eltwise_0' is not device memory"),
            std::string::npos)
      << missingCopy;
  std::vector<sdk::Tensor> reshaped{floats(out, other)};
  EXPECT_NE(errorOf([&] { kernel->runOnQueue(queue_, reshaped, outputs, {}); }).find("has dims"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { kernel->run(inputs, outputs); }).find("runs only on the device"),
            std::string::npos);
}

/// Memory freed before the queued kernel runs fails the queue, loudly.
TEST_F(EmulatedDeviceTest, RegionKernelReportsMemoryFreedBeforeItRuns) {
  const std::vector<int64_t> dims{4};
  void* in = device_.allocate(16, 64);
  void* out = device_.allocate(16, 64);
  std::unique_ptr<RegionKernel> kernel = reluKernel(device_);
  Gate gate;
  device_.submit(queue_, gate.task());
  std::vector<sdk::Tensor> inputs{floats(in, dims)}, outputs{floats(out, dims)};
  kernel->runOnQueue(queue_, inputs, outputs, {});
  device_.deallocate(in);
  gate.open();
  EXPECT_NE(errorOf([&] { device_.synchronize(queue_); }).find("no live allocation"),
            std::string::npos);
}

}  // namespace
}  // namespace subgraph::emudev
