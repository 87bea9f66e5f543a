# Shared by the scripts in this folder (sourced, not run). Builds use the CMake presets of
# CMakePresets.json, whose build presets run 2 jobs.

# The repository root, whatever the caller's working directory.
SW_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

sw_log() { printf '\n==> %s\n' "$*" >&2; }

# sw_build PRESET [TARGET ...]: configures (cheap when the cache exists) and builds PRESET,
# all targets when none is named.
sw_build() {
  local preset=$1
  shift
  local targets=()
  if (($# > 0)); then
    targets=(--target "$@")
  fi
  sw_log "configure: cmake --preset $preset"
  (cd "$SW_ROOT" && cmake --preset "$preset")
  sw_log "build: cmake --build --preset $preset ${targets[*]}"
  (cd "$SW_ROOT" && cmake --build --preset "$preset" "${targets[@]}")
}
