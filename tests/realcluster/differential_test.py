#!/usr/bin/python3
"""The drop-in claim, checked (issue #30 §2): the same objects go to two real control planes,
one running kube-controller-manager's endpointslice, endpointslicemirroring and endpoint
controllers, the other `slicewright controller-manager` as deploy/ runs it (its ServiceAccount's
token and RBAC). Once both settle, every EndpointSlice group (namespace, Service, managed-by,
address type: the endpoints as a multiset, ports, number of slices, labels, annotations, owners)
and every Endpoints object must be the same, but for what docs/design.md lists as ours by design.
The named cases (endpoint_cases.py) run in phases, with a seeded random part beside them; then,
on kube-controller-manager's cluster, the takeover: its controllers stopped and ours started on
what they wrote must write nothing; and back, kube-controller-manager started on ours, whose
writes are counted and each explained.

KEP-4770: kube-controller-manager does not know service.kubernetes.io/endpoint-controller-name, so
for a Service handed to another controller each side is checked for what it should do (ours
leaves it alone, kube-controller-manager manages it like its unlabelled twin).

Usage: /usr/bin/python3 differential_test.py PATH/TO/slicewright
  SW_DIFF_SEED     the random part's seed (default: from the clock; printed)
  SW_DIFF_OPS      random steps per phase (default 30; a larger run: 400)
  SW_DIFF_PODS     pods of the "many" case (default 150)
  SW_DIFF_MIRRORED addresses of the mirrored Endpoints past 1,000 (default 1050)
  SW_DIFF_CAPACITY pods of a Service past the Endpoints' 1,000 addresses (default 0: no such case;
                   1100 in the run by hand)
(KUBEBUILDER_ASSETS names the envtest folder; exit 77 without it.)
"""

import json
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))

import control_plane  # noqa: E402
import endpoint_cases  # noqa: E402
import endpoint_harness as harness  # noqa: E402
from e2e_server import Checks, install_sigterm_exit, wait_until  # noqa: E402

checks = Checks("realcluster_differential_test")
SENTINELS = "sentinel"
MANAGERS = []  # every manager started, killed at the end whatever happened


def make_planes(workdir):
    return {name: control_plane.ControlPlane(os.path.join(workdir, name), dual_stack=True,
                                             name=name)
            for name in ("kcm", "ours")}


