#!/usr/bin/python3
"""End-to-end `slicewright dev` (issues #5 §3 and #21) with the real kubectl: ready within 3
seconds, `kubectl apply -f examples/dev/` gives a Deployment and a StatefulSet whose pods the
workload controllers create and the simulator schedules and makes Running (1/1 READY), the
EndpointSlice and Endpoints controllers publish them (StatefulSet pods with their hostnames), the
multi-network controller publishes the storage network's addresses; `kubectl expose`, `kubectl
scale`, `kubectl rollout restart` and `kubectl rollout status` work, a StatefulSet scales down
from its highest ordinal, deleting a Deployment cascades to its ReplicaSets and pods, `kubectl
create deployment` (a protobuf body) gives three ready pods, and SIGTERM exits 0.

Usage: /usr/bin/python3 dev_test.py PATH/TO/slicewright
"""

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import e2e_server  # noqa: E402
from e2e_server import Checks, Scratch, wait_until  # noqa: E402

checks = Checks("dev_test")
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "dev")
READY_LIMIT = 3.0 * e2e_server.SLOW


def check_workloads(kubectl, slices, ready_addresses, web_pods, web_ready_count):
    """Issue #21: expose, scale, rollout restart/status, a StatefulSet, cascading deletion."""
    def web_replicas_ready(n):
        status = json.loads(kubectl("get", "deployment", "web", "-o", "json").stdout)["status"]
        return (status.get("readyReplicas") == n and status.get("replicas") == n and
                len(web_pods()) == n and web_ready_count() == n)

    # `kubectl expose` sends JSON; the new Service selects the Deployment's pods.
    kubectl("expose", "deployment", "web", "--port", "80", "--name", "web-exposed")
    checks.check("expose: the exposed Service has three ready endpoints",
                 wait_until(20, lambda: len(ready_addresses(
                     "web-exposed", "endpointslice-controller.k8s.io")) == 3),
                 slices("web-exposed", "endpointslice-controller.k8s.io"))

    kubectl("scale", "deployment", "web", "--replicas=5")
    checks.check("scale to 5: five ready pods and endpoints",
                 wait_until(30, lambda: web_replicas_ready(5)))
    kubectl("scale", "deployment", "web", "--replicas=2")
    checks.check("scale to 2: two pods and endpoints left",
                 wait_until(30, lambda: web_replicas_ready(2)))

    before = {p["metadata"]["labels"]["pod-template-hash"] for p in web_pods()}
    kubectl("rollout", "restart", "deployment", "web")
    rollout = kubectl("rollout", "status", "deployment", "web", "--timeout=60s", check=False)
    checks.check("rollout restart: rollout status completes",
                 rollout.returncode == 0 and "successfully rolled out" in rollout.stdout,
                 rollout.stdout + rollout.stderr)
    after = {p["metadata"]["labels"]["pod-template-hash"] for p in web_pods()}
    checks.check("rollout restart: new pods from a new ReplicaSet",
                 len(after) == 1 and not after & before, (before, after))
    checks.check("rollout restart: two ready endpoints again",
                 wait_until(30, lambda: web_replicas_ready(2)))
    deployment = json.loads(kubectl("get", "deployment", "web", "-o", "json").stdout)
    progressing = [c for c in deployment["status"].get("conditions", [])
                   if c["type"] == "Progressing"]
    checks.check("rollout restart: Progressing is NewReplicaSetAvailable",
                 progressing and progressing[0]["reason"] == "NewReplicaSetAvailable", progressing)

    # The StatefulSet: ordinal pods, hostnames in the headless Service's slices.
    def db_hostnames():
        found = []
        for s in slices("db", "endpointslice-controller.k8s.io"):
            for endpoint in s.get("endpoints") or []:
                if endpoint.get("conditions", {}).get("ready"):
                    found.append(endpoint.get("hostname"))
        return sorted(found)

    checks.check("db: slice endpoints carry hostnames db-0, db-1, db-2",
                 wait_until(30, lambda: db_hostnames() == ["db-0", "db-1", "db-2"]),
                 db_hostnames())
    db1 = json.loads(kubectl("get", "pod", "db-1", "-o", "json").stdout)
    checks.eq("db-1: hostname and subdomain",
              (db1["spec"].get("hostname"), db1["spec"].get("subdomain")), ("db-1", "db"))
    rollout = kubectl("rollout", "status", "statefulset", "db", "--timeout=30s", check=False)
    checks.eq("db: rollout status completes (%s)" % rollout.stderr.strip(), rollout.returncode, 0)

    def db_pods():
        listed = json.loads(kubectl("get", "pods", "-l", "app=db", "-o", "json").stdout)
        return {p["metadata"]["name"]: bool(p["metadata"].get("deletionTimestamp"))
                for p in listed["items"]}

    kubectl("scale", "statefulset", "db", "--replicas=1")
    # db-2 leaves first: once it is terminating or gone, db-1 must still be serving.
    state = wait_until(30, lambda: (lambda pods: pods if pods.get("db-2", True) else None)(
        db_pods()))
    checks.check("db: scale down removes db-2 while db-1 stays",
                 state is not None and state.get("db-1") is False, state)
    checks.check("db: then db-1, leaving db-0",
                 wait_until(30, lambda: db_pods() == {"db-0": False}), db_pods())

    # Deleting the Deployment (background propagation, kubectl's default) cascades.
    kubectl("delete", "deployment", "web")

    def web_gone():
        rs = json.loads(kubectl("get", "replicasets", "-l", "app=web", "-o", "json").stdout)
        return not rs["items"] and not web_pods(include_terminating=True)

    checks.check("delete deployment: its ReplicaSets and pods are gone",
                 wait_until(60, web_gone))

    # The tutorials' first command: kubectl 1.32 sends this Deployment as protobuf.
    created = kubectl("create", "deployment", "hello", "--image=nginx", "--replicas=3", check=False)
    checks.check("kubectl create deployment succeeds", created.returncode == 0,
                 created.stdout + created.stderr)

    def hello_ready():
        status = json.loads(kubectl("get", "deployment", "hello", "-o", "json").stdout)["status"]
        return status.get("readyReplicas") == 3 and status.get("availableReplicas") == 3

    checks.check("kubectl create deployment: three pods ready",
                 wait_until(30, hello_ready))


