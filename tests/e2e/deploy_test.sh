#!/usr/bin/env bash
# End-to-end: the deploy/ kustomize base against `slicewright apiserver` with the real kubectl
# (and, at the end, deploy/mcs: the member and broker bases and member template dry-run, the
# broker's admission policy checked for structure, the member Deployment's arguments run).
# A server-side dry run must accept every object (and really validate: a base whose namespace does
# not exist, or a broken Deployment, is refused), a real apply must create each object, a second
# apply must change nothing, and the rendered manifests must keep their security settings.
# Usage: deploy_test.sh PATH/TO/slicewright        (exit 77: kubectl is not installed)
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ! command -v kubectl >/dev/null 2>&1; then
  echo "kubectl is not on PATH: skipped"
  exit 77
fi

DEPLOY=$E2E_SOURCE_DIR/deploy
start_server deploy --write-kubeconfig "$E2E_TMP/kubeconfig" || exit 1
export KUBECONFIG=$E2E_TMP/kubeconfig
# kubectl keeps its discovery cache under $HOME/.kube/cache: a fresh one per run.
export HOME=$E2E_TMP/home
mkdir -p "$HOME"

# k ARGS...: kubectl, bounded in time; stdout and stderr together.
k() {
  timeout $((60 * E2E_SLOW)) kubectl --request-timeout=$((30 * E2E_SLOW))s "$@" 2>&1
}

# Every object of the base, as `kubectl apply` names them.
objects=(
  "serviceaccount/slicewright-controller-manager"
  "role.rbac.authorization.k8s.io/slicewright:leader-election"
  "clusterrole.rbac.authorization.k8s.io/slicewright:controller-manager"
  "rolebinding.rbac.authorization.k8s.io/slicewright:leader-election"
  "clusterrolebinding.rbac.authorization.k8s.io/slicewright:controller-manager"
  "deployment.apps/slicewright-controller-manager"
  "poddisruptionbudget.policy/slicewright-controller-manager"
)

# --- deploy/Dockerfile: its runtime packages provide every library the binary links ---------------
# There is no Docker daemon or registry on the test machines, so the image is not built here; what
# can go wrong in its final stage (a library missing or misnamed) is checked against the binary's
# ldd and Debian's package data instead. debian:12-slim holds the Essential packages and apt.
check_image_libraries() {
  local sw=$1 dockerfile=$E2E_SOURCE_DIR/deploy/Dockerfile
  if ! command -v apt-cache >/dev/null || ! apt-cache show libc6 >/dev/null 2>&1; then
    echo "no apt package data: image library check skipped"
    return
  fi
  # The words of the final stage's `apt-get install ... --no-install-recommends PKG... &&`.
  local listed
  listed=$(awk '/^FROM debian:12-slim/ {final = 1} final' "$dockerfile" | tr -d '\\' | tr '\n' ' ' |
    sed -n 's/.*--no-install-recommends\([^&]*\)&&.*/\1/p' | xargs -n1 | sort -u)
  expect_contains "the Dockerfile's final stage installs the runtime libraries" "$listed" libssl3
  local pkg unknown="" known
  known=$(apt-cache pkgnames)
  for pkg in $listed; do
    grep -qx -- "$pkg" <<<"$known" || unknown+=" $pkg"
  done
  expect_eq "every package it installs exists in Debian 12" "$unknown" ""
  local provided
  provided=$( (
    echo "$listed"
    dpkg-query -W -f='${Package} ${Essential}\n' | awk '$2 == "yes" {print $1}'
    apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
      --no-replaces --no-enhances apt $listed 2>/dev/null | grep -v '^ '
  ) | sort -u)
  local lib owner missing=""
  while read -r lib; do
    case $(basename "$lib") in libasan* | libubsan* | libtsan* | liblsan*) continue ;; esac
    # dpkg records a library under /lib or /usr/lib (merged /usr): ask for each spelling.
    local real
    real=$(readlink -f "$lib")
    owner=$(dpkg -S "$lib" "$real" "${real#/usr}" 2>/dev/null | head -1 | cut -d: -f1)
    if [[ -z $owner ]] || ! grep -qx "$owner" <<<"$provided"; then
      missing+=" $(basename "$lib")(${owner:-no package})"
    fi
  done < <(ldd "$sw" | awk '/=>/ {print $3}')
  expect_eq "the image provides every library the binary links" "$missing" ""
}
check_image_libraries "$SW_BIN"

