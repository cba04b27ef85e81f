//===- tests/plugins/crash_handler_test.cpp - A plugin's crash, named -----===//
//
// The crash handler (subgraph/plugins/crash_handler.h) in death tests: a
// fault inside a plugin call is one line and exit status 3 on any thread,
// a stack overflow included (each thread that enters plugin code gets an
// alternate signal stack), and a fault on a thread without a call of its
// own while one is in flight names that call. Outside any call the
// process dies of the signal itself.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <thread>

#include "subgraph/plugins/crash_handler.h"

namespace subgraph::plugins {
namespace {

const std::string kPlugin = "fixture";
const std::string kNode = "conv1";

void writeNull() {
  volatile int* volatile nowhere = nullptr;
  *nowhere = 1;
}

// Recursion the compiler keeps: a live buffer per frame.
int overflow(int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  if (depth > (1 << 30)) return frame[0];
  return overflow(depth + 1) + frame[0];
}

/// A stack overflow inside a plugin call on a thread the host did not
/// install the handler from is still named: that thread got its own
/// alternate signal stack when it entered the call.
TEST(PluginCrashHandlerDeathTest, StackOverflowOnAnotherThreadIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installPluginCrashHandler();
        std::thread worker([] {
          PluginCallScope scope(kPlugin, "run", &kNode);
          if (overflow(0) == 42) std::abort();
        });
        worker.join();
      },
      ::testing::ExitedWithCode(kPluginCrashExitStatus),
      "plugin 'fixture' crashed \\(SIGSEGV, invalid memory access\\) in run on node 'conv1'");
}

/// A fault on a thread with no call of its own, while a call is in flight
/// on another (a plugin's helper thread), names that call.
TEST(PluginCrashHandlerDeathTest, HelperThreadFaultNamesTheCallInFlight) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installPluginCrashHandler();
        PluginCallScope scope(kPlugin, "run", &kNode);
        std::thread helper(writeNull);
        helper.join();
      },
      ::testing::ExitedWithCode(kPluginCrashExitStatus),
      "in run on node 'conv1', on another thread while that call ran");
}

/// What must not happen: a fault outside plugin code is not blamed on a
/// plugin; the signal reaches the previous (default) action.
TEST(PluginCrashHandlerDeathTest, FaultOutsidePluginCodeIsNotNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installPluginCrashHandler();
        { PluginCallScope done(kPlugin, "run", &kNode); }
        std::signal(SIGSEGV, SIG_DFL);
        installPluginCrashHandler();
        writeNull();
      },
      ::testing::KilledBySignal(SIGSEGV), "^$");
}

}  // namespace
}  // namespace subgraph::plugins
