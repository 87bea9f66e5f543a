#!/usr/bin/env bash
# End-to-end: bad input against `slicewright apiserver` with curl. Malformed JSON, wrong kinds,
# bodies over 3 MiB, invalid names, unknown resources and methods, deeply nested JSON, non-UTF-8
# bodies: each gets the right HTTP code and a Kubernetes Status, and the server stays healthy.
# Also the bearer token (401), HTTPS by default (the CA in DATA_DIR/tls, kept across restarts),
# --tls-cert-dir through kubectl and the written kubeconfig, plain HTTP only with --insecure-http
# on loopback, and the refusal to serve a non-loopback address without a token.
# Usage: bad_input_test.sh PATH/TO/slicewright
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start_server plain || exit 1
URL=$SERVER_URL
expect_eq "the server serves HTTPS by default" "${URL%%://*}" https
PLAIN_CA=$(cat "$SERVER_CA" 2>/dev/null)
CM=$URL/api/v1/namespaces/default/configmaps
JSON=(-H 'Content-Type: application/json')

# expect_status NAME "CODE BODY" CODE REASON MESSAGE_PART: the HTTP code, and a Status object with
# that code, the reason and a message containing MESSAGE_PART.
expect_status() {
  local name=$1 answer=$2 code=$3 reason=$4 message=$5
  local got_code=${answer%% *} body=${answer#* }
  if [[ $got_code != "$code" ]]; then
    fail "$name" "HTTP $got_code, want $code" "body: ${body:0:500}"
    return
  fi
  local out summary got_message
  out=$(py_json '"|".join([d["kind"], d["apiVersion"], d["status"], str(d["code"]), d["reason"]]) + "\n" + d["message"]' \
    <<<"$body" 2>&1)
  summary=${out%%$'\n'*}
  got_message=${out#*$'\n'}
  if [[ $summary != "Status|v1|Failure|$code|$reason" ]]; then
    fail "$name" "Status: $out" "want:   Status|v1|Failure|$code|$reason" "body: ${body:0:500}"
    return
  fi
  if [[ $got_message != *"$message"* ]]; then
    fail "$name" "message: $got_message" "want a message containing: $message"
    return
  fi
  pass "$name ($code $reason)"
}

healthy() {
  expect_eq "$1: /healthz is ok" "$(http GET "$URL/healthz")" "200 ok"
}

# --- malformed JSON, wrong kind --------------------------------------------------------------
expect_status "malformed JSON" "$(http POST "$CM" "${JSON[@]}" --data-binary '{"kind": "ConfigMap", "metadata": {')" \
  400 BadRequest "invalid JSON"
expect_status "a JSON array body" "$(http POST "$CM" "${JSON[@]}" --data-binary '[1, 2]')" \
  400 BadRequest "JSON object"
expect_status "an empty body" "$(http POST "$CM" "${JSON[@]}" --data-binary '')" \
  400 BadRequest "request body"
expect_status "wrong kind" \
  "$(http POST "$CM" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"Service","metadata":{"name":"x"}}')" \
  400 BadRequest "the kind in the data (Service) does not match the expected kind (ConfigMap)"
expect_status "wrong apiVersion" \
  "$(http POST "$CM" "${JSON[@]}" --data-binary '{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"x"}}')" \
  400 BadRequest "the API version in the data (apps/v1) does not match the expected API version (v1)"
expect_status "metadata not an object" \
  "$(http POST "$CM" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":"x"}')" \
  400 BadRequest "metadata"
http POST "$CM" "${JSON[@]}" --data-binary '{"metadata":{"name":"after-bad"}}' >/dev/null

# --- decoded as strictly as kube-apiserver: Go's type and time errors, 400 -----------------------
LEASES=$URL/apis/coordination.k8s.io/v1/namespaces/default/leases
expect_status "a Lease renewTime that is not a MicroTime" \
  "$(http POST "$LEASES" "${JSON[@]}" --data-binary '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"renewTime":"garbage"}}')" \
  400 BadRequest 'Lease in version "v1" cannot be handled as a Lease: parsing time "garbage" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "garbage" as "2006"'
expect_status "a creationTimestamp that is not a time" \
  "$(http POST "$CM" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t","creationTimestamp":"garbage"}}')" \
  400 BadRequest 'ConfigMap in version "v1" cannot be handled as a ConfigMap: parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"'
expect_status "a Pod status.startTime that is not a time" \
  "$(http POST "$URL/api/v1/namespaces/default/pods" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]},"status":{"startTime":"garbage"}}')" \
  400 BadRequest 'Pod in version "v1" cannot be handled as a Pod: parsing time "garbage"'
expect_status "a string where an int32 stands" \
  "$(http POST "$URL/api/v1/namespaces/default/services" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":"abc"}]}}')" \
  400 BadRequest 'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32'