# --- kustomize renders the security settings ---------------------------------------------------
rendered=$(k kustomize "$DEPLOY")
expect_contains "kustomize renders the pod's security settings" "$rendered" \
  "runAsNonRoot: true" "readOnlyRootFilesystem: true" "allowPrivilegeEscalation: false" \
  "- ALL" "type: RuntimeDefault" "priorityClassName: system-cluster-critical" \
  "namespace: kube-system" "--leader-elect=true"
expect_eq "kustomize renders seven objects" "$(grep -c '^kind: ' <<<"$rendered")" 7

# --- server-side dry run -----------------------------------------------------------------------
out=$(k apply --dry-run=server -k "$DEPLOY")
rc=$?
expect_eq "apply --dry-run=server -k deploy/ succeeds" "$rc" 0
for o in "${objects[@]}"; do
  expect_contains "dry run lists $o" "$out" "$o created (server dry run)"
done
expect_contains "the dry run stored nothing" "$(k get deployments -A)" "No resources found"

# The dry run validates: the same base in a namespace that does not exist is refused (the
# cluster-scoped objects alone pass), as kube-apiserver's NamespaceLifecycle admission does.
# kustomize takes bases by relative path only, so the overlays sit beside a copy of the base.
cp -r "$DEPLOY" "$E2E_TMP/deploy"
mkdir -p "$E2E_TMP/overlay-ns"
cat >"$E2E_TMP/overlay-ns/kustomization.yaml" <<'EOT'
namespace: slicewright-missing
resources: [../deploy]
EOT
out=$(k apply --dry-run=server -k "$E2E_TMP/overlay-ns")
rc=$?
expect_eq "a dry run into a missing namespace fails" "$((rc != 0))" 1
expect_contains "... with NotFound for the namespace" "$out" 'namespaces "slicewright-missing" not found'
# ... and so is a Deployment whose selector does not match its template.
mkdir -p "$E2E_TMP/overlay-bad"
cat >"$E2E_TMP/overlay-bad/kustomization.yaml" <<'EOT'
resources: [../deploy]
patches:
  - target: {kind: Deployment}
    patch: |-
      - op: replace
        path: /spec/template/metadata/labels
        value: {app: other}
EOT
out=$(k apply --dry-run=server -k "$E2E_TMP/overlay-bad")
rc=$?
expect_eq "a dry run of a broken Deployment fails" "$((rc != 0))" 1
# shellcheck disable=SC2016  # the backquotes are kube-apiserver's, not a command substitution
expect_contains "... as invalid, naming the field" "$out" \
  'The Deployment "slicewright-controller-manager" is invalid: ' \
  'spec.template.metadata.labels: Invalid value: {"app":"other"}: `selector` does not match template `labels`'
# kubectl prints an Invalid answer from its details (kind, name, causes); the message itself,
# from the same dry run over HTTP:
bad=$E2E_TMP/bad-deployment.json
k kustomize "$E2E_TMP/overlay-bad" |
  /usr/bin/python3 -c 'import json, sys, yaml
print(json.dumps([d for d in yaml.safe_load_all(sys.stdin) if d["kind"] == "Deployment"][0]))' >"$bad"
out=$(http POST "$SERVER_URL/apis/apps/v1/namespaces/kube-system/deployments?dryRun=All" \
  -H 'Content-Type: application/json' --data-binary "@$bad")
# shellcheck disable=SC2016  # the backquotes are kube-apiserver's, not a command substitution
expect_contains "... with kube-apiserver's message" "$out" '422 ' \
  'Deployment.apps \"slicewright-controller-manager\" is invalid' \
  '`selector` does not match template `labels`'

# --- real apply, get, apply again ------------------------------------------------------------------
out=$(k apply -k "$DEPLOY")
rc=$?
expect_eq "apply -k deploy/ succeeds" "$rc" 0
for o in "${objects[@]}"; do
  expect_contains "apply creates $o" "$out" "$o created"
done
for o in "${objects[@]}"; do
  ns=(-n kube-system)
  [[ $o == clusterrole* ]] && ns=()
  got=$(k get "${ns[@]}" "$o" -o jsonpath='{.metadata.name} {.metadata.labels.app\.kubernetes\.io/name}')
  expect_eq "get $o" "$got" "${o#*/} slicewright"
done
out=$(k get -n kube-system deploy,pdb)
expect_contains "get deploy,pdb prints kube's columns" "$out" \
  "READY" "UP-TO-DATE" "AVAILABLE" "0/2" "MAX UNAVAILABLE" "ALLOWED DISRUPTIONS"
out=$(k get -n kube-system rolebinding slicewright:leader-election -o wide)
expect_contains "get rolebinding -o wide names the role and the ServiceAccount" "$out" \
  "Role/slicewright:leader-election" "kube-system/slicewright-controller-manager"
