"""The endpoint scenarios the real-cluster tests drive, as lists of API steps (endpoint_harness.Api
ops) per phase: each named case lives in its own namespace; phase N of every case is applied,
the controllers settle, the clusters are compared, then phase N+1. The same steps go to every
cluster, so two clusters that run different controllers can be compared object for object.
Plus a seeded random part (`random_phases`) whose size is a parameter.
"""

import random

from endpoint_harness import (LABEL_CONTROLLER_NAME, LABEL_SKIP_MIRROR, NETWORK_STATUS,
                              SERVICE_NETWORK, endpoints, namespace, node, pod, pod_ops,
                              ready_op, service)

NODES = [node("node-a", "zone-a", "10.0.0.1"), node("node-b", "zone-b", "10.0.0.2"),
         node("node-c", "zone-c", "10.0.0.3")]
NODE_ZONES = {"node-a": "zone-a", "node-b": "zone-b", "node-c": "zone-c"}
NODE_IPS = {"node-a": "10.0.0.1", "node-b": "10.0.0.2", "node-c": "10.0.0.3"}
NODE_NAMES = ["node-a", "node-b", "node-c"]

# Namespaces whose Services are handed to another controller (KEP-4770): compared by what each
# side should do, not for equality (differential_test.py).
HANDED = "handed"


