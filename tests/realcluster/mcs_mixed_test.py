#!/usr/bin/python3
"""A mixed Multi-Cluster Services ClusterSet (issue #30 §3): the broker on kube-apiserver, member
cluster-1 on `slicewright dev` (our API server, dual-stack, IPv4 primary), member cluster-2 on
kube-apiserver, single-stack IPv4, with kube-controller-manager's endpoint and workload
controllers; set up as deploy/mcs/README.md says (clusterset.py).

1. An export in each member is imported in both, with MCS EndpointSlices and
   `endpointSliceObjects: Present`: cluster-1's RequireDualStack export arrives in the IPv4-only
   cluster-2 as an IPv4 import (Ready, one ClusterSetIP, IPv4 slices) and its DNS answers A only.
   Each agent learned its cluster's families from its API server: cluster-2's IPv4 alone (a
   selector-less headless probe got IPv4,IPv6 from kube-apiserver, and the derived Service was then
   refused, the import left with no IP and no condition).
2. cluster-1's agent runs as deploy/mcs/README.md documents the defaults: no
   --leader-elect-resource-name, while the endpoint controller-manager's Lease
   kube-system/slicewright-controller-manager is held by another manager. It must lead on its own
   Lease (slicewright-mcs-agent); it stood by for good behind the other's.
3. cluster-2's agent restarted with the wrong --mcs-cluster-ip-families=IPv4,IPv6: kube-apiserver
   refuses the dual-stack derived Service, and the import says so (Ready=False
   IPFamilyNotSupported, the server's own words) and the write is retried, never dropped.

Usage: /usr/bin/python3 mcs_mixed_test.py PATH/TO/slicewright   (exit 77 without
KUBEBUILDER_ASSETS)
"""

import json
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

import clusterset  # noqa: E402
import control_plane  # noqa: E402
from e2e_server import Checks, binary_from_argv, dig, install_sigterm_exit, wait_until  # noqa: E402

checks = Checks("realcluster_mcs_mixed_test")
NS = "mcs-mixed"
IMPORT_WAIT = 20
REFUSED = re.compile(r"forbidden|Forbidden|not retrying|dropping .* out of the queue|"
                     r"refused|is invalid|retrying in")
OTHER_HOLDER = "deploy-controller-manager-elsewhere"


