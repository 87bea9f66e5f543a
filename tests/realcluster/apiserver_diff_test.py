#!/usr/bin/python3
"""Our API server measured against the real one: the same requests sent to a fresh
`slicewright apiserver` and to upstream kube-apiserver (control_plane.py), the answers compared
after normalising what legitimately differs (apidiff.py says what and why).

Compared: status code, reason, message and causes of every answer; the defaulted fields of created
objects (Services of every type and ipFamilyPolicy, with and without selector, headless, ports with
and without targetPort, protocol and name; Pods; EndpointSlices; Endpoints; Leases; Events in
both APIs; Namespaces; CRDs, protected API groups and custom resources of deploy/mcs/crds);
the Table form `kubectl get` asks for; errors for bad input (malformed JSON, unknown fields with
fieldValidation=Strict, invalid IPs, names too long, wrong kinds, conflicts, missing namespaces,
dry run, every patch type). IP-family defaulting is compared on a dual-stack pair and on a
single-stack pair of servers, creates and updates. Then what the e2e client scripts do, through
the clients themselves: kubectl 1.32, Debian's python3-kubernetes and @kubernetes/client-node
(tests/e2e/js/node_modules), each run against both servers, what each client sees compared.

A difference fails the test unless KNOWN lists it with its reason (docs/design.md too); PENDING
lists those another branch is fixing. One kube-apiserver per stack (the dual-stack one with
kube-controller-manager's base controllers), one `slicewright apiserver` per stack, shared by all
cases.

Usage: /usr/bin/python3 apiserver_diff_test.py PATH/TO/slicewright [--only REGEX]
  (KUBEBUILDER_ASSETS names the envtest folder; exit 77 without it)
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SOURCE, "tests", "e2e"))

import apidiff  # noqa: E402
import control_plane  # noqa: E402
from apidiff import Endpoint, view  # noqa: E402
from e2e_server import Checks, Server, install_sigterm_exit, wait_until  # noqa: E402

checks = Checks("apiserver_diff_test")

DUAL_CIDRS = "10.96.0.0/16,fd00:10:96::/112"
SINGLE_CIDRS = "10.96.0.0/16"
NS = "diff"

# Differences that remain, each with its reason (docs/design.md, "Our API server against
# kube-apiserver", says the same). A value is the reason, or (reason, versions) for one that only
# some kube-apiserver versions show.
KNOWN = {
    # Pods: what kube-apiserver's admission plugins add (ServiceAccount: serviceAccountName and the
    # token volume; DefaultTolerationSeconds: not-ready/unreachable tolerations), metadata.generation
    # of pods (1.33+), probe and httpGet defaults, requests defaulted from limits and the qosClass
    # computed from them. Our server runs no admission chain and no kubelet reads these.
    "pod: minimal": "admission plugins and pod defaults (see docs/design.md)",
    "pod: with ports, probes, resources and a node": "admission plugins and pod defaults",
    "pod: status written by a kubelet": "admission plugins and pod defaults",
    "pod: refused, container without image and a bad port":
        "containerPort 0 is `Required value` in kube, `must be between 1 and 65535` here",
    "pod: refused, status with an invalid podIP": "pod status IPs are not validated here",
    "pod: refused, a spec change other than image": "pod spec updates are not restricted here",
    "table: pods": "follows the pod differences (generation, the accepted status and spec)",
    # Encoding: Go writes fields without omitempty as null/{}/"" (EndpointSlice endpoints and
    # ports, an endpoint's conditions, a port's name, Lease spec, Event eventTime and reporting*);
    # ours stores the body as given. Clients read both as absent.
    "endpointslice: minimal": "Go's encoding of empty fields (null endpoints and ports)",
    "endpointslice: full": "Go's encoding of empty fields (conditions {}, port name \"\")",
    "endpointslice: refused, two addresses": "Go's encoding of empty fields",
    "endpointslice: FQDN":
        "Go's encoding of empty fields; no `FQDN endpoints are deprecated` warning (1.33+)",
    "lease: create empty": "Go's encoding of empty fields (spec {})",
    "event: core create": "Go's encoding of empty fields (eventTime null, reportingComponent \"\")",
    "event: list by involvedObject.name":
        "Go's encoding of empty fields; list items carry apiVersion and kind here",
    # Validation messages and rules not matched yet.
    "endpointslice: refused, an invalid address":
        "IP message lacks kube's `, (e.g. 10.9.8.7 or 2001:db8::ffff)`",
    "client-node: an EndpointSlice with an invalid address":
        "IP message lacks kube's `, (e.g. 10.9.8.7 or 2001:db8::ffff)`",
    "endpointslice: refused, an IPv6 address in an IPv4 slice":
        "the field path is endpoints[0].addresses in kube, addresses[0] here",
    "endpointslice: refused, duplicate port names and a bad protocol":
        "an EndpointSlice port's protocol is not validated here",
    "python client: addressType is immutable":
        "here the addresses are also checked against the refused new addressType",
    "endpoints: create": "Endpoints ports need names when several: not validated here",
    "endpoints: refused, unnamed ports": "Endpoints ports need names when several",
    "endpoints: create without subsets":
        ("no `v1 Endpoints is deprecated in v1.33+` warning here", ("v1.33", "v1.34", "v1.35")),
    "endpoints: refused, an invalid IP":
        "kube reports the address twice (IsValidIP and its own check) and warns deprecation",
    "endpoints: refused, a loopback IP": "loopback/link-local Endpoints addresses are accepted here",
    "table: endpoints": "follows the Endpoints validation difference",
    "lease: refused, a negative leaseDurationSeconds": "Lease spec values are not validated here",
    "table: leases": "an empty HOLDER prints <none> here, \"\" in kube; the accepted Lease",
    "kubectl: get leases": "an empty HOLDER prints <none> here, \"\" in kube; the accepted Lease",
    "event: refused, events.k8s.io without eventTime": "events.k8s.io rules are not validated here",
    "event: refused, core with an involvedObject in another namespace":
        "Event involvedObject.namespace is not checked against the Event's here",
    "table: events": "follows the Event validation differences",
    "table: events.k8s.io": "follows the Event validation differences",
    "crd: refused, an invalid CRD":
        "kube also reports status.storedVersions of a CRD with no storage version",
    # Lists: each item keeps its apiVersion and kind here (stored bytes are served as they are);
    # kube's list items have none. Clients take the list's.
    "python client: list with a label selector": "list items carry apiVersion and kind here",
    "client-node: label selector app=web": "list items carry apiVersion and kind here",
    "delete: a collection": "list items carry apiVersion and kind here",
    "table: includeObject=None": "kube sends `object: null` in each row, ours omits it",
    # Decoding and request errors: the same code and reason, other words or details.
    "bad input: malformed JSON": "decoder message (kube: `the object provided is unrecognized "
                                 "(must be of type ConfigMap): couldn't get version/kind; ...`)",
    "bad input: a JSON array": "decoder message",
    "bad input: an empty body": "decoder message",
    "bad input: wrong kind": "message (kube: `... cannot be handled as a ConfigMap: converting "
                             "(v1.Service) to (core.ConfigMap): unknown conversion`) and details",
    "bad input: wrong apiVersion": "message and details",
    "bad input: unknown nested field, Strict":
        "unknown fields are named in sorted key order here, body order in kube",
    "bad input: duplicate field, Strict": "duplicate JSON keys are not detected (the last wins)",
    "bad input: an invalid fieldValidation": "details lack group meta.k8s.io and kind",
    "bad input: a namespace that differs from the URL's": "our 400 carries details",
    "conflict: an update that renames": "our 400 carries details",
    "bad input: a missing namespace": "details name the namespace in kube, the object here",
    "bad input: a resourceVersion on create": "kube answers 500 InternalError, ours 400",
    "conflict: an update with an invalid resourceVersion":
        "kube answers 500 with strconv's error, ours 400",
    "bad input: an unsupported field selector": "message (kube: `\"spec.foo\" is not a known "
                                                 "field selector: only ...`)",
    "bad input: an unknown resource": "kube's Status has an empty details {}",
    "bad input: POST to a named object": "kube's Status has an empty details {}",
    "bad input: an unknown group": "kube answers text `404 page not found`, ours a Status",
    "bad input: a patch with an unsupported content type": "message (kube: `415: Unsupported "
                                                           "Media Type`)",
    "dry run: an invalid dryRun value": "kube answers 422 with a cause, ours 400",
    "patch: JSON patch, a failing test op":
        "kube's message is generic (`the server rejected our request ...`), ours names the op",
    "kubectl: a failing json patch test op": "the JSON patch message above, as kubectl prints it",
    "patch: JSON patch, removing a missing path": "kube's message is generic, ours names the path",
    "patch: JSON patch, not a list": "our 400 carries details",
    "patch: malformed merge patch": "our 400 carries details",
    "patch: merge patch result that does not decode":
        "kube answers 422 on field `patch`, ours the decoder's 400",
    "patch: strategic with an unknown directive": "kube answers 500, ours 400",
    # Not implemented.
    "patch: apply creates": "server-side apply (application/apply-patch+yaml) is not served",
    "patch: apply again": "server-side apply is not served",
    "patch: apply without fieldManager": "server-side apply is not served",
    "custom resource: strategic merge patch is refused":
        "the accepted media types do not list apply-patch (no server-side apply)",
    # Deletion.
    "delete: a uid precondition that fails": "message and details kind (kube: `Operation cannot "
                                             "be fulfilled on ConfigMap ...`)",
    "delete: a resourceVersion precondition that fails": "message and details kind",
    "delete: propagationPolicy Orphan":
        "kube answers the object with the orphan finalizer set; ours orphans at once",
    "delete: with a finalizer":
        "ours answers 202 while a deletion waits; kube only with orphanDependents=false",
    # kube-apiserver 1.26 words these as older apimachinery did: a list value as Go's %#v
    # ([]string{"a"}; 1.33+ print JSON, as we do), an address outside the range with the range
    # named (1.34's ServiceCIDR allocator: "the provided network does not match the current
    # range"), externalTrafficPolicy "may only be set when `type` is 'NodePort' or 'LoadBalancer'".
    **{name: ("kube-apiserver 1.26's wording (a list value as []string{...}, the range "
              "message); we follow 1.34", ("v1.26",))
       for name in ("service: given clusterIPs of both families",
                    "service: an IPv6 clusterIP alone",
                    "service: refused, a clusterIP outside the range",
                    "service: refused, an allocated clusterIP",
                    "service: refused, clusterIPs without clusterIP",
                    "service: refused, clusterIPs of one family twice",
                    "service: refused, externalTrafficPolicy Local on ClusterIP",
                    "service update: changing clusterIP",
                    "service update: headless to a clusterIP")},
}

# Differences another branch is fixing (either outcome passes; a match is reported).
PENDING = {}


class Pair:
    """The same requests to kube-apiserver and to our server; each named case compared."""

    def __init__(self, real, ours, ledger, only, prefix=""):
        self.real = real
        self.ours = ours
        self.ledger = ledger
        self.only = only
        self.prefix = prefix
        self.ran = set()

    def wanted(self, name):
        return self.only is None or self.only.search(self.prefix + name)

    def both(self, method, path, body=None, **kwargs):
        return (self.real.request(method, path, body, **kwargs),
                self.ours.request(method, path, body, **kwargs))

    def same(self, name, method, path, body=None, shape=None, **kwargs):
        """Sends the request to both and compares what a client sees; `shape` maps a view to
        the part compared (for a case about one field)."""
        real, ours = self.both(method, path, body, **kwargs)
        name = self.prefix + name
        if not (self.only is None or self.only.search(name)):
            return real, ours
        self.ran.add(name)
        real_view, ours_view = view(real), view(ours)
        if shape is not None:
            real_view, ours_view = shape(real_view), shape(ours_view)
        self.ledger.compare(name, real_view, ours_view)
        return real, ours

    def compare(self, name, real_value, ours_value):
        name = self.prefix + name
        if not (self.only is None or self.only.search(name)):
            return
        self.ran.add(name)
        self.ledger.compare(name, real_value, ours_value)


def spec_of(shown):
    body = shown.get("body") or {}
    if body.get("kind") == "Status":
        return shown
    return {"code": shown["code"], "spec": body.get("spec")}


# --- namespaces -----------------------------------------------------------------------------------

def namespaces(p):
    p.same("namespace: create", "POST", "/api/v1/namespaces",
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    p.same("namespace: get default", "GET", "/api/v1/namespaces/default")
    p.same("namespace: create with an invalid name", "POST", "/api/v1/namespaces",
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Bad_NS"}})
    p.same("namespace: get a missing one", "GET", "/api/v1/namespaces/no-such-namespace")
    p.same("namespace: create an existing one", "POST", "/api/v1/namespaces",
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    p.same("namespace: dry-run create with generateName", "POST", "/api/v1/namespaces?dryRun=All",
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "gen-"}})
    p.same("namespace: a name of 64 characters", "POST", "/api/v1/namespaces",
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n" * 64}})
    for ns in ("diff-py", "diff-js", KUBECTL_NS, "diff-del"):
        p.both("POST", "/api/v1/namespaces",
               {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})


# --- Services -------------------------------------------------------------------------------------

SERVICE_PATH = "/api/v1/namespaces/%s/services" % NS


def service(name, spec):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


def services(p):
    ports_variants = {
        "port only": [{"port": 80}],
        "all port fields": [{"name": "dns", "port": 53, "targetPort": 5353, "protocol": "UDP"}],
        "named target": [{"name": "http", "port": 80, "targetPort": "http"}],
        "two ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81, "protocol": "SCTP",
                                                  "appProtocol": "kubernetes.io/h2c"}],
    }
    n = 0
    for type_ in (None, "NodePort", "LoadBalancer"):
        for policy in (None, "SingleStack", "PreferDualStack", "RequireDualStack"):
            for selector in (True, False):
                n += 1
                spec = {"ports": [{"port": 80}]}
                if type_:
                    spec["type"] = type_
                if policy:
                    spec["ipFamilyPolicy"] = policy
                if selector:
                    spec["selector"] = {"app": "web"}
                p.same("service: type %s, policy %s, %s" % (
                    type_ or "unset", policy or "unset", "selector" if selector else "no selector"),
                    "POST", SERVICE_PATH, service("s%d" % n, spec))
    for policy in (None, "SingleStack", "PreferDualStack", "RequireDualStack"):
        for selector in (True, False):
            n += 1
            spec = {"clusterIP": "None", "ports": [{"port": 80}]}
            if policy:
                spec["ipFamilyPolicy"] = policy
            if selector:
                spec["selector"] = {"app": "web"}
            p.same("service: headless, policy %s, %s" % (
                policy or "unset", "selector" if selector else "no selector"),
                "POST", SERVICE_PATH, service("s%d" % n, spec))
    n += 1
    p.same("service: headless without ports", "POST", SERVICE_PATH,
           service("s%d" % n, {"clusterIP": "None"}))
    for label, ports in ports_variants.items():
        n += 1
        p.same("service: ports, " + label, "POST", SERVICE_PATH,
               service("s%d" % n, {"selector": {"app": "web"}, "ports": ports}))
    for families in (["IPv6"], ["IPv6", "IPv4"], ["IPv4", "IPv6"]):
        for policy in (None, "SingleStack", "PreferDualStack", "RequireDualStack"):
            n += 1
            spec = {"selector": {"app": "web"}, "ports": [{"port": 80}], "ipFamilies": families}
            if policy:
                spec["ipFamilyPolicy"] = policy
            p.same("service: ipFamilies %s, policy %s" % (",".join(families), policy or "unset"),
                   "POST", SERVICE_PATH, service("s%d" % n, spec))
    n += 1
    p.same("service: ExternalName", "POST", SERVICE_PATH,
           service("s%d" % n, {"type": "ExternalName", "externalName": "example.com"}))
    n += 1
    p.same("service: ExternalName with ports and a policy", "POST", SERVICE_PATH,
           service("s%d" % n, {"type": "ExternalName", "externalName": "example.com",
                               "ipFamilyPolicy": "SingleStack", "ports": [{"port": 80}]}))
    n += 1
    p.same("service: LoadBalancer with externalTrafficPolicy Local", "POST", SERVICE_PATH,
           service("s%d" % n, {"type": "LoadBalancer", "externalTrafficPolicy": "Local",
                               "selector": {"app": "web"}, "ports": [{"port": 80}]}))
    n += 1
    p.same("service: LoadBalancer without node ports", "POST", SERVICE_PATH,
           service("s%d" % n, {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": False,
                               "selector": {"app": "web"}, "ports": [{"port": 80}]}))
    n += 1
    p.same("service: NodePort with a given nodePort", "POST", SERVICE_PATH,
           service("s%d" % n, {"type": "NodePort", "selector": {"app": "web"},
                               "ports": [{"port": 80, "nodePort": 30080}]}),
           shape=lambda v: json.loads(json.dumps(v).replace('"<nodePort>"', "30080")))
    n += 1
    p.same("service: sessionAffinity ClientIP", "POST", SERVICE_PATH,
           service("s%d" % n, {"sessionAffinity": "ClientIP", "selector": {"app": "web"},
                               "ports": [{"port": 80}]}))
    n += 1
    p.same("service: a given clusterIP", "POST", SERVICE_PATH,
           service("s%d" % n, {"clusterIP": "10.96.200.10", "selector": {"app": "web"},
                               "ports": [{"port": 80}]}))
    n += 1
    p.same("service: given clusterIPs of both families", "POST", SERVICE_PATH,
           service("s%d" % n, {"clusterIP": "10.96.200.11",
                               "clusterIPs": ["10.96.200.11", "fd00:10:96::200:11"],
                               "ipFamilyPolicy": "RequireDualStack",
                               "selector": {"app": "web"}, "ports": [{"port": 80}]}))
    n += 1
    p.same("service: an IPv6 clusterIP alone", "POST", SERVICE_PATH,
           service("s%d" % n, {"clusterIP": "fd00:10:96::200:12", "selector": {"app": "web"},
                               "ports": [{"port": 80}]}))
    # Refused.
    bad = {
        "port 0 and a duplicate name": {"ports": [{"name": "a", "port": 0}, {"name": "a", "port": 80}]},
        "two unnamed ports": {"ports": [{"port": 80}, {"port": 81}]},
        "an invalid clusterIP": {"clusterIP": "1.2.3", "ports": [{"port": 80}]},
        "a clusterIP outside the range": {"clusterIP": "10.1.2.3", "ports": [{"port": 80}]},
        "an allocated clusterIP": {"clusterIP": "10.96.200.10", "ports": [{"port": 80}]},
        "clusterIPs without clusterIP": {"clusterIPs": ["10.96.200.20"], "ports": [{"port": 80}]},
        "clusterIPs of one family twice": {
            "clusterIP": "10.96.200.21", "clusterIPs": ["10.96.200.21", "10.96.200.22"],
            "ipFamilyPolicy": "PreferDualStack", "ports": [{"port": 80}]},
        "two clusterIPs with SingleStack": {
            "clusterIP": "10.96.200.23", "clusterIPs": ["10.96.200.23", "fd00:10:96::23"],
            "ipFamilyPolicy": "SingleStack", "ports": [{"port": 80}]},
        "ipFamilies that disagree with clusterIP": {
            "clusterIP": "10.96.200.24", "ipFamilies": ["IPv6"], "ports": [{"port": 80}]},
        "an unknown ipFamily": {"ipFamilies": ["IPv5"], "ports": [{"port": 80}]},
        "the same ipFamily twice": {"ipFamilies": ["IPv4", "IPv4"],
                                    "ipFamilyPolicy": "PreferDualStack", "ports": [{"port": 80}]},
        "three ipFamilies": {"ipFamilies": ["IPv4", "IPv6", "IPv4"],
                             "ipFamilyPolicy": "PreferDualStack", "ports": [{"port": 80}]},
        "an unknown ipFamilyPolicy": {"ipFamilyPolicy": "Sometimes", "ports": [{"port": 80}]},
        "an unknown type": {"type": "Frob", "ports": [{"port": 80}]},
        "ExternalName without externalName": {"type": "ExternalName"},
        "an invalid externalName": {"type": "ExternalName", "externalName": "not a name"},
        "a ClusterIP service without ports": {"selector": {"app": "web"}},
        "a nodePort out of range": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]},
        "a nodePort on a ClusterIP service": {"ports": [{"port": 80, "nodePort": 30081}]},
        "an invalid protocol": {"ports": [{"port": 80, "protocol": "HTTP"}]},
        "a named targetPort that is not a name": {"ports": [{"port": 80, "targetPort": "Not_A_Name"}]},
        "a targetPort over 65535": {"ports": [{"port": 80, "targetPort": 70000}]},
        "a targetPort of 0": {"ports": [{"port": 80, "targetPort": 0}]},
        "headless with a LoadBalancer": {"type": "LoadBalancer", "clusterIP": "None",
                                         "ports": [{"port": 80}]},
        "an invalid selector value": {"selector": {"app": "not valid!"}, "ports": [{"port": 80}]},
        "externalTrafficPolicy Local on ClusterIP": {"externalTrafficPolicy": "Local",
                                                     "ports": [{"port": 80}]},
        "an invalid sessionAffinity": {"sessionAffinity": "Sticky", "ports": [{"port": 80}]},
    }
    for label, spec in bad.items():
        n += 1
        p.same("service: refused, " + label, "POST", SERVICE_PATH, service("bad%d" % n, spec))
        # kube-apiserver takes targetPort 0 (its default): the later lists stay equal.
        p.both("DELETE", SERVICE_PATH + "/bad%d" % n)
    p.same("service: refused, a name that is not a DNS-1035 label", "POST", SERVICE_PATH,
           service("1web", {"ports": [{"port": 80}]}))
    p.same("service: refused, a name of 64 characters", "POST", SERVICE_PATH,
           service("s" * 64, {"ports": [{"port": 80}]}))


def service_updates(p):
    """Update rules: type changes, IP family upgrades and downgrades, immutable fields."""
    path = SERVICE_PATH

    def create(name, spec):
        p.both("POST", path, service(name, spec))

    def put(name, mutate):
        real, ours = p.both("GET", path + "/" + name)
        bodies = []
        for answer in (real, ours):
            obj = answer.json()
            mutate(obj["spec"])
            bodies.append(obj)
        answers = (p.real.request("PUT", path + "/" + name, bodies[0]),
                   p.ours.request("PUT", path + "/" + name, bodies[1]))
        return answers

    def check(label, name, mutate=None, patch=None, shape=spec_of):
        if patch is not None:
            p.same("service update: " + label, "PATCH", path + "/" + name, patch, shape=shape,
                   content_type="application/merge-patch+json")
            return
        real, ours = put(name, mutate)
        p.compare("service update: " + label, shape(view(real)), shape(view(ours)))

    create("u1", {"selector": {"app": "u"}, "ports": [{"port": 80}]})
    check("ClusterIP to NodePort", "u1", patch={"spec": {"type": "NodePort"}})
    check("NodePort to ClusterIP keeping nodePorts", "u1", patch={"spec": {"type": "ClusterIP"}})
    check("NodePort to ClusterIP dropping nodePorts", "u1", patch={"spec": {
        "type": "ClusterIP", "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]}})
    check("SingleStack to PreferDualStack", "u1",
          patch={"spec": {"ipFamilyPolicy": "PreferDualStack"}})
    check("PreferDualStack to SingleStack keeping both families", "u1",
          patch={"spec": {"ipFamilyPolicy": "SingleStack"}})
    check("SingleStack to RequireDualStack", "u1",
          patch={"spec": {"ipFamilyPolicy": "RequireDualStack"}})
    check("RequireDualStack dropping the secondary family without SingleStack", "u1",
          patch={"spec": {"ipFamilies": ["IPv4"]}})
    check("RequireDualStack to SingleStack with one family", "u1",
          patch={"spec": {"ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"]}})
    check("changing the primary family", "u1", patch={"spec": {"ipFamilies": ["IPv6"]}})
    check("changing clusterIP", "u1", patch={"spec": {"clusterIP": "10.96.200.99",
                                                      "clusterIPs": ["10.96.200.99"]}})
    check("to ExternalName keeping clusterIP", "u1", patch={"spec": {
        "type": "ExternalName", "externalName": "example.com"}})
    check("to ExternalName clearing clusterIPs", "u1", patch={"spec": {
        "type": "ExternalName", "externalName": "example.com", "clusterIP": None,
        "clusterIPs": None, "ipFamilies": None, "ipFamilyPolicy": None}})
    check("ExternalName back to ClusterIP", "u1", patch={"spec": {
        "type": "ClusterIP", "externalName": None}})
    create("u2", {"selector": {"app": "u"}, "ports": [{"port": 80}], "type": "NodePort"})
    check("PUT without clusterIP keeps the allocated values", "u2", mutate=lambda spec: [
        spec.pop(k, None) for k in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy")])
    check("PUT without nodePort keeps the allocated one", "u2", mutate=lambda spec: [
        port.pop("nodePort", None) for port in spec["ports"]])
    create("u3", {"clusterIP": "None", "ports": [{"port": 80}]})
    check("headless to a clusterIP", "u3", patch={"spec": {"clusterIP": "10.96.200.98"}})
    check("headless selectorless, policy to SingleStack", "u3",
          patch={"spec": {"ipFamilyPolicy": "SingleStack"}})
    check("headless selectorless, policy to SingleStack with one family", "u3",
          patch={"spec": {"ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"]}})
    create("u4", {"clusterIP": "None", "ports": [{"port": 80}], "selector": {"app": "u"}})
    check("headless with selector, policy to PreferDualStack", "u4",
          patch={"spec": {"ipFamilyPolicy": "PreferDualStack"}})


def families_single_stack(p):
    """IP-family defaulting where the cluster serves one family (kube-apiserver's
    initIPFamilyFields: headless selector-less Services get both families whatever the cluster
    serves; every other one the cluster's)."""
    n = 0
    for headless in (False, True):
        for selector in (True, False):
            for policy in (None, "SingleStack", "PreferDualStack", "RequireDualStack"):
                for families in (None, ["IPv4"], ["IPv6"], ["IPv4", "IPv6"], ["IPv6", "IPv4"]):
                    n += 1
                    spec = {"ports": [{"port": 80}]}
                    if headless:
                        spec["clusterIP"] = "None"
                    if selector:
                        spec["selector"] = {"app": "web"}
                    if policy:
                        spec["ipFamilyPolicy"] = policy
                    if families:
                        spec["ipFamilies"] = families
                    p.same("families: %s, %s, policy %s, ipFamilies %s" % (
                        "headless" if headless else "clusterIP",
                        "selector" if selector else "no selector", policy or "unset",
                        ",".join(families) if families else "unset"),
                        "POST", SERVICE_PATH, service("f%d" % n, spec), shape=spec_of)
    # Updates on a single-stack cluster.
    p.both("POST", SERVICE_PATH, service("fu1", {"selector": {"app": "u"}, "ports": [{"port": 80}]}))
    for label, patch in (
            ("to PreferDualStack", {"ipFamilyPolicy": "PreferDualStack"}),
            ("to RequireDualStack", {"ipFamilyPolicy": "RequireDualStack"}),
            ("adding IPv6", {"ipFamilyPolicy": "PreferDualStack", "ipFamilies": ["IPv4", "IPv6"]})):
        p.same("families update: " + label, "PATCH", SERVICE_PATH + "/fu1", {"spec": patch},
               content_type="application/merge-patch+json", shape=spec_of)
    p.both("POST", SERVICE_PATH, service("fu2", {"clusterIP": "None", "ports": [{"port": 80}]}))
    p.same("families update: headless selector-less gets a selector", "PATCH",
           SERVICE_PATH + "/fu2", {"spec": {"selector": {"app": "u"}}},
           content_type="application/merge-patch+json", shape=spec_of)


# --- the rest of core/v1, discovery, coordination, events -----------------------------------------

def pods(p):
    path = "/api/v1/namespaces/%s/pods" % NS
    p.same("pod: minimal", "POST", path, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}})
    p.same("pod: with ports, probes, resources and a node", "POST", path, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2"},
        "spec": {"nodeName": "node-1", "hostname": "web-0", "subdomain": "web",
                 "containers": [{
                     "name": "c", "image": "nginx", "ports": [{"containerPort": 80, "name": "http"}],
                     "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
                     "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}})
    p.same("pod: refused, no containers", "POST", path, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p3"}, "spec": {"containers": []}})
    p.same("pod: refused, container without image and a bad port", "POST", path, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p4"},
        "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 0}]}]}})
    p.same("pod: status written by a kubelet", "PATCH", path + "/p1/status",
           {"status": {"phase": "Running", "podIP": "10.244.0.5", "podIPs": [{"ip": "10.244.0.5"}],
                       "conditions": [{"type": "Ready", "status": "True"}]}},
           content_type="application/merge-patch+json")
    p.same("pod: refused, status with an invalid podIP", "PATCH", path + "/p1/status",
           {"status": {"podIP": "10.244.0.999", "podIPs": [{"ip": "10.244.0.999"}]}},
           content_type="application/merge-patch+json")
    p.same("pod: refused, a spec change other than image", "PATCH", path + "/p1",
           {"spec": {"nodeName": "node-2"}}, content_type="application/merge-patch+json")


def endpoint_slices(p):
    path = "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices" % NS

    def slice_(name, **fields):
        obj = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
               "metadata": {"name": name, "labels": {"kubernetes.io/service-name": "s1"}},
               "addressType": "IPv4"}
        obj.update(fields)
        return obj

    p.same("endpointslice: minimal", "POST", path, slice_("es1", endpoints=[]))
    p.same("endpointslice: full", "POST", path, slice_(
        "es2", endpoints=[{"addresses": ["10.0.0.1"], "conditions": {"ready": True},
                           "nodeName": "n1", "zone": "z1", "hostname": "h1",
                           "targetRef": {"kind": "Pod", "name": "p", "namespace": NS},
                           "hints": {"forZones": [{"name": "z1"}]}},
                          {"addresses": ["10.0.0.2"]}],
        ports=[{"name": "http", "port": 80, "protocol": "TCP", "appProtocol": "http"}, {"port": 81}]))
    p.same("endpointslice: refused, an invalid address", "POST", path, slice_(
        "es3", endpoints=[{"addresses": ["not-an-ip"]}]))
    p.same("endpointslice: refused, an IPv6 address in an IPv4 slice", "POST", path, slice_(
        "es4", endpoints=[{"addresses": ["fd00::1"]}]))
    p.same("endpointslice: refused, an unknown addressType", "POST", path, slice_(
        "es5", addressType="IPv5", endpoints=[]))
    p.same("endpointslice: refused, no addressType", "POST", path, slice_(
        "es6", addressType=None, endpoints=[]))
    p.same("endpointslice: refused, duplicate port names and a bad protocol", "POST", path, slice_(
        "es7", endpoints=[], ports=[{"name": "a", "port": 1}, {"name": "a", "port": 2,
                                                               "protocol": "HTTP"}]))
    p.same("endpointslice: FQDN", "POST", path, slice_(
        "es8", addressType="FQDN", endpoints=[{"addresses": ["example.com"]}]))
    p.same("endpointslice: refused, addressType changed", "PATCH", path + "/es1",
           {"addressType": "IPv6"}, content_type="application/merge-patch+json")
    p.same("endpointslice: refused, two addresses", "POST", path, slice_(
        "es9", endpoints=[{"addresses": ["10.0.0.1", "10.0.0.2"]}]))


def endpoints(p):
    path = "/api/v1/namespaces/%s/endpoints" % NS
    p.same("endpoints: create", "POST", path, {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ep1"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1", "nodeName": "n1"}],
                     "notReadyAddresses": [{"ip": "10.0.0.2"}],
                     "ports": [{"port": 80}, {"name": "x", "port": 81, "protocol": "UDP"}]}]})
    p.same("endpoints: create without subsets", "POST", path, {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ep2"}})
    p.same("endpoints: refused, an invalid IP", "POST", path, {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ep3"},
        "subsets": [{"addresses": [{"ip": "10.0.0.300"}], "ports": [{"port": 80}]}]})
    p.same("endpoints: refused, a loopback IP", "POST", path, {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ep4"},
        "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": 80}]}]})
    p.same("endpoints: refused, unnamed ports", "POST", path, {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ep5"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}, {"port": 81}]}]})


def leases(p):
    path = "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NS
    p.same("lease: create", "POST", path, {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l1"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15,
                 "acquireTime": "2024-01-02T05:04:05.123456+02:00",
                 "renewTime": "2024-01-02T03:04:05.123456Z", "leaseTransitions": 0}})
    p.same("lease: create empty", "POST", path, {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l2"}})
    p.same("lease: refused, a renewTime with three digits", "POST", path, {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l3"},
        "spec": {"renewTime": "2024-01-02T03:04:05.123Z"}})
    p.same("lease: refused, a negative leaseDurationSeconds", "POST", path, {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l4"},
        "spec": {"leaseDurationSeconds": -1}})
    # Two candidates renew with the same resourceVersion: the first wins, the second conflicts.
    real, ours = p.both("GET", path + "/l1")
    stale = {"real": real.json(), "ours": ours.json()}
    for label in ("lease: renewal with the read resourceVersion",
                  "lease: a second renewal with the same resourceVersion"):
        answers = {}
        for side, endpoint in (("real", p.real), ("ours", p.ours)):
            body = json.loads(json.dumps(stale[side]))
            body["spec"]["holderIdentity"] = "b" if "second" in label else "a2"
            answers[side] = view(endpoint.request("PUT", path + "/l1", body))
        p.compare(label, answers["real"], answers["ours"])


def events(p):
    core = "/api/v1/namespaces/%s/events" % NS
    v1 = "/apis/events.k8s.io/v1/namespaces/%s/events" % NS
    p.same("event: core create", "POST", core, {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p1", "namespace": NS},
        "reason": "Started", "message": "started", "type": "Normal",
        "source": {"component": "kubelet", "host": "n1"},
        "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z",
        "count": 1})
    p.same("event: events.k8s.io create", "POST", v1, {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e2"},
        "eventTime": "2024-01-01T00:00:00.000000Z", "reason": "Scheduled", "type": "Normal",
        "action": "Binding", "note": "assigned",
        "regarding": {"kind": "Pod", "name": "p1", "namespace": NS},
        "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-1"})
    p.same("event: core view of an events.k8s.io Event", "GET", core + "/e2")
    p.same("event: events.k8s.io view of a core Event", "GET", v1 + "/e1")
    p.same("event: refused, events.k8s.io without eventTime", "POST", v1, {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e3"},
        "reason": "X", "type": "Normal", "action": "A",
        "regarding": {"kind": "Pod", "name": "p1", "namespace": NS},
        "reportingController": "c", "reportingInstance": "i"})
    p.same("event: refused, core with an involvedObject in another namespace", "POST", core, {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e4"},
        "involvedObject": {"kind": "Pod", "name": "p1", "namespace": "other"},
        "reason": "X", "type": "Normal"})
    p.same("event: list by involvedObject.name", "GET", core + "?fieldSelector=involvedObject.name%3Dp1")
    p.same("event: events.k8s.io get missing", "GET", v1 + "/absent")


# --- CRDs and custom resources --------------------------------------------------------------------

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def load_yaml_documents(path):
    import yaml
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def widget_crd(group, annotation=None, plural="widgets"):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "%s.%s" % (plural, group)},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": plural, "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
    if annotation is not None:
        crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": annotation}
    return crd


def without_status(shown):
    """A CRD's answer without its status: kube-apiserver's apiextensions controllers write it a
    moment after the create (so its answer has none yet), ours at the write; the settled status
    is compared on its own."""
    body = shown.get("body")
    if isinstance(body, dict) and body.get("kind") == "CustomResourceDefinition":
        body.pop("status", None)
    return shown


def settled_crd_status(endpoint, name):
    """The CRD's conditions once Established (type, status, reason, message), its accepted names
    and stored versions."""
    def read():
        body = endpoint.request("GET", CRD_PATH + "/" + name).json() or {}
        status = body.get("status") or {}
        conditions = sorted((c["type"], c["status"], c.get("reason"), c.get("message"))
                            for c in status.get("conditions") or [])
        if not any(c[0] == "Established" and c[1] == "True" for c in conditions):
            return None
        # kube-apiserver's API-approval controller sets its condition on a protected group's CRD
        # on its own schedule, after Established at times (seen on 1.26.1 and 1.34.2).
        group = name.split(".", 1)[1]
        protected = group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io",
                                                                            ".kubernetes.io"))
        if protected and not any(c[0] == "KubernetesAPIApprovalPolicyConformant"
                                 for c in conditions):
            return None
        return {"conditions": conditions, "acceptedNames": status.get("acceptedNames"),
                "storedVersions": status.get("storedVersions")}
    return wait_until(10, read)


