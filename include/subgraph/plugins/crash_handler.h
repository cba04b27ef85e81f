//===- subgraph/plugins/crash_handler.h - A plugin's crash, named -*- C++ -*-===//
//
// A plugin is code the host did not write and cannot contain in-process: a
// segfault in a plugin's Select ended `subgraph` with exit 139 and not a word.
// The host marks each call into a plugin (PluginCallScope: the plugin, the
// ABI slot, the node), and a handler for the fatal signals turns one that
// arrives inside such a call into one line on stderr,
//
//   subgraph: error: plugin 'x' crashed (SIGSEGV, invalid memory access) in select on node 'conv1'
//
// and the exit status kPluginCrashExitStatus. A fatal signal outside plugin
// code goes on to the handler that was installed before (a sanitizer's, or
// the default one), so the host's own bugs still dump core or report.
//
// Every thread gets an alternate signal stack when it first enters plugin
// code (the handler's own thread when it installs it), so a stack
// overflow in a plugin is named on the host's worker threads too. A fault
// on a thread with no plugin call of its own while one is in flight (a
// helper thread the plugin started, such as an OpenMP team's) names the
// call in flight, "on another thread while that call ran".
//
// Limits: the line is written with write(2) from the handler, after the
// plugin corrupted who knows what; a stack overflow on a thread the plugin
// started itself cannot be named (the host gives that thread no alternate
// stack), and a host fault on another thread during a plugin call is
// blamed on that call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace subgraph::plugins {

/// The exit status of a process in which plugin code raised a fatal signal
/// (1 is a failure, 2 a usage error).
inline constexpr int kPluginCrashExitStatus = 3;

/// Installs the handler for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT, and
/// an alternate signal stack for the calling thread. Once per process;
/// later calls do nothing.
void installPluginCrashHandler();

/// Words the crash line ends with, e.g. "check-plugin case 17, seed 42";
/// empty clears them. Call it between plugin calls, not during one.
void setPluginCrashNote(std::string_view note);

/// Marks the calling thread as running code of `plugin` in ABI slot `call`
/// for `node` (may be null) while the scope lives. The pointers must
/// outlive the scope; nothing is copied, so a scope costs two stores.
class PluginCallScope {
 public:
  PluginCallScope(const std::string& plugin, const char* call, const std::string* node) noexcept;
  ~PluginCallScope();
  PluginCallScope(const PluginCallScope&) = delete;
  PluginCallScope& operator=(const PluginCallScope&) = delete;

  const std::string& plugin() const { return *plugin_; }
  const char* call() const { return call_; }
  const std::string* node() const { return node_; }

 private:
  const std::string* plugin_;
  const char* call_;
  const std::string* node_;
  const PluginCallScope* outer_;
};

}  // namespace subgraph::plugins