expect_eq "the Deployment's pod template is stored with its security context" \
  "$(k get -n kube-system deploy slicewright-controller-manager \
      -o jsonpath='{.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem} {.spec.template.spec.securityContext.runAsNonRoot}')" \
  "true true"
pdb_rv() {
  k get -n kube-system pdb slicewright-controller-manager -o jsonpath='{.metadata.resourceVersion}'
}
rv=$(pdb_rv)
out=$(k apply -k "$DEPLOY")
for o in "${objects[@]}"; do
  if [[ $o == poddisruptionbudget* ]]; then
    # PodDisruptionBudgetSpec.selector is patchStrategy "replace", so kubectl sends it on every
    # apply and says "configured" (kube-apiserver too); the server must still write nothing.
    expect_contains "apply again patches $o" "$out" "$o configured"
    expect_eq "... without writing it" "$(pdb_rv)" "$rv"
  else
    expect_contains "apply again leaves $o unchanged" "$out" "$o unchanged"
  fi
done

# --- delete ----------------------------------------------------------------------------------------
out=$(k delete -k "$DEPLOY")
expect_contains "delete -k deletes every object" "$out" \
  'deployment.apps "slicewright-controller-manager" deleted' \
  'clusterrole.rbac.authorization.k8s.io "slicewright:controller-manager" deleted'
expect_contains "nothing is left" "$(k get -n kube-system deploy,pdb,role,rolebinding 2>&1)" \
  "No resources found"

# --- deploy/mcs: the MCS agent in a member cluster, and the broker --------------------------------
MCS_DEPLOY=$E2E_SOURCE_DIR/deploy/mcs
rendered=$(k kustomize "$MCS_DEPLOY/member")
expect_eq "deploy/mcs/member renders nine objects" "$(grep -c '^kind: ' <<<"$rendered")" 9
expect_contains "... the agent alone, leader-elected on its own Lease, the broker from a Secret" \
  "$rendered" "- --controllers=mcs" "- --leader-elect=true" \
  "- --leader-elect-resource-name=slicewright-mcs-agent" \
  "- --broker-kubeconfig=/etc/slicewright/broker/kubeconfig" "secretName: slicewright-mcs-broker" \
  "readOnlyRootFilesystem: true" "namespace: kube-system"
expect_not_contains "... without the broker's record CRD" "$rendered" \
  "serviceexportrecords.mcs.slicewright.io"
out=$(k apply --dry-run=server -k "$MCS_DEPLOY/member")
rc=$?
expect_eq "apply --dry-run=server -k deploy/mcs/member succeeds" "$rc" 0
for o in "customresourcedefinition.apiextensions.k8s.io/serviceexports.multicluster.x-k8s.io" \
  "customresourcedefinition.apiextensions.k8s.io/serviceimports.multicluster.x-k8s.io" \
  "customresourcedefinition.apiextensions.k8s.io/clusterproperties.about.k8s.io" \
  "serviceaccount/slicewright-mcs-agent" \
  "role.rbac.authorization.k8s.io/slicewright:mcs-agent-leader-election" \
  "rolebinding.rbac.authorization.k8s.io/slicewright:mcs-agent-leader-election" \
  "clusterrole.rbac.authorization.k8s.io/slicewright:mcs-agent" \
  "clusterrolebinding.rbac.authorization.k8s.io/slicewright:mcs-agent" \
  "deployment.apps/slicewright-mcs-agent"; do
  expect_contains "member dry run lists $o" "$out" "$o created (server dry run)"
done
# deploy/mcs/dns: the member base serving clusterset.local DNS (issue #24) behind a Service.
rendered=$(k kustomize "$MCS_DEPLOY/dns")
expect_contains "deploy/mcs/dns: two replicas serving DNS on :5353 behind Service port 53" \
  "$rendered" "replicas: 2" "- --mcs-dns-address=:5353" "containerPort: 5353" \
  "name: slicewright-mcs-dns" "port: 53" "protocol: UDP"
expect_contains "... each ready once its zone is built, one at a time disrupted or rolled" \
  "$rendered" "path: /readyz/mcs-dns" "kind: PodDisruptionBudget" "maxSurge: 1"
expect_not_contains "... no single replica" "$rendered" "replicas: 1"
out=$(k apply --dry-run=server -k "$MCS_DEPLOY/dns")
rc=$?
expect_eq "apply --dry-run=server -k deploy/mcs/dns succeeds" "$rc" 0
expect_contains "dns dry run lists the Service and the PodDisruptionBudget" "$out" \
  "service/slicewright-mcs-dns created (server dry run)" \
  "poddisruptionbudget.policy/slicewright-mcs-dns created (server dry run)"

