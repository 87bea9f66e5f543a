#!/usr/bin/python3
"""Our endpoint controllers on a real control plane with only the rights deploy/ gives them (issue
#30 §1): deploy/ applied as an operator would (`kubectl apply -k deploy/`; its Deployment's pods
never run here, no kubelet), then two replicas of `slicewright controller-manager` with deploy/'s
arguments, authenticated by the ServiceAccount's token, electing a leader on the Lease in
kube-system. On a dual-stack kube-apiserver they run the end-to-end scenarios we run on `dev`
(endpoint_cases.py): EndpointSlices (dual-stack, named ports, publishNotReadyAddresses, more than
100 endpoints, terminating pods, headless), mirroring (past 1,000 addresses), Endpoints (with the
endpoints.kubernetes.io/managed-by label Kubernetes 1.33+ writes), the multi-network controller
(docs/custom-controllers.md), KEP-4770's label added and removed, a leader handover after a
kill -9 (no duplicate or lost slices), and `slicewright explain service` with the same token.
Any 403, in either manager's log or its rest_client_requests_total, fails.

Usage: /usr/bin/python3 controllers_test.py PATH/TO/slicewright
(KUBEBUILDER_ASSETS names the envtest folder; exit 77 without it.)
"""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))

import control_plane  # noqa: E402
import endpoint_cases as cases  # noqa: E402
import endpoint_harness as harness  # noqa: E402
from e2e_server import Checks, install_sigterm_exit, wait_until  # noqa: E402

checks = Checks("realcluster_controllers_test")
# Short Lease timings, so the handover after a kill -9 takes seconds (deploy/ keeps the defaults).
ELECTION = {"--leader-elect-lease-duration": "4s", "--leader-elect-renew-deadline": "3s",
            "--leader-elect-retry-period": "500ms"}


class Cluster:
    """Reads of one control plane, as the checks want them."""

    def __init__(self, api):
        self.api = api

    def slices(self, ns, service, managed_by=harness.SLICE_MANAGER, family=None):
        items, _ = self.api.list("EndpointSlice", ns, harness.LABEL_SERVICE_NAME + "=" + service)
        return [s for s in items
                if (s["metadata"].get("labels") or {}).get(harness.LABEL_MANAGED_BY) == managed_by
                and (family is None or s["addressType"] == family)]

    def endpoints(self, ns, service, **kwargs):
        """{address: (ready, serving, terminating, pod)} over the slices."""
        out = {}
        for s in self.slices(ns, service, **kwargs):
            for e in s.get("endpoints") or []:
                c = e.get("conditions") or {}
                out[e["addresses"][0]] = (c.get("ready"), c.get("serving"), c.get("terminating"),
                                          (e.get("targetRef") or {}).get("name"))
        return out

    def port_sets(self, ns, service):
        return sorted(sorted((p.get("name"), p.get("port"), p.get("protocol"))
                             for p in s.get("ports") or [])
                      for s in self.slices(ns, service))

    def endpoints_object(self, ns, name):
        return self.api.get("Endpoints", ns, name)

    def subsets(self, ns, name):
        """(ready IPs, not-ready IPs) of the Endpoints, or None when there is none."""
        obj = self.endpoints_object(ns, name)
        if obj is None:
            return None
        ready = sorted(a["ip"] for s in obj.get("subsets") or [] for a in s.get("addresses") or [])
        not_ready = sorted(a["ip"] for s in obj.get("subsets") or []
                           for a in s.get("notReadyAddresses") or [])
        return ready, not_ready


def ip4(block, i):
    return cases.ipv4(block, i)


def ip6(block, i):
    return cases.ipv6(block, i)


def expect(name, seconds, condition, *details):
    """Waits for `condition` and checks it; details are computed only on failure."""
    ok = wait_until(seconds, condition, interval=0.1)
    return checks.check(name, ok, *[d() if callable(d) else d for d in details] if not ok else [])


