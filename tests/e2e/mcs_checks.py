"""The Multi-Cluster Services checks of mcs_test.py, run against any ClusterSet: `slicewright dev
--clusters 2` (tests/e2e/mcs_test.py) and a real one, upstream kube-apiservers set up as
deploy/mcs/README.md says (tests/realcluster/mcs_test.py). The API-level behaviour of the mcs-api
conformance suite (spec §12.2, with its timeouts: 20 s for an import or a condition, 5 s
"consistently"): a ClusterIP export becomes a ClusterSetIP import in every cluster with the
Service's ports, session affinity, internal traffic policy, traffic distribution and one IP per
family (T4-T9), exports from two clusters merge ports and raise Conflict on both (T10, T11), the
import lives as long as one export does (T1), headless exports (T12, T13), conflicting headlessness
(T15), ExternalName and missing Services (T14, NoService), exported labels and annotations (T2);
status.clusters, Ready, NoConflicts and endpointSliceObjects always set (KEP obligations); MCS
EndpointSlices (T16); clusterset.local DNS with the real dig against each member's resolver
(T22-T27, D1-D9: check_dns); examples/mcs and `slicewright explain serviceimport`; bad records and
flags.

Each check takes `cs`, the ClusterSet, and `checks` (e2e_server.Checks). What a ClusterSet gives:
    clusters                 the members' names, which are their kubeconfig contexts (two)
    kubeconfig               one kubeconfig: a context per member and `broker`, as administrators
    binary                   the slicewright binary
    resolvers                {member: "127.0.0.1:PORT"}, its clusterset.local DNS
    kubectl(context, *args, stdin=None, check=True) -> subprocess.CompletedProcess
    set_pod_ready(context, namespace, pod, ready)   a running pod's readiness, as its kubelet
    agents_running() -> bool
    agent_log(member) -> str  everything that member's agent logged
    ip_families(member) -> [...]  the families its API server gives Services, primary first
Pods of Deployments and StatefulSets must run with an address per family of their cluster (a pod
simulator, or a kubelet), with addresses unique in the ClusterSet; every member dual-stack, IPv4
primary (the DNS checks want two ClusterSetIPs).
"""

import json
import os
import re
import shutil
import socket
import subprocess
import time

from e2e_server import dig, wait_until

IMPORT_WAIT = 20  # wait_until scales it by E2E_SLOW
CONSISTENTLY = 5


def delete_lease_after_renewal(cs, checks, cluster):
    """Deletes `cluster`'s Lease on the broker just after the cluster renewed it, so that its next
    renewal (a third of the lease duration later) does not re-create the Lease before the other
    members have judged it gone: deleted at a random moment, it was sometimes back within 32 ms."""
    def renew_time():
        result = cs.kubectl("broker", "get", "lease", "mcs-" + cluster, "-n", "slicewright-mcs",
                         "-o", "jsonpath={.spec.renewTime}", check=False)
        return result.stdout if result.returncode == 0 else None
    renewed_at = renew_time()
    checks.check(cluster + " renews its Lease",
                 wait_until(IMPORT_WAIT, lambda: renew_time() not in (renewed_at, None)),
                 renewed_at)
    cs.kubectl("broker", "delete", "lease", "mcs-" + cluster, "-n", "slicewright-mcs")


