#!/usr/bin/env bash
# End-to-end: the real kubectl (v1.32) against `slicewright apiserver` through the kubeconfig the
# server writes. Covers apply/create/get (json, yaml, wide, jsonpath, -w)/label/annotate/patch
# (merge, json, strategic)/replace/delete/wait, server-side dry run, discovery, CRDs with the MCS
# ServiceImport demos, garbage collection (background, orphan, foreground), namespace deletion,
# pod graceful deletion, Events shared by core/v1 and events.k8s.io/v1, and the typed generators
# (`create namespace|configmap`) that send protobuf.
# Usage: kubectl_test.sh PATH/TO/slicewright        (exit 77: kubectl is not installed)
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ! command -v kubectl >/dev/null 2>&1; then
  echo "kubectl is not on PATH: skipped"
  exit 77
fi

MCS=$E2E_SOURCE_DIR/testdata/mcs-api-v0.5.0
[[ -f $MCS/config_crd_multicluster.x-k8s.io_serviceimports.yaml ]] || MCS=/work/shared/data/mcs-api-v0.5.0

start_server kubectl --write-kubeconfig "$E2E_TMP/kubeconfig" || exit 1
export KUBECONFIG=$E2E_TMP/kubeconfig
# kubectl keeps its discovery cache under $HOME/.kube/cache: a fresh one per run.
export HOME=$E2E_TMP/home
mkdir -p "$HOME"

# k ARGS...: kubectl, bounded in time; stdout and stderr together.
k() {
  timeout $((60 * E2E_SLOW)) kubectl --request-timeout=$((30 * E2E_SLOW))s "$@" 2>&1
}
# kq ARGS...: kubectl's stdout only (for -o json / jsonpath).
kq() {
  timeout $((60 * E2E_SLOW)) kubectl --request-timeout=$((30 * E2E_SLOW))s "$@" 2>"$E2E_TMP/kq.err"
}

# --- the written kubeconfig, unchanged: HTTPS verified against its CA ----------------------------
expect_eq "the kubeconfig's server is the https URL" \
  "$(py_json 'd["clusters"][0]["cluster"]["server"]' <"$KUBECONFIG")" "$SERVER_URL"
expect_eq "the kubeconfig carries the CA and a client certificate, and skips no verification" \
  "$(py_json '[sorted(d["clusters"][0]["cluster"]), sorted(d["users"][0]["user"])]' <"$KUBECONFIG")" \
  '[["certificate-authority-data", "server"], ["client-certificate-data", "client-key-data"]]'
# No stdin: a user without credentials would make kubectl prompt for a username on HTTPS.
expect_eq "kubectl works with it, without prompting" \
  "$(k get namespaces -o name </dev/null)" "namespace/default
namespace/kube-node-lease
namespace/kube-public
namespace/kube-system"
M=$E2E_TMP/manifests
mkdir -p "$M"

# --- discovery -----------------------------------------------------------------------------------
out=$(kq get --raw /version)
expect_eq "get --raw /version has a gitVersion" "$(py_json 'str(d["gitVersion"].startswith("v1."))' <<<"$out")" True
out=$(k api-resources)
expect_contains "api-resources lists the built-in resources" "$out" \
  "configmaps " "endpointslices " "discovery.k8s.io/v1" "customresourcedefinitions " "namespaces " "pods "

# --- apply: created, unchanged, configured -------------------------------------------------------
cat >"$M/cm.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  labels: {app: demo}
data:
  a: "1"
EOF
expect_eq "apply creates" "$(k apply -f "$M/cm.yaml")" "configmap/app-config created"
expect_eq "apply again is unchanged" "$(k apply -f "$M/cm.yaml")" "configmap/app-config unchanged"
sed -i 's/a: "1"/a: "2"/' "$M/cm.yaml"
expect_eq "apply after an edit configures" "$(k apply -f "$M/cm.yaml")" "configmap/app-config configured"
expect_eq "the edit is stored" "$(kq get configmap app-config -o jsonpath='{.data.a}')" 2

