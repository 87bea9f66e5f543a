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
