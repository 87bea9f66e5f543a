#!/usr/bin/env bash
# Formats our C++ sources (include src tests bench fuzz) with clang-format 14 and .clang-format.
# Usage: scripts/format.sh          rewrite the files in place
#        scripts/format.sh --check  change nothing; exit 1 listing what is not formatted (CI)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

dirs=()
for d in include src tests bench fuzz; do
  [[ -d $d ]] && dirs+=("$d")
done
mapfile -t sources < <( ((${#dirs[@]} == 0)) || find "${dirs[@]}" -type f \
  \( -name '*.h' -o -name '*.hh' -o -name '*.hpp' -o -name '*.cc' -o -name '*.cpp' \) | LC_ALL=C sort)
if ((${#sources[@]} == 0)); then
  echo "format: no sources"
  exit 0
fi

if [[ ${1:-} == --check ]]; then
  if clang-format --dry-run -Werror "${sources[@]}"; then
    echo "format: OK (${#sources[@]} files)"
  else
    echo "format: the files above are not clang-formatted; run scripts/format.sh" >&2
    exit 1
  fi
else
  clang-format -i "${sources[@]}"
  echo "format: formatted ${#sources[@]} files"
fi
