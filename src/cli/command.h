// A subcommand as its own file declares it: its name, help, flags bound to its options, and what
// runs once they are parsed. Each command file registers itself (SW_REGISTER_COMMAND), so a new
// command touches one file; main.cc alone turns the specs into CLI11 options, keeping CLI11's
// heavy header in one translation unit. Registration happens during static initialisation;
// reading the registry afterwards is thread-safe.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "slicewright/base/flag.h"

namespace slicewright::cli {

// Flags are declared as the owner of each option declares them (base/flag.h).
using FlagSpec = ::slicewright::FlagSpec;

struct CommandContext {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
};

struct CommandSpec {
  std::string name;
  std::string description;
  std::vector<FlagSpec> flags;
  // Runs the command once its flags are parsed into the options the flags point to; returns the
  // process's exit code.
  std::function<int(const CommandContext&)> run;
};

// Makes a fresh spec whose flag targets point into options owned by `run` (a shared_ptr the
// lambda captures), so each spec stands alone.
using CommandFactory = CommandSpec (*)();

// Adds a command; returns true so that it can initialise a namespace-scope constant.
bool RegisterCommand(CommandFactory factory);
// Every registered command, sorted by name.
std::vector<CommandSpec> RegisteredCommands();

}  // namespace slicewright::cli

// In a command's .cc file, at namespace scope: registers `factory` (a CommandFactory) at start-up.
#define SW_REGISTER_COMMAND(factory)                                   \
  [[maybe_unused]] static const bool sw_command_registered_##factory = \
      ::slicewright::cli::RegisterCommand(&factory)
