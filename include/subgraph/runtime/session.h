//===- subgraph/runtime/session.h - Loading, compiling and running graphs -*- C++ -*-===//
//
// A Session turns a Graph into something that runs:
//
//   Session s(options);
//   s.load(graph);        // a copy of the graph, partitioned or not
//   s.compile();          // kernels, copies, static memory, session prologues
//   auto out = s.run({{"x", tensor}});
//
// The session never partitions: subgraph::api (api/) loads, simplifies and
// partitions a model, then hands the session the partitioned graph, so the
// runtime does not depend on the partitioner. compile() assigns every node
// a kernel: a fused region ("subgraph.*" domain
// with a "body" graph) goes to the first backend that has a kernel for it or
// claims it, and otherwise to the default region executor, which runs the
// body on the reference backend (MXNet's CachedOp); every other node goes to
// the reference backend. Copies are inserted where a value crosses devices or
// layouts.
//
// Memory is planned per input signature (the input shapes, plus the contents
// of inputs that determine shapes, such as a Reshape target fed by a graph
// input). Plans are cached; each frame (one I/O workspace, MNN's session
// buffers) allocates a plan's blocks once and is reused by later requests.
//
// Threading: run() is thread-safe, and concurrent requests run at the same
// time (at most maxConcurrentRuns), each in a frame and a oneTBB task_arena
// of `threads` slots of its own, both pooled and reused: kernels
// parallelize internally with tbb::parallel_for, and with parallelBranches
// independent branches also run concurrently (a task graph whose edges are
// data dependencies plus memory-reuse dependencies). A request whose kernels
// bring their own thread pool (Kernel::usesOwnThreads) runs its steps in
// order, so the two pools never oversubscribe the cores; such a kernel runs
// alone across requests unless it says two requests may run it at once
// (Kernel::concurrentRequests). docs/runtime.md has the full policy.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "subgraph/ir/graph.h"
#include "subgraph/ir/tensor.h"
#include "subgraph/runtime/backend.h"
#include "subgraph/runtime/memory_planner.h"
#include "subgraph/support/status.h"

