#!/usr/bin/python3
"""A real Multi-Cluster Services ClusterSet for tests, set up exactly as deploy/mcs/README.md tells
an operator: a broker and members, each an upstream kube-apiserver (control_plane.py), or a member
on `slicewright dev` for a mixed ClusterSet.

- Broker: `kubectl apply -k` of a broker overlay made as deploy/mcs/broker/member-template/README.md
  says (the template copied once per member, CLUSTER_ID replaced, listed beside deploy/mcs/broker);
  the broker's base controllers (serviceaccount-token) fill each member's token Secret.
- Each member's broker kubeconfig: the broker's `kubectl config view --minify --flatten -o json`
  with the user replaced by the member's token and the context's namespace set to the broker
  namespace (the README's jq step, done here in Python: jq is not everywhere).
- Each member: `kubectl apply -k deploy/mcs/member` (CRDs, ServiceAccount, RBAC and the
  Deployment), its ClusterProperty id.k8s.io, and the Secret slicewright-mcs-broker made from its
  broker kubeconfig. The Deployment is scaled to 0: its pods cannot run (no kubelet, no image).
  The agent runs as a process instead, with the Deployment's own arguments (read from
  deploy/mcs/member/deployment.yaml; only the listen addresses, the log format and the broker
  kubeconfig's path changed), authenticated to the member as deploy/mcs/member's ServiceAccount
  (a token) and to the broker with the broker kubeconfig read back from that Secret.
- A member on kube-apiserver runs kube-controller-manager's base controllers plus its endpoint
  controllers (endpointslice, endpointslicemirroring, endpoint: the slices an export publishes);
  with run_pods also its deployment, replicaset and statefulset controllers, and the fixture's
  Kubelet schedules and runs their pods (what the upstream conformance suite's Deployments need).
- A member of kind "dev" is `slicewright dev` (one cluster: its API server, endpoint controllers,
  workload controllers and pod simulator) with the agent as a separate `slicewright
  controller-manager --controllers=mcs` (our server has no RBAC: the dev kubeconfig).

`ClusterSet.start()` returns the set; `kubeconfig` is one merged kubeconfig with contexts
`cluster-1`, `cluster-2`, ... and `broker` (administrators; current context the first member), so
kubectl and the upstream conformance suite (`--contexts cluster-1,cluster-2`) run against it;
`resolvers` each member's clusterset.local DNS ("127.0.0.1:PORT"); `agents` each member's agent
Process; `broker_kubeconfigs` each member's broker kubeconfig (its member-<id> token).
`cleanup(keep)` stops everything and removes the folder unless a check failed.

    python3 clusterset.py up --dir DIR --binary PATH/TO/slicewright [--run-pods] [--dual-stack]
prints one JSON line (kubeconfig, contexts, resolvers, dir) once every agent holds its Lease in the
broker and serves DNS, and runs until its standard input closes or SIGTERM (exit 77 without
KUBEBUILDER_ASSETS).
"""

import base64
import copy
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import control_plane  # noqa: E402
from control_plane import SLOW, ControlPlane, Process, free_port  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEPLOY_MCS = os.path.join(REPO, "deploy", "mcs")
BROKER_NAMESPACE = "slicewright-mcs"
AGENT_NAMESPACE = "kube-system"
AGENT_ACCOUNT = "slicewright-mcs-agent"
BROKER_SECRET = "slicewright-mcs-broker"
WORKLOAD_CONTROLLERS = ("deployment", "replicaset", "statefulset")


def _wait(seconds, condition, what, interval=0.05):
    deadline = time.monotonic() + seconds * SLOW
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise RuntimeError("clusterset: timed out waiting for " + what)
        time.sleep(interval)


def deployment_agent_args():
    """The agent's arguments as deploy/mcs/member/deployment.yaml gives them."""
    with open(os.path.join(DEPLOY_MCS, "member", "deployment.yaml")) as f:
        deployment = yaml.safe_load(f)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    return list(container["command"][1:]) + list(container["args"])


def replace_flag(args, flag, value):
    """`args` with --flag=VALUE (an existing --flag=... replaced in place, else appended)."""
    out, found = [], False
    for arg in args:
        if arg == flag or arg.startswith(flag + "="):
            if not found:
                out.append("%s=%s" % (flag, value))
            found = True
        else:
            out.append(arg)
    if not found:
        out.append("%s=%s" % (flag, value))
    return out


