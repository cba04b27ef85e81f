//===- runtime/engine/session.cpp - The Session API -----------------------===//
//
// Session state machine (load -> [partition] -> compile -> run), request
// validation, the plan cache, the frame pool and the oneTBB arena. See
// subgraph/runtime/session.h for the contract and the threading policy.
//
//===----------------------------------------------------------------------===//
#include "subgraph/runtime/session.h"

#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <list>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "engine/batching.h"
#include "engine/executor.h"
#include "engine/plan.h"
#include "engine/program.h"
#include "engine/tsan_annotations.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/runtime/reference_backend.h"

namespace subgraph::runtime {

using engine::Frame;
using engine::Plan;
using engine::Program;

struct Session::Impl {
  enum class State { kEmpty, kLoaded, kCompiled };

  SessionOptions options;
  /// Why the options cannot be used (a thread count out of range); load()
  /// and compile() report it.
  Status optionsStatus;
  State state = State::kEmpty;
  std::unique_ptr<Graph> graph;
  std::vector<std::shared_ptr<Backend>> backends;
  /// Per program device: where frames get their blocks (an arena or the
  /// device allocator itself).
  std::vector<std::shared_ptr<Allocator>> frameAllocators;
  std::unique_ptr<tbb::task_arena> arena;
  // Declared before the frames and plans so that those, which point into
  // the program, are destroyed first.
  std::unique_ptr<Program> program;

  mutable std::mutex planMutex;
  /// Most recently used first.
  mutable std::list<std::shared_ptr<const Plan>> plans;
  std::shared_ptr<const Plan> compilePlan;
  mutable std::shared_ptr<const Plan> lastPlan;

  mutable std::mutex frameMutex;
  mutable std::vector<std::unique_ptr<Frame>> freeFrames;
  mutable size_t framesCreated = 0;
  mutable std::shared_mutex exclusive;
  /// Arenas of requests that are not running; one per concurrent request,
  /// so that requests do not queue for one arena's `threads` slots.
  mutable std::vector<std::unique_ptr<tbb::task_arena>> freeArenas;
  /// Requests running now, bounded by options.maxConcurrentRuns.
  mutable std::mutex gateMutex;
  mutable std::condition_variable gateOpen;
  mutable int running = 0;
  /// Why the loaded graph cannot be batched ("" if it can, or batching is
  /// off), and the batcher when it is on.
  std::string batchRefusal;
  std::unique_ptr<engine::Batcher> batcher;

  StatusOr<RunResult> runRequest(const std::vector<InputView>& inputs,
                                 const RunOptions& options) const;
  StatusOr<RunResult> runBatched(const std::vector<InputView>& inputs,
                                 const RunOptions& options) const;

  ~Impl() {
    // Frames run their epilogues against the program's kernels.
    freeFrames.clear();
    plans.clear();
    compilePlan.reset();
    lastPlan.reset();
    program.reset();
  }

  Status resolveBackends() {
    backends = options.backendInstances;
    for (const std::string& name : options.backends) {
      bool have = std::any_of(backends.begin(), backends.end(),
                              [&](const auto& b) { return b->name() == name; });
      if (have) continue;
      StatusOr<std::shared_ptr<Backend>> b = BackendRegistry::global().create(name);
      if (!b.isOk()) return b.status();
      backends.push_back(std::move(b).value());
    }
    // The reference backend goes last, so plugin kernels win.
    auto ref = std::find_if(backends.begin(), backends.end(),
                            [](const auto& b) { return b->name() == kReferenceBackendName; });
    std::shared_ptr<Backend> reference;
    if (ref != backends.end()) {
      reference = *ref;
      backends.erase(ref);
    } else {
      reference = createReferenceBackend();
    }
    backends.push_back(std::move(reference));
    return Status::ok();
  }