expect_status "an update with a number where a string stands" \
  "$(http PUT "$CM/after-bad" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after-bad"},"data":{"a":1}}')" \
  400 BadRequest 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string'
expect_status "a patch whose result does not decode" \
  "$(http PATCH "$CM/after-bad" -H 'Content-Type: application/merge-patch+json' --data-binary '{"data":{"a":1}}')" \
  400 BadRequest 'json: cannot unmarshal number into Go struct field ConfigMap.data of type string'
answer=$(http POST "$LEASES" "${JSON[@]}" --data-binary '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"norm"},"spec":{"renewTime":"2024-01-02T05:04:05.123456+02:00"}}')
expect_eq "a Lease renewTime is stored in UTC with six digits" \
  "$(py_json 'd["spec"]["renewTime"]' <<<"${answer#* }")" "2024-01-02T03:04:05.123456Z"
healthy "after strict decoding errors"
expect_status "malformed JSON patch" \
  "$(http PATCH "$CM/after-bad" -H 'Content-Type: application/merge-patch+json' --data-binary '{"data":')" \
  400 BadRequest "error decoding patch"
expect_status "patch with an unsupported content type" \
  "$(http PATCH "$CM/none" -H 'Content-Type: text/plain' --data-binary '{}')" \
  415 UnsupportedMediaType "the body of the request was in an unknown format"
healthy "after malformed bodies"

# --- oversized, deeply nested, non-UTF-8 bodies -------------------------------------------------
/usr/bin/python3 -c '
import json, sys
json.dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "huge"},
           "data": {"blob": "x" * (3 * 1024 * 1024)}}, sys.stdout)' >"$E2E_TMP/huge.json"
expect_status "a body over 3 MiB" "$(http POST "$CM" "${JSON[@]}" --data-binary "@$E2E_TMP/huge.json")" \
  413 RequestEntityTooLarge "Request entity too large: limit is 3145728"
# Just under the limit is accepted (a ConfigMap's data is capped at 1 MiB, so 422 from validation
# rather than 413 from the transport).
/usr/bin/python3 -c '
import json, sys
json.dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
           "data": {"blob": "x" * (900 * 1024)}}, sys.stdout)' >"$E2E_TMP/big.json"
answer=$(http POST "$CM" "${JSON[@]}" --data-binary "@$E2E_TMP/big.json")
expect_eq "a 900 KiB ConfigMap is created" "${answer%% *}" 201
/usr/bin/python3 -c 'print("[" * 10000 + "]" * 10000)' >"$E2E_TMP/deep.json"
expect_status "JSON nested 10,000 deep" "$(http POST "$CM" "${JSON[@]}" --data-binary "@$E2E_TMP/deep.json")" \
  400 BadRequest "nested deeper than"
/usr/bin/python3 -c 'print("{\"a\":" * 10000 + "1" + "}" * 10000)' >"$E2E_TMP/deep-objects.json"
expect_status "JSON objects nested 10,000 deep in a patch" \
  "$(http PATCH "$CM/big" -H 'Content-Type: application/merge-patch+json' --data-binary "@$E2E_TMP/deep-objects.json")" \
  400 BadRequest "nested"
printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"latin1"},"data":{"k":"caf\xe9"}}' \
  >"$E2E_TMP/latin1.json"
expect_status "a non-UTF-8 body" "$(http POST "$CM" "${JSON[@]}" --data-binary "@$E2E_TMP/latin1.json")" \
  400 BadRequest "invalid JSON"
healthy "after oversized and nested bodies"

# --- invalid names, labels and values ----------------------------------------------------------
expect_status "an invalid name" \
  "$(http POST "$CM" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}')" \
  422 Invalid 'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'
expect_status "a missing name" \
  "$(http POST "$CM" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}')" \
  422 Invalid "metadata.name: Required value: name or generateName is required"
long=$(printf 'a%.0s' {1..254})
expect_status "a name over 253 characters" \
  "$(http POST "$CM" "${JSON[@]}" --data-binary "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$long\"}}")" \
  422 Invalid "must be no more than 253 characters"
expect_status "an invalid Service name (DNS-1035 label)" \
  "$(http POST "$URL/api/v1/namespaces/default/services" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"Service","metadata":{"name":"1web"},"spec":{"ports":[{"port":80}]}}')" \
  422 Invalid 'Service "1web" is invalid: metadata.name: Invalid value: "1web": a DNS-1035 label'
expect_status "an invalid label value" \
  "$(http POST "$CM" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ok","labels":{"a":"not ok!"}}}')" \
  422 Invalid 'metadata.labels: Invalid value: "not ok!"'
expect_status "a body namespace that differs from the URL's" \
  "$(http POST "$CM" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ok","namespace":"other"}}')" \
  400 BadRequest "the namespace of the provided object does not match the namespace sent on the request"
