"""What the endpoint-controller tests of the real-cluster tier share (controllers_test.py,
differential_test.py): a small REST client for one control plane, builders of the objects the
scenarios use, a normalised snapshot of every EndpointSlice and Endpoints (what two clusters are
compared on), a watch that counts the writes to them, and the two ways to run the endpoint
controllers: `slicewright controller-manager` as deploy/ runs it (its ServiceAccount's token, its
flags) and kube-controller-manager's `endpointslice,endpointslicemirroring,endpoint`.
"""

import http.client
import json
import os
import re
import signal
import ssl
import subprocess
import threading
import time
import urllib.parse

import control_plane

SLOW = control_plane.SLOW
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

SLICE_MANAGER = "endpointslice-controller.k8s.io"
MIRROR_MANAGER = "endpointslicemirroring-controller.k8s.io"
MULTINETWORK = "multinetwork.slicewright.io"
LABEL_SERVICE_NAME = "kubernetes.io/service-name"
LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
LABEL_CONTROLLER_NAME = "service.kubernetes.io/endpoint-controller-name"
LABEL_SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"
ENDPOINTS_MANAGED_BY = "endpoints.kubernetes.io/managed-by"
TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"
# Ours by design: the mark our Endpoints controller leaves on what it wrote (docs/design.md,
# KEP-4770).
OUR_ENDPOINTS_ANNOTATION = "endpoints.slicewright.io/written-subsets"
KEEP_TERMINATING = control_plane.Kubelet.KEEP_TERMINATING
NETWORK_STATUS = "k8s.v1.cni.cncf.io/network-status"
SERVICE_NETWORK = "k8s.v1.cni.cncf.io/service-network"
# A fixed Ready transition time, so both clusters see the same pod trigger times.
TRANSITION = "2026-01-01T00:00:00Z"
LEASE = "slicewright-controller-manager"


class ApiError(Exception):
    def __init__(self, method, path, status, body):
        super().__init__("%s %s: %s %s" % (method, path, status, body[:300]))
        self.status = status


# ---- REST ----

_PATHS = {
    "Namespace": ("/api/v1", "namespaces", False), "Node": ("/api/v1", "nodes", False),
    "Pod": ("/api/v1", "pods", True), "Service": ("/api/v1", "services", True),
    "Endpoints": ("/api/v1", "endpoints", True),
    "EndpointSlice": ("/apis/discovery.k8s.io/v1", "endpointslices", True),
    "Lease": ("/apis/coordination.k8s.io/v1", "leases", True),
    "ServiceAccount": ("/api/v1", "serviceaccounts", True),
}


def path_of(kind, namespace=None, name=None, subresource=None):
    prefix, plural, namespaced = _PATHS[kind]
    path = prefix
    if namespaced and namespace:
        path += "/namespaces/" + namespace
    path += "/" + plural
    if name:
        path += "/" + name
    if subresource:
        path += "/" + subresource
    return path