def crds(p):
    folder = os.path.join(SOURCE, "deploy", "mcs", "crds")
    for name in sorted(os.listdir(folder)):
        if name == "kustomization.yaml" or not name.endswith(".yaml"):
            continue
        for doc in load_yaml_documents(os.path.join(folder, name)):
            p.same("crd: create deploy/mcs/crds/" + name, "POST", CRD_PATH, doc,
                   shape=without_status)
            crd_name = doc["metadata"]["name"]
            if p.real.request("GET", CRD_PATH + "/" + crd_name).code == 200:
                p.compare("crd: the settled status of " + crd_name,
                          settled_crd_status(p.real, crd_name), settled_crd_status(p.ours, crd_name))
    # Protected groups (apiextensions' validateAPIApproval).
    cases = [
        ("group k8s.io without the annotation", "k8s.io", None),
        ("a group under k8s.io without the annotation", "widgets.k8s.io", None),
        ("a group under kubernetes.io without the annotation", "x.kubernetes.io", None),
        ("a group under k8s.io with an invalid annotation", "a.k8s.io", "not a url"),
        ("a group under k8s.io with a path as annotation", "b.k8s.io", "/kubernetes/pull/1"),
        ("a group under k8s.io approved by URL", "c.k8s.io", "https://github.com/kubernetes/enhancements/pull/1111"),
        ("a group under k8s.io unapproved", "d.k8s.io", "unapproved, experimental"),
        ("a group under k8s.io with an empty annotation", "e.k8s.io", ""),
        ("group x-k8s.io without the annotation", "widgets.x-k8s.io", None),
        ("a group ending in k8s.io but not under it", "examplek8s.io", None),
    ]
    for label, group, annotation in cases:
        p.same("crd: " + label, "POST", CRD_PATH, widget_crd(group, annotation),
               shape=without_status)
    p.same("crd: dry-run of a protected group without the annotation", "POST",
           CRD_PATH + "?dryRun=All", widget_crd("f.k8s.io"), shape=without_status)
    # Updates keep the approval state or move it to a valid one.
    name = "widgets.d.k8s.io"
    p.same("crd update: unapproved to invalid", "PATCH", CRD_PATH + "/" + name, shape=without_status, body=
           {"metadata": {"annotations": {"api-approved.kubernetes.io": "bad"}}},
           content_type="application/merge-patch+json")
    p.same("crd update: unapproved to missing", "PATCH", CRD_PATH + "/" + name, shape=without_status, body=
           {"metadata": {"annotations": {"api-approved.kubernetes.io": None}}},
           content_type="application/merge-patch+json")
    p.same("crd update: unapproved to another unapproved reason", "PATCH", CRD_PATH + "/" + name, shape=without_status, body=
           {"metadata": {"annotations": {"api-approved.kubernetes.io": "unapproved"}}},
           content_type="application/merge-patch+json")
    p.same("crd update: unapproved to approved", "PATCH", CRD_PATH + "/" + name, shape=without_status, body=
           {"metadata": {"annotations": {"api-approved.kubernetes.io": "https://example.com/pr/1"}}},
           content_type="application/merge-patch+json")
    # The approval condition, once kube-apiserver's controller caught up with the annotation.
    for crd_name in ("widgets.c.k8s.io", "widgets.d.k8s.io"):
        def condition(endpoint, crd_name=crd_name):
            body = endpoint.request("GET", CRD_PATH + "/" + crd_name).json() or {}
            annotation = body.get("metadata", {}).get("annotations", {}).get(
                "api-approved.kubernetes.io", "")
            for c in body.get("status", {}).get("conditions", []):
                if c["type"] == "KubernetesAPIApprovalPolicyConformant" and \
                        annotation in c.get("message", ""):
                    return {k: c.get(k) for k in ("status", "reason", "message")}
            return None
        real_condition = wait_until(10, lambda: condition(p.real))
        p.compare("crd: the KubernetesAPIApprovalPolicyConformant condition of " + crd_name,
                  real_condition, condition(p.ours))
    p.same("crd: refused, an invalid CRD", "POST", CRD_PATH, shape=without_status, body={
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "bad.example.com"},
        "spec": {"group": "example.com", "scope": "Everywhere", "names": {"plural": "Bad"},
                 "versions": []}})


