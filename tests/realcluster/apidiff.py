"""The machinery of the API server differential (apiserver_diff_test.py): one HTTPS endpoint per
server, answers reduced to what a client may rely on, and a ledger that compares the two servers'
answers case by case against the list of known differences.

What is normalised away, and why (everything else must be equal):
- metadata.uid, resourceVersion, creationTimestamp, deletionTimestamp and a condition's
  lastTransitionTime: each server makes its own (a client reads them back, never predicts them);
- metadata.managedFields and selfLink: server-side apply bookkeeping (our server keeps none) and
  a field kube-apiserver stopped filling in 1.20; no client in this repository reads them;
- the random suffix of a generateName'd name (5 characters from apimachinery's alphabet);
- allocated cluster IPs and node ports, to their family ("<IPv4>", "<IPv6>") and "<nodePort>":
  allocators pick addresses in their own order; what must match is which families and which ports
  get one;
- a list's and a Table's resourceVersion and continue token (opaque to clients);
- in Table rows, the Age column's cell ("<age>"): a duration since creation, which differs by the
  time between the two requests; a Table column's description (upstream's whole field doc, ours
  its first sentence): kubectl never prints it;
- uids and addresses of the Service ranges quoted inside messages (preconditions, conflicts, a
  clusterIP the server chose).
"""

import base64
import difflib
import http.client
import ipaddress
import json
import os
import re
import ssl
import tempfile

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
GENERATED_SUFFIX = re.compile(r"[bcdfghjklmnpqrstvwxz2456789]{5}$")


def load_kubeconfig(path):
    """A kubeconfig's first cluster and user (JSON or YAML)."""
    with open(path) as f:
        text = f.read()
    try:
        config = json.loads(text)
    except ValueError:
        import yaml
        config = yaml.safe_load(text)
    return config["clusters"][0]["cluster"], config["users"][0]["user"]


class Answer:
    """One HTTP answer: status code, headers (lower-case names; Warning may repeat), body."""

    def __init__(self, code, headers, body):
        self.code = code
        self.headers = headers
        self.body = body

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def warnings(self):
        return [value for name, value in self.headers if name == "warning"]

    def header(self, name):
        for key, value in self.headers:
            if key == name:
                return value
        return None


