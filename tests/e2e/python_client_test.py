#!/usr/bin/python3
"""End-to-end: Debian's python3-kubernetes against `slicewright apiserver` (HTTPS, through the
kubeconfig it writes, unchanged).

CoreV1Api and DiscoveryV1Api create/list/patch/delete; EventsV1Api and CoreV1Api share Events;
watch.Watch().stream from a list's
resourceVersion sees exactly the later events in order; a watch resumed after a server restart
from the last seen resourceVersion sees exactly the events written after (none lost, none
repeated); with --history-events 50, a watch and a continue token older than the history are
410 Gone.

Usage: /usr/bin/python3 python_client_test.py PATH/TO/slicewright
"""

import datetime
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import e2e_server  # noqa: E402
from e2e_server import Checks, Scratch, Server  # noqa: E402

from kubernetes import client, config, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

SLOW = e2e_server.SLOW
checks = Checks("python_client_test")


def api_client(kubeconfig):
    return config.new_client_from_config(config_file=kubeconfig, persist_config=False)


def meta(name, **kwargs):
    return client.V1ObjectMeta(name=name, **kwargs)


def config_map(name, data=None, labels=None):
    return client.V1ConfigMap(metadata=meta(name, labels=labels), data=data or {})


def status_of(call):
    """Runs call(); returns the ApiException's status (0 when it succeeded)."""
    try:
        call()
    except ApiException as e:
        return e.status
    return 0


def collect(core, namespace, resource_version, until_name):
    """Watches ConfigMaps of `namespace` from `resource_version` until the ADDED event of
    `until_name` (included); returns [(type, name, resourceVersion)]."""
    events = []
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_config_map, namespace,
                          resource_version=resource_version, timeout_seconds=30 * SLOW):
        obj = event["object"]
        events.append((event["type"], obj.metadata.name, obj.metadata.resource_version))
        if event["type"] == "ADDED" and obj.metadata.name == until_name:
            w.stop()
    return events


def crud(core, discovery):
    ns = "py-crud"
    created = core.create_namespace(client.V1Namespace(metadata=meta(ns)))
    checks.eq("create_namespace", created.metadata.name, ns)
    checks.check("the namespace is Active", created.status.phase == "Active", created.status)

    cm = core.create_namespaced_config_map(ns, config_map("one", {"a": "1"}, {"app": "py"}))
    checks.check("create_namespaced_config_map gets a uid and resourceVersion",
                 cm.metadata.uid and int(cm.metadata.resource_version) > 0, cm.metadata)
    core.create_namespaced_config_map(ns, config_map("two", {"a": "2"}, {"app": "other"}))
    names = [i.metadata.name for i in core.list_namespaced_config_map(ns).items]
    checks.eq("list_namespaced_config_map", names, ["one", "two"])
    names = [i.metadata.name for i in
             core.list_namespaced_config_map(ns, label_selector="app=py").items]
    checks.eq("list with a label selector", names, ["one"])
    names = [i.metadata.name for i in
             core.list_namespaced_config_map(ns, field_selector="metadata.name=two").items]
    checks.eq("list with a field selector", names, ["two"])
    page = core.list_namespaced_config_map(ns, limit=1)
    rest = core.list_namespaced_config_map(ns, limit=1, _continue=page.metadata._continue)
    checks.eq("list with limit and continue",
              ([i.metadata.name for i in page.items], [i.metadata.name for i in rest.items],
               rest.metadata._continue), (["one"], ["two"], None))

    # A dict body is a strategic merge patch, a list a JSON patch (the client's choice).
    patched = core.patch_namespaced_config_map("one", ns, {"data": {"b": "2"}})
    checks.eq("patch (strategic merge)", patched.data, {"a": "1", "b": "2"})
    checks.check("a patch bumps the resourceVersion",
                 int(patched.metadata.resource_version) > int(cm.metadata.resource_version))
    patched = core.patch_namespaced_config_map(
        "one", ns, [{"op": "replace", "path": "/data/a", "value": "9"}])
    checks.eq("patch (JSON patch)", patched.data, {"a": "9", "b": "2"})
    stale = config_map("one", {"a": "stale"})
    stale.metadata.resource_version = cm.metadata.resource_version
    checks.eq("replace with a stale resourceVersion is 409",
              status_of(lambda: core.replace_namespaced_config_map("one", ns, stale)), 409)
    checks.eq("create of an existing name is 409",
              status_of(lambda: core.create_namespaced_config_map(ns, config_map("one"))), 409)
    checks.eq("create with an invalid name is 422",
              status_of(lambda: core.create_namespaced_config_map(ns, config_map("Not_Valid"))), 422)

    svc = core.create_namespaced_service(ns, client.V1Service(
        metadata=meta("web"),
        spec=client.V1ServiceSpec(selector={"app": "web"},
                                  ports=[client.V1ServicePort(name="http", port=80)])))
    checks.check("create_namespaced_service allocates a ClusterIP",
                 svc.spec.cluster_ip not in (None, "", "None"), svc.spec)
    checks.eq("the port's targetPort defaults to the port", svc.spec.ports[0].target_port, 80)

    es = discovery.create_namespaced_endpoint_slice(ns, client.V1EndpointSlice(
        metadata=meta("web-abc12", labels={"kubernetes.io/service-name": "web"}),
        address_type="IPv4",
        endpoints=[client.V1Endpoint(addresses=["10.1.0.1"],
                                     conditions=client.V1EndpointConditions(ready=True))],
        ports=[client.DiscoveryV1EndpointPort(name="http", port=8080, protocol="TCP")]))
    checks.eq("create_namespaced_endpoint_slice", es.endpoints[0].addresses, ["10.1.0.1"])
    listed = discovery.list_namespaced_endpoint_slice(
        ns, label_selector="kubernetes.io/service-name=web")
    checks.eq("list_namespaced_endpoint_slice by service-name",
              [i.metadata.name for i in listed.items], ["web-abc12"])
    everywhere = discovery.list_endpoint_slice_for_all_namespaces()
    checks.check("list_endpoint_slice_for_all_namespaces",
                 "web-abc12" in [i.metadata.name for i in everywhere.items])
    patched = discovery.patch_namespaced_endpoint_slice(
        "web-abc12", ns,
        {"endpoints": [{"addresses": ["10.1.0.2"], "conditions": {"ready": False}}]})
    checks.eq("patch_namespaced_endpoint_slice replaces the atomic endpoints list",
              [(e.addresses, e.conditions.ready) for e in patched.endpoints],
              [(["10.1.0.2"], False)])
    checks.eq("addressType is immutable (422)", status_of(
        lambda: discovery.patch_namespaced_endpoint_slice("web-abc12", ns,
                                                          {"addressType": "IPv6"})), 422)
    discovery.delete_namespaced_endpoint_slice("web-abc12", ns)
    checks.eq("read after delete_namespaced_endpoint_slice is 404", status_of(
        lambda: discovery.read_namespaced_endpoint_slice("web-abc12", ns)), 404)
    core.delete_namespaced_config_map("two", ns)
    checks.eq("read after delete_namespaced_config_map is 404",
              status_of(lambda: core.read_namespaced_config_map("two", ns)), 404)
    checks.eq("delete of a missing object is 404",
              status_of(lambda: core.delete_namespaced_config_map("two", ns)), 404)


