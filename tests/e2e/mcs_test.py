#!/usr/bin/python3
"""End-to-end Multi-Cluster Services on one machine (issue #23) with the real kubectl, against one
`slicewright dev --clusters 2` process shared by every case: DIR/dev.json and DIR/kubeconfig list
the members and the broker (contexts cluster-1, cluster-2, broker; current cluster-1), each member
has its own simulated nodes and pod CIDR (pod IPs unique in the ClusterSet), the broker holds no
nodes; then the checks of mcs_checks.py (the API-level behaviour of the mcs-api conformance suite,
T1-T16, the KEP's conditions, clusterset.local DNS with dig, T22-T27, examples/mcs and explain, bad
input, the IP families each agent learned), which tests/realcluster/mcs_test.py runs on upstream
kube-apiservers too; and SIGTERM exits 0.

Usage: /usr/bin/python3 mcs_test.py PATH/TO/slicewright
"""

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import e2e_server  # noqa: E402
import mcs_checks  # noqa: E402
from e2e_server import Checks, Scratch, wait_until  # noqa: E402

checks = Checks("mcs_test")
CLUSTERS = ["cluster-1", "cluster-2"]


def check_topology(kubectl, data_dir):
    with open(os.path.join(data_dir, "dev.json")) as f:
        dev = json.load(f)
    checks.eq("dev.json: the members, in order", [c["name"] for c in dev["clusters"]], CLUSTERS)
    checks.eq("dev.json: each member's context is its name",
              [c["context"] for c in dev["clusters"]], CLUSTERS)
    checks.check("dev.json: the broker", dev.get("broker", {}).get("context") == "broker", dev)
    servers = [c["server"] for c in dev["clusters"]] + [dev["broker"]["server"]]
    checks.check("dev.json: every server on its own loopback HTTPS port",
                 len(set(servers)) == 3 and all(s.startswith("https://127.0.0.1:") for s in servers),
                 servers)
    contexts = kubectl(None, "config", "get-contexts", "-o", "name").stdout.split()
    checks.eq("kubeconfig: contexts", sorted(contexts), sorted(CLUSTERS + ["broker"]))
    checks.eq("kubeconfig: current context", kubectl(None, "config", "current-context").stdout.strip(),
              "cluster-1")
    for context in CLUSTERS:
        checks.check(context + ": the simulator's nodes",
                     wait_until(10, lambda: len(json.loads(kubectl(
                         context, "get", "nodes", "-o", "json").stdout)["items"]) == 3))
    checks.eq("broker: no simulated nodes",
              json.loads(kubectl("broker", "get", "nodes", "-o", "json").stdout)["items"], [])

    # A pod in each member: its IPs come from that member's own CIDRs.
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    for context in CLUSTERS:
        kubectl(context, "apply", "-f", "-", stdin=json.dumps(pod))

    def pod_ips(context):
        status = json.loads(kubectl(context, "get", "pod", "probe", "-o", "json").stdout)["status"]
        return [p["ip"] for p in status.get("podIPs") or []]

    checks.check("each member's pod gets its IPs",
                 wait_until(20, lambda: all(len(pod_ips(c)) == 2 for c in CLUSTERS)))
    ips = {c: pod_ips(c) for c in CLUSTERS}
    checks.check("pod CIDRs differ per member (10.244/16 and 10.245/16; fd00:10:244::/64, :1::/64)",
                 ips["cluster-1"][0].startswith("10.244.") and
                 ips["cluster-2"][0].startswith("10.245.") and
                 ips["cluster-1"][1].startswith("fd00:10:244::") and
                 ips["cluster-2"][1].startswith("fd00:10:244:1::"), ips)
    for context in CLUSTERS:
        kubectl(context, "delete", "pod", "probe", "--wait=false")