def check_phase_one(c, labelled):
    managed_by_label = {harness.ENDPOINTS_MANAGED_BY: "endpoint-controller"} if labelled else {}
    # Dual-stack: each family its own slice; the v4-only pod only in IPv4.
    want4 = {ip4(20, i): (i != 3, i != 3, False, "web-%d" % i) for i in range(4)}
    want4["10.21.0.1"] = (True, True, False, "v4-only")
    want6 = {ip6(20, i): (i != 3, i != 3, False, "web-%d" % i) for i in range(4)}
    expect("dual-stack: IPv4 slice", 30, lambda: c.endpoints("dual", "web", family="IPv4") == want4,
           lambda: c.endpoints("dual", "web", family="IPv4"))
    expect("dual-stack: IPv6 slice", 10, lambda: c.endpoints("dual", "web", family="IPv6") == want6,
           lambda: c.endpoints("dual", "web", family="IPv6"))
    expect("single-stack IPv6 Service: IPv6 slices only", 10,
           lambda: c.endpoints("dual", "v6") == want6 and not c.slices("dual", "v6", family="IPv4"),
           lambda: c.slices("dual", "v6"))
    expect("dual-stack: the Endpoints has the primary family's addresses", 10,
           lambda: c.subsets("dual", "web") ==
           (sorted([ip4(20, 0), ip4(20, 1), ip4(20, 2), "10.21.0.1"]), [ip4(20, 3)]),
           lambda: c.subsets("dual", "web"))
    expect("Endpoints labels as kube-controller-manager of this version writes them", 10,
           lambda: (c.endpoints_object("dual", "web") or {}).get("metadata", {}).get("labels")
           in ((managed_by_label or None), managed_by_label),
           lambda: c.endpoints_object("dual", "web")["metadata"])

    # Named ports: one slice per distinct port set.
    metrics = ("metrics", 9090, "TCP")
    want_ports = [
        sorted([("dns", 5353, "UDP"), ("http", 8080, "TCP"), metrics]),  # a-*
        sorted([("http", 8081, "TCP"), metrics]),  # b-*
        sorted([("http", 8090, "TCP"), metrics]),  # the app container wins over the sidecar
        [metrics]]  # the name with the wrong protocol does not match
    # http on a sidecar only: a restartable init container (1.28+; an older server drops
    # restartPolicy, and the port of a plain init container does not count).
    sidecar = c.api.get("Pod", "ports", "sidecar")
    if sidecar["spec"]["initContainers"][0].get("restartPolicy") == "Always":
        want_ports.append(sorted([("http", 8082, "TCP"), metrics]))
    want_ports.sort()
    expect("named ports: a slice per resolved port set", 20,
           lambda: c.port_sets("ports", "multi") == want_ports,
           lambda: c.port_sets("ports", "multi"))

    # publishNotReadyAddresses: every pod with an IP that is not terminal, all ready.
    pnr = {ip4(40, i): (True, i % 2 == 0, False, "web-%d" % i) for i in range(4)}
    pnr[ip4(41, 1)] = (True, False, False, "pending")
    expect("publishNotReadyAddresses: every endpoint ready", 20,
           lambda: c.endpoints("notready", "pnr") == pnr, lambda: c.endpoints("notready", "pnr"))
    expect("publishNotReadyAddresses: the Endpoints lists them all as ready", 10,
           lambda: c.subsets("notready", "pnr") == (sorted(pnr), []),
           lambda: c.subsets("notready", "pnr"))

    # More than 100 endpoints: 100 per slice.
    count = 150
    # (How they split depends on the batches the pods arrived in: [100, 50] or [98, 52].)
    def sizes():
        return sorted(len(s.get("endpoints") or []) for s in c.slices("many", "web"))
    expect("150 pods: two slices of at most 100", 60,
           lambda: sum(sizes()) == count and len(sizes()) == 2 and max(sizes()) <= 100, sizes)
    expect("150 pods: readiness per pod", 10,
           lambda: sum(1 for v in c.endpoints("many", "web").values() if v[0]) ==
           sum(1 for i in range(count) if i % 7 != 0))

    # Headless: hostnames where the subdomain names the Service; no ports, no port list.
    def hostnames():
        return sorted((e.get("hostname") or "", (e.get("targetRef") or {}).get("name"))
                      for s in c.slices("headless", "db", family="IPv4")
                      for e in s.get("endpoints") or [])
    expect("headless: hostnames of pods whose subdomain is the Service", 20,
           lambda: hostnames() == [("", "hostnet-0"), ("", "hostnet-1"), ("", "other"),
                                   ("db-0", "db-0"), ("db-1", "db-1"), ("db-2", "db-2")],
           hostnames)
    expect("headless without ports: slices without ports", 10,
           lambda: c.slices("headless", "bare") and
           all(not s.get("ports") for s in c.slices("headless", "bare")))

    # Mirroring: a selector-less Service's Endpoints; past 1,000 addresses, 1,000 mirrored.
    expect("mirroring: the hand-written Endpoints mirrored", 20,
           lambda: sorted(c.endpoints("mirror", "ext", managed_by=harness.MIRROR_MANAGER)) ==
           sorted(["10.80.0.1", "10.80.0.2", "fd00:80::1", "10.80.0.3", "10.80.1.1",
                   "10.80.1.2"]),
           lambda: c.endpoints("mirror", "ext", managed_by=harness.MIRROR_MANAGER))
    expect("mirroring: past 1,000 addresses a subset is mirrored up to 1,000", 30,
           lambda: len(c.endpoints("mirror", "big", managed_by=harness.MIRROR_MANAGER)) == 1005,
           lambda: len(c.endpoints("mirror", "big", managed_by=harness.MIRROR_MANAGER)))
    expect("mirroring: a non-canonical address mirrored canonical", 10,
           lambda: sorted(c.endpoints("mirror", "invalid", managed_by=harness.MIRROR_MANAGER)) ==
           ["10.80.2.1", "10.80.2.4"])
    checks.eq("mirroring: skip-mirror, empty and Service-less Endpoints are not mirrored",
              [c.slices("mirror", n, managed_by=harness.MIRROR_MANAGER)
               for n in ("skipped", "empty", "orphan")], [[], [], []])

    # KEP-4770: a Service handed to another controller from the start gets nothing of ours.
    checks.eq("KEP-4770: nothing of ours for a Service labelled from its creation",
              (c.slices(cases.HANDED, "handed"), c.endpoints_object(cases.HANDED, "handed")),
              ([], None))
    expect("KEP-4770: its unlabelled twin is served", 10,
           lambda: len(c.endpoints(cases.HANDED, "plain")) == 3)

    # The multi-network controller: the storage network's addresses, from network-status.
    want_storage = {"10.130.0.%d" % (i + 1): (i != 2, i != 2, False, "storage-%d" % i)
                    for i in range(3)}
    expect("multi-network: the pods' addresses on the Service's network", 20,
           lambda: c.endpoints("multinet", "storage", managed_by=harness.MULTINETWORK) ==
           want_storage, lambda: c.endpoints("multinet", "storage",
                                             managed_by=harness.MULTINETWORK))
    checks.eq("multi-network: no slices or Endpoints of the built-in controllers",
              (c.slices("multinet", "storage"), c.endpoints_object("multinet", "storage")),
              ([], None))