def custom_resources(p):
    def established(endpoint):
        answer = endpoint.request("GET", "/apis/multicluster.x-k8s.io/v1beta1")
        return answer.code == 200
    wait_until(20, lambda: established(p.real) and established(p.ours))
    imports = "/apis/multicluster.x-k8s.io/v1beta1/namespaces/%s/serviceimports" % NS
    exports = "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/%s/serviceexports" % NS
    p.same("custom resource: ServiceImport create", "POST", imports, {
        "apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
        "metadata": {"name": "si1"},
        "spec": {"type": "ClusterSetIP", "ips": ["10.42.0.1"],
                 "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}})
    p.same("custom resource: ServiceImport status", "PATCH", imports + "/si1/status",
           {"status": {"clusters": [{"cluster": "c1"}]}},
           content_type="application/merge-patch+json")
    p.same("custom resource: refused, an enum value", "POST", imports, {
        "apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
        "metadata": {"name": "si2"}, "spec": {"type": "Nope", "ports": []}})
    p.same("custom resource: refused with Strict, an unknown field", "POST",
           imports + "?fieldValidation=Strict", {
               "apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
               "metadata": {"name": "si3"}, "spec": {"type": "Headless", "ports": [], "foo": 1}})
    p.same("custom resource: warned, an unknown field", "POST", imports, {
        "apiVersion": "multicluster.x-k8s.io/v1beta1", "kind": "ServiceImport",
        "metadata": {"name": "si4"}, "spec": {"type": "Headless", "ports": [], "foo": 1}})
    p.same("custom resource: ServiceExport create", "POST", exports, {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceExport",
        "metadata": {"name": "s1"}})
    p.same("custom resource: ServiceExport read through v1beta1", "GET",
           "/apis/multicluster.x-k8s.io/v1beta1/namespaces/%s/serviceexports/s1" % NS)
    p.same("custom resource: strategic merge patch is refused", "PATCH", exports + "/s1",
           {"metadata": {"labels": {"a": "b"}}},
           content_type="application/strategic-merge-patch+json")
    p.same("custom resource: missing", "GET", exports + "/absent")


# --- tables ---------------------------------------------------------------------------------------

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


def tables(p):
    lists = {
        "namespaces": "/api/v1/namespaces?labelSelector=kubernetes.io%2Fmetadata.name%3D" + NS,
        "services": "/api/v1/namespaces/%s/services" % NS,
        "pods": "/api/v1/namespaces/%s/pods" % NS,
        "endpointslices": "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices" % NS,
        "endpoints": "/api/v1/namespaces/%s/endpoints" % NS,
        "leases": "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NS,
        "events": "/api/v1/namespaces/%s/events" % NS,
        "events.k8s.io": "/apis/events.k8s.io/v1/namespaces/%s/events" % NS,
        "customresourcedefinitions": CRD_PATH + "?fieldSelector=metadata.name%3Dserviceimports.multicluster.x-k8s.io",
        "serviceimports": "/apis/multicluster.x-k8s.io/v1beta1/namespaces/%s/serviceimports" % NS,
        "serviceexports": "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/%s/serviceexports" % NS,
        "configmaps": "/api/v1/namespaces/%s/configmaps?fieldSelector=metadata.name%%3Dcm1" % NS,
    }
    p.both("POST", "/api/v1/namespaces/%s/configmaps" % NS, {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1"}, "data": {"a": "1"}})
    for resource, path in lists.items():
        p.same("table: " + resource, "GET", path, accept=TABLE)
    p.same("table: one service", "GET", "/api/v1/namespaces/%s/services/s1" % NS, accept=TABLE)
    p.same("table: includeObject=Object", "GET",
           "/api/v1/namespaces/%s/configmaps/cm1?includeObject=Object" % NS, accept=TABLE)
    p.same("table: includeObject=None", "GET",
           "/api/v1/namespaces/%s/configmaps/cm1?includeObject=None" % NS, accept=TABLE)


# --- bad input, dry run, conflicts, patches, deletes ----------------------------------------------

CM = "/api/v1/namespaces/%s/configmaps" % NS


def configmap(name, **extra):
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    obj.update(extra)
    return obj


def bad_input(p):
    p.same("bad input: malformed JSON", "POST", CM, '{"kind": "ConfigMap", "metadata": {')
    p.same("bad input: a JSON array", "POST", CM, "[1, 2]")
    p.same("bad input: an empty body", "POST", CM, "")
    p.same("bad input: wrong kind", "POST", CM, {"apiVersion": "v1", "kind": "Service",
                                                 "metadata": {"name": "x"}})
    p.same("bad input: wrong apiVersion", "POST", CM, {"apiVersion": "apps/v1", "kind": "ConfigMap",
                                                       "metadata": {"name": "x"}})
    p.same("bad input: no kind", "POST", CM, {"apiVersion": "v1", "metadata": {"name": "nokind"}})
    p.same("bad input: metadata not an object", "POST", CM,
           {"apiVersion": "v1", "kind": "ConfigMap", "metadata": "x"})
    p.same("bad input: a number where a string stands", "POST", CM, configmap("n", data={"a": 1}))
    p.same("bad input: unknown field, Strict", "POST", CM + "?fieldValidation=Strict",
           configmap("strict", foo="bar"))
    p.same("bad input: unknown nested field, Strict", "POST", SERVICE_PATH + "?fieldValidation=Strict",
           service("strict", {"ports": [{"port": 80, "bogus": 1}], "frob": True}))
    p.same("bad input: duplicate field, Strict", "POST", CM + "?fieldValidation=Strict",
           '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{},"data":{}}')
    p.same("bad input: unknown field, Warn", "POST", CM + "?fieldValidation=Warn",
           configmap("warned", foo="bar"))
    p.same("bad input: unknown field, Ignore", "POST", CM + "?fieldValidation=Ignore",
           configmap("ignored", foo="bar"))
    p.same("bad input: an invalid fieldValidation", "POST", CM + "?fieldValidation=Loud",
           configmap("loud"))
    p.same("bad input: an invalid name", "POST", CM, configmap("Bad_Name"))
    p.same("bad input: a name of 254 characters", "POST", CM, configmap("a" * 254))
    p.same("bad input: no name", "POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})
    p.same("bad input: an invalid label", "POST", CM,
           {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "l", "labels": {"a": "not ok!"}}})
    p.same("bad input: an invalid annotation key", "POST", CM,
           {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "l", "annotations": {"a b": "x"}}})
    p.same("bad input: a namespace that differs from the URL's", "POST", CM,
           {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "other"}})
    p.same("bad input: a missing namespace", "POST", "/api/v1/namespaces/nowhere/configmaps",
           configmap("x"))
    p.same("bad input: a resourceVersion on create", "POST", CM,
           {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rv", "resourceVersion": "5"}})
    p.same("bad input: an invalid label selector", "GET", CM + "?labelSelector=a%20in%20(b")
    p.same("bad input: an unsupported field selector", "GET", CM + "?fieldSelector=spec.foo%3Dbar")
    p.same("bad input: an unknown resource", "GET", "/api/v1/namespaces/%s/frobnicators" % NS)
    p.same("bad input: an unknown group", "GET", "/apis/nope.example.com/v1/things")
    p.same("bad input: POST to a named object", "POST", CM + "/named", configmap("named"))
    p.same("bad input: a Service with an invalid IP", "POST", SERVICE_PATH,
           service("badip", {"clusterIP": "300.1.1.1", "ports": [{"port": 80}]}))
    p.same("bad input: a patch with an unsupported content type", "PATCH", CM + "/none", "{}",
           content_type="text/plain")


def dry_run_and_conflicts(p):
    p.same("dry run: create", "POST", CM + "?dryRun=All", configmap("dry", data={"a": "1"}))
    p.same("dry run: the object is not stored", "GET", CM + "/dry")
    p.same("dry run: an invalid dryRun value", "POST", CM + "?dryRun=Some", configmap("dry"))
    p.same("dry run: a Service", "POST", SERVICE_PATH + "?dryRun=All",
           service("dry", {"type": "NodePort", "ports": [{"port": 80}]}))
    p.same("conflict: create of an existing name", "POST", CM, configmap("cm1"))
    real, ours = p.both("GET", CM + "/cm1")
    p.both("PATCH", CM + "/cm1", {"data": {"a": "2"}}, content_type="application/merge-patch+json")
    bodies = (real.json(), ours.json())
    for body in bodies:
        body["data"] = {"a": "stale"}
    p.compare("conflict: an update with a stale resourceVersion",
              view(p.real.request("PUT", CM + "/cm1", bodies[0])),
              view(p.ours.request("PUT", CM + "/cm1", bodies[1])))
    p.same("conflict: an update with an invalid resourceVersion", "PUT", CM + "/cm1",
           configmap("cm1", metadata={"name": "cm1", "resourceVersion": "abc"}))
    p.same("conflict: an update of a missing object", "PUT", CM + "/absent", configmap("absent"))
    p.same("conflict: an update that renames", "PUT", CM + "/cm1", configmap("renamed"))
    p.same("dry run: delete", "DELETE", CM + "/cm1?dryRun=All")
    p.same("dry run: the deleted object is still there", "GET", CM + "/cm1")


def patches(p):
    p.both("POST", CM, configmap("patched", data={"x": "1", "y": "2"},
                                 metadata={"name": "patched", "labels": {"a": "1"}}))
    p.same("patch: merge", "PATCH", CM + "/patched",
           {"metadata": {"labels": {"b": "2"}}, "data": {"x": None, "z": "3"}},
           content_type="application/merge-patch+json")
    p.same("patch: strategic", "PATCH", CM + "/patched", {"data": {"w": "4"}},
           content_type="application/strategic-merge-patch+json")
    p.same("patch: JSON patch", "PATCH", CM + "/patched",
           [{"op": "add", "path": "/data/c", "value": "4"}, {"op": "remove", "path": "/data/y"}],
           content_type="application/json-patch+json")
    p.same("patch: JSON patch, a failing test op", "PATCH", CM + "/patched",
           [{"op": "test", "path": "/data/c", "value": "nope"}],
           content_type="application/json-patch+json")
    p.same("patch: JSON patch, removing a missing path", "PATCH", CM + "/patched",
           [{"op": "remove", "path": "/data/nothing"}], content_type="application/json-patch+json")
    p.same("patch: JSON patch, not a list", "PATCH", CM + "/patched", {"op": "add"},
           content_type="application/json-patch+json")
    p.same("patch: malformed merge patch", "PATCH", CM + "/patched", '{"data":',
           content_type="application/merge-patch+json")
    p.same("patch: merge patch result that does not decode", "PATCH", CM + "/patched",
           {"data": {"a": 1}}, content_type="application/merge-patch+json")
    p.same("patch: of a missing object", "PATCH", CM + "/absent", {"data": {"a": "1"}},
           content_type="application/merge-patch+json")
    p.same("patch: apply creates", "PATCH", CM + "/applied?fieldManager=diff",
           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: '1'\n",
           content_type="application/apply-patch+yaml")
    p.same("patch: apply again", "PATCH", CM + "/applied?fieldManager=diff",
           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: '2'\n",
           content_type="application/apply-patch+yaml")
    p.same("patch: apply without fieldManager", "PATCH", CM + "/applied",
           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n",
           content_type="application/apply-patch+yaml")
    p.both("POST", SERVICE_PATH, service("sp", {"selector": {"app": "x"},
                                                "ports": [{"name": "http", "port": 80}]}))
    p.same("patch: strategic merges Service ports by port", "PATCH", SERVICE_PATH + "/sp",
           {"spec": {"ports": [{"name": "https", "port": 443, "targetPort": 8443}]}},
           content_type="application/strategic-merge-patch+json")
    p.same("patch: strategic $patch delete of a port", "PATCH", SERVICE_PATH + "/sp",
           {"spec": {"ports": [{"$patch": "delete", "port": 443}]}},
           content_type="application/strategic-merge-patch+json")
    p.same("patch: strategic with an unknown directive", "PATCH", SERVICE_PATH + "/sp",
           {"spec": {"$patch": "frob"}}, content_type="application/strategic-merge-patch+json")


def deletes(p):
    ns = "diff-del"
    path = "/api/v1/namespaces/%s/configmaps" % ns
    for name in ("d1", "d2", "d3", "held", "pb", "pb-invalid"):
        extra = {"finalizers": ["example.com/hold"]} if name == "held" else {}
        p.both("POST", path, {"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": dict(name=name, labels={"del": "yes"}, **extra)})
    p.same("delete: an object", "DELETE", path + "/d1")
    p.same("delete: a missing object", "DELETE", path + "/d1")
    p.same("delete: a uid precondition that fails", "DELETE", path + "/d2",
           {"apiVersion": "v1", "kind": "DeleteOptions",
            "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}})
    p.same("delete: a resourceVersion precondition that fails", "DELETE", path + "/d2",
           {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"resourceVersion": "1"}})
    p.same("delete: propagationPolicy Orphan", "DELETE", path + "/d2",
           {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Orphan"})
    p.same("delete: an invalid propagationPolicy", "DELETE", path + "/d3",
           {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Sideways"})
    p.same("delete: with a finalizer", "DELETE", path + "/held")
    p.same("delete: a collection", "DELETE", path + "?labelSelector=del%3Dyes")
    p.same("delete: the finalized object is terminating", "GET", path + "/held")
    # What client-go sends with every delete of a built-in kind: v1 DeleteOptions, nothing set.
    p.same("delete: protobuf DeleteOptions", "DELETE", path + "/pb",
           b"k8s\x00\n\x13\n\x02v1\x12\rDeleteOptions\x12\x00\x1a\x00\"\x00",
           content_type="application/vnd.kubernetes.protobuf")
    # ... with propagationPolicy (field 4) "Sideways".
    p.same("delete: protobuf DeleteOptions, an invalid propagationPolicy", "DELETE",
           path + "/pb-invalid",
           b"k8s\x00\n\x13\n\x02v1\x12\rDeleteOptions\x12\n\"\x08Sideways",
           content_type="application/vnd.kubernetes.protobuf")
    p.both("PATCH", path + "/held", {"metadata": {"finalizers": None}},
           content_type="application/merge-patch+json")


# --- the e2e client scripts' calls, through the clients ---------------------------------------

KUBECTL_NS = "diff-kubectl"


def normalize_text(text):
    """kubectl's printed output without what differs legitimately: ages, allocated addresses and
    node ports, uids, resourceVersions."""
    text = apidiff.scrub_message(text)
    text = re.sub(r"\b\d+(\.\d+)?(s|m|h|d)(\d+s)?\b", "<age>", text)
    text = re.sub(r":3\d{4}/", ":<nodePort>/", text)
    text = re.sub(r'"resourceVersion": "\d+"', '"resourceVersion": "<rv>"', text)
    # Columns are padded to their widest cell, which a normalised address no longer is.
    return re.sub(r"  +", "  ", text)


def kubectl_client(p, workdir):
    """What tests/e2e/kubectl_test.sh does, with kubectl 1.32 against each server (a discovery
    cache of its own per server): the printed output compared."""
    manifests = os.path.join(workdir, "manifests")
    os.makedirs(manifests, exist_ok=True)

    def write(name, text):
        path = os.path.join(manifests, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    cm = write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n"
                          "  labels: {app: demo}\ndata:\n  a: \"1\"\n")
    cm2 = write("cm2.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n"
                            "  labels: {app: demo}\ndata:\n  a: \"2\"\n")
    svc = write("svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
                            "  labels: {app: web}\nspec:\n  selector: {app: web}\n  ports:\n"
                            "  - {name: http, port: 80, targetPort: 8080, protocol: TCP}\n")
    bad = write("bad-svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: bad\nspec:\n"
                                "  selector: {app: bad}\n  ports:\n  - {name: a, port: 0}\n"
                                "  - {name: a, port: 80}\n")
    typo = write("typo.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\n"
                              "dta:\n  a: \"1\"\n")
    missing = write("missing.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\n"
                                    "  namespace: demo-nonexistent\n")
    homes = {}
    for side in ("real", "ours"):
        homes[side] = os.path.join(workdir, "home-" + side)
        os.makedirs(homes[side], exist_ok=True)
    ns = ["-n", KUBECTL_NS]
    steps = [
        ("apply creates", ns + ["apply", "-f", cm]),
        ("apply again is unchanged", ns + ["apply", "-f", cm]),
        ("apply after an edit configures", ns + ["apply", "-f", cm2]),
        ("get -o jsonpath", ns + ["get", "configmap", "app-config", "-o", "jsonpath={.data}"]),
        ("apply with an unknown field (kubectl validates strictly)", ns + ["apply", "-f", typo]),
        ("apply --validate=warn with an unknown field", ns + ["apply", "--validate=warn", "-f", typo]),
        ("create -f", ns + ["create", "-f", svc]),
        ("create -f of an existing object", ns + ["create", "-f", svc]),
        ("create of an invalid Service", ns + ["create", "-f", bad]),
        ("get services -o wide", ns + ["get", "services", "-o", "wide"]),
        ("label", ns + ["label", "configmap", "app-config", "tier=backend"]),
        ("label --overwrite", ns + ["label", "configmap", "app-config", "tier=frontend", "--overwrite"]),
        ("label removal", ns + ["label", "configmap", "app-config", "tier-"]),
        ("annotate", ns + ["annotate", "configmap", "app-config", "owner=team-a"]),
        ("patch --type merge", ns + ["patch", "configmap", "app-config", "--type", "merge", "-p",
                                     '{"data":{"b":"3"}}']),
        ("patch --type json", ns + ["patch", "configmap", "app-config", "--type", "json", "-p",
                                    '[{"op":"add","path":"/data/c","value":"4"}]']),
        ("a failing json patch test op", ns + ["patch", "configmap", "app-config", "--type", "json",
                                               "-p", '[{"op":"test","path":"/data/b","value":"no"}]']),
        ("patch (strategic) of Service ports", ns + ["patch", "service", "web", "-p",
            '{"spec":{"ports":[{"name":"https","port":443,"targetPort":8443}]}}']),
        ("the merged ports", ns + ["get", "service", "web", "-o", "jsonpath={.spec.ports[*].port}"]),
        ("apply --dry-run=server", ns + ["apply", "--dry-run=server", "-f", cm]),
        ("create --dry-run=server of the MCS probe Service (issue #30)",
         ns + ["create", "service", "clusterip", "probe", "--clusterip=None", "--dry-run=server",
               "-o", "jsonpath={.spec.ipFamilyPolicy} {.spec.ipFamilies}"]),
        ("create namespace (protobuf)", ["create", "namespace", "diff-kubectl-pb"]),
        ("create configmap --from-literal (protobuf)", ns + ["create", "configmap", "lit",
                                                              "--from-literal=k=v"]),
        ("get configmaps", ns + ["get", "configmaps"]),
        ("get serviceimports (CRD columns)", ["-n", NS, "get", "serviceimports"]),
        ("get pods", ["-n", NS, "get", "pods"]),
        ("get endpointslices", ["-n", NS, "get", "endpointslices"]),
        ("get leases", ["-n", NS, "get", "leases"]),
        ("create in a missing namespace", ["create", "-f", missing]),
        ("delete", ns + ["delete", "configmap", "app-config"]),
        ("get after delete", ns + ["get", "configmap", "app-config"]),
        ("replace of a missing object", ns + ["replace", "-f", cm]),
    ]
    for label, args in steps:
        seen = {}
        for side, endpoint in (("real", p.real), ("ours", p.ours)):
            env = dict(os.environ, HOME=homes[side])
            result = subprocess.run(["kubectl", "--kubeconfig", endpoint.kubeconfig,
                                     "--request-timeout=30s"] + args,
                                    capture_output=True, text=True, timeout=60, env=env)
            seen[side] = {"exit": result.returncode,
                          "stdout": normalize_text(result.stdout).splitlines(),
                          "stderr": normalize_text(result.stderr).splitlines()}
        p.compare("kubectl: " + label, seen["real"], seen["ours"])


def python_client(p):
    """What tests/e2e/python_client_test.py does, with Debian's python3-kubernetes."""
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    def run(endpoint):
        api = config.new_client_from_config(config_file=endpoint.kubeconfig, persist_config=False)
        core, discovery = client.CoreV1Api(api), client.DiscoveryV1Api(api)
        events = client.EventsV1Api(api)
        ns = "diff-py"
        seen = []

        def call(label, fn):
            try:
                out = fn()
                seen.append((label, apidiff.scrub(api.sanitize_for_serialization(out))))
            except ApiException as e:
                body = e.body.decode() if isinstance(e.body, bytes) else e.body
                try:
                    body = apidiff.scrub(json.loads(body))
                except (TypeError, ValueError):
                    pass
                seen.append((label, {"status": e.status, "reason": e.reason, "body": body}))
            except Exception as e:  # noqa: BLE001 - what the client raises is what it sees
                seen.append((label, {"raised": type(e).__name__, "text": str(e)}))

        meta = client.V1ObjectMeta
        call("create_namespaced_config_map", lambda: core.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=meta(name="one", labels={"app": "py"}),
                                   data={"a": "1"})))
        call("list with a label selector", lambda: core.list_namespaced_config_map(
            ns, label_selector="app=py"))
        call("patch (strategic merge)", lambda: core.patch_namespaced_config_map(
            "one", ns, {"data": {"b": "2"}}))
        call("patch (JSON patch)", lambda: core.patch_namespaced_config_map(
            "one", ns, [{"op": "replace", "path": "/data/a", "value": "9"}]))
        call("create of an existing name", lambda: core.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=meta(name="one"))))
        call("create with an invalid name", lambda: core.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=meta(name="Not_Valid"))))
        call("create_namespaced_service", lambda: core.create_namespaced_service(
            ns, client.V1Service(metadata=meta(name="web"), spec=client.V1ServiceSpec(
                selector={"app": "web"}, ports=[client.V1ServicePort(name="http", port=80)]))))
        call("create_namespaced_endpoint_slice", lambda: discovery.create_namespaced_endpoint_slice(
            ns, client.V1EndpointSlice(
                metadata=meta(name="web-abc12", labels={"kubernetes.io/service-name": "web"}),
                address_type="IPv4",
                endpoints=[client.V1Endpoint(addresses=["10.1.0.1"],
                                             conditions=client.V1EndpointConditions(ready=True))],
                ports=[client.DiscoveryV1EndpointPort(name="http", port=8080, protocol="TCP")])))
        call("addressType is immutable", lambda: discovery.patch_namespaced_endpoint_slice(
            "web-abc12", ns, {"addressType": "IPv6"}))
        call("an isoformat() eventTime", lambda: events.create_namespaced_event(
            ns, client.EventsV1Event(
                metadata=meta(name="bad-time"),
                event_time=__import__("datetime").datetime(2024, 1, 1, tzinfo=__import__(
                    "datetime").timezone.utc),
                reason="Scheduled", type="Normal", action="Binding",
                regarding=client.V1ObjectReference(kind="Pod", name="web-0", namespace=ns),
                reporting_controller="default-scheduler",
                reporting_instance="default-scheduler-1")))
        call("read after delete", lambda: (core.delete_namespaced_config_map("one", ns),
                                           core.read_namespaced_config_map("one", ns)))
        call("delete of a missing object", lambda: core.delete_namespaced_config_map("one", ns))
        return seen

    real, ours = run(p.real), run(p.ours)
    for (label, real_seen), (_, ours_seen) in zip(real, ours):
        p.compare("python client: " + label, real_seen, ours_seen)


def js_client(p):
    """What tests/e2e/js/client_node_test.mjs does, with @kubernetes/client-node
    (client_node_calls.mjs prints what each call returned or raised)."""
    script = os.path.join(HERE, "client_node_calls.mjs")
    modules = os.path.join(SOURCE, "tests", "e2e", "js", "node_modules", "@kubernetes",
                           "client-node")
    if shutil.which("node") is None or not os.path.isdir(modules):
        checks.ok("client-node: skipped (node or tests/e2e/js/node_modules missing)")
        return
    seen = {}
    for side, endpoint in (("real", p.real), ("ours", p.ours)):
        result = subprocess.run(["node", script, endpoint.kubeconfig], capture_output=True,
                                text=True, timeout=120)
        if result.returncode != 0:
            checks.fail("client-node against %s ran" % side, result.stderr[-2000:])
            return
        seen[side] = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    for real, ours in zip(seen["real"], seen["ours"]):
        p.compare("client-node: " + real["label"], apidiff.scrub(real["seen"]),
                  apidiff.scrub(ours["seen"]))


# --- main -----------------------------------------------------------------------------------------

def start_ours(binary, workdir, name, cidrs):
    data = os.path.join(workdir, name)
    kubeconfig = os.path.join(workdir, name + ".kubeconfig")
    server = Server(binary, data, ["--write-kubeconfig", kubeconfig,
                                   "--service-cluster-ip-range", cidrs])
    server.start(port=0)
    return server, kubeconfig


def start_planes(workdir):
    """The two kube-apiservers, started side by side (each takes a few seconds)."""
    planes = {
        "dual": control_plane.ControlPlane(os.path.join(workdir, "real-dual"), dual_stack=True),
        "single": control_plane.ControlPlane(os.path.join(workdir, "real-single"),
                                             dual_stack=False, base_controllers=()),
    }
    errors = {}

    def start(key):
        try:
            planes[key].start()
        except Exception as error:  # noqa: BLE001 - reported below
            errors[key] = error

    threads = [threading.Thread(target=start, args=(k,)) for k in planes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return planes, errors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--only", help="run only the cases whose name matches this regex")
    args = parser.parse_args()
    install_sigterm_exit()
    control_plane.skip_unless_assets()
    binary = os.path.abspath(args.binary)
    only = re.compile(args.only) if args.only else None
    workdir = tempfile.mkdtemp(prefix="sw-apiserver-diff.")
    started = time.monotonic()
    planes, errors = {}, {}
    servers = []
    keep = False
    try:
        planes, errors = start_planes(workdir)
        if errors:
            for key, error in errors.items():
                checks.fail("the %s-stack kube-apiserver starts" % key, str(error))
            return checks.finish()
        version = planes["dual"].version
        ours_dual, ours_dual_config = start_ours(binary, workdir, "ours-dual", DUAL_CIDRS)
        ours_single, ours_single_config = start_ours(binary, workdir, "ours-single", SINGLE_CIDRS)
        servers = [ours_dual, ours_single]
        print("kube-apiserver %s and slicewright up in %.1f s" % (
            version, time.monotonic() - started), flush=True)
        ledger = apidiff.Ledger(checks, KNOWN, PENDING, version)
        dual = Pair(Endpoint("real", planes["dual"].admin_kubeconfig, workdir),
                    Endpoint("ours", ours_dual_config, workdir), ledger, only)
        single = Pair(Endpoint("real", planes["single"].admin_kubeconfig, workdir),
                      Endpoint("ours", ours_single_config, workdir), ledger, only,
                      prefix="single-stack ")
        single.both("POST", "/api/v1/namespaces",
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        for section in (namespaces, services, service_updates, pods, endpoint_slices, endpoints,
                        leases, events, crds, custom_resources, tables, bad_input,
                        dry_run_and_conflicts, patches, deletes):
            checks.run(section.__name__, lambda section=section: section(dual))
        checks.run("families_single_stack", lambda: families_single_stack(single))
        checks.run("kubectl_client", lambda: kubectl_client(dual, workdir))
        checks.run("python_client", lambda: python_client(dual))
        checks.run("js_client", lambda: js_client(dual))
        ran = dual.ran | single.ran
        if only is None:
            ledger.finish(ran)
        print("%d cases, %d differences (%d known) in %.1f s" % (
            len(ran), len(ledger.differences),
            sum(1 for d in ledger.differences if d[1] is not None),
            time.monotonic() - started), flush=True)
    finally:
        keep = checks.failed > 0
        for server in servers:
            server.stop()
        for plane in planes.values():
            # Killed, not stopped: nothing here needs their graceful shutdown (~10 s each).
            if plane.kubelet is not None:
                plane.kubelet.stop()
            for process in reversed(plane.processes):
                process.kill()
            plane.processes = []
            shutil.rmtree(getattr(plane, "etcd_data", ""), ignore_errors=True)
        if keep or os.environ.get("E2E_KEEP"):
            print("(kept %s for inspection)" % workdir, flush=True)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
