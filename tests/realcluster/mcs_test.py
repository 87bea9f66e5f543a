#!/usr/bin/python3
"""Multi-Cluster Services on real API servers (issue #30 §3): a broker and two members, each an
upstream kube-apiserver (dual-stack, IPv4 primary, with kube-controller-manager's endpoint and
workload controllers and the fixture's kubelet running their pods), set up exactly as
deploy/mcs/README.md tells an operator (clusterset.py), each member's agent a
`slicewright controller-manager` with deploy/mcs/member's Deployment arguments, authenticated as its
ServiceAccount and, in the broker, as its member-<id> identity. One ClusterSet shared by every case:

1. The checks of tests/e2e/mcs_test.py (tests/e2e/mcs_checks.py): T1-T16 and the KEP's conditions,
   clusterset.local DNS with dig (T22-T27), examples/mcs and `slicewright explain serviceimport`,
   bad records and flags, the IP families each agent learned from its API server.
2. The forging guard (deploy/mcs/broker/admission.yaml, a ValidatingAdmissionPolicy v1): with
   member cluster-1's broker token, creating, updating or deleting a record, a broker EndpointSlice
   or the Lease of cluster-2 is refused, as is relabelling cluster-1's own objects as cluster-2's;
   the same writes of its own pass (a server-side dry run). On a server without
   ValidatingAdmissionPolicy v1 (before 1.30) the broker overlay leaves the policy out and this
   case reports that it cannot be enforced there.
3. The upstream mcs-api conformance suite, unchanged (tests/conformance/run_conformance.py): all
   16 counted specs of `!Connectivity && !DNS` pass on this ClusterSet, as on `slicewright dev`
   (skipped, with a note, when ../shared/conformance is absent). SW_CONFORMANCE_PUBLISH=DIR copies
   its report to DIR/slicewright-kube-apiserver.{html,yaml} (scripts/conformance.sh --real).
4. No write of any agent is refused: its log holds no 403, no "not retrying" and no refused write.

Usage: /usr/bin/python3 mcs_test.py PATH/TO/slicewright   (KUBEBUILDER_ASSETS names the envtest
folder; exit 77 without it)
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))

import clusterset  # noqa: E402
import control_plane  # noqa: E402
import mcs_checks  # noqa: E402
import run_conformance  # noqa: E402
from e2e_server import Checks, binary_from_argv, install_sigterm_exit, wait_until  # noqa: E402

checks = Checks("realcluster_mcs_test")
BROKER_NS = clusterset.BROKER_NAMESPACE
SOURCE_CLUSTER = "multicluster.kubernetes.io/source-cluster"

# What an agent must never log: a refusal of one of its writes (RBAC, the forging guard, a
# validation), or a key given up.
REFUSED = re.compile(r"forbidden|Forbidden|not retrying|dropping .* out of the queue|"
                     r"retrying in|refused|publishing to the broker|ValidatingAdmissionPolicy|"
                     r"is invalid")


def check_forging_guard(cs):
    """Member cluster-1's broker identity cannot write cluster-2's records, slices or Lease."""
    if not cs.guard_enforced:
        print("note: the broker (%s) serves no ValidatingAdmissionPolicy v1: the forging guard "
              "is not installed there, and not checked" % cs.broker.version, flush=True)
        return
    policy = cs.broker.get_json("validatingadmissionpolicy",
                                "slicewright-mcs-member-owns-its-cluster")
    checks.check("the broker base installed the forging guard", policy["metadata"]["name"])
    # Something of cluster-2's to forge: an export, its record and its broker slices.
    ns = "mcs-guard"
    for context in cs.clusters:
        cs.kubectl(context, "create", "namespace", ns)
    cs.kubectl("cluster-2", "create", "deployment", "g", "--image=x", "--replicas=1", "-n", ns)
    cs.kubectl("cluster-2", "apply", "-f", "-", stdin=json.dumps(
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "g", "namespace": ns},
         "spec": {"selector": {"app": "g"}, "ports": [{"name": "http", "port": 80}]}}))
    cs.kubectl("cluster-2", "apply", "-f", "-", stdin=json.dumps(
        {"apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceExport",
         "metadata": {"name": "g", "namespace": ns}}))
    record_name = "g.%s.cluster-2" % ns

    def slices_of(cluster):
        return cs.broker.get_json("-n", BROKER_NS, "endpointslices", "-l",
                                  "%s=%s,multicluster.kubernetes.io/service-name=g" % (
                                      SOURCE_CLUSTER, cluster))["items"]
    checks.check("cluster-2's record and broker slice of g", wait_until(30, lambda: cs.broker.kubectl(
        "-n", BROKER_NS, "get", "serviceexportrecord", record_name, check=False).returncode == 0
        and slices_of("cluster-2")))
    record = cs.broker.get_json("-n", BROKER_NS, "serviceexportrecord", record_name)
    their_slice = slices_of("cluster-2")[0]

    member1 = cs.broker_kubeconfigs["cluster-1"]

    def as_member1(*args, stdin=None):
        return cs.broker.kubectl(*args, kubeconfig=member1, input=stdin, check=False)

    def refused(name, result, by_policy=True):
        text = result.stderr
        ok = result.returncode != 0 and "forbidden" in text.lower() and (
            not by_policy or "ValidatingAdmissionPolicy" in text)
        checks.check("guard: %s is refused%s" % (name, " by the policy" if by_policy else ""),
                     ok, result.returncode, text.strip())

    def replaced(kind, name, change, dry_run=False):
        """An update (PUT: the Role grants update, not patch) of the object as it is now, changed
        by `change`; again if it changed meanwhile (a Lease is renewed every few seconds)."""
        for _ in range(5):
            obj = cs.broker.get_json("-n", BROKER_NS, kind, name)
            change(obj)
            result = as_member1("replace", *(["--dry-run=server"] if dry_run else []), "-f", "-",
                                stdin=json.dumps(obj))
            if "the object has been modified" not in result.stderr:
                break
        return result

    def annotated(obj):
        obj["metadata"].setdefault("annotations", {})["forged"] = "true"

    def allowed(name, result):
        checks.check("guard: %s is allowed (server-side dry run)" % name, result.returncode == 0,
                     result.stderr.strip())

    def strip(obj):
        obj = json.loads(json.dumps(obj))
        for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation",
                    "ownerReferences"):
            obj["metadata"].pop(key, None)
        return obj

    # Records.
    forged = strip(record)
    forged["metadata"]["name"] = "forged.%s.cluster-2" % ns
    forged["spec"]["name"] = "forged"
    forged["metadata"]["labels"]["multicluster.kubernetes.io/service-name"] = "forged"
    refused("creating a record of cluster-2", as_member1("create", "-f", "-",
                                                         stdin=json.dumps(forged)))
    refused("updating cluster-2's record", replaced("serviceexportrecord", record_name,
                                                    annotated))
    refused("deleting cluster-2's record", as_member1(
        "-n", BROKER_NS, "delete", "serviceexportrecord", record_name, "--wait=false"))
    own = json.loads(json.dumps(forged).replace("cluster-2", "cluster-1"))
    allowed("creating a record of its own", as_member1("create", "--dry-run=server", "-f", "-",
                                                       stdin=json.dumps(own)))
    own_records = [r["metadata"]["name"] for r in cs.broker.get_json(
        "-n", BROKER_NS, "serviceexportrecords", "-l", SOURCE_CLUSTER + "=cluster-1")["items"]]
    checks.check("cluster-1 has records in the broker", own_records)
    allowed("updating a record of its own", replaced("serviceexportrecord", own_records[0],
                                                     annotated, dry_run=True))

    def handed_over(obj):
        obj["spec"]["cluster"] = "cluster-2"
    refused("handing a record of its own to cluster-2 (spec.cluster)", replaced(
        "serviceexportrecord", own_records[0], handed_over, dry_run=True))
    half = json.loads(json.dumps(own))
    half["spec"]["cluster"] = "cluster-2"
    refused("a record named and labelled cluster-1 whose spec.cluster is cluster-2", as_member1(
        "create", "--dry-run=server", "-f", "-", stdin=json.dumps(half)))
    # Broker EndpointSlices.
    slice_ = strip(their_slice)
    slice_["metadata"]["name"] = "forged-g-cluster-2"
    slice_["metadata"].pop("generateName", None)
    refused("creating an EndpointSlice of cluster-2", as_member1("create", "-f", "-",
                                                                stdin=json.dumps(slice_)))
    slice_name = their_slice["metadata"]["name"]
    refused("updating cluster-2's EndpointSlice", replaced("endpointslice", slice_name, annotated))

    def relabelled(obj):
        obj["metadata"]["labels"][SOURCE_CLUSTER] = "cluster-1"
    refused("relabelling cluster-2's EndpointSlice as cluster-1's",
            replaced("endpointslice", slice_name, relabelled))
    refused("deleting cluster-2's EndpointSlice", as_member1(
        "-n", BROKER_NS, "delete", "endpointslice", their_slice["metadata"]["name"],
        "--wait=false"))
    own_slice = json.loads(json.dumps(slice_).replace("cluster-2", "cluster-1"))
    own_slice["metadata"]["name"] = "own-g-cluster-1"
    allowed("creating an EndpointSlice of its own", as_member1(
        "create", "--dry-run=server", "-f", "-", stdin=json.dumps(own_slice)))
    # Leases: the update of another's is RBAC's (resourceNames) as well as the policy's.
    refused("updating cluster-2's Lease", replaced("lease", "mcs-cluster-2", annotated),
            by_policy=False)
    refused("deleting cluster-2's Lease", as_member1(
        "-n", BROKER_NS, "delete", "lease", "mcs-cluster-2", "--wait=false"), by_policy=False)
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "mcs-cluster-3", "namespace": BROKER_NS},
             "spec": {"holderIdentity": "forger", "leaseDurationSeconds": 30}}
    refused("creating the Lease of another cluster", as_member1(
        "create", "-f", "-", stdin=json.dumps(lease)))
    after = cs.broker.get_json("-n", BROKER_NS, "serviceexportrecord", record_name)
    checks.check("cluster-2's record and slice are untouched",
                 "forged" not in (after["metadata"].get("annotations") or {}) and
                 [x["metadata"]["name"] for x in slices_of("cluster-2")] == [slice_name], after)
    # The administrator is left to RBAC: it may (the policy matches member-* accounts only).
    allowed("the administrator writing cluster-2's record", cs.broker.kubectl(
        "-n", BROKER_NS, "annotate", "--dry-run=server", "serviceexportrecord", record_name,
        "admin=true", check=False))
    for context in cs.clusters:
        cs.kubectl(context, "delete", "namespace", ns, "--wait=false")


def check_no_refused_writes(cs):
    for cluster in cs.clusters:
        lines = [line for line in cs.agent_log(cluster).splitlines() if REFUSED.search(line)]
        checks.eq("%s's agent: no write refused, no key given up" % cluster, lines[:10], [])


def check_conformance(cs):
    """The upstream conformance suite, run unchanged against this ClusterSet's members."""
    suite_dir = run_conformance.DEFAULT_SUITE_DIR
    if not os.path.isfile(os.path.join(suite_dir, "mcs-conformance.test.xz")):
        print("note: no MCS conformance suite in %s (set SW_CONFORMANCE_DIR): not run" % suite_dir,
              flush=True)
        return
    report_dir = os.path.join(cs.workdir, "conformance")
    started = time.monotonic()
    runner = subprocess.run(
        [sys.executable, run_conformance.__file__, "--kubeconfig", cs.kubeconfig,
         "--contexts", ",".join(cs.clusters), "--report-dir", report_dir,
         "--timeout", str(400 * control_plane.SLOW)],
        stdin=subprocess.DEVNULL, timeout=580 * control_plane.SLOW)
    print("the conformance suite ran in %.1f s" % (time.monotonic() - started), flush=True)
    checks.eq("the upstream conformance suite: every counted spec passed", runner.returncode, 0)
    publish = os.environ.get("SW_CONFORMANCE_PUBLISH")
    if publish and runner.returncode == 0:
        os.makedirs(publish, exist_ok=True)
        for source, target in (("report.html", "slicewright-kube-apiserver.html"),
                               ("report.yaml", "slicewright-kube-apiserver.yaml")):
            shutil.copyfile(os.path.join(report_dir, source), os.path.join(publish, target))
        print("published %s/slicewright-kube-apiserver.{html,yaml}" % publish, flush=True)


