#!/usr/bin/python3
"""Multi-Cluster Services under faults (issue #23 §5), with every part its own process on a free
loopback port and its own data dir: a broker `slicewright apiserver --mcs-crds`, two member API
servers, and in each member a `slicewright controller-manager --controllers=*,mcs` (its endpoint
controllers and its MCS agent, with a short --mcs-lease-duration). Pods are written as a kubelet
would (spec.nodeName, then status through /status). Cases:

1. The broker killed -9 while exports exist; during the outage a pod turns unready in cluster-1,
   cluster-2 exports a second Service and its controller-manager restarts, and cluster-1's
   restarts at the end of the outage. Both members are watched (from a resourceVersion, so a
   delete-and-recreate is caught) for longer than a lease duration: any deletion of an MCS slice or
   ServiceImport, or an import losing a live cluster from status.clusters, fails the test. The
   broker restarts on the same data dir and port; the ClusterSet converges.
2. cluster-2's agent killed -9: cluster-1 expires cluster-2 after the lease (its slices go, it
   leaves status.clusters, its records still shape the imports' spec, the IPs stay), and restores
   it when the agent restarts after the lease (no duplicate-id refusal). An agent restarted
   while its previous run's Lease is still live says so clearly and waits the Lease out.
3. cluster-1's API server restarted (SIGTERM, then kill -9): the agent reconnects, a change made
   after the restart propagates, and cluster-2 sees no deletion meanwhile.
4. clusterset.local DNS from every replica: cluster-1's agent becomes two controller-managers
   with --leader-elect=true. Both answer the same records with the real dig (an import only the
   leader can have written included) while only the leader runs the agent; the leader killed -9,
   the standby answers every query throughout (probed back to back, no gap over a second), takes
   the Lease over and serves a later export too.
5. Three clusters (`slicewright dev --clusters 3`, one process): a Service exported by cluster-1
   and cluster-2 is imported into cluster-3, which exports nothing, with both in status.clusters
   and one slice set per source cluster; cluster-1 expiring (its Lease deleted until its agent
   renews it) leaves cluster-3 with cluster-2 alone, watched so that the short expiry is not
   missed, then comes back; a third, different export raises Conflict on all three exports.

After each case every member's ServiceImports (spec, status.clusters, endpointSliceObjects),
ServiceExport conditions and MCS slices per source cluster must equal what the ClusterSet's
objects imply (`expected_mismatches`). Waits poll with deadlines (the conformance suite's 20 s).
E2E_SKIP_3=1 leaves out case 5; without kubectl it is skipped.

Usage: /usr/bin/python3 mcs_faults_test.py PATH/TO/slicewright
"""

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import e2e_server  # noqa: E402
from e2e_server import Checks, Scratch, Server, dig, wait_until  # noqa: E402

checks = Checks("mcs_faults_test")
# --mcs-lease-duration in seconds (renewed every third of it); longer under the sanitizers, where
# five processes share two slow cores.
LEASE = 4 * e2e_server.SLOW
IMPORT_WAIT = 20  # the conformance suite's timeout for an import or a condition (scaled by SLOW)
# --leader-elect-lease-duration of the DNS replicas' case, in seconds.
ELECTION_LEASE = 4 * e2e_server.SLOW
NS = "faults"
BROKER_NS = "slicewright-mcs"
MCS_MANAGED_BY = "mcs.slicewright.io"
SOURCE = "multicluster.kubernetes.io/source-cluster"
SLICES = "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices" % NS
IMPORTS = "/apis/multicluster.x-k8s.io/v1beta1/namespaces/%s/serviceimports" % NS
EXPORTS = "/apis/multicluster.x-k8s.io/v1beta1/namespaces/%s/serviceexports" % NS


class Api:
    """JSON over HTTPS to one `slicewright apiserver` (verified against its CA)."""

    def __init__(self, server):
        self.server = server

    def request(self, method, path, body=None, content_type="application/json", timeout=10):
        conn = self.server.connection(timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            conn.request(method, path, body=data, headers={"Content-Type": content_type})
            response = conn.getresponse()
            payload = response.read()
            return response.status, (json.loads(payload) if payload else None)
        finally:
            conn.close()

    def get(self, path):
        status, body = self.request("GET", path)
        return body if status == 200 else None

    def items(self, path):
        body = self.get(path)
        if body is None:
            raise RuntimeError("GET %s failed" % path)
        return body.get("items") or []

    def create(self, path, obj):
        status, body = self.request("POST", path, obj)
        if status not in (200, 201):
            raise RuntimeError("POST %s: %s %s" % (path, status, body))
        return body

    def patch_status(self, path, status_body):
        status, body = self.request("PATCH", path + "/status", {"status": status_body},
                                    "application/merge-patch+json")
        if status != 200:
            raise RuntimeError("PATCH %s/status: %s %s" % (path, status, body))

    def delete(self, path):
        status, body = self.request("DELETE", path)
        if status not in (200, 202, 404):
            raise RuntimeError("DELETE %s: %s %s" % (path, status, body))


class Remote:
    """A server known from a kubeconfig context (a `dev` cluster): what Api needs of a Server."""

    connection = Server.connection

    def __init__(self, kubeconfig, context, ca_file):
        import base64
        import yaml
        with open(kubeconfig) as f:
            config = yaml.safe_load(f)
        cluster_name = next(c["context"]["cluster"] for c in config["contexts"]
                            if c["name"] == context)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == cluster_name)
        self.url = cluster["server"]
        self.port = int(self.url.rsplit(":", 1)[1])
        self.ca_file = ca_file
        with open(ca_file, "wb") as f:
            f.write(base64.b64decode(cluster["certificate-authority-data"]))


