#!/usr/bin/env bash
# clusterset.local DNS next to Knot DNS (issue #31 §3; docs/performance.md): the same question
# answered by our resolver and by Knot DNS (Debian's `knot`, a fast authoritative server), both
# with one I/O thread, under the same dnsperf settings, interleaved over several rounds.
#
# Ours: cluster-2's resolver of `slicewright dev --clusters 2` (one I/O thread: dns::ServerOptions'
# default, which the MCS agent keeps), answering A of web.bench.svc.clusterset.local, a
# ClusterSetIP Service exported from cluster-1. Knot: knotd with a generated configuration (one
# UDP worker, one TCP worker, one background worker) serving a static clusterset.local zone with
# the same A record and TTL, on 127.0.0.2. Each round measures the most queries per second (UDP,
# EDNS, 1 client, 100 outstanding unless DNSPERF_LOAD says otherwise) of each, the order
# alternating, then the latency percentiles at a fixed 10k qps of each; the ratio ours/Knot is
# taken within each round. On a 2-core machine dnsperf shares the CPU with the server it loads.
#
# Usage: [DNS_PERF=FILE] [DNSPERF_LOAD="-q 100 -c 1"] bench/dns_vs_knot.sh PATH/TO/slicewright \
#          [ROUNDS] [SECONDS]
#        bench/dns_vs_knot.sh PATH/TO/slicewright --smoke   (1 round of 1 s: checks both answer)
set -euo pipefail
binary=${1:?usage: dns_vs_knot.sh PATH/TO/slicewright [ROUNDS] [SECONDS] | --smoke}
smoke=0
if [[ ${2:-} == --smoke ]]; then
  smoke=1
  rounds=1
  seconds=1
else
  rounds=${2:-3}
  seconds=${3:-10}
fi
if ! command -v kubectl >/dev/null; then
  # Not a Debian package (README); the end-to-end tests skip without it too.
  echo "kubectl not on PATH: dns_vs_knot skipped"
  exit 0
fi
command -v knotd >/dev/null || { echo "knotd not found: scripts/install-deps.sh installs knot"; exit 1; }
command -v dnsperf >/dev/null || { echo "dnsperf not found: scripts/install-deps.sh installs it"; exit 1; }

work=$(mktemp -d)
pid=
knot_pid=
cleanup() {
  for p in $knot_pid $pid; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# --- ours: slicewright dev, one ClusterSetIP Service exported from cluster-1 ---------------------
"$binary" dev --clusters 2 --data-dir "$work/data" --pod-ready-delay 200ms >"$work/out" 2>"$work/log" &
pid=$!
for _ in $(seq 150); do [[ -f $work/data/dev.json ]] && break; sleep 0.2; done
export KUBECONFIG=$work/data/kubeconfig
ours=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clusters"][1]["dns"])' \
  "$work/data/dev.json")
for _ in $(seq 50); do kubectl --context cluster-1 get ns >/dev/null 2>&1 && break; sleep 0.2; done
for c in cluster-1 cluster-2; do kubectl --context "$c" create namespace bench >/dev/null; done
kubectl --context cluster-1 -n bench create deployment web --image=x --replicas=1 >/dev/null
kubectl --context cluster-1 apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: bench}
spec: {selector: {app: web}, ports: [{name: http, port: 80}]}
---
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceExport
metadata: {name: web, namespace: bench}
YAML
name=web.bench.svc.clusterset.local
answer=
for _ in $(seq 300); do
  answer=$(dig @"${ours%:*}" -p "${ours##*:}" +noall +answer "$name" A | awk '$4 == "A"' || true)
  [[ -n $answer ]] && break
  sleep 0.2
done
[[ -n $answer ]] || { echo "our resolver $ours never answered A of $name"; tail -20 "$work/log"; exit 1; }
read -r _ ttl _ _ address <<<"$answer"

