#!/usr/bin/env bash
# The README's second command: on a fresh Debian 12 machine, installs the packages, then builds and
# runs every unit test in the `dev` build and again under ASan+UBSan (`asan`), printing ctest's
# summary for each. Exits non-zero if any build or test fails. The real-cluster tests (upstream
# kube-apiserver and kube-controller-manager) run in the dev build when KUBEBUILDER_ASSETS names an
# envtest folder; it is set from ../shared/envtest/unpack.sh when that exists.
#
# Usage: scripts/test.sh [PRESET ...]     (default: dev asan; any configure preset with a test preset)
# A failing dev run does not stop the asan run (the sanitizer often says why); a failed build does.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SW_ROOT"

presets=("$@")
((${#presets[@]} > 0)) || presets=(dev asan)

"$SW_ROOT/scripts/install-deps.sh"
# The real-cluster tier (label realcluster, dev build only) runs when KUBEBUILDER_ASSETS is set.
sw_envtest_assets

failed=()
for preset in "${presets[@]}"; do
  start=$SECONDS
  sw_build "$preset"
  sw_log "test: ctest --preset $preset"
  if ctest --preset "$preset"; then
    sw_log "$preset: tests passed ($((SECONDS - start)) s with the build)"
  else
    sw_log "$preset: TESTS FAILED"
    failed+=("$preset")
  fi
done

if ((${#failed[@]} > 0)); then
  sw_log "test.sh: failing presets: ${failed[*]}"
  exit 1
fi
sw_log "test.sh: all tests passed in: ${presets[*]}"