class Watcher:
    """Watches one collection from a listed resourceVersion on its own thread, resuming after a
    dropped stream from the last one seen, so no event between start() and stop() is missed.
    Every event goes to `judge(type, object)`, whose non-empty answers are kept as violations."""

    def __init__(self, api, path, judge):
        self.api = api
        self.path = path
        self.judge = judge
        self.violations = []
        self.events = 0
        self.stopping = threading.Event()
        self.thread = None
        self.version = None

    def start(self):
        listed = self.api.get(self.path)
        self.version = listed["metadata"]["resourceVersion"]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self):
        while not self.stopping.is_set():
            conn = None
            try:
                conn = self.api.server.connection(1)
                conn.request("GET", "%s?watch=true&allowWatchBookmarks=true&resourceVersion=%s" %
                             (self.path, self.version))
                response = conn.getresponse()
                if response.status != 200:
                    self.violations.append("watch %s: HTTP %d" % (self.path, response.status))
                    return
                while not self.stopping.is_set():
                    line = response.readline()
                    if not line:
                        break
                    event = json.loads(line)
                    obj = event["object"]
                    if event["type"] == "ERROR":
                        self.violations.append("watch %s: %s" % (self.path, obj))
                        return
                    self.version = obj["metadata"]["resourceVersion"]
                    if event["type"] == "BOOKMARK":
                        continue
                    self.events += 1
                    verdict = self.judge(event["type"], obj)
                    if verdict:
                        self.violations.append(verdict)
            except (OSError, http.client.HTTPException, socket.timeout, ValueError):
                pass  # reconnects from self.version
            finally:
                if conn is not None:
                    conn.close()

    def stop(self):
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(5)
        return self.violations


class Process:
    """A child process in its own process group with its log in a file; kill() and stop() act on
    the group, and every Process is in ALL so that main's finally block leaves none behind."""

    ALL = []

    def __init__(self, args, log_path):
        self.args = args
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        Process.ALL.append(self)

    def alive(self):
        return self.process.poll() is None

    def signal(self, sig):
        if self.alive():
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self):
        self.signal(signal.SIGKILL)
        self.process.wait()
        self.log.close()

    def stop(self):
        self.signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=20 * e2e_server.SLOW)
        except subprocess.TimeoutExpired:
            self.kill()
            code = None
        self.log.close()
        return code

    def text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")


