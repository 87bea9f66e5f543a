#!/usr/bin/env bash
# End-to-end: the Multi-Cluster Services CRDs with the real kubectl (v1.32). Against
# `slicewright apiserver --crd-dir deploy/mcs/crds`: the upstream mcs-api v0.5.0 demo manifests
# apply cleanly (and again unchanged); kube-apiserver's schema behaviour on custom resources
# (status.endpointSliceObjects "Maybe" refused through --subresource=status with the 422 message,
# unknown fields refused by kubectl's default Strict, warned with --validate=warn, pruned with
# --validate=false, three ips refused); a ClusterProperty; a ServiceExportRecord valid and
# invalid. Against `slicewright dev`: the CRDs are served with no flag, so `kubectl get
# serviceexports` just works.
# Usage: mcs_crds_test.sh PATH/TO/slicewright        (exit 77: kubectl is not installed)
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ! command -v kubectl >/dev/null 2>&1; then
  echo "kubectl is not on PATH: skipped"
  exit 77
fi

MCS=$E2E_SOURCE_DIR/testdata/mcs-api-v0.5.0
CRDS=$E2E_SOURCE_DIR/deploy/mcs/crds
export HOME=$E2E_TMP/home
mkdir -p "$HOME"

# k ARGS...: kubectl, bounded in time; stdout and stderr together.
k() {
  timeout $((60 * E2E_SLOW)) kubectl --request-timeout=$((30 * E2E_SLOW))s "$@" 2>&1
}
# kq ARGS...: kubectl's stdout only.
kq() {
  timeout $((60 * E2E_SLOW)) kubectl --request-timeout=$((30 * E2E_SLOW))s "$@" 2>"$E2E_TMP/kq.err"
}

# --- slicewright apiserver --crd-dir deploy/mcs/crds ---------------------------------------------
start_server crds --crd-dir "$CRDS" --write-kubeconfig "$E2E_TMP/kubeconfig" || exit 1
export KUBECONFIG=$E2E_TMP/kubeconfig

expect_eq "the four CRDs are installed at startup" \
  "$(kq get crd -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort | tr '\n' ' ')" \
  "clusterproperties.about.k8s.io serviceexportrecords.mcs.slicewright.io serviceexports.multicluster.x-k8s.io serviceimports.multicluster.x-k8s.io "
expect_eq "they are established" \
  "$(k wait --for=condition=established --timeout=$((30 * E2E_SLOW))s crd --all | wc -l)" 4
expect_eq "ServiceImport carries the v0.5.2 release label" \
  "$(kq get crd serviceimports.multicluster.x-k8s.io -o jsonpath='{.metadata.labels.multicluster\.x-k8s\.io/release-version}')" \
  v0.5.2
# kubectl apply over CRDs it did not create adds its last-applied annotation (and says so); after
# that, applying the kustomization again changes nothing.
expect_contains "kubectl apply -k deploy/mcs/crds over them" "$(k apply -k "$CRDS")" \
  "serviceimports.multicluster.x-k8s.io configured"
expect_eq "applying deploy/mcs/crds again changes nothing" \
  "$(k apply -k "$CRDS" | sort | tr '\n' ' ')" \
  "customresourcedefinition.apiextensions.k8s.io/clusterproperties.about.k8s.io unchanged customresourcedefinition.apiextensions.k8s.io/serviceexportrecords.mcs.slicewright.io unchanged customresourcedefinition.apiextensions.k8s.io/serviceexports.multicluster.x-k8s.io unchanged customresourcedefinition.apiextensions.k8s.io/serviceimports.multicluster.x-k8s.io unchanged "

expect_eq "create namespace demo" "$(k create namespace demo)" "namespace/demo created"
out=$(k apply -f "$MCS/demo_yaml_svc.yaml" -f "$MCS/demo_yaml_dep1.yaml" \
  -f "$MCS/demo_yaml_serviceimport.yaml" -f "$MCS/demo_yaml_serviceimport-with-vip.yaml")
expect_eq "the upstream demo manifests apply cleanly" "$out" \
  "service/serve created
deployment.apps/serve created
serviceimport.multicluster.x-k8s.io/serve created
serviceimport.multicluster.x-k8s.io/serve-with-vip created"
out=$(k apply -f "$MCS/demo_yaml_svc.yaml" -f "$MCS/demo_yaml_dep2.yaml" \
  -f "$MCS/demo_yaml_serviceimport.yaml" -f "$MCS/demo_yaml_serviceimport-with-vip.yaml")
expect_eq "and again (dep2 is cluster 2's Deployment of the same name)" "$out" \
  "service/serve unchanged