class Api:
    """JSON over HTTPS to one control plane as its admin (client certificate), one keep-alive
    connection per thread."""

    def __init__(self, plane):
        self.plane = plane
        self.context = ssl.create_default_context(cafile=plane.certs.ca_crt)
        self.context.load_cert_chain(plane.certs.admin_crt, plane.certs.admin_key)
        host, port = plane.server[len("https://"):].rsplit(":", 1)
        self.host, self.port = host, int(port)
        self.local = threading.local()

    def connection(self, timeout=30):
        return http.client.HTTPSConnection(self.host, self.port, timeout=timeout * SLOW,
                                           context=self.context)

    def request(self, method, path, body=None, content_type="application/json"):
        """(status, decoded body); retries once on a dropped keep-alive connection."""
        payload = json.dumps(body) if body is not None else None
        headers = {"Content-Type": content_type} if payload is not None else {}
        for attempt in range(3):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = self.connection()
            try:
                conn.request(method, path, body=payload, headers=headers)
                response = conn.getresponse()
                data = response.read()
                return response.status, (json.loads(data) if data else {})
            except (http.client.HTTPException, OSError):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
                time.sleep(0.1)

    def call(self, method, path, body=None, content_type="application/json", ok=(200, 201, 202)):
        status, answer = self.request(method, path, body, content_type)
        if status not in ok:
            raise ApiError(method, path, status, json.dumps(answer))
        return answer

    def get(self, kind, namespace, name):
        status, answer = self.request("GET", path_of(kind, namespace, name))
        return answer if status == 200 else None

    def list(self, kind, namespace=None, selector=None):
        path = path_of(kind, namespace)
        if selector:
            path += "?labelSelector=" + urllib.parse.quote(selector)
        answer = self.call("GET", path)
        return answer.get("items") or [], answer["metadata"]["resourceVersion"]

    def create(self, obj):
        meta = obj["metadata"]
        return self.call("POST", path_of(obj["kind"], meta.get("namespace")), obj)

    def merge_patch(self, kind, namespace, name, patch, subresource=None):
        return self.call("PATCH", path_of(kind, namespace, name, subresource), patch,
                         "application/merge-patch+json")

    def delete(self, kind, namespace, name, grace=None, missing_ok=True):
        body = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if grace is not None:
            body["gracePeriodSeconds"] = grace
        status, answer = self.request("DELETE", path_of(kind, namespace, name), body)
        if status not in (200, 202) and not (missing_ok and status == 404):
            raise ApiError("DELETE", path_of(kind, namespace, name), status, json.dumps(answer))

    def do(self, op):
        """One scenario step: ("create", obj) | ("patch", kind, ns, name, merge-patch) |
        ("status", ns, pod, status) | ("node-status", node, status) | ("delete", kind, ns, name) |
        ("terminate", ns, pod): a graceful delete the simulated kubelet leaves Terminating."""
        verb = op[0]
        if verb == "node-status":
            self.merge_patch("Node", None, op[1], {"status": op[2]}, subresource="status")
        elif verb == "create":
            self.create(op[1])
            if op[1]["kind"] == "Namespace":
                self.wait_default_service_account(op[1]["metadata"]["name"])
        elif verb == "patch":
            self.merge_patch(op[1], op[2], op[3], op[4])
        elif verb == "status":
            self.merge_patch("Pod", op[1], op[2], {"status": op[3]}, subresource="status")
        elif verb == "delete":
            self.delete(op[1], op[2], op[3], grace=0 if op[1] == "Pod" else None)
        elif verb == "terminate":  # graceful: the simulated kubelet leaves it Terminating
            self.merge_patch("Pod", op[1], op[2], {"metadata": {"annotations": {
                KEEP_TERMINATING: "true"}}})
            self.delete("Pod", op[1], op[2])
        else:
            raise ValueError("unknown op %r" % (op,))

    def wait_default_service_account(self, ns, seconds=30):
        """The serviceaccount controller makes it; until then ServiceAccount admission refuses
        pods."""
        deadline = time.monotonic() + seconds * SLOW
        while self.get("ServiceAccount", ns, "default") is None:
            if time.monotonic() > deadline:
                raise RuntimeError("no default ServiceAccount in %s" % ns)
            time.sleep(0.05)

    def run(self, ops):
        for op in ops:
            self.do(op)


def run_everywhere(apis, *sequences):
    """Applies the same steps to every cluster and waits for all: each sequence of steps in
    order, the sequences (independent of each other) and the clusters at once, a thread each."""
    errors = []

    def worker(api, ops):
        try:
            api.run(ops)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append("%s: %s" % (api.plane.name, error))

    threads = [threading.Thread(target=worker, args=(api, ops))
               for api in apis for ops in sequences if ops]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError("; ".join(errors))


# ---- objects ----

def namespace(name):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def node(name, zone, address, cpu="4"):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
        "topology.kubernetes.io/zone": zone}}, "_address": address, "_cpu": cpu}


def node_ops(nodes):
    """Creating Nodes as kubelets register them: the object, then a Ready status with an address
    and allocatable CPU (topology hints weigh zones by it)."""
    ops = []
    for n in nodes:
        obj = {k: v for k, v in n.items() if not k.startswith("_")}
        ops.append(("create", obj))
        ops.append(("node-status", n["metadata"]["name"], {
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "test kubelet", "lastTransitionTime": TRANSITION,
                            "lastHeartbeatTime": TRANSITION}],
            "addresses": [{"type": "InternalIP", "address": n["_address"]}],
            "allocatable": {"cpu": n["_cpu"], "memory": "8Gi", "pods": "110"},
            "capacity": {"cpu": n["_cpu"], "memory": "8Gi", "pods": "110"}}))
    return ops


