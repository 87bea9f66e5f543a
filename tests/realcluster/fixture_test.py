#!/usr/bin/python3
"""The real-cluster fixture itself (control_plane.py) against upstream kube-apiserver: it comes up
with TLS, RBAC and ServiceAccount tokens, Nodes and kubelet-written pod status work, and a
dual-stack control plane allocates both families. Every other real-cluster test builds on these.

Usage: /usr/bin/python3 fixture_test.py   (KUBEBUILDER_ASSETS names the envtest folder; exit 77
without it)
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))

import control_plane  # noqa: E402
from e2e_server import Checks, install_sigterm_exit, wait_until  # noqa: E402

checks = Checks("realcluster_fixture_test")


def single_stack(plane):
    info = plane.describe()
    checks.check("version reported", info["version"].startswith("v1."), info)
    print("control plane %s up in %.1f s" % (info["version"], info["startup_seconds"]), flush=True)

    # RBAC is on: a fresh ServiceAccount may not list pods until bound.
    plane.create_namespace("t1")
    sa = plane.service_account_kubeconfig("t1", "reader")
    denied = plane.kubectl("get", "pods", "-n", "t1", kubeconfig=sa, check=False)
    checks.check("a ServiceAccount without a role is refused", denied.returncode != 0 and
                 "forbidden" in denied.stderr, denied.stderr)
    plane.kubectl("-n", "t1", "create", "role", "reader", "--verb=get,list", "--resource=pods")
    plane.kubectl("-n", "t1", "create", "rolebinding", "reader", "--role=reader",
                  "--serviceaccount=t1:reader")
    allowed = wait_until(10, lambda: plane.kubectl("get", "pods", "-n", "t1", kubeconfig=sa,
                                                   check=False).returncode == 0)
    checks.check("the same ServiceAccount may list pods once bound", allowed)
    who = plane.kubectl("auth", "whoami", "-o", "json", kubeconfig=sa, check=False)
    if who.returncode == 0:
        checks.eq("its token names it", json.loads(who.stdout)["status"]["userInfo"]["username"],
                  "system:serviceaccount:t1:reader")

    # No kubelet: a Node registered by hand, a pod bound to it, its status written as a kubelet.
    plane.create_node("node-a", zone="zone-a")
    plane.apply({"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "p", "namespace": "t1", "labels": {"app": "p"}},
                 "spec": {"nodeName": "node-a",
                          "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}})
    plane.set_pod_status("t1", "p", ["10.1.0.5"])
    pod = plane.get_json("-n", "t1", "pod", "p")
    checks.eq("pod status as a kubelet wrote it", (pod["status"]["phase"], pod["status"]["podIP"]),
              ("Running", "10.1.0.5"))
    node = plane.get_json("node", "node-a")
    checks.eq("the Node is Ready with its zone",
              (node["status"]["conditions"][0]["status"],
               node["metadata"]["labels"]["topology.kubernetes.io/zone"]), ("True", "zone-a"))

    # The simulated kubelet finishes a graceful pod delete; one marked to stay Terminating does.
    plane.kubectl("-n", "t1", "annotate", "pod", "p",
                  control_plane.Kubelet.KEEP_TERMINATING + "=true")
    plane.kubectl("-n", "t1", "delete", "pod", "p", "--wait=false")
    terminating = plane.get_json("-n", "t1", "pod", "p")
    checks.check("a pod marked keep-terminating stays Terminating",
                 terminating["metadata"].get("deletionTimestamp"))
    plane.kubectl("-n", "t1", "annotate", "--overwrite", "pod", "p",
                  control_plane.Kubelet.KEEP_TERMINATING + "=false")
    gone = wait_until(20, lambda: plane.kubectl("-n", "t1", "get", "pod", "p",
                                                check=False).returncode != 0)
    checks.check("the kubelet finishes a graceful pod delete", gone)

    # The base controllers run: a deleted namespace's objects go (namespace controller).
    plane.kubectl("delete", "namespace", "t1", "--wait=false")
    gone = wait_until(60, lambda: plane.kubectl("get", "namespace", "t1", check=False).returncode != 0)
    checks.check("the namespace controller finishes a namespace delete", gone)


def dual_stack(plane):
    plane.kubectl("create", "namespace", "ds")
    plane.apply({"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": "ds", "namespace": "ds"},
                 "spec": {"ipFamilyPolicy": "RequireDualStack", "selector": {"app": "x"},
                          "ports": [{"port": 80}]}})
    service = plane.get_json("-n", "ds", "service", "ds")
    checks.eq("a dual-stack control plane allocates both families", service["spec"]["ipFamilies"],
              ["IPv4", "IPv6"])

    # run_pods: kube-controller-manager's workload controllers make the pods, the simulated
    # scheduler and kubelet bind and run them.
    plane.start_controller_manager(("deployment", "replicaset"), name="kcm-workloads")
    plane.kubectl("-n", "ds", "create", "deployment", "web", "--replicas=2",
                  "--image=registry.k8s.io/pause:3.9")

    def running():
        pods = plane.get_json("-n", "ds", "pods")["items"]
        return len(pods) == 2 and all(p["status"].get("phase") == "Running" and
                                      len(p["status"].get("podIPs", [])) == 2 and
                                      p["spec"].get("nodeName") for p in pods)
    checks.check("a Deployment's pods are scheduled and run, with an address per family",
                 wait_until(60, running), plane.kubectl("-n", "ds", "get", "pods", "-o", "wide"))


def main():
    install_sigterm_exit()
    control_plane.skip_unless_assets()
    for name, dual, scenario in (("single", False, single_stack), ("dual", True, dual_stack)):
        plane = control_plane.ControlPlane(tempfile.mkdtemp(prefix="sw-realcluster-%s." % name),
                                           dual_stack=dual, run_pods=dual)
        failed_before = checks.failed
        try:
            plane.start()
            checks.run(name, lambda: scenario(plane))
        except Exception as error:  # noqa: BLE001 - a fixture that does not come up fails
            checks.fail("%s control plane starts" % name, str(error))
        finally:
            plane.cleanup(keep=checks.failed > failed_before)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
