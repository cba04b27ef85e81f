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
#include <memory>
#include <mutex>

namespace subgraph::plugins {
namespace {

thread_local const PluginCallScope* tCurrent = nullptr;
// Whether this thread has an alternate signal stack (see ensureAltStack).
thread_local bool tHasAltStack = false;
std::atomic<bool> gInstalled{false};
// Plugin calls in flight on any thread, and the one entered last: a fault
// on a thread without a scope of its own while a call is in flight is most
// likely a helper thread the plugin started for that call (an OpenMP team).
// The last call's fields are copied, not the scope: it lives on another
// thread's stack and may be gone; what they point to outlives the call.
std::atomic<int> gInFlight{0};
std::atomic<const std::string*> gLastPlugin{nullptr};
std::atomic<const char*> gLastCall{nullptr};
std::atomic<const std::string*> gLastNode{nullptr};

constexpr size_t kAltStackBytes = 64 * 1024;

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
  const std::string* plugin = nullptr;
  const char* slot = nullptr;
  const std::string* node = nullptr;
  const bool helper = !tCurrent && gInFlight.load(std::memory_order_acquire) > 0;
  if (const PluginCallScope* call = tCurrent) {
    plugin = &call->plugin();
    slot = call->call();
    node = call->node();
  } else if (helper) {
    plugin = gLastPlugin.load(std::memory_order_acquire);
    slot = gLastCall.load(std::memory_order_acquire);
    node = gLastNode.load(std::memory_order_acquire);
  }
  if (!plugin || !slot) {
    // Not plugin code: the previous handler (or the default action) takes
    // the signal when the fault repeats on return, or when abort() raises
    // it again.
    sigaction(sig, &gPrevious[sig], nullptr);
    return;
  }
  static Line line;  // static: the stack may be what failed
  line.len = 0;
  line.add("subgraph: error: plugin '");
  addName(line, plugin->data(), plugin->size());
  line.add("' crashed (");
  line.add(describe(sig));
  line.add(") in ");
  line.add(slot);
  if (node) {
    line.add(" on node '");
    addName(line, node->data(), node->size());
    line.add("'");
  }
  if (helper) line.add(", on another thread while that call ran");
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

// A stack overflow needs another stack to run the handler on, on the
// thread that overflows: the calling thread gets one the first time it
// enters plugin code (the host's worker threads run kernels), unless it
// has one already. It lives as long as the thread.
void ensureAltStack() {
  if (tHasAltStack || !gInstalled.load(std::memory_order_acquire)) return;
  tHasAltStack = true;
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;
  struct AltStack {
    std::unique_ptr<char[]> memory{new char[kAltStackBytes]};
    AltStack() {
      stack_t ss{};
      ss.ss_sp = memory.get();
      ss.ss_size = kAltStackBytes;
      sigaltstack(&ss, nullptr);
    }
    ~AltStack() {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
    }
  };
  thread_local AltStack stack;
  (void)stack;
}

}  // namespace

void installPluginCrashHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    gInstalled.store(true, std::memory_order_release);
    ensureAltStack();
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
  ensureAltStack();
  tCurrent = this;
  if (!outer_) {
    gLastPlugin.store(plugin_, std::memory_order_release);
    gLastCall.store(call_, std::memory_order_release);
    gLastNode.store(node_, std::memory_order_release);
    gInFlight.fetch_add(1, std::memory_order_acq_rel);
  }
}

PluginCallScope::~PluginCallScope() {
  tCurrent = outer_;
  if (!outer_) gInFlight.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace subgraph::plugins
