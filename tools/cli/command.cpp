//===- tools/cli/command.cpp - Subcommand registry for `subgraph` ---------===//
//
// Backs the self-registration declared in command.h. The registry is a
// function-local static so that registrations from any translation unit are
// safe regardless of static-initialization order.
//
//===----------------------------------------------------------------------===//
#include "command.h"

#include <algorithm>
#include <utility>

namespace subgraph::cli {

std::vector<std::pair<std::string, CommandSetup>>& registeredCommands() {
  static std::vector<std::pair<std::string, CommandSetup>> commands;
  return commands;
}

CommandRegistration::CommandRegistration(std::string name, CommandSetup setup) {
  auto& commands = registeredCommands();
  // Keep the list sorted on insertion so --help lists commands alphabetically
  // no matter which object file the linker placed first.
  auto pos =
      std::lower_bound(commands.begin(), commands.end(), name,
                       [](const auto& entry, const std::string& key) { return entry.first < key; });
  commands.insert(pos, {std::move(name), std::move(setup)});
}

int& requestedExitCode() {
  static int code = 0;
  return code;
}

}  // namespace subgraph::cli