deployment.apps/serve configured
serviceimport.multicluster.x-k8s.io/serve unchanged
serviceimport.multicluster.x-k8s.io/serve-with-vip unchanged"
expect_contains "get serviceimports prints the CRD's columns" "$(k get serviceimports -n demo)" \
  "NAME" "TYPE" "IP" "serve-with-vip" "ClusterSetIP" '["1.2.3.4"]'

# status.endpointSliceObjects through the status subresource.
out=$(k patch serviceimport serve -n demo --subresource=status --type=merge \
  -p '{"status":{"endpointSliceObjects":"Maybe"}}')
expect_eq "endpointSliceObjects: Maybe is refused with kube's 422 message" "$out" \
  'The ServiceImport "serve" is invalid: status.endpointSliceObjects: Unsupported value: "Maybe": supported values: "Present", "Absent"'
expect_eq "endpointSliceObjects: Present is accepted" \
  "$(k patch serviceimport serve -n demo --subresource=status --type=merge \
    -p '{"status":{"endpointSliceObjects":"Present"}}')" \
  "serviceimport.multicluster.x-k8s.io/serve patched"
expect_eq "and stored" \
  "$(kq get serviceimport serve -n demo -o jsonpath='{.status.endpointSliceObjects}')" Present
expect_eq "v1alpha1 serves the field too" \
  "$(kq get serviceimports.v1alpha1.multicluster.x-k8s.io serve -n demo -o jsonpath='{.apiVersion} {.status.endpointSliceObjects}')" \
  "multicluster.x-k8s.io/v1alpha1 Present"

# Unknown fields: kubectl's default --validate=strict asks the server to refuse them.
cat >"$E2E_TMP/extra.yaml" <<'EOF'
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceImport
metadata: {name: extra, namespace: demo}
spec:
  type: Headless
  foo: bar
  ports: [{port: 53, protocol: UDP, targetPort: 5353}]
EOF
expect_eq "an unknown field is refused with fieldValidation=Strict" \
  "$(k apply -f "$E2E_TMP/extra.yaml")" \
  "Error from server (BadRequest): error when creating \"$E2E_TMP/extra.yaml\": ServiceImport in version \"v1beta1\" cannot be handled as a ServiceImport: strict decoding error: unknown field \"spec.foo\", unknown field \"spec.ports[0].targetPort\""
expect_eq "--validate=warn stores it with a warning per pruned field" \
  "$(k apply --validate=warn -f "$E2E_TMP/extra.yaml")" \
  'Warning: unknown field "spec.foo"
Warning: unknown field "spec.ports[0].targetPort"
serviceimport.multicluster.x-k8s.io/extra created'
expect_eq "the unknown fields were pruned" \
  "$(kq get serviceimport extra -n demo -o jsonpath='{.spec}')" \
  '{"ports":[{"port":53,"protocol":"UDP"}],"type":"Headless"}'
k delete serviceimport extra -n demo >/dev/null
expect_eq "--validate=false prunes silently" \
  "$(k apply --validate=false -f "$E2E_TMP/extra.yaml")" \
  "serviceimport.multicluster.x-k8s.io/extra created"
expect_eq "pruned again" "$(kq get serviceimport extra -n demo -o jsonpath='{.spec.foo}')" ""
sed -e 's/type: Headless/type: ClusterSetIP/' "$E2E_TMP/extra.yaml" >"$E2E_TMP/extra2.yaml"
out=$(k apply -f "$E2E_TMP/extra2.yaml")
expect_contains "apply over it (a patch) with an unknown field is refused as kube refuses it" \
  "$out" 'The request is invalid: patch: Invalid value: "{' \
  'strict decoding error: unknown field "spec.foo", unknown field "spec.ports[0].targetPort"'
expect_eq "and nothing changed" "$(kq get serviceimport extra -n demo -o jsonpath='{.spec.type}')" \
  Headless

out=$(k create -f - <<'EOF'
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceImport
metadata: {name: three, namespace: demo}
spec: {type: ClusterSetIP, ips: [10.0.0.1, 10.0.0.2, 10.0.0.3], ports: [{port: 80}]}
EOF
)
expect_eq "three ips are refused" "$out" \
  'The ServiceImport "three" is invalid: spec.ips: Too many: 3: must have at most 2 items'
out=$(k create -f - <<'EOF'
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceImport
metadata: {name: typeless, namespace: demo}
spec: {ports: []}
EOF
)
expect_eq "a ServiceImport without a type is refused" "$out" \
  'The ServiceImport "typeless" is invalid: spec.type: Required value'