def check_phase_two(c):
    # Terminating pods: not ready, serving as their readiness, terminating.
    want = {ip4(60, 0): (False, True, True, "web-0"), ip4(60, 1): (False, True, True, "web-1"),
            ip4(60, 2): (False, False, True, "web-2"), ip4(60, 3): (False, False, False, "web-3")}
    expect("terminating pods: ready false, serving as their readiness, terminating", 20,
           lambda: c.endpoints("terminating", "web") == want,
           lambda: c.endpoints("terminating", "web"))
    expect("terminating pods: left out of the Endpoints", 10,
           lambda: c.subsets("terminating", "web") == ([], [ip4(60, 3)]),
           lambda: c.subsets("terminating", "web"))
    expect("publishNotReadyAddresses: terminating pods stay ready", 10,
           lambda: c.endpoints("notready", "pnr").get(ip4(40, 0)) == (True, True, True, "web-0"),
           lambda: c.endpoints("notready", "pnr"))
    # KEP-4770: the label added to a served Service takes our slices and Endpoints away.
    expect("KEP-4770: label added: our slices and Endpoints deleted", 20,
           lambda: not c.slices(cases.HANDED, "later") and
           c.endpoints_object(cases.HANDED, "later") is None,
           lambda: c.slices(cases.HANDED, "later"))
    expect("mirroring: an Endpoints changed is mirrored again", 20,
           lambda: sorted(c.endpoints("mirror", "ext", managed_by=harness.MIRROR_MANAGER)) ==
           sorted(["10.80.0.2", "10.80.0.9", "10.80.0.3", "10.80.1.1", "10.80.1.2"]),
           lambda: c.endpoints("mirror", "ext", managed_by=harness.MIRROR_MANAGER))
    expect("mirroring: skip-mirror removed: mirrored", 10,
           lambda: c.slices("mirror", "skipped", managed_by=harness.MIRROR_MANAGER))
    expect("mirroring: a Service that gains a selector is no longer mirrored", 10,
           lambda: not c.slices("mirror", "gains-selector", managed_by=harness.MIRROR_MANAGER))


