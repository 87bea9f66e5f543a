#!/usr/bin/env bash
# Installs the JavaScript Kubernetes client that tests/e2e/js/client_node_test.mjs runs
# (@kubernetes/client-node, pinned with its dependencies by tests/e2e/js/package-lock.json) into
# tests/e2e/js/node_modules from the npm registry. Called by scripts/install-deps.sh. Idempotent:
# when node_modules was installed from the present lock file it only compares one checksum.
# Without node and npm on PATH it installs nothing (that test then reports itself skipped).
set -euo pipefail

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/e2e/js" && pwd)
log() { printf 'install-js-deps: %s\n' "$*" >&2; }

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  log "node or npm is not on PATH: the client-node end-to-end test will be skipped"
  exit 0
fi
stamp=$dir/node_modules/.slicewright-lock.sha256
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
  log "tests/e2e/js/node_modules is up to date (node $(node --version))"
  exit 0
fi
log "npm ci in tests/e2e/js (node $(node --version), npm $(npm --version))"
# --ignore-scripts: no package's install hooks run; the client needs none.
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
printf '%s\n' "$want" >"$stamp"
log "installed @kubernetes/client-node $(node -p "require('$dir/node_modules/@kubernetes/client-node/package.json').version")"
