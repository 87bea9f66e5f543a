#!/usr/bin/env bash
# clusterset.local DNS throughput (issue #24; docs/performance.md): starts `slicewright dev
# --clusters 2`, exports a ClusterSetIP Service and a 100-pod headless Service from cluster-1, and
# runs dnsperf (Debian's dnsperf) over UDP against cluster-2's resolver: the most queries per
# second for A of the ClusterSetIP name and for A of the 100-endpoint headless name (over UDP its
# 1.6 kB answer goes out truncated; then over TCP, whole), then 10k qps for 10 s with per-query
# latencies for the p99.
# Usage: bench/dns_qps.sh PATH/TO/slicewright [SECONDS]
set -euo pipefail
binary=${1:?usage: dns_qps.sh PATH/TO/slicewright [SECONDS]}
seconds=${2:-10}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
"$binary" dev --clusters 2 --data-dir "$work/data" --pod-ready-delay 200ms >"$work/out" 2>"$work/log" &
pid=$!
for _ in $(seq 100); do [[ -f $work/data/dev.json ]] && break; sleep 0.2; done
export KUBECONFIG=$work/data/kubeconfig
dns=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clusters"][1]["dns"])' \
  "$work/data/dev.json")
host=${dns%:*}
port=${dns##*:}
for _ in $(seq 50); do kubectl --context cluster-1 get ns >/dev/null 2>&1 && break; sleep 0.2; done
for c in cluster-1 cluster-2; do kubectl --context "$c" create namespace bench >/dev/null; done
kubectl --context cluster-1 -n bench create deployment web --image=x --replicas=1 >/dev/null
kubectl --context cluster-1 -n bench create deployment big --image=x --replicas=100 >/dev/null
kubectl --context cluster-1 apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: bench}
spec: {selector: {app: web}, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: big, namespace: bench}
spec: {clusterIP: None, selector: {app: big}, ports: [{name: tcp, port: 42}]}
---
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceExport
metadata: {name: web, namespace: bench}
---
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceExport
metadata: {name: big, namespace: bench}
YAML
for _ in $(seq 300); do
  n=$(dig @"$host" -p "$port" +short +bufsize=1232 big.bench.svc.clusterset.local A | wc -l)
  [[ $n -eq 100 ]] && dig @"$host" -p "$port" +short web.bench.svc.clusterset.local A | grep -q . &&
    break
  sleep 0.5
done
echo "resolver $dns: big has $n ready addresses"
echo "web.bench.svc.clusterset.local A" >"$work/web"
echo "big.bench.svc.clusterset.local A" >"$work/big"
for name in web big; do
  echo "== max qps, A of $name (UDP, EDNS, 1 client, 100 outstanding, ${seconds}s)"
  dnsperf -s "$host" -p "$port" -d "$work/$name" -e -l "$seconds" -q 100 -c 1 |
    grep -E 'Queries (sent|completed|lost)|Response codes|Queries per second|Average Latency'
done
# Over UDP the 100-record answer (1.6 kB) does not fit EDNS's 1232 bytes: it goes out truncated
# (TC), and a real client asks again over TCP, where the whole answer comes back.
echo "== max qps, A of big over TCP (the whole 100-record answer; 1 client, 100 outstanding, ${seconds}s)"
dnsperf -m tcp -s "$host" -p "$port" -d "$work/big" -e -l "$seconds" -q 100 -c 1 |
  grep -E 'Queries (sent|completed|lost)|Response codes|Queries per second|Average Latency'
echo "== 10k qps for ${seconds}s, A of web: latency percentiles (ms)"
dnsperf -s "$host" -p "$port" -d "$work/web" -e -l "$seconds" -Q 10000 -c 1 -v |
  awk '/^> /{print $NF}' | sort -n | awk '{a[NR]=$1} END {
    printf "n=%d p50=%.3f p99=%.3f p99.9=%.3f max=%.3f\n", NR, a[int(NR*0.5)]*1000,
      a[int(NR*0.99)]*1000, a[int(NR*0.999)]*1000, a[NR]*1000}'
