#include "cli/command.h"

#include <set>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

namespace slicewright::cli {
namespace {

// The commands whose files this test binary links register themselves (the slicewright binary
// links every one, whole-archive); each comes out once, sorted by name, with flags that point
// into options the spec owns and distinct flag names.
TEST(CommandTest, RegisteredCommandsAreSortedWithDistinctFlags) {
  const std::vector<CommandSpec> commands = RegisteredCommands();
  std::set<std::string> names;
  for (const CommandSpec& command : commands) {
    SCOPED_TRACE(command.name);
    EXPECT_TRUE(names.insert(command.name).second);
    EXPECT_FALSE(command.description.empty());
    EXPECT_TRUE(static_cast<bool>(command.run));
    std::set<std::string> flags;
    for (const FlagSpec& flag : command.flags) {
      EXPECT_TRUE(flags.insert(flag.names).second) << flag.names;
      EXPECT_FALSE(std::visit([](auto* target) { return target == nullptr; }, flag.target))
          << flag.names;
    }
  }
  EXPECT_TRUE(names.contains("plan"));
  EXPECT_TRUE(names.contains("explain"));
  EXPECT_TRUE(names.contains("controller-manager"));
  for (std::size_t i = 1; i < commands.size(); ++i) {
    EXPECT_LT(commands[i - 1].name, commands[i].name);
  }
}

// Two specs of one command are independent: a flag parsed into one does not change the other.
TEST(CommandTest, EachSpecOwnsItsOptions) {
  std::vector<CommandSpec> first = RegisteredCommands();
  std::vector<CommandSpec> second = RegisteredCommands();
  ASSERT_EQ(first.size(), second.size());
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(first[0].flags.empty());
  EXPECT_NE(first[0].flags[0].target, second[0].flags[0].target);
}

}  // namespace
}  // namespace slicewright::cli