class Member:
    """One member cluster: its API server and its controller-manager with the agent."""

    def __init__(self, binary, root, name, broker_kubeconfig, index):
        self.binary = binary
        self.root = root
        self.name = name
        self.index = index
        self.broker_kubeconfig = broker_kubeconfig
        self.kubeconfig = os.path.join(root, name + ".kubeconfig")
        self.server = Server(binary, os.path.join(root, name),
                             ["--mcs-crds", "--write-kubeconfig", self.kubeconfig])
        self.api = Api(self.server)
        self.agent = None
        self.starts = 0

    def start_agent(self):
        self.starts += 1
        self.agent = Process(
            [self.binary, "controller-manager", "--kubeconfig", self.kubeconfig,
             "--controllers=*,mcs", "--cluster-id", self.name, "--broker-kubeconfig",
             self.broker_kubeconfig, "--mcs-lease-duration", "%ds" % LEASE, "--leader-elect=false", "--port", "-1",
             "--mcs-dns-address", "127.0.0.1:0"],
            os.path.join(self.root, "%s-agent-%d.log" % (self.name, self.starts)))
        return self.agent

    def start_replica(self):
        """One of several controller-managers of this member with leader election on (a short
        Lease), each serving clusterset.local DNS and /readyz on ports it picks."""
        self.starts += 1
        return Process(
            [self.binary, "controller-manager", "--kubeconfig", self.kubeconfig,
             "--controllers=*,mcs", "--cluster-id", self.name, "--broker-kubeconfig",
             self.broker_kubeconfig, "--mcs-lease-duration", "%ds" % LEASE,
             "--leader-elect=true", "--leader-elect-lease-duration", "%ds" % ELECTION_LEASE,
             "--leader-elect-renew-deadline", "%ds" % (ELECTION_LEASE - 1),
             "--leader-elect-retry-period", "500ms", "--bind-address", "127.0.0.1", "--port", "0",
             "--mcs-dns-address", "127.0.0.1:0"],
            os.path.join(self.root, "%s-replica-%d.log" % (self.name, self.starts)))

    # ---- what a kubelet and a user would write ----

    def setup(self):
        self.api.create("/api/v1/namespaces", {"metadata": {"name": NS}})
        self.api.create("/api/v1/nodes", {"metadata": {
            "name": "node-a", "labels": {"topology.kubernetes.io/zone": "zone-a"}}})

    def service(self, name):
        self.api.create("/api/v1/namespaces/%s/services" % NS, {
            "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ipFamilyPolicy": "SingleStack",
                     "ports": [{"name": "http", "protocol": "TCP", "port": 80,
                                "targetPort": 8080}]}})

    def export(self, name):
        self.api.create(EXPORTS, {"apiVersion": "multicluster.x-k8s.io/v1beta1",
                                  "kind": "ServiceExport", "metadata": {"name": name}})

    def pod(self, name, app, ip, ready=True):
        self.api.create("/api/v1/namespaces/%s/pods" % NS, {
            "metadata": {"name": name, "labels": {"app": app}},
            "spec": {"nodeName": "node-a", "containers": [{"name": "c", "image": "nginx"}]}})
        self.set_ready(name, ip, ready)

    def set_ready(self, name, ip, ready):
        self.api.patch_status("/api/v1/namespaces/%s/pods/%s" % (NS, name), {
            "phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]})


def condition(obj, kind):
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c["type"] == kind:
            return c
    return None


def is_mcs_slice(obj):
    labels = obj["metadata"].get("labels") or {}
    return labels.get("endpointslice.kubernetes.io/managed-by") == MCS_MANAGED_BY and SOURCE in labels


def endpoints_of(slices):
    """{source cluster: sorted [(address, ready)]} of the MCS slices given."""
    found = {}
    for s in slices:
        cluster = s["metadata"]["labels"][SOURCE]
        found.setdefault(cluster, [])
        for e in s.get("endpoints") or []:
            ready = (e.get("conditions") or {}).get("ready") is not False
            found[cluster].extend((a, ready) for a in e["addresses"])
    return {c: sorted(v) for c, v in found.items()}


def expected_mismatches(members, exports, live, ips=None):
    """What differs between the members' objects and what the ClusterSet implies.
    exports: {service: {exporting cluster: {pod ip: ready}}}; live: the clusters whose agents run
    (an expired one keeps shaping the spec but leaves status.clusters and every slice); ips:
    {(member, service): spec.ips} that must not have changed. Returns a list of strings."""
    problems = []
    for member in members:
        for service, by_cluster in exports.items():
            where = "%s: %s" % (member.name, service)
            si = member.api.get(IMPORTS + "/" + service)
            if si is None:
                problems.append(where + ": no ServiceImport")
                continue
            spec = si.get("spec") or {}
            status = si.get("status") or {}
            if spec.get("type") != "ClusterSetIP":
                problems.append(where + ": type %r" % spec.get("type"))
            ports = [(p.get("name"), p.get("protocol"), p.get("port")) for p in spec.get("ports") or []]
            if ports != [("http", "TCP", 80)]:
                problems.append(where + ": ports %r" % ports)
            if len(spec.get("ips") or []) != 1:
                problems.append(where + ": ips %r" % spec.get("ips"))
            if ips is not None and (member.name, service) in ips and \
                    spec.get("ips") != ips[(member.name, service)]:
                problems.append(where + ": ips changed %r -> %r" % (
                    ips[(member.name, service)], spec.get("ips")))
            want_clusters = sorted(c for c in by_cluster if c in live)
            got_clusters = [c["cluster"] for c in status.get("clusters") or []]
            if got_clusters != want_clusters:
                problems.append(where + ": status.clusters %r, want %r" % (got_clusters, want_clusters))
            if status.get("endpointSliceObjects") != "Present":
                problems.append(where + ": endpointSliceObjects %r" % status.get("endpointSliceObjects"))
            if (condition(si, "Ready") or {}).get("status") != "True":
                problems.append(where + ": Ready %r" % condition(si, "Ready"))
            slices = [s for s in member.api.items(
                SLICES + "?labelSelector=multicluster.kubernetes.io/service-name%3D" + service)
                if is_mcs_slice(s)]
            got = endpoints_of(slices)
            want = {c: sorted(pods.items()) for c, pods in by_cluster.items() if c in live}
            if got != want:
                problems.append(where + ": MCS endpoints per source cluster %r, want %r" % (got, want))
            derived = (si["metadata"].get("annotations") or {}).get(
                "multicluster.kubernetes.io/derived-service")
            if any(s["metadata"]["labels"].get("kubernetes.io/service-name") != derived
                   for s in slices):
                problems.append(where + ": slices not filed under the derived Service %r" % derived)
            if member.name in by_cluster:
                se = member.api.get(EXPORTS + "/" + service)
                got_conditions = {c["type"]: (c["status"], c["reason"])
                                  for c in ((se or {}).get("status") or {}).get("conditions") or []}
                want_conditions = {"Valid": ("True", "Valid"), "Ready": ("True", "Exported"),
                                   "Conflict": ("False", "NoConflicts")}
                if got_conditions != want_conditions:
                    problems.append(where + ": ServiceExport conditions %r" % got_conditions)
        # No import nobody exports.
        for si in member.api.items(IMPORTS):
            if si["metadata"]["name"] not in exports:
                problems.append("%s: unexpected ServiceImport %s" % (member.name, si["metadata"]["name"]))
    return problems


def converge(name, members, exports, live, ips=None, seconds=IMPORT_WAIT):
    last = []

    def done():
        last[:] = expected_mismatches(members, exports, live, ips)
        return not last

    return checks.check(name, wait_until(seconds, done, interval=0.2), *last)


def no_deletions_judge(member_name, protected_clusters, protected_imports, imports):
    """A Watcher judge of slices (imports=False) or ServiceImports: an MCS slice of a protected
    (live) source cluster deleted, a protected ServiceImport deleted, or one whose
    status.clusters drops a protected cluster."""
    def judge(kind, obj):
        meta = obj["metadata"]
        if imports:
            if meta["name"] not in protected_imports:
                return None
            if kind == "DELETED":
                return "%s: ServiceImport %s deleted" % (member_name, meta["name"])
            clusters = [c["cluster"] for c in (obj.get("status") or {}).get("clusters") or []]
            lost = [c for c in protected_imports[meta["name"]] if c not in clusters]
            if lost:
                return "%s: ServiceImport %s lost %r from status.clusters (%s)" % (
                    member_name, meta["name"], lost, kind)
            return None
        if kind == "DELETED" and is_mcs_slice(obj) and \
                meta["labels"][SOURCE] in protected_clusters:
            return "%s: MCS slice %s of live %s deleted" % (member_name, meta["name"],
                                                             meta["labels"][SOURCE])
        return None
    return judge


def watch_members(members, protected_clusters, protected_imports):
    watchers = []
    for member in members:
        watchers.append(Watcher(member.api, SLICES, no_deletions_judge(
            member.name, protected_clusters, protected_imports, False)).start())
        watchers.append(Watcher(member.api, IMPORTS, no_deletions_judge(
            member.name, protected_clusters, protected_imports, True)).start())
    return watchers


def import_ips(members, services):
    return {(m.name, s): (m.api.get(IMPORTS + "/" + s) or {}).get("spec", {}).get("ips")
            for m in members for s in services}


def run_cluster_set(binary, root):
    broker_dir = os.path.join(root, "broker")
    broker_kubeconfig = os.path.join(root, "broker.kubeconfig")
    broker = Server(binary, broker_dir, ["--mcs-crds", "--write-kubeconfig", broker_kubeconfig])
    servers = [broker]
    members = []
    try:
        broker.start(0)
        broker_api = Api(broker)
        broker_api.create("/api/v1/namespaces", {"metadata": {"name": BROKER_NS}})
        for index, name in enumerate(["cluster-1", "cluster-2"], start=1):
            member = Member(binary, root, name, broker_kubeconfig, index)
            member.server.start(0)
            servers.append(member.server)
            member.setup()
            members.append(member)
        c1, c2 = members
        # web: exported by both; c1 has two pods, c2 one.
        exports = {"web": {"cluster-1": {"10.1.0.1": True, "10.1.0.2": True},
                           "cluster-2": {"10.2.0.1": True}}}
        for member in members:
            member.service("web")
        c1.pod("web-1", "web", "10.1.0.1")
        c1.pod("web-2", "web", "10.1.0.2")
        c2.pod("web-1", "web", "10.2.0.1")
        for member in members:
            member.start_agent()
        for member in members:
            member.export("web")
        live = {"cluster-1", "cluster-2"}
        if not converge("setup: both members import web from both", members, exports, live):
            return
        ips = import_ips(members, ["web"])

        checks.run("broker outage", lambda: case_broker_outage(
            broker, broker_api, members, exports, live, ips))
        ips = import_ips(members, exports.keys())
        checks.run("agent killed", lambda: case_agent_killed(broker_api, members, exports, ips))
        checks.run("member API server restarted", lambda: case_member_restart(
            members, exports, ips))
        checks.run("DNS from every replica", lambda: case_dns_replicas(members, exports, ips))
        for member in members:
            checks.eq("%s: agent still running" % member.name, member.agent.alive(), True)
    finally:
        for process in Process.ALL:
            if process.alive():
                process.kill()
        for server in servers:
            server.kill()
        if checks.failed:
            for process in Process.ALL:
                print("---- %s (last 3000 characters)\n%s" % (process.log_path,
                                                               process.text()[-3000:]))


def case_broker_outage(broker, broker_api, members, exports, live, ips):
    c1, c2 = members
    watchers = watch_members(members, {"cluster-1", "cluster-2"},
                             {"web": ["cluster-1", "cluster-2"]})
    before = json.loads(json.dumps(exports))
    broker.kill()
    outage_started = time.monotonic()
    # Changes during the outage: a pod turns unready in cluster-1; cluster-2 exports api.
    c1.set_ready("web-2", "10.1.0.2", False)
    exports["web"]["cluster-1"]["10.1.0.2"] = False
    c2.service("api")
    c2.pod("api-1", "api", "10.2.0.5")
    c2.export("api")
    exports["api"] = {"cluster-2": {"10.2.0.5": True}}
    # And cluster-2's controller-manager restarts meanwhile: it cannot reach the broker, so its
    # agent runs once the broker answers, without giving up; its own controllers (EndpointSlice,
    # Endpoints, mirroring) need only cluster-2's caches and run at once.
    c2.agent.kill()
    restarted = c2.start_agent()
    c2.service("solo")
    c2.pod("solo-1", "solo", "10.2.0.9")
    # A lease duration and a margin without the broker: every agent's renewals fail; nothing of
    # a live cluster may be deleted anywhere (the watchers fail on any deletion).
    window = 2 * LEASE + 2
    checks.check("outage: the watchers are watching", wait_until(
        5, lambda: all(w.thread.is_alive() for w in watchers)))

    def solo_endpoints():
        slices = c2.api.items("/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices"
                              "?labelSelector=kubernetes.io%%2Fservice-name%%3Dsolo" % NS)
        return [a for s in slices for e in s.get("endpoints") or [] for a in e["addresses"]
                if (e.get("conditions") or {}).get("ready")]
    checks.check("outage: the controller-manager started during the outage writes cluster-2's "
                  "own EndpointSlices while the broker is down",
                  wait_until(window, lambda: solo_endpoints() == ["10.2.0.9"])
                  and broker.process.poll() is not None)
    while time.monotonic() - outage_started < window:
        time.sleep(0.5)
    # Still during the outage: imports as they were.
    during = expected_mismatches(members, before, live, ips)
    checks.check("outage: the imports in both members are as before the outage", not during,
                 *during)
    for member in members:
        checks.check("outage: the agent of %s is still running" % member.name, member.agent.alive())
    # cluster-1's controller-manager restarts too, at the end of the outage: when the broker
    # returns, both agents are new runs whose Leases and the other's aged in the outage. Each must
    # renew at once (not after its broker informers' backoff) and give the other, which its
    # previous run imported, a lease duration to renew: no deletion anywhere.
    c1.agent.kill()
    late = c1.start_agent()
    checks.check("outage: the controller-manager restarted at the end of the outage is waiting "
                 "for the broker", wait_until(10, lambda: "the Lease is taken once the broker "
                                              "answers" in late.text()), late.text()[-2000:])
    broker.start()  # same data dir, same port: the kubeconfigs stay valid
    checks.check("outage: the broker restarted", broker.process.poll() is None)
    returned = time.monotonic()
    # The informers' watches back off while the broker is away (800 ms to 30 s, full jitter, as
    # client-go's): the conformance timeout plus that cap.
    converged = converge("outage: after the broker returns, everything converges "
                         "(the unready pod, the new export)", members, exports, live, ips,
                         seconds=IMPORT_WAIT + 30)
    print("(converged %.1f s after the broker returned)" % (time.monotonic() - returned))
    violations = [v for w in watchers for v in w.stop()]
    checks.check("outage: no MCS slice of a live cluster and no ServiceImport deleted, no live "
                 "cluster dropped from status.clusters (watched %d events over %.0f s)" % (
                     sum(w.events for w in watchers), time.monotonic() - outage_started),
                 not violations and all(w.events > 0 for w in watchers), *violations)
    for agent in (restarted, late):
        checks.check("outage: the agent started during the outage took its Lease once the broker "
                     "answered", agent.alive() and "holds Lease" in agent.text(),
                     agent.text()[-2000:])
    if converged:
        checks.eq("outage: the broker holds both clusters' Leases", sorted(
            l["metadata"]["name"] for l in broker_api.items(
                "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % BROKER_NS)),
            ["mcs-cluster-1", "mcs-cluster-2"])


def case_agent_killed(broker_api, members, exports, ips):
    c1, c2 = members
    # Killed just after it renewed, so that the lease runs a whole duration from the kill: its
    # expiry is due a lease after the last renewal cluster-1 saw, up to a third earlier otherwise.
    lease_path = "/apis/coordination.k8s.io/v1/namespaces/%s/leases/mcs-cluster-2" % BROKER_NS

    def renew_time():
        return ((broker_api.get(lease_path) or {}).get("spec") or {}).get("renewTime")
    renewed_at = renew_time()
    checks.check("agent killed: cluster-2 renews its Lease", wait_until(
        LEASE, lambda: renew_time() not in (renewed_at, None), interval=0.01), renewed_at)
    killed_at = time.monotonic()
    c2.agent.kill()
    # cluster-1 expires cluster-2 after the lease: its slices go, it leaves status.clusters; the
    # import of api (exported by cluster-2 alone) stays, its spec and IP unchanged.
    expired = converge("agent killed: cluster-1 expires cluster-2 (slices removed, status.clusters "
                       "without it, spec and IPs kept)", [c1], exports, {"cluster-1"}, ips,
                       seconds=LEASE + IMPORT_WAIT)
    if expired:
        took = time.monotonic() - killed_at
        checks.check("agent killed: not before the lease ran out (%.1f s)" % took,
                     took >= LEASE - 1.5, took)
    # Restarted after the lease: no refusal, cluster-2 comes back everywhere.
    agent = c2.start_agent()
    converge("agent restarted after the lease: cluster-2 restored in both members", members,
             exports, {"cluster-1", "cluster-2"}, ips)
    log = agent.text()
    checks.check("agent restarted after the lease: no duplicate-id refusal",
                 "already in use" not in log, log[-2000:])

    # Killed and restarted at once: its previous run's Lease is still live. The new agent says
    # so clearly, waits it out, then takes it over and serves.
    c2.agent.kill()
    agent = c2.start_agent()
    refused = wait_until(10, lambda: 'cluster id "cluster-2" is already in use' in agent.text() or
                         "taking over the expired Lease" in agent.text())
    if e2e_server.SLOW > 1 and refused and "already in use" not in agent.text():
        # Under the sanitizers the new process may start after the old Lease ran out.
        print("(the restarted agent came up after its old Lease expired: no refusal to see)")
    else:
        checks.check("agent restarted within the lease: a clear message naming the id and the "
                     "Lease", 'cluster id "cluster-2" is already in use' in agent.text() and
                     "mcs-cluster-2" in agent.text(), agent.text()[-2000:])
    checks.check("agent restarted within the lease: it takes the Lease over once it expired",
                 wait_until(LEASE + IMPORT_WAIT, lambda: "taking over the expired Lease" in
                            agent.text()), agent.text()[-2000:])
    c2.set_ready("web-1", "10.2.0.1", False)
    exports["web"]["cluster-2"]["10.2.0.1"] = False
    converge("agent restarted within the lease: serving again (a later change propagates)",
             members, exports, {"cluster-1", "cluster-2"}, ips)


def case_member_restart(members, exports, ips):
    c1, c2 = members
    for variant, stop in (("SIGTERM", lambda s: s.stop()), ("kill -9", lambda s: s.kill())):
        watchers = watch_members([c2], {"cluster-1", "cluster-2"},
                                 {s: sorted(by) for s, by in exports.items()})
        stop(c1.server)
        checks.check("%s: the agent survives its API server's outage" % variant,
                     not wait_until(1, lambda: not c1.agent.alive()))
        c1.server.start()
        # A change after the restart: reaches cluster-2 only if cluster-1's agent reconnected.
        pod = "web-%s" % ("3" if variant == "SIGTERM" else "4")
        ip = "10.1.0.%s" % ("3" if variant == "SIGTERM" else "4")
        c1.pod(pod, "web", ip)
        exports["web"]["cluster-1"][ip] = True
        converge("%s of cluster-1's API server: the agent reconnects, everything converges" % variant,
                 members, exports, {"cluster-1", "cluster-2"}, ips)
        violations = [v for w in watchers for v in w.stop()]
        checks.check("%s of cluster-1's API server: no spurious deletion in cluster-2" % variant,
                     not violations, *violations)


class Prober:
    """Asks one resolver one name with the real dig, back to back on its own thread (one try, a
    one-second timeout), keeping (time, right?, what came back) of every query."""

    def __init__(self, address, name, want):
        self.address = address
        self.name = name
        self.want = want
        self.results = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.started = time.monotonic()
        self.stopped = None

    def start(self):
        self.thread.start()
        return self

    def _run(self):
        while not self.stopping.is_set():
            status, _, answers, _ = dig(self.address, self.name, "A", "+time=1", "+tries=1")
            right = status == "NOERROR" and answers == self.want
            self.results.append((time.monotonic(), right, (status, answers)))

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        self.stopped = time.monotonic()

    def wrong(self):
        return [(round(t - self.started, 2), got) for t, right, got in self.results if not right]

    def longest_gap(self):
        """The longest time without a right answer, from start() to stop()."""
        times = [self.started] + [t for t, right, _ in self.results if right] + [self.stopped]
        return max(b - a for a, b in zip(times, times[1:]))


def case_dns_replicas(members, exports, ips):
    c1, c2 = members
    if shutil.which("dig") is None:
        checks.fail("dig on PATH (bind9-dnsutils, scripts/install-deps.sh)")
        return
    # cluster-1's agent (--leader-elect=false) gives way to two replicas with leader election.
    c1.agent.kill()
    replicas = [c1.start_replica(), c1.start_replica()]
    c1.agent = replicas[0]

    def banner(replica, pattern):
        found = wait_until(20, lambda: re.search(pattern, replica.text()))
        return found.group(1) if found else None

    dns = [banner(r, r"serving clusterset\.local DNS \(UDP and TCP\) on (127\.0\.0\.1:\d+) "
                     r"from every replica") for r in replicas]
    http_ports = [banner(r, r"serving /metrics, /healthz, /readyz on 127\.0\.0\.1:(\d+)")
                  for r in replicas]
    if not checks.check("dns replicas: each prints where it serves DNS and /readyz",
                        all(dns) and all(http_ports), dns, http_ports,
                        *[r.text()[-2000:] for r in replicas]):
        return

    def readyz(port):
        conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=5)
        try:
            conn.request("GET", "/readyz/mcs-dns")
            return conn.getresponse().status
        except OSError:
            return None
        finally:
            conn.close()

    checks.check("dns replicas: /readyz/mcs-dns passes on both (the zone built, leader or not)",
                 wait_until(20, lambda: all(readyz(p) == 200 for p in http_ports)),
                 [readyz(p) for p in http_ports])
    leaders = []

    def one_leads():
        leaders[:] = [r for r in replicas if "leading; starting controllers" in r.text()]
        return len(leaders) == 1 and re.search(r"caches synced; running [^(\n]*\bmcs\b",
                                                leaders[0].text())
    if not checks.check("dns replicas: one leads and runs the agent", wait_until(
            ELECTION_LEASE + LEASE + IMPORT_WAIT, one_leads), *[r.text()[-2000:] for r in replicas]):
        return
    leader = leaders[0]
    standby = replicas[1] if leader is replicas[0] else replicas[0]
    standby_dns = dns[replicas.index(standby)]
    checks.check("dns replicas: the standby runs no agent (nothing of it in its log)",
                 "mcs agent:" not in standby.text() and
                 "leading; starting controllers" not in standby.text(), standby.text()[-2000:])

    def fqdn(service):
        return "%s.%s.svc.clusterset.local" % (service, NS)

    def want(service):
        ips_now = ((c1.api.get(IMPORTS + "/" + service) or {}).get("spec") or {}).get("ips")
        return [("A", ip) for ip in sorted(ips_now or [])]

    def answers(address, service):
        a = dig(address, fqdn(service), "A")
        srv = dig(address, "_http._tcp." + fqdn(service), "SRV")
        return a[0], a[2], srv[0], srv[2]

    # An export cluster-2 makes now: its import in cluster-1 is the leader's write alone.
    c2.service("late")
    c2.pod("late-1", "late", "10.2.0.7")
    c2.export("late")
    exports["late"] = {"cluster-2": {"10.2.0.7": True}}
    def alike_and_right(service):
        got = [answers(d, service) for d in dns]
        a_status, a, srv_status, srv = got[0]
        return want(service) and got[0] == got[1] and a_status == srv_status == "NOERROR" and \
            a == want(service) and [(t, d.split()[2], d.split()[3]) for t, d in srv] == [
                ("SRV", "80", fqdn(service) + ".")]

    for service in sorted(exports):
        checks.check("dns replicas: both answer %s alike, the import's ClusterSetIP and its SRV"
                     % service, wait_until(IMPORT_WAIT, lambda: alike_and_right(service)),
                     [answers(d, service) for d in dns], want(service))

    # The leader killed -9: the standby answers every query meanwhile, and takes over.
    prober = Prober(standby_dns, fqdn("web"), want("web")).start()
    checks.check("dns replicas: the prober gets answers", wait_until(
        10, lambda: len(prober.results) >= 5))
    leader.kill()
    killed = time.monotonic()
    took_over = checks.check("dns replicas: the standby takes the Lease and runs the agent",
                             wait_until(ELECTION_LEASE + LEASE + IMPORT_WAIT, lambda: re.search(
                                 r"caches synced; running [^(\n]*\bmcs\b", standby.text())),
                             standby.text()[-2000:])
    c1.agent = standby
    if took_over:
        print("(the standby ran the agent %.1f s after the leader was killed)" %
              (time.monotonic() - killed))
        # A later export reaches the new leader's DNS: its agent writes the import.
        c2.service("later")
        c2.pod("later-1", "later", "10.2.0.8")
        c2.export("later")
        exports["later"] = {"cluster-2": {"10.2.0.8": True}}
        checks.check("dns replicas: after the takeover a new export is answered", wait_until(
            IMPORT_WAIT, lambda: want("later") and dig(standby_dns, fqdn("later"), "A")[2] ==
            want("later")), dig(standby_dns, fqdn("later"), "A")[3])
        converge("dns replicas: after the takeover everything converges", members, exports,
                 {"cluster-1", "cluster-2"}, ips)
    prober.stop()
    checks.check("dns replicas: the standby answered web right through the takeover (%d queries "
                 "over %.1f s)" % (len(prober.results), prober.stopped - prober.started),
                 len(prober.results) >= 10 and not prober.wrong(), prober.wrong()[:10])
    checks.check("dns replicas: never a second without a right answer (longest %.2f s)" %
                 prober.longest_gap(), prober.longest_gap() < 1.0 * e2e_server.SLOW)


def run_three_clusters(binary, root):
    """`slicewright dev --clusters 3`: what two clusters cannot show."""
    data_dir = os.path.join(root, "dev3")
    kubeconfig = os.path.join(data_dir, "kubeconfig")
    dev = Process([binary, "dev", "--clusters", "3", "--data-dir", data_dir, "--nodes", "1",
                   "--pod-ready-delay", "100ms"], os.path.join(root, "dev3.log"))
    clusters = ["cluster-1", "cluster-2", "cluster-3"]

    def kubectl(context, *args, stdin=None, check=True):
        result = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "--context", context] +
                                list(args), input=stdin, capture_output=True, text=True, timeout=60)
        if check and result.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(args), result.stderr))
        return result

    def get(context, kind, name):
        result = kubectl(context, "get", kind, name, "-n", NS, "-o", "json", check=False)
        return json.loads(result.stdout) if result.returncode == 0 else None

    def apply(context, obj):
        kubectl(context, "apply", "-f", "-", stdin=json.dumps(obj))

    def service(name, port):
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NS},
                "spec": {"selector": {"app": name}, "ipFamilyPolicy": "SingleStack",
                         "ports": [{"name": "http", "protocol": "TCP", "port": port}]}}

    def export(name):
        return {"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
                "metadata": {"name": name, "namespace": NS}}

    def sources(context):
        """{source cluster: number of ready endpoints} of cluster-3's MCS slices of web."""
        listed = json.loads(kubectl(context, "get", "endpointslices", "-n", NS, "-l",
                                    "multicluster.kubernetes.io/service-name=web", "-o",
                                    "json").stdout)["items"]
        return {c: sum(1 for a, ready in eps if ready)
                for c, eps in endpoints_of([s for s in listed if is_mcs_slice(s)]).items()}

    def import_clusters(context):
        return [c["cluster"] for c in ((get(context, "serviceimport", "web") or {}).get(
            "status") or {}).get("clusters") or []]

    try:
        if not checks.check("3 clusters: dev is up", wait_until(30, lambda: os.path.exists(
                os.path.join(data_dir, "dev.json")) and all(kubectl(
                    c, "get", "namespaces", check=False).returncode == 0 for c in clusters),
                interval=0.3), dev.text()[-2000:]):
            return
        for context in clusters:
            kubectl(context, "create", "namespace", NS)
        for context in clusters[:2]:
            kubectl(context, "create", "deployment", "web", "--image=nginx", "--replicas=1",
                    "-n", NS)
            apply(context, service("web", 80))
            apply(context, export("web"))
        checks.check("3 clusters: cluster-3 (exporting nothing) imports web from cluster-1 and "
                     "cluster-2", wait_until(IMPORT_WAIT, lambda: import_clusters("cluster-3") ==
                                             ["cluster-1", "cluster-2"]),
                     import_clusters("cluster-3"))
        checks.check("3 clusters: cluster-3 has one ready endpoint per source cluster",
                     wait_until(IMPORT_WAIT, lambda: sources("cluster-3") ==
                                {"cluster-1": 1, "cluster-2": 1}), sources("cluster-3"))
        si = get("cluster-3", "serviceimport", "web")
        checks.eq("3 clusters: Present in cluster-3", si["status"].get("endpointSliceObjects"),
                  "Present")
        checks.check("3 clusters: cluster-3 exports nothing and has no slices of its own",
                     get("cluster-3", "serviceexport", "web") is None and
                     "cluster-3" not in sources("cluster-3"))

        # cluster-1 expires (its Lease deleted in the broker) until its agent renews it again
        # (within 10 s): cluster-3 drops cluster-1's endpoints and status.clusters entry and keeps
        # cluster-2's. Watched, so that a short expiry is not missed between two polls.
        api3 = Api(Remote(kubeconfig, "cluster-3", os.path.join(root, "dev3-cluster-3.crt")))
        seen = []

        def record(kind, obj):
            meta = obj["metadata"]
            if "endpoints" in obj or "addressType" in obj:
                if is_mcs_slice(obj):
                    seen.append(("slice", kind, meta["labels"][SOURCE]))
            else:
                seen.append(("import", kind, tuple(c["cluster"] for c in (
                    obj.get("status") or {}).get("clusters") or [])))
            return None

        watchers = [Watcher(api3, SLICES, record).start(), Watcher(api3, IMPORTS, record).start()]
        kubectl("broker", "delete", "lease", "mcs-cluster-1", "-n", BROKER_NS)
        checks.check("3 clusters: cluster-1 expired: cluster-3 drops it from status.clusters and "
                     "deletes its slices", wait_until(IMPORT_WAIT, lambda: (
                         "import", "MODIFIED", ("cluster-2",)) in seen and
                         ("slice", "DELETED", "cluster-1") in seen), seen)
        checks.check("3 clusters: cluster-1 back when its agent renews", wait_until(
            30, lambda: import_clusters("cluster-3") == ["cluster-1", "cluster-2"] and
            sources("cluster-3") == {"cluster-1": 1, "cluster-2": 1}),
            import_clusters("cluster-3"), sources("cluster-3"))
        violations = [v for w in watchers for v in w.stop()]
        checks.check("3 clusters: meanwhile cluster-2 stayed in cluster-3 (never dropped, its "
                     "slices never deleted)", not violations and not any(
                         e == ("slice", "DELETED", "cluster-2") or
                         (e[0] == "import" and "cluster-2" not in e[2]) for e in seen),
                     seen, *violations)

        # A third export with another port: Conflict on all three ServiceExports, the oldest's
        # port everywhere.
        time.sleep(1.1)  # creationTimestamp has second precision: cluster-3's is the newest
        apply("cluster-3", service("web", 81))
        apply("cluster-3", export("web"))

        def conflict(context):
            return (condition(get(context, "serviceexport", "web"), "Conflict") or {}).get(
                "reason", "")

        for context in clusters:
            checks.check("3 clusters: PortConflict on %s's ServiceExport" % context, wait_until(
                IMPORT_WAIT, lambda: "PortConflict" in conflict(context)), conflict(context))
        checks.check("3 clusters: status.clusters lists all three in every member", wait_until(
            IMPORT_WAIT, lambda: all(import_clusters(c) == clusters for c in clusters)),
            [import_clusters(c) for c in clusters])
        checks.eq("3 clusters: the oldest exports' port 80 under the name http", [
            (p.get("name"), p["port"]) for p in get("cluster-3", "serviceimport", "web")["spec"][
                "ports"]], [("http", 80)])
        kubectl("cluster-3", "delete", "serviceexport", "web", "-n", NS)
        for context in clusters[:2]:
            checks.check("3 clusters: cluster-3 unexported: NoConflicts again on " + context,
                         wait_until(IMPORT_WAIT, lambda: conflict(context) == "NoConflicts"),
                         conflict(context))
        checks.eq("3 clusters: SIGTERM exits 0", dev.stop(), 0)
    finally:
        if dev.alive():
            dev.kill()
        if checks.failed:
            print("---- dev --clusters 3 (last 3000 characters)\n" + dev.text()[-3000:])


def main():
    binary = e2e_server.binary_from_argv()
    e2e_server.install_sigterm_exit()
    scratch = Scratch("mcs-faults")
    failed = True
    try:
        started = time.monotonic()
        run_cluster_set(binary, scratch.path)
        print("(separate processes: %.0f s)" % (time.monotonic() - started), flush=True)
        if os.environ.get("E2E_SKIP_3") is None:
            if shutil.which("kubectl") is None:
                print("kubectl not on PATH: the 3-cluster part is skipped")
            else:
                checks.run("3 clusters", lambda: run_three_clusters(binary, scratch.path))
        failed = checks.finish() != 0
    finally:
        for process in Process.ALL:
            if process.alive():
                process.kill()
        scratch.cleanup(failed)
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
