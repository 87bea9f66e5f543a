// The slicewright command line: one subcommand per job. Each command's own file declares its flags
// (cli/command.h); this file turns them into CLI11 options, the one adapter for CLI11 and its
// exceptions (CLI11's own parse/exit pair).
#include <chrono>
#include <exception>
#include <iostream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "slicewright/base/allocator.h"
#include "slicewright/base/duration.h"

#include "cli/command.h"

namespace {

using slicewright::cli::CommandSpec;
using slicewright::cli::FlagSpec;

void AddFlag(CLI::App& command, const FlagSpec& flag) {
  std::visit(
      [&](auto* target) {
        using T = std::remove_pointer_t<decltype(target)>;
        CLI::Option* option = nullptr;
        if constexpr (std::is_same_v<T, bool>) {
          option = command.add_flag(flag.names, *target, flag.help);
        } else if constexpr (std::is_same_v<T, std::chrono::milliseconds>) {
          // A Go duration; --help shows the default as Go prints it.
          option = command.add_option_function<std::string>(
              flag.names,
              [target, names = flag.names](const std::string& text) {
                slicewright::Result<std::chrono::milliseconds> parsed =
                    slicewright::ParseGoDuration(text);
                if (!parsed.ok()) {
                  throw CLI::ValidationError(names, std::string(parsed.status().message()));
                }
                *target = *parsed;
              },
              flag.help);
          if (flag.show_default) option->default_str(slicewright::FormatGoDuration(*target));
        } else {
          option = command.add_option(flag.names, *target, flag.help);
        }
        if (flag.required) option->required();
        if (flag.show_default && !std::is_same_v<T, std::chrono::milliseconds>) {
          option->capture_default_str();
        }
        if (flag.delimiter != '\0') option->delimiter(flag.delimiter);
        if (flag.non_negative) option->check(CLI::NonNegativeNumber);
      },
      flag.target);
}

}  // namespace

int main(int argc, char** argv) {
  // Every subcommand runs reconcile loops or serves their objects; `plan --repeat` must time the
  // same heap the controllers run on.
  slicewright::ConfigureAllocatorForReconcileLoops();
  try {
    CLI::App app{"slicewright: a control plane for Kubernetes EndpointSlices"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "slicewright 0.1.0");

    std::vector<CommandSpec> commands = slicewright::cli::RegisteredCommands();
    std::vector<CLI::App*> parsers;
    for (const CommandSpec& command : commands) {
      CLI::App* parser = app.add_subcommand(command.name, command.description);
      for (const FlagSpec& flag : command.flags) AddFlag(*parser, flag);
      parsers.push_back(parser);
    }

    CLI11_PARSE(app, argc, argv);
    for (std::size_t i = 0; i < commands.size(); ++i) {
      if (parsers[i]->parsed()) {
        return commands[i].run({std::cin, std::cout, std::cerr});
      }
    }
    return 1;
  } catch (const std::exception& e) {
    // Last resort: our code returns Status; this only catches a library's surprise.
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
