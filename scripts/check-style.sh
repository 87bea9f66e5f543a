#!/usr/bin/env bash
# Source rules of the style guide that neither the compiler nor clang-format checks:
#   - every header opens its code with `#pragma once` (§6.2);
#   - no header says `using namespace` (§6.1);
#   - `std::views` is banned: clang 14 with libstdc++ 12 rejects it, so clang-tidy cannot parse it
#     (§6.9).
# Exits 1 naming each file and line. Usage: scripts/check-style.sh [ROOT]
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"

dirs=()
for d in include src tests bench fuzz; do
  [[ -d $d ]] && dirs+=("$d")
done
((${#dirs[@]} > 0)) || { echo "check-style: OK (no sources yet)"; exit 0; }

mapfile -t sources < <(find "${dirs[@]}" -type f \
  \( -name '*.h' -o -name '*.hh' -o -name '*.hpp' -o -name '*.cc' -o -name '*.cpp' \) | LC_ALL=C sort)
((${#sources[@]} > 0)) || { echo "check-style: OK (no sources yet)"; exit 0; }

errors=0
for f in "${sources[@]}"; do
  case $f in
    *.h | *.hh | *.hpp)
      if ! grep -q '^#pragma once' "$f"; then
        echo "$f: header without #pragma once"
        errors=$((errors + 1))
      fi
      if out=$(grep -n '^[[:space:]]*using[[:space:]]\+namespace[[:space:]]' "$f"); then
        while IFS= read -r hit; do
          echo "$f:${hit%%:*}: \`using namespace\` in a header"
          errors=$((errors + 1))
        done <<<"$out"
      fi
      ;;
  esac
  if out=$(grep -n 'std::views::\|std::ranges::views::\|[|][[:space:]]*views::' "$f"); then
    while IFS= read -r hit; do
      echo "$f:${hit%%:*}: std::views is banned (clang 14 + libstdc++ 12 cannot parse it; use std::ranges:: algorithms or a loop)"
      errors=$((errors + 1))
    done <<<"$out"
  fi
done

if ((errors > 0)); then
  echo "check-style: $errors problem(s)"
  exit 1
fi
echo "check-style: OK (${#sources[@]} files)"