class DevClusterSet:
    """The ClusterSet of one `slicewright dev --clusters 2` process, as mcs_checks wants it."""

    def __init__(self, binary, data_dir, process, log_path):
        self.clusters = CLUSTERS
        self.binary = binary
        self.kubeconfig = os.path.join(data_dir, "kubeconfig")
        self.process = process
        self.log_path = log_path
        with open(os.path.join(data_dir, "dev.json")) as f:
            self.resolvers = {c["name"]: c.get("dns") for c in json.load(f)["clusters"]}

    def kubectl(self, context, *args, stdin=None, check=True):
        command = ["kubectl", "--kubeconfig", self.kubeconfig]
        if context is not None:
            command += ["--context", context]
        result = subprocess.run(command + list(args), input=stdin, capture_output=True, text=True,
                                timeout=60)
        if check and result.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(args), result.stderr))
        return result

    def set_pod_ready(self, context, namespace, pod, ready):
        # The pod simulator's switch.
        self.kubectl(context, "annotate", "--overwrite", "pod", pod, "-n", namespace,
                     "sim.slicewright.io/ready=%s" % ("true" if ready else "false"))

    def agents_running(self):
        return self.process.poll() is None

    def agent_log(self, member):
        # One process, every member's agent: its lines name the cluster.
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def ip_families(self, member):
        # The embedded API server always has an IPv4 and an IPv6 service range.
        return ["IPv4", "IPv6"]


def main():
    binary = e2e_server.binary_from_argv()
    e2e_server.install_sigterm_exit()
    if shutil.which("kubectl") is None:
        print("kubectl not on PATH: skipped")
        sys.exit(77)
    scratch = Scratch("mcs")
    data_dir = os.path.join(scratch.path, "data")
    kubeconfig = os.path.join(data_dir, "kubeconfig")
    log_path = os.path.join(scratch.path, "dev.log")
    log = open(log_path, "wb")
    process = subprocess.Popen([binary, "dev", "--clusters", str(len(CLUSTERS)), "--data-dir",
                                data_dir, "--pod-ready-delay", "200ms"],
                               stdout=subprocess.PIPE, stderr=log)
    failed = True

    def kubectl(context, *args, stdin=None, check=True):
        command = ["kubectl", "--kubeconfig", kubeconfig]
        if context is not None:
            command += ["--context", context]
        result = subprocess.run(command + list(args), input=stdin, capture_output=True, text=True,
                                timeout=60)
        if check and result.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(args), result.stderr))
        return result

    try:
        buffer = b""
        deadline = time.monotonic() + 20 * e2e_server.SLOW
        while b"kubeconfig" not in buffer and time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], 0.5)
            if ready:
                chunk = os.read(process.stdout.fileno(), 4096)
                if not chunk:
                    break
                buffer += chunk
        checks.check("prints the kubeconfig and every cluster", b"kubeconfig" in buffer and
                     b"cluster-2: https://" in buffer and b"broker: https://" in buffer, buffer)
        checks.check("every context answers", wait_until(10, lambda: all(
            kubectl(c, "get", "namespaces", check=False).returncode == 0
            for c in CLUSTERS + ["broker"])))
        checks.run("topology", lambda: check_topology(kubectl, data_dir))
        cs = DevClusterSet(binary, data_dir, process, log_path)
        checks.run("services", lambda: mcs_checks.check_services(cs, checks))
        checks.run("dns", lambda: mcs_checks.check_dns(cs, checks))
        checks.run("example", lambda: mcs_checks.check_example(cs, checks))
        checks.run("bad input", lambda: mcs_checks.check_bad_input(cs, checks))
        checks.run("IP families", lambda: mcs_checks.check_cluster_ip_families(cs, checks))

        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=20 * e2e_server.SLOW)
        except subprocess.TimeoutExpired:
            code = None
        checks.eq("SIGTERM: exits 0", code, 0)
        failed = checks.finish() != 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
        if failed:
            with open(log_path, "rb") as f:
                print(f.read().decode(errors="replace")[-4000:])
        scratch.cleanup(failed)
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