# --- get -o json / yaml / jsonpath / wide --------------------------------------------------------
out=$(kq get configmap app-config -o json)
expect_eq "get -o json" "$(py_json '[d["kind"], d["apiVersion"], d["metadata"]["namespace"], d["data"], bool(d["metadata"]["uid"]), int(d["metadata"]["resourceVersion"]) > 0]' <<<"$out")" \
  '["ConfigMap", "v1", "default", {"a": "2"}, true, true]'
out=$(kq get configmap app-config -o yaml)
expect_eq "get -o yaml" "$(/usr/bin/python3 -c 'import sys, yaml; d = yaml.safe_load(sys.stdin); print(d["kind"], d["metadata"]["name"], d["data"]["a"], "kubectl.kubernetes.io/last-applied-configuration" in d["metadata"]["annotations"])' <<<"$out")" \
  "ConfigMap app-config 2 True"
out=$(kq get configmaps -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
expect_contains "get -o jsonpath over a list" "$out" "app-config"

# --- create -f ---------------------------------------------------------------------------------------
cat >"$M/svc.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata:
  name: web
  labels: {app: web}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080, protocol: TCP}
EOF
expect_eq "create -f" "$(k create -f "$M/svc.yaml")" "service/web created"
out=$(k create -f "$M/svc.yaml")
expect_contains "create -f of an existing object is AlreadyExists" "$out" \
  'services "web" already exists'
cat >"$M/bad-svc.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata:
  name: bad
spec:
  selector: {app: bad}
  ports:
  - {name: a, port: 0}
  - {name: a, port: 80}
EOF
# kubectl prints an Invalid answer's field errors from its details.causes, one per line.
out=$(k create -f "$M/bad-svc.yaml")
expect_contains "create of an invalid Service lists each field error" "$out" \
  'The Service "bad" is invalid: ' \
  '* spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive' \
  '* spec.ports[1].name: Duplicate value: "a"'
out=$(k get services -o wide)
expect_contains "get -o wide has the SELECTOR column" "$out" "NAME" "SELECTOR" "web" "app=web" "80/TCP"
ip=$(kq get service web -o jsonpath='{.spec.clusterIP}')
expect_eq "the Service got a ClusterIP" "$(/usr/bin/python3 -c 'import ipaddress, sys; ipaddress.ip_address(sys.argv[1]); print("ok")' "$ip" 2>&1)" ok

# --- get -w (background) sees ADDED, MODIFIED, DELETED ----------------------------------------------
watch_out=$E2E_TMP/watch.out
timeout $((60 * E2E_SLOW)) kubectl get configmaps -w --output-watch-events \
  -o jsonpath='{.type} {.object.metadata.name}{"\n"}' >"$watch_out" 2>"$E2E_TMP/watch.err" &
e2e_pids+=($!)
# The watch starts with the current objects (ADDED app-config): then it is connected.
wait_until 20 grep -q "ADDED app-config" "$watch_out" || fail "get -w listed the existing objects" "$(cat "$watch_out" "$E2E_TMP/watch.err")"
k apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: watched}
data: {x: "1"}
EOF
k label configmap watched stage=one >/dev/null
k delete configmap watched >/dev/null
watch_has_all() {
  grep -q '^ADDED watched$' "$watch_out" && grep -q '^MODIFIED watched$' "$watch_out" &&
    grep -q '^DELETED watched$' "$watch_out"
}
if wait_until 20 watch_has_all; then
  expect_eq "get -w sees ADDED, MODIFIED, DELETED in order" \
    "$(sed -n 's/ watched$//p' "$watch_out" | tr '\n' ' ')" "ADDED MODIFIED DELETED "
else
  fail "get -w sees ADDED, MODIFIED, DELETED" "$(cat "$watch_out" "$E2E_TMP/watch.err")"
fi