# The broker. The embedded server does not serve admissionregistration.k8s.io (docs/design.md,
# known differences), so the server checks the base without its admission policy, and the policy
# is checked below for its structure only: its CEL is not evaluated anywhere here.
rendered=$(k kustomize "$MCS_DEPLOY/broker")
expect_eq "deploy/mcs/broker renders: namespace, record CRD, policy and its binding" \
  "$(grep '^kind: ' <<<"$rendered" | sort | tr '\n' ' ')" \
  "kind: CustomResourceDefinition kind: Namespace kind: ValidatingAdmissionPolicy kind: ValidatingAdmissionPolicyBinding "
mkdir -p "$E2E_TMP/mcs" "$E2E_TMP/mcs-broker/members"
cp -r "$MCS_DEPLOY/." "$E2E_TMP/mcs"
cat >"$E2E_TMP/mcs-broker/kustomization.yaml" <<'EOT'
resources: [../mcs/broker]
patches:
  - patch: |-
      $patch: delete
      apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingAdmissionPolicy
      metadata: {name: slicewright-mcs-member-owns-its-cluster}
  - patch: |-
      $patch: delete
      apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingAdmissionPolicyBinding
      metadata: {name: slicewright-mcs-member-owns-its-cluster}
EOT
out=$(k apply --dry-run=server -k "$E2E_TMP/mcs-broker")
rc=$?
expect_eq "apply --dry-run=server of the broker base (policy aside) succeeds" "$rc" 0
expect_contains "... namespace and record CRD" "$out" \
  "namespace/slicewright-mcs created (server dry run)" \
  "customresourcedefinition.apiextensions.k8s.io/serviceexportrecords.mcs.slicewright.io created (server dry run)"