def service(ns, name, selector=None, ports=None, labels=None, annotations=None, **spec):
    body = {"ports": [{"name": "http", "port": 80, "targetPort": "http"}] if ports is None
            else ports}
    if selector is not None:
        body["selector"] = selector
    body.update(spec)
    if not body["ports"]:
        del body["ports"]
    meta = {"name": name, "namespace": ns}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": body}


def pod(ns, name, labels, node_name="node-a", ports=(("http", 8080, "TCP"),), sidecar_ports=(),
        hostname=None, subdomain=None, annotations=None, host_network=False):
    spec = {"nodeName": node_name, "containers": [{
        "name": "app", "image": "registry.k8s.io/pause:3.9",
        "ports": [{"name": n, "containerPort": p, "protocol": proto} for n, p, proto in ports]}]}
    if sidecar_ports:
        spec["initContainers"] = [{
            "name": "sidecar", "image": "registry.k8s.io/pause:3.9", "restartPolicy": "Always",
            "ports": [{"name": n, "containerPort": p, "protocol": proto}
                      for n, p, proto in sidecar_ports]}]
    if hostname:
        spec["hostname"] = hostname
    if subdomain:
        spec["subdomain"] = subdomain
    if host_network:
        spec["hostNetwork"] = True
    meta = {"name": name, "namespace": ns, "labels": labels}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def pod_status(ips, ready=True, phase="Running", host_ip="10.0.0.1"):
    """A status as a kubelet writes it, with a fixed Ready transition time."""
    flag = "True" if ready else "False"
    return {"phase": phase, "podIP": ips[0] if ips else None,
            "podIPs": [{"ip": ip} for ip in ips], "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "conditions": [{"type": t, "status": s, "lastTransitionTime": TRANSITION}
                           for t, s in (("PodScheduled", "True"), ("Initialized", "True"),
                                        ("ContainersReady", flag), ("Ready", flag))]}


def pod_ops(p, ips, ready=True, phase="Running", host_ip="10.0.0.1"):
    """A pod created, then its status written as its kubelet would."""
    ops = [("create", p)]
    ops.append(("status", p["metadata"]["namespace"], p["metadata"]["name"],
                pod_status(ips, ready, phase, host_ip)))
    return ops


def endpoints(ns, name, subsets, labels=None, annotations=None):
    meta = {"name": name, "namespace": ns}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta, "subsets": subsets}


def ready_op(ns, name, ips, ready):
    return ("status", ns, name, pod_status(ips, ready))


# ---- snapshots ----

def _condition(endpoint, name):
    return (endpoint.get("conditions") or {}).get(name)


def normalise_endpoint(endpoint, pod_uids):
    """An EndpointSlice endpoint as compared: the targetRef's uid is checked against the pod of
    that name in its own cluster (uids differ between clusters) and replaced by the verdict."""
    ref = endpoint.get("targetRef")
    if ref is not None:
        uid = ref.get("uid")
        key = (ref.get("namespace"), ref.get("name"))
        verdict = "uid ok" if uid and pod_uids.get(key) == uid else \
            ("no uid" if not uid else "uid of another object")
        ref = {"kind": ref.get("kind"), "namespace": ref.get("namespace"),
               "name": ref.get("name"), "uid": verdict,
               **({"resourceVersion": "<set>"} if ref.get("resourceVersion") else {})}
    return json.dumps({
        "addresses": endpoint.get("addresses"),
        "ready": _condition(endpoint, "ready"), "serving": _condition(endpoint, "serving"),
        "terminating": _condition(endpoint, "terminating"),
        "nodeName": endpoint.get("nodeName"), "zone": endpoint.get("zone"),
        "hostname": endpoint.get("hostname"), "hints": endpoint.get("hints"),
        "targetRef": ref}, sort_keys=True)


def _annotations(meta, drop_ours):
    """Annotations as compared: not the trigger time (its value is a time of this cluster, and
    whether it is set depends on which changes the last sync saw, so on timing: docs/design.md),
    ours by design left out when `drop_ours`."""
    out = {}
    for key, value in (meta.get("annotations") or {}).items():
        if key == TRIGGER_TIME:
            continue
        if drop_ours and key.startswith("endpoints.slicewright.io/"):
            continue
        else:
            out[key] = value
    return out


def _owners(meta):
    return sorted(json.dumps({k: o.get(k) for k in ("apiVersion", "kind", "name", "controller",
                                                      "blockOwnerDeletion")}, sort_keys=True)
                  for o in meta.get("ownerReferences") or [])


def _address_key(address):
    ref = address.get("targetRef") or {}
    return (address.get("ip"), ref.get("name") or "")


