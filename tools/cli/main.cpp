//===- tools/cli/main.cpp - Entry point of the `subgraph` program ---------===//
//
// Builds the command-line app from the self-registered commands (see
// command.h), sets up logging, and turns every failure into exactly one line
// on stderr, "subgraph: error: <message>", with exit status 2 for a usage
// error (an error of kind kUsage, from the program or the library), 1 for
// a failure, and 3 when plugin code crashed (crash_handler.h).
// Progress output goes through spdlog to stderr so that stdout carries only
// a command's result (a report, JSON, a .dot file).
//
//===----------------------------------------------------------------------===//
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "allocator.h"
#include "cli_util.h"
#include "command.h"
#include "subgraph/plugins/crash_handler.h"
#include "subgraph/support/status.h"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

/// Prefixes a log line with its level, except for plain progress (info)
/// lines, so "subgraph: wrote x.dot" and "subgraph: warning: ..." read
/// like the error line main() prints.
class LevelPrefix : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string_view prefix;
    switch (msg.level) {
      case spdlog::level::trace: prefix = "trace: "; break;
      case spdlog::level::debug: prefix = "debug: "; break;
      case spdlog::level::warn: prefix = "warning: "; break;
      case spdlog::level::err: prefix = "error: "; break;
      case spdlog::level::critical: prefix = "fatal: "; break;
      default: break;
    }
    dest.append(prefix.data(), prefix.data() + prefix.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LevelPrefix>();
  }
};

/// Sends all spdlog output to stderr as "subgraph: [level: ]message".
void installLogger() {
  auto logger = spdlog::stderr_color_mt("subgraph");
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<LevelPrefix>('*').set_pattern("subgraph: %*%v");
  logger->set_formatter(std::move(formatter));
  logger->set_level(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

/// Applies -v/-q: info by default, -v debug, -vv trace, -q errors only.
void applyVerbosity(int verbosity, bool quiet) {
  spdlog::level::level_enum level = spdlog::level::info;
  if (quiet)
    level = spdlog::level::err;
  else if (verbosity == 1)
    level = spdlog::level::debug;
  else if (verbosity >= 2)
    level = spdlog::level::trace;
  spdlog::set_level(level);
}

void printError(std::string_view message) {
  std::string line = "subgraph: error: " + subgraph::cli::oneLine(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

/// The first argument that is not an option: the command the user meant.
std::string firstPositional(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") return i + 1 < argc ? argv[i + 1] : "";
    if (!arg.empty() && arg.front() != '-') return std::string(arg);
  }
  return {};
}

std::string commandList() {
  std::string list;
  for (const auto& [name, setup] : subgraph::cli::registeredCommands())
    list += (list.empty() ? "" : ", ") + name;
  return list;
}

/// One line for a CLI11 parse error. CLI11 reports an unknown command as
/// "A subcommand is required" or "The following arguments were not
/// expected: foo", neither of which says what went wrong, so that case gets
/// its own message.
std::string describeParseError(const CLI::App& app, const CLI::ParseError& error, int argc,
                               char** argv) {
  std::string command = firstPositional(argc, argv);
  bool known = false;
  for (const auto& [name, setup] : subgraph::cli::registeredCommands()) known |= name == command;
  if (app.get_subcommands().empty() && !command.empty() && !known) {
    return "unknown command '" + command + "' (commands: " + commandList() + ")";
  }
  std::string helpCommand = "subgraph";
  for (const CLI::App* sub : app.get_subcommands()) helpCommand += " " + sub->get_name();
  return std::string(error.what()) + " (see '" + helpCommand + " --help')";
}

}  // namespace

int main(int argc, char** argv) {
  using subgraph::cli::registeredCommands;
  // Out of memory must be an error line, not an abort: mimalloc's
  // operator new (built as C) aborts when no new_handler is installed, and
  // calls the handler otherwise. This one throws std::bad_alloc, which
  // main() reports below, as the system allocator would.
  std::set_new_handler([] { throw std::bad_alloc(); });
  // A fatal signal in plugin code: one line naming the plugin, the call and
  // the node, and exit status 3, instead of a bare "Segmentation fault".
  subgraph::plugins::installPluginCrashHandler();
  installLogger();

  CLI::App app{
      "subgraph: partition neural-network graphs across backend plugins, and inspect, "
      "convert and run them.",
      "subgraph"};
  app.set_version_flag("--version", std::string("subgraph ") + SUBGRAPH_VERSION +
                                        " (heap: " + subgraph::heapAllocatorName() + ")");
  int verbosity = 0;
  bool quiet = false;
  CLI::Option* verbose =
      app.add_flag("-v,--verbose", verbosity, "More progress output on stderr (-vv: trace)");
  app.add_flag("-q,--quiet", quiet, "Print only errors on stderr")->excludes(verbose);
  app.require_subcommand(1);
  // Let global flags follow the command too: `subgraph inspect m.sg -v`.
  app.fallthrough();
  // Runs after all options are parsed and before any command callback, so
  // the level is set before a command logs anything.
  std::vector<std::string> limits;
  app.add_option("--limit", limits,
                 "Resource limit NAME=VALUE (repeatable; K/M/G suffixes): model-bytes, "
                 "tensor-bytes, nodes, depth (subgraph nesting), memory (a run's memory plan), "
                 "loop-iterations and loop-seconds (a Loop's, nested ones included), "
                 "kernel-work (steps of one kernel call)")
      ->type_name("NAME=VALUE")
      ->take_last()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.parse_complete_callback([&] {
    applyVerbosity(verbosity, quiet);
    subgraph::cli::parseLimitSpecs(limits);
  });

  try {
    for (const auto& [name, setup] : registeredCommands()) setup(app);
  } catch (const std::exception& e) {
    printError(std::string("internal error while setting up commands: ") + e.what());
    return kExitFailure;
  }

  if (argc <= 1) {
    std::cout << app.help();
    return kExitUsage;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive as "errors" with exit code 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    printError(describeParseError(app, e, argc, argv));
    return kExitUsage;
  } catch (const subgraph::Error& e) {
    // The error's kind decides, wherever it was raised: the program's own
    // option checks and the library's alike.
    printError(e.what());
    return e.code() == subgraph::StatusCode::kUsage ? kExitUsage : kExitFailure;
  } catch (const std::bad_alloc&) {
    printError("out of memory");
    return kExitFailure;
  } catch (const std::exception& e) {
    printError(std::string("internal error: ") + e.what());
    return kExitFailure;
  } catch (...) {
    printError("internal error: unknown exception");
    return kExitFailure;
  }
  return subgraph::cli::requestedExitCode();
}
