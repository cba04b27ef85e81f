//===- api/mpi_pipeline.cpp - One pipeline stage per MPI rank -------------===//
//
// See subgraph/api/mpi_pipeline.h. Only the calling thread talks MPI
// (MPI_THREAD_FUNNELED). Every wait is a poll: it also looks for an abort
// from any rank and, within a run, for its deadline, so no rank blocks on
// a peer that is gone. Values travel with one tag in one direction per
// pair of ranks, so MPI's ordering keeps the micro-batches in order;
// aborts have a tag of their own.
//
//===----------------------------------------------------------------------===//
#include "subgraph/api/mpi_pipeline.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <future>
#include <list>
#include <mutex>
#include <set>
#include <thread>

#include "mpi_wire.h"
#include "stage_runs.h"

#if SUBGRAPH_API_HAVE_MPI
#include <mpi.h>
#endif

namespace subgraph::api {
namespace {

// The first of `names` set in the environment as a whole number, or -1.
int environmentNumber(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const char* v = std::getenv(name); v && *v) {
      char* end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (*end == '\0' && n >= 0 && n < INT_MAX) return static_cast<int>(n);
    }
  return -1;
}

}  // namespace

int mpiLaunchedRanks() {
  int n = environmentNumber({"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"});
  return n < 0 ? 0 : n;
}

int mpiLaunchedRank() {
  return environmentNumber({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"});
}

#if SUBGRAPH_API_HAVE_MPI

namespace {

constexpr int kTagValues = 51;
constexpr int kTagAbort = 52;
constexpr size_t kMaxMessage = INT_MAX;
constexpr size_t kMaxText = 480;
// The longest a waiting rank sleeps between looks at MPI. Shorter naps
// cost the computing thread more than they save: on the 2-core machine,
// waking every 50 us slowed the stage beside it from 52 to 65-88 ms.
constexpr std::chrono::microseconds kLongestNap{1000};

std::atomic<bool> mpiStartedHere{false};
std::atomic<bool> mpiRunFailed{false};

// The sessions alive in this process, so that mpiFinalize() can close
// rank 0's first (the others' serve() would wait for it forever).
std::mutex liveMutex;
std::set<MpiPipelinedSession*> live;

using Clock = std::chrono::steady_clock;

// Starts MPI unless it runs already; errors come back as codes.
Status startMpi() {
  int started = 0;
  MPI_Initialized(&started);
  if (!started) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      return Status(StatusCode::kIo, "MPI_Init_thread failed");
    mpiStartedHere = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return Status::ok();
}

// A hash of what a rank planned, so that ranks given different models or
// options find out before they exchange values.
uint64_t planHash(const StagePlan& plan) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& s) {
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  for (const Stage& s : plan.stages) {
    mix(s.device);
    for (const std::string& n : s.nodes) mix(n);
  }
  return h;
}

// Tests `request` until it completes (true) or `until` passes (false).
bool completesBy(MPI_Request& request, Clock::time_point until) {
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(kLongestNap);
  }
}

}  // namespace

bool mpiBuilt() { return true; }

struct MpiPipelinedSession::Impl {
  detail::PlannedStages planned;
  std::unique_ptr<runtime::Session> stage;
  int rank = 0, size = 1;
  double timeout = 60;
  std::vector<std::string> where;              // where[r]: how errors name rank r
  std::vector<std::set<std::string>> forward;  // forward[r]: what rank r sends on
  struct Pending {
    std::vector<std::byte> bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::list<Pending> sends;
  Status broken;  // once a run failed, every call returns it
  bool closed = false;
  // The stage computes here while this thread keeps MPI moving: a large
  // message is sent only as both sides call MPI (rendezvous), so a rank
  // that computed without calling MPI would hold up the next rank.
  detail::StageThread computer;