def check_services(cs, checks):
    """Spec §12.2 T1-T15 at the API level, plus the KEP's conditions."""
    def apply(context, obj):
        cs.kubectl(context, "apply", "-f", "-", stdin=json.dumps(obj))

    def get(context, kind, name, ns="mcs-e2e"):
        result = cs.kubectl(context, "get", kind, name, "-n", ns, "-o", "json", check=False)
        return json.loads(result.stdout) if result.returncode == 0 else None

    def condition(obj, kind):
        for c in ((obj or {}).get("status") or {}).get("conditions") or []:
            if c["type"] == kind:
                return c
        return None

    def service(name, ports, **spec):
        body = {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": "mcs-e2e",
                             "labels": {"dummy-svc": "dummy"},
                             "annotations": {"dummy-svc": "dummy"}},
                "spec": {"selector": {"app": name}, "ports": ports}}
        body["spec"].update(spec)
        return body

    def export(name, **spec):
        return {"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
                "metadata": {"name": name, "namespace": "mcs-e2e"}, "spec": spec}

    def ports_of(obj):
        return sorted((p.get("name", ""), p.get("protocol", "TCP"), p["port"])
                      for p in obj["spec"]["ports"])

    tcp42 = {"name": "tcp", "protocol": "TCP", "port": 42}
    udp42 = {"name": "udp", "protocol": "UDP", "port": 42}
    for context in cs.clusters:
        cs.kubectl(context, "create", "namespace", "mcs-e2e")

    # T4-T9: a ClusterIP Service exported from cluster-1, backed by one pod there.
    cs.kubectl("cluster-1", "create", "deployment", "hello", "--image=alpine/socat:1.7.4.4",
               "--replicas=1", "-n", "mcs-e2e")
    hello = service("hello", [tcp42, udp42], sessionAffinity="ClientIP",
                    sessionAffinityConfig={"clientIP": {"timeoutSeconds": 10}},
                    internalTrafficPolicy="Cluster", trafficDistribution="PreferClose",
                    ipFamilyPolicy="PreferDualStack")
    applied = cs.kubectl("cluster-1", "apply", "-f", "-", stdin=json.dumps(hello), check=False)
    traffic_distribution = True
    if applied.returncode != 0 and 'unknown field "spec.trafficDistribution"' in applied.stderr:
        # Kubernetes before 1.30 has no Service trafficDistribution: T7 cannot be asked there.
        print("note: cluster-1's API server does not know spec.trafficDistribution: T7 skipped",
              flush=True)
        traffic_distribution = False
        del hello["spec"]["trafficDistribution"]
        apply("cluster-1", hello)
    elif applied.returncode != 0:
        raise RuntimeError("kubectl apply: " + applied.stderr)
    apply("cluster-1", export("hello", exportedLabels={"dummy-label": "true"},
                              exportedAnnotations={"dummy-annotation": "true"}))
    checks.check("T4: Valid=True on the ServiceExport", wait_until(IMPORT_WAIT, lambda: (
        condition(get("cluster-1", "serviceexport", "hello"), "Valid") or {}).get("status") == "True"))
    imported = {}
    for context in cs.clusters:
        checks.check("T4: a ClusterSetIP ServiceImport in " + context, wait_until(
            IMPORT_WAIT, lambda: (get(context, "serviceimport", "hello") or {}).get(
                "spec", {}).get("type") == "ClusterSetIP"))
        checks.check("C1/T8: one IP per family in " + context, wait_until(IMPORT_WAIT, lambda: len(
            (get(context, "serviceimport", "hello") or {}).get("spec", {}).get("ips") or []) ==
            len((get(context, "serviceimport", "hello") or {}).get("spec", {}).get(
                "ipFamilies") or [None])))
        imported[context] = get(context, "serviceimport", "hello")
    one = imported["cluster-2"]
    checks.eq("T9: ports", ports_of(one), [("tcp", "TCP", 42), ("udp", "UDP", 42)])
    checks.eq("T5: session affinity", (one["spec"].get("sessionAffinity"),
                                       one["spec"].get("sessionAffinityConfig")),
              ("ClientIP", {"clientIP": {"timeoutSeconds": 10}}))
    checks.eq("T6: internal traffic policy", one["spec"].get("internalTrafficPolicy"), "Cluster")
    if traffic_distribution:
        checks.eq("T7: traffic distribution", one["spec"].get("trafficDistribution"),
                  "PreferClose")
    families = one["spec"].get("ipFamilies") or []
    ips = one["spec"].get("ips") or []
    checks.check("T8: each IP of its family, in order", len(families) >= 1 and len(ips) == len(families)
                 and all((":" in ip) == (f == "IPv6") for ip, f in zip(ips, families)), one["spec"])
    checks.eq("T2: exported labels only", {k: v for k, v in one["metadata"].get("labels", {}).items()},
              {"dummy-label": "true"})
    checks.check("T2: exported annotations, not the Service's",
                 one["metadata"]["annotations"].get("dummy-annotation") == "true" and
                 "dummy-svc" not in one["metadata"]["annotations"], one["metadata"])
    checks.eq("K: status.clusters", [c["cluster"] for c in one["status"].get("clusters", [])],
              ["cluster-1"])
    checks.eq("K: Ready=True", (condition(one, "Ready") or {}).get("status"), "True")
    def mcs_slices(context, name="hello"):
        listed = json.loads(cs.kubectl(context, "get", "endpointslices", "-n", "mcs-e2e", "-l",
                                    "multicluster.kubernetes.io/service-name=" + name,
                                    "-o", "json").stdout)["items"]
        return [x for x in listed if x["metadata"]["labels"].get(
            "multicluster.kubernetes.io/source-cluster")]

    def ready_endpoints(slices):
        return sorted(a for x in slices for e in x.get("endpoints") or []
                      if (e.get("conditions") or {}).get("ready") is not False
                      for a in e["addresses"])

    for context in cs.clusters:
        for family in families:
            checks.check("T16: an MCS EndpointSlice per family (%s, %s) with the pod" % (
                context, family), wait_until(60, lambda: any(
                    x["addressType"] == family and x.get("endpoints")
                    for x in mcs_slices(context))))
        checks.check("K: endpointSliceObjects Present once the slices are written (%s)" % context,
                     wait_until(IMPORT_WAIT, lambda: (get(context, "serviceimport", "hello") or {})
                                .get("status", {}).get("endpointSliceObjects") == "Present"))
    slices2 = mcs_slices("cluster-2")
    checks.check("T16/S3/S4: labels: source-cluster cluster-1, managed-by mcs.slicewright.io, "
                 "kubernetes.io/service-name the derived Service",
                 slices2 and all(x["metadata"]["labels"].get("multicluster.kubernetes.io/source-cluster")
                                 == "cluster-1" and x["metadata"]["labels"].get(
                                     "endpointslice.kubernetes.io/managed-by") == "mcs.slicewright.io"
                                 and x["metadata"]["labels"].get("kubernetes.io/service-name") ==
                                 one["metadata"]["annotations"].get(
                                     "multicluster.kubernetes.io/derived-service")
                                 for x in slices2), slices2)
    pod_ips = sorted(ip["ip"] for p in json.loads(cs.kubectl(
        "cluster-1", "get", "pods", "-n", "mcs-e2e", "-l", "app=hello", "-o", "json").stdout)["items"]
        for ip in p["status"].get("podIPs") or [])
    checks.eq("T16: cluster-2's MCS slices hold cluster-1's pod", ready_endpoints(slices2), pod_ips)
    checks.check("ES: the broker holds cluster-1's slices", json.loads(cs.kubectl(
        "broker", "get", "endpointslices", "-n", "slicewright-mcs", "-l",
        "multicluster.kubernetes.io/source-cluster=cluster-1", "-o", "json").stdout)["items"])
    derived = get("cluster-2", "service", one["metadata"]["annotations"].get(
        "multicluster.kubernetes.io/derived-service", "none"))
    checks.check("derived Service owned by the import, its ClusterIPs are spec.ips",
                 derived is not None and derived["metadata"]["ownerReferences"][0]["kind"] ==
                 "ServiceImport" and sorted(derived["spec"]["clusterIPs"]) == sorted(ips), derived)
    export1 = get("cluster-1", "serviceexport", "hello")
    checks.eq("K: Conflict=False NoConflicts", ((condition(export1, "Conflict") or {}).get("status"),
              (condition(export1, "Conflict") or {}).get("reason")), ("False", "NoConflicts"))
    checks.eq("K: Ready=True Exported", (condition(export1, "Ready") or {}).get("reason"), "Exported")

    # T10: cluster-2 exports {tcp/42, stcp/SCTP/142} 1.1 s later: the union, Conflict on both.
    time.sleep(1.1)
    apply("cluster-2", service("hello", [tcp42, {"name": "stcp", "protocol": "SCTP", "port": 142}]))
    apply("cluster-2", export("hello"))
    for context in cs.clusters:
        checks.check("T10: Conflict=True PortConflict on " + context + "'s ServiceExport",
                     wait_until(IMPORT_WAIT, lambda: "PortConflict" in (condition(get(
                         context, "serviceexport", "hello"), "Conflict") or {}).get("reason", "")))
    checks.check("T10: the import exposes the union", wait_until(IMPORT_WAIT, lambda: ports_of(
        get("cluster-1", "serviceimport", "hello")) == [("stcp", "SCTP", 142), ("tcp", "TCP", 42),
                                                        ("udp", "UDP", 42)]),
                 get("cluster-1", "serviceimport", "hello"))
    checks.check("K: status.clusters lists both", wait_until(IMPORT_WAIT, lambda: [
        c["cluster"] for c in get("cluster-2", "serviceimport", "hello")["status"].get(
            "clusters", [])] == cs.clusters))

    # Endpoints follow: a second pod in cluster-1 reaches cluster-2's slices.
    cs.kubectl("cluster-1", "scale", "deployment", "hello", "--replicas=2", "-n", "mcs-e2e")

    def slices_from(cluster, context):
        return [x for x in mcs_slices(context) if
                x["metadata"]["labels"]["multicluster.kubernetes.io/source-cluster"] == cluster]

    def hello_slices():
        return {"cluster-1 (its own)": cs.kubectl(
            "cluster-1", "get", "endpointslices", "-n", "mcs-e2e", "-o",
            "custom-columns=NAME:.metadata.name,TYPE:.addressType,BY:.metadata.labels.endpoints"
            "lice\\.kubernetes\\.io/managed-by,ADDRESSES:.endpoints[*].addresses").stdout,
            "cluster-2's MCS slices of cluster-1": ready_endpoints(slices_from("cluster-1",
                                                                               "cluster-2"))}

    def import_families():
        # cluster-2's Service is single-stack: since T10 the import has the families both
        # exports share (IPFamilyConflict), and its slices only those.
        return ((get("cluster-2", "serviceimport", "hello") or {}).get("spec") or {}).get(
            "ipFamilies") or []
    checks.eq("IPFamilyConflict: the import keeps the families both exports share",
              import_families(), ["IPv4"])
    checks.check("endpoints propagate: two ready pods of cluster-1 in cluster-2's slices",
                 wait_until(30, lambda: len(ready_endpoints(slices_from("cluster-1", "cluster-2")))
                            == 2 * len(import_families())), hello_slices())

    # Liveness (spec §7 ES9): cluster-1's Lease gone from the broker = cluster-1 expired for
    # cluster-2: it leaves status.clusters and its endpoints leave cluster-2's slices, the import
    # stays; cluster-1's agent renews its Lease and everything comes back.
    def from_cluster1(context):
        return [x for x in mcs_slices(context) if
                x["metadata"]["labels"]["multicluster.kubernetes.io/source-cluster"] == "cluster-1"]

    def import_clusters(context):
        return [c["cluster"] for c in ((get(context, "serviceimport", "hello") or {}).get(
            "status") or {}).get("clusters", [])]

    ips_before = get("cluster-2", "serviceimport", "hello")["spec"].get("ips")
    delete_lease_after_renewal(cs, checks, "cluster-1")
    checks.check("expired: cluster-1 leaves cluster-2's status.clusters",
                 wait_until(IMPORT_WAIT, lambda: import_clusters("cluster-2") == ["cluster-2"]),
                 import_clusters("cluster-2"))
    checks.check("expired: cluster-1's endpoints leave cluster-2's slices",
                 wait_until(IMPORT_WAIT, lambda: not from_cluster1("cluster-2")))
    checks.check("expired: the import stays, its ClusterSetIP unchanged",
                 (get("cluster-2", "serviceimport", "hello") or {}).get("spec", {}).get("ips") ==
                 ips_before, get("cluster-2", "serviceimport", "hello"), ips_before)
    checks.check("renewed: cluster-1 is back in status.clusters and its slices", wait_until(
        40, lambda: import_clusters("cluster-2") == cs.clusters and len(ready_endpoints(
            from_cluster1("cluster-2"))) == 2 * len(import_families())), import_clusters("cluster-2"),
        hello_slices())
    checks.eq("renewed: endpointSliceObjects stayed Present",
              get("cluster-2", "serviceimport", "hello")["status"].get("endpointSliceObjects"),
              "Present")

    # T1: the import lives while one export does.
    cs.kubectl("cluster-1", "delete", "serviceexport", "hello", "-n", "mcs-e2e")
    checks.check("T1: unexported from cluster-1: the import stays (5 s)", not wait_until(
        CONSISTENTLY, lambda: get("cluster-1", "serviceimport", "hello") is None, interval=0.1))
    checks.check("T1: the import follows cluster-2 alone", wait_until(IMPORT_WAIT, lambda: ports_of(
        get("cluster-1", "serviceimport", "hello")) == [("stcp", "SCTP", 142), ("tcp", "TCP", 42)]))
    cs.kubectl("cluster-2", "delete", "serviceexport", "hello", "-n", "mcs-e2e")
    for context in cs.clusters:
        checks.check("T1/T4: unexported everywhere: gone from " + context, wait_until(
            IMPORT_WAIT, lambda: get(context, "serviceimport", "hello") is None))
        checks.check("T16/S6: its MCS slices deleted in " + context, wait_until(
            IMPORT_WAIT, lambda: not mcs_slices(context)))

    # T12, T13: a headless export.
    apply("cluster-1", service("headless", [tcp42], clusterIP="None"))
    apply("cluster-1", export("headless"))
    checks.check("T12: a Headless import", wait_until(IMPORT_WAIT, lambda: (get(
        "cluster-2", "serviceimport", "headless") or {}).get("spec", {}).get("type") == "Headless"))
    checks.check("T13: no IPs for 5 s", not wait_until(CONSISTENTLY, lambda: bool((get(
        "cluster-2", "serviceimport", "headless") or {}).get("spec", {}).get("ips")), interval=1))
    # T15: cluster-2 exports it with a ClusterIP; the oldest (headless) wins, Conflict on both.
    time.sleep(1.1)
    apply("cluster-2", service("headless", [tcp42]))
    apply("cluster-2", export("headless"))
    for context in cs.clusters:
        checks.check("T15: TypeConflict on " + context, wait_until(IMPORT_WAIT, lambda: "TypeConflict" in (
            condition(get(context, "serviceexport", "headless"), "Conflict") or {}).get("reason", "")))
    checks.eq("T15: the oldest export's type", get("cluster-2", "serviceimport", "headless")["spec"]["type"],
              "Headless")

    # T14 and NoService: not exported, no import.
    apply("cluster-1", {"apiVersion": "v1", "kind": "Service",
                        "metadata": {"name": "external", "namespace": "mcs-e2e"},
                        "spec": {"type": "ExternalName", "externalName": "example.com"}})
    apply("cluster-1", export("external"))
    apply("cluster-1", export("missing"))
    checks.check("T14: Valid=False InvalidServiceType", wait_until(IMPORT_WAIT, lambda: (condition(
        get("cluster-1", "serviceexport", "external"), "Valid") or {}).get("reason") ==
        "InvalidServiceType"))
    checks.check("K: Valid=False NoService", wait_until(IMPORT_WAIT, lambda: (condition(
        get("cluster-1", "serviceexport", "missing"), "Valid") or {}).get("reason") == "NoService"))
    checks.check("T14: no import for 5 s", not wait_until(CONSISTENTLY, lambda: any(
        get(c, "serviceimport", n) is not None for c in cs.clusters for n in ("external", "missing")),
        interval=0.5))