# --- label, annotate -----------------------------------------------------------------------------
expect_eq "label" "$(k label configmap app-config tier=backend)" "configmap/app-config labeled"
expect_eq "label is stored" "$(kq get configmap app-config -o jsonpath='{.metadata.labels.tier}')" backend
expect_eq "label --overwrite" "$(k label configmap app-config tier=frontend --overwrite)" "configmap/app-config labeled"
expect_eq "label removal" "$(k label configmap app-config tier-)" "configmap/app-config unlabeled"
expect_eq "label removal is stored" "$(kq get configmap app-config -o jsonpath='{.metadata.labels}')" '{"app":"demo"}'
expect_eq "annotate" "$(k annotate configmap app-config owner=team-a)" "configmap/app-config annotated"
expect_eq "annotation is stored" "$(kq get configmap app-config -o jsonpath='{.metadata.annotations.owner}')" team-a
out=$(kq get configmaps -l app=demo -o jsonpath='{.items[*].metadata.name}')
expect_eq "get -l selects by label" "$out" app-config
out=$(kq get configmaps -l 'app notin (demo)' -o jsonpath='{.items[*].metadata.name}')
expect_not_contains "get -l with notin excludes" "$out" app-config

# --- patch: merge, json, strategic ---------------------------------------------------------------
expect_eq "patch --type merge" "$(k patch configmap app-config --type merge -p '{"data":{"b":"3"}}')" \
  "configmap/app-config patched"
expect_eq "patch --type json" "$(k patch configmap app-config --type json -p '[{"op":"add","path":"/data/c","value":"4"},{"op":"remove","path":"/data/a"}]')" \
  "configmap/app-config patched"
expect_eq "merge and json patches are stored" "$(kq get configmap app-config -o jsonpath='{.data}')" '{"b":"3","c":"4"}'
out=$(k patch configmap app-config --type json -p '[{"op":"test","path":"/data/b","value":"nope"}]')
expect_contains "a failing json patch test op is refused (422)" "$out" 'The configmaps "app-config" is invalid' 
out=$(k patch service web -p '{"spec":{"ports":[{"name":"https","port":443,"targetPort":8443}]}}')
expect_eq "patch (strategic, the default)" "$out" "service/web patched"
# Without $setElementOrder, upstream puts the patch's new items before the server-only ones.
expect_eq "strategic merge adds to ports by their merge key" \
  "$(kq get service web -o jsonpath='{.spec.ports[*].port}')" "443 80"
out=$(k patch service web -p '{"spec":{"ports":[{"$patch":"delete","port":443}]}}')
expect_eq "strategic \$patch: delete of a list item" \
  "$(kq get service web -o jsonpath='{.spec.ports[*].port}')" "80"

# --- replace -------------------------------------------------------------------------------------
kq get configmap app-config -o json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
d["data"] = {"replaced": "yes"}
json.dump(d, sys.stdout)' >"$M/replace.json"
expect_eq "replace" "$(k replace -f "$M/replace.json")" "configmap/app-config replaced"
expect_eq "replace is stored" "$(kq get configmap app-config -o jsonpath='{.data}')" '{"replaced":"yes"}'
out=$(k replace -f "$M/replace.json")
expect_contains "replace with a stale resourceVersion is a Conflict" "$out" \
  "Operation cannot be fulfilled on configmaps \"app-config\": the object has been modified"

# --- apply --dry-run=server ----------------------------------------------------------------------
rv_before=$(kq get configmap app-config -o jsonpath='{.metadata.resourceVersion}')
sed 's/a: "2"/a: "dry"/' "$M/cm.yaml" >"$M/cm-dry.yaml"
expect_eq "apply --dry-run=server" "$(k apply --dry-run=server -f "$M/cm-dry.yaml")" \
  "configmap/app-config configured (server dry run)"
expect_eq "a server dry run changes nothing" \
  "$(kq get configmap app-config -o jsonpath='{.metadata.resourceVersion} {.data.a}')" "$rv_before "
cat >"$M/new-dry.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: never-stored}
EOF
expect_eq "apply --dry-run=server of a new object" "$(k apply --dry-run=server -f "$M/new-dry.yaml")" \
  "configmap/never-stored created (server dry run)"
expect_contains "the dry-run object is not stored" "$(k get configmap never-stored)" \
  'configmaps "never-stored" not found'

