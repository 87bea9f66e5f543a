#!/usr/bin/env python3
"""Writes the inputs of the `slicewright plan --repeat` resync comparison (issue #22 §3): one
Service, N ready pods on 3 nodes in 3 zones, and its slices, as files `plan -f` reads:

  empty.json              no slices (a full build)
  unchanged.json          the slices `plan` itself writes for them, in place (nothing to do)
  onechange.json          the same, with one pod turned not ready (one slice update)
  foreign_order.json      the same endpoints spread over the slices in a shuffled order, as
                          upstream's reconciler writes them (in its pod lister's order)
  foreign_onechange.json  foreign_order.json with the one pod turned not ready

Usage: bench/resync_input.py SLICEWRIGHT_BINARY OUT_DIR [PODS]   (PODS: 10000)
Then: slicewright plan -f OUT_DIR/unchanged.json --repeat 30 -o json >/dev/null
"""
import copy
import json
import random
import subprocess
import sys
import uuid


def uid(rng):
    return str(uuid.UUID(int=rng.getrandbits(128)))


def cluster(pods, rng):
    items = [{"apiVersion": "v1", "kind": "Service",
              "metadata": {"name": "web", "namespace": "default", "uid": uid(rng),
                           "resourceVersion": "1", "creationTimestamp": "2025-11-03T08:14:05Z"},
              "spec": {"selector": {"app": "web"}, "type": "ClusterIP",
                       "ports": [{"name": "http", "port": 80, "protocol": "TCP",
                                  "targetPort": 8080}],
                       "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                       "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"}}]
    for n, zone in enumerate(["zone-a", "zone-b", "zone-c"]):
        name = "node-" + "abc"[n]
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "uid": uid(rng), "resourceVersion": "2",
                                   "labels": {"topology.kubernetes.io/zone": zone}},
                      "status": {"allocatable": {"cpu": "4"},
                                 "conditions": [{"type": "Ready", "status": "True"}]}})
    for p in range(pods):
        ip = "10.244.%d.%d" % (p // 250, p % 250 + 1)
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "web-%05d" % p, "namespace": "default",
                                   "uid": uid(rng), "resourceVersion": str(10 + p),
                                   "labels": {"app": "web"}},
                      "spec": {"nodeName": "node-" + "abc"[p % 3],
                               "containers": [{"name": "web", "image": "nginx"}]},
                      "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                                 "conditions": [{"type": "Ready", "status": "True"}]}})
    return {"apiVersion": "v1", "kind": "List", "items": items}


def turn_one_pod_unready(state, pods):
    changed = copy.deepcopy(state)
    name = "web-%05d" % (pods * 43 // 100)
    for item in changed["items"]:
        if item["kind"] == "Pod" and item["metadata"]["name"] == name:
            item["status"]["conditions"][0]["status"] = "False"
    return changed


def own_slices(binary, path, rng):
    """The slices `slicewright plan -f PATH` creates, as the API server would store them (a name
    from generateName, a uid, a resourceVersion), in the order and form plan wrote them."""
    plan = json.loads(subprocess.run([binary, "plan", "-f", path, "-o", "json"],
                                     check=True, capture_output=True, text=True).stdout)
    slices = []
    for service in plan["items"]:
        for i, action in enumerate(service["actions"]):
            if action["operation"] != "create":
                raise SystemExit("%s: plan would %s a slice, not only create" % (path,
                                                                                action["operation"]))
            stored = action["endpointSlice"]
            meta = stored["metadata"]
            meta.update(name=meta["generateName"] + "%05x" % i, uid=uid(rng),
                        resourceVersion=str(20000 + i), generation=1,
                        creationTimestamp="2025-11-03T08:16:00Z")
            slices.append(stored)
    return slices


def main():
    binary, out = sys.argv[1], sys.argv[2]
    pods = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    rng = random.Random(1)
    empty = cluster(pods, rng)
    write = lambda name, doc: json.dump(doc, open("%s/%s.json" % (out, name), "w"))
    write("empty", empty)
    slices = own_slices(binary, "%s/empty.json" % out, rng)
    unchanged = copy.deepcopy(empty)
    unchanged["items"] += slices
    write("unchanged", unchanged)
    write("onechange", turn_one_pod_unready(unchanged, pods))
    foreign = copy.deepcopy(unchanged)
    foreign_slices = [item for item in foreign["items"] if item["kind"] == "EndpointSlice"]
    endpoints = [e for s in foreign_slices for e in s["endpoints"]]
    rng.shuffle(endpoints)
    per_slice = (len(endpoints) + len(foreign_slices) - 1) // len(foreign_slices)
    for k, stored in enumerate(foreign_slices):
        stored["endpoints"] = endpoints[k * per_slice:(k + 1) * per_slice]
    write("foreign_order", foreign)
    write("foreign_onechange", turn_one_pod_unready(foreign, pods))


if __name__ == "__main__":
    main()