  void progress();
  Status runStage(detail::Values& values);
  Status fail(Status st);
  /// fail() with this rank named first.
  Status failHere(const Status& st) {
    return fail(Status(st.code(), where[rank] + ": " + st.message()));
  }
  Status checkAbort();
  Status send(std::vector<std::byte> bytes, int dest);
  StatusOr<std::vector<std::byte>> receive(int source, bool watch);
  Status drain();
  Status agree(const Status& mine, uint64_t hash);
};

void MpiPipelinedSession::Impl::progress() {
  for (auto it = sends.begin(); it != sends.end();) {
    int done = 0;
    MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
    it = done ? sends.erase(it) : std::next(it);
  }
}

Status MpiPipelinedSession::Impl::runStage(detail::Values& values) {
  Status ran;
  std::future<void> done = computer.post([&] { ran = detail::runStage(*stage, values); });
  while (done.wait_for(kLongestNap) != std::future_status::ready) progress();
  done.get();
  return ran.isOk() ? ran : failHere(ran);
}

// Tells every other rank why the run ends (small messages, sent eagerly;
// a rank that is gone never takes its copy, and the wait for it is short).
Status MpiPipelinedSession::Impl::fail(Status st) {
  if (!broken.isOk()) return broken;
  broken = st;
  mpiRunFailed = true;
  std::string text = st.message().substr(0, kMaxText);
  std::list<Pending> aborts;
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    Pending& p = aborts.emplace_back();
    p.bytes.assign(reinterpret_cast<const std::byte*>(text.data()),
                   reinterpret_cast<const std::byte*>(text.data()) + text.size());
    MPI_Isend(p.bytes.data(), static_cast<int>(p.bytes.size()), MPI_BYTE, r, kTagAbort,
              MPI_COMM_WORLD, &p.request);
  }
  const auto until = Clock::now() + std::chrono::seconds(1);
  for (Pending& p : aborts) (void)completesBy(p.request, until);
  return st;
}

// An abort another rank sent, as this session's error; ok if none came.
Status MpiPipelinedSession::Impl::checkAbort() {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, kTagAbort, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return Status::ok();
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::string text(static_cast<size_t>(std::max(count, 0)), '\0');
  MPI_Recv(text.data(), count, MPI_BYTE, status.MPI_SOURCE, kTagAbort, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  broken = Status(StatusCode::kPluginFailure, text);
  mpiRunFailed = true;
  return broken;
}

Status MpiPipelinedSession::Impl::send(std::vector<std::byte> bytes, int dest) {
  Pending& p = sends.emplace_back();
  p.bytes = std::move(bytes);
  if (MPI_Isend(p.bytes.data(), static_cast<int>(p.bytes.size()), MPI_BYTE, dest, kTagValues,
                MPI_COMM_WORLD, &p.request) != MPI_SUCCESS) {
    sends.pop_back();
    return fail(Status(StatusCode::kIo,
                       where[rank] + ": MPI_Isend to rank " + std::to_string(dest) + " failed"));
  }
  progress();
  return Status::ok();
}

// The next message from `source`; within a run (`watch`), at most
// `timeout` seconds of waiting.
StatusOr<std::vector<std::byte>> MpiPipelinedSession::Impl::receive(int source, bool watch) {
  const auto start = Clock::now();
  auto nap = std::chrono::microseconds(1);
  for (;;) {
    SUBGRAPH_RETURN_IF_ERROR(checkAbort());
    int flag = 0;
    MPI_Message message;
    MPI_Status status;
    MPI_Improbe(source, kTagValues, MPI_COMM_WORLD, &flag, &message, &status);
    if (flag) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      std::vector<std::byte> bytes(static_cast<size_t>(std::max(count, 0)));
      if (MPI_Mrecv(bytes.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return fail(
            Status(StatusCode::kIo, where[rank] + ": receiving from " + where[source] + " failed"));
      return bytes;
    }
    progress();
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (watch && waited > timeout)
      return fail(Status(StatusCode::kLimitExceeded,
                         fmt::format("{}: nothing from {} for {:g} s within a run: it died or "
                                     "hangs (MpiOptions::timeoutSeconds, --mpi-timeout)",
                                     where[rank], where[source], timeout)));
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, kLongestNap);
  }
}

// Waits until every send has completed, watching for aborts and the deadline.
Status MpiPipelinedSession::Impl::drain() {
  const auto start = Clock::now();
  while (!sends.empty()) {
    SUBGRAPH_RETURN_IF_ERROR(checkAbort());
    progress();
    if (std::chrono::duration<double>(Clock::now() - start).count() > timeout)
      return fail(Status(StatusCode::kLimitExceeded,
                         fmt::format("{}: a message it sent was not taken in {:g} s: the rank it "
                                     "went to died or hangs",
                                     where[rank], timeout)));
    std::this_thread::sleep_for(kLongestNap);
  }
  return Status::ok();
}

// Every rank's setup outcome, gathered without blocking: the first
// failure (by rank) is every rank's error, and so is a plan that differs.
Status MpiPipelinedSession::Impl::agree(const Status& mine, uint64_t hash) {
  struct Outcome {
    int32_t ok;
    uint64_t hash;
    char text[kMaxText + 1];
  };
  Outcome own{};
  own.ok = mine.isOk() ? 1 : 0;
  own.hash = hash;
  std::string text = mine.message().substr(0, kMaxText);
  std::copy(text.begin(), text.end(), own.text);
  std::vector<Outcome> all(static_cast<size_t>(size));
  MPI_Request request;
  MPI_Iallgather(&own, sizeof(Outcome), MPI_BYTE, all.data(), sizeof(Outcome), MPI_BYTE,
                 MPI_COMM_WORLD, &request);
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(timeout));
  if (!completesBy(request, until)) {
    mpiRunFailed = true;
    return Status(
        StatusCode::kLimitExceeded,
        fmt::format("{}: not every rank reached the end of setup in {:g} s", where[rank], timeout));
  }
  for (const Outcome& o : all)
    if (!o.ok) return Status(StatusCode::kInvalidArgument, std::string(o.text));
  for (int r = 1; r < size; ++r)
    if (all[static_cast<size_t>(r)].hash != all[0].hash)
      return Status(StatusCode::kInvalidArgument, where[static_cast<size_t>(r)] +
                                                      ": planned other stages than rank 0 (every "
                                                      "rank needs the same model and options)");
  return Status::ok();
}

