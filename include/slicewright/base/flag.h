// A command-line flag as the code that owns the option declares it: its names, help and the field
// it sets. Commands (cli/command.h) and controllers (their descriptors in the manager's table)
// declare flags this way; only the CLI entry point turns them into a parser's options.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace slicewright {

// One flag (or positional argument, when `names` has no leading '-') bound to a field. A bool
// target is a switch (--leader-elect); a milliseconds target takes a Go duration ("15s",
// "1m30s", "500ms"); every other type takes a value.
struct FlagSpec {
  using Target = std::variant<std::string*, int*, std::int64_t*, double*, bool*,
                              std::vector<std::string>*, std::chrono::milliseconds*>;

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

}  // namespace slicewright
