#include "cli/command.h"

#include <algorithm>

namespace slicewright::cli {
namespace {

// A function-local static: command files register during static initialisation, in an order the
// linker chooses, so the list must exist before the first of them runs.
std::vector<CommandFactory>& Factories() {
  static std::vector<CommandFactory> factories;
  return factories;
}

}  // namespace

bool RegisterCommand(CommandFactory factory) {
  Factories().push_back(factory);
  return true;
}

std::vector<CommandSpec> RegisteredCommands() {
  std::vector<CommandSpec> commands;
  commands.reserve(Factories().size());
  for (const CommandFactory factory : Factories()) commands.push_back(factory());
  std::sort(commands.begin(), commands.end(),
            [](const CommandSpec& a, const CommandSpec& b) { return a.name < b.name; });
  return commands;
}

}  // namespace slicewright::cli
