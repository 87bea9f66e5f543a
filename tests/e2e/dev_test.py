#!/usr/bin/python3
"""End-to-end `slicewright dev` (issue #5 §3) with the real kubectl: ready within 3 seconds,
`kubectl apply -f examples/dev/` gives pods that the simulator schedules and makes Running, the
EndpointSlice and Endpoints controllers publish them, the multi-network controller publishes the
storage network's addresses, and SIGTERM exits 0.

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

        def web_endpoints():
            return sum(len(s.get("endpoints") or [])
                       for s in slices("web", "endpointslice-controller.k8s.io"))

        def web_ready():
            return len(ready_addresses("web", "endpointslice-controller.k8s.io")) == 2

        checks.check("web: two ready endpoints (web-3 is held not ready)", wait_until(20, web_ready),
                     slices("web", "endpointslice-controller.k8s.io"))
        # web-3 gets its IP (and so its endpoint) on its own schedule, maybe after the others.
        wait_until(20, lambda: web_endpoints() >= 3)
        checks.eq("web: three endpoints in all", web_endpoints(), 3)
        pods = json.loads(kubectl("get", "pods", "-o", "json").stdout)["items"]
        checks.check("pods are scheduled and Running",
                     all(p["spec"].get("nodeName", "").startswith("sim-node-") and
                         p["status"].get("phase") == "Running" for p in pods),
                     [(p["metadata"]["name"], p["spec"].get("nodeName"), p["status"].get("phase"))
                      for p in pods])

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
        checks.check("explain web: web-3 is published not ready",
                     re.search(r"NotReady\s+web-3", web_text.stdout) is not None, web_text.stdout)
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
