//===- tools/cli/command.h - Subcommand registration for `subgraph` -------===//
//
// Each subcommand lives in its own <name>_command.cpp and registers itself
// with a static CommandRegistration, so adding a command never touches
// main.cpp. Command callbacks report failure by throwing subgraph::Error;
// main() prints it as one line on stderr and exits non-zero.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace subgraph::cli {

/// Adds one subcommand (options and callback) to the top-level app.
using CommandSetup = std::function<void(CLI::App& app)>;

/// Registers a subcommand at static-initialization time. Commands are added
/// to the app sorted by name so `--help` is stable.
struct CommandRegistration {
  CommandRegistration(std::string name, CommandSetup setup);
};

/// All registered commands as (name, setup), sorted by name.
std::vector<std::pair<std::string, CommandSetup>>& registeredCommands();

/// Exit status a command callback requests (e.g. --check failing); main()
/// returns it after the callback completes. 0 by default.
int& requestedExitCode();

}  // namespace subgraph::cli