expect_status "an update that moves the object to another namespace" \
  "$(http PUT "$CM/after-bad" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after-bad","namespace":"kube-system"}}')" \
  400 BadRequest "the namespace of the provided object does not match the namespace sent on the request"
expect_status "an update that renames the object" \
  "$(http PUT "$CM/after-bad" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"renamed"}}')" \
  400 BadRequest "the name of the object (renamed) does not match the name on the URL (after-bad)"
expect_status "a missing namespace" \
  "$(http POST "$URL/api/v1/namespaces/nowhere/configmaps" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ok"}}')" \
  404 NotFound 'namespaces "nowhere" not found'
expect_status "an invalid label selector" "$(http GET "$CM?labelSelector=a%20in%20(b")" \
  400 BadRequest ""
expect_status "an unsupported field selector" "$(http GET "$CM?fieldSelector=spec.foo%3Dbar")" \
  400 BadRequest "spec.foo"
expect_status "a bad resourceVersion on a list" "$(http GET "$CM?resourceVersion=abc")" \
  400 BadRequest ""
expect_status "a watch from a resourceVersion the server never reached" \
  "$(http GET "$CM?watch=true&resourceVersion=999999&timeoutSeconds=5")" \
  504 Timeout "Too large resource version: 999999, current: "
expect_status "a bad dryRun value" \
  "$(http POST "$CM?dryRun=Some" "${JSON[@]}" --data-binary '{"metadata":{"name":"dry"}}')" \
  400 BadRequest "Invalid dry run value"
healthy "after invalid names"

# --- unknown resources, methods ----------------------------------------------------------------
expect_status "an unknown core resource" "$(http GET "$URL/api/v1/namespaces/default/frobnicators")" \
  404 NotFound "the server could not find the requested resource"
expect_status "an unknown group" "$(http GET "$URL/apis/nope.example.com/v1/things")" \
  404 NotFound "the server could not find the requested resource"
expect_status "an unknown version" "$(http GET "$URL/api/v2/namespaces")" \
  404 NotFound "the server could not find the requested resource"
expect_status "an unknown subresource" "$(http GET "$URL/api/v1/namespaces/default/configmaps/big/frob")" \
  404 NotFound "the server could not find the requested resource"
expect_status "a path outside the API" "$(http GET "$URL/nothing/here")" \
  404 NotFound "the server could not find the requested resource"
expect_status "a missing object" "$(http GET "$CM/absent")" \
  404 NotFound 'configmaps "absent" not found'
expect_status "an unknown method" "$(http FROB "$CM")" \
  405 MethodNotAllowed "the server does not allow this method on the requested resource"
expect_status "POST to a named object" \
  "$(http POST "$CM/named" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"named"}}')" \
  405 MethodNotAllowed "the server does not allow this method on the requested resource"
expect_status "PUT to a collection" \
  "$(http PUT "$CM" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}')" \
  405 MethodNotAllowed "the server does not allow this method on the requested resource"
expect_status "PATCH of a collection" \
  "$(http PATCH "$CM" -H 'Content-Type: application/merge-patch+json' --data-binary '{}')" \
  405 MethodNotAllowed "the server does not allow this method on the requested resource"
expect_status "DELETE of a discovery document" "$(http DELETE "$URL/api/v1")" \
  405 MethodNotAllowed ""
healthy "after unknown resources"

# The server survived all of that and still serves normal requests.
answer=$(http POST "$CM" "${JSON[@]}" --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after"}}')
expect_eq "a valid create still works" "${answer%% *}" 201
if stop_server "$SERVER_PID"; then
  pass "SIGTERM stops the server with exit code 0"
else
  fail "SIGTERM stops the server with exit code 0"
fi

# --- bearer token ------------------------------------------------------------------------------
start_server token --token s3cret-token || exit 1
expect_status "no token" "$(http GET "$SERVER_URL/api/v1/namespaces")" 401 Unauthorized "Unauthorized"
expect_status "a wrong token" "$(http GET "$SERVER_URL/api/v1/namespaces" -H 'Authorization: Bearer nope')" \
  401 Unauthorized "Unauthorized"
expect_status "a token of another scheme" \
  "$(http GET "$SERVER_URL/api/v1/namespaces" -H 'Authorization: Basic czNjcmV0LXRva2Vu')" \
  401 Unauthorized "Unauthorized"
answer=$(http GET "$SERVER_URL/api/v1/namespaces" -H 'Authorization: Bearer s3cret-token')
expect_eq "the right token" "${answer%% *}" 200
expect_eq "the right token lists namespaces" \
  "$(py_json '[i["metadata"]["name"] for i in d["items"]]' <<<"${answer#* }")" '["default", "kube-node-lease", "kube-public", "kube-system"]'
stop_server "$SERVER_PID"

# --- TLS, with kubectl through the written kubeconfig (CA embedded) ----------------------------
start_server tls --tls-cert-dir "$E2E_TMP/certs" --token tls-token \
  --write-kubeconfig "$E2E_TMP/tls.kubeconfig" || exit 1
expect_eq "the TLS server's URL is https" "${SERVER_URL%%://*}" https
if command -v kubectl >/dev/null 2>&1; then
  out=$(HOME=$E2E_TMP/home timeout 60 kubectl --kubeconfig "$E2E_TMP/tls.kubeconfig" \
    --request-timeout=30s get namespaces -o jsonpath='{.items[*].metadata.name}' 2>&1)
  expect_eq "kubectl over TLS with the kubeconfig's CA and token" "$out" \
    "default kube-node-lease kube-public kube-system"
  out=$(HOME=$E2E_TMP/home timeout 60 kubectl --kubeconfig "$E2E_TMP/tls.kubeconfig" \
    --request-timeout=30s apply -f - 2>&1 <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: over-tls}
data: {a: b}
EOF
)
  expect_eq "kubectl writes over TLS" "$out" "configmap/over-tls created"
else
  echo "(kubectl is not on PATH: its TLS checks skipped)"
fi
expect_eq "--tls-cert-dir holds the CA" "$SERVER_CA" "$E2E_TMP/certs/ca.crt"
answer=$(http GET "$SERVER_URL/healthz" -H 'Authorization: Bearer tls-token')
expect_eq "curl verifies the server against the generated CA" "$answer" "200 ok"
answer=$(SERVER_CA= http GET "$SERVER_URL/healthz" -H 'Authorization: Bearer tls-token')
expect_eq "a client without the CA cannot verify the server" "${answer%% *}" "curl-failed:60"
answer=$(http GET "http://127.0.0.1:$SERVER_PORT/healthz")
expect_eq "plain HTTP to the TLS port gets no answer" "${answer%% *}" "curl-failed:52"
expect_status "TLS without a token" "$(http GET "$SERVER_URL/api/v1/namespaces")" \
  401 Unauthorized "Unauthorized"
stop_server "$SERVER_PID"

# --- HTTPS by default: the CA is kept across restarts; plain HTTP only when asked, on loopback --
start_server plain --data-dir "$E2E_TMP/plain.data" || exit 1
expect_eq "a restart on the same data dir keeps the CA" "$(cat "$SERVER_CA")" "$PLAIN_CA"
expect_eq "the restarted server verifies against it" "$(http GET "$SERVER_URL/healthz")" "200 ok"
answer=$(http GET "$SERVER_URL/api/v1/namespaces/default/configmaps/after")
expect_eq "the restarted server kept its objects" "${answer%% *}" 200
stop_server "$SERVER_PID"
start_server insecure --insecure-http || exit 1
expect_eq "--insecure-http serves plain HTTP" "${SERVER_URL%%://*}" http
expect_eq "--insecure-http answers without TLS" "$(http GET "$SERVER_URL/healthz")" "200 ok"
expect_eq "--insecure-http writes no certificates" "$(ls -d "$E2E_TMP/insecure.data/tls" 2>&1 >/dev/null | grep -c 'No such file')" 1
stop_server "$SERVER_PID"
rc=0
out=$("$SW_BIN" apiserver --listen 0.0.0.0:0 --token t --insecure-http --data-dir "$E2E_TMP/open.data" 2>&1) || rc=$?
expect_eq "--insecure-http off loopback exits 1" "$rc" 1
expect_contains "--insecure-http off loopback says why" "$out" \
  "--insecure-http: refusing plain HTTP on the non-loopback address 0.0.0.0:0"
rc=0
out=$("$SW_BIN" apiserver --insecure-http --tls-cert-dir "$E2E_TMP/certs" --data-dir "$E2E_TMP/open.data" 2>&1) || rc=$?
expect_eq "--insecure-http with --tls-cert-dir exits 1" "$rc" 1
expect_contains "--insecure-http with --tls-cert-dir says why" "$out" "--insecure-http and --tls-cert-dir"

# --- a non-loopback address needs a token -------------------------------------------------------
rc=0
out=$("$SW_BIN" apiserver --listen 0.0.0.0:0 --data-dir "$E2E_TMP/open.data" 2>&1) || rc=$?
expect_eq "--listen 0.0.0.0:0 without --token exits 1" "$rc" 1
expect_contains "--listen 0.0.0.0:0 without --token says why" "$out" \
  "refusing to serve a non-loopback address without --token"
rc=0
out=$("$SW_BIN" apiserver --listen 127.0.0.1:99999 --data-dir "$E2E_TMP/open.data" 2>&1) || rc=$?
expect_eq "an invalid port exits 1" "$rc" 1
expect_contains "an invalid port says why" "$out" 'invalid port "99999"'

e2e_finish