def ipv4(block, i):
    return "10.%d.%d.%d" % (block, i // 250, i % 250 + 1)


def ipv6(block, i):
    return "fd00:%x::%x" % (block, i + 1)


class Case:
    """A named scenario: its namespace and, per phase, the steps."""

    def __init__(self, name, phases, note=""):
        self.name = name
        self.namespace = name
        self.phases = phases
        self.note = note

    def ops(self, phase):
        if phase >= len(self.phases):
            return []
        return self.phases[phase]()


def web_pods(ns, count, block, dual=False, ready=lambda i: True, labels=None, start=0,
             ports=(("http", 8080, "TCP"),), prefix="web"):
    ops = []
    for i in range(start, start + count):
        node_name = NODE_NAMES[i % 3]
        ips = [ipv4(block, i)] + ([ipv6(block, i)] if dual else [])
        ops += pod_ops(pod(ns, "%s-%d" % (prefix, i), labels or {"app": "web"}, node_name,
                           ports=ports), ips, ready(i), host_ip=NODE_IPS[node_name])
    return ops


def dual_stack_case():
    ns = "dual"

    def one():
        return [("create", namespace(ns)),
                ("create", service(ns, "web", {"app": "web"}, ipFamilyPolicy="RequireDualStack")),
                ("create", service(ns, "v6", {"app": "web"}, ipFamilyPolicy="SingleStack",
                                   ipFamilies=["IPv6"])),
                ("create", service(ns, "prefer", {"app": "web"},
                                   ipFamilyPolicy="PreferDualStack", ipFamilies=["IPv6", "IPv4"]))
                ] + web_pods(ns, 4, 20, dual=True, ready=lambda i: i != 3) + \
            pod_ops(pod(ns, "v4-only", {"app": "web"}, "node-b"), ["10.21.0.1"])

    def two():
        return [ready_op(ns, "web-1", [ipv4(20, 1), ipv6(20, 1)], False),
                ("delete", "Pod", ns, "web-0")] + \
            pod_ops(pod(ns, "v6-only", {"app": "web"}, "node-c"), ["fd00:21::1"])

    return Case("dual", [one, two])


def ports_case():
    ns = "ports"
    ports = [{"name": "http", "port": 80, "targetPort": "http"},
             {"name": "metrics", "port": 9090, "targetPort": 9090, "appProtocol": "http"},
             {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": "dns"}]

    def one():
        ops = [("create", namespace(ns)),
               ("create", service(ns, "multi", {"app": "web"}, ports=ports))]
        for i in range(3):
            ops += pod_ops(pod(ns, "a-%d" % i, {"app": "web"}, NODE_NAMES[i],
                               ports=(("http", 8080, "TCP"), ("dns", 5353, "UDP"))),
                           [ipv4(30, i)], host_ip=NODE_IPS[NODE_NAMES[i]])
            ops += pod_ops(pod(ns, "b-%d" % i, {"app": "web"}, NODE_NAMES[i],
                               ports=(("http", 8081, "TCP"),)), [ipv4(30, 10 + i)])
        # http only on a sidecar (a restartable init container), and a pod where both have it.
        ops += pod_ops(pod(ns, "sidecar", {"app": "web"}, "node-a", ports=(),
                           sidecar_ports=(("http", 8082, "TCP"),)), [ipv4(30, 20)])
        ops += pod_ops(pod(ns, "both", {"app": "web"}, "node-b",
                           ports=(("http", 8090, "TCP"),),
                           sidecar_ports=(("http", 8091, "TCP"),)), [ipv4(30, 21)])
        # The name with the wrong protocol does not match.
        ops += pod_ops(pod(ns, "wrong-proto", {"app": "web"}, "node-c",
                           ports=(("http", 8080, "UDP"),)), [ipv4(30, 22)])
        return ops

    def two():
        return [("patch", "Service", ns, "multi", {"spec": {"ports": [
            {"name": "http", "port": 80, "targetPort": 8080},
            {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": "dns"}]}})]

    return Case("ports", [one, two])


def not_ready_case():
    ns = "notready"

    def one():
        ops = [("create", namespace(ns)),
               ("create", service(ns, "pnr", {"app": "web"}, publishNotReadyAddresses=True)),
               ("create", service(ns, "plain", {"app": "web"}))]
        ops += web_pods(ns, 4, 40, ready=lambda i: i % 2 == 0)
        ops += pod_ops(pod(ns, "pending", {"app": "web"}, "node-a"), [ipv4(41, 1)], ready=False,
                       phase="Pending")
        ops += pod_ops(pod(ns, "failed", {"app": "web"}, "node-a"), [ipv4(41, 2)], ready=False,
                       phase="Failed")
        ops += pod_ops(pod(ns, "succeeded", {"app": "web"}, "node-a"), [ipv4(41, 3)],
                       ready=False, phase="Succeeded")
        ops += pod_ops(pod(ns, "no-ip", {"app": "web"}, "node-a"), [], ready=False,
                       phase="Pending")
        return ops

    def two():
        return [("terminate", ns, "web-0"), ("terminate", ns, "web-1")]

    return Case("notready", [one, two])


def many_case(count):
    ns = "many"

    def one():
        return [("create", namespace(ns)), ("create", service(ns, "web", {"app": "web"}))] + \
            web_pods(ns, count, 50, ready=lambda i: i % 7 != 0)

    def two():
        ops = [("delete", "Pod", ns, "web-%d" % i) for i in range(0, count, 9)]
        ops += [ready_op(ns, "web-%d" % i, [ipv4(50, i)], i % 7 == 0)
                for i in range(1, count, 11) if i % 9 != 0]
        ops += web_pods(ns, count // 6, 50, start=count)
        return ops

    return Case("many", [one, two])


def terminating_case():
    ns = "terminating"

    def one():
        return [("create", namespace(ns)), ("create", service(ns, "web", {"app": "web"}))] + \
            web_pods(ns, 4, 60, dual=False, ready=lambda i: i < 2)

    def two():
        return [("terminate", ns, "web-%d" % i) for i in range(3)]

    def three():
        return [ready_op(ns, "web-0", [ipv4(60, 0)], False)]

    return Case("terminating", [one, two, three])


def headless_case():
    ns = "headless"

    def one():
        ops = [("create", namespace(ns)),
               ("create", service(ns, "db", {"app": "db"}, clusterIP="None")),
               ("create", service(ns, "bare", {"app": "db"}, ports=[], clusterIP="None"))]
        for i in range(3):
            ops += pod_ops(pod(ns, "db-%d" % i, {"app": "db"}, NODE_NAMES[i], hostname="db-%d" % i,
                               subdomain="db"), [ipv4(70, i), ipv6(70, i)], ready=i != 2)
        # A hostname whose subdomain names another Service is not published.
        ops += pod_ops(pod(ns, "other", {"app": "db"}, "node-a", hostname="other",
                           subdomain="elsewhere"), [ipv4(70, 10)])
        # hostNetwork pods: the node's address, shared.
        for i in range(2):
            ops += pod_ops(pod(ns, "hostnet-%d" % i, {"app": "db"}, "node-a", host_network=True),
                           ["10.0.0.1"])
        return ops

    return Case("headless", [one])


def mirroring_case(big):
    ns = "mirror"
    subsets = [
        {"addresses": [{"ip": "10.80.0.1", "hostname": "a", "nodeName": "node-a"},
                       {"ip": "10.80.0.2"}, {"ip": "fd00:80::1"}],
         "notReadyAddresses": [{"ip": "10.80.0.3"}],
         "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443,
                                                  "appProtocol": "https"}]},
        {"addresses": [{"ip": "10.80.1.1"}, {"ip": "10.80.1.2", "targetRef": {
            "kind": "Pod", "namespace": ns, "name": "somewhere", "uid": "1234"}}],
         "ports": [{"name": "a", "port": 3000}, {"name": "b", "port": 3001, "protocol": "UDP"}]},
    ]

    def one():
        ops = [("create", namespace(ns)),
               ("create", service(ns, "ext", ports=[{"name": "http", "port": 80}])),
               ("create", endpoints(ns, "ext", subsets, labels={"team": "x"},
                                    annotations={"note": "copied",
                                                 "endpoints.kubernetes.io/last-change-trigger-time":
                                                     "2026-01-01T00:00:00Z"})),
               ("create", service(ns, "skipped", ports=[{"name": "http", "port": 80}])),
               ("create", endpoints(ns, "skipped", subsets[:1],
                                    labels={LABEL_SKIP_MIRROR: "true"})),
               ("create", service(ns, "empty", ports=[{"name": "http", "port": 80}])),
               ("create", endpoints(ns, "empty", [])),
               ("create", endpoints(ns, "orphan", subsets[:1])),
               # Labelled as the Endpoints controller labels its own (Kubernetes 1.33+): still
               # mirrored, label copied.
               ("create", service(ns, "labelled", ports=[{"name": "http", "port": 80}])),
               ("create", endpoints(ns, "labelled", subsets[:1], labels={
                   "endpoints.kubernetes.io/managed-by": "endpoint-controller"})),
               # An invalid address is skipped.
               ("create", service(ns, "invalid", ports=[{"name": "http", "port": 80}])),
               ("create", endpoints(ns, "invalid", [{"addresses": [
                   {"ip": "10.80.2.1"}, {"ip": "010.080.002.004"}],
                   "ports": [{"name": "http", "port": 80}]}])),
               ("create", service(ns, "gains-selector", ports=[{"name": "http", "port": 80}])),
               ("create", endpoints(ns, "gains-selector", subsets[:1]))]
        # Past 1,000 addresses: a subset is mirrored up to 1,000.
        ops += [("create", service(ns, "big", ports=[{"name": "http", "port": 80}])),
                ("create", endpoints(ns, "big", [
                    {"addresses": [{"ip": ipv4(81, i)} for i in range(big)],
                     "ports": [{"name": "http", "port": 80}]},
                    {"addresses": [{"ip": ipv4(82, i)} for i in range(5)],
                     "ports": [{"name": "other", "port": 81}]}]))]
        return ops

    def two():
        changed = [dict(subsets[0], addresses=[{"ip": "10.80.0.2"}, {"ip": "10.80.0.9"}]),
                   subsets[1]]
        return [("patch", "Endpoints", ns, "ext", {"subsets": changed,
                                                  "metadata": {"labels": {"team": "y"}}}),
                ("patch", "Endpoints", ns, "skipped", {"metadata": {"labels": {
                    LABEL_SKIP_MIRROR: None}}}),
                ("patch", "Service", ns, "gains-selector", {"spec": {"selector": {"app": "x"}}})]

    return Case("mirror", [one, two])


def changes_case():
    ns = "changes"

    def one():
        ops = [("create", namespace(ns)),
               ("create", service(ns, "selector", {"app": "a"})),
               ("create", service(ns, "ports", {"app": "a"})),
               ("create", service(ns, "type", {"app": "a"})),
               ("create", service(ns, "loses-selector", {"app": "a"})),
               ("create", service(ns, "external", type="ExternalName",
                                  externalName="example.com", ports=[])),
               ("create", service(ns, "no-selector-no-endpoints")),
               ("create", service(ns, "no-pods", {"app": "nothing"})),
               ("create", service(ns, "labelled", {"app": "a"}, labels={"tier": "front"}))]
        ops += web_pods(ns, 3, 90, labels={"app": "a"}, prefix="a")
        ops += web_pods(ns, 2, 91, labels={"app": "b"}, prefix="b")
        return ops

    def two():
        return [("patch", "Service", ns, "selector", {"spec": {"selector": {"app": "b"}}}),
                ("patch", "Service", ns, "ports", {"spec": {"ports": [
                    {"name": "http", "port": 80, "targetPort": 8080},
                    {"name": "alt", "port": 81, "targetPort": "http"}]}}),
                ("patch", "Service", ns, "type", {"spec": {"type": "NodePort"}}),
                ("patch", "Service", ns, "labelled", {"metadata": {"labels": {
                    "tier": "back", "extra": "1"}}}),
                # The pods move: one relabelled, one gone, one new.
                ("patch", "Pod", ns, "a-0", {"metadata": {"labels": {"app": "b"}}}),
                ("delete", "Pod", ns, "a-1")] + \
            web_pods(ns, 1, 92, labels={"app": "a"}, prefix="c")

    def three():
        return [("patch", "Service", ns, "type", {"spec": {
            "type": "ExternalName", "externalName": "example.com", "clusterIP": None,
            "clusterIPs": None, "ipFamilies": None, "ipFamilyPolicy": None,
            "internalTrafficPolicy": None, "externalTrafficPolicy": None, "ports": None}}),
                ("patch", "Service", ns, "loses-selector", {"spec": {"selector": None}})]

    return Case("changes", [one, two, three])


def no_node_case():
    ns = "nonode"

    def one():
        ops = [("create", namespace(ns)),
               ("create", service(ns, "web", {"app": "web"})),
               ("create", service(ns, "pnr", {"app": "web"}, publishNotReadyAddresses=True))]
        ops += pod_ops(pod(ns, "here", {"app": "web"}, "node-a"), [ipv4(100, 1)])
        ops += pod_ops(pod(ns, "ghost", {"app": "web"}, "ghost-node"), [ipv4(100, 2)])
        return ops

    return Case("nonode", [one])


def topology_case():
    ns = "topology"

    def one():
        ops = [("create", namespace(ns)),
               ("create", service(ns, "close", {"app": "web"}, trafficDistribution="PreferClose")),
               ("create", service(ns, "auto", {"app": "web"},
                                  annotations={"service.kubernetes.io/topology-mode": "Auto"}))]
        ops += web_pods(ns, 9, 110)
        return ops

    def two():
        return [("patch", "Service", ns, "close", {"spec": {"trafficDistribution": None}}),
                ("patch", "Service", ns, "auto", {"metadata": {"annotations": {
                    "service.kubernetes.io/topology-mode": None}}})]

    return Case("topology", [one, two])


def handed_case():
    """KEP-4770: "handed" is labelled from the start, "later" gains the label in phase two and
    loses it in phase three; "plain" is its unlabelled twin."""
    ns = HANDED

    def one():
        ops = [("create", namespace(ns)),
               ("create", service(ns, "plain", {"app": "web"})),
               ("create", service(ns, "handed", {"app": "web"},
                                  labels={LABEL_CONTROLLER_NAME: "other.example.com"})),
               ("create", service(ns, "later", {"app": "web"}))]
        return ops + web_pods(ns, 3, 120, ready=lambda i: i != 2)

    def two():
        return [("patch", "Service", ns, "later", {"metadata": {"labels": {
            LABEL_CONTROLLER_NAME: "other.example.com"}}})]

    def three():
        return [("patch", "Service", ns, "later", {"metadata": {"labels": {
            LABEL_CONTROLLER_NAME: None}}})]

    return Case(HANDED, [one, two, three])


def multinetwork_case():
    """docs/custom-controllers.md's multi-network controller: pods' addresses on the Service's
    network, from Multus' network-status annotation."""
    ns = "multinet"

    def status(i):
        return ('[{"name":"default-net","interface":"eth0","ips":["%s"],"default":true},'
                '{"name":"%s/storage","interface":"net1","ips":["10.130.0.%d"]}]'
                % (ipv4(130, i), ns, i + 1))

    def one():
        ops = [("create", namespace(ns)),
               ("create", service(ns, "storage", {"app": "storage"},
                                  labels={LABEL_CONTROLLER_NAME: "multinetwork.slicewright.io"},
                                  annotations={SERVICE_NETWORK: "storage"}))]
        for i in range(3):
            ops += pod_ops(pod(ns, "storage-%d" % i, {"app": "storage"}, NODE_NAMES[i],
                               annotations={NETWORK_STATUS: status(i),
                                            "k8s.v1.cni.cncf.io/networks": "storage"}),
                           [ipv4(131, i)], ready=i != 2)
        return ops

    return Case("multinet", [one])


def over_capacity_case(count):
    """More pods than an Endpoints holds (1,000): truncated and annotated over-capacity; then
    back under it."""
    ns = "capacity"

    def one():
        return [("create", namespace(ns)), ("create", service(ns, "web", {"app": "web"}))] + \
            web_pods(ns, count, 150, ready=lambda i: i % 10 != 0)

    def two():
        return [("delete", "Pod", ns, "web-%d" % i) for i in range(count - 1, 950, -1)]

    return Case("capacity", [one, two])


def named_cases(big_pods=250, mirrored_addresses=1050, over_capacity=0):
    cases = [dual_stack_case(), ports_case(), not_ready_case(), many_case(big_pods),
             terminating_case(), headless_case(), mirroring_case(mirrored_addresses),
             changes_case(), no_node_case(), topology_case(), handed_case()]
    if over_capacity:
        cases.append(over_capacity_case(over_capacity))
    return cases


# ---- the seeded random part ----

def random_phases(seed, operations, phases=2):
    """`operations` random steps per phase over a pool of Services and pods in namespace
    "random": Services with random selectors, ports (named or numbered, sometimes several),
    publishNotReadyAddresses, headless or dual-stack, changed later; pods with random labels,
    nodes, IP families, readiness, created, relabelled, flipped, terminated or deleted."""
    rng = random.Random(seed)
    ns = "random"
    apps = ["a", "b", "c"]
    pods = {}  # name -> (ips, ready, alive)
    services = set()
    counter = [0]
    port_choices = [
        [{"name": "http", "port": 80, "targetPort": "http"}],
        [{"name": "http", "port": 80, "targetPort": 8080}],
        [{"name": "http", "port": 80, "targetPort": "http"},
         {"name": "grpc", "port": 9000, "targetPort": "grpc"}],
        [{"name": "", "port": 80, "targetPort": 8081}],
    ]

    def new_service():
        name = "svc-%d" % len(services)
        services.add(name)
        spec = {}
        if rng.random() < 0.2:
            spec["publishNotReadyAddresses"] = True
        if rng.random() < 0.2:
            spec["clusterIP"] = "None"
        if rng.random() < 0.3:
            spec["ipFamilyPolicy"] = "RequireDualStack"
        ports = rng.choice(port_choices)
        if len(ports) == 1 and ports[0]["name"] == "" and spec.get("clusterIP") == "None":
            ports = port_choices[0]
        return ("create", service(ns, name, {"app": rng.choice(apps)}, ports=ports, **spec))

    def new_pod():
        counter[0] += 1
        name = "p-%d" % counter[0]
        family = rng.choice(["v4", "v4", "dual", "v6"])
        ips = {"v4": [ipv4(140, counter[0])], "v6": [ipv6(140, counter[0])],
               "dual": [ipv4(140, counter[0]), ipv6(140, counter[0])]}[family]
        ready = rng.random() < 0.8
        pods[name] = (ips, ready)
        ports = [("http", rng.choice([8080, 8081]), "TCP")]
        if rng.random() < 0.5:
            ports.append(("grpc", 9000, "TCP"))
        node_name = rng.choice(NODE_NAMES)
        return pod_ops(pod(ns, name, {"app": rng.choice(apps)}, node_name, ports=tuple(ports)),
                       ips, ready, host_ip={"node-a": "10.0.0.1", "node-b": "10.0.0.2",
                                            "node-c": "10.0.0.3"}[node_name])

    def step():
        roll = rng.random()
        if roll < 0.08 or not services:
            return [new_service()]
        if roll < 0.45 or not pods:
            return new_pod()
        name = rng.choice(sorted(pods))
        ips, ready = pods[name]
        if roll < 0.6:
            pods[name] = (ips, not ready)
            return [ready_op(ns, name, ips, not ready)]
        if roll < 0.7:
            return [("patch", "Pod", ns, name, {"metadata": {"labels": {"app": rng.choice(apps)}}})]
        if roll < 0.8:
            del pods[name]
            return [("delete", "Pod", ns, name)]
        if roll < 0.85:
            del pods[name]
            return [("terminate", ns, name)]
        svc = rng.choice(sorted(services))
        if roll < 0.93:
            return [("patch", "Service", ns, svc,
                     {"spec": {"selector": {"app": rng.choice(apps)}}})]
        return [("patch", "Service", ns, svc, {"spec": {"ports": rng.choice(port_choices[:3])}})]

    out = []
    for phase in range(phases):
        ops = [("create", {"apiVersion": "v1", "kind": "Namespace",
                           "metadata": {"name": ns}})] if phase == 0 else []
        for _ in range(operations):
            ops += step()
        out.append(ops)
    return out