def main():
    binary = binary_from_argv()
    install_sigterm_exit()
    control_plane.skip_unless_assets()
    started = time.monotonic()
    cs = clusterset.ClusterSet(tempfile.mkdtemp(prefix="sw-realcluster-mcs."), binary,
                               dual_stack=True, run_pods=True,
                               # Renewed every 3 s: the Lease-expiry checks wait for a renewal.
                               agent_args=["--mcs-lease-duration=9s"])
    try:
        cs.start()
        info = cs.describe()
        print("ClusterSet (broker %s, members %s) up in %.1f s" % (
            info["broker_version"], ", ".join(sorted(set(info["versions"].values()))),
            info["startup_seconds"]), flush=True)
        checks.run("services", lambda: mcs_checks.check_services(cs, checks))
        checks.run("dns", lambda: mcs_checks.check_dns(cs, checks))
        checks.run("example", lambda: mcs_checks.check_example(cs, checks))
        checks.run("bad input", lambda: mcs_checks.check_bad_input(cs, checks))
        checks.run("IP families", lambda: mcs_checks.check_cluster_ip_families(cs, checks))
        checks.run("forging guard", lambda: check_forging_guard(cs))
        checks.run("conformance", lambda: check_conformance(cs))
        checks.run("no refused writes", lambda: check_no_refused_writes(cs))
    except Exception as error:  # noqa: BLE001 - a ClusterSet that does not come up fails
        checks.fail("the ClusterSet comes up", str(error))
    finally:
        cs.cleanup(keep=checks.failed > 0)
    print("wall time %.1f s" % (time.monotonic() - started), flush=True)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