class Endpoint:
    """One API server reached over HTTPS with the credentials of a kubeconfig. Keeps one
    connection open (reopened when the server closed it)."""

    def __init__(self, name, kubeconfig, workdir):
        self.name = name
        self.kubeconfig = kubeconfig
        cluster, user = load_kubeconfig(kubeconfig)
        self.server = cluster["server"]
        host_port = self.server.split("://", 1)[1]
        self.host, port = host_port.rsplit(":", 1)
        self.port = int(port)
        context = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        if "client-certificate-data" in user:
            folder = tempfile.mkdtemp(prefix="client-", dir=workdir)
            cert, key = os.path.join(folder, "tls.crt"), os.path.join(folder, "tls.key")
            with open(cert, "wb") as f:
                f.write(base64.b64decode(user["client-certificate-data"]))
            with open(key, "wb") as f:
                f.write(base64.b64decode(user["client-key-data"]))
            context.load_cert_chain(cert, key)
        self.token = user.get("token")
        self.context = context
        self.connection = None

    def _connect(self):
        self.connection = http.client.HTTPSConnection(self.host, self.port, timeout=60,
                                                      context=self.context)

    def request(self, method, path, body=None, content_type="application/json",
                accept="application/json", headers=None):
        """Sends one request; `body` is bytes, str, or JSON-encoded when a dict or list."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        sent = {"Accept": accept, "User-Agent": "slicewright-apidiff"}
        if body is not None:
            sent["Content-Type"] = content_type
        if self.token:
            sent["Authorization"] = "Bearer " + self.token
        sent.update(headers or {})
        for attempt in range(2):
            if self.connection is None:
                self._connect()
            try:
                self.connection.request(method, path, body=body, headers=sent)
                response = self.connection.getresponse()
                data = response.read()
                answer = Answer(response.status,
                                [(k.lower(), v) for k, v in response.getheaders()], data)
                if response.getheader("Connection", "").lower() == "close":
                    self.connection.close()
                    self.connection = None
                return answer
            except (http.client.HTTPException, OSError):
                self.connection.close()
                self.connection = None
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")


def family_token(value):
    try:
        return "<IPv%d>" % ipaddress.ip_address(value).version
    except ValueError:
        return value


# Addresses of the Service ranges both servers allocate from (10.96.0.0/16, fd00:10:96::/112).
ALLOCATED_IP = re.compile(r"\b10\.96\.\d+\.\d+\b|\bfd00:10:96::[0-9a-f:]*")


def scrub_message(text):
    text = UUID.sub("<uid>", text)
    return ALLOCATED_IP.sub(lambda m: family_token(m.group(0)), text)


def scrub(value, key=None):
    """The normalised form of a decoded JSON document (see the module's docstring)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ("managedFields", "selfLink"):
                continue
            if k in ("uid", "resourceVersion") and isinstance(v, str) and v:
                out[k] = "<%s>" % ("uid" if k == "uid" else "rv")
            elif k in ("creationTimestamp", "deletionTimestamp", "lastTransitionTime") and v:
                out[k] = "<time>"
            elif k == "continue" and isinstance(v, str) and v:
                out[k] = "<continue>"
            elif k == "clusterIP" and isinstance(v, str):
                out[k] = family_token(v)
            elif k == "clusterIPs" and isinstance(v, list):
                out[k] = [family_token(ip) if isinstance(ip, str) else ip for ip in v]
            elif k in ("nodePort", "healthCheckNodePort") and isinstance(v, int) and v:
                out[k] = "<nodePort>"
            elif k == "message" and isinstance(v, str):
                out[k] = scrub_message(v)
            else:
                out[k] = scrub(v, k)
        generate = out.get("generateName")
        name = out.get("name")
        if isinstance(generate, str) and isinstance(name, str) and name.startswith(generate) \
                and GENERATED_SUFFIX.match(name[len(generate):]):
            out["name"] = generate + "<suffix>"
            labels = out.get("labels")
            if isinstance(labels, dict) and labels.get("kubernetes.io/metadata.name") == name:
                labels["kubernetes.io/metadata.name"] = out["name"]
        if out.get("kind") == "Table" and isinstance(out.get("rows"), list):
            scrub_table(out)
        return out
    if isinstance(value, list):
        return [scrub(v, key) for v in value]
    if isinstance(value, str):
        return scrub_message(value)
    return value


def scrub_table(table):
    for column in table.get("columnDefinitions") or []:
        column.pop("description", None)
    columns = [c.get("name") for c in table.get("columnDefinitions") or []]
    for row in table["rows"]:
        cells = row.get("cells") or []
        for i, name in enumerate(columns):
            if i >= len(cells):
                break
            if name in ("Age", "AGE", "age", "Last Seen", "Created At") and isinstance(cells[i], str):
                cells[i] = "<age>"
            elif name in ("Cluster-IP", "Cluster-Ip") and isinstance(cells[i], str):
                cells[i] = ",".join(family_token(ip) for ip in cells[i].split(","))
            elif name in ("Ports", "Port(s)") and isinstance(cells[i], str):
                cells[i] = re.sub(r":\d+/", ":<nodePort>/", cells[i])


def view(answer):
    """What a client sees of an answer: the code, the warnings and the normalised body."""
    body = answer.json()
    shown = {"code": answer.code}
    if body is None:
        shown["text"] = answer.body.decode(errors="replace").strip()
    else:
        shown["body"] = scrub(body)
    warnings = answer.warnings()
    if warnings:
        shown["warnings"] = [scrub_message(w) for w in warnings]
    return shown


def render(value):
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False).splitlines()


class Ledger:
    """Compares the two servers' views case by case. A case whose views differ passes only when
    KNOWN names it (with the reason); one KNOWN names that no longer differs fails too, so the list
    stays true. PENDING names differences another branch is fixing: either outcome passes, and a
    match is reported so the entry can go."""

    def __init__(self, checks, known, pending, version):
        self.checks = checks
        self.known = known
        self.pending = pending
        self.version = version
        self.seen_known = set()
        self.differences = []

    def _reason(self, table, name):
        entry = table.get(name)
        if entry is None:
            return None
        if isinstance(entry, tuple):  # (reason, versions it applies to)
            reason, versions = entry
            if not any(self.version.startswith(v) for v in versions):
                return None
            return reason
        return entry

    def compare(self, name, real, ours):
        if real == ours:
            pending = self._reason(self.pending, name)
            known = self._reason(self.known, name)
            if known is not None:
                self.checks.fail(name + ": listed as a known difference but the servers agree "
                                 "(remove it from KNOWN and docs/design.md)")
            elif pending is not None:
                self.checks.ok(name + " (now the same: remove it from PENDING)")
            else:
                self.checks.ok(name)
            return True
        diff = list(difflib.unified_diff(render(real), render(ours), "kube-apiserver",
                                         "slicewright", lineterm="", n=2))
        reason = self._reason(self.known, name) or self._reason(self.pending, name)
        if reason is not None:
            self.seen_known.add(name)
            self.checks.ok("%s (known difference: %s)" % (name, reason))
            self.differences.append((name, reason, diff))
            return False
        self.checks.fail(name + ": the servers differ", *diff[:120])
        self.differences.append((name, None, diff))
        return False

    def finish(self, ran):
        """Known differences of cases that ran and no longer differ were reported by compare();
        ones of cases that never ran are stale names."""
        for name in sorted(self.known):
            if self._reason(self.known, name) is not None and name not in ran:
                self.checks.fail("known difference %r names no case that ran" % name)