def hold_endpoint_controllers_lease(cs):
    """As deploy/'s controller-manager would: the endpoint controllers' Lease, held and current."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    cs.kubectl("cluster-1", "apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "slicewright-controller-manager", "namespace": "kube-system"},
        "spec": {"holderIdentity": OTHER_HOLDER, "leaseDurationSeconds": 3600,
                 "acquireTime": now, "renewTime": now, "leaseTransitions": 0}}))


def get(cs, context, kind, name):
    result = cs.kubectl(context, "get", kind, name, "-n", NS, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def ready_of(obj):
    for condition in ((obj or {}).get("status") or {}).get("conditions") or []:
        if condition["type"] == "Ready":
            return condition
    return {}


def mcs_slices(cs, context, name):
    listed = json.loads(cs.kubectl(context, "get", "endpointslices", "-n", NS, "-l",
                                   "multicluster.kubernetes.io/service-name=" + name,
                                   "-o", "json").stdout)["items"]
    return [x for x in listed
            if x["metadata"]["labels"].get("endpointslice.kubernetes.io/managed-by") ==
            "mcs.slicewright.io"]


def export(cs, context, name, replicas, **spec):
    cs.kubectl(context, "create", "deployment", name, "--image=x", "--replicas=%d" % replicas,
               "-n", NS)
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NS},
            "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 80}]}}
    body["spec"].update(spec)
    cs.kubectl(context, "apply", "-f", "-", stdin=json.dumps(body))
    cs.kubectl(context, "apply", "-f", "-", stdin=json.dumps(
        {"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
         "metadata": {"name": name, "namespace": NS}}))


def check_leader_election(cs):
    lease = json.loads(cs.kubectl("cluster-1", "get", "lease", "-n", "kube-system",
                                  "slicewright-mcs-agent", "-o", "json").stdout)
    checks.check("cluster-1's agent, started without --leader-elect-resource-name, leads on "
                 "kube-system/slicewright-mcs-agent",
                 lease["spec"].get("holderIdentity") not in (None, "", OTHER_HOLDER), lease)
    other = json.loads(cs.kubectl("cluster-1", "get", "lease", "-n", "kube-system",
                                  "slicewright-controller-manager", "-o", "json").stdout)
    checks.eq("... and leaves the endpoint controllers' Lease to its holder",
              other["spec"]["holderIdentity"], OTHER_HOLDER)
    checks.check("its command line names no Lease",
                 not any(a.startswith("--leader-elect-resource-name") for a in
                         cs.members["cluster-1"].agent_args), cs.members["cluster-1"].agent_args)


def check_families_learned(cs):
    for cluster, want in (("cluster-1", "IPv4,IPv6"), ("cluster-2", "IPv4")):
        learned = re.findall(r"mcs agent: cluster id %s,.* IP families (\S*) \(the API server\)"
                             % cluster, cs.agent_log(cluster))
        checks.eq("%s's agent learned %s from its API server" % (cluster, want), learned[-1:],
                  [want])


def check_both_ways(cs):
    for context in cs.clusters:
        cs.kubectl(context, "create", "namespace", NS)
    export(cs, "cluster-1", "from-dev", 2, ipFamilyPolicy="RequireDualStack",
           ipFamilies=["IPv4", "IPv6"])
    export(cs, "cluster-2", "from-kube", 2)
    want = {  # import -> context -> families
        "from-dev": {"cluster-1": ["IPv4", "IPv6"], "cluster-2": ["IPv4"]},
        "from-kube": {"cluster-1": ["IPv4"], "cluster-2": ["IPv4"]},
    }
    source = {"from-dev": "cluster-1", "from-kube": "cluster-2"}
    for name, by_context in want.items():
        for context, families in by_context.items():
            def imported():
                si = get(cs, context, "serviceimport", name) or {}
                spec, status = si.get("spec") or {}, si.get("status") or {}
                return spec.get("ipFamilies") == families and len(spec.get("ips") or []) == \
                    len(families) and ready_of(si).get("status") == "True" and \
                    status.get("endpointSliceObjects") == "Present" and \
                    [c["cluster"] for c in status.get("clusters") or []] == [source[name]]
            checks.check("%s imported in %s: Ready, %s, one ClusterSetIP per family, Present" % (
                name, context, ",".join(families)), wait_until(60, imported),
                get(cs, context, "serviceimport", name))
            def sliced():
                slices = mcs_slices(cs, context, name)
                return sorted(x["addressType"] for x in slices) == sorted(families) and all(
                    len(x.get("endpoints") or []) == 2 and
                    x["metadata"]["labels"]["multicluster.kubernetes.io/source-cluster"] ==
                    source[name] for x in slices)
            checks.check("%s in %s: MCS slices of %s, %s alone, each with the 2 pods" % (
                name, context, source[name], ",".join(families)), wait_until(IMPORT_WAIT, sliced),
                mcs_slices(cs, context, name))
    # DNS in the IPv4-only member: A, no AAAA.
    fqdn = "from-dev.%s.svc.clusterset.local" % NS
    ips = get(cs, "cluster-2", "serviceimport", "from-dev")["spec"]["ips"]
    status, _, answers, out = dig(cs.resolvers["cluster-2"], fqdn, "A")
    checks.eq("cluster-2 answers A with its IPv4 ClusterSetIP", (status, [d for _, d in answers]),
              ("NOERROR", ips))
    status, _, answers, out = dig(cs.resolvers["cluster-2"], fqdn, "AAAA")
    checks.eq("... and no AAAA", (status, answers), ("NOERROR", []))


def check_refused_derived_service(cs):
    checks.eq("no write of either agent was refused so far", [
        line for c in cs.clusters for line in cs.agent_log(c).splitlines()
        if REFUSED.search(line)][:10], [])
    # An operator's mistake: cluster-2 told it serves both families.
    cs.stop_agent("cluster-2")
    cs.start_agent("cluster-2", extra_args=["--mcs-cluster-ip-families=IPv4,IPv6"],
                   log_name="agent-cluster-2-wrong-families")
    cs.wait_agent_ready("cluster-2")

    def refused():
        ready = ready_of(get(cs, "cluster-2", "serviceimport", "from-dev"))
        return ready if ready.get("reason") == "IPFamilyNotSupported" else None
    ready = wait_until(60, refused)
    checks.check("the refused dual-stack derived Service: Ready=False IPFamilyNotSupported",
                 ready and ready["status"] == "False",
                 get(cs, "cluster-2", "serviceimport", "from-dev"))
    checks.check("... in kube-apiserver's own words", ready and
                 "not configured for dual-stack" in ready.get("message", ""), ready)
    log = os.path.join(cs.log_dir, "agent-cluster-2-wrong-families.log")
    checks.check("... and retried, never dropped", wait_until(
        20, lambda: "retrying in" in open(log).read() and "not retrying" not in open(log).read()))

    # The operator corrects the flag: the import heals with no one touching it (Ready, and the
    # IPv4 ClusterSetIP of the derived Service kube-apiserver now takes).
    cs.stop_agent("cluster-2")
    cs.start_agent("cluster-2", log_name="agent-cluster-2-fixed")
    cs.wait_agent_ready("cluster-2")

    def healed():
        imported = get(cs, "cluster-2", "serviceimport", "from-dev") or {}
        ready = ready_of(imported)
        ips = imported.get("spec", {}).get("ips") or []
        return ready.get("status") == "True" and len(ips) == 1 and ":" not in ips[0]
    checks.check("... and, the flag corrected, the import heals: Ready, one IPv4 ClusterSetIP",
                 wait_until(60, healed), get(cs, "cluster-2", "serviceimport", "from-dev"))


def main():
    binary = binary_from_argv()
    install_sigterm_exit()
    control_plane.skip_unless_assets()
    started = time.monotonic()
    cs = clusterset.ClusterSet(
        tempfile.mkdtemp(prefix="sw-realcluster-mcs-mixed."), binary,
        kinds={"cluster-1": "dev"}, dual_stack={"cluster-2": False}, run_pods=True,
        agent_args=["--mcs-lease-duration=6s"],
        agent_drop_flags={"cluster-1": ("--leader-elect", "--leader-elect-resource-name",
                                        "--leader-elect-resource-namespace")},
        before_agents=hold_endpoint_controllers_lease)
    try:
        cs.start()
        info = cs.describe()
        print("mixed ClusterSet (broker %s; %s) up in %.1f s" % (
            info["broker_version"], ", ".join("%s %s" % kv for kv in info["versions"].items()),
            info["startup_seconds"]), flush=True)
        checks.run("leader election", lambda: check_leader_election(cs))
        checks.run("families learned", lambda: check_families_learned(cs))
        checks.run("both ways", lambda: check_both_ways(cs))
        checks.run("refused derived Service", lambda: check_refused_derived_service(cs))
    except Exception as error:  # noqa: BLE001 - a ClusterSet that does not come up fails
        checks.fail("the ClusterSet comes up", str(error))
    finally:
        cs.cleanup(keep=checks.failed > 0)
    print("wall time %.1f s" % (time.monotonic() - started), flush=True)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
