#!/usr/bin/python3
"""End-to-end durability of `slicewright apiserver` (issue #3, "Durability").

Several writer threads create and patch ConfigMaps and EndpointSlices over keep-alive HTTP,
recording every acknowledged write (name, resourceVersion, sequence number). Mid-load the server
is killed with SIGKILL, then restarted on the same data dir. Every acknowledged write must be
there with at least its resourceVersion and sequence number, resourceVersions must keep
increasing after the restart, and the restart must take well under a second. Two rounds.

Usage: /usr/bin/python3 durability_test.py PATH/TO/slicewright
"""

import http.client
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import e2e_server  # noqa: E402
from e2e_server import Checks, Scratch, Server  # noqa: E402

SLOW = e2e_server.SLOW
WRITERS = 4
ROUNDS = 2
# Acknowledged writes per round before the kill (the kill lands while the writers keep going).
WRITES_BEFORE_KILL = 500
STARTUP_LIMIT_SECONDS = float(os.environ.get("E2E_STARTUP_LIMIT", "1.0"))

checks = Checks("durability_test")

RESOURCES = {
    "configmaps": ("/api/v1/namespaces/default/configmaps",
                   lambda name, seq: {"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": name, "labels": {"seq": str(seq)}},
                                      "data": {"payload": "x" * 200}}),
    "endpointslices": ("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
                       lambda name, seq: {"apiVersion": "discovery.k8s.io/v1",
                                          "kind": "EndpointSlice",
                                          "metadata": {"name": name, "labels": {
                                              "seq": str(seq),
                                              "kubernetes.io/service-name": "load"}},
                                          "addressType": "IPv4",
                                          "endpoints": [{"addresses": ["10.2.0.%d" % (seq % 250 + 1)]}],
                                          "ports": [{"name": "http", "port": 80}]}),
}


class Writer(threading.Thread):
    """Creates objects and patches earlier ones until stopped or the server goes away."""

    def __init__(self, server, index, round_number, acked, lock):
        super().__init__(daemon=True)
        self.server = server
        self.index = index
        self.round = round_number
        self.resource = "configmaps" if index % 2 == 0 else "endpointslices"
        self.acked = acked  # (resource, name) -> (resourceVersion, seq) of the last acked write
        self.lock = lock
        self.stop = False
        self.errors_before_kill = []
        self.count = 0
        self.killed = threading.Event()

    def request(self, conn, method, path, body, content_type="application/json"):
        conn.request(method, path, body=json.dumps(body),
                     headers={"Content-Type": content_type, "Accept": "application/json"})
        response = conn.getresponse()
        data = response.read()
        return response.status, data

    def run(self):
        path, make = RESOURCES[self.resource]
        conn = self.server.connection(timeout=20 * SLOW)
        names = []
        seq = 0
        while not self.stop:
            seq += 1
            try:
                if seq % 3 == 0 and names:
                    # Patch one of this writer's earlier objects (a later sequence number).
                    name = names[seq % len(names)]
                    status, data = self.request(
                        conn, "PATCH", path + "/" + name,
                        {"metadata": {"labels": {"seq": str(seq)}}},
                        "application/merge-patch+json")
                    want = 200
                else:
                    name = "r%d-w%d-%d" % (self.round, self.index, seq)
                    status, data = self.request(conn, "POST", path, make(name, seq))
                    want = 201
            except (OSError, http.client.HTTPException) as e:
                if not self.killed.is_set():
                    self.errors_before_kill.append("%s: %r" % (name, e))
                return
            if status != want:
                if not self.killed.is_set():
                    self.errors_before_kill.append("%s: HTTP %d %s" % (name, status, data[:300]))
                return
            rv = int(json.loads(data)["metadata"]["resourceVersion"])
            with self.lock:
                self.acked[(self.resource, name)] = (rv, seq)
            if want == 201:
                names.append(name)
            self.count += 1


def get_json(server, path):
    conn = server.connection(timeout=20 * SLOW)
    conn.request("GET", path, headers={"Accept": "application/json"})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    if response.status != 200:
        raise RuntimeError("GET %s: HTTP %d %s" % (path, response.status, data[:300]))
    return json.loads(data)