# --- delete, wait --for=delete -------------------------------------------------------------------
expect_eq "delete" "$(k delete configmap app-config)" 'configmap "app-config" deleted'
expect_contains "get after delete is NotFound" "$(k get configmap app-config)" \
  'Error from server (NotFound): configmaps "app-config" not found'
# A finalizer holds the object: wait --for=delete returns once the finalizer is removed.
cat >"$M/held.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: held
  finalizers: [example.com/hold]
EOF
k apply -f "$M/held.yaml" >/dev/null
expect_eq "delete --wait=false of an object with a finalizer" "$(k delete configmap held --wait=false)" \
  'configmap "held" deleted'
expect_eq "the object is terminating" \
  "$(kq get configmap held -o jsonpath='{.metadata.finalizers[0]} {.metadata.deletionTimestamp}' | sed 's/ ....-..-..T..:..:..Z$/ <time>/')" \
  "example.com/hold <time>"
timeout $((60 * E2E_SLOW)) kubectl wait --for=delete configmap/held --timeout=$((30 * E2E_SLOW))s \
  >"$E2E_TMP/wait.out" 2>&1 &
wait_pid=$!
e2e_pids+=("$wait_pid")
k patch configmap held --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
if wait "$wait_pid"; then
  pass "wait --for=delete returns once the finalizer is gone"
else
  fail "wait --for=delete returns once the finalizer is gone" "$(cat "$E2E_TMP/wait.out")"
fi
expect_contains "the finalized object is gone" "$(k get configmap held)" 'configmaps "held" not found'

# --- CRDs: the MCS ServiceExport/ServiceImport CRDs, then the ServiceImport demos ---------------
out=$(k apply -f "$MCS/config_crd_multicluster.x-k8s.io_serviceexports.yaml" \
  -f "$MCS/config_crd_multicluster.x-k8s.io_serviceimports.yaml")
expect_eq "apply the MCS CRDs" "$out" \
  "customresourcedefinition.apiextensions.k8s.io/serviceexports.multicluster.x-k8s.io created
customresourcedefinition.apiextensions.k8s.io/serviceimports.multicluster.x-k8s.io created"
out=$(k wait --for=condition=established --timeout=$((30 * E2E_SLOW))s \
  crd/serviceimports.multicluster.x-k8s.io crd/serviceexports.multicluster.x-k8s.io)
expect_eq "wait --for=condition=established" "$out" \
  "customresourcedefinition.apiextensions.k8s.io/serviceimports.multicluster.x-k8s.io condition met
customresourcedefinition.apiextensions.k8s.io/serviceexports.multicluster.x-k8s.io condition met"
cat >"$M/ns-demo.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: demo}
EOF
expect_eq "apply namespace demo" "$(k apply -f "$M/ns-demo.yaml")" "namespace/demo created"
out=$(k apply -f "$MCS/demo_yaml_serviceimport.yaml" -f "$MCS/demo_yaml_serviceimport-with-vip.yaml" \
  -f "$MCS/demo_yaml_svc.yaml")
expect_eq "apply the ServiceImport demos" "$out" \
  "serviceimport.multicluster.x-k8s.io/serve created
serviceimport.multicluster.x-k8s.io/serve-with-vip created
service/serve created"
expect_eq "get serviceimports -o jsonpath" \
  "$(kq get serviceimports -n demo -o jsonpath='{.items[*].metadata.name}')" "serve serve-with-vip"
out=$(k get serviceimports -n demo)
expect_contains "get serviceimports prints the CRD's columns" "$out" "NAME" "TYPE" "serve-with-vip" "ClusterSetIP" "1.2.3.4"
expect_eq "apply a ServiceImport again is unchanged" "$(k apply -f "$MCS/demo_yaml_serviceimport.yaml")" \
  "serviceimport.multicluster.x-k8s.io/serve unchanged"
expect_eq "patch --type merge of a custom resource" \
  "$(k patch serviceimport serve -n demo --type merge -p '{"metadata":{"labels":{"e2e":"yes"}}}')" \
  "serviceimport.multicluster.x-k8s.io/serve patched"