def check_phase_three(c):
    expect("KEP-4770: label removed: slices and Endpoints back", 20,
           lambda: len(c.endpoints(cases.HANDED, "later")) == 3 and
           c.endpoints_object(cases.HANDED, "later") is not None,
           lambda: c.slices(cases.HANDED, "later"))


def explain(binary, kubeconfig, *args):
    return subprocess.run([binary, "explain", "service", "--kubeconfig", kubeconfig] + list(args),
                          capture_output=True, text=True, timeout=60)


def main():
    install_sigterm_exit()
    control_plane.skip_unless_assets()
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: controllers_test.py PATH/TO/slicewright")
    binary = os.path.abspath(sys.argv[1])
    started = time.monotonic()
    plane = control_plane.ControlPlane(tempfile.mkdtemp(prefix="sw-realcluster-controllers."),
                                       dual_stack=True)
    managers = []
    try:
        plane.start()
        print("control plane %s up in %.1f s" % (plane.version, plane.startup_seconds), flush=True)
        applied = plane.kubectl("apply", "-k", os.path.join(harness.REPO, "deploy"))
        checks.check("kubectl apply -k deploy/ succeeds", "serviceaccount/" in applied, applied)
        kubeconfig = plane.service_account_kubeconfig("kube-system",
                                                      "slicewright-controller-manager")
        who = plane.kubectl("auth", "whoami", "-o", "json", kubeconfig=kubeconfig, check=False)
        if who.returncode == 0:
            checks.eq("the managers authenticate as deploy/'s ServiceAccount",
                      json.loads(who.stdout)["status"]["userInfo"]["username"],
                      "system:serviceaccount:kube-system:slicewright-controller-manager")
        # The 403 detector itself: a manager whose ServiceAccount has no role is seen refused,
        # in its log and in rest_client_requests_total.
        unbound = harness.OurManager(
            binary, plane.service_account_kubeconfig("kube-system", "no-rights"),
            os.path.join(plane.log_dir, "unbound.log"), overrides={"--leader-elect": "false"})
        managers.append(unbound)
        refused = wait_until(20, lambda: len(unbound.forbidden()) >= 2, interval=0.2)
        checks.check("a manager without deploy/'s RBAC is seen refused (log and metric)",
                     refused and any("rest_client_requests_total" in line
                                     for line in unbound.forbidden()), unbound.text()[-1500:])
        unbound.kill()
        managers.remove(unbound)
        for i in range(2):
            managers.append(harness.OurManager(
                binary, kubeconfig, os.path.join(plane.log_dir, "manager-%d.log" % i),
                overrides=ELECTION))
        leader = wait_until(30, lambda: next((m for m in managers if m.leading()), None),
                            interval=0.1)
        checks.check("one replica leads", leader is not None and
                     sum(1 for m in managers if m.leading()) == 1,
                     *[m.text()[-2000:] for m in managers])
        if leader is None:
            return
        lease = plane.get_json("-n", "kube-system", "lease", harness.LEASE)
        checks.check("the Lease is deploy/'s, in kube-system",
                     lease["spec"].get("holderIdentity"), lease)
        api = harness.Api(plane)
        c = Cluster(api)
        api.run(harness.node_ops(cases.NODES))

        scenario = [cases.dual_stack_case(), cases.ports_case(), cases.not_ready_case(),
                    cases.many_case(150), cases.terminating_case(), cases.headless_case(),
                    cases.mirroring_case(1050), cases.handed_case(), cases.multinetwork_case()]
        labelled = control_plane_minor(plane) >= 33
        checks_by_phase = [lambda: check_phase_one(c, labelled), lambda: check_phase_two(c),
                           lambda: check_phase_three(c)]
        for phase, check in enumerate(checks_by_phase):
            began = time.monotonic()
            harness.run_everywhere([api], *[case.ops(phase) for case in scenario])
            checks.run("phase %d" % phase, check)
            print("     (phase %d: %.1f s)" % (phase, time.monotonic() - began), flush=True)

        # explain, with the managers' token (deploy/'s rights suffice to read what it shows).
        text = explain(binary, kubeconfig, "dual/web")
        checks.check("explain: exit 0 (%s)" % text.stderr.strip(), text.returncode == 0)
        checks.check("explain: the EndpointSlice controller manages it",
                     "Managed by:  endpointslice controller" in text.stdout, text.stdout)
        last = [{}]

        def explained_in_sync():
            # Phase 2's last pod changes may still be on their way to the slices.
            as_json = explain(binary, kubeconfig, "web", "-n", "dual", "-o", "json")
            last[0] = json.loads(as_json.stdout) if as_json.returncode == 0 else {
                "stderr": as_json.stderr}
            return last[0].get("inSync") is True and last[0].get("ready") == 4

        wait_until(20, explained_in_sync, interval=0.5)
        # web-2 in both families, v4-only and v6-only (web-0 is gone, web-1 and web-3 not ready).
        checks.eq("explain -o json: ready endpoints", last[0].get("ready"), 4)
        checks.eq("explain -o json: in sync", last[0].get("inSync"), True)
        if last[0].get("inSync") is not True:
            print(json.dumps(last[0], indent=1)[:3000], flush=True)
        text = explain(binary, kubeconfig, "multinet/storage", "-o", "json")
        explained = json.loads(text.stdout) if text.returncode == 0 else {}
        checks.eq("explain: the multi-network controller manages storage",
                  explained.get("controller"), "multinetwork")

        # Handover: the leader dies without releasing the Lease; the standby takes over.
        standby = next(m for m in managers if m is not leader)
        before = {n: sorted(s["metadata"]["name"] for s in c.slices("dual", "web"))
                  for n in ("web",)}
        leader.kill()
        api.run(harness.pod_ops(harness.pod("dual", "after-handover", {"app": "web"}, "node-a"),
                                ["10.21.0.9", "fd00:21::9"]))
        checks.check("handover: the standby takes over", wait_until(30, standby.leading,
                                                                   interval=0.1))
        expect("handover: slices follow the pods after the handover", 30,
               lambda: "10.21.0.9" in c.endpoints("dual", "web", family="IPv4") and
               "fd00:21::9" in c.endpoints("dual", "web", family="IPv6"),
               lambda: c.endpoints("dual", "web"))
        checks.eq("handover: the same slices, none duplicated or lost",
                  {"web": sorted(s["metadata"]["name"] for s in c.slices("dual", "web"))}, before)
        checks.eq("handover: no duplicate slices anywhere", duplicate_groups(api), [])

        for manager in managers:
            checks.eq("no 403 in %s's log or metrics" % os.path.basename(manager.log_path),
                      manager.forbidden(), [])
        code = standby.terminate()
        checks.eq("SIGTERM: the leader exits 0", code, 0)
        lease = plane.get_json("-n", "kube-system", "lease", harness.LEASE)
        checks.eq("SIGTERM: the Lease is released", lease["spec"].get("holderIdentity", ""), "")
    except Exception:  # noqa: BLE001 - a failure anywhere is a failed check
        import traceback

        checks.fail("controllers: raised", *traceback.format_exc().splitlines())
    finally:
        for manager in managers:
            manager.kill()
        failed = checks.failed > 0
        if failed:
            for manager in managers:
                print("---- %s\n%s" % (manager.log_path, manager.text()[-3000:]))
        plane.cleanup(keep=failed)
    print("controllers: %.1f s" % (time.monotonic() - started), flush=True)
    return checks.finish()


def control_plane_minor(plane):
    return int("".join(ch for ch in plane.version.split(".")[1] if ch.isdigit()))


def duplicate_groups(api):
    """Endpoints published twice: the same address and pod in two slices of one (namespace,
    Service, managed-by, address type), as two writers racing would leave them."""
    items, _ = api.list("EndpointSlice")
    seen = {}
    for s in items:
        labels = s["metadata"].get("labels") or {}
        for e in s.get("endpoints") or []:
            key = (s["metadata"]["namespace"], labels.get(harness.LABEL_SERVICE_NAME),
                   labels.get(harness.LABEL_MANAGED_BY), s["addressType"],
                   tuple(e["addresses"]), (e.get("targetRef") or {}).get("name"))
            seen.setdefault(key, []).append(s["metadata"]["name"])
    return sorted("%s in %s" % (k, v) for k, v in seen.items() if len(v) > 1)


if __name__ == "__main__":
    sys.exit(main())