class Member:
    """One member cluster: its API server (a ControlPlane, or `slicewright dev`), its admin
    kubeconfig and context, its agent."""

    def __init__(self, name, kind, workdir):
        self.name = name
        self.kind = kind  # "kube" or "dev"
        self.workdir = workdir
        self.plane = None  # kube: the ControlPlane
        self.dev = None  # dev: the Process
        self.admin_kubeconfig = None
        self.agent_kubeconfig = None  # what the agent authenticates to its cluster with
        self.broker_kubeconfig = None
        self.agent = None
        self.agent_args = None
        self.dns = None
        self.metrics_port = None
        self.version = None

    def kubectl(self, *args, input=None, check=True, timeout=60):
        result = subprocess.run(["kubectl", "--kubeconfig", self.admin_kubeconfig] + list(args),
                                input=input, capture_output=True, text=True, timeout=timeout * SLOW)
        if check and result.returncode != 0:
            raise RuntimeError("%s: kubectl %s: %s" % (self.name, " ".join(args),
                                                      result.stderr.strip()))
        return result


class ClusterSet:
    """A broker and members (see the module's docstring).

    members: the members' names, in order (contexts of the same names).
    kinds: name -> "kube" (default) or "dev" (slicewright dev).
    dual_stack: name -> bool (or one bool for all) for kube members (dev members are always
      dual-stack, IPv4 primary).
    run_pods: kube members run workload controllers and the fixture's Kubelet runs their pods.
    agent_args: extra flags of every agent (e.g. --mcs-lease-duration=10s).
    agent_drop_flags: name -> the Deployment's flags that member's agent runs without (its
      defaults then apply).
    before_agents: called with the ClusterSet once every cluster is set up, before the agents
      start.
    """

    def __init__(self, workdir, binary, members=("cluster-1", "cluster-2"), kinds=None,
                 dual_stack=False, run_pods=False, agent_args=(), assets=None,
                 agent_drop_flags=None, before_agents=None):
        self.assets = assets or control_plane.skip_unless_assets()
        self.workdir = workdir
        self.binary = binary
        self.names = list(members)
        self.kinds = dict(kinds or {})
        self.dual_stack = dual_stack if isinstance(dual_stack, dict) else \
            {name: bool(dual_stack) for name in self.names}
        self.run_pods = run_pods
        self.extra_agent_args = list(agent_args)
        self.agent_drop_flags = dict(agent_drop_flags or {})
        self.before_agents = before_agents
        self.broker = None
        self.members = {}
        self.kubeconfig = os.path.join(workdir, "kubeconfig")
        self.startup_seconds = None
        self.log_dir = os.path.join(workdir, "logs")
        self.guard_enforced = None  # known once the broker is up

    # --- the parts (and what tests/e2e/mcs_checks.py wants of a ClusterSet) ---

    @property
    def clusters(self):
        return self.names

    @property
    def resolvers(self):
        return {name: m.dns for name, m in self.members.items()}

    @property
    def agents(self):
        return {name: m.agent for name, m in self.members.items()}

    @property
    def broker_kubeconfigs(self):
        return {name: m.broker_kubeconfig for name, m in self.members.items()}

    def kubectl(self, context, *args, stdin=None, check=True, timeout=60):
        """kubectl against the merged kubeconfig (`context` None: the current one)."""
        command = ["kubectl", "--kubeconfig", self.kubeconfig]
        if context is not None:
            command += ["--context", context]
        result = subprocess.run(command + list(args), input=stdin, capture_output=True, text=True,
                                timeout=timeout * SLOW)
        if check and result.returncode != 0:
            raise RuntimeError("kubectl %s%s: %s" % ("--context %s " % context if context else "",
                                                     " ".join(args), result.stderr))
        return result

    # --- life cycle ---

    def start(self):
        started = time.monotonic()
        os.makedirs(self.log_dir, exist_ok=True)
        self.broker = ControlPlane(os.path.join(self.workdir, "broker"), assets=self.assets,
                                   name="broker")
        # The members' API servers come up beside the broker's (a few seconds each).
        starters = [threading.Thread(target=self.broker.start)]
        for name in self.names:
            member = Member(name, self.kinds.get(name, "kube"), os.path.join(self.workdir, name))
            self.members[name] = member
            starters.append(threading.Thread(target=self._start_member_server, args=(member,)))
        errors = []
        for thread in starters:
            thread.run = self._capture(thread.run, errors)
            thread.start()
        for thread in starters:
            thread.join()
        if errors:
            raise errors[0]
        self._set_up_broker()
        for member in self.members.values():
            self._set_up_member(member)
        self._write_merged_kubeconfig()
        if self.before_agents is not None:
            self.before_agents(self)
        for member in self.members.values():
            self.start_agent(member.name, drop_flags=self.agent_drop_flags.get(member.name, ()))
        for member in self.members.values():
            self.wait_agent_ready(member.name)
        self.startup_seconds = time.monotonic() - started
        return self

    @staticmethod
    def _capture(run, errors):
        def wrapped():
            try:
                run()
            except Exception as error:  # noqa: BLE001 - re-raised by start()
                errors.append(error)
        return wrapped

    def _start_member_server(self, member):
        os.makedirs(member.workdir, exist_ok=True)
        if member.kind == "kube":
            controllers = control_plane.BASE_CONTROLLERS + control_plane.ENDPOINT_CONTROLLERS
            if self.run_pods:
                controllers += WORKLOAD_CONTROLLERS
            member.plane = ControlPlane(member.workdir, assets=self.assets, name=member.name,
                                        dual_stack=self.dual_stack.get(member.name, False),
                                        base_controllers=controllers, run_pods=self.run_pods,
                                        pod_cidr_index=self.names.index(member.name))
            member.plane.start()
            member.admin_kubeconfig = member.plane.admin_kubeconfig
            member.version = member.plane.version
            return
        if member.kind != "dev":
            raise ValueError("member kind %r: kube or dev" % member.kind)
        data = os.path.join(member.workdir, "data")
        member.dev = Process("dev", [self.binary, "dev", "--data-dir", data, "--port", "0",
                                     "--pod-ready-delay", "200ms"], member.workdir)
        member.admin_kubeconfig = os.path.join(data, "kubeconfig")
        _wait(30, lambda: os.path.exists(member.admin_kubeconfig) and member.kubectl(
            "get", "namespace", "default", check=False).returncode == 0,
              member.name + "'s slicewright dev")
        member.version = "slicewright dev"

    def _set_up_broker(self):
        """deploy/mcs/README.md step 1 and member-template/README.md: the broker overlay, applied;
        each member's broker kubeconfig from its token."""
        overlay = os.path.join(self.workdir, "broker-overlay")
        members_dir = os.path.join(overlay, "members")
        os.makedirs(members_dir, exist_ok=True)
        template = os.path.join(DEPLOY_MCS, "broker", "member-template")
        for name in self.names:
            target = os.path.join(members_dir, name)
            shutil.copytree(template, target)
            for file_name in os.listdir(target):
                path = os.path.join(target, file_name)
                if file_name == "README.md":
                    os.remove(path)
                    continue
                with open(path) as f:
                    text = f.read()
                with open(path, "w") as f:
                    f.write(text.replace("CLUSTER_ID", name))
        # The forging guard is a ValidatingAdmissionPolicy v1 (Kubernetes 1.30+): a broker
        # without that API cannot take it (docs/design.md says what an operator does then), so
        # the overlay leaves it out there.
        served = json.loads(self.broker.kubectl("get", "--raw",
                                                "/apis/admissionregistration.k8s.io/v1"))
        self.guard_enforced = any(r["name"] == "validatingadmissionpolicies"
                                  for r in served.get("resources", []))
        with open(os.path.join(overlay, "kustomization.yaml"), "w") as f:
            f.write("resources:\n  - %s\n" % os.path.relpath(os.path.join(DEPLOY_MCS, "broker"),
                                                             overlay))
            for name in self.names:
                f.write("  - members/%s\n" % name)
            if not self.guard_enforced:
                f.write("patches:\n")
                for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
                    f.write("  - patch: |-\n      $patch: delete\n"
                            "      apiVersion: admissionregistration.k8s.io/v1\n"
                            "      kind: %s\n      metadata:\n"
                            "        name: slicewright-mcs-member-owns-its-cluster\n" % kind)
        self.broker.kubectl("apply", "-k", overlay)
        view = json.loads(self.broker.kubectl("config", "view", "--minify", "--flatten",
                                              "-o", "json"))
        for name in self.names:
            member = self.members[name]

            def token():
                out = self.broker.kubectl("-n", BROKER_NAMESPACE, "get", "secret",
                                          "member-%s-token" % name, "-o",
                                          "jsonpath={.data.token}", check=False)
                return out.stdout.strip() if out.returncode == 0 else ""
            encoded = _wait(30, token, "the token of member-" + name)
            config = copy.deepcopy(view)
            config["users"][0]["user"] = {"token": base64.b64decode(encoded).decode()}
            config["contexts"][0]["context"]["namespace"] = BROKER_NAMESPACE
            member.broker_kubeconfig = os.path.join(self.workdir, "broker-%s.kubeconfig" % name)
            with open(member.broker_kubeconfig, "w") as f:
                json.dump(config, f, indent=1)

    def _set_up_member(self, member):
        """deploy/mcs/README.md steps 2-4 in one member."""
        member.kubectl("apply", "-k", os.path.join(DEPLOY_MCS, "member"))
        for crd in ("serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io",
                    "clusterproperties.about.k8s.io"):
            member.kubectl("wait", "--for=condition=established", "--timeout=30s", "crd/" + crd)
        member.kubectl("-n", AGENT_NAMESPACE, "scale", "deployment", AGENT_ACCOUNT, "--replicas=0")
        member.kubectl("apply", "-f", "-", input=json.dumps({
            "apiVersion": "about.k8s.io/v1alpha1", "kind": "ClusterProperty",
            "metadata": {"name": "id.k8s.io"}, "spec": {"value": member.name}}))
        member.kubectl("-n", AGENT_NAMESPACE, "create", "secret", "generic", BROKER_SECRET,
                       "--from-file=kubeconfig=" + member.broker_kubeconfig)
        # The agent reads the broker kubeconfig the Deployment would mount: the Secret's.
        stored = member.kubectl("-n", AGENT_NAMESPACE, "get", "secret", BROKER_SECRET, "-o",
                                "jsonpath={.data.kubeconfig}").stdout
        mounted = os.path.join(member.workdir, "broker-kubeconfig-mounted")
        with open(mounted, "wb") as f:
            f.write(base64.b64decode(stored))
        member.broker_kubeconfig = mounted
        if member.kind == "kube":
            member.agent_kubeconfig = member.plane.service_account_kubeconfig(
                AGENT_NAMESPACE, AGENT_ACCOUNT)
        else:
            member.agent_kubeconfig = member.admin_kubeconfig

    def _write_merged_kubeconfig(self):
        config = {"apiVersion": "v1", "kind": "Config", "current-context": self.names[0],
                  "clusters": [], "users": [], "contexts": [], "preferences": {}}
        sources = [(name, self.members[name].admin_kubeconfig) for name in self.names]
        sources.append(("broker", self.broker.admin_kubeconfig))
        for context, path in sources:
            with open(path) as f:
                source = yaml.safe_load(f)
            current = source.get("current-context") or source["contexts"][0]["name"]
            ctx = next(c for c in source["contexts"] if c["name"] == current)["context"]
            cluster = next(c for c in source["clusters"] if c["name"] == ctx["cluster"])["cluster"]
            user = next(u for u in source["users"] if u["name"] == ctx["user"])["user"]
            for key in ("certificate-authority", "client-certificate", "client-key"):
                for entry in (cluster, user):
                    if key in entry:  # file references: inline them, the file may move
                        with open(os.path.join(os.path.dirname(path), entry.pop(key)), "rb") as f:
                            entry[key + "-data"] = base64.b64encode(f.read()).decode()
            config["clusters"].append({"name": context, "cluster": cluster})
            config["users"].append({"name": context, "user": user})
            config["contexts"].append({"name": context,
                                       "context": {"cluster": context, "user": context}})
        with open(self.kubeconfig, "w") as f:
            json.dump(config, f, indent=1)

    # --- the agents ---

    def agent_command(self, name, extra_args=(), drop_flags=()):
        member = self.members[name]
        if member.dns is None:
            member.dns = "127.0.0.1:%d" % free_port()
        member.metrics_port = free_port()
        args = deployment_agent_args()
        args = replace_flag(args, "--broker-kubeconfig", member.broker_kubeconfig)
        args = replace_flag(args, "--bind-address", "127.0.0.1")
        args = replace_flag(args, "--port", str(member.metrics_port))
        args = replace_flag(args, "--logging-format", "text")
        args = replace_flag(args, "--mcs-dns-address", member.dns)
        args += ["--kubeconfig", member.agent_kubeconfig]
        args = [a for a in args if a.split("=", 1)[0] not in drop_flags]
        for extra in list(self.extra_agent_args) + list(extra_args):
            flag = extra.split("=", 1)[0]
            args = replace_flag(args, flag, extra.split("=", 1)[1]) if "=" in extra else \
                args + [extra]
        return [self.binary] + args

    def start_agent(self, name, extra_args=(), drop_flags=(), log_name=None):
        """Starts (or restarts, after stop_agent) `name`'s agent with the Deployment's arguments
        plus `extra_args` ("--flag=value" replaces the flag) less `drop_flags`; its log is
        logs/agent-NAME.log (appended across restarts unless log_name)."""
        member = self.members[name]
        member.agent_args = self.agent_command(name, extra_args, drop_flags)
        member.agent = Process(log_name or "agent-" + name, member.agent_args, self.log_dir)
        return member.agent

    def stop_agent(self, name):
        member = self.members[name]
        if member.agent is not None:
            member.agent.stop()
            member.agent = None

    def _readyz(self, name, check=""):
        member = self.members[name]
        url = "http://127.0.0.1:%d/readyz%s" % (member.metrics_port, check)
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.status == 200
        except Exception:  # noqa: BLE001 - not up yet
            return False

    def wait_agent_ready(self, name, seconds=60):
        """Until `name`'s agent holds its Lease in the broker, leads (its controllers synced) and
        serves DNS; raises with its log's tail if it exits or does not get there."""
        member = self.members[name]

        def ready():
            if not member.agent.running():
                raise RuntimeError("%s's agent exited with %s:\n%s" % (
                    name, member.agent.process.returncode, member.agent.tail()))
            lease = self.broker.kubectl("-n", BROKER_NAMESPACE, "get", "lease", "mcs-" + name,
                                        check=False)
            return lease.returncode == 0 and self._readyz(name) and \
                self._readyz(name, "/mcs-dns")
        try:
            _wait(seconds, ready, name + "'s agent", interval=0.2)
        except RuntimeError as error:
            raise RuntimeError("%s\n%s" % (error, member.agent.tail()))

    def agents_running(self):
        return all(m.agent is not None and m.agent.running() for m in self.members.values())

    def ip_families(self, name):
        """The families `name`'s API server gives Services, primary first."""
        member = self.members[name]
        if member.kind == "dev" or self.dual_stack.get(name):
            return ["IPv4", "IPv6"]
        return ["IPv4"]

    def agent_log(self, name):
        """Everything `name`'s agents logged (every run)."""
        path = os.path.join(self.log_dir, "agent-%s.log" % name)
        if not os.path.exists(path):
            return ""
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")

    # --- pods, as each kind of member runs them ---

    def set_pod_ready(self, context, namespace, name, ready):
        """Turns a running pod unready or ready again (a kubelet's readiness probe)."""
        member = self.members[context]
        if member.kind == "dev":
            member.kubectl("-n", namespace, "annotate", "--overwrite", "pod", name,
                           "sim.slicewright.io/ready=%s" % ("true" if ready else "false"))
            return
        status = "True" if ready else "False"
        member.kubectl("-n", namespace, "patch", "pod", name, "--subresource=status",
                       "--type=strategic", "-p", json.dumps({"status": {"conditions": [
                           {"type": "Ready", "status": status},
                           {"type": "ContainersReady", "status": status}]}}))

    def describe(self):
        return {"kubeconfig": self.kubeconfig, "contexts": self.names + ["broker"],
                "resolvers": self.resolvers, "dir": self.workdir,
                "versions": {name: m.version for name, m in self.members.items()},
                "broker_version": self.broker.version,
                "startup_seconds": round(self.startup_seconds or 0, 2)}

    def stop(self):
        for member in self.members.values():
            if member.agent is not None:
                member.agent.stop()
            if member.dev is not None:
                member.dev.stop()
            if member.plane is not None:
                member.plane.stop()
        if self.broker is not None:
            self.broker.stop()

    def cleanup(self, keep):
        """Stops everything; removes the folder unless `keep` (a failed check) or E2E_KEEP."""
        self.stop()
        for plane in [m.plane for m in self.members.values()] + [self.broker]:
            if plane is not None:
                shutil.rmtree(getattr(plane, "etcd_data", ""), ignore_errors=True)
        if keep or os.environ.get("E2E_KEEP"):
            print("(kept %s for inspection)" % self.workdir, flush=True)
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)


def _serve(argv):
    import argparse

    parser = argparse.ArgumentParser(prog="clusterset.py up")
    parser.add_argument("--dir", required=True, help="work folder (created)")
    parser.add_argument("--binary", required=True, help="the slicewright binary")
    parser.add_argument("--dual-stack", action="store_true")
    parser.add_argument("--run-pods", action="store_true",
                        help="workload controllers, and pods scheduled and run")
    parser.add_argument("--keep", action="store_true", help="keep the work folder at exit")
    args = parser.parse_args(argv)
    os.makedirs(args.dir, exist_ok=True)
    clusterset = ClusterSet(args.dir, os.path.abspath(args.binary), dual_stack=args.dual_stack,
                            run_pods=args.run_pods)
    return control_plane.serve(clusterset, args.keep)

if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "up":
        control_plane.skip_unless_assets()
        sys.exit(_serve(sys.argv[2:]))
    sys.exit(__doc__)