expect_eq "get a custom resource by label" \
  "$(kq get serviceimports -n demo -l e2e=yes -o jsonpath='{.items[*].metadata.name}')" serve
expect_eq "api-resources lists the CRD's resource" \
  "$(k api-resources --api-group=multicluster.x-k8s.io -o name | sort | tr '\n' ' ')" \
  "serviceexports.multicluster.x-k8s.io serviceimports.multicluster.x-k8s.io "

# --- garbage collection: deleting a Service deletes the EndpointSlice it owns --------------------
k create -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: owner, namespace: demo}
spec:
  ports: [{port: 80}]
EOF
uid=$(kq get service owner -n demo -o jsonpath='{.metadata.uid}')
out=$(k create -f - <<EOF
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: owner-abcde
  namespace: demo
  labels: {kubernetes.io/service-name: owner}
  ownerReferences:
  - {apiVersion: v1, kind: Service, name: owner, uid: "$uid", controller: true, blockOwnerDeletion: true}
addressType: IPv4
endpoints:
- addresses: [10.0.0.1]
  conditions: {ready: true}
ports: [{name: "", port: 80, protocol: TCP}]
EOF
)
expect_eq "create an owned EndpointSlice" "$out" "endpointslice.discovery.k8s.io/owner-abcde created"
expect_eq "get endpointslices -o jsonpath" \
  "$(kq get endpointslices -n demo -o jsonpath='{.items[0].metadata.ownerReferences[0].name} {.items[0].endpoints[0].addresses[0]}')" \
  "owner 10.0.0.1"
expect_eq "delete the owner Service" "$(k delete service owner -n demo)" 'service "owner" deleted'
# (wait prints nothing when the slice is already gone.)
if out=$(k wait --for=delete endpointslice/owner-abcde -n demo --timeout=$((30 * E2E_SLOW))s); then
  pass "the garbage collector deletes the owned slice"
else
  fail "the garbage collector deletes the owned slice" "$out"
fi
expect_contains "the owned slice is gone" "$(k get endpointslice owner-abcde -n demo)" "not found"

# --cascade=orphan keeps the dependent and drops its ownerReference; --cascade=foreground deletes
# the dependent before the owner.
owned_slice() {  # owned_slice SERVICE: creates SERVICE and an EndpointSlice SERVICE-1 it owns
  k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: $1, namespace: demo}
spec:
  ports: [{port: 80}]
EOF
  local owner_uid
  owner_uid=$(kq get service "$1" -n demo -o jsonpath='{.metadata.uid}')
  k create -f - >/dev/null <<EOF
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: $1-1
  namespace: demo
  ownerReferences:
  - {apiVersion: v1, kind: Service, name: $1, uid: "$owner_uid", controller: true, blockOwnerDeletion: true}
addressType: IPv4
endpoints: []
EOF
}
owned_slice orphaner
expect_eq "delete --cascade=orphan" "$(k delete service orphaner -n demo --cascade=orphan)" \
  'service "orphaner" deleted'
slice_owners() { kq get endpointslice orphaner-1 -n demo -o jsonpath='{.metadata.name}|{.metadata.ownerReferences}'; }
orphaned() { [[ $(slice_owners) == "orphaner-1|" ]]; }
if wait_until 20 orphaned; then
  pass "the orphaned slice stays, without its ownerReference"
else
  fail "the orphaned slice stays, without its ownerReference" "$(slice_owners)"
fi
owned_slice foreground
expect_eq "delete --cascade=foreground (waits for the owner to go)" \
  "$(k delete service foreground -n demo --cascade=foreground)" 'service "foreground" deleted'
expect_contains "the foreground deletion deleted the dependent first" \
  "$(k get endpointslice foreground-1 -n demo)" 'endpointslices.discovery.k8s.io "foreground-1" not found'

# --- namespace deletion removes its contents -----------------------------------------------------
cat >"$M/ns-doomed.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: doomed}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: inside, namespace: doomed}
data: {k: v}
---
apiVersion: v1
kind: Service
metadata: {name: inside, namespace: doomed}
spec:
  ports: [{port: 80}]