namespace {

// This rank's part of setup: plan every stage, compile its own, and learn
// what each rank sends on.
Status setUp(MpiPipelinedSession::Impl& s, std::unique_ptr<Graph> model, InferenceOptions& options,
             const std::vector<StageDevice>& devices, const InputShapes& microBatch) {
  StatusOr<detail::PlannedStages> planned =
      detail::planPipeline(std::move(model), options, devices, microBatch);
  if (!planned.isOk()) return planned.status();
  s.planned = std::move(planned).value();
  if (s.planned.plan.stages.size() != static_cast<size_t>(s.size))
    return Status::invalid(fmt::format("the model gives {} stages for {} ranks",
                                       s.planned.plan.stages.size(), s.size));
  StatusOr<std::unique_ptr<runtime::Session>> stage =
      detail::compileStage(s.planned, static_cast<size_t>(s.rank), options);
  if (!stage.isOk()) return stage.status();
  s.stage = std::move(stage).value();
  std::set<std::string> later(s.planned.outputNames.begin(), s.planned.outputNames.end());
  s.forward.assign(static_cast<size_t>(s.size), {});
  for (int r = s.size - 1; r >= 0; --r) {
    s.forward[static_cast<size_t>(r)] = later;
    StatusOr<std::vector<std::string>> reads =
        detail::stageInputs(s.planned, static_cast<size_t>(r));
    if (!reads.isOk()) return reads.status();
    later.insert(reads->begin(), reads->end());
  }
  return Status::ok();
}

}  // namespace

