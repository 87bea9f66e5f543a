#!/usr/bin/python3
"""A real Kubernetes control plane for tests: etcd and upstream kube-apiserver (and, for the
controllers a cluster always runs, kube-controller-manager) on free loopback ports, from the
envtest assets folder named by KUBEBUILDER_ASSETS (controller-runtime's convention; ours come from
../shared/envtest/unpack.sh). One fixture for every real-cluster test: the Python tests import it,
the C++ tests run it as a process (`up`, below).

What it sets up, as kubeadm would: TLS on 127.0.0.1 with its own CA, an admin client certificate
(O=system:masters), ServiceAccount token signing, `--authorization-mode=Node,RBAC`, kubeadm's
admission (the defaults plus NodeRestriction; plus OwnerReferencesPermissionEnforcement, which
some distributions enable, so our RBAC is held to it), single- or dual-stack Service CIDRs. A
kube-controller-manager runs the controllers every cluster has and tests do not replace
(`BASE_CONTROLLERS`: ServiceAccounts and their tokens, namespace deletion, garbage collection).
No kubelet or scheduler runs. A test creates Nodes (`create_node`) and writes pod status as a
kubelet would (`set_pod_status`); `Kubelet` (started with the control plane) finishes the graceful
deletion of pods bound to a node, which a real kubelet confirms (without it a deleted pod stays
Terminating for good, and so does its namespace), and with `run_pods=True` it also plays the
scheduler and the kubelet for pods made by workload controllers: binds each pending pod to a
Node and makes it Running and Ready with an address of its own.

Everything lives in one work folder: certificates, kubeconfigs, etcd's data and every process's
log. `stop()` kills every process; the caller removes the folder unless a check failed.

    python3 control_plane.py up --dir DIR [--dual-stack] [--no-base-controllers]
prints one JSON line (kubeconfig, server, ca, version, dir) once the API server is ready and runs
until its standard input closes or it gets SIGTERM, then stops everything. Exit 77 (ctest's skip)
when KUBEBUILDER_ASSETS is unset, with one line saying how to set it.
"""

import base64
import ipaddress
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

SKIP = 77
HOW_TO_ENABLE = ("KUBEBUILDER_ASSETS is not set: the real-cluster tier is skipped. To run it: "
                 "export KUBEBUILDER_ASSETS=$(../shared/envtest/unpack.sh) (or setup-envtest's folder "
                 "with kube-apiserver, etcd, kubectl and kube-controller-manager)")

# The controllers of kube-controller-manager that every cluster runs and no test replaces.
BASE_CONTROLLERS = ("serviceaccount", "serviceaccount-token", "namespace", "garbagecollector")
ENDPOINT_CONTROLLERS = ("endpointslice", "endpointslicemirroring", "endpoint")

# Under the sanitizers or a loaded machine deadlines scale with this (as the e2e tests').
SLOW = int(os.environ.get("E2E_SLOW", "1"))


def assets_dir():
    """The envtest assets folder, or None when the tier is not enabled."""
    folder = os.environ.get("KUBEBUILDER_ASSETS", "")
    return folder or None


def skip_unless_assets():
    """Exits 77 (a skip for ctest) with one line when KUBEBUILDER_ASSETS is unset or incomplete."""
    folder = assets_dir()
    if folder is None:
        print(HOW_TO_ENABLE, flush=True)
        sys.exit(SKIP)
    missing = [tool for tool in ("kube-apiserver", "etcd", "kubectl")
               if not os.access(os.path.join(folder, tool), os.X_OK)]
    if missing:
        print("KUBEBUILDER_ASSETS=%s lacks %s: the real-cluster tier is skipped" %
              (folder, ", ".join(missing)), flush=True)
        sys.exit(SKIP)
    return folder