def events_v1(core, events):
    """events.k8s.io/v1 and core/v1 Events are one store: what EventsV1Api writes (as client-go's
    events/v1 recorder and kube-scheduler do) CoreV1Api lists, and the reverse, watch included."""
    ns = "py-events"
    core.create_namespace(client.V1Namespace(metadata=meta(ns)))
    # The client writes a datetime as isoformat() ("2024-01-01T00:00:00+00:00"), which
    # kube-apiserver refuses for a MicroTime (six fraction digits); callers pass the text instead.
    refused = status_of(lambda: events.create_namespaced_event(ns, client.EventsV1Event(
        metadata=meta("bad-time"), event_time=datetime.datetime(2024, 1, 1,
                                                                tzinfo=datetime.timezone.utc),
        reason="Scheduled", type="Normal", action="Binding",
        regarding=client.V1ObjectReference(kind="Pod", name="web-0", namespace=ns),
        reporting_controller="default-scheduler", reporting_instance="default-scheduler-1")))
    checks.eq("an isoformat() eventTime is 400, as kube-apiserver answers", refused, 400)
    when = "2024-01-01T00:00:00.000000Z"
    created = events.create_namespaced_event(ns, client.EventsV1Event(
        metadata=meta("web-0.scheduled"), event_time=when, reason="Scheduled", type="Normal",
        regarding=client.V1ObjectReference(kind="Pod", name="web-0", namespace=ns),
        note="assigned", action="Binding", reporting_controller="default-scheduler",
        reporting_instance="default-scheduler-1"))
    listed = core.list_namespaced_event(ns, field_selector="involvedObject.name=web-0")
    checks.eq("CoreV1Api lists an EventsV1Api Event by involvedObject.name",
              [(e.metadata.name, e.message, e.reporting_component, e.metadata.resource_version)
               for e in listed.items],
              [("web-0.scheduled", "assigned", "default-scheduler",
                created.metadata.resource_version)])
    added = core.create_namespaced_event(ns, client.CoreV1Event(
        metadata=meta("web-1.started"), event_time=when, reason="Started", type="Normal",
        involved_object=client.V1ObjectReference(kind="Pod", name="web-1", namespace=ns),
        message="started", source=client.V1EventSource(component="kubelet")))
    seen = []
    w = watch.Watch()
    for event in w.stream(events.list_namespaced_event, ns,
                          resource_version=listed.metadata.resource_version,
                          field_selector="regarding.name=web-1", timeout_seconds=30 * SLOW):
        obj = event["object"]
        seen.append((event["type"], obj.metadata.name, obj.regarding.name, obj.note,
                     obj.deprecated_source.component, obj.metadata.resource_version))
        w.stop()
    checks.eq("an EventsV1Api watch sees a CoreV1Api Event in its shape",
              seen, [("ADDED", "web-1.started", "web-1", "started", "kubelet",
                      added.metadata.resource_version)])
    events.delete_namespaced_event("web-1.started", ns)
    checks.eq("deleted through EventsV1Api, gone from CoreV1Api",
              status_of(lambda: core.read_namespaced_event("web-1.started", ns)), 404)