# The members' objects live in the broker namespace, so it must exist for their dry run.
out=$(k apply -k "$E2E_TMP/mcs-broker")
expect_contains "apply the broker base" "$out" "namespace/slicewright-mcs created"
# Two members from the template, as member-template/README.md makes them.
for id in cluster-1 cluster-2; do
  cp -r "$E2E_TMP/mcs/broker/member-template" "$E2E_TMP/mcs-broker/members/$id"
  sed -i "s/CLUSTER_ID/$id/g" "$E2E_TMP/mcs-broker/members/$id"/*.yaml
done
cat >"$E2E_TMP/mcs-broker/members/kustomization.yaml" <<'EOT'
resources: [cluster-1, cluster-2]
EOT
out=$(k apply --dry-run=server -k "$E2E_TMP/mcs-broker/members")
rc=$?
expect_eq "apply --dry-run=server of two members from the template succeeds" "$rc" 0
for id in cluster-1 cluster-2; do
  expect_contains "... member $id: ServiceAccount, token, Role, RoleBinding" "$out" \
    "serviceaccount/member-$id created (server dry run)" \
    "secret/member-$id-token created (server dry run)" \
    "role.rbac.authorization.k8s.io/slicewright:mcs-member-$id created (server dry run)" \
    "rolebinding.rbac.authorization.k8s.io/slicewright:mcs-member-$id created (server dry run)"
done
rendered=$(k kustomize "$E2E_TMP/mcs-broker/members/cluster-1")
expect_contains "member cluster-1 may renew only its own Lease" "$rendered" "- mcs-cluster-1"
out=$(k apply --dry-run=server -k "$E2E_TMP/mcs/broker/member-template")
rc=$?
expect_eq "the template with CLUSTER_ID left in is refused" "$((rc != 0))" 1
expect_contains "... for its invalid names" "$out" '"member-CLUSTER_ID" is invalid'

# The forging guard's structure: it binds with Deny, covers records, slices and Leases on every
# write, applies to member-* ServiceAccounts, and checks spec.cluster, the source-cluster label
# and the Lease name against the account's cluster id.
guard=$(k kustomize "$MCS_DEPLOY/broker" | /usr/bin/python3 -c '
import sys, yaml
docs = {d["kind"]: d for d in yaml.safe_load_all(sys.stdin) if d}
policy, binding = docs["ValidatingAdmissionPolicy"], docs["ValidatingAdmissionPolicyBinding"]
spec = policy["spec"]
print("apiVersion", policy["apiVersion"], binding["apiVersion"])
print("binding", binding["spec"]["policyName"] == policy["metadata"]["name"],
      binding["spec"]["validationActions"])
print("failurePolicy", spec["failurePolicy"])
for rule in spec["matchConstraints"]["resourceRules"]:
    print("rule", rule["apiGroups"], rule["resources"], sorted(rule["operations"]))
print("match", [c["expression"] for c in spec["matchConditions"]])
print("variables", {v["name"]: v["expression"] for v in spec["variables"]})
for v in spec["validations"]:
    print("validation", v["reason"], v["expression"])
')
expect_contains "the admission policy: kinds and binding" "$guard" \
  "apiVersion admissionregistration.k8s.io/v1 admissionregistration.k8s.io/v1" \
  "binding True ['Deny']" "failurePolicy Fail" \
  "rule ['mcs.slicewright.io'] ['serviceexportrecords'] ['CREATE', 'DELETE', 'UPDATE']" \
  "rule ['discovery.k8s.io'] ['endpointslices'] ['CREATE', 'DELETE', 'UPDATE']" \
  "rule ['coordination.k8s.io'] ['leases'] ['CREATE', 'DELETE', 'UPDATE']" \
  "request.userInfo.username.startsWith('system:serviceaccount:' + request.namespace + ':member-')" \
  "o.spec.cluster == variables.cluster" \
  "o.metadata.labels[variables.sourceCluster] == variables.cluster" \
  "o.metadata.name == 'mcs-' + variables.cluster" \
  "'multicluster.kubernetes.io/source-cluster'" "[object, oldObject]"

# The member Deployment's arguments run the agent: `slicewright controller-manager` with exactly
# those arguments (the broker kubeconfig path, the port and this cluster's id aside, since there is
# no pod here) against a member and a broker server wins its own Lease, publishes a ServiceExport
# to the broker and imports it.
start_server mcs-member --mcs-crds --write-kubeconfig "$E2E_TMP/member.kubeconfig" || exit 1
start_server mcs-broker --mcs-crds --write-kubeconfig "$E2E_TMP/broker.kubeconfig" || exit 1
mapfile -t agent_args < <(k kustomize "$MCS_DEPLOY/member" | /usr/bin/python3 -c '
import sys, yaml
for d in yaml.safe_load_all(sys.stdin):
    if d and d["kind"] == "Deployment":
        container = d["spec"]["template"]["spec"]["containers"][0]
        for arg in container["command"][1:] + container["args"]:
            print(arg)')
expect_eq "the Deployment runs controller-manager" "${agent_args[0]:-}" "controller-manager"
run_args=()
for arg in "${agent_args[@]}"; do
  case $arg in
    --broker-kubeconfig=*) run_args+=("--broker-kubeconfig=$E2E_TMP/broker.kubeconfig") ;;
    --port=*) run_args+=(--port=-1) ;;
    *) run_args+=("$arg") ;;
  esac
done
KUBECONFIG=$E2E_TMP/broker.kubeconfig k create namespace slicewright-mcs >/dev/null
export KUBECONFIG=$E2E_TMP/member.kubeconfig
k create namespace demo >/dev/null
k apply -f - >/dev/null <<'EOT'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80}]
---
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceExport
metadata: {name: web, namespace: demo}
EOT
"$SW_BIN" "${run_args[@]}" --kubeconfig="$E2E_TMP/member.kubeconfig" --cluster-id=cluster-1 \
  >"$E2E_TMP/agent.out" 2>"$E2E_TMP/agent.err" &
agent_pid=$!
e2e_pids+=("$agent_pid")
# shellcheck disable=SC2317  # called through wait_until
lease_holder() {
  k get -n kube-system lease slicewright-mcs-agent -o jsonpath='{.spec.holderIdentity}' |
    grep -q .
}
expect_eq "the agent wins its own Lease slicewright-mcs-agent" \
  "$(wait_until 20 lease_holder && echo yes)" yes
# shellcheck disable=SC2317  # called through wait_until
record_published() {
  KUBECONFIG=$E2E_TMP/broker.kubeconfig k get -n slicewright-mcs serviceexportrecord \
    web.demo.cluster-1 -o jsonpath='{.spec.cluster}' | grep -qx cluster-1
}
expect_eq "... publishes the export to the broker" "$(wait_until 20 record_published && echo yes)" yes
# shellcheck disable=SC2317  # called through wait_until
imported() {
  k get -n demo serviceimport web -o jsonpath='{.status.clusters[*].cluster}' | grep -qx cluster-1
}
expect_eq "... and imports it" "$(wait_until 20 imported && echo yes)" yes
stop_server "$agent_pid"
rc=$?
expect_eq "the agent exits 0 on SIGTERM" "$rc" 0
[[ $e2e_failed == 0 ]] || tail -20 "$E2E_TMP/agent.err"

e2e_finish