namespace subgraph::runtime {

/// A tensor with the name of the graph input or output it belongs to.
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// An input read in place, without a copy (e.g. a numpy array's buffer):
/// dense row-major data of `dtype` and `dims`, `bytes` long, valid and
/// unchanged until run() returns.
struct InputView {
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> dims;
  const void* data = nullptr;
  size_t bytes = 0;
};

/// Identifies one executed step for callbacks and profiles.
struct StepInfo {
  size_t index = 0;       ///< Position in the session's step order.
  std::string name;       ///< Node display name, or "copy:<value>".
  std::string op;         ///< Qualified op type, or "Copy".
  std::string backend;    ///< Backend that runs it.
  std::string provider;   ///< Provider whose creator made the kernel.
  bool isRegion = false;  ///< A fused region node.
  bool isCopy = false;    ///< A copy the session inserted.
  /// A shape-only op on a device value, kept as a view of its input on the
  /// device: it has no kernel run and appears in no profile.
  bool isView = false;
  /// "" for a step of the session's graph; for a step of a nested graph
  /// (an If branch, a Loop body), the node and attribute holding it, e.g.
  /// "If_0.then_branch", deeper levels joined by '/'. Profiles report
  /// nested steps too: the If step's time includes theirs.
  std::string scope;
};

/// Memory figures of one device for one plan.
struct DeviceMemoryReport {
  std::string device;
  size_t peakDynamicBytes = 0;   ///< Lower bound: most bytes live at once.
  size_t dynamicBlockBytes = 0;  ///< What the shared dynamic block takes.
  size_t separateBytes = 0;      ///< kDynamicSeparate blocks (graph outputs).
  size_t unsharedBytes = 0;      ///< Every buffer on its own, for comparison.
  size_t numBuffers = 0;
};

/// What resize produced for one input signature.
struct PlanReport {
  std::string signature;  ///< e.g. "x=f32[1, 3, 224, 224]".
  std::vector<DeviceMemoryReport> devices;
  size_t staticBytes = 0;          ///< Session-wide static block(s).
  size_t frameBytes = 0;           ///< Bytes one frame allocates.
  size_t precomputedBytes = 0;     ///< Host bytes of values computed at resize.
  size_t numSteps = 0;             ///< Steps that run per request.
  size_t numPrecomputedSteps = 0;  ///< Steps folded at resize time.
};

/// Session-wide event hooks (MNN's callbacks). Execute callbacks may be
/// called from several threads at once when branches run in parallel.
struct SessionCallbacks {
  /// Before a plan is computed for a new signature.
  std::function<void(const std::string& signature)> onResizeBegin;
  /// After the plan exists.
  std::function<void(const PlanReport& plan)> onResizeEnd;
  /// Before a step runs; returning false skips the step (its outputs keep
  /// whatever bytes they had).
  std::function<bool(const StepInfo& step)> onExecuteBegin;
  /// After a step ran, with views of its outputs (valid only during the
  /// call) and its time in milliseconds.
  std::function<void(const StepInfo& step, std::span<const TensorView> outputs, double ms)>
      onExecuteEnd;
  /// After every queue the request used has drained.
  std::function<void()> onWaitFinish;
};

/// The most worker threads any entry point takes (SessionOptions::threads,
/// a plugin's kernel context, `--threads`, Python's `threads=`): oneTBB
/// crashes on an arena of 2^31 slots and oneDNN's OpenMP teams on tens of
/// thousands, so a larger count is a mistake to report, never to pass on.
inline constexpr int64_t kMaxThreads = 1024;

/// The one bounds check of a thread count: kInvalidArgument naming `what`
/// (the option the caller exposes, e.g. "--threads") unless 0 <= threads
/// <= kMaxThreads (0 means one per core).
Status checkThreadCount(int64_t threads, std::string_view what = "threads");

/// "" if every graph input has a free dim 0 (symbolic or 1) that every op
/// keeps apart, as dynamic batching and pipelined micro-batches need
/// (a fused region judged by its body); else why not, naming the node.
std::string batchRefusal(const Graph& graph);

/// The checks load() makes before any kernel sees `graph`: the verifier
/// (a node missing a required input or with no outputs would make a kernel
/// read through a null pointer; unknown ops and attributes are allowed, for
/// fused regions and plugin ops) and acyclicity. The library runs it before
/// partitioning too, so selectors never see a broken graph.
Status verifyForRun(const Graph& graph);

/// What one request may spend besides memory. A hostile model can ask for
/// unbounded work in a few bytes: a 1 KB Loop nest for 40^6 iterations, a
/// trip count of 2^62, a RoiAlign sampling_ratio of 2^31. Past a limit the
/// request fails with kLimitExceeded and a line naming the limit (the CLI's
/// `--limit loop-iterations`, `loop-seconds`, `kernel-work`). The defaults
/// stop those models within seconds and are far above what real models
/// need; 0 turns a limit off.
struct WorkLimits {
  /// Loop body iterations, counted over a Loop and every Loop nested in its
  /// body (each inner iteration counts too).
  uint64_t loopIterations = uint64_t{1} << 22;
  /// Seconds of wall time a Loop may run, the Loops nested in it included.
  double loopSeconds = 20;
  /// Elementary steps (samples, window taps) one kernel call may take where
  /// an attribute or the data, not the size of its tensors, sets their
  /// number: RoiAlign's sampling grid, a pooling or LRN window.
  uint64_t kernelWork = uint64_t{1} << 34;
};

/// Dynamic batching: concurrent requests whose inputs differ only in dim 0
/// run as one request, and each gets its own rows of the outputs back.
struct BatchingOptions {
  /// Rows (the sum of the requests' dim 0) a batch may hold; 0 or 1: off.
  int64_t maxBatch = 0;
  /// How long the first request of a batch waits for others, microseconds.
  int64_t maxDelayUs = 1000;
};

/// How a session is built.
struct SessionOptions {
  /// Registered runtime backend names (BackendRegistry), in priority
  /// order. "reference" is always added last if not named.
  std::vector<std::string> backends;
  /// Backend instances to use ahead of the named ones (embedding, tests).
  std::vector<std::shared_ptr<Backend>> backendInstances;
  /// Worker threads for the session's oneTBB arena; 0 means one per core.
  /// Outside [0, kMaxThreads], load() and compile() fail.
  int threads = 0;
  /// Run independent branches concurrently when threads > 1 and no kernel
  /// brings its own thread pool (Kernel::usesOwnThreads); see
  /// docs/runtime.md.
  bool parallelBranches = true;
  /// Fail compile() or run() when one frame plus the static memory would
  /// need more than this many bytes; 0 means no limit.
  uint64_t memoryLimitBytes = 0;
  /// Limits on the work of Loops and of kernels whose work an attribute or
  /// the data sets.
  WorkLimits work;
  /// Put a BFC arena in front of each device's allocator for frame memory.
  bool useArena = true;
  /// Concrete dims for graph inputs with symbolic or unknown dims, used to
  /// plan memory at compile() time (and to check the limit early).
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Plans kept per session; the least recently used one is dropped first.
  size_t maxCachedPlans = 16;
  /// Where a device queue can capture work (CUDA graphs, plugin ABI 5): a
  /// run of steps on that device that touch only its memory is submitted
  /// once per frame and plan, captured, and launched as one for every
  /// request after (RunResult::replayedSteps). Not while profiling, with
  /// per-step callbacks, or with parallel branches.
  bool captureDeviceWork = true;
  /// Requests that run at once; more wait for one to end. Each running
  /// request has its own frame and its own `threads` worker slots, so
  /// requests x threads bounds the cores a session keeps busy. 0: no
  /// bound.
  int maxConcurrentRuns = 0;
  /// Dynamic batching (off by default). compile() refuses it, saying why,
  /// unless every graph input has a free dim 0 (symbolic or 1) that no op
  /// mixes: docs/runtime.md, "Dynamic batching".
  BatchingOptions batching;
  SessionCallbacks callbacks;
};

/// Per-request options.
struct RunOptions {
  /// Outputs to return, by name; empty returns every graph output.
  std::vector<std::string> outputNames;
  /// Record a time per step in RunResult::steps.
  bool profile = false;
};

/// Time spent in one step.
struct StepTiming {
  StepInfo step;
  /// Milliseconds; for a step on an asynchronous device queue that can time
  /// its work, the device's time, else the time to submit it.
  double ms = 0;
  /// For a copy: the bytes it wrote (in the destination's layout).
  size_t bytes = 0;
};

/// A point where the host blocked in the middle of a run for a step on an
/// asynchronous device queue (the wait at the end of a run is not one).
struct HostWait {
  std::string step;       ///< The step that needed the value.
  std::string waitedFor;  ///< The device step it waited for.
};

/// The outcome of one request.
struct RunResult {
  std::vector<NamedTensor> outputs;
  /// One entry per executed step, in step order, when profiling.
  std::vector<StepTiming> steps;
  /// Every mid-run host wait for a device queue, in the order they
  /// happened.
  std::vector<HostWait> hostWaits;
  /// Steps this request ran by launching work a device queue captured
  /// (SessionOptions::captureDeviceWork), rather than one by one.
  size_t replayedSteps = 0;
  /// With dynamic batching: how many requests shared this request's run
  /// (1: it ran alone).
  size_t batchedRequests = 1;
  double wallMs = 0;
};

/// Name, element type and declared shape of a graph input or output.
struct IoInfo {
  std::string name;
  TensorType type;
};

/// A loaded, optionally partitioned, compiled graph. See the file comment.
class Session {
 public:
  explicit Session(SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Takes a copy of `graph`. Fails if the graph has a cycle.
  Status load(const Graph& graph);
  /// Takes ownership of `graph`.
  Status load(std::unique_ptr<Graph> graph);

  /// Rewrites the loaded graph with `partitioner` (a test's or a tool's
  /// own rewrite; the library partitions in subgraph::api before load()),
  /// then checks it as load() does. Must come after load() and before
  /// compile().
  Status partition(const std::function<Status(Graph&)>& partitioner);

  /// Creates kernels, inserts copies, plans and fills static memory, runs
  /// session prologues and, when every input shape is known, plans the
  /// memory of a frame (checking SessionOptions::memoryLimitBytes).
  Status compile();

  /// Runs one request. Thread-safe. Every graph input must be given once,
  /// with the declared element type and a shape matching the declared
  /// static dims.
  StatusOr<RunResult> run(const std::vector<NamedTensor>& inputs,
                          const RunOptions& options = {}) const;
  /// The same with inputs read in place; a view whose byte count does not
  /// match its type is refused.
  StatusOr<RunResult> runInPlace(const std::vector<InputView>& inputs,
                                 const RunOptions& options = {}) const;

  /// The graph as loaded (and partitioned).
  const Graph& graph() const;
  std::vector<IoInfo> inputInfo() const;
  std::vector<IoInfo> outputInfo() const;
  /// Every step of the compiled session, in execution order.
  std::vector<StepInfo> steps() const;
  /// The plan made at compile() for known shapes, else the latest plan;
  /// nullopt before any plan exists.
  std::optional<PlanReport> planReport() const;
  /// Number of frames created so far (for tests of frame reuse).
  size_t numFramesCreated() const;
  /// The backends in priority order, reference last.
  std::vector<std::shared_ptr<Backend>> backends() const;

  /// Internal state; defined in runtime/engine.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace subgraph::runtime
