//===- plugins/host/crash_handler.cpp - A plugin's crash, named ------------===//
//
// See subgraph/plugins/crash_handler.h. The handler may only use
// async-signal-safe calls: it assembles the line in a static buffer and
// writes it with write(2), then leaves with _exit(2).
//
//===----------------------------------------------------------------------===//
#include "subgraph/plugins/crash_handler.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

namespace subgraph::plugins {
namespace {

thread_local const PluginCallScope* tCurrent = nullptr;

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction gPrevious[NSIG];
char gNote[256];
std::atomic<size_t> gNoteLength{0};

const char* describe(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV, invalid memory access";
    case SIGBUS: return "SIGBUS, bad memory access";
    case SIGFPE: return "SIGFPE, arithmetic fault";
    case SIGILL: return "SIGILL, illegal instruction";
    case SIGABRT: return "SIGABRT, aborted";
    default: return "a fatal signal";
  }
}

// Appends [text, text + n) to the line, keeping room for "\n".
struct Line {
  char buf[1024];
  size_t len = 0;
  void add(const char* text, size_t n) {
    n = std::min(n, sizeof buf - 1 - len);
    std::memcpy(buf + len, text, n);
    len += n;
  }
  void add(const char* text) { add(text, std::strlen(text)); }
};

// Printable characters only: a name from a model may hold anything.
void addName(Line& line, const char* text, size_t n) {
  for (size_t i = 0; i < n && i < 200; ++i) {
    char c = text[i];
    line.add(c >= 0x20 && c < 0x7f ? &c : "?", 1);
  }
}

void onFatalSignal(int sig, siginfo_t*, void*) {
  const PluginCallScope* call = tCurrent;
  if (!call) {
    // Not plugin code: the previous handler (or the default action) takes
    // the signal when the fault repeats on return, or when abort() raises
    // it again.
    sigaction(sig, &gPrevious[sig], nullptr);
    return;
  }
  static Line line;  // static: the stack may be what failed
  line.len = 0;
  line.add("subgraph: error: plugin '");
  addName(line, call->plugin().data(), call->plugin().size());
  line.add("' crashed (");
  line.add(describe(sig));
  line.add(") in ");
  line.add(call->call());
  if (const std::string* node = call->node()) {
    line.add(" on node '");
    addName(line, node->data(), node->size());
    line.add("'");
  }
  if (size_t n = gNoteLength.load(std::memory_order_acquire)) {
    line.add(" (");
    line.add(gNote, n);
    line.add(")");
  }
  line.add("\n", 1);
  ssize_t ignored = write(STDERR_FILENO, line.buf, line.len);
  (void)ignored;
  _exit(kPluginCrashExitStatus);
}

}  // namespace

void installPluginCrashHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    // A stack overflow needs another stack to run the handler on.
    static char altStack[64 * 1024];
    stack_t ss{};
    ss.ss_sp = altStack;
    ss.ss_size = sizeof altStack;
    sigaltstack(&ss, nullptr);
    struct sigaction action {};
    action.sa_sigaction = onFatalSignal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int sig : kSignals) sigaction(sig, &action, &gPrevious[sig]);
  });
}

void setPluginCrashNote(std::string_view note) {
  gNoteLength.store(0, std::memory_order_release);
  size_t n = std::min(note.size(), sizeof gNote);
  std::memcpy(gNote, note.data(), n);
  gNoteLength.store(n, std::memory_order_release);
}

PluginCallScope::PluginCallScope(const std::string& plugin, const char* call,
                                 const std::string* node) noexcept
    : plugin_(&plugin), call_(call), node_(node), outer_(tCurrent) {
  tCurrent = this;
}

PluginCallScope::~PluginCallScope() { tCurrent = outer_; }

}  // namespace subgraph::plugins