def normalise_address(address, pod_uids):
    ref = address.get("targetRef")
    if ref is not None:
        uid = ref.get("uid")
        ok = uid and pod_uids.get((ref.get("namespace"), ref.get("name"))) == uid
        ref = {"kind": ref.get("kind"), "namespace": ref.get("namespace"),
               "name": ref.get("name"), "uid": "uid ok" if ok else ("no uid" if not uid else
                                                                    "uid of another object")}
    return {"ip": address.get("ip"), "hostname": address.get("hostname"),
            "nodeName": address.get("nodeName"), "targetRef": ref}


def _spew_optional(value):
    return "<nil>" if value is None else value


def _spew_port(port):
    return "{Name:(string)%s Port:(int32)%d Protocol:(v1.Protocol)%s AppProtocol:(*string)%s}" % (
        port.get("name", ""), port.get("port", 0), port.get("protocol", "TCP"),
        _spew_optional(port.get("appProtocol")))


def _spew_address(address):
    ref = address.get("targetRef")
    ref_text = "<nil>" if ref is None else (
        "{Kind:(string)%s Namespace:(string)%s Name:(string)%s UID:(types.UID)%s "
        "APIVersion:(string)%s ResourceVersion:(string)%s FieldPath:(string)%s}" % tuple(
            ref.get(k, "") for k in ("kind", "namespace", "name", "uid", "apiVersion",
                                     "resourceVersion", "fieldPath")))
    return ("{IP:(string)%s Hostname:(string)%s NodeName:(*string)%s "
            "TargetRef:(*v1.ObjectReference)%s}") % (
        address.get("ip", ""), address.get("hostname", ""), _spew_optional(address.get("nodeName")),
        ref_text)


def _spew_list(field, type_name, items, element):
    body = "<nil>" if not items else "[" + " ".join(element(i) for i in items) + "]"
    return "%s:([]%s)%s" % (field, type_name, body)


def upstream_subset_order(subsets):
    """Whether `subsets` are in the order upstream's SortSubsets gives (ports, then subsets, by
    the MD5 of go-spew's "%#v" printout): an independent reading of what the Endpoints controller
    writes, checked against kube-controller-manager's objects and ours alike."""
    import hashlib

    def md5(text):
        return hashlib.md5(text.encode()).digest()

    for subset in subsets:
        ports = subset.get("ports") or []
        if ports != sorted(ports, key=lambda p: md5("(v1.EndpointPort)" + _spew_port(p))):
            return False

    def subset_key(subset):
        return md5("(v1.EndpointSubset){%s %s %s}" % (
            _spew_list("Addresses", "v1.EndpointAddress", subset.get("addresses"), _spew_address),
            _spew_list("NotReadyAddresses", "v1.EndpointAddress", subset.get("notReadyAddresses"),
                       _spew_address),
            _spew_list("Ports", "v1.EndpointPort", subset.get("ports"), _spew_port)))
    return subsets == sorted(subsets, key=subset_key)


def normalise_endpoints_object(obj, pod_uids):
    """An Endpoints as compared: subsets in a canonical order (addresses by IP then pod name,
    ports by value, subsets by value); whether the stored order was already that one is kept
    apart (`order`), as kube-controller-manager orders by a hash (docs/design.md)."""
    canonical = []
    for subset in obj.get("subsets") or []:
        canonical.append({
            "addresses": [normalise_address(a, pod_uids) for a in
                          sorted(subset.get("addresses") or [], key=_address_key)],
            "notReadyAddresses": [normalise_address(a, pod_uids) for a in
                                  sorted(subset.get("notReadyAddresses") or [],
                                         key=_address_key)],
            "ports": sorted((subset.get("ports") or []),
                            key=lambda p: json.dumps(p, sort_keys=True))})
    canonical.sort(key=lambda s: json.dumps(s, sort_keys=True))
    subsets = obj.get("subsets") or []
    return {"subsets": json.dumps(canonical, sort_keys=True),
            # Only meaningful for an Endpoints a controller wrote from pods (truncation keeps the
            # order), compared as a verdict since the order depends on each cluster's pod uids.
            "upstream order": upstream_subset_order(subsets) if len(subsets) > 1 or any(
                len(s.get("ports") or []) > 1 for s in subsets) else "n/a",
            "labels": json.dumps(obj["metadata"].get("labels") or {}, sort_keys=True),
            "annotations": json.dumps(_annotations(obj["metadata"], drop_ours=True),
                                      sort_keys=True),
            "ours": sorted(k for k in (obj["metadata"].get("annotations") or {})
                           if k.startswith("endpoints.slicewright.io/"))}


