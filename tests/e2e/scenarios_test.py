#!/usr/bin/python3
"""Spec section 16's controller, mirroring, Endpoints and KEP-4770 scenarios (43-60), end to end:
`slicewright dev` (the embedded API server, every controller, the pod simulator) driven by the real
kubectl, each scenario in its own namespace. Scenario 58 (gate off) runs a second
`slicewright controller-manager --feature-gates ExternalEndpointController=false` under its own
managed-by value next to it. Scenarios that need an API-call count or the controller's queue are
tested below this level instead: 46 (batching) and 47 (which Services a pod update enqueues) in
tests/controllers/endpointslice/event_handling_test.cc, 51 and 52 in
tests/reconcile/endpoints_source_test.cc; 47's visible effect (a relabelled pod moves between
Services) is checked here too.
Usage: scenarios_test.py PATH/TO/slicewright"""

import json
import os
import select
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_server  # noqa: E402
from e2e_server import Checks, Scratch, wait_until  # noqa: E402

OURS = "endpointslice-controller.k8s.io"
MIRRORED = "endpointslicemirroring-controller.k8s.io"
MULTINETWORK = "multinetwork.slicewright.io"
GATE_OFF = "gate-off.slicewright.io"
LABEL = "service.kubernetes.io/endpoint-controller-name"

checks = Checks("scenarios_test")