# ServiceExport (short name svcex), ClusterProperty (cluster scoped).
expect_eq "create a ServiceExport" "$(k create -f - <<'EOF'
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceExport
metadata: {name: serve, namespace: demo}
EOF
)" "serviceexport.multicluster.x-k8s.io/serve created"
expect_eq "get svcex" "$(kq get svcex -n demo -o jsonpath='{.items[*].metadata.name}')" serve
expect_eq "create a ClusterProperty" "$(k apply -f - <<'EOF'
apiVersion: about.k8s.io/v1alpha1
kind: ClusterProperty
metadata: {name: cluster.clusterset.k8s.io}
spec: {value: cluster-1}
EOF
)" "clusterproperty.about.k8s.io/cluster.clusterset.k8s.io created"
expect_contains "get clusterproperties prints its value" "$(k get clusterproperties)" \
  "VALUE" "cluster.clusterset.k8s.io" "cluster-1"
out=$(k apply -f - <<'EOF'
apiVersion: about.k8s.io/v1alpha1
kind: ClusterProperty
metadata: {name: id.k8s.io}
spec: {value: ""}
EOF
)
expect_eq "an empty ClusterProperty value is refused" "$out" \
  'The ClusterProperty "id.k8s.io" is invalid: spec.value: Invalid value: "": spec.value in body should be at least 1 chars long'

# The broker's export record.
expect_eq "create namespace slicewright-mcs" "$(k create namespace slicewright-mcs)" \
  "namespace/slicewright-mcs created"
cat >"$E2E_TMP/record.yaml" <<'EOF'
apiVersion: mcs.slicewright.io/v1alpha1
kind: ServiceExportRecord
metadata:
  name: serve.demo.cluster-1
  namespace: slicewright-mcs
  labels:
    multicluster.kubernetes.io/source-cluster: cluster-1
    multicluster.kubernetes.io/service-name: serve
    mcs.slicewright.io/service-namespace: demo
spec:
  cluster: cluster-1
  namespace: demo
  name: serve
  exportCreationTimestamp: "2026-12-06T03:00:00Z"
  type: ClusterSetIP
  ports: [{name: http, port: 80, appProtocol: http}]
  ipFamilies: [IPv4]
  sessionAffinity: None
  exportedLabels: {tier: web}
  endpointSliceSync: true
EOF
expect_eq "a valid ServiceExportRecord is created" "$(k apply -f "$E2E_TMP/record.yaml")" \
  "serviceexportrecord.mcs.slicewright.io/serve.demo.cluster-1 created"
expect_eq "its port protocol is defaulted" \
  "$(kq get sxr -n slicewright-mcs serve.demo.cluster-1 -o jsonpath='{.spec.ports[0].protocol}')" TCP
sed -e 's/type: ClusterSetIP/type: LoadBalancer/' -e 's/\[IPv4\]/[IPv4, IPv6, IPv4]/' \
  "$E2E_TMP/record.yaml" >"$E2E_TMP/bad-record.yaml"
expect_eq "an invalid ServiceExportRecord is refused with every error" \
  "$(k apply -f "$E2E_TMP/bad-record.yaml")" \
  'The ServiceExportRecord "serve.demo.cluster-1" is invalid: 
* spec.ipFamilies: Too many: 3: must have at most 2 items
* spec.type: Unsupported value: "LoadBalancer": supported values: "ClusterSetIP", "Headless"'
stop_server "$SERVER_PID" || fail "the apiserver stops cleanly"

# --- slicewright dev: the CRDs with no flag --------------------------------------------------
DEV_DIR=$E2E_TMP/dev
mkdir -p "$DEV_DIR"
"$SW_BIN" dev --data-dir "$DEV_DIR" --port 0 --nodes 1 >"$E2E_TMP/dev.out" 2>"$E2E_TMP/dev.err" &
DEV_PID=$!
e2e_pids+=("$DEV_PID")
if ! wait_until 30 grep -q 'kubeconfig written to' "$E2E_TMP/dev.out"; then
  fail "slicewright dev starts" "$(cat "$E2E_TMP/dev.out" "$E2E_TMP/dev.err")"
  e2e_finish
fi
export KUBECONFIG=$DEV_DIR/kubeconfig
expect_eq "kubectl get serviceexports just works in dev" "$(k get serviceexports -A)" \
  "No resources found"
expect_eq "and serviceimports, clusterproperties, serviceexportrecords" \
  "$(k api-resources --api-group=multicluster.x-k8s.io -o name | sort | tr '\n' ' ')$(k api-resources --api-group=about.k8s.io -o name)" \
  "serviceexports.multicluster.x-k8s.io serviceimports.multicluster.x-k8s.io clusterproperties.about.k8s.io"
k create namespace demo >/dev/null
out=$(k apply -f "$MCS/demo_yaml_svc.yaml" -f "$MCS/demo_yaml_dep2.yaml" \
  -f "$MCS/demo_yaml_serviceimport.yaml")
expect_eq "the demo applies in dev" "$out" \
  "service/serve created
deployment.apps/serve created
serviceimport.multicluster.x-k8s.io/serve created"
stop_server "$DEV_PID" || fail "dev stops cleanly"

e2e_finish