def snapshot(api, skip_namespaces=()):
    """Every EndpointSlice and Endpoints of the cluster, normalised and grouped:
    ("slices", ns, service, managed-by, addressType) -> {count, endpoints (multiset), ports,
    labels, annotations, owners} and ("endpoints", ns, name) -> normalise_endpoints_object."""
    pods, _ = api.list("Pod")
    pod_uids = {(p["metadata"]["namespace"], p["metadata"]["name"]): p["metadata"]["uid"]
                for p in pods}
    slices, _ = api.list("EndpointSlice")
    objects, _ = api.list("Endpoints")
    state = {}
    for s in slices:
        meta = s["metadata"]
        if meta["namespace"] in skip_namespaces:
            continue
        labels = meta.get("labels") or {}
        key = ("slices", meta["namespace"], labels.get(LABEL_SERVICE_NAME, ""),
               labels.get(LABEL_MANAGED_BY, ""), s.get("addressType"))
        group = state.setdefault(key, {"count": 0, "endpoints": [], "ports": [], "labels": [],
                                       "annotations": [], "owners": []})
        group["count"] += 1
        group["endpoints"].extend(normalise_endpoint(e, pod_uids) for e in s.get("endpoints") or [])
        group["ports"].append(json.dumps(sorted((s.get("ports") or []),
                                                key=lambda p: json.dumps(p, sort_keys=True)),
                                         sort_keys=True))
        group["labels"].append(json.dumps(labels, sort_keys=True))
        group["annotations"].append(json.dumps(_annotations(meta, drop_ours=False),
                                               sort_keys=True))
        group["owners"].append(json.dumps(_owners(meta)))
    for group in state.values():
        for field in ("endpoints", "ports", "labels", "annotations", "owners"):
            group[field].sort()
    for obj in objects:
        meta = obj["metadata"]
        if meta["namespace"] in skip_namespaces or \
                "control-plane.alpha.kubernetes.io/leader" in (meta.get("annotations") or {}):
            continue
        state[("endpoints", meta["namespace"], meta["name"])] = \
            normalise_endpoints_object(obj, pod_uids)
    return state


def differences(reference, candidate, ignore=lambda key: False):
    """[(key, field, reference's value, candidate's value)] where the two snapshots differ."""
    out = []
    for key in sorted(set(reference) | set(candidate), key=str):
        if ignore(key):
            continue
        a, b = reference.get(key), candidate.get(key)
        if a is None or b is None:
            out.append((key, "present", a is not None, b is not None))
            continue
        for field in sorted(set(a) | set(b)):
            if field == "ours":
                continue
            if a.get(field) != b.get(field):
                out.append((key, field, a.get(field), b.get(field)))
    return out


def describe_difference(diff, width=600):
    key, field, a, b = diff

    def show(value):
        if isinstance(value, list) and value and isinstance(value[0], str):
            return "\n             ".join(value)
        text = json.dumps(value) if not isinstance(value, str) else value
        return text if len(text) < width else text[:width] + "..."

    if isinstance(a, list) and isinstance(b, list):
        only_a = [x for x in a if x not in b]
        only_b = [x for x in b if x not in a]
        return "%s %s:\n       kcm only:  %s\n       ours only: %s" % (
            "/".join(map(str, key)), field, show(only_a), show(only_b))
    return "%s %s:\n       kcm:  %s\n       ours: %s" % ("/".join(map(str, key)), field,
                                                        show(a), show(b))


def settle_and_compare(reference_api, candidate_api, deadline=60, quiet=3.0,
                       ignore=lambda key: False, skip_namespaces=(), known=lambda diff: None):
    """Polls both clusters until their snapshots are equal but for differences `known` explains
    (returns those) or neither changed for `quiet` seconds (returns every difference);
    `deadline` caps the wait."""
    deadline_at = time.monotonic() + deadline * SLOW
    last = None
    last_change = time.monotonic()
    while True:
        now_a = snapshot(reference_api, skip_namespaces)
        now_b = snapshot(candidate_api, skip_namespaces)
        diffs = differences(now_a, now_b, ignore)
        if all(known(d) for d in diffs):
            return diffs
        if (now_a, now_b) != last:
            last = (now_a, now_b)
            last_change = time.monotonic()
        elif time.monotonic() - last_change >= quiet * SLOW:
            return diffs
        if time.monotonic() >= deadline_at:
            return diffs
        time.sleep(0.3)


