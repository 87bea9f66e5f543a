#!/usr/bin/env bash
# The upstream Multi-Cluster Services conformance suite (kubernetes-sigs/mcs-api `conformance/`,
# built unchanged, from ../shared/conformance or $SW_CONFORMANCE_DIR) in one command.
#
#   scripts/conformance.sh
#       builds `slicewright` (dev preset), starts one `slicewright dev --clusters 2`, runs the
#       suite against its two members (label filter `!Connectivity && !DNS`: the 16 counted specs
#       must pass) and, when they do, writes the published report:
#       docs/conformance/slicewright-dev.html and docs/conformance/slicewright-dev.yaml (the
#       suite's report.html and report.yaml). About 70 s after the build.
#   scripts/conformance.sh --real
#       the same against a real ClusterSet: a broker and two members on upstream kube-apiserver
#       (KUBEBUILDER_ASSETS, else ../shared/envtest/unpack.sh), set up as deploy/mcs/README.md
#       says, by tests/realcluster/mcs_test.py (which runs the suite among its checks); writes
#       docs/conformance/slicewright-kube-apiserver.html and .yaml. About 2 min after the build.
#   scripts/conformance.sh --kubeconfig K --contexts c1,c2 [--report-dir D] [...]
#       the suite against any ClusterSet, e.g. real kube-apiservers running an MCS implementation
#       (every flag of tests/conformance/run_conformance.py; reports in D, default ./conformance).
#
# Exits non-zero when a counted spec fails or the suite cannot run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SW_ROOT"

suite_dir=${SW_CONFORMANCE_DIR:-$SW_ROOT/../shared/conformance}
if [[ ! -f $suite_dir/mcs-conformance.test.xz ]]; then
  echo "conformance.sh: no MCS conformance suite in $suite_dir (set SW_CONFORMANCE_DIR)" >&2
  exit 1
fi
export SW_CONFORMANCE_DIR=$suite_dir

if [[ ${1:-} == --real ]]; then
  "$SW_ROOT/scripts/install-deps.sh"
  sw_envtest_assets
  [[ -n ${KUBEBUILDER_ASSETS:-} ]] || { echo "conformance.sh --real: no KUBEBUILDER_ASSETS" >&2; exit 1; }
  sw_build dev slicewright
  sw_log "the MCS conformance suite against a real ClusterSet (kube-apiserver)"
  SW_CONFORMANCE_PUBLISH=docs/conformance /usr/bin/python3 tests/realcluster/mcs_test.py \
    build/dev/src/cli/slicewright
  sw_log "docs/conformance/slicewright-kube-apiserver.html and .yaml updated"
  exit 0
fi

if (($# > 0)); then
  args=("$@")
  [[ " $* " == *" --report-dir "* ]] || args+=(--report-dir conformance)
  exec /usr/bin/python3 tests/conformance/run_conformance.py "${args[@]}"
fi

"$SW_ROOT/scripts/install-deps.sh"
sw_build dev slicewright
sw_log "the MCS conformance suite against slicewright dev --clusters 2"
/usr/bin/python3 tests/e2e/conformance_test.py build/dev/src/cli/slicewright \
  --publish docs/conformance
sw_log "docs/conformance/slicewright-dev.html and .yaml updated"