# --- Knot: the same record from a static zone, one worker of each kind --------------------------
# A port free on 127.0.0.2 for UDP and TCP (knotd binds both).
knot_port=$(python3 -c '
import socket
for _ in range(50):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.2", 0))
    port = u.getsockname()[1]
    t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        t.bind(("127.0.0.2", port)); print(port); break
    except OSError:
        pass
    finally:
        u.close(); t.close()')
knot="127.0.0.2:$knot_port"
mkdir -p "$work/knot"
cat >"$work/knot/clusterset.local.zone" <<ZONE
\$ORIGIN clusterset.local.
\$TTL $ttl
@ SOA ns.dns.clusterset.local. hostmaster.clusterset.local. 1 7200 1800 86400 $ttl
@ NS ns.dns.clusterset.local.
web.bench.svc A $address
ZONE
cat >"$work/knot/knot.conf" <<CONF
server:
    rundir: "$work/knot"
    listen: 127.0.0.2@$knot_port
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
log:
  - target: stderr
    any: warning
database:
    storage: "$work/knot"
control:
    listen: "$work/knot/knot.sock"
template:
  - id: default
    storage: "$work/knot"
    semantic-checks: off
zone:
  - domain: clusterset.local
    file: clusterset.local.zone
CONF
knotd -c "$work/knot/knot.conf" 2>"$work/knot/log" &
knot_pid=$!
knot_answer=
for _ in $(seq 100); do
  knot_answer=$(dig @127.0.0.2 -p "$knot_port" +noall +answer "$name" A 2>/dev/null |
    awk '$4 == "A"' || true)
  [[ -n $knot_answer ]] && break
  sleep 0.1
done
[[ -n $knot_answer ]] || { echo "knotd on $knot never answered A of $name"; cat "$work/knot/log"; exit 1; }
echo "ours $ours: $answer"
echo "knot $knot: $knot_answer"
ours_size=$(dig @"${ours%:*}" -p "${ours##*:}" "$name" A | sed -n 's/.*MSG SIZE  rcvd: //p')
knot_size=$(dig @127.0.0.2 -p "$knot_port" "$name" A | sed -n 's/.*MSG SIZE  rcvd: //p')
echo "response size: ours ${ours_size} B, knot ${knot_size} B"

echo "$name A" >"$work/queries"
# DNSPERF_LOAD: dnsperf's load options for the max-qps runs (default one client, 100 outstanding).
load=${DNSPERF_LOAD:--q 100 -c 1}
# The most queries per second dnsperf gets over UDP (EDNS).
max_qps() {
  local server=$1 out
  # shellcheck disable=SC2086 # DNSPERF_LOAD is a list of options
  out=$(dnsperf -s "${server%:*}" -p "${server##*:}" -d "$work/queries" -e -l "$seconds" $load)
  # A lost query or another rcode is worth seeing next to the figure.
  if ! grep -q 'Queries lost: *0 ' <<<"$out" || ! grep -q 'Response codes: *NOERROR [0-9]* (100' <<<"$out"; then
    echo "$server: $(grep -E 'Queries lost|Response codes' <<<"$out" | tr -s ' \n' ' ')" >&2
  fi
  awk '/Queries per second/ {printf "%.0f", $4}' <<<"$out"
}
# Latency percentiles (ms) at a fixed 10k qps, from dnsperf's per-query times (-v).
p99_at_10k() {
  local server=$1
  dnsperf -s "${server%:*}" -p "${server##*:}" -d "$work/queries" -e -l "$seconds" -Q 10000 -c 1 -v |
    awk '/^> /{print $NF}' | sort -n | awk '{a[NR]=$1} END {
      if (NR == 0) { print "n=0"; exit }
      printf "n=%d p50=%.3f p99=%.3f p99.9=%.3f", NR, a[int(NR*0.5)+1]*1000,
        a[int(NR*0.99)+1]*1000, a[int(NR*0.999)+1]*1000}'
}

# DNS_PERF=FILE: first a profile of our resolver while dnsperf runs against it (perf record -g on
# the dev process; `perf report -i FILE --comm dns-0` shows the DNS I/O thread's share).
if [[ -n ${DNS_PERF:-} ]]; then
  perf record -g -o "$DNS_PERF" -p "$pid" -- sleep "$seconds" 2>"$work/perf.log" &
  perf_pid=$!
  echo "profiled run: ours $(max_qps "$ours") qps"
  wait "$perf_pid" || { cat "$work/perf.log"; exit 1; }
fi

echo "== $rounds rounds of ${seconds}s each, dnsperf $load; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %12s %12s %7s   %-44s %s\n' round ours_qps knot_qps ratio "ours at 10k qps (ms)" "knot at 10k qps (ms)"
for round in $(seq "$rounds"); do
  # Alternate who goes first, so neither always runs on the warmer (or busier) machine.
  if ((round % 2)); then
    ours_qps=$(max_qps "$ours"); knot_qps=$(max_qps "$knot")
    ours_lat=$(p99_at_10k "$ours"); knot_lat=$(p99_at_10k "$knot")
  else
    knot_qps=$(max_qps "$knot"); ours_qps=$(max_qps "$ours")
    knot_lat=$(p99_at_10k "$knot"); ours_lat=$(p99_at_10k "$ours")
  fi
  ratio=$(awk -v a="$ours_qps" -v b="$knot_qps" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  printf '%-6s %12s %12s %7s   %-44s %s\n' "$round" "$ours_qps" "$knot_qps" "$ratio" "$ours_lat" "$knot_lat"
  if ((smoke)) && { [[ -z $ours_qps || $ours_qps == 0 ]] || [[ -z $knot_qps || $knot_qps == 0 ]]; }; then
    echo "smoke: a server answered nothing"
    exit 1
  fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
((smoke == 0)) || echo "dns_vs_knot smoke: ok"