# ---- counting writes ----

class WriteWatch:
    """Watches EndpointSlices and Endpoints from a resourceVersion and records every change
    (type, kind, namespace/name, the object before and after), to count the writes a controller
    makes; `skip_namespaces` are not counted (sentinels)."""

    KINDS = (("EndpointSlice", "/apis/discovery.k8s.io/v1/endpointslices"),
             ("Endpoints", "/api/v1/endpoints"))

    def __init__(self, api, skip_namespaces=()):
        self.api = api
        self.skip = set(skip_namespaces)
        self.events = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = []
        self.connections = []
        self.before = {}

    def start(self):
        for kind, path in self.KINDS:
            items, version = self.api.list(kind)
            for obj in items:
                meta = obj["metadata"]
                self.before[(kind, meta["namespace"], meta["name"])] = obj
            thread = threading.Thread(target=self._watch, args=(kind, path, version), daemon=True)
            thread.start()
            self.threads.append(thread)
        return self

    def _watch(self, kind, path, version):
        conn = self.api.connection(timeout=600)
        self.connections.append(conn)
        try:
            conn.request("GET", "%s?watch=true&resourceVersion=%s&timeoutSeconds=600" %
                         (path, version))
            response = conn.getresponse()
            while not self.stopping.is_set():
                line = response.readline()
                if not line:
                    return
                event = json.loads(line)
                obj = event["object"]
                if event["type"] in ("BOOKMARK", "ERROR"):
                    continue
                meta = obj["metadata"]
                if meta["namespace"] in self.skip:
                    continue
                key = (kind, meta["namespace"], meta["name"])
                with self.lock:
                    previous = self.before.get(key)
                    self.events.append((event["type"], key, previous, obj))
                    self.before[key] = obj
        except Exception:  # noqa: BLE001 - the stream ends when stop() closes it
            return

    def count(self):
        with self.lock:
            return len(self.events)

    def stop(self):
        self.stopping.set()
        for conn in self.connections:
            try:
                conn.sock.shutdown(2) if conn.sock else None
            except OSError:
                pass
            conn.close()
        return list(self.events)


def explain_write(event):
    """One line for a recorded write: what changed between the object before and after."""
    kind_of_event, key, before, after = event
    name = "%s %s/%s" % key
    if kind_of_event != "MODIFIED" or before is None:
        return "%s %s" % (kind_of_event, name)
    changes = []
    for section in ("labels", "annotations"):
        old = before["metadata"].get(section) or {}
        new = after["metadata"].get(section) or {}
        for k in sorted(set(old) | set(new)):
            if old.get(k) != new.get(k):
                changes.append("%s %s: %r -> %r" % (section[:-1], k, old.get(k), new.get(k)))
    for field in ("subsets", "endpoints", "ports", "addressType"):
        old, new = before.get(field), after.get(field)
        if old == new:
            continue
        if isinstance(old, list) and isinstance(new, list):
            gone = [json.dumps(x, sort_keys=True) for x in old if x not in new]
            came = [json.dumps(x, sort_keys=True) for x in new if x not in old]
            changes.append("%s: -%s +%s" % (field, gone[:3], came[:3]) if gone or came else
                           "%s reordered" % field)
        else:
            changes.append("%s: %s -> %s" % (field, json.dumps(old)[:200], json.dumps(new)[:200]))
    return "%s %s: %s" % (kind_of_event, name, "; ".join(changes) or "no visible change")


# ---- running controllers ----

def deployment_args():
    """The `slicewright controller-manager` arguments deploy/deployment.yaml gives the
    container, read from `kubectl kustomize deploy/` (so the test runs what the base deploys)."""
    import yaml

    rendered = subprocess.run(["kubectl", "kustomize", os.path.join(REPO, "deploy")],
                              check=True, capture_output=True, text=True).stdout
    for doc in yaml.safe_load_all(rendered):
        if doc and doc.get("kind") == "Deployment":
            container = doc["spec"]["template"]["spec"]["containers"][0]
            return container["command"][1:] + container.get("args", []), doc
    raise RuntimeError("no Deployment in deploy/")


