#!/usr/bin/env bash
# The README's first command: on a fresh Debian 12 machine, installs the packages, builds the
# release `slicewright` binary and runs `slicewright dev`: the embedded API server, every endpoint
# controller and the pod simulator in one process, until Ctrl-C. It writes .slicewright/kubeconfig
# and prints the kubectl commands to try (`kubectl apply -f examples/dev/`).
# Extra arguments go to `slicewright dev`, e.g. `scripts/dev.sh --port 0 --data-dir /tmp/sw`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SW_ROOT"

"$SW_ROOT/scripts/install-deps.sh"
sw_build release slicewright

sw_log "slicewright dev $*"
exec build/release/src/cli/slicewright dev "$@"
