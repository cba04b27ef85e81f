//===- tests/cli/cli_runner.cpp - Running the `subgraph` binary in tests --===//
//
// posix_spawn with three pipes and a poll() loop: stdout and stderr are
// captured separately (the tests check that errors go to stderr only), and
// both are drained while the child runs, so a chatty child cannot block on a
// full pipe. A deadline turns a hang into a test failure instead of a stuck
// ctest.
//
//===----------------------------------------------------------------------===//
#include "cli_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace subgraph::cli::testing {
namespace {

/// A pipe whose ends close themselves.
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() {
    if (pipe2(fds, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  }
  ~Pipe() {
    closeEnd(0);
    closeEnd(1);
  }
  void closeEnd(int end) {
    if (fds[end] >= 0) close(fds[end]);
    fds[end] = -1;
  }
};

}  // namespace

CliResult runCli(const std::vector<std::string>& args, std::string_view input, int timeoutSeconds) {
  // The child must not die of SIGPIPE-in-the-parent confusion: if it exits
  // before reading all of `input`, our write() fails with EPIPE instead.
  signal(SIGPIPE, SIG_IGN);

  Pipe in, out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fds[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fds[1], 2);

  std::vector<std::string> argvStrings{SUBGRAPH_CLI_PATH};
  argvStrings.insert(argvStrings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argvStrings) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawn(&pid, SUBGRAPH_CLI_PATH, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));
  in.closeEnd(0);
  out.closeEnd(1);
  err.closeEnd(1);

  CliResult result;
  size_t written = 0;
  if (input.empty()) in.closeEnd(1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  std::array<char, 65536> buffer;
  while (out.fds[0] >= 0 || err.fds[0] >= 0) {
    std::vector<pollfd> fds;
    if (out.fds[0] >= 0) fds.push_back({out.fds[0], POLLIN, 0});
    if (err.fds[0] >= 0) fds.push_back({err.fds[0], POLLIN, 0});
    if (in.fds[1] >= 0) fds.push_back({in.fds[1], POLLOUT, 0});
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      result.timedOut = true;
      break;
    }
    int ready = poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      if (p.fd == in.fds[1]) {
        ssize_t n = write(p.fd, input.data() + written, input.size() - written);
        if (n > 0) written += static_cast<size_t>(n);
        if (n < 0 || written == input.size()) in.closeEnd(1);
        continue;
      }
      ssize_t n = read(p.fd, buffer.data(), buffer.size());
      if (n > 0) {
        (p.fd == out.fds[0] ? result.out : result.err).append(buffer.data(), n);
      } else {
        (p.fd == out.fds[0] ? out : err).closeEnd(0);
      }
    }
  }
  in.closeEnd(1);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status))
    result.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.exitCode = 128 + WTERMSIG(status);
  return result;
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("subgraph-cli-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, std::string_view contents) const {
  std::filesystem::path file = path_ / name;
  std::ofstream os(file, std::ios::binary);
  os.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!os) throw std::runtime_error("cannot write " + file.string());
  return file.string();
}

::testing::AssertionResult failsWithOneLine(const CliResult& result, int exitCode,
                                            std::string_view needle) {
  auto failure = [&](std::string_view what) {
    return ::testing::AssertionFailure()
           << what << " (exit " << result.exitCode << (result.timedOut ? ", timed out" : "")
           << ")\n--- stderr ---\n"
           << result.err << "--- stdout ---\n"
           << result.out;
  };
  if (result.timedOut) return failure("the program hung");
  if (result.exitCode != exitCode)
    return failure("expected exit status " + std::to_string(exitCode));
  std::vector<std::string> lines = splitLines(result.err);
  if (lines.size() != 1 || result.err.back() != '\n')
    return failure("expected exactly one line on stderr");
  if (lines[0].rfind("subgraph: error: ", 0) != 0)
    return failure("the line does not start with 'subgraph: error: '");
  if (lines[0].find(needle) == std::string::npos)
    return failure("the line does not mention '" + std::string(needle) + "'");
  return ::testing::AssertionSuccess();
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> splitLines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    lines.emplace_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

std::string sourcePath(const std::string& relative) {
  return std::string(SUBGRAPH_SOURCE_DIR) + "/" + relative;
}

}  // namespace subgraph::cli::testing
