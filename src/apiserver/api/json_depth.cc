#include "apiserver/api/json_depth.h"

namespace slicewright::apiserver {

int JsonNestingDepth(std::string_view text, int stop_above) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stop_above) {
          return deepest;
        }
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace slicewright::apiserver