def start_planes(planes):
    """Starts both at once (a failure stops neither: the caller's cleanup does)."""
    errors = []

    def start(plane):
        try:
            plane.start()
        except Exception as error:  # noqa: BLE001 - reported
            errors.append("%s: %s" % (plane.name, error))

    threads = [threading.Thread(target=start, args=(p,)) for p in planes.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError("; ".join(errors))


def start_ours(plane, binary, name, extra_overrides=None):
    """deploy/ applied as an operator would, then our manager with its ServiceAccount's token."""
    plane.kubectl("apply", "-k", os.path.join(harness.REPO, "deploy"))
    kubeconfig = plane.service_account_kubeconfig("kube-system", "slicewright-controller-manager")
    manager = harness.OurManager(binary, kubeconfig, os.path.join(plane.log_dir, name + ".log"),
                                 overrides=extra_overrides)
    MANAGERS.append(manager)
    if not wait_until(30, manager.synced, interval=0.1):
        raise RuntimeError("%s did not start:\n%s" % (name, manager.text()[-3000:]))
    return manager


def handed_expectations(kcm_api, ours_api, handed_services):
    """KEP-4770: ours leaves a handed Service alone; kube-controller-manager manages it as it
    manages the unlabelled twin ("plain")."""
    ns = endpoint_cases.HANDED
    kcm = harness.snapshot(kcm_api)
    ours = harness.snapshot(ours_api)

    def groups(state, name):
        return {k[3:]: v for k, v in state.items()
                if k[0] == "slices" and k[1] == ns and k[2] == name}

    problems = []
    for name in ("handed", "later"):
        mine = groups(ours, name)
        if name in handed_services:
            if mine or ("endpoints", ns, name) in ours:
                problems.append("ours wrote for handed %s: %s" % (name, sorted(mine)))
            theirs, plain = groups(kcm, name), groups(kcm, "plain")
            if {k: v["endpoints"] for k, v in theirs.items()} != \
                    {k: v["endpoints"] for k, v in plain.items()}:
                problems.append("kcm does not manage %s like plain" % name)
        else:
            if {k: v["endpoints"] for k, v in mine.items()} != \
                    {k: v["endpoints"] for k, v in groups(ours, "plain").items()}:
                problems.append("ours does not manage unlabelled %s like plain" % name)
    return problems


# ---- what an older kube-controller-manager does differently (docs/design.md) ----

def minor(plane):
    return int("".join(ch for ch in plane.version.split(".")[1] if ch.isdigit()))


def canonical_ip(text):
    import ipaddress

    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        parts = text.split(".")
        if len(parts) == 4 and all(p.isdigit() for p in parts):  # leading zeros: 010.080.002.004
            return ".".join(str(int(p)) for p in parts)
        return text


def _endpoint_lists(diff):
    key, field, kcm, ours = diff
    if key[0] != "slices" or field != "endpoints" or not isinstance(kcm, list):
        return None
    return [json.loads(e) for e in kcm], [json.loads(e) for e in ours]


SHARED_ADDRESS = ("kube-controller-manager before 1.27 keeps one of the pods that share an "
                  "address (hostNetwork pods of a node; kubernetes#115907); ours publishes each")
NON_CANONICAL = ("kube-controller-manager before 1.33 mirrors an address as written "
                 "(010.080.002.004); ours writes it canonical, as 1.33+ does (kubernetes#130101)")
EXTERNAL_NAME = ("kube-controller-manager 1.26 still reconciles an ExternalName Service that has "
                 "a selector (empty slices of both families, the headless label); ours leaves it "
                 "alone, as 1.34 does")


PACKING = ("how a Service's endpoints split into slices depends on which pod changes each sync "
           "saw (both controllers pack by upstream's rules, spec §4, but their syncs fall "
           "differently between the test's writes); the endpoints themselves are equal")


def known_difference(diff, version_minor, services):
    """Why a difference from kube-controller-manager (of this or an older version) is expected,
    or None."""
    key, field, kcm_value, ours_value = diff
    if key[0] == "slices" and field == "count" and min(kcm_value, ours_value) >= 2:
        return PACKING
    if key[0] == "slices" and field in ("labels", "annotations", "owners", "ports") and \
            isinstance(kcm_value, list) and len(kcm_value) != len(ours_value) and \
            sorted(set(kcm_value)) == sorted(set(ours_value)):
        return PACKING  # the same per-slice values, on more or fewer slices
    key = diff[0]
    svc = services.get(tuple(key[1:3]))
    if version_minor < 33 and svc is not None and svc["spec"].get("type") == "ExternalName":
        return EXTERNAL_NAME
    lists = _endpoint_lists(diff)
    if lists is None:
        return None
    kcm, ours = lists
    if version_minor < 27:
        # Addresses that more than one pod holds, on either side.
        pods = {}
        for e in kcm + ours:
            pods.setdefault(tuple(e["addresses"]), set()).add(
                (e.get("targetRef") or {}).get("name"))
        shared = {a for a, names in pods.items() if len(names) > 1}

        def rest(side):
            return sorted(json.dumps(e, sort_keys=True) for e in side
                          if tuple(e["addresses"]) not in shared)

        if shared and rest(kcm) == rest(ours):
            return SHARED_ADDRESS
    if version_minor < 33:
        canonical = sorted(json.dumps(dict(e, addresses=[canonical_ip(a) for a in e["addresses"]]),
                                      sort_keys=True) for e in kcm)
        if canonical == sorted(json.dumps(e, sort_keys=True) for e in ours):
            return NON_CANONICAL
    return None


def settled(kcm_api, ours_api, handed_services, phase, version_minor=99):
    def ignore(key):
        return key[1] == endpoint_cases.HANDED and key[2] != "plain" or key[1] == SENTINELS

    services = services_of(ours_api)
    started = time.monotonic()
    diffs = harness.settle_and_compare(
        kcm_api, ours_api, deadline=60, ignore=ignore,
        known=lambda d: known_difference(d, version_minor, services))
    print("     (phase %d settled in %.1f s)" % (phase, time.monotonic() - started), flush=True)
    known = [(d, known_difference(d, version_minor, services)) for d in diffs]
    for diff, why in known:
        if why:
            print("     known difference: %s\n       (%s)" % (
                "/".join(map(str, diff[0])) + " " + diff[1], why), flush=True)
    unexplained = [d for d, why in known if not why]
    checks.check("phase %d: EndpointSlices and Endpoints equal to kube-controller-manager's" %
                 phase, not unexplained, *[harness.describe_difference(d) for d in unexplained])
    problems = wait_until(20, lambda: not handed_expectations(kcm_api, ours_api,
                                                              handed_services)) and []
    if problems is None:
        problems = handed_expectations(kcm_api, ours_api, handed_services)
    checks.check("phase %d: KEP-4770: ours leaves handed Services alone, kcm manages them" %
                 phase, not problems, *problems)


def sentinel(api, index):
    """A Service with a pod, created after a controller started: once its slice and Endpoints
    exist, the controller has taken every key queued before it."""
    ns = SENTINELS
    if api.get("Namespace", None, ns) is None:
        api.do(("create", harness.namespace(ns)))
    name = "s-%d" % index
    api.run([("create", harness.service(ns, name, {"app": name}))] +
            harness.pod_ops(harness.pod(ns, name, {"app": name}, "node-a"),
                            ["10.250.0.%d" % index]))

    def done():
        slices, _ = api.list("EndpointSlice", ns, harness.LABEL_SERVICE_NAME + "=" + name)
        ep = api.get("Endpoints", ns, name)
        return any(s.get("endpoints") for s in slices) and ep and ep.get("subsets")

    return wait_until(30, done, interval=0.1)


def quiet_writes(watch, seconds=2.0):
    """Waits until the watch saw no new write for `seconds` (a measurement window, bounded)."""
    deadline = time.monotonic() + 30 * control_plane.SLOW
    last, since = watch.count(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = watch.count()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return


def services_of(api):
    items, _ = api.list("Service")
    return {(s["metadata"]["namespace"], s["metadata"]["name"]): s for s in items}


def service_of_write(event):
    """The (namespace, Service name) a recorded write concerns."""
    _, (kind, ns, name), before, after = event
    if kind == "Endpoints":
        return ns, name
    obj = after or before
    return ns, (obj["metadata"].get("labels") or {}).get(harness.LABEL_SERVICE_NAME, "")


def handed_to_another(svc):
    return bool(svc) and harness.LABEL_CONTROLLER_NAME in (svc["metadata"].get("labels") or {})


def explain_takeover_write(event, services, version_minor=99):
    """Why ours, started on kube-controller-manager's objects, may write (docs/design.md), or
    None: a write that should not happen."""
    kind_of_event, (kind, _, _), _, _ = event
    svc = services.get(service_of_write(event))
    if kind_of_event == "DELETED" and handed_to_another(svc):
        return ("KEP-4770: the Service is handed to another controller; kube-controller-manager, "
                "which does not know the label, wrote for it, and ours deletes what the built-in "
                "controllers wrote")
    if kind_of_event == "DELETED" and kind == "Endpoints" and svc is None:
        return ("an Endpoints without a Service: deleted at start, as kube-controller-manager's "
                "own start does (checkLeftoverEndpoints)")
    return older_version_write(event, version_minor)


def older_version_write(event, version_minor):
    """A write that comes from what an older kube-controller-manager does differently (either
    way: ours correcting its slice, or it undoing ours), or None."""
    kind_of_event, (kind, _, _), before, after = event
    if kind_of_event != "MODIFIED" or kind != "EndpointSlice":
        return None
    diff = (("slices", "", ""), "endpoints",
            [json.dumps(e) for e in before.get("endpoints") or []],
            [json.dumps(e) for e in after.get("endpoints") or []])

    def both_ways(d):
        return known_difference(d, version_minor, {}) or known_difference(
            (d[0], d[1], d[3], d[2]), version_minor, {})

    for candidate in (diff, (diff[0], diff[1], [json.dumps(normal(e)) for e in
                                                before.get("endpoints") or []],
                             [json.dumps(normal(e)) for e in after.get("endpoints") or []])):
        why = both_ways(candidate)
        if why:
            return why
    return None


def normal(endpoint):
    """A slice endpoint as the snapshot normalises it, without the pod uid."""
    out = dict(endpoint)
    if out.get("targetRef"):
        out["targetRef"] = {k: v for k, v in out["targetRef"].items() if k != "uid"}
    return out


def explain_back_write(event, services, version_minor=99):
    """Why kube-controller-manager, started on ours' objects, writes (docs/design.md), or None."""
    kind_of_event, (kind, _, _), _, _ = event
    svc = services.get(service_of_write(event))
    if kind_of_event == "ADDED" and handed_to_another(svc):
        return ("KEP-4770: kube-controller-manager does not know the label and manages a Service "
                "handed to another controller")
    if kind_of_event == "MODIFIED" and kind == "EndpointSlice" and svc is not None and \
            svc["spec"].get("clusterIP") == "None" and not svc["spec"].get("ports"):
        return ("kube-controller-manager (<= 1.34) rewrites the slice of a headless Service "
                "without ports at its start: the stored `ports: null` and its desired `[]` give "
                "different port-map keys; it does so on its own slices too")
    if kind_of_event == "MODIFIED" and svc is not None and version_minor < 33 and \
            svc["spec"].get("type") == "ExternalName":
        return EXTERNAL_NAME
    return older_version_write(event, version_minor)


def takeover(plane, api, binary, kcm_process):
    """kube-controller-manager's controllers stopped, ours started on what they wrote: 0 writes.
    Then ours stopped and kube-controller-manager started on ours: its writes, explained."""
    harness.stop_process(plane, kcm_process)
    watch = harness.WriteWatch(api, skip_namespaces=(SENTINELS,)).start()
    manager = start_ours(plane, binary, "ours-takeover")
    handled = wait_until(30, lambda: manager.idle(), interval=0.2)
    checks.check("takeover: ours handled the sentinel", sentinel(api, 1))
    wait_until(30, manager.idle, interval=0.2)
    quiet_writes(watch)
    events = watch.stop()
    services = services_of(api)
    version_minor = minor(plane)
    unexplained = [e for e in events
                   if explain_takeover_write(e, services, version_minor) is None]
    checks.check("takeover: ours started on kube-controller-manager's objects writes nothing "
                 "(but what docs/design.md explains)", handled and not unexplained,
                 *[harness.explain_write(e) for e in unexplained[:40]])
    print("     takeover from kube-controller-manager %s: %d writes, %d unexplained" %
          (plane.version, len(events), len(unexplained)), flush=True)
    for event in events:
        print("       %s\n         (%s)" % (harness.explain_write(event),
                                           explain_takeover_write(event, services, version_minor)),
              flush=True)
    checks.eq("takeover: no 403 in ours' log or metrics", manager.forbidden(), [])
    manager.terminate()

    watch = harness.WriteWatch(api, skip_namespaces=(SENTINELS,)).start()
    kcm = harness.start_kcm_endpoint_controllers(plane, name="kcm-back")
    checks.check("back: kube-controller-manager's caches synced", harness.wait_kcm_synced(kcm))
    checks.check("back: kube-controller-manager handled the sentinel", sentinel(api, 2))
    quiet_writes(watch)
    events = watch.stop()
    services = services_of(api)
    unexplained = [e for e in events if explain_back_write(e, services, version_minor) is None]
    print("     back: kube-controller-manager %s started on ours: %d writes, %d unexplained" %
          (plane.version, len(events), len(unexplained)), flush=True)
    for event in events:
        print("       %s\n         (%s)" % (harness.explain_write(event),
                                           explain_back_write(event, services, version_minor)),
              flush=True)
    checks.check("back: every write of kube-controller-manager started on ours is explained",
                 not unexplained, *[harness.explain_write(e) for e in unexplained[:40]])
    return events


def main():
    install_sigterm_exit()
    control_plane.skip_unless_assets()
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: differential_test.py PATH/TO/slicewright")
    binary = os.path.abspath(sys.argv[1])
    seed = int(os.environ.get("SW_DIFF_SEED", str(int(time.time()) % 100000)))
    operations = int(os.environ.get("SW_DIFF_OPS", "30"))
    pods = int(os.environ.get("SW_DIFF_PODS", "150"))
    mirrored = int(os.environ.get("SW_DIFF_MIRRORED", "1050"))
    capacity = int(os.environ.get("SW_DIFF_CAPACITY", "0"))
    print("seed %d (SW_DIFF_SEED), %d random steps per phase (SW_DIFF_OPS)" % (seed, operations),
          flush=True)
    workdir = tempfile.mkdtemp(prefix="sw-realcluster-differential.")
    started = time.monotonic()
    planes = make_planes(workdir)
    failed_before = checks.failed
    try:
        start_planes(planes)
        kcm_plane, ours_plane = planes["kcm"], planes["ours"]
        print("control planes %s up in %.1f s" % (kcm_plane.version, time.monotonic() - started),
              flush=True)
        kcm_api, ours_api = harness.Api(kcm_plane), harness.Api(ours_plane)
        kcm_process = harness.start_kcm_endpoint_controllers(kcm_plane)
        manager = start_ours(ours_plane, binary, "ours")
        checks.check("kube-controller-manager's endpoint controllers synced",
                     harness.wait_kcm_synced(kcm_process))
        harness.run_everywhere([kcm_api, ours_api], harness.node_ops(endpoint_cases.NODES))

        cases = endpoint_cases.named_cases(big_pods=pods, mirrored_addresses=mirrored,
                                           over_capacity=capacity)
        randoms = endpoint_cases.random_phases(seed, operations, phases=2)
        phases = max(max(len(c.phases) for c in cases), len(randoms))
        handed = {"handed"}
        for phase in range(phases):
            sequences = [case.ops(phase) for case in cases]
            if phase < len(randoms):
                sequences.append(randoms[phase])
            began = time.monotonic()
            harness.run_everywhere([kcm_api, ours_api], *sequences)
            print("     (phase %d: %d steps on each cluster in %.1f s)" %
                  (phase, sum(map(len, sequences)), time.monotonic() - began), flush=True)
            handed = {"handed", "later"} if phase == 1 else {"handed"}
            settled(kcm_api, ours_api, handed, phase, minor(kcm_plane))
        checks.eq("no 403 in ours' log or metrics", manager.forbidden(), [])
        manager.terminate()

        takeover(kcm_plane, kcm_api, binary, kcm_process)
    except Exception as error:  # noqa: BLE001 - any failure is a failed check
        import traceback

        checks.fail("differential: raised", *traceback.format_exc().splitlines())
        del error
    finally:
        keep = checks.failed > failed_before
        for manager in MANAGERS:
            manager.kill()
        import shutil

        for plane in planes.values():
            plane.stop()
            # etcd's data lives on tmpfs: never kept (the logs are in the work folder).
            shutil.rmtree(getattr(plane, "etcd_data", ""), ignore_errors=True)
        if keep or os.environ.get("E2E_KEEP"):
            print("(kept %s for inspection)" % workdir, flush=True)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print("differential: %.1f s" % (time.monotonic() - started), flush=True)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
