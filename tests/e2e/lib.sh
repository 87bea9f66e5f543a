# shellcheck shell=bash disable=SC2034  # sourced; the tests use the variables it sets
# Shared helpers of the bash end-to-end tests (sourced, not run). Each test starts its own
# `slicewright apiserver` on a free loopback port with a fresh data directory, counts its checks
# and prints "N passed, M failed" at the end. Every wait polls a condition until a deadline; the
# EXIT trap kills whatever the test started (servers, background kubectl) even on failure.
#
# A test is run as: TEST.sh PATH/TO/slicewright   (ctest passes $<TARGET_FILE:slicewright>)
set -uo pipefail

SW_BIN=${1:?usage: $0 PATH/TO/slicewright}
[[ -x $SW_BIN ]] || { echo "not an executable: $SW_BIN" >&2; exit 2; }
SW_BIN=$(cd "$(dirname "$SW_BIN")" && pwd)/$(basename "$SW_BIN")
E2E_NAME=$(basename "$0" .sh)
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sw-$E2E_NAME.XXXXXX")
# Under the sanitizers everything runs several times slower: deadlines scale with this.
E2E_SLOW=${E2E_SLOW:-1}

e2e_passed=0
e2e_failed=0
e2e_pids=()   # background processes to kill on exit (servers, kubectl -w, kubectl wait)

# The source tree (for testdata/), from this file's location.
E2E_SOURCE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

e2e_cleanup() {
  local pid start=$SECONDS
  # SIGTERM first: `timeout` passes it on to the kubectl it runs (a SIGKILL would orphan that
  # kubectl, still writing into $E2E_TMP), and a server stops cleanly.
  for pid in "${e2e_pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${e2e_pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS - start < 10)); do
      sleep 0.05
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if ((e2e_failed == 0)) && [[ -z ${E2E_KEEP:-} ]]; then
    rm -rf "$E2E_TMP"
  else
    echo "(kept $E2E_TMP for inspection)"
  fi
}
trap e2e_cleanup EXIT
# A signal (ctest's timeout) still runs the EXIT trap.
trap 'exit 143' TERM INT

pass() {
  e2e_passed=$((e2e_passed + 1))
  printf 'ok   %s\n' "$1"
}

fail() {
  e2e_failed=$((e2e_failed + 1))
  printf 'FAIL %s\n' "$1"
  shift
  local line
  for line in "$@"; do
    printf '       %s\n' "$line"
  done
}

# expect_eq NAME ACTUAL EXPECTED
expect_eq() {
  if [[ $2 == "$3" ]]; then
    pass "$1"
  else
    fail "$1" "got:  $2" "want: $3"
  fi
}

# expect_contains NAME TEXT NEEDLE...: TEXT contains every NEEDLE.
expect_contains() {
  local name=$1 text=$2 needle
  shift 2
  for needle in "$@"; do
    if [[ $text != *"$needle"* ]]; then
      fail "$name" "missing: $needle" "in:      ${text:0:2000}"
      return
    fi
  done
  pass "$name"
}

# expect_not_contains NAME TEXT NEEDLE
expect_not_contains() {
  if [[ $2 == *"$3"* ]]; then
    fail "$1" "unexpected: $3" "in:         ${2:0:2000}"
  else
    pass "$1"
  fi
}

# wait_until SECONDS COMMAND...: runs COMMAND every 50 ms until it succeeds or the deadline passes.
wait_until() {
  local limit=$(($1 * E2E_SLOW)) start=$SECONDS
  shift
  while ! "$@" >/dev/null 2>&1; do
    if ((SECONDS - start >= limit)); then
      return 1
    fi
    sleep 0.05
  done
}

# The free-form Python that checks JSON documents: py_json 'EXPR' < JSON prints EXPR evaluated
# with `d` bound to the parsed document (no jq on a fresh Debian).
py_json() {
  /usr/bin/python3 -S -c 'import json, sys
d = json.load(sys.stdin)
v = eval(sys.argv[1])
print(v if isinstance(v, str) else json.dumps(v))' "$1"
}

# start_server NAME [FLAG...]: starts `slicewright apiserver --listen 127.0.0.1:0` (unless FLAG has
# --listen) with --data-dir $E2E_TMP/NAME.data (unless given), waits for its "serving on" line and
# sets SERVER_PID, SERVER_URL, SERVER_PORT and SERVER_CA (the CA file that `http` gives curl for an
# https URL: DATA_DIR/tls/ca.crt or --tls-cert-dir's; empty for --insecure-http). Returns 1
# (after printing its output) if it does not come up within the deadline.
start_server() {
  local name=$1
  shift
  local args=("$@")
  [[ " ${args[*]} " == *" --listen "* ]] || args=(--listen 127.0.0.1:0 "${args[@]}")
  [[ " ${args[*]} " == *" --data-dir "* ]] || args+=(--data-dir "$E2E_TMP/$name.data")
  local i cert_dir=
  for ((i = 0; i + 1 < ${#args[@]}; i++)); do
    case ${args[i]} in
      --data-dir) [[ -n $cert_dir ]] || cert_dir=${args[i + 1]}/tls ;;
      --tls-cert-dir) cert_dir=${args[i + 1]} ;;
    esac
  done
  local out=$E2E_TMP/$name.out
  : >"$out"
  "$SW_BIN" apiserver "${args[@]}" >"$out" 2>"$E2E_TMP/$name.err" &
  SERVER_PID=$!
  e2e_pids+=("$SERVER_PID")
  local start=$SECONDS limit=$((20 * E2E_SLOW)) line
  while :; do
    line=$(sed -n 's/^slicewright apiserver: serving on //p' "$out")
    if [[ -n $line ]]; then
      SERVER_URL=$line
      SERVER_PORT=${line##*:}
      SERVER_CA=
      [[ $line != https://* ]] || SERVER_CA=$cert_dir/ca.crt
      return 0
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null || ((SECONDS - start >= limit)); then
      echo "server $name did not start: ${args[*]}" >&2
      cat "$out" "$E2E_TMP/$name.err" >&2
      return 1
    fi
    sleep 0.02
  done
}

# stop_server PID: SIGTERM, then waits (deadline) for a clean exit; returns the exit code (137
# after a SIGKILL when it did not stop in time).
stop_server() {
  local pid=$1 start=$SECONDS
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS - start >= 10 * E2E_SLOW)); then
      kill -9 "$pid" 2>/dev/null
      break
    fi
    sleep 0.02
  done
  local rc=0
  wait "$pid" 2>/dev/null || rc=$?
  return "$rc"
}

# http METHOD URL [CURL_ARG...]: prints "CODE BODY" (the status code, a space, the body). An https
# URL is verified against $SERVER_CA (`SERVER_CA= http ...` to call without it).
http() {
  local method=$1 url=$2
  shift 2
  local body_file=$E2E_TMP/http.body code ca=()
  [[ $url != https://* || -z ${SERVER_CA:-} ]] || ca=(--cacert "$SERVER_CA")
  code=$(curl -sS "${ca[@]}" -m $((20 * E2E_SLOW)) -o "$body_file" -w '%{http_code}' -X "$method" "$@" "$url" \
    2>"$E2E_TMP/http.err") || code="curl-failed:$?"
  printf '%s %s' "$code" "$(cat "$body_file" 2>/dev/null)"
}

# e2e_finish: prints the summary and exits non-zero if any check failed.
e2e_finish() {
  printf '%s: %d passed, %d failed\n' "$E2E_NAME" "$e2e_passed" "$e2e_failed"
  ((e2e_failed == 0))
  exit $?
}