StatusOr<std::unique_ptr<MpiPipelinedSession>> MpiPipelinedSession::create(
    StatusOr<std::unique_ptr<Graph>> model, InferenceOptions options,
    std::vector<StageDevice> devices, const InputShapes& microBatch, MpiOptions mpi) {
  if (!(mpi.timeoutSeconds > 0))
    return Status(StatusCode::kUsage, "the MPI timeout must be a positive number of seconds");
  SUBGRAPH_RETURN_IF_ERROR(startMpi());
  auto impl = std::make_unique<Impl>();
  MPI_Comm_rank(MPI_COMM_WORLD, &impl->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &impl->size);
  impl->timeout = mpi.timeoutSeconds;
  // Every rank sees the same counts, so this error needs no agreement.
  if (devices.size() != static_cast<size_t>(impl->size))
    return Status(StatusCode::kUsage,
                  fmt::format("mpirun started {} ranks for {} stages: one stage per rank",
                              impl->size, devices.size()));
  for (int r = 0; r < impl->size; ++r)
    impl->where.push_back(fmt::format("rank {} (stage {} on {})", r, r, devices[r].name));
  Status mine = model.isOk() ? setUp(*impl, std::move(model).value(), options, devices, microBatch)
                             : model.status();
  if (!mine.isOk()) mine = Status(mine.code(), impl->where[impl->rank] + ": " + mine.message());
  // An error every rank agreed on leaves nothing in flight: MPI can still
  // end cleanly (agree() marks a timeout, which cannot).
  SUBGRAPH_RETURN_IF_ERROR(impl->agree(mine, mine.isOk() ? planHash(impl->planned.plan) : 0));
  return std::unique_ptr<MpiPipelinedSession>(new MpiPipelinedSession(std::move(impl)));
}

StatusOr<std::vector<runtime::NamedTensor>> MpiPipelinedSession::run(
    const std::vector<runtime::NamedTensor>& inputs, size_t microBatches) {
  Impl& s = *impl_;
  if (s.rank != 0)
    return Status(StatusCode::kUsage, where() + ": run() is rank 0's; the others call serve()");
  if (!s.broken.isOk()) return s.broken;
  if (s.closed) return Status(StatusCode::kUsage, "run() after close()");
  StatusOr<std::vector<detail::Values>> parts = detail::splitBatch(inputs, microBatches);
  if (!parts.isOk()) return parts.status();
  for (size_t i = 0; i < parts->size(); ++i) {
    SUBGRAPH_RETURN_IF_ERROR(s.runStage((*parts)[i]));
    if (s.size == 1) continue;
    auto bytes = detail::encodeWire(detail::WireKind::kValues, i, i + 1 == parts->size(),
                                    (*parts)[i], s.forward[0], kMaxMessage);
    if (!bytes.isOk()) return s.failHere(bytes.status());
    SUBGRAPH_RETURN_IF_ERROR(s.send(std::move(bytes).value(), 1));
  }
  for (size_t got = 0; s.size > 1 && got < parts->size(); ++got) {
    StatusOr<std::vector<std::byte>> bytes = s.receive(s.size - 1, true);
    if (!bytes.isOk()) return bytes.status();
    StatusOr<detail::WireMessage> m = detail::decodeWire(*bytes);
    if (!m.isOk() || m->kind != detail::WireKind::kValues || m->index >= parts->size())
      return s.fail(Status(StatusCode::kInvalidArgument,
                           where() + ": a bad message from " + s.where.back() + ": " +
                               (m.isOk() ? "not an output of this run" : m.status().message())));
    for (auto& [name, t] : m->values) (*parts)[m->index][name] = std::move(t);
  }
  SUBGRAPH_RETURN_IF_ERROR(s.drain());
  return detail::joinBatch(*parts, s.planned.outputNames);
}