def main():
    binary = e2e_server.binary_from_argv()
    e2e_server.install_sigterm_exit()
    if shutil.which("kubectl") is None:
        print("kubectl not on PATH: skipped")
        sys.exit(77)
    scratch = Scratch("scenarios")
    data_dir = os.path.join(scratch.path, "data")
    kubeconfig = os.path.join(data_dir, "kubeconfig")
    dev_log = open(os.path.join(scratch.path, "dev.log"), "wb")
    dev = subprocess.Popen([binary, "dev", "--data-dir", data_dir, "--port", "0",
                            "--pod-ready-delay", "100ms"], stdout=subprocess.PIPE, stderr=dev_log)
    gate_off = None

    def kubectl(*args, stdin=None, check=True):
        result = subprocess.run(["kubectl", "--kubeconfig", kubeconfig] + list(args),
                                input=stdin, capture_output=True, text=True, timeout=120)
        if check and result.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(args), result.stderr))
        return result

    def apply(*objects):
        kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                       "items": list(objects)}))

    def namespace(name):
        apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        return name

    def service(ns, name, selector=None, labels=None, annotations=None, **spec):
        body = {"ports": [{"name": "http", "port": 80, "targetPort": "http"}]}
        if selector is not None:
            body["selector"] = selector
        body.update(spec)
        return {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": ns, "labels": labels or {},
                             "annotations": annotations or {}}, "spec": body}

    def pod(ns, name, labels, annotations=None):
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "labels": labels,
                             "annotations": annotations or {}},
                "spec": {"containers": [{"name": "app", "image": "nginx",
                                         "ports": [{"name": "http", "containerPort": 8080}]}]}}

    def slice_object(ns, name, labels, ip="10.99.0.1"):
        return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": name, "namespace": ns, "labels": labels},
                "addressType": "IPv4", "endpoints": [{"addresses": [ip]}],
                "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}

    def get_json(*args):
        result = kubectl("get", *args, "-o", "json", check=False)
        return json.loads(result.stdout) if result.returncode == 0 else None

    def slices(ns, service_name, managed_by=OURS):
        listed = get_json("endpointslices", "-n", ns, "-l",
                          "kubernetes.io/service-name=" + service_name) or {"items": []}
        return [s for s in listed["items"]
                if s["metadata"]["labels"].get("endpointslice.kubernetes.io/managed-by") ==
                managed_by]

    def addresses(ns, service_name, managed_by=OURS, ready_only=True):
        found = []
        for s in slices(ns, service_name, managed_by):
            for endpoint in s.get("endpoints") or []:
                if not ready_only or endpoint.get("conditions", {}).get("ready"):
                    found.extend(endpoint["addresses"])
        return sorted(found)

    def pod_ips(ns, selector):
        listed = get_json("pods", "-n", ns, "-l", selector) or {"items": []}
        return sorted(ip["ip"] for p in listed["items"] for ip in p["status"].get("podIPs") or []
                      if "." in ip["ip"])

    def resource_version(kind, ns, name):
        found = get_json(kind, "-n", ns, name)
        return found["metadata"]["resourceVersion"] if found else None

    sentinels = [0]

    def quiet():
        """Waits until the controllers have handled every change made so far, before a check that
        none of them acted: a sentinel Service (selector, no pods) and a selector-less Service
        with an Endpoints, created now in namespace "quiet", must get their placeholder slice,
        their Endpoints and their mirrored slice. Each informer delivers in order and each work
        queue hands keys out in order, so the controllers took the earlier changes' keys first;
        a dead or stalled controller fails here instead of passing the check after a sleep."""
        sentinels[0] += 1
        name = "sentinel-%d" % sentinels[0]
        apply(service("quiet", name, {"app": name}), service("quiet", name + "-m"),
              endpoints("quiet", name + "-m",
                        [{"addresses": [{"ip": "10.98.0.1"}],
                          "ports": [{"name": "http", "port": 8080}]}]))
        checks.check("sentinel %s handled by every controller" % name, wait_until(
            30, lambda: len(slices("quiet", name)) == 1 and
            get_json("endpoints", "-n", "quiet", name) is not None and
            len(slices("quiet", name + "-m", MIRRORED)) == 1))

    def web_with_pods(ns, count, labels=None, annotations=None):
        apply(service(ns, "web", {"app": "web"}, labels=labels, annotations=annotations),
              *[pod(ns, "web-%d" % i, {"app": "web"}) for i in range(count)])

    # ---- the scenarios ----

    def scenario_43():
        ns = namespace("s43")
        apply(service(ns, "no-selector"),
              service(ns, "external", {"app": "web"}, type="ExternalName",
                      externalName="example.com"),
              pod(ns, "web-0", {"app": "web"}))
        quiet()
        listed = get_json("endpointslices", "-n", ns)
        checks.eq("43: no selector and ExternalName: no slices", listed["items"], [])

    def scenario_44():
        ns = namespace("s44")
        apply(slice_object(ns, "ours-1", {"kubernetes.io/service-name": "web",
                                          "endpointslice.kubernetes.io/managed-by": OURS}),
              slice_object(ns, "ours-2", {"kubernetes.io/service-name": "web",
                                          "endpointslice.kubernetes.io/managed-by": OURS}),
              slice_object(ns, "no-manager", {"kubernetes.io/service-name": "web"}),
              slice_object(ns, "other-service", {"kubernetes.io/service-name": "other",
                                                 "endpointslice.kubernetes.io/managed-by": OURS}),
              slice_object(ns, "foreign", {"kubernetes.io/service-name": "web",
                                           "endpointslice.kubernetes.io/managed-by": "x.example"}))
        foreign = {n: resource_version("endpointslice", ns, n)
                   for n in ("no-manager", "other-service", "foreign")}
        apply(service(ns, "web", {"app": "web"}))

        def settled():
            mine = slices(ns, "web")
            return mine if len(mine) == 1 and not mine[0].get("endpoints") else None

        mine = wait_until(20, settled)
        checks.check("44: one placeholder slice of ours, no endpoints", mine is not None,
                     slices(ns, "web"))
        checks.eq("44: the three foreign slices untouched",
                  {n: resource_version("endpointslice", ns, n) for n in foreign}, foreign)

    def scenario_45():
        ns = namespace("s45")
        held = slice_object(ns, "held", {"kubernetes.io/service-name": "web",
                                         "endpointslice.kubernetes.io/managed-by": OURS})
        held["metadata"]["finalizers"] = ["example.com/hold"]
        apply(held)
        kubectl("delete", "endpointslice", "-n", ns, "held", "--wait=false")
        version = resource_version("endpointslice", ns, "held")
        web_with_pods(ns, 2)
        def published_elsewhere():
            ips = pod_ips(ns, "app=web")
            elsewhere = sorted(a for s in slices(ns, "web") if s["metadata"]["name"] != "held"
                               for e in s.get("endpoints") or [] for a in e["addresses"])
            return len(ips) == 2 and elsewhere == ips

        checks.check("45: the pods are published in another slice",
                     wait_until(20, published_elsewhere), slices(ns, "web"))
        checks.eq("45: the terminating slice is left alone",
                  resource_version("endpointslice", ns, "held"), version)
        kubectl("patch", "endpointslice", "-n", ns, "held", "--type=merge", "-p",
                '{"metadata":{"finalizers":null}}')

    def scenario_47():
        ns = namespace("s47")
        apply(service(ns, "a", {"app": "a"}), service(ns, "b", {"app": "b"}),
              pod(ns, "mover", {"app": "a"}))
        ip = wait_until(20, lambda: pod_ips(ns, "app=a"))
        checks.check("47: the pod is in a's slice",
                     ip and wait_until(20, lambda: addresses(ns, "a") == ip), addresses(ns, "a"))
        kubectl("label", "pod", "-n", ns, "mover", "app=b", "--overwrite")
        checks.check("47: relabelled, it moves to b's slice",
                     wait_until(20, lambda: addresses(ns, "b") == ip and addresses(ns, "a") == []),
                     addresses(ns, "a"), addresses(ns, "b"))

    def endpoints(ns, name, subsets, labels=None):
        return {"apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
                "subsets": subsets}

    def scenario_48_to_53():
        ns = namespace("s48")
        apply(service(ns, "empty"), endpoints(ns, "empty", []),
              service(ns, "no-addresses"),
              endpoints(ns, "no-addresses", [{"ports": [{"name": "http", "port": 8080}]}]))
        quiet()
        checks.eq("48: no subsets or no addresses: nothing mirrored",
                  slices(ns, "empty", MIRRORED) + slices(ns, "no-addresses", MIRRORED), [])

        two_subsets = [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
             "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]},
            {"addresses": [{"ip": "10.0.1.1"}, {"ip": "10.0.1.2"}, {"ip": "10.0.1.3"}],
             "ports": [{"name": "a", "port": 3000}, {"name": "b", "port": 3001}]},
        ]
        apply(service(ns, "mirrored"), endpoints(ns, "mirrored", two_subsets))
        checks.check("49: two subsets mirrored as two slices, five endpoints",
                     wait_until(20, lambda: len(slices(ns, "mirrored", MIRRORED)) == 2 and
                                len(addresses(ns, "mirrored", MIRRORED)) == 5),
                     slices(ns, "mirrored", MIRRORED))
        two_subsets[0]["addresses"] = [{"ip": "10.0.0.2"}, {"ip": "10.0.0.3"}]
        apply(endpoints(ns, "mirrored", two_subsets))
        checks.check("50: a changed subset updates its slice",
                     wait_until(20, lambda: addresses(ns, "mirrored", MIRRORED) ==
                                ["10.0.0.2", "10.0.0.3", "10.0.1.1", "10.0.1.2", "10.0.1.3"]),
                     addresses(ns, "mirrored", MIRRORED))
        checks.eq("50: still two slices", len(slices(ns, "mirrored", MIRRORED)), 2)

        kubectl("label", "endpoints", "-n", ns, "mirrored",
                "endpointslice.kubernetes.io/skip-mirror=true")
        checks.check("53: skip-mirror deletes the mirrored slices",
                     wait_until(20, lambda: slices(ns, "mirrored", MIRRORED) == []))
        kubectl("label", "endpoints", "-n", ns, "mirrored",
                "endpointslice.kubernetes.io/skip-mirror-")
        checks.check("53: unlabelled, mirrored again",
                     wait_until(20, lambda: len(slices(ns, "mirrored", MIRRORED)) == 2))
        kubectl("patch", "service", "-n", ns, "mirrored", "--type=merge", "-p",
                '{"spec":{"selector":{"app":"nothing"}}}')
        checks.check("53: a Service that gains a selector is no longer mirrored",
                     wait_until(20, lambda: slices(ns, "mirrored", MIRRORED) == []))
        apply(endpoints(ns, "orphan", two_subsets))
        quiet()
        checks.eq("53: Endpoints without a Service: nothing mirrored",
                  slices(ns, "orphan", MIRRORED), [])

    def scenario_54():
        ns = namespace("s54")
        apply(service(ns, "big", {"app": "big"}),
              *[pod(ns, "big-%d" % i, {"app": "big"}) for i in range(1001)])

        last_seen = [None]

        def counted():
            found = get_json("endpoints", "-n", ns, "big")
            if not found:
                return None
            ready = sum(len(s.get("addresses") or []) for s in found.get("subsets") or [])
            annotation = found["metadata"].get("annotations", {}).get(
                "endpoints.kubernetes.io/over-capacity")
            last_seen[0] = (ready, annotation)
            # While pods come up there is a moment with exactly 1,000 addressed pods and no
            # truncation yet; the state to reach is all 1,001 addressed, 1,000 kept.
            return last_seen[0] if last_seen[0] == (1000, "truncated") else None

        got = wait_until(90, counted, interval=0.5)
        checks.eq("54: 1,001 ready pods: 1,000 addresses, over-capacity truncated",
                  got or last_seen[0], (1000, "truncated"))
        kubectl("delete", "pod", "-n", ns, "big-1000", "--grace-period=0", "--force")

        def annotation_gone():
            found = get_json("endpoints", "-n", ns, "big")
            return found and "endpoints.kubernetes.io/over-capacity" not in (
                found["metadata"].get("annotations") or {})

        checks.check("54: back to 1,000: the annotation is removed",
                     wait_until(60, annotation_gone, interval=0.5))
        kubectl("delete", "namespace", ns, "--wait=false")

    def scenario_55():
        ns = namespace("s55")
        web_with_pods(ns, 2, labels={LABEL: "multus"})
        wait_until(20, lambda: len(pod_ips(ns, "app=web")) == 2)
        quiet()
        checks.eq("55: labelled multus: no slices of ours", slices(ns, "web"), [])
        checks.eq("55: labelled multus: no Endpoints", get_json("endpoints", "-n", ns, "web"), None)

    def scenario_56_57_59():
        ns = namespace("s56")
        web_with_pods(ns, 2)
        apply(slice_object(ns, "theirs", {"kubernetes.io/service-name": "web",
                                          "endpointslice.kubernetes.io/managed-by": "x.example"}))
        checks.check("56: unlabelled: slices of ours",
                     wait_until(20, lambda: len(addresses(ns, "web")) == 2), slices(ns, "web"))
        checks.check("56: unlabelled: Endpoints", wait_until(
            20, lambda: get_json("endpoints", "-n", ns, "web") is not None))
        theirs = resource_version("endpointslice", ns, "theirs")
        kubectl("label", "service", "-n", ns, "web", LABEL + "=a")
        checks.check("56: labelled: our slices deleted",
                     wait_until(20, lambda: slices(ns, "web") == []), slices(ns, "web"))
        checks.check("56: labelled: our Endpoints deleted",
                     wait_until(20, lambda: get_json("endpoints", "-n", ns, "web") is None))
        checks.eq("56: the other manager's slice untouched",
                  resource_version("endpointslice", ns, "theirs"), theirs)

        kubectl("label", "service", "-n", ns, "web", LABEL + "=b", "--overwrite")
        quiet()
        checks.eq("59: value a -> b: still nothing of ours", slices(ns, "web"), [])
        checks.eq("59: the other manager's slice still untouched",
                  resource_version("endpointslice", ns, "theirs"), theirs)

        kubectl("label", "service", "-n", ns, "web", LABEL + "-")
        checks.check("57: unlabelled again: slices recreated",
                     wait_until(20, lambda: len(addresses(ns, "web")) == 2), slices(ns, "web"))
        apply(service(ns, "lonely", {"app": "nobody"}, labels={LABEL: "a"}))
        quiet()
        kubectl("label", "service", "-n", ns, "lonely", LABEL + "-")

        def placeholder():
            found = slices(ns, "lonely")
            return len(found) == 1 and not found[0].get("endpoints")

        checks.check("57: unlabelled without pods: a placeholder slice",
                     wait_until(20, placeholder), slices(ns, "lonely"))

    def scenario_58():
        nonlocal gate_off
        ns = namespace("s58")
        gate_off = subprocess.Popen(
            [binary, "controller-manager", "--kubeconfig", kubeconfig, "--controllers",
             "endpointslice", "--controller-name", GATE_OFF, "--feature-gates",
             "ExternalEndpointController=false", "--port", "-1"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(scratch.path, "gate-off.log"),
                                                   "wb"))
        apply(service(ns, "labelled", {"app": "web"}, labels={LABEL: "multus"}),
              service(ns, "plain", {"app": "web"}),
              *[pod(ns, "web-%d" % i, {"app": "web"}) for i in range(3)])

        def shape(found):
            return sorted((s["addressType"], json.dumps(s.get("ports"), sort_keys=True),
                           json.dumps(sorted(e["addresses"][0] for e in s.get("endpoints") or []))
                           ) for s in found)

        def same():
            labelled = slices(ns, "labelled", GATE_OFF)
            plain = slices(ns, "plain", GATE_OFF)
            return labelled and len(addresses(ns, "plain", GATE_OFF)) == 3 and \
                shape(labelled) == shape(plain)

        checks.check("58: gate off: a labelled Service gets slices exactly as an unlabelled one",
                     wait_until(30, same), slices(ns, "labelled", GATE_OFF),
                     slices(ns, "plain", GATE_OFF))
        checks.eq("58: gate on (dev's controller) still leaves the labelled one alone",
                  slices(ns, "labelled"), [])

    def scenario_60():
        ns = namespace("s60")
        apply({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "storage", "namespace": ns, "labels": {LABEL: MULTINETWORK},
                            "annotations": {"k8s.v1.cni.cncf.io/service-network": "storage"}},
               "spec": {"selector": {"app": "storage"},
                        "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}},
              *[pod(ns, "storage-%d" % i, {"app": "storage"},
                    {"k8s.v1.cni.cncf.io/networks": "storage"}) for i in range(2)])
        checks.check("60: two endpoints on the storage network",
                     wait_until(20, lambda: len(addresses(ns, "storage", MULTINETWORK)) == 2),
                     slices(ns, "storage", MULTINETWORK))
        found = slices(ns, "storage", MULTINETWORK)
        svc = get_json("service", "-n", ns, "storage")
        checks.check("60: service-name label and the Service ownerReference",
                     found and all(s["metadata"]["labels"].get("kubernetes.io/service-name") ==
                                   "storage" and
                                   [o.get("uid") for o in s["metadata"].get("ownerReferences", [])]
                                   == [svc["metadata"]["uid"]] for s in found), found)
        checks.check("60: only secondary IPs",
                     not set(addresses(ns, "storage", MULTINETWORK)) &
                     set(pod_ips(ns, "app=storage")),
                     addresses(ns, "storage", MULTINETWORK), pod_ips(ns, "app=storage"))
        versions = sorted(s["metadata"]["resourceVersion"] for s in found)
        quiet()
        checks.eq("60: the default controller writes nothing for it", slices(ns, "storage"), [])
        checks.eq("60: nobody rewrites its slices",
                  sorted(s["metadata"]["resourceVersion"]
                         for s in slices(ns, "storage", MULTINETWORK)), versions)

    failed = True
    try:
        buffer = b""
        deadline = time.monotonic() + 20 * e2e_server.SLOW
        while b"kubeconfig written" not in buffer and time.monotonic() < deadline:
            ready, _, _ = select.select([dev.stdout], [], [], 0.5)
            if ready:
                chunk = os.read(dev.stdout.fileno(), 4096)
                if not chunk:
                    break
                buffer += chunk
        if not checks.check("slicewright dev is up", b"kubeconfig written" in buffer, buffer):
            return
        wait_until(10, lambda: kubectl("get", "nodes", check=False).returncode == 0)
        namespace("quiet")
        for name, scenario in [("43", scenario_43), ("44", scenario_44), ("45", scenario_45),
                               ("47", scenario_47), ("48-53", scenario_48_to_53),
                               ("54", scenario_54), ("55", scenario_55),
                               ("56, 57, 59", scenario_56_57_59), ("58", scenario_58),
                               ("60", scenario_60)]:
            started = time.monotonic()
            checks.run(name, scenario)
            print("     (scenario %s: %.1f s)" % (name, time.monotonic() - started), flush=True)
    finally:
        for process in (gate_off, dev):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=20 * e2e_server.SLOW)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        failed = checks.finish()
        if failed:
            with open(os.path.join(scratch.path, "dev.log"), "rb") as f:
                print(f.read().decode(errors="replace")[-4000:])
        scratch.cleanup(failed)
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