def watch_from_list(core, state):
    ns = "py-watch"
    core.create_namespace(client.V1Namespace(metadata=meta(ns)))
    core.create_namespaced_config_map(ns, config_map("before"))
    listed = core.list_namespaced_config_map(ns)
    rv0 = listed.metadata.resource_version

    expected = []
    obj = core.create_namespaced_config_map(ns, config_map("w1", {"v": "1"}))
    expected.append(("ADDED", "w1", obj.metadata.resource_version))
    obj = core.create_namespaced_config_map(ns, config_map("w2"))
    expected.append(("ADDED", "w2", obj.metadata.resource_version))
    obj = core.patch_namespaced_config_map("w1", ns, {"data": {"v": "2"}})
    expected.append(("MODIFIED", "w1", obj.metadata.resource_version))
    obj = core.delete_namespaced_config_map("w2", ns)
    # The DELETED event carries the deletion's revision; the delete answers with the object.
    obj = core.create_namespaced_config_map(ns, config_map("end-1"))
    end_rv = obj.metadata.resource_version
    events = collect(core, ns, rv0, "end-1")
    got = [(t, n) for t, n, _ in events]
    checks.eq("a watch from a list's resourceVersion sees exactly the later events, in order",
              got, [("ADDED", "w1"), ("ADDED", "w2"), ("MODIFIED", "w1"), ("DELETED", "w2"),
                    ("ADDED", "end-1")])
    rvs = [int(rv) for _, _, rv in events]
    checks.check("watch resourceVersions increase strictly", rvs == sorted(set(rvs)), rvs)
    checks.eq("watch events carry the writes' resourceVersions",
              [e for e in events if e[0] != "DELETED"],
              expected + [("ADDED", "end-1", end_rv)])

    # A live watch (started before the writes) sees them as they happen.
    live = []
    started = threading.Event()

    def live_watch():
        w = watch.Watch()
        for event in w.stream(core.list_namespaced_config_map, ns, resource_version=end_rv,
                              timeout_seconds=30 * SLOW):
            started.set()
            obj = event["object"]
            live.append((event["type"], obj.metadata.name, obj.metadata.resource_version))
            if event["object"].metadata.name == "live-end":
                w.stop()

    thread = threading.Thread(target=live_watch, daemon=True)
    thread.start()
    core.create_namespaced_config_map(ns, config_map("live"))
    core.delete_namespaced_config_map("live", ns)
    core.create_namespaced_config_map(ns, config_map("live-end"))
    thread.join(30 * SLOW)
    checks.eq("a live watch sees the writes", [(t, n) for t, n, _ in live],
              [("ADDED", "live"), ("DELETED", "live"), ("ADDED", "live-end")])
    state["ns"] = ns
    # The last resourceVersion this client saw, where the resumed watch starts.
    state["last_rv"] = (live or events)[-1][2]