def check_dns(cs, checks):
    """clusterset.local DNS (issue #24, spec §9 and §12.2 T22-T27, §15.6 D1-D9) with the real dig
    against each member's resolver (cs.resolvers), with the suite's timeouts; dual-stack; TCP
    after a truncated UDP answer; answers that follow a pod turning unready and a cluster's Lease
    expiring; garbage over UDP and TCP, then still right answers."""
    if shutil.which("dig") is None:
        checks.fail("dig on PATH (bind9-dnsutils, scripts/install-deps.sh)")
        return
    resolvers = cs.resolvers
    checks.check("a resolver per member on its own loopback port",
                 all((resolvers[c] or "").startswith("127.0.0.1:") for c in cs.clusters) and
                 len(set(resolvers.values())) == len(cs.clusters), resolvers)
    ns = "mcs-dns"
    zone = "svc.clusterset.local"

    def apply(context, obj):
        cs.kubectl(context, "apply", "-f", "-", stdin=json.dumps(obj))

    def get(context, kind, name):
        result = cs.kubectl(context, "get", kind, name, "-n", ns, "-o", "json", check=False)
        return json.loads(result.stdout) if result.returncode == 0 else None

    def service(name, **spec):
        body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
                "spec": {"selector": {"app": name},
                         "ports": [{"name": "tcp", "protocol": "TCP", "port": 42},
                                   {"name": "udp", "protocol": "UDP", "port": 42}]}}
        body["spec"].update(spec)
        return body

    def export(name):
        return {"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
                "metadata": {"name": name, "namespace": ns}}

    def in_tree_ready(context, name, family):
        listed = json.loads(cs.kubectl(context, "get", "endpointslices", "-n", ns, "-l",
                                    "kubernetes.io/service-name=" + name, "-o", "json").stdout)
        return sorted(a for s in listed["items"] if s["addressType"] == family
                      for e in s.get("endpoints") or []
                      if (e.get("conditions") or {}).get("ready") is not False
                      for a in e["addresses"])

    def addresses(context, name, qtype):
        status, _, answers, _ = dig(resolvers[context], name, qtype)
        return status, sorted(data for t, data in answers if t == qtype)

    for context in cs.clusters:
        cs.kubectl(context, "create", "namespace", ns)
    # D8: the schema version.
    for context in cs.clusters:
        status, flags, answers, out = dig(resolvers[context], "dns-version.clusterset.local", "TXT")
        checks.check("D8: dns-version TXT \"1.0.0\", authoritative (%s)" % context,
                     status == "NOERROR" and "aa" in flags and answers == [("TXT", '"1.0.0"')], out)

    # T22-T23: a dual-stack ClusterIP Service exported from cluster-1.
    cs.kubectl("cluster-1", "create", "deployment", "hello", "--image=x", "--replicas=1", "-n", ns)
    apply("cluster-1", service("hello", ipFamilyPolicy="PreferDualStack"))
    apply("cluster-1", export("hello"))
    fqdn = "hello.%s.%s" % (ns, zone)
    for context in cs.clusters:
        checks.check("import with its IPs in " + context, wait_until(IMPORT_WAIT, lambda: len(
            ((get(context, "serviceimport", "hello") or {}).get("spec") or {}).get("ips") or []) == 2))
        ips = get(context, "serviceimport", "hello")["spec"]["ips"]
        v4 = [ip for ip in ips if ":" not in ip]
        v6 = [ip for ip in ips if ":" in ip]
        checks.check("T22/D1: A is the IPv4 ClusterSetIP (%s)" % context, wait_until(
            IMPORT_WAIT, lambda: addresses(context, fqdn, "A") == ("NOERROR", v4)),
            addresses(context, fqdn, "A"), v4)
        checks.check("T22/D1: AAAA is the IPv6 ClusterSetIP (%s)" % context, wait_until(
            IMPORT_WAIT, lambda: addresses(context, fqdn, "AAAA") == ("NOERROR", v6)),
            addresses(context, fqdn, "AAAA"), v6)
        _, _, srv, out = dig(resolvers[context], fqdn, "SRV")
        checks.eq("T23/D2: one bare-name SRV, port 42, target the service (%s)" % context,
                  [(t, d.split()[2], d.split()[3]) for t, d in srv], [("SRV", "42", fqdn + ".")])
        _, _, named, out = dig(resolvers[context], "_udp._udp." + fqdn, "SRV")
        checks.eq("D3: _udp._udp SRV (%s)" % context, [(t, d.split()[2], d.split()[3])
                                                        for t, d in named],
                  [("SRV", "42", fqdn + ".")])
    status, _, _, out = dig(resolvers["cluster-2"], "nothing.%s.%s" % (ns, zone), "A")
    checks.eq("D9: a name that does not exist is NXDOMAIN", status, "NXDOMAIN")
    status, flags, _, out = dig(resolvers["cluster-2"], "hello.%s.svc.cluster.local" % ns, "A")
    checks.eq("D4: cluster.local is not ours: REFUSED", status, "REFUSED")

    # T25, T27: a headless Service of 20 pods in cluster-1 (single-stack, as conformance runs it).
    cs.kubectl("cluster-1", "create", "deployment", "hl", "--image=x", "--replicas=20", "-n", ns)
    apply("cluster-1", service("hl", clusterIP="None"))
    apply("cluster-1", export("hl"))
    hl = "hl.%s.%s" % (ns, zone)
    checks.check("20 ready pods behind hl", wait_until(60, lambda: len(
        in_tree_ready("cluster-1", "hl", "IPv4")) == 20))
    want = in_tree_ready("cluster-1", "hl", "IPv4")
    for context in cs.clusters:
        checks.check("T25/D5: headless A = the ready addresses (%s)" % context, wait_until(
            IMPORT_WAIT, lambda: addresses(context, hl, "A") == ("NOERROR", want)),
            addresses(context, hl, "A"), want)
        _, _, srv, out = dig(resolvers[context], hl, "SRV")
        targets = sorted(d.split()[3] for t, d in srv)
        checks.check("T27/D7: one bare-name SRV per endpoint, port 42, target <dashed ip>.cluster-1 "
                     "(%s)" % context, len(srv) == len(want) and all(d.split()[2] == "42"
                                                                     for _, d in srv) and
                     targets == sorted("%s.cluster-1.%s." % (a.replace(".", "-"), hl) for a in want),
                     out)
    # TCP after a truncated UDP answer: 20 SRV records do not fit 512 bytes without EDNS.
    status, flags, answers, out = dig(resolvers["cluster-2"], hl, "SRV", "+noedns", "+ignore")
    checks.check("UDP without EDNS: TC set, no partial answer", "tc" in flags and not answers, out)
    status, flags, answers, out = dig(resolvers["cluster-2"], hl, "SRV", "+noedns")
    checks.check("dig retries over TCP by itself and gets all 20", "Truncated, retrying in TCP mode"
                 in out and len(answers) == 20 and "tc" not in flags, out)
    status, flags, answers, out = dig(resolvers["cluster-2"], hl, "SRV", "+tcp")
    checks.check("+tcp: the whole answer", len(answers) == 20, out)
    status, flags, answers, out = dig(resolvers["cluster-2"], hl, "A", "+bufsize=4096")
    checks.check("EDNS(0): our payload size (1232) advertised, the 20 A records fit",
                 "udp: 1232" in out and len(answers) == 20 and "tc" not in flags, out)

    # A pod turning unready leaves the answer (no stale answer past the TTL: the cache is read).
    pods = json.loads(cs.kubectl("cluster-1", "get", "pods", "-n", ns, "-l", "app=hl",
                              "-o", "json").stdout)["items"]
    victim = pods[0]
    victim_ip = victim["status"]["podIP"]
    cs.set_pod_ready("cluster-1", ns, victim["metadata"]["name"], False)
    fewer = [a for a in want if a != victim_ip]
    checks.check("an unready pod leaves the headless answer in cluster-2", wait_until(
        IMPORT_WAIT, lambda: addresses("cluster-2", hl, "A") == ("NOERROR", fewer)),
        addresses("cluster-2", hl, "A"), fewer)
    cs.set_pod_ready("cluster-1", ns, victim["metadata"]["name"], True)
    checks.check("... and comes back when ready again", wait_until(
        IMPORT_WAIT, lambda: addresses("cluster-2", hl, "A") == ("NOERROR", want)))

    # T26/D6: a StatefulSet behind a dual-stack headless Service: per-pod names with the cluster
    # id read from the MCS slice's source-cluster label.
    apply("cluster-1", service("hss", clusterIP="None", ipFamilyPolicy="PreferDualStack"))
    apply("cluster-1", {"apiVersion": "apps/v1", "kind": "StatefulSet",
                        "metadata": {"name": "hello-ss", "namespace": ns},
                        "spec": {"replicas": 2, "serviceName": "hss",
                                 "selector": {"matchLabels": {"app": "hss"}},
                                 "template": {"metadata": {"labels": {"app": "hss"}},
                                              "spec": {"containers": [{"name": "c",
                                                                       "image": "x"}]}}}})
    apply("cluster-1", export("hss"))

    def mcs_slices(context):
        listed = json.loads(cs.kubectl(context, "get", "endpointslices", "-n", ns, "-l",
                                    "multicluster.kubernetes.io/service-name=hss",
                                    "-o", "json").stdout)["items"]
        return [s for s in listed if s["metadata"]["labels"].get(
            "multicluster.kubernetes.io/source-cluster")]

    def named_ready(context):
        return [(s, e) for s in mcs_slices(context) for e in s.get("endpoints") or []
                if e.get("hostname") and (e.get("conditions") or {}).get("ready") is not False]

    for context in cs.clusters:
        checks.check("T26: 2 ready endpoints with hostnames per family in %s's MCS slices" % context,
                     wait_until(60, lambda: len(named_ready(context)) == 4),
                     [e for _, e in named_ready(context)])
        for slice_, endpoint in named_ready(context):
            cluster_id = slice_["metadata"]["labels"]["multicluster.kubernetes.io/source-cluster"]
            name = "%s.%s.hss.%s.%s" % (endpoint["hostname"], cluster_id, ns, zone)
            qtype = "A" if slice_["addressType"] == "IPv4" else "AAAA"
            checks.check("T26/D6: %s %s = the endpoint's addresses (%s)" % (name, qtype, context),
                         wait_until(IMPORT_WAIT, lambda: addresses(context, name, qtype) == (
                             "NOERROR", sorted(endpoint["addresses"]))),
                         addresses(context, name, qtype), endpoint["addresses"])
        status, _, answers, out = dig(resolvers[context], "cluster-1.hss.%s.%s" % (ns, zone), "A")
        checks.check("D9: no <clusterid>.<svc> records (%s)" % context,
                     status == "NOERROR" and not answers, out)
        _, _, srv, out = dig(resolvers[context], "hss.%s.%s" % (ns, zone), "SRV")
        checks.check("headless SRV: one target per pod (both families share the hostname)",
                     sorted(d.split()[3] for _, d in srv) ==
                     ["hello-ss-%d.cluster-1.hss.%s.%s." % (i, ns, zone) for i in range(2)], out)

    # A cluster whose Lease is gone leaves the answers in cluster-2 at once, and comes back.
    delete_lease_after_renewal(cs, checks, "cluster-1")
    checks.check("expired Lease: cluster-1's headless endpoints leave cluster-2's answer (NXDOMAIN)",
                 wait_until(IMPORT_WAIT, lambda: addresses("cluster-2", hl, "A")[0] == "NXDOMAIN"),
                 addresses("cluster-2", hl, "A"))
    checks.check("renewed Lease: they come back", wait_until(
        40, lambda: addresses("cluster-2", hl, "A") == ("NOERROR", want)))

    # Garbage over UDP and TCP, then still right answers.
    host, port = resolvers["cluster-2"].rsplit(":", 1)
    for payload in (b"", b"\x00", b"\xff" * 11, b"\x12\x34" + b"\x00" * 10, bytes(range(256)) * 2,
                    b"\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\xc0\x0c\x00\x01\x00\x01"):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.sendto(payload, (host, int(port)))
    with socket.create_connection((host, int(port)), timeout=5) as tcp:
        tcp.sendall(b"\x00\x0c" + b"\xab" * 12 + b"\x01\x00garbage")
    with socket.create_connection((host, int(port)), timeout=5) as tcp:
        tcp.sendall(b"\xff\xff" + b"\x00" * 100)  # promises 65535 bytes, hangs up
    for transport in ("+notcp", "+tcp"):
        status, _, answers, out = dig(resolvers["cluster-2"], hl, "A", transport)
        checks.check("after garbage: right answers over " + transport[1:], status == "NOERROR" and
                     sorted(d for _, d in answers) == want, out)


