#!/usr/bin/python3
"""End-to-end `slicewright controller-manager` (issue #5) against `slicewright apiserver`, driven
with the real kubectl: two leader-elected replicas, slices that follow pods, KEP-4770's label,
failover when the leader is killed (no duplicate or lost slices), /metrics and the probes, and a
SIGTERM that drains and releases the Lease.

Usage: /usr/bin/python3 controller_manager_test.py PATH/TO/slicewright
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import e2e_server  # noqa: E402
from e2e_server import Checks, Scratch, Server, wait_until  # noqa: E402

checks = Checks("controller_manager_test")
LEASE = "slicewright-controller-manager"


class Manager:
    """One `slicewright controller-manager` process; its log goes to a file."""

    def __init__(self, binary, kubeconfig, log_path):
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(
            [binary, "controller-manager", "--kubeconfig", kubeconfig,
             "--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline", "2s",
             "--leader-elect-retry-period", "500ms", "--bind-address", "127.0.0.1",
             "--port", "0", "-v", "1"],
            stdout=subprocess.PIPE, stderr=self.log)
        line = self.process.stdout.readline().decode()
        self.port = int(line.rsplit(":", 1)[1]) if "serving" in line else 0

    def leading(self):
        with open(self.log_path, "rb") as log:
            return b"leading; starting controllers" in log.read()

    def get(self, path):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port, path), timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError as error:
            return 0, str(error)


def main():
    binary = e2e_server.binary_from_argv()
    e2e_server.install_sigterm_exit()
    if shutil.which("kubectl") is None:
        print("kubectl not on PATH: skipped")
        sys.exit(77)
    scratch = Scratch("controller-manager")
    kubeconfig = os.path.join(scratch.path, "kubeconfig")
    server = Server(binary, os.path.join(scratch.path, "data"),
                    ["--write-kubeconfig", kubeconfig]).start(0)
    managers = []

    def kubectl(*args, stdin=None):
        result = subprocess.run(["kubectl", "--kubeconfig", kubeconfig] + list(args),
                                input=stdin, capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(args), result.stderr))
        return result.stdout

    def apply(obj):
        kubectl("apply", "-f", "-", stdin=json.dumps(obj))

    def pod(name, ip, ready=True):
        apply({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
               "spec": {"nodeName": "node-a", "containers": [
                   {"name": "app", "image": "nginx",
                    "ports": [{"name": "http", "containerPort": 8080}]}]}})
        kubectl("patch", "pod", name, "--subresource=status", "--type=merge", "-p", json.dumps({
            "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}))

    def slices():
        listed = json.loads(kubectl("get", "endpointslices", "-n", "default", "-l",
                                    "kubernetes.io/service-name=web", "-o", "json"))
        return [s for s in listed["items"]
                if s["metadata"]["labels"].get("endpointslice.kubernetes.io/managed-by") ==
                "endpointslice-controller.k8s.io"]

    def addresses():
        found = []
        for s in slices():
            for endpoint in s.get("endpoints") or []:
                found.extend(endpoint["addresses"])
        return sorted(found)

    def endpoints_addresses():
        try:
            endpoints = json.loads(kubectl("get", "endpoints", "web", "-n", "default", "-o", "json"))
        except RuntimeError:
            return []
        found = []
        for subset in endpoints.get("subsets") or []:
            found.extend(a["ip"] for a in subset.get("addresses") or [])
        return sorted(found)

    def lease_holder():
        try:
            lease = json.loads(kubectl("get", "lease", "-n", "kube-system", LEASE, "-o", "json"))
        except RuntimeError:
            return None
        return lease["spec"].get("holderIdentity", "")

    try:
        apply({"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": "node-a", "labels": {"topology.kubernetes.io/zone": "zone-a"}}})
        apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"app": "web"},
                        "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}})
        pod("web-1", "10.1.0.1")
        pod("web-2", "10.1.0.2")

        for index in range(2):
            managers.append(Manager(binary, kubeconfig,
                                    os.path.join(scratch.path, "manager-%d.log" % index)))
        checks.check("both serve the probes", all(m.port > 0 for m in managers),
                     [m.port for m in managers])

        checks.check("slices follow the pods",
                     wait_until(20, lambda: addresses() == ["10.1.0.1", "10.1.0.2"]), addresses())
        checks.check("the Endpoints controller writes Endpoints",
                     wait_until(20, lambda: endpoints_addresses() == ["10.1.0.1", "10.1.0.2"]),
                     endpoints_addresses())
        leader = wait_until(10, lambda: next((m for m in managers if m.leading()), None))
        checks.check("one replica leads", leader is not None and
                     sum(1 for m in managers if m.leading()) == 1)
        if leader is None:
            return
        standby = next(m for m in managers if m is not leader)
        status, body = leader.get("/metrics")
        checks.check("/metrics has upstream names", status == 200 and
                     "endpoint_slice_controller_syncs" in body and
                     "workqueue_depth" in body and "leader_election_master_status" in body,
                     status, body[:300])
        checks.eq("/readyz of the leader", leader.get("/readyz")[0], 200)
        checks.eq("/healthz of the standby", standby.get("/healthz")[0], 200)

        # KEP-4770: the label hands the Service to another controller, and back.
        kubectl("label", "service", "web", "service.kubernetes.io/endpoint-controller-name=other")
        checks.check("labelled: our slices deleted", wait_until(20, lambda: slices() == []),
                     slices())
        kubectl("label", "service", "web", "service.kubernetes.io/endpoint-controller-name-")
        checks.check("unlabelled: slices back",
                     wait_until(20, lambda: addresses() == ["10.1.0.1", "10.1.0.2"]), addresses())

        # The leader dies without releasing the Lease: the standby takes over after it expires.
        leader.process.kill()
        leader.process.wait()
        pod("web-3", "10.1.0.3")
        checks.check("the standby takes over", wait_until(30, standby.leading))
        checks.check("slices follow after failover",
                     wait_until(30, lambda: addresses() == ["10.1.0.1", "10.1.0.2", "10.1.0.3"]),
                     addresses())
        checks.eq("no duplicate slices", len(slices()), 1)

        # SIGTERM: drain, release the Lease (empty holder), exit 0.
        standby.process.send_signal(signal.SIGTERM)
        try:
            code = standby.process.wait(timeout=20 * e2e_server.SLOW)
        except subprocess.TimeoutExpired:
            code = None
        checks.eq("SIGTERM exits 0", code, 0)
        checks.eq("the Lease is released", lease_holder(), "")
    finally:
        for manager in managers:
            if manager.process.poll() is None:
                manager.process.kill()
                manager.process.wait()
        server.stop()
        failed = checks.finish()
        if failed:
            for manager in managers:
                with open(manager.log_path, "rb") as log:
                    print("---- %s\n%s" % (manager.log_path, log.read().decode(errors="replace")[-4000:]))
        scratch.cleanup(failed)
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