def resume_after_restart(server, kubeconfig, state):
    ns = state["ns"]
    last_rv = state["last_rv"]
    checks.eq("SIGTERM stops the server cleanly (exit 0)", server.stop(), 0)
    server.start()  # the same port and data dir
    core = client.CoreV1Api(api_client(kubeconfig))
    checks.eq("the restarted server has the data",
              core.read_namespaced_config_map("w1", ns).data, {"v": "2"})
    expected = []
    obj = core.create_namespaced_config_map(ns, config_map("r1"))
    expected.append(("ADDED", "r1"))
    checks.check("resourceVersions keep increasing after the restart",
                 int(obj.metadata.resource_version) > int(last_rv),
                 (obj.metadata.resource_version, last_rv))
    core.patch_namespaced_config_map("r1", ns, {"metadata": {"labels": {"x": "y"}}})
    expected.append(("MODIFIED", "r1"))
    core.create_namespaced_config_map(ns, config_map("r2"))
    expected.append(("ADDED", "r2"))
    core.delete_namespaced_config_map("r1", ns)
    expected.append(("DELETED", "r1"))
    core.create_namespaced_config_map(ns, config_map("end-2"))
    expected.append(("ADDED", "end-2"))
    events = collect(core, ns, last_rv, "end-2")
    checks.eq("a watch resumed after a restart from the last seen resourceVersion sees exactly "
              "the later events", [(t, n) for t, n, _ in events], expected)


def gone(binary, scratch):
    kubeconfig = os.path.join(scratch.path, "gone.kubeconfig")
    server = Server(binary, os.path.join(scratch.path, "gone.data"),
                    ["--history-events", "50", "--write-kubeconfig", kubeconfig]).start()
    try:
        core = client.CoreV1Api(api_client(kubeconfig))
        ns = "default"
        for i in range(5):
            core.create_namespaced_config_map(ns, config_map("old-%d" % i))
        page = core.list_namespaced_config_map(ns, limit=2)
        old_rv = page.metadata.resource_version
        token = page.metadata._continue
        checks.check("a first page has a continue token", bool(token))
        for i in range(60):
            core.create_namespaced_config_map(ns, config_map("churn-%d" % i))
            core.patch_namespaced_config_map("churn-%d" % i, ns, {"data": {"i": str(i)}})
        latest = core.list_namespaced_config_map(ns, limit=1).metadata.resource_version
        checks.check("more than 100 writes happened", int(latest) - int(old_rv) > 100,
                     (old_rv, latest))

        def watch_old():
            events = []
            w = watch.Watch()
            for event in w.stream(core.list_namespaced_config_map, ns,
                                  resource_version=old_rv, timeout_seconds=10 * SLOW):
                events.append(event["type"])
                w.stop()
            return events

        try:
            events = watch_old()
            checks.fail("a watch from a compacted resourceVersion is 410 Gone",
                        "no error; events: %r" % events)
        except ApiException as e:
            checks.eq("a watch from a compacted resourceVersion is 410 Gone", e.status, 410)

        try:
            core.list_namespaced_config_map(ns, limit=2, _continue=token)
            checks.fail("a list with a stale continue token is 410 Gone", "it succeeded")
        except ApiException as e:
            checks.eq("a list with a stale continue token is 410 Gone", e.status, 410)
            checks.check("the 410 says the continue parameter is too old",
                         "continue parameter is too old" in (e.body or ""), e.body)

        # A recent resourceVersion (inside the history) still resumes.
        core.create_namespaced_config_map(ns, config_map("recent-end"))
        events = collect(core, ns, latest, "recent-end")
        checks.eq("a watch from a recent resourceVersion still works",
                  [(t, n) for t, n, _ in events], [("ADDED", "recent-end")])
    finally:
        server.stop()


def main():
    binary = e2e_server.binary_from_argv()
    e2e_server.install_sigterm_exit()
    scratch = Scratch("python_client_test")
    kubeconfig = os.path.join(scratch.path, "kubeconfig")
    server = Server(binary, os.path.join(scratch.path, "data"),
                    ["--write-kubeconfig", kubeconfig])
    try:
        server.start()
        api = api_client(kubeconfig)
        # The kubeconfig exactly as the server wrote it: HTTPS, verified against its CA.
        checks.eq("the kubeconfig's server is https", api.configuration.host, server.url)
        checks.check("the client verifies the server's certificate",
                     api.configuration.verify_ssl and api.configuration.ssl_ca_cert,
                     api.configuration.verify_ssl, api.configuration.ssl_ca_cert)
        core = client.CoreV1Api(api)
        discovery = client.DiscoveryV1Api(api)
        version = client.VersionApi(api).get_code()
        checks.check("VersionApi.get_code", version.git_version.startswith("v1."), version)
        state = {}
        checks.run("CoreV1Api and DiscoveryV1Api CRUD", lambda: crud(core, discovery))
        checks.run("events.k8s.io/v1 and core/v1 Events",
                   lambda: events_v1(core, client.EventsV1Api(api)))
        checks.run("watch from a list", lambda: watch_from_list(core, state))
        if "ns" in state:
            checks.run("resume after a restart",
                       lambda: resume_after_restart(server, kubeconfig, state))
        checks.run("410 Gone", lambda: gone(binary, scratch))
    finally:
        server.kill()
        scratch.cleanup(keep=checks.failed > 0)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