  StatusOr<std::shared_ptr<const Plan>> planFor(const std::vector<TensorDesc>& descs,
                                                const std::vector<const void*>& data) const {
    std::string sig = engine::signatureOf(*program, descs, data);
    {
      std::lock_guard<std::mutex> lock(planMutex);
      for (auto it = plans.begin(); it != plans.end(); ++it) {
        if ((*it)->signature != sig) continue;
        std::shared_ptr<const Plan> hit = *it;
        plans.splice(plans.begin(), plans, it);
        lastPlan = hit;
        return hit;
      }
    }
    const SessionCallbacks& cb = options.callbacks;
    if (cb.onResizeBegin) cb.onResizeBegin(engine::signatureText(*program, descs, data));
    engine::PlanOptions po;
    po.buildEdges = parallel();
    po.memoryLimitBytes = options.memoryLimitBytes;
    StatusOr<std::shared_ptr<Plan>> made = engine::resizeProgram(*program, descs, data, po);
    if (!made.isOk()) return made.status();
    std::shared_ptr<const Plan> plan = std::move(made).value();
    if (cb.onResizeEnd) cb.onResizeEnd(plan->report);
    std::lock_guard<std::mutex> lock(planMutex);
    plans.push_front(plan);
    while (plans.size() > std::max<size_t>(options.maxCachedPlans, 1)) plans.pop_back();
    lastPlan = plan;
    return plan;
  }

  bool parallel() const { return options.parallelBranches && arena->max_concurrency() > 1; }

  StatusOr<std::unique_ptr<Frame>> takeFrame() const {
    {
      std::lock_guard<std::mutex> lock(frameMutex);
      if (!freeFrames.empty()) {
        std::unique_ptr<Frame> f = std::move(freeFrames.back());
        freeFrames.pop_back();
        return f;
      }
      ++framesCreated;
    }
    auto frame = std::make_unique<Frame>(*program);
    SUBGRAPH_RETURN_IF_ERROR(frame->init());
    return frame;
  }

  void returnFrame(std::unique_ptr<Frame> frame) const {
    std::lock_guard<std::mutex> lock(frameMutex);
    freeFrames.push_back(std::move(frame));
  }

  std::unique_ptr<tbb::task_arena> newArena() const {
    // Copy `automatic` into a local: binding the static member to the
    // conditional's reference would odr-use it, and oneTBB does not define it.
    const int automatic = tbb::task_arena::automatic;
    return std::make_unique<tbb::task_arena>(options.threads > 0 ? options.threads : automatic);
  }

  std::unique_ptr<tbb::task_arena> takeArena() const {
    {
      std::lock_guard<std::mutex> lock(frameMutex);
      if (!freeArenas.empty()) {
        std::unique_ptr<tbb::task_arena> a = std::move(freeArenas.back());
        freeArenas.pop_back();
        return a;
      }
    }
    return newArena();
  }

  void returnArena(std::unique_ptr<tbb::task_arena> a) const {
    std::lock_guard<std::mutex> lock(frameMutex);
    freeArenas.push_back(std::move(a));
  }

  /// Waits until fewer than maxConcurrentRuns requests run, then counts
  /// this one in; leave() counts it out.
  void enter() const {
    std::unique_lock<std::mutex> lock(gateMutex);
    int bound = options.maxConcurrentRuns;
    gateOpen.wait(lock, [&] { return bound <= 0 || running < bound; });
    ++running;
  }
  void leave() const {
    {
      std::lock_guard<std::mutex> lock(gateMutex);
      --running;
    }
    gateOpen.notify_one();
  }

