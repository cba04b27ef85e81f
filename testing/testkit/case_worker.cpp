//===- testing/testkit/case_worker.cpp - check-plugin cases in a child process ===//
//
// See case_worker.h. The parent never writes to a dead worker with write(2)
// (SIGPIPE would end it): the socket pair takes send(MSG_NOSIGNAL). The
// worker's stderr is a pipe the parent drains while it waits for an answer,
// keeping only the last kErrorTailBytes: a plugin that writes without end
// costs the parent neither disk nor memory, and cannot block on a full
// pipe either, so it ends as a hung case like any other.
//
//===----------------------------------------------------------------------===//
#include "testkit/case_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "subgraph/ir/text_format.h"
#include "subgraph/plugins/crash_handler.h"

extern char** environ;

namespace subgraph::testkit {
namespace {

// The end of what a worker wrote on stderr: enough for the crash handler's
// line and the few before it.
constexpr size_t kErrorTailBytes = 64 << 10;

// Reads what `fd` (non-blocking) has now into the tail, keeping its last
// kErrorTailBytes. False once the writer closed it.
bool drainInto(int fd, std::string& tail) {
  char chunk[1 << 14];
  // Bounded, so a writer faster than this loop cannot keep it here.
  for (int rounds = 0; rounds < 1024; ++rounds) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
    tail.append(chunk, static_cast<size_t>(n));
    if (tail.size() > 2 * kErrorTailBytes) tail.erase(0, tail.size() - kErrorTailBytes);
  }
  return true;
}

bool sendAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads from `fd` until `line` holds a '\n' and then `need` more bytes
// after it (need is known only after the line: -1 until then). False on
// end of input, an error, or `deadline` passing. While it waits it drains
// `errors` (the worker's stderr, -1: none) into `tail`.
class Reader {
 public:
  explicit Reader(int fd, int errors = -1, std::string* tail = nullptr)
      : fd_(fd), errors_(errors), tail_(tail) {}

  bool readLine(std::string& line, std::chrono::steady_clock::time_point deadline) {
    while (true) {
      size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return true;
      }
      if (!fill(deadline)) return false;
    }
  }
  bool readBytes(size_t n, std::string& out, std::chrono::steady_clock::time_point deadline) {
    while (buffer_.size() < n)
      if (!fill(deadline)) return false;
    out = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return true;
  }
  /// True once a read gave up because the deadline passed.
  bool timedOut() const { return timedOut_; }

 private:
  bool fill(std::chrono::steady_clock::time_point deadline) {
    auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timedOut_ = true;
      return false;
    }
    pollfd p[2] = {{fd_, POLLIN, 0}, {errors_, POLLIN, 0}};
    const nfds_t count = errors_ >= 0 ? 2 : 1;
    int ready = ::poll(p, count, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) return true;
    if (ready == 0) return true;  // the loop above sees the deadline pass
    if (ready < 0) return false;
    if (count == 2 && p[1].revents != 0 && !drainInto(errors_, *tail_))
      errors_ = -1;  // closed: the worker is gone, the socket says so next
    if (p[0].revents == 0) return true;
    char chunk[1 << 14];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  int errors_;
  std::string* tail_;
  std::string buffer_;
  bool timedOut_ = false;
};

const char* signalName(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? name : "an unknown signal";
}

}  // namespace

CaseWorker::CaseWorker(std::string program, std::vector<std::string> args,
                       std::chrono::seconds timeout)
    : program_(std::move(program)), args_(std::move(args)), timeout_(timeout) {}

CaseWorker::~CaseWorker() {
  if (pid_ > 0) stop(true);
}