StatusOr<size_t> MpiPipelinedSession::serve() {
  Impl& s = *impl_;
  if (s.rank == 0) return Status(StatusCode::kUsage, where() + ": rank 0 calls run(), not serve()");
  if (!s.broken.isOk()) return s.broken;
  const int next = s.rank + 1 < s.size ? s.rank + 1 : 0;
  size_t ran = 0;
  for (bool inRun = false;;) {
    StatusOr<std::vector<std::byte>> bytes = s.receive(s.rank - 1, inRun);
    if (!bytes.isOk()) return bytes.status();
    StatusOr<detail::WireMessage> m = detail::decodeWire(*bytes);
    if (!m.isOk())
      return s.fail(Status(m.status().code(), where() + ": from " + s.where[s.rank - 1] + ": " +
                                                  m.status().message()));
    if (m->kind == detail::WireKind::kEnd) {
      if (next != 0) SUBGRAPH_RETURN_IF_ERROR(s.send(std::move(bytes).value(), next));
      SUBGRAPH_RETURN_IF_ERROR(s.drain());
      return ran;
    }
    SUBGRAPH_RETURN_IF_ERROR(s.runStage(m->values));
    auto out = detail::encodeWire(detail::WireKind::kValues, m->index, m->last, m->values,
                                  s.forward[s.rank], kMaxMessage);
    if (!out.isOk()) return s.failHere(out.status());
    SUBGRAPH_RETURN_IF_ERROR(s.send(std::move(out).value(), next));
    inRun = !m->last;
    ++ran;
  }
}

Status MpiPipelinedSession::close() {
  Impl& s = *impl_;
  if (s.rank != 0 || s.closed) return Status::ok();
  s.closed = true;
  if (!s.broken.isOk()) return s.broken;
  if (s.size == 1) return Status::ok();
  auto end = detail::encodeWire(detail::WireKind::kEnd, 0, true, {}, {}, kMaxMessage);
  if (!end.isOk()) return end.status();
  SUBGRAPH_RETURN_IF_ERROR(s.send(std::move(end).value(), 1));
  return s.drain();
}

int MpiPipelinedSession::rank() const { return impl_->rank; }
int MpiPipelinedSession::ranks() const { return impl_->size; }
const StagePlan& MpiPipelinedSession::plan() const { return impl_->planned.plan; }
std::string MpiPipelinedSession::where() const { return impl_->where[impl_->rank]; }

void mpiFinalize() {
  {
    std::lock_guard<std::mutex> lock(liveMutex);
    for (MpiPipelinedSession* s : live) (void)s->close();
  }
  int started = 0, finalized = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&finalized);
  if (started && !finalized && mpiStartedHere && !mpiRunFailed) MPI_Finalize();
}

#else  // !SUBGRAPH_API_HAVE_MPI

bool mpiBuilt() { return false; }

struct MpiPipelinedSession::Impl {};

StatusOr<std::unique_ptr<MpiPipelinedSession>> MpiPipelinedSession::create(
    StatusOr<std::unique_ptr<Graph>>, InferenceOptions, std::vector<StageDevice>,
    const InputShapes&, MpiOptions) {
  return Status(StatusCode::kUnsupported,
                "this build has no MPI: install libopenmpi-dev (tools/setup.sh does) and rebuild");
}
StatusOr<std::vector<runtime::NamedTensor>> MpiPipelinedSession::run(
    const std::vector<runtime::NamedTensor>&, size_t) {
  return Status(StatusCode::kUnsupported, "this build has no MPI");
}
StatusOr<size_t> MpiPipelinedSession::serve() {
  return Status(StatusCode::kUnsupported, "this build has no MPI");
}
Status MpiPipelinedSession::close() { return Status::ok(); }
int MpiPipelinedSession::rank() const { return 0; }
int MpiPipelinedSession::ranks() const { return 1; }
const StagePlan& MpiPipelinedSession::plan() const {
  static const StagePlan none;
  return none;
}
std::string MpiPipelinedSession::where() const { return "rank 0"; }
void mpiFinalize() {}

#endif  // SUBGRAPH_API_HAVE_MPI

#if SUBGRAPH_API_HAVE_MPI
MpiPipelinedSession::MpiPipelinedSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  std::lock_guard<std::mutex> lock(liveMutex);
  live.insert(this);
}

MpiPipelinedSession::~MpiPipelinedSession() {
  {
    std::lock_guard<std::mutex> lock(liveMutex);
    live.erase(this);
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (impl_ && !finalized) (void)close();
}
#else
MpiPipelinedSession::MpiPipelinedSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MpiPipelinedSession::~MpiPipelinedSession() = default;
#endif

}  // namespace subgraph::api
