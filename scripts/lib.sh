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

# sw_envtest_assets: exports KUBEBUILDER_ASSETS (controller-runtime's envtest convention: one folder
# with kube-apiserver, etcd, kubectl and kube-controller-manager) for the real-cluster tier, from
# ../shared/envtest/unpack.sh beside the repository when the caller has not set it. Without either
# the tier's tests are skipped, each saying so in one line.
sw_envtest_assets() {
  [[ -z ${KUBEBUILDER_ASSETS:-} ]] || { sw_log "real-cluster tier: KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"; return 0; }
  local unpack=$SW_ROOT/../shared/envtest/unpack.sh assets
  if [[ -x $unpack ]] && assets=$("$unpack") && [[ -n $assets ]]; then
    export KUBEBUILDER_ASSETS=$assets
    sw_log "real-cluster tier: KUBEBUILDER_ASSETS=$assets (from $unpack)"
  else
    sw_log "real-cluster tier skipped: set KUBEBUILDER_ASSETS to an envtest folder (kube-apiserver, etcd, kubectl, kube-controller-manager), e.g. \$(../shared/envtest/unpack.sh)"
  fi
}