class OurManager:
    """`slicewright controller-manager` with deploy/'s arguments, but serving its probes and
    metrics on a free loopback port, authenticated by `kubeconfig` (the ServiceAccount's token),
    and with `overrides` (flag -> value) applied."""

    def __init__(self, binary, kubeconfig, log_path, overrides=None, extra=()):
        args, _ = deployment_args()
        values = {"--bind-address": "127.0.0.1", "--port": "0", "--logging-format": "text"}
        values.update(overrides or {})
        final = []
        for arg in args:
            flag = arg.split("=", 1)[0]
            if flag in values:
                if values[flag] is not None:
                    final.append("%s=%s" % (flag, values.pop(flag)))
                else:
                    values.pop(flag)
            else:
                final.append(arg)
        final += ["%s=%s" % (k, v) for k, v in values.items() if v is not None]
        self.args = [binary] + final + ["--kubeconfig", kubeconfig] + list(extra)
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self.log,
                                        start_new_session=True)
        line = self.process.stdout.readline().decode()
        self.port = int(line.rsplit(":", 1)[1]) if "serving" in line else 0
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        try:
            for _ in iter(lambda: self.process.stdout.read(4096), b""):
                pass
        except (OSError, ValueError):
            pass

    def text(self):
        with open(self.log_path, "rb") as log:
            return log.read().decode(errors="replace")

    def leading(self):
        return "leading; starting controllers" in self.text()

    def synced(self):
        return "caches synced; running" in self.text()

    def metrics(self):
        """{(name, frozenset(labels)): value} from /metrics, or {} when it does not answer."""
        import urllib.request

        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.port,
                                        timeout=5) as r:
                body = r.read().decode()
        except OSError:
            return {}
        return parse_metrics(body)

    def forbidden(self):
        """Every sign of a 403: log lines and rest_client_requests_total{code="403"}."""
        # kube-apiserver's 403 message says "... is forbidden: User ... cannot ..."; a bare "403"
        # could be a resourceVersion in a log line.
        found = [line for line in self.text().splitlines()
                 if re.search(r"forbidden", line, re.IGNORECASE)]
        for (name, labels), value in self.metrics().items():
            if name == "rest_client_requests_total" and ("code", "403") in labels and value:
                found.append("rest_client_requests_total%s = %s" % (dict(labels), value))
        return found

    def idle(self):
        """Every work queue empty and no sync in flight."""
        metrics = self.metrics()
        depths = [v for (n, _), v in metrics.items() if n == "workqueue_depth"]
        unfinished = [v for (n, _), v in metrics.items()
                      if n == "workqueue_unfinished_work_seconds"]
        return bool(depths) and not any(depths) and not any(unfinished)

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def terminate(self, timeout=20):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout=timeout * SLOW)
            except subprocess.TimeoutExpired:
                self.kill()
                return None
        return self.process.returncode


def parse_metrics(body):
    out = {}
    for line in body.splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.match(r'^([A-Za-z_:][\w:]*)(\{(.*)\})?\s+(\S+)', line)
        if not match:
            continue
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(3) or ""))
        try:
            out[(match.group(1), labels)] = float(match.group(4))
        except ValueError:
            continue
    return out


def start_kcm_endpoint_controllers(plane, name="kcm-endpoints"):
    """kube-controller-manager running only the three endpoint controllers (the fixture's
    start_controller_manager: admin credentials, no leader election)."""
    return plane.start_controller_manager(control_plane.ENDPOINT_CONTROLLERS, name=name)


def wait_kcm_synced(process, seconds=60):
    """Waits for the three endpoint controllers' "Caches are synced" lines."""
    deadline = time.monotonic() + seconds * SLOW
    # 1.34 logs `"Caches are synced" controller="endpoint"`, 1.26 `Caches are synced for endpoint`.
    want = ("endpoint", "endpoint_slice", "endpoint_slice_mirroring")
    while time.monotonic() < deadline:
        with open(process.log_path, "rb") as f:
            text = f.read().decode(errors="replace")
        synced = set()
        for line in text.splitlines():
            match = re.search(r'Caches are synced(?:" controller="| for )(\w+)', line)
            if match:
                synced.add(match.group(1))
        if all(w in synced for w in want):
            return True
        if not process.running():
            return False
        time.sleep(0.1)
    return False


def stop_process(plane, process):
    """Stops a fixture Process and forgets it (so the plane's cleanup does not stop it twice)."""
    process.stop()
    if process in plane.processes:
        plane.processes.remove(process)
