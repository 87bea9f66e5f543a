#!/usr/bin/env bash
# Installs every Debian 12 package that slicewright's build, tests and checks need (docs/design.md,
# "Dependencies", says why each is there). Idempotent: when everything is installed it only runs one
# dpkg-query and exits. Works on a fresh machine whose apt lists were never downloaded: `apt-get
# update` runs only when a missing package has no install candidate, or when an install from the
# present lists fails. Needs root; uses sudo when run as another user. Then installs the end-to-end
# tests' JavaScript client from the npm registry (scripts/install-js-deps.sh; a no-op when current).
#
# Usage: scripts/install-deps.sh [EXTRA_PACKAGE ...]
#   e.g. scripts/install-deps.sh clang-14     # also the compiler of the `clang` preset
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build pkg-config git lld
  libsimdjson-dev nlohmann-json3-dev libyaml-cpp-dev
  libboost-dev libssl-dev libsqlite3-dev
  libspdlog-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-format clang-tidy
  # clusterset.local DNS (src/dns/): the wire format library, and dig and dnsperf for its tests and benchmark;
  # Knot DNS, the authoritative server bench/dns_vs_knot.sh measures ours against.
  libldns-dev bind9-dnsutils dnsperf knot
  # The end-to-end tests (tests/e2e/); kubectl itself is not a Debian package and must be on PATH.
  curl python3 python3-kubernetes python3-yaml
  # The real-cluster tier (tests/realcluster/): etcd for upstream kube-apiserver (3.4.23, which
  # the envtest assets accept; they ship no etcd of their own), openssl for its certificates.
  etcd-server openssl
)
packages+=("$@")

log() { printf 'install-deps: %s\n' "$*" >&2; }

# Packages that are not fully installed ("ii"). dpkg-query prints nothing for unknown names.
missing_packages() {
  local installed
  installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null |
                awk '$2 == "ii" { print $1 }' || true)
  local pkg
  for pkg in "${packages[@]}"; do
    if ! grep -qx -- "$pkg" <<<"$installed"; then
      printf '%s\n' "$pkg"
    fi
  done
}

# The JavaScript client of the end-to-end tests, from the npm registry (not a Debian package).
js_deps() { "$(dirname "${BASH_SOURCE[0]}")/install-js-deps.sh"; }

mapfile -t missing < <(missing_packages)
if ((${#missing[@]} == 0)); then
  log "all ${#packages[@]} packages are installed"
  js_deps
  exit 0
fi
log "missing: ${missing[*]}"

# Root, or sudo (non-interactive when there is no terminal, so CI fails instead of hanging).
as_root=()
if ((EUID != 0)); then
  if ! command -v sudo >/dev/null 2>&1; then
    log "error: these packages are missing and installing them needs root: ${missing[*]}"
    log "run this script as root, or install sudo, or install them yourself with apt-get"
    exit 1
  fi
  as_root=(sudo)
  [[ -t 0 ]] || as_root+=(-n)
fi

apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -q)

# True when apt knows an install candidate for every missing package.
all_installable() {
  local pkg candidate
  for pkg in "${missing[@]}"; do
    candidate=$(apt-cache policy -- "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')
    if [[ -z "$candidate" || "$candidate" == "(none)" ]]; then
      return 1
    fi
  done
}

updated=0
if ! all_installable; then
  log "apt lists lack some packages: running apt-get update"
  "${apt[@]}" update
  updated=1
fi

install() { "${apt[@]}" install -y --no-install-recommends -- "${missing[@]}"; }
if ! install; then
  if ((updated)); then
    log "error: apt-get install failed"
    exit 1
  fi
  # The lists may be stale (a package version no longer on the mirror): refresh once and retry.
  log "apt-get install failed; running apt-get update and retrying"
  "${apt[@]}" update
  install
fi

mapfile -t missing < <(missing_packages)
if ((${#missing[@]} != 0)); then
  log "error: still not installed after apt-get: ${missing[*]}"
  exit 1
fi
log "installed; all ${#packages[@]} packages present"
js_deps
