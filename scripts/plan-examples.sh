#!/usr/bin/env bash
# The README's first command: on a fresh Debian 12 machine, installs the packages, builds the
# release `slicewright` binary and prints the plan for the example cluster state in examples/.
# Extra arguments go to `slicewright plan`, e.g. `scripts/plan-examples.sh -o json`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SW_ROOT"

"$SW_ROOT/scripts/install-deps.sh"
sw_build release slicewright

sw_log "slicewright plan -f examples/cluster.json $*"
exec build/release/src/cli/slicewright plan -f examples/cluster.json "$@"