def free_port():
    """A TCP port free on 127.0.0.1 now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def prune_stale_etcd_folders(base):
    """Removes the etcd folders (sw-etcd-*) in `base` whose owner process is gone; a folder with no
    owner recorded (made before owners were) once it is an hour old."""
    import glob

    for folder in glob.glob(os.path.join(base, "sw-etcd-*")):
        try:
            with open(os.path.join(folder, "owner.pid")) as f:
                owner = int(f.read().strip() or 0)
        except (OSError, ValueError):
            owner = None
        if owner:
            try:
                os.kill(owner, 0)
                continue  # its test still runs
            except ProcessLookupError:
                pass
            except PermissionError:
                continue  # another user's, alive
        else:
            try:
                if time.time() - os.path.getmtime(folder) < 3600:
                    continue
            except OSError:
                continue
        shutil.rmtree(folder, ignore_errors=True)


def _run(args, **kwargs):
    return subprocess.run(args, check=True, capture_output=True, **kwargs)


def _b64(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


class Certificates:
    """A CA, the API server's serving certificate (127.0.0.1, localhost), an admin client
    certificate and the ServiceAccount signing key, made with the openssl command (EC P-256:
    milliseconds, where RSA takes a noticeable part of a second)."""

    def __init__(self, folder):
        self.folder = folder
        os.makedirs(folder, exist_ok=True)
        self.ca_key, self.ca_crt = self._path("ca.key"), self._path("ca.crt")
        self._key(self.ca_key)
        _run(["openssl", "req", "-x509", "-new", "-key", self.ca_key, "-out", self.ca_crt,
              "-days", "2", "-subj", "/CN=slicewright-test-ca"])
        self.serving_key, self.serving_crt = self._signed(
            "serving", "/CN=kube-apiserver",
            "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n"
            "extendedKeyUsage=serverAuth\n")
        self.admin_key, self.admin_crt = self._signed(
            "admin", "/O=system:masters/CN=kubernetes-admin", "extendedKeyUsage=clientAuth\n")
        self.sa_key, self.sa_pub = self._path("sa.key"), self._path("sa.pub")
        self._key(self.sa_key)
        _run(["openssl", "ec", "-in", self.sa_key, "-pubout", "-out", self.sa_pub])

    def _path(self, name):
        return os.path.join(self.folder, name)

    @staticmethod
    def _key(path):
        _run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", path])

    def _signed(self, name, subject, extensions):
        key, csr, crt, ext = (self._path(name + suffix) for suffix in (".key", ".csr", ".crt", ".ext"))
        self._key(key)
        _run(["openssl", "req", "-new", "-key", key, "-out", csr, "-subj", subject])
        with open(ext, "w") as f:
            f.write(extensions)
        _run(["openssl", "x509", "-req", "-in", csr, "-CA", self.ca_crt, "-CAkey", self.ca_key,
              "-CAcreateserial", "-out", crt, "-days", "2", "-extfile", ext])
        return key, crt


class Process:
    """One child process with its output in LOG_DIR/NAME.log."""

    def __init__(self, name, args, log_dir, env=None):
        self.name = name
        self.args = args
        self.log_path = os.path.join(log_dir, name + ".log")
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log,
                                        stderr=subprocess.STDOUT, env=env,
                                        start_new_session=True)

    def running(self):
        return self.process.poll() is None

    def stop(self, timeout=10):
        """SIGTERM, then SIGKILL after the timeout; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout * SLOW)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode

    def kill(self):
        """SIGKILL (a crash, or a teardown whose state is thrown away), then reaps it."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()

    def tail(self, lines=30):
        with open(self.log_path, "rb") as f:
            return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")


def write_kubeconfig(path, server, ca_file, user, namespace=None, context="default"):
    """A self-contained kubeconfig (certificates inline). `user` is the kubeconfig user entry,
    e.g. {"token": T} or {"client-certificate-data": ..., "client-key-data": ...}."""
    ctx = {"cluster": "cluster", "user": "user"}
    if namespace:
        ctx["namespace"] = namespace
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "cluster", "cluster": {
            "server": server, "certificate-authority-data": _b64(ca_file)}}],
        "users": [{"name": "user", "user": user}],
        "contexts": [{"name": context, "context": ctx}],
    }
    with open(path, "w") as f:
        json.dump(config, f, indent=1)
    return path


class Kubelet:
    """What the nodes' kubelets (and, with run_pods, the scheduler) would do for a control plane
    that has none, on one watch of every pod:
    - a pod bound to a node and being deleted is deleted at once (grace period 0), as its kubelet
      confirms a graceful deletion once the containers stopped; a pod annotated
      KEEP_TERMINATING stays Terminating (the terminating-endpoint scenarios);
    - with run_pods: a pending pod with no node is bound to one of the Nodes (round robin; three
      Nodes are registered when there are none), and a bound pod not yet Running becomes Running
      and Ready with an address from 10.(244+K).0.0/16 (and fd00:10:244:K::/64 on a dual-stack
      plane), K the plane's pod_cidr_index (0 by default; clusters of one ClusterSet differ).
    Runs on a daemon thread until stop()."""

    KEEP_TERMINATING = "test.slicewright.io/keep-terminating"

    def __init__(self, plane, run_pods=False):
        self.plane = plane
        self.run_pods = run_pods
        self.stopping = threading.Event()
        self.next_ip = 0
        self.nodes = []
        self.thread = threading.Thread(target=self._run, name="kubelet-sim", daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping.set()

    def _connection(self, timeout):
        import http.client

        context = ssl.create_default_context(cafile=self.plane.certs.ca_crt)
        context.load_cert_chain(self.plane.certs.admin_crt, self.plane.certs.admin_key)
        host, port = self.plane.server[len("https://"):].rsplit(":", 1)
        return http.client.HTTPSConnection(host, int(port), timeout=timeout, context=context)

    def _request(self, method, path, body=None, content_type="application/json"):
        connection = self._connection(10)
        try:
            headers = {"Content-Type": content_type} if body is not None else {}
            connection.request(method, path, body=json.dumps(body) if body is not None else None,
                               headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def _run(self):
        resource_version = ""
        while not self.stopping.is_set():
            connection = self._connection(None)
            try:
                query = "?watch=true&timeoutSeconds=300"
                if resource_version:
                    query += "&resourceVersion=" + resource_version
                connection.request("GET", "/api/v1/pods" + query)
                response = connection.getresponse()
                if response.status != 200:
                    resource_version = ""
                    self.stopping.wait(0.2)
                    continue
                while not self.stopping.is_set():
                    line = response.readline()
                    if not line:
                        break
                    event = json.loads(line)
                    pod = event["object"]
                    if event["type"] == "ERROR":
                        resource_version = ""  # 410 Gone: watch afresh (replays every pod)
                        self.stopping.wait(0.2)
                        break
                    resource_version = pod["metadata"].get("resourceVersion", resource_version)
                    if event["type"] in ("ADDED", "MODIFIED"):
                        self._handle(pod)
            except Exception:  # noqa: BLE001 - the server went away or restarted: watch again
                self.stopping.wait(0.2)
            finally:
                connection.close()

    def _handle(self, pod):
        meta, spec, status = pod["metadata"], pod.get("spec", {}), pod.get("status", {})
        path = "/api/v1/namespaces/%s/pods/%s" % (meta["namespace"], meta["name"])
        if meta.get("deletionTimestamp"):
            if spec.get("nodeName") and \
                    (meta.get("annotations") or {}).get(self.KEEP_TERMINATING) != "true":
                self._request("DELETE", path, {"apiVersion": "v1", "kind": "DeleteOptions",
                                               "gracePeriodSeconds": 0,
                                               "preconditions": {"uid": meta["uid"]}})
            return
        if not self.run_pods:
            return
        if not spec.get("nodeName"):
            node = self._pick_node()
            self._request("POST", path + "/binding", {
                "apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"]},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
            return
        if status.get("phase") != "Running":
            self._start(pod, path)

    def _pick_node(self):
        if not self.nodes:
            status, body = self._request("GET", "/api/v1/nodes")
            names = [n["metadata"]["name"] for n in json.loads(body).get("items", [])] \
                if status == 200 else []
            if not names:
                for i in range(3):
                    name = "sim-node-%d" % (i + 1)
                    self.plane.create_node(name, zone="zone-%s" % "abc"[i],
                                           addresses=("10.0.0.%d" % (i + 1),))
                    names.append(name)
            self.nodes = names
        self.next_ip += 1
        return self.nodes[self.next_ip % len(self.nodes)]

    def _start(self, pod, path):
        self.next_ip += 1
        n = self.next_ip
        k = self.plane.pod_cidr_index
        ips = ["10.%d.%d.%d" % (244 + k, n // 250, n % 250 + 1)]
        if self.plane.dual_stack:
            ips.append(str(ipaddress.IPv6Address("fd00:10:244:%x::%x" % (k, n))))
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        containers = pod.get("spec", {}).get("containers", [])
        status = {
            "phase": "Running", "podIP": ips[0], "podIPs": [{"ip": ip} for ip in ips],
            "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}], "startTime": now,
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": now}
                           for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
            "containerStatuses": [{
                "name": c["name"], "image": c.get("image", ""), "imageID": "",
                "ready": True, "started": True, "restartCount": 0,
                "state": {"running": {"startedAt": now}}} for c in containers]}
        self._request("PATCH", path + "/status", {"status": status},
                      content_type="application/merge-patch+json")


class ControlPlane:
    """etcd + kube-apiserver (+ kube-controller-manager with BASE_CONTROLLERS) in `workdir`.

    dual_stack: Service CIDRs 10.96.0.0/16 and fd00:10:96::/112 (IPv4 primary), else the first.
    base_controllers: kube-controller-manager's controllers to run from the start (() for none).
    run_pods: the Kubelet also schedules and runs pods (for workload controllers' pods).
    pod_cidr_index: K of the Kubelet's pod addresses, 10.(244+K).0.0/16 and fd00:10:244:K::/64
      (as `slicewright dev --clusters N` numbers its members' CIDRs), so that the clusters of one
      ClusterSet give their pods different addresses.
    """

    def __init__(self, workdir, assets=None, dual_stack=False, base_controllers=BASE_CONTROLLERS,
                 name="cluster", run_pods=False, pod_cidr_index=0):
        self.assets = assets or skip_unless_assets()
        self.workdir = workdir
        self.name = name
        self.dual_stack = dual_stack
        self.base_controllers = tuple(base_controllers)
        self.log_dir = os.path.join(workdir, "logs")
        self.processes = []
        self.server = None
        self.admin_kubeconfig = os.path.join(workdir, "admin.kubeconfig")
        self.version = None
        self.startup_seconds = None
        self.run_pods = run_pods
        self.pod_cidr_index = pod_cidr_index
        self.kubelet = None

    def binary(self, name):
        return os.path.join(self.assets, name)

    # --- life cycle ---

    def start(self):
        started = time.monotonic()
        os.makedirs(self.log_dir, exist_ok=True)
        self.certs = Certificates(os.path.join(self.workdir, "pki"))
        self._start_etcd()
        self._start_apiserver()
        write_kubeconfig(self.admin_kubeconfig, self.server, self.certs.ca_crt, {
            "client-certificate-data": _b64(self.certs.admin_crt),
            "client-key-data": _b64(self.certs.admin_key)})
        self._wait_ready()
        self.version = json.loads(self._get("/version"))["gitVersion"]
        if self.base_controllers:
            self.base_kcm = self.start_controller_manager(self.base_controllers, name="kcm-base")
        self.kubelet = Kubelet(self, run_pods=self.run_pods)
        self.startup_seconds = time.monotonic() - started
        return self

    def stop(self):
        """Kills every process at once (SIGKILL): their state is thrown away, and a graceful
        kube-apiserver shutdown waits for clients' open connections, seconds for nothing."""
        if self.kubelet is not None:
            self.kubelet.stop()
        for process in reversed(self.processes):
            process.kill()
        self.processes = []

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _start_etcd(self):
        # etcd's data on tmpfs when there is one: it fsyncs every write, and a test writes a lot.
        # The folder records its owner, so that what a killed test left there (no cleanup runs
        # after a SIGKILL or a ctest timeout) is removed by the next one instead of filling memory.
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else self.workdir
        prune_stale_etcd_folders(base)
        self.etcd_data = tempfile.mkdtemp(prefix="sw-etcd-", dir=base)
        with open(os.path.join(self.etcd_data, "owner.pid"), "w") as f:
            f.write(str(os.getpid()))
        client, peer = free_port(), free_port()
        self.etcd_url = "http://127.0.0.1:%d" % client
        self.processes.append(Process("etcd", [
            self.binary("etcd"), "--name", "default",
            "--data-dir", os.path.join(self.etcd_data, "data"),
            "--listen-client-urls", self.etcd_url, "--advertise-client-urls", self.etcd_url,
            "--listen-peer-urls", "http://127.0.0.1:%d" % peer,
            "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % peer,
            "--initial-cluster", "default=http://127.0.0.1:%d" % peer,
            "--log-level", "warn", "--logger", "zap", "--log-outputs", "stderr",
            # kube-apiserver's watch cache learns that a quiet resource (no writes) is current
            # from etcd's progress notifications; etcd 3.4 sends them every 10 min by default and
            # cannot be asked for one (RequestWatchProgress, etcd 3.5+), so a watch from a fresh
            # resourceVersion would wait on it ("Too large resource version").
            "--experimental-watch-progress-notify-interval", "500ms"], self.log_dir))

    def _start_apiserver(self):
        port = free_port()
        self.server = "https://127.0.0.1:%d" % port
        cidrs = "10.96.0.0/16,fd00:10:96::/112" if self.dual_stack else "10.96.0.0/16"
        self.processes.append(Process("kube-apiserver", [
            self.binary("kube-apiserver"),
            "--etcd-servers", self.etcd_url,
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
            "--secure-port", str(port),
            "--tls-cert-file", self.certs.serving_crt, "--tls-private-key-file", self.certs.serving_key,
            "--client-ca-file", self.certs.ca_crt,
            "--service-account-key-file", self.certs.sa_pub,
            "--service-account-signing-key-file", self.certs.sa_key,
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range", cidrs,
            "--authorization-mode", "Node,RBAC",
            "--enable-admission-plugins", "NodeRestriction,OwnerReferencesPermissionEnforcement",
            "--allow-privileged=true",
            # A loopback advertise address is refused in Endpoints, and nothing here needs the
            # `kubernetes` Service's endpoints.
            "--endpoint-reconciler-type", "none",
            "--enable-bootstrap-token-auth=true",
            "--profiling=false",
        ], self.log_dir))

    def _get(self, path, timeout=5):
        context = ssl.create_default_context(cafile=self.certs.ca_crt)
        context.load_cert_chain(self.certs.admin_crt, self.certs.admin_key)
        with urllib.request.urlopen(self.server + path, context=context, timeout=timeout) as r:
            return r.read().decode()

    def _wait_ready(self):
        deadline = time.monotonic() + 90 * SLOW
        last = ""
        while time.monotonic() < deadline:
            for process in self.processes:
                if not process.running():
                    raise RuntimeError("%s exited with %s:\n%s" % (
                        process.name, process.process.returncode, process.tail()))
            try:
                if self._get("/readyz", timeout=2).strip() == "ok":
                    return
            except Exception as error:  # noqa: BLE001 - not up yet
                last = str(error)
            time.sleep(0.1)
        raise RuntimeError("kube-apiserver not ready in time (%s):\n%s" % (
            last, self.processes[-1].tail()))

    def start_controller_manager(self, controllers, name="kcm", extra_args=()):
        """kube-controller-manager with only `controllers`, as the admin, no leader election;
        returns its Process (stop() it to take those controllers away)."""
        kcm = self.binary("kube-controller-manager")
        if not os.access(kcm, os.X_OK):
            raise RuntimeError("no kube-controller-manager in KUBEBUILDER_ASSETS=%s" % self.assets)
        process = Process(name, [
            kcm, "--kubeconfig", self.admin_kubeconfig,
            "--controllers", ",".join(controllers),
            "--leader-elect=false", "--use-service-account-credentials=false",
            "--bind-address", "127.0.0.1", "--secure-port", "0",
            "--service-account-private-key-file", self.certs.sa_key,
            "--root-ca-file", self.certs.ca_crt,
            "--cluster-name", self.name,
        ] + list(extra_args), self.log_dir)
        self.processes.append(process)
        return process

    # --- kubectl and objects ---

    def kubectl(self, *args, kubeconfig=None, input=None, check=True, timeout=60):
        """Runs kubectl against this cluster (as the admin unless `kubeconfig`); returns stdout.
        A failure raises with kubectl's stderr unless check=False."""
        result = subprocess.run(
            [self.binary("kubectl"), "--kubeconfig", kubeconfig or self.admin_kubeconfig] + list(args),
            input=input, capture_output=True, text=True, timeout=timeout * SLOW)
        if check and result.returncode != 0:
            raise RuntimeError("kubectl %s: exit %d: %s" % (" ".join(args), result.returncode,
                                                           result.stderr.strip()))
        return result.stdout if check else result

    def apply(self, manifest, kubeconfig=None):
        """kubectl apply of a manifest given as text, a dict or a list of dicts."""
        if not isinstance(manifest, str):
            items = manifest if isinstance(manifest, list) else [manifest]
            manifest = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
        return self.kubectl("apply", "-f", "-", input=manifest, kubeconfig=kubeconfig)

    def get_json(self, *args, kubeconfig=None):
        return json.loads(self.kubectl("get", "-o", "json", *args, kubeconfig=kubeconfig))

    def create_namespace(self, namespace, wait_default_sa=True):
        """The namespace, and (as the serviceaccount controller would) its `default`
        ServiceAccount, without which the ServiceAccount admission refuses pods."""
        self.kubectl("create", "namespace", namespace)
        if not wait_default_sa:
            return
        if "serviceaccount" not in self.base_controllers:
            self.kubectl("-n", namespace, "create", "serviceaccount", "default")
            return
        deadline = time.monotonic() + 30 * SLOW
        while self.kubectl("-n", namespace, "get", "serviceaccount", "default",
                           check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError("no default ServiceAccount in %s" % namespace)
            time.sleep(0.05)

    def create_node(self, name, zone=None, labels=None, addresses=("10.0.0.1",)):
        """A Node as a kubelet registers it (Ready), so pods can name it in spec.nodeName."""
        node_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
        if zone:
            node_labels["topology.kubernetes.io/zone"] = zone
        node_labels.update(labels or {})
        self.apply({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "labels": node_labels}})
        status = {"status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "test kubelet"}],
            "addresses": [{"type": "InternalIP", "address": a} for a in addresses],
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
        self.kubectl("patch", "node", name, "--subresource=status", "--type=merge",
                     "-p", json.dumps(status))

    def set_pod_status(self, namespace, name, ips, ready=True, phase="Running", extra=None):
        """Writes a pod's status as its kubelet would: phase, podIP(s), the Ready condition."""
        status = {"phase": phase, "podIP": ips[0] if ips else None,
                  "podIPs": [{"ip": ip} for ip in ips],
                  "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}],
                  "conditions": [
                      {"type": "Ready", "status": "True" if ready else "False"},
                      {"type": "ContainersReady", "status": "True" if ready else "False"},
                      {"type": "PodScheduled", "status": "True"},
                      {"type": "Initialized", "status": "True"}]}
        status.update(extra or {})
        self.kubectl("-n", namespace, "patch", "pod", name, "--subresource=status",
                     "--type=merge", "-p", json.dumps({"status": status}))

    def service_account_kubeconfig(self, namespace, name, path=None, duration="24h",
                                   kube_namespace=None):
        """A kubeconfig that authenticates as ServiceAccount namespace/name (created if missing)
        with a token from the TokenRequest API (`kubectl create token`)."""
        if self.kubectl("-n", namespace, "get", "serviceaccount", name, check=False).returncode != 0:
            self.kubectl("-n", namespace, "create", "serviceaccount", name)
        token = self.kubectl("-n", namespace, "create", "token", name,
                             "--duration", duration).strip()
        path = path or os.path.join(self.workdir, "sa-%s-%s.kubeconfig" % (namespace, name))
        return write_kubeconfig(path, self.server, self.certs.ca_crt, {"token": token},
                                namespace=kube_namespace)

    def describe(self):
        return {"kubeconfig": self.admin_kubeconfig, "server": self.server,
                "ca": self.certs.ca_crt, "version": self.version, "dir": self.workdir,
                "logs": self.log_dir, "assets": self.assets,
                "startup_seconds": round(self.startup_seconds or 0, 2)}

    def cleanup(self, keep):
        """Stops everything; removes the work folder unless `keep` (a failed check) or E2E_KEEP."""
        self.stop()
        shutil.rmtree(getattr(self, "etcd_data", ""), ignore_errors=True)
        if keep or os.environ.get("E2E_KEEP"):
            print("(kept %s for inspection)" % self.workdir, flush=True)
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)


def _serve(argv):
    import argparse

    parser = argparse.ArgumentParser(prog="control_plane.py up")
    parser.add_argument("--dir", required=True, help="work folder (created)")
    parser.add_argument("--dual-stack", action="store_true")
    parser.add_argument("--no-base-controllers", action="store_true")
    parser.add_argument("--run-pods", action="store_true",
                        help="schedule and run pods as a scheduler and kubelets would")
    parser.add_argument("--keep", action="store_true", help="keep the work folder at exit")
    args = parser.parse_args(argv)
    os.makedirs(args.dir, exist_ok=True)
    plane = ControlPlane(args.dir, dual_stack=args.dual_stack,
                         base_controllers=() if args.no_base_controllers else BASE_CONTROLLERS,
                         run_pods=args.run_pods)

    def broken():
        for process in plane.processes:
            if not process.running():
                return "%s exited:\n%s" % (process.name, process.tail())
        return None

    return serve(plane, args.keep, broken)


def serve(fixture, keep, broken=lambda: None):
    """The `up` command of a fixture (a ControlPlane, or a ClusterSet): start() it, print its
    describe() as one JSON line, and run until standard input closes (the parent exited, even by a
    crash), SIGTERM or SIGINT, or `broken()` names a process that died (the folder is then kept);
    then cleanup(). A fixture that does not come up prints {"error": ...} and keeps its folder."""
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    try:
        fixture.start()
        print(json.dumps(fixture.describe()), flush=True)

        def watch_stdin():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except OSError:
                pass
            stopping.set()

        threading.Thread(target=watch_stdin, daemon=True).start()
        while not stopping.wait(0.5):
            failure = broken()
            if failure:
                print("%s: %s" % (type(fixture).__name__, failure), file=sys.stderr, flush=True)
                keep = True
                stopping.set()
    except Exception as error:  # noqa: BLE001 - reported, and the folder kept
        print(json.dumps({"error": str(error)}), flush=True)
        keep = True
    finally:
        fixture.cleanup(keep)
    return 0

if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "up":
        skip_unless_assets()
        sys.exit(_serve(sys.argv[2:]))
    sys.exit(__doc__)