  // Checks a request against the graph's inputs and outputs; fills descs
  // and data per graph input and the output indices to return. A bool
  // input holding bytes other than 0 and 1 is read from a canonical copy
  // kept in `copies`, as Tensor's constructor canonicalises: kernels may
  // use a bool byte as a number (Not as 1 - x, Cast as the byte itself).
  Status validate(const std::vector<InputView>& inputs, const RunOptions& ro,
                  std::vector<TensorDesc>& descs, std::vector<const void*>& data,
                  std::vector<size_t>& outputs, std::vector<std::vector<std::byte>>& copies) const {
    const Program& p = *program;
    size_t n = p.inputNames.size();
    descs.assign(n, TensorDesc{});
    data.assign(n, nullptr);
    std::vector<bool> given(n, false);
    for (const InputView& t : inputs) {
      auto it = std::find(p.inputNames.begin(), p.inputNames.end(), t.name);
      if (it == p.inputNames.end()) {
        std::string known;
        for (const auto& name : p.inputNames) known += (known.empty() ? "" : ", ") + name;
        return Status::error(StatusCode::kNotFound,
                             "unknown input '" + t.name + "' (graph inputs: " + known + ")");
      }
      size_t i = static_cast<size_t>(it - p.inputNames.begin());
      if (given[i]) return Status::invalid("input '" + t.name + "' is given twice");
      given[i] = true;
      const TensorType& declared = p.inputTypes[i];
      if (t.dtype == DataType::kString)
        return Status::error(
            StatusCode::kUnsupported,
            "input '" + t.name + "' is a string tensor; the runtime has no string kernels");
      if (declared.dtype != DataType::kUndefined && declared.dtype != t.dtype)
        return Status::invalid("input '" + t.name + "' has element type " +
                               std::string(dataTypeName(t.dtype)) + " but the graph declares " +
                               std::string(dataTypeName(declared.dtype)));
      if (declared.shape) {
        const Shape& shape = *declared.shape;
        const auto& dims = t.dims;
        bool ok = shape.size() == dims.size();
        for (size_t d = 0; ok && d < dims.size(); ++d)
          ok = !shape[d].isStatic() || shape[d].size() == dims[d];
        if (!ok) {
          TensorDesc got{t.dtype, dims, nullptr};
          return Status::invalid("input '" + t.name + "' has shape " + got.toString() +
                                 " but the graph declares " + declared.toString());
        }
      }
      descs[i] = TensorDesc{t.dtype, t.dims, nullptr};
      if (descs[i].byteSize() != t.bytes)
        return Status::invalid("input '" + t.name + "' has " + std::to_string(t.bytes) +
                               " bytes, but " + descs[i].toString() + " takes " +
                               std::to_string(descs[i].byteSize()));
      data[i] = t.dtype == DataType::kBool ? canonicalBools(t, copies) : t.data;
    }
    for (size_t i = 0; i < n; ++i) {
      if (given[i]) continue;
      const engine::Slot& slot = p.slots[static_cast<size_t>(p.inputSlots[i])];
      if (!slot.initializer)
        return Status::invalid("missing input '" + p.inputNames[i] + "' (" +
                               p.inputTypes[i].toString() + ")");
      descs[i] = TensorDesc{slot.initializer->dtype(), slot.initializer->dims(), nullptr};
      data[i] = slot.initializer->bytes().data();
    }
    outputs.clear();
    if (ro.outputNames.empty()) {
      for (size_t o = 0; o < p.outputNames.size(); ++o) outputs.push_back(o);
    } else {
      for (const std::string& name : ro.outputNames) {
        auto it = std::find(p.outputNames.begin(), p.outputNames.end(), name);
        if (it == p.outputNames.end()) {
          std::string known;
          for (const auto& o : p.outputNames) known += (known.empty() ? "" : ", ") + o;
          return Status::error(StatusCode::kNotFound,
                               "unknown output '" + name + "' (graph outputs: " + known + ")");
        }
        outputs.push_back(static_cast<size_t>(it - p.outputNames.begin()));
      }
    }
    return Status::ok();
  }

  // `t`'s bytes, or a copy with every non-zero byte made 1 when it holds
  // another value (the caller's buffer is never written).
  static const void* canonicalBools(const InputView& t,
                                    std::vector<std::vector<std::byte>>& copies) {
    const auto* bytes = static_cast<const std::byte*>(t.data);
    auto canonical = [](std::byte b) { return b <= std::byte{1}; };
    if (std::all_of(bytes, bytes + t.bytes, canonical)) return t.data;
    std::vector<std::byte>& copy = copies.emplace_back(t.bytes);
    std::transform(bytes, bytes + t.bytes, copy.begin(),
                   [](std::byte b) { return b == std::byte{0} ? b : std::byte{1}; });
    return copy.data();
  }