def main():
    binary = e2e_server.binary_from_argv()
    e2e_server.install_sigterm_exit()
    if shutil.which("kubectl") is None:
        print("kubectl not on PATH: skipped")
        sys.exit(77)
    scratch = Scratch("dev")
    data_dir = os.path.join(scratch.path, "data")
    kubeconfig = os.path.join(data_dir, "kubeconfig")
    log_path = os.path.join(scratch.path, "dev.log")
    log = open(log_path, "wb")
    started = time.monotonic()
    process = subprocess.Popen([binary, "dev", "--data-dir", data_dir, "--port", "0",
                                "--pod-ready-delay", "200ms"], stdout=subprocess.PIPE, stderr=log)
    failed = True

    def kubectl(*args, stdin=None, check=True):
        result = subprocess.run(["kubectl", "--kubeconfig", kubeconfig] + list(args),
                                input=stdin, capture_output=True, text=True, timeout=60)
        if check and result.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(args), result.stderr))
        return result

    def slices(service, managed_by):
        listed = json.loads(kubectl("get", "endpointslices", "-l",
                                    "kubernetes.io/service-name=" + service, "-o", "json").stdout)
        return [s for s in listed["items"]
                if s["metadata"]["labels"].get("endpointslice.kubernetes.io/managed-by") == managed_by]

    def ready_addresses(service, managed_by):
        found = []
        for s in slices(service, managed_by):
            for endpoint in s.get("endpoints") or []:
                if endpoint.get("conditions", {}).get("ready"):
                    found.extend(endpoint["addresses"])
        return sorted(found)

    try:
        # The banner, then kubectl must answer.
        buffer = b""
        deadline = started + 20 * e2e_server.SLOW
        while b"kubeconfig written" not in buffer and time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], 0.5)
            if ready:
                chunk = os.read(process.stdout.fileno(), 4096)
                if not chunk:
                    break
                buffer += chunk
        checks.check("prints the kubeconfig", b"kubeconfig written" in buffer, buffer)
        checks.check("serves HTTPS", b"API server on https://127.0.0.1:" in buffer, buffer)
        answered = wait_until(10, lambda: kubectl("get", "namespaces", check=False).returncode == 0)
        elapsed = time.monotonic() - started
        checks.check("kubectl answers within %.0f s" % READY_LIMIT,
                     answered and elapsed < READY_LIMIT, "%.2f s" % elapsed)
        print("ready in %.2f s" % elapsed)

        kubectl("apply", "-f", EXAMPLES)
        checks.check("the simulator's nodes exist",
                     wait_until(10, lambda: len(json.loads(kubectl(
                         "get", "nodes", "-o", "json").stdout)["items"]) >= 3))

        def web_pods(include_terminating=False):
            listed = json.loads(kubectl("get", "pods", "-l", "app=web", "-o", "json").stdout)
            return [p for p in listed["items"]
                    if include_terminating or not p["metadata"].get("deletionTimestamp")]

        def web_ready_count():
            return len(ready_addresses("web", "endpointslice-controller.k8s.io"))

        checks.check("web: the Deployment's three pods are ready endpoints",
                     wait_until(20, lambda: web_ready_count() == 3),
                     slices("web", "endpointslice-controller.k8s.io"))
        deployment_row = kubectl("get", "deployment", "web", "--no-headers").stdout.split()
        checks.eq("web: kubectl get deployment shows 3/3 READY", deployment_row[1:4],
                  ["3/3", "3", "3"])
        pod_rows = [line.split() for line in
                    kubectl("get", "pods", "-l", "app=web", "--no-headers").stdout.splitlines()]
        checks.check("web: kubectl get pods shows 1/1 Running",
                     len(pod_rows) == 3 and all(r[1:3] == ["1/1", "Running"] for r in pod_rows),
                     pod_rows)
        pods = web_pods()
        checks.check("web: pods are scheduled, Running and owned by a ReplicaSet",
                     all(p["spec"].get("nodeName", "").startswith("sim-node-") and
                         p["status"].get("phase") == "Running" and
                         p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet" and
                         p["metadata"]["ownerReferences"][0]["controller"] and
                         p["metadata"]["labels"].get("pod-template-hash") for p in pods),
                     [(p["metadata"]["name"], p["spec"].get("nodeName"), p["status"].get("phase"))
                      for p in pods])
        statuses = pods[0]["status"].get("containerStatuses") or [{}]
        checks.check("web: containerStatuses running and ready",
                     statuses[0].get("ready") is True and "running" in statuses[0].get("state", {})
                     and statuses[0].get("containerID", "").startswith("containerd://"), statuses)
        node = json.loads(kubectl("get", "node", "sim-node-0", "-o", "json").stdout)
        checks.check("nodes report nodeInfo",
                     node["status"].get("nodeInfo", {}).get("kubeletVersion", "").startswith("v1.")
                     and node["status"]["nodeInfo"].get("operatingSystem") == "linux",
                     node["status"].get("nodeInfo"))

        # One pod held not ready by the simulator's annotation.
        held = sorted(p["metadata"]["name"] for p in pods)[0]
        kubectl("annotate", "pod", held, "sim.slicewright.io/ready=false")
        checks.check("web: the held pod is not ready", wait_until(20, lambda: web_ready_count() == 2))

        def endpoints_ok():
            result = kubectl("get", "endpoints", "web", "-o", "json", check=False)
            if result.returncode != 0:
                return False
            subsets = json.loads(result.stdout).get("subsets") or []
            ready = sum(len(s.get("addresses") or []) for s in subsets)
            not_ready = sum(len(s.get("notReadyAddresses") or []) for s in subsets)
            return ready == 2 and not_ready == 1

        checks.check("web: Endpoints with 2 ready and 1 not ready", wait_until(20, endpoints_ok))

        def storage_ready():
            addresses = ready_addresses("storage-api", "multinetwork.slicewright.io")
            return addresses if len(addresses) == 2 else None

        storage = wait_until(20, storage_ready)
        checks.check("storage-api: the storage network's addresses", storage is not None,
                     slices("storage-api", "multinetwork.slicewright.io"))
        pod_ips = {ip["ip"] for p in pods for ip in p["status"].get("podIPs") or []}
        checks.check("storage-api: not the pod IPs", storage is not None and
                     not set(storage) & pod_ips, storage)
        checks.eq("storage-api: no built-in slices",
                  slices("storage-api", "endpointslice-controller.k8s.io"), [])

        # `kubectl slicewright explain`: kubectl finds the plugin kubectl-slicewright on PATH.
        plugin_env = dict(os.environ, KUBECONFIG=kubeconfig,
                          PATH=os.path.dirname(os.path.abspath(binary)) + os.pathsep +
                          os.environ.get("PATH", ""))

        def explain(*args):
            return subprocess.run(["kubectl", "slicewright", "explain", "service"] + list(args),
                                  env=plugin_env, capture_output=True, text=True, timeout=60)

        web_text = explain("default/web")
        checks.eq("explain web: exit 0 (%s)" % web_text.stderr.strip(), web_text.returncode, 0)
        checks.check("explain web: the EndpointSlice controller manages it",
                     "Managed by:  endpointslice controller" in web_text.stdout, web_text.stdout)
        checks.check("explain web: the held pod is published not ready",
                     re.search(r"NotReady\s+" + held, web_text.stdout) is not None, web_text.stdout)
        web_json = explain("web", "-n", "default", "-o", "json")
        explained = json.loads(web_json.stdout) if web_json.returncode == 0 else {}
        checks.eq("explain web -o json: 2 ready", explained.get("ready"), 2)
        checks.eq("explain web -o json: in sync", explained.get("inSync"), True)
        storage_json = explain("default/storage-api", "-o", "json")
        explained = json.loads(storage_json.stdout) if storage_json.returncode == 0 else {}
        checks.eq("explain storage-api: multinetwork", explained.get("controller"), "multinetwork")
        missing = explain("default/no-such-service")
        checks.check("explain: a missing Service is an error naming it",
                     missing.returncode == 1 and "default/no-such-service not found" in
                     missing.stderr, missing.stderr)
        kubectl("annotate", "pod", held, "sim.slicewright.io/ready-")
        checks.check("web: the released pod is ready again",
                     wait_until(20, lambda: web_ready_count() == 3))

        check_workloads(kubectl, slices, ready_addresses, web_pods, web_ready_count)

        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=20 * e2e_server.SLOW)
        except subprocess.TimeoutExpired:
            code = None
        checks.eq("SIGTERM exits 0", code, 0)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        failed = checks.finish()
        if failed:
            with open(log_path, "rb") as f:
                print(f.read().decode(errors="replace")[-4000:])
        scratch.cleanup(failed)
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