EOF
expect_eq "apply a namespace with contents" "$(k apply -f "$M/ns-doomed.yaml")" \
  "namespace/doomed created
configmap/inside created
service/inside created"
expect_eq "delete namespace (waits until it is gone)" "$(k delete namespace doomed)" 'namespace "doomed" deleted'
expect_contains "the namespace is gone" "$(k get namespace doomed)" 'namespaces "doomed" not found'
expect_eq "its ConfigMaps are gone" "$(kq get configmaps -n doomed -o jsonpath='{.items[*].metadata.name}')" ""
expect_eq "its Services are gone" "$(kq get services -n doomed -o jsonpath='{.items[*].metadata.name}')" ""
out=$(k create -f - <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: late, namespace: demo-nonexistent}
EOF
)
expect_contains "create in a missing namespace is NotFound" "$out" 'namespaces "demo-nonexistent" not found'

# --- pod graceful deletion -----------------------------------------------------------------------
cat >"$M/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: sleeper, namespace: demo, labels: {app: sleeper}}
spec:
  nodeName: node-1
  containers:
  - {name: main, image: busybox, command: [sleep, "3600"]}
EOF
expect_eq "apply a pod" "$(k apply -f "$M/pod.yaml")" "pod/sleeper created"
expect_contains "get pods prints the pod" "$(k get pods -n demo)" "NAME" "sleeper"
expect_eq "get pods --field-selector spec.nodeName" \
  "$(kq get pods -n demo --field-selector spec.nodeName=node-1 -o jsonpath='{.items[*].metadata.name}')" sleeper
# A watch on the pod sees the graceful deletion: MODIFIED (deletionTimestamp, 1 s grace), then
# DELETED once the grace period is over (the server plays the kubelet, deleting with grace 0, so
# the last state has no grace left).
pod_watch=$E2E_TMP/pod-watch.out
timeout $((60 * E2E_SLOW)) kubectl get pod sleeper -n demo -w --output-watch-events \
  -o jsonpath='{.type} {.object.metadata.deletionGracePeriodSeconds}{"\n"}' \
  >"$pod_watch" 2>"$E2E_TMP/pod-watch.err" &
e2e_pids+=($!)
wait_until 20 grep -q '^ADDED' "$pod_watch" || fail "get pod -w starts" "$(cat "$pod_watch" "$E2E_TMP/pod-watch.err")"
start_ms=$(date +%s%3N)
expect_eq "delete --grace-period=1 --wait=false" \
  "$(k delete pod sleeper -n demo --grace-period=1 --wait=false)" 'pod "sleeper" deleted'
if out=$(k wait --for=delete pod/sleeper -n demo --timeout=$((30 * E2E_SLOW))s); then
  pass "wait --for=delete pod: the pod goes once its grace period ends"
else
  fail "wait --for=delete pod: the pod goes once its grace period ends" "$out"
fi
elapsed_ms=$(($(date +%s%3N) - start_ms))
wait_until 20 grep -q '^DELETED' "$pod_watch"
expect_eq "the pod was terminating with a 1 s grace period before it went" \
  "$(tr '\n' ' ' <"$pod_watch")" "ADDED  MODIFIED 1 DELETED 0 "
if ((elapsed_ms >= 1000 && elapsed_ms < 15000 * E2E_SLOW)); then
  pass "graceful deletion took ${elapsed_ms} ms (the 1 s grace period, then the deletion)"
else
  fail "graceful deletion took ${elapsed_ms} ms (want a little over 1 s)"
fi
expect_contains "the pod is gone" "$(k get pod sleeper -n demo)" 'pods "sleeper" not found'

# --- Events: events.k8s.io/v1 and core/v1 are one store, as in kube-apiserver -----------------------
# What client-go's events/v1 recorder (kube-scheduler) writes must show in `kubectl get events`.
cat >"$M/event-v1.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: ev}
---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web-0.scheduled, namespace: ev}
eventTime: "2024-01-01T00:00:00.000000Z"
regarding: {kind: Pod, name: web-0, namespace: ev}
reason: Scheduled
note: Successfully assigned ev/web-0 to node-1
type: Normal
action: Binding
reportingController: default-scheduler
reportingInstance: default-scheduler-node-1
EOF
expect_contains "apply an events.k8s.io/v1 Event" "$(k apply -f "$M/event-v1.yaml")" \
  "event.events.k8s.io/web-0.scheduled created"