void CaseWorker::start() {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw std::runtime_error(std::string("check-plugin: cannot make a socket pair: ") +
                             strerror(errno));
  int errors[2];
  if (::pipe2(errors, O_CLOEXEC) != 0) {
    ::close(pair[0]);
    ::close(pair[1]);
    throw std::runtime_error(std::string("check-plugin: cannot make a pipe: ") + strerror(errno));
  }
  ::fcntl(errors[0], F_SETFL, O_NONBLOCK);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pair[1], 0);
  posix_spawn_file_actions_adddup2(&actions, pair[1], 1);
  posix_spawn_file_actions_adddup2(&actions, errors[1], 2);
  std::vector<std::string> argv{"subgraph"};
  argv.insert(argv.end(), args_.begin(), args_.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, program_.c_str(), &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pair[1]);
  ::close(errors[1]);
  if (rc != 0) {
    ::close(pair[0]);
    ::close(errors[0]);
    throw std::runtime_error(std::string("check-plugin: cannot start a worker: ") + strerror(rc));
  }
  pid_ = pid;
  socket_ = pair[0];
  errors_ = errors[0];
  errorTail_.clear();
}

std::string CaseWorker::lastErrorLine() {
  // The worker is gone; what it wrote last is in the pipe. (A process it
  // started may still hold the pipe open: drainInto does not wait for it.)
  drainInto(errors_, errorTail_);
  std::string text = errorTail_;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t nl = text.rfind('\n');
  std::string line = nl == std::string::npos ? text : text.substr(nl + 1);
  const std::string prefix = "subgraph: error: ";
  if (line.starts_with(prefix)) line.erase(0, prefix.size());
  return line;
}

std::string CaseWorker::stop(bool kill) {
  if (kill) ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  std::string how;
  std::string line = lastErrorLine();
  if (WIFSIGNALED(status))
    how = fmt::format("killed by {}{}", signalName(WTERMSIG(status)),
                      line.empty() ? "" : " (" + line + ")");
  else if (WIFEXITED(status) && WEXITSTATUS(status) == plugins::kPluginCrashExitStatus)
    how = line.empty() ? "the plugin crashed" : line;
  else
    how = fmt::format("exited with status {}{}", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                      line.empty() ? "" : " (" + line + ")");
  ::close(socket_);
  ::close(errors_);
  pid_ = -1;
  socket_ = errors_ = -1;
  return how;
}

std::string CaseWorker::check(const Graph& graph, uint64_t inputSeed, CaseStats* stats) {
  if (pid_ < 0) start();
  const std::string text = printGraph(graph);
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  Reader reader(socket_, errors_, &errorTail_);
  std::string header, failure;
  if (sendAll(socket_, fmt::format("{} {}\n", inputSeed, text.size()) + text) &&
      reader.readLine(header, deadline)) {
    int formed = 0, ran = 0;
    size_t bytes = 0;
    if (std::sscanf(header.c_str(), "%d %d %zu", &formed, &ran, &bytes) == 3 &&
        reader.readBytes(bytes, failure, deadline)) {
      if (stats) *stats = CaseStats{formed != 0, ran != 0};
      return failure;
    }
  }
  // No answer: the worker died on this case, or is still running it.
  const bool hung = reader.timedOut();
  std::string how = stop(hung);
  if (hung) return fmt::format("hung: no answer in {} s; the worker was killed", timeout_.count());
  return "crashed: " + how;
}

int serveCases(const BackendUnderTest& backend, const CheckOptions& options) {
  // Answers go to the socket on a descriptor of their own; whatever plugin
  // code prints on stdout goes to stderr instead of into the protocol.
  const int answers = ::dup(1);
  if (answers < 0 || ::dup2(2, 1) < 0) return 1;
  Reader reader(0);
  const auto forever = std::chrono::steady_clock::time_point::max();
  std::string header, text;
  while (reader.readLine(header, forever)) {
    unsigned long long seed = 0;
    size_t bytes = 0;
    if (std::sscanf(header.c_str(), "%llu %zu", &seed, &bytes) != 2 ||
        !reader.readBytes(bytes, text, forever))
      return 2;
    CaseStats stats;
    std::string failure;
    StatusOr<std::unique_ptr<Graph>> graph = parseGraph(text);
    if (!graph.isOk())
      failure = "worker: the case did not parse: " + graph.status().message();
    else
      failure = checkGraph(backend, **graph, seed, options, &stats);
    std::string answer = fmt::format("{} {} {}\n", stats.formedRegions ? 1 : 0,
                                     stats.ranKernels ? 1 : 0, failure.size()) +
                         failure;
    if (!sendAll(answers, answer)) return 1;
  }
  return 0;
}

}  // namespace subgraph::testkit
