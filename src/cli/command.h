// A subcommand as its own file declares it: its name, help, flags bound to its options, and what
// runs once they are parsed. Each command file registers itself (SW_REGISTER_COMMAND), so a new
// command touches one file; main.cc alone turns the specs into CLI11 options, keeping CLI11's
// heavy header in one translation unit. Registration happens during static initialisation;
// reading the registry afterwards is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <variant>
#include <vector>

namespace slicewright::cli {

// One flag (or positional argument, when `names` has no leading '-') bound to a field of the
// command's options. A bool target is a switch (--leader-elect); every other type takes a value.
struct FlagSpec {
  using Target =
      std::variant<std::string*, int*, std::int64_t*, double*, bool*, std::vector<std::string>*>;

  std::string names;  // "-f,--filename", "--port", or a positional "kind"
  std::string help{};
  Target target;
  bool required = false;
  // --help shows the field's value before parsing as the default.
  bool show_default = true;
  // Vectors: one value may hold several, split on this character ('\0': no splitting).
  char delimiter = '\0';
  bool non_negative = false;
};

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