def check_bad_input(cs, checks):
    """Malformed broker records are left out, not fatal; a bad cluster id stops the agent at once."""
    record = {"apiVersion": "mcs.slicewright.io/v1alpha1", "kind": "ServiceExportRecord",
              "metadata": {"name": "bogus.mcs-e2e.cluster-9", "namespace": "slicewright-mcs",
                           "labels": {"multicluster.kubernetes.io/source-cluster": "cluster-9",
                                      "multicluster.kubernetes.io/service-name": "bogus"}},
              "spec": {"cluster": "cluster-1", "namespace": "mcs-e2e", "name": "bogus",
                       "exportCreationTimestamp": "2026-01-01T00:00:00Z", "type": "ClusterSetIP",
                       "ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]}}
    cs.kubectl("broker", "apply", "-f", "-", stdin=json.dumps(record))
    checks.check("bad record: no import from it (5 s)", not wait_until(CONSISTENTLY, lambda: any(
        cs.kubectl(c, "get", "serviceimport", "bogus", "-n", "mcs-e2e", check=False).returncode == 0
        for c in cs.clusters), interval=0.5))
    cs.kubectl("cluster-2", "apply", "-f", "-", stdin=json.dumps(
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "after", "namespace": "mcs-e2e"},
         "spec": {"ports": [{"port": 80}], "selector": {"app": "after"}}}))
    cs.kubectl("cluster-2", "apply", "-f", "-", stdin=json.dumps(
        {"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
         "metadata": {"name": "after", "namespace": "mcs-e2e"}}))
    checks.check("bad record: the agents still work (a later export is imported)", wait_until(
        IMPORT_WAIT, lambda: cs.kubectl("cluster-1", "get", "serviceimport", "after", "-n", "mcs-e2e",
                                     check=False).returncode == 0))
    checks.check("bad record: the agents still run", cs.agents_running())

    # Each bad agent flag stops controller-manager at once: exit 1, the flag named on stderr.
    for flag, value, what in [
            ("--cluster-id", "Not_A_Subdomain", "an invalid"),
            ("--mcs-endpointslice-sync", "sometimes", "an unknown"),
            ("--mcs-cluster-ip-families", "IPv4,IPv4", "a bad"),
            ("--mcs-dns-address", "no-port-here", "a bad")]:
        result = subprocess.run(
            [cs.binary, "controller-manager", "--kubeconfig", cs.kubeconfig, "--context",
             "cluster-1", "--controllers", "mcs", flag, value, "--broker-kubeconfig", cs.kubeconfig,
             "--broker-context", "broker", "--port", "-1"],
            capture_output=True, text=True, timeout=30)
        checks.check("%s %s: exit 1 naming the flag" % (what, flag),
                     result.returncode == 1 and flag in result.stderr,
                     result.returncode, result.stderr[-2000:])