  Status runInFrame(const std::vector<TensorDesc>& descs, const std::vector<const void*>& data,
                    const std::vector<size_t>& outputs, const RunOptions& ro,
                    RunResult& result) const {
    StatusOr<std::shared_ptr<const Plan>> planOr = planFor(descs, data);
    if (!planOr.isOk()) return planOr.status();
    const Plan& plan = *planOr.value();
    StatusOr<std::unique_ptr<Frame>> frameOr = takeFrame();
    if (!frameOr.isOk()) return frameOr.status();
    std::unique_ptr<Frame> frame = std::move(frameOr).value();
    // The frame goes back to the pool whatever happens below.
    struct Return {
      const Impl* self;
      std::unique_ptr<Frame>& frame;
      ~Return() { self->returnFrame(std::move(frame)); }
    } giveBack{this, frame};

    SUBGRAPH_RETURN_IF_ERROR(frame->reserve(plan, frameAllocators));
    frame->bind(plan, data);
    engine::ExecuteOptions eo;
    // A program with kernels that bring their own thread pool runs its
    // steps in order on the calling thread: such a kernel already keeps
    // every core busy, so branch tasks beside it gain nothing, while the
    // oneTBB workers that would pick them up spin next to its OpenMP team
    // (three busy threads on two cores), and each oneTBB thread that calls
    // oneDNN gets an OpenMP team of its own. Measured on zoo resnet50 with
    // onednn, 2 threads: median 103-150 ms a run with branch tasks, 52-64
    // ms in order.
    eo.parallel = parallel() && !program->hasOwnThreadSteps;
    eo.profile = ro.profile;
    eo.callbacks = &options.callbacks;
    eo.exclusive = program->hasExclusiveSteps ? &exclusive : nullptr;
    eo.timings = &result.steps;
    eo.hostWaits = &result.hostWaits;
    // Replayed work has no per-step times or callbacks.
    const SessionCallbacks& cb = options.callbacks;
    eo.capture = options.captureDeviceWork && program->hasAsyncQueues && !ro.profile &&
                 !eo.parallel && !cb.onExecuteBegin && !cb.onExecuteEnd;
    eo.replayedSteps = &result.replayedSteps;
    SUBGRAPH_RETURN_IF_ERROR(engine::execute(*program, plan, *frame, eo));
    for (size_t o : outputs) {
      const TensorView& v = frame->view(program->outputSlots[o]);
      std::vector<std::byte> bytes(v.byteSize());
      if (!bytes.empty()) std::memcpy(bytes.data(), v.raw(), bytes.size());
      result.outputs.push_back(
          {program->outputNames[o], Tensor(v.dtype(), v.dims(), std::move(bytes))});
    }
    return Status::ok();
  }
};

Status verifyForRun(const Graph& graph) {
  // Unknown ops and attributes are allowed: fused regions and plugin ops
  // have no schema, and compile() reports an op that no backend runs.
  VerifyOptions options;
  options.allowUnknownOps = true;
  options.allowUnknownAttributes = true;
  Status verdict = verify(graph, options);
  if (!verdict.isOk()) return Status::error(verdict.code(), "invalid graph: " + verdict.message());
  StatusOr<std::vector<Node*>> order = const_cast<Graph&>(graph).topologicalOrder();
  return order.isOk() ? Status::ok() : order.status();
}

std::string batchRefusal(const Graph& graph) { return engine::batchRefusal(graph); }

Status checkThreadCount(int64_t threads, std::string_view what) {
  if (threads >= 0 && threads <= kMaxThreads) return Status::ok();
  return Status(StatusCode::kUsage, std::string(what) + " must be between 0 (one per core) and " +
                                        std::to_string(kMaxThreads) + ", not " +
                                        std::to_string(threads));
}

Session::Session(SessionOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->optionsStatus = checkThreadCount(impl_->options.threads);
  if (impl_->optionsStatus.isOk() && impl_->options.batching.maxDelayUs < 0)
    impl_->optionsStatus = Status::invalid("BatchingOptions::maxDelayUs must be 0 or more, not " +
                                           std::to_string(impl_->options.batching.maxDelayUs));
  if (impl_->optionsStatus.isOk() && impl_->options.maxConcurrentRuns < 0)
    impl_->optionsStatus = Status::invalid(
        "SessionOptions::maxConcurrentRuns must be 0 (no "
        "bound) or more, not " +
        std::to_string(impl_->options.maxConcurrentRuns));
  // A count out of range never reaches oneTBB; load() reports it.
  if (!impl_->optionsStatus.isOk()) impl_->options.threads = 0;
  impl_->arena = impl_->newArena();
}

Session::~Session() = default;

Status Session::load(const Graph& graph) { return load(graph.clone()); }

Status Session::load(std::unique_ptr<Graph> graph) {
  SUBGRAPH_RETURN_IF_ERROR(impl_->optionsStatus);
  if (impl_->state != Impl::State::kEmpty)
    return Status::invalid("Session::load: a graph is already loaded");
  if (!graph) return Status::invalid("Session::load: null graph");
  SUBGRAPH_RETURN_IF_ERROR(verifyForRun(*graph));
  // Fused regions are judged by their bodies.
  if (impl_->options.batching.maxBatch > 1) impl_->batchRefusal = engine::batchRefusal(*graph);
  impl_->graph = std::move(graph);
  impl_->state = Impl::State::kLoaded;
  return Status::ok();
}

Status Session::partition(const std::function<Status(Graph&)>& partitioner) {
  if (impl_->state != Impl::State::kLoaded)
    return Status::invalid(impl_->state == Impl::State::kEmpty
                               ? "Session::partition: no graph loaded"
                               : "Session::partition: the session is already compiled");
  Status st = partitioner(*impl_->graph);
  if (!st.isOk()) return st;
  // A partitioner (a plugin's, too) may leave a broken graph; the kernels
  // must not be the ones to find out.
  SUBGRAPH_RETURN_IF_ERROR(verifyForRun(*impl_->graph));
  if (impl_->options.batching.maxBatch > 1)
    impl_->batchRefusal = engine::batchRefusal(*impl_->graph);
  return Status::ok();
}

Status Session::compile() {
  Impl& s = *impl_;
  if (s.state != Impl::State::kLoaded)
    return Status::invalid(s.state == Impl::State::kEmpty ? "Session::compile: no graph loaded"
                                                          : "Session::compile: already compiled");
  if (!s.batchRefusal.empty())
    return Status::invalid("dynamic batching: " + s.batchRefusal +
                           "; batching needs a free dim 0 that every op keeps apart");
  SUBGRAPH_RETURN_IF_ERROR(s.resolveBackends());
  for (const auto& [name, dims] : s.options.inputShapes) {
    bool known = false;
    for (const Value* v : s.graph->inputs()) known = known || v->name() == name;
    if (!known)
      return Status::error(StatusCode::kNotFound, "SessionOptions::inputShapes names '" + name +
                                                      "', which is not a graph input");
  }
  Status built;
  engine::executeOrdered(*s.arena, [&] {
    StatusOr<std::unique_ptr<Program>> program = engine::buildProgram(
        *s.graph, s.backends, engine::SessionLimits{s.options.memoryLimitBytes, s.options.work});
    if (!program.isOk()) {
      built = program.status();
      return;
    }
    s.program = std::move(program).value();
  });
  SUBGRAPH_RETURN_IF_ERROR(built);
  const Program& p = *s.program;
  s.frameAllocators.clear();
  for (const auto& alloc : p.deviceAllocators)
    s.frameAllocators.push_back(s.options.useArena ? std::make_shared<BfcArena>(alloc) : alloc);

  // Plan now when every input shape is known and no input's contents
  // decide shapes.
  std::vector<TensorDesc> descs(p.inputNames.size());
  bool known = p.contentInputs.empty();
  for (size_t i = 0; known && i < p.inputNames.size(); ++i) {
    const TensorType& t = p.inputTypes[i];
    descs[i].dtype = t.dtype;
    if (auto it = s.options.inputShapes.find(p.inputNames[i]); it != s.options.inputShapes.end()) {
      descs[i].dims = it->second;
    } else if (t.shape && isStaticShape(*t.shape)) {
      for (const Dim& d : *t.shape) descs[i].dims.push_back(d.size());
    } else if (const Tensor* init = p.slots[static_cast<size_t>(p.inputSlots[i])].initializer) {
      descs[i].dims = init->dims();
    } else {
      known = false;
    }
    known = known && t.dtype != DataType::kUndefined;
  }
  if (known) {
    std::vector<const void*> data(descs.size(), nullptr);
    Status planned;
    engine::executeOrdered(*s.arena, [&] {
      StatusOr<std::shared_ptr<const Plan>> plan = s.planFor(descs, data);
      if (plan.isOk())
        s.compilePlan = plan.value();
      else
        planned = plan.status();
    });
    if (!planned.isOk()) {
      s.program.reset();
      return planned;
    }
  }
  if (s.options.batching.maxBatch > 1)
    s.batcher = std::make_unique<engine::Batcher>(
        s.options.batching,
        [&s](const std::vector<InputView>& inputs) { return s.runRequest(inputs, RunOptions{}); });
  s.state = Impl::State::kCompiled;
  return Status::ok();
}

StatusOr<RunResult> Session::run(const std::vector<NamedTensor>& inputs,
                                 const RunOptions& options) const {
  std::vector<InputView> views;
  views.reserve(inputs.size());
  for (const NamedTensor& t : inputs)
    views.push_back({t.name, t.tensor.dtype(), t.tensor.dims(), t.tensor.bytes().data(),
                     t.tensor.bytes().size()});
  return runInPlace(views, options);
}

StatusOr<RunResult> Session::runInPlace(const std::vector<InputView>& inputs,
                                        const RunOptions& options) const {
  const Impl& s = *impl_;
  if (s.state != Impl::State::kCompiled)
    return Status::invalid("Session::run: the session is not compiled (call compile() first)");
  if (s.batcher && !options.profile) return s.runBatched(inputs, options);
  return s.runRequest(inputs, options);
}

StatusOr<RunResult> Session::Impl::runBatched(const std::vector<InputView>& inputs,
                                              const RunOptions& ro) const {
  auto start = std::chrono::steady_clock::now();
  {
    // A request that cannot run fails alone, before it joins a batch.
    std::vector<TensorDesc> descs;
    std::vector<const void*> data;
    std::vector<size_t> outputs;
    std::vector<std::vector<std::byte>> copies;
    SUBGRAPH_RETURN_IF_ERROR(validate(inputs, ro, descs, data, outputs, copies));
  }
  int64_t rows = -1;
  for (const InputView& in : inputs) {
    int64_t r = in.dims.empty() ? -1 : in.dims[0];
    if (in.dtype == DataType::kBool || r < 1 || (rows >= 0 && r != rows)) rows = -2;
    if (rows != -2) rows = r;
  }
  // Inputs whose dim 0 differ (or bools, which runs canonicalise) run alone.
  if (rows < 1) return runRequest(inputs, ro);
  StatusOr<RunResult> got = batcher->run(inputs, rows);
  if (!got.isOk() || ro.outputNames.empty()) return got;
  RunResult& r = got.value();
  std::vector<NamedTensor> wanted;
  for (const std::string& name : ro.outputNames)
    for (NamedTensor& o : r.outputs)
      if (o.name == name) wanted.push_back(std::move(o));
  r.outputs = std::move(wanted);
  r.wallMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return got;
}

StatusOr<RunResult> Session::Impl::runRequest(const std::vector<InputView>& inputs,
                                              const RunOptions& ro) const {
  const Impl& s = *this;
  auto start = std::chrono::steady_clock::now();
  std::vector<TensorDesc> descs;
  std::vector<const void*> data;
  std::vector<size_t> outputs;
  std::vector<std::vector<std::byte>> canonicalCopies;  // live until the run ends
  SUBGRAPH_RETURN_IF_ERROR(s.validate(inputs, ro, descs, data, outputs, canonicalCopies));
  RunResult result;
  Status st;
  {
    // Each running request in an arena of its own: sharing one would queue
    // a request for the other's `threads` slots.
    struct Lease {
      const Impl& s;
      std::unique_ptr<tbb::task_arena> arena;
      explicit Lease(const Impl& session) : s(session) {
        s.enter();
        arena = s.takeArena();
      }
      ~Lease() {
        s.returnArena(std::move(arena));
        s.leave();
      }
    } lease(s);
    // The arena may run the functor on one of its worker threads.
    engine::executeOrdered(*lease.arena,
                           [&] { st = s.runInFrame(descs, data, outputs, ro, result); });
  }
  if (!st.isOk()) return st;
  result.wallMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

const Graph& Session::graph() const {
  if (!impl_->graph) throw Error("Session::graph: no graph loaded");
  return *impl_->graph;
}

std::vector<IoInfo> Session::inputInfo() const {
  std::vector<IoInfo> out;
  if (impl_->graph)
    for (const Value* v : impl_->graph->inputs()) out.push_back({v->name(), v->type()});
  return out;
}

std::vector<IoInfo> Session::outputInfo() const {
  std::vector<IoInfo> out;
  if (impl_->graph)
    for (const Value* v : impl_->graph->outputs()) out.push_back({v->name(), v->type()});
  return out;
}

std::vector<StepInfo> Session::steps() const {
  std::vector<StepInfo> out;
  if (!impl_->program) return out;
  for (size_t i = 0; i < impl_->program->steps.size(); ++i) {
    out.push_back(impl_->program->steps[i].info);
    out.back().index = i;
  }
  return out;
}

std::optional<PlanReport> Session::planReport() const {
  std::lock_guard<std::mutex> lock(impl_->planMutex);
  if (impl_->compilePlan) return impl_->compilePlan->report;
  if (impl_->lastPlan) return impl_->lastPlan->report;
  return std::nullopt;
}

size_t Session::numFramesCreated() const {
  std::lock_guard<std::mutex> lock(impl_->frameMutex);
  return impl_->framesCreated;
}

std::vector<std::shared_ptr<Backend>> Session::backends() const { return impl_->backends; }

}  // namespace subgraph::runtime