def post_json(server, path, body):
    conn = server.connection(timeout=20 * SLOW)
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    if response.status != 201:
        raise RuntimeError("POST %s: HTTP %d %s" % (path, response.status, data[:300]))
    return json.loads(data)


def one_round(server, round_number, acked, lock):
    writers = [Writer(server, i, round_number, acked, lock) for i in range(WRITERS)]
    start_count = len(acked)
    started = time.monotonic()
    for w in writers:
        w.start()
    enough = e2e_server.wait_until(
        60, lambda: len(acked) - start_count >= WRITES_BEFORE_KILL or
        all(not w.is_alive() for w in writers))
    for w in writers:
        w.killed.set()
    alive_at_kill = all(w.is_alive() for w in writers)
    server.kill()  # SIGKILL mid-load: the writers are still sending
    elapsed = time.monotonic() - started
    for w in writers:
        w.join(30 * SLOW)
    errors = [e for w in writers for e in w.errors_before_kill]
    checks.check("round %d: %d writers acknowledged %d writes in %.1f s, then SIGKILL"
                 % (round_number, WRITERS, len(acked) - start_count, elapsed),
                 enough and not errors, *errors[:5])
    checks.check("round %d: the writers were still writing when the server died" % round_number,
                 alive_at_kill and all(not w.is_alive() for w in writers))
    max_acked = max(rv for rv, _ in acked.values())

    server.start()  # the same port and data dir
    startup = [server.startup_seconds]
    if startup[0] >= STARTUP_LIMIT_SECONDS:
        # A busy machine (2 shared cores) can stall one start; a slow server is slow twice.
        server.stop()
        server.start()
        startup.append(server.startup_seconds)
    checks.check("round %d: restart on the data dir took %s s (limit %.1f s)"
                 % (round_number, " then ".join("%.3f" % t for t in startup),
                    STARTUP_LIMIT_SECONDS),
                 min(startup) < STARTUP_LIMIT_SECONDS)

    stored = {}
    list_rvs = []
    for resource, (path, _) in RESOURCES.items():
        listed = get_json(server, path)
        list_rvs.append(int(listed["metadata"]["resourceVersion"]))
        for item in listed["items"]:
            stored[(resource, item["metadata"]["name"])] = (
                int(item["metadata"]["resourceVersion"]), int(item["metadata"]["labels"]["seq"]))
    missing = [k for k in acked if k not in stored]
    checks.check("round %d: every acknowledged write survived the SIGKILL (%d objects)"
                 % (round_number, len(acked)), not missing, "missing: %r" % missing[:10])
    older = [(k, acked[k], stored[k]) for k in acked
             if k in stored and (stored[k][0] < acked[k][0] or stored[k][1] < acked[k][1])]
    checks.check("round %d: each has at least its acknowledged resourceVersion and content"
                 % round_number, not older, *["%r acked %r stored %r" % o for o in older[:10]])
    checks.check("round %d: the list's resourceVersion (%s) is at least the last acknowledged (%d)"
                 % (round_number, list_rvs, max_acked), min(list_rvs) >= max_acked)
    created = post_json(server, RESOURCES["configmaps"][0],
                        {"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "after-restart-%d" % round_number,
                                      "labels": {"seq": "0"}}})
    new_rv = int(created["metadata"]["resourceVersion"])
    checks.check("round %d: a write after the restart gets a larger resourceVersion (%d > %d)"
                 % (round_number, new_rv, max(list_rvs)), new_rv > max(max_acked, *list_rvs))
    with lock:
        acked[("configmaps", "after-restart-%d" % round_number)] = (new_rv, 0)


def main():
    binary = e2e_server.binary_from_argv()
    e2e_server.install_sigterm_exit()
    scratch = Scratch("durability_test")
    server = Server(binary, os.path.join(scratch.path, "data"))
    acked = {}
    lock = threading.Lock()
    try:
        server.start()
        for round_number in range(1, ROUNDS + 1):
            checks.run("round %d" % round_number,
                       lambda r=round_number: one_round(server, r, acked, lock))
        health = server.connection(timeout=10 * SLOW)
        health.request("GET", "/healthz")
        checks.eq("healthz after the rounds", health.getresponse().read(), b"ok")
        checks.eq("SIGTERM stops the server cleanly (exit 0)", server.stop(), 0)
    finally:
        server.kill()
        scratch.cleanup(keep=checks.failed > 0)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