def check_cluster_ip_families(cs, checks):
    """Each member's agent learned from its API server the families it gives Services."""
    for cluster in cs.clusters:
        learned = re.findall(r"mcs agent: cluster id %s,.* IP families (\S*) \(the API server\)"
                             % re.escape(cluster), cs.agent_log(cluster))
        checks.eq("%s's agent learned %s from its API server" % (
            cluster, ",".join(cs.ip_families(cluster))), learned[-1:],
            [",".join(cs.ip_families(cluster))])



def check_example(cs, checks):
    """examples/mcs/ as its README walks a new user through it: web.yaml applied to both clusters
    gives a ClusterSetIP import in cluster-2 spanning both, the export's conditions say Valid,
    Ready and NoConflicts, and `slicewright explain serviceimport` (and the kubectl plugin) answers
    consistently with the import: routable through EndpointSlices exactly when
    endpointSliceObjects is Present and slices exist, otherwise pointing at spec.ips."""
    example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                           "mcs")
    for context in cs.clusters:
        cs.kubectl(context, "apply", "-f", example)

    def get(context, kind):
        result = cs.kubectl(context, "get", kind, "web", "-n", "mcs-demo", "-o", "json", check=False)
        return json.loads(result.stdout) if result.returncode == 0 else None

    def imported():
        status = (get("cluster-2", "serviceimport") or {}).get("status") or {}
        return sorted(c["cluster"] for c in status.get("clusters") or []) == cs.clusters and \
            status.get("endpointSliceObjects") in ("Present", "Absent")

    checks.check("example: cluster-2 imports web from both clusters", wait_until(IMPORT_WAIT, imported))
    table = cs.kubectl("cluster-2", "get", "serviceimports", "-n", "mcs-demo").stdout
    checks.check("example: kubectl get serviceimports prints it as ClusterSetIP",
                 "web" in table and "ClusterSetIP" in table, table)

    def conditions():
        export = get("cluster-1", "serviceexport") or {}
        return {c["type"]: (c["status"], c["reason"])
                for c in (export.get("status") or {}).get("conditions") or []}

    checks.check("example: the ServiceExport is Valid, Ready and conflict-free", wait_until(
        IMPORT_WAIT, lambda: conditions() == {"Valid": ("True", "Valid"),
                                              "Ready": ("True", "Exported"),
                                              "Conflict": ("False", "NoConflicts")}), conditions())

    def explain(*args, plugin=False):
        env = dict(os.environ)
        if plugin:
            env["PATH"] = os.path.dirname(cs.binary) + os.pathsep + env.get("PATH", "")
            env["KUBECONFIG"] = cs.kubeconfig  # kubectl finds a plugin only before any flag
            command = ["kubectl", "slicewright"]
        else:
            command = [cs.binary]
        return subprocess.run(command + ["explain", "serviceimport"] + list(args) +
                              ["--kubeconfig", cs.kubeconfig], capture_output=True, text=True,
                              timeout=60, env=env)

    # Once the import has settled (its derived Service named, its IP allocated).
    checks.check("example: the import has its ClusterSetIP", wait_until(IMPORT_WAIT, lambda: (
        (get("cluster-2", "serviceimport") or {}).get("spec", {}).get("ips"))))
    si = get("cluster-2", "serviceimport")
    result = explain("mcs-demo/web", "--context", "cluster-2", "-o", "json")
    checks.eq("example: explain serviceimport -o json exits 0", result.returncode, 0)
    answer = json.loads(result.stdout or "{}")
    slices = json.loads(cs.kubectl("cluster-2", "get", "endpointslices", "-n", "mcs-demo", "-l",
                                "multicluster.kubernetes.io/service-name=web", "-o", "json").stdout)
    present = si["status"].get("endpointSliceObjects") == "Present"
    checks.eq("explain: endpointSliceObjects as the import says", answer.get("endpointSliceObjects"),
              si["status"].get("endpointSliceObjects"))
    checks.eq("explain: routable exactly when Present with slices",
              answer.get("endpointSlicesRoutable"), present and len(slices["items"]) > 0)
    checks.eq("explain: the ClusterSetIP and derived Service", (answer.get("ips"),
                                                               answer.get("derivedService")),
              (si["spec"]["ips"], si["metadata"].get("annotations", {}).get(
                  "multicluster.kubernetes.io/derived-service")))
    dns_names = {n["name"]: n["records"] for n in answer.get("dns", [])}
    checks.eq("explain: the clusterset.local name and its A/AAAA records now (issue #24)",
              sorted(r for r in dns_names.get("web.mcs-demo.svc.clusterset.local", [])
                     if r.split()[0] in ("A", "AAAA")),
              sorted(("AAAA " if ":" in ip else "A ") + ip for ip in si["spec"]["ips"]))
    checks.eq("explain: both source clusters, live",
              [(c["cluster"], c["listed"]) for c in answer.get("clusters", [])],
              [("cluster-1", True), ("cluster-2", True)])
    checks.eq("explain: no conflict on the local export", (answer.get("conflict") or {}).get(
        "reason"), "NoConflicts")
    if not present:
        checks.check("explain: Absent points at spec.ips",
                     ("route to spec.ips (%s)" % ", ".join(si["spec"]["ips"])) in answer.get(
                         "advice", ""), answer.get("advice"))
    text = explain("mcs-demo/web", "--context", "cluster-2", plugin=True)
    checks.check("example: kubectl slicewright explain serviceimport prints the answer",
                 text.returncode == 0 and "ServiceImport mcs-demo/web" in text.stdout and
                 "Routable via EndpointSlices: " + ("yes" if answer.get("endpointSlicesRoutable")
                                                    else "no") in text.stdout,
                 text.stdout + text.stderr)
    missing = explain("mcs-demo/nothing", "--context", "cluster-2")
    checks.check("explain: a missing import is a clear error", missing.returncode == 1 and
                 "serviceimport mcs-demo/nothing not found" in missing.stderr, missing.stderr)

    # Slices switched off by the exports' annotation: Absent, and explain says why and what to do.
    for context in cs.clusters:
        cs.kubectl(context, "annotate", "--overwrite", "serviceexport", "web", "-n", "mcs-demo",
                "mcs.slicewright.io/endpointslice-sync=false")
    checks.check("example: annotated \"false\", the import says Absent", wait_until(
        IMPORT_WAIT, lambda: ((get("cluster-2", "serviceimport") or {}).get("status") or {}).get(
            "endpointSliceObjects") == "Absent"))
    result = explain("mcs-demo/web", "--context", "cluster-2", "-o", "json")
    answer = json.loads(result.stdout or "{}")
    checks.check("explain: Absent, not routable, because of the annotation",
                 answer.get("endpointSlicesRoutable") is False and
                 'annotated mcs.slicewright.io/endpointslice-sync: "false"' in answer.get(
                     "verdict", ""), answer)
    checks.check("explain: ... pointing at spec.ips and the derived Service",
                 ("route to spec.ips (%s) or the derived Service %s" % (
                     ", ".join(si["spec"]["ips"]), answer.get("derivedService"))) in answer.get(
                     "advice", ""), answer.get("advice"))