out=$(kq get events -n ev -o json)
expect_eq "get events (core/v1) -o json shows it in the core shape" \
  "$(py_json '[[i["apiVersion"], i["metadata"]["name"], i["involvedObject"]["name"], i["message"], i["reportingComponent"], "note" in i] for i in d["items"]]' <<<"$out")" \
  '[["v1", "web-0.scheduled", "web-0", "Successfully assigned ev/web-0 to node-1", "default-scheduler", false]]'
out=$(k get events -n ev --field-selector involvedObject.name=web-0)
expect_contains "get events --field-selector involvedObject.name (table)" "$out" \
  "Scheduled" "pod/web-0" "Successfully assigned ev/web-0 to node-1"
k apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Event
metadata: {name: web-1.started, namespace: ev}
involvedObject: {kind: Pod, name: web-1, namespace: ev}
reason: Started
message: Started container web
source: {component: kubelet, host: node-1}
count: 3
type: Normal
EOF
out=$(kq get events.events.k8s.io -n ev --field-selector regarding.name=web-1 -o json)
expect_eq "a core Event through events.k8s.io/v1, by its field selector and in its shape" \
  "$(py_json '[[i["apiVersion"], i["metadata"]["name"], i["regarding"]["name"], i["note"], i["deprecatedCount"], i["deprecatedSource"]["component"]] for i in d["items"]]' <<<"$out")" \
  '[["events.k8s.io/v1", "web-1.started", "web-1", "Started container web", 3, "kubelet"]]'
expect_contains "get events.events.k8s.io prints it (table)" "$(k get events.events.k8s.io -n ev)" \
  "pod/web-1" "Started container web"
expect_eq "patch through events.k8s.io/v1" \
  "$(k patch events.events.k8s.io web-0.scheduled -n ev --type=merge -p '{"note":"patched"}')" \
  "event.events.k8s.io/web-0.scheduled patched"
expect_eq "the patch shows through core/v1" \
  "$(kq get event web-0.scheduled -n ev -o jsonpath='{.message}')" patched
expect_eq "delete through core/v1" "$(k delete event web-0.scheduled -n ev)" \
  'event "web-0.scheduled" deleted'
expect_contains "gone from events.k8s.io/v1" "$(k get events.events.k8s.io web-0.scheduled -n ev)" \
  'events.events.k8s.io "web-0.scheduled" not found'

# --- kubectl's typed generators (they send protobuf) ----------------------------------------------
# `kubectl create namespace|configmap NAME` post application/vnd.kubernetes.protobuf bodies (apply
# and create -f send JSON).
out=$(k create namespace e2e-created)
expect_eq "create namespace (protobuf body)" "$out" "namespace/e2e-created created"
out=$(k create configmap e2e-literal -n demo --from-literal=k=v)
expect_eq "create configmap --from-literal (protobuf body)" "$out" "configmap/e2e-literal created"
# kubectl 1.32 sends every typed generator's object as protobuf, apps/v1 Deployment included.
out=$(k create deployment web --image=nginx --replicas=3 -n demo)
expect_eq "create deployment --replicas=3 (protobuf body)" "$out" "deployment.apps/web created"
out=$(kq get deployment web -n demo -o jsonpath='{.spec.replicas} {.spec.selector.matchLabels.app} {.spec.template.spec.containers[0].image} {.spec.template.metadata.labels.app}')
expect_eq "the protobuf Deployment reads back as sent" "$out" "3 web nginx web"

# --- the server still answers, then shuts down cleanly on SIGTERM ------------------------------
expect_eq "healthz" "$(k get --raw /healthz)" ok
if stop_server "$SERVER_PID"; then
  pass "SIGTERM stops the server with exit code 0"
else
  fail "SIGTERM stops the server with exit code 0" "exit code $?"
fi

e2e_finish
