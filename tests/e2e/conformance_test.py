#!/usr/bin/python3
"""The upstream Multi-Cluster Services conformance suite (kubernetes-sigs/mcs-api `conformance/`,
built unchanged: ../shared/conformance/README.md) against one `slicewright dev --clusters 2`,
through tests/conformance/run_conformance.py: passes only when all 16 counted specs pass (the
label filter `!Connectivity && !DNS` leaves 17 that need no data plane; "Connectivity to a service
that is not exported should be inaccessible" only execs into a pod, so it is not counted). The
members' contexts come from DIR/dev.json. Then SIGTERM exits 0.

Skipped (exit 77, one line) when the suite is absent: $SW_CONFORMANCE_DIR, else
../shared/conformance beside the source tree (as scripts/lib.sh finds ../shared/envtest).

Usage: /usr/bin/python3 conformance_test.py PATH/TO/slicewright [--publish DIR]
  --publish DIR  also copies the suite's report.html and report.yaml to
                 DIR/slicewright-dev.html and DIR/slicewright-dev.yaml (scripts/conformance.sh)
About 65 s in the dev build (the suite's own waits: a 5 s "consistently" in several specs, pods
polled once a second).
"""

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))

import e2e_server  # noqa: E402
import run_conformance  # noqa: E402
from e2e_server import Checks, Scratch, wait_until  # noqa: E402

checks = Checks("conformance_test")
SUITE_TIMEOUT = 400  # seconds; the suite takes about 65 in the dev build


def parse_args():
    args = sys.argv[1:]
    publish = None
    if "--publish" in args:
        at = args.index("--publish")
        if at + 1 >= len(args):
            sys.exit("--publish needs a folder")
        publish = os.path.abspath(args[at + 1])
        del args[at:at + 2]
    sys.argv = [sys.argv[0]] + args
    return e2e_server.binary_from_argv(), publish


def main():
    binary, publish = parse_args()
    e2e_server.install_sigterm_exit()
    suite_dir = run_conformance.DEFAULT_SUITE_DIR
    if not os.path.isfile(os.path.join(suite_dir, "mcs-conformance.test.xz")):
        print("no MCS conformance suite in %s (set SW_CONFORMANCE_DIR): skipped" % suite_dir)
        sys.exit(77)
    scratch = Scratch("conformance")
    data_dir = os.path.join(scratch.path, "data")
    report_dir = os.path.join(scratch.path, "reports")
    log_path = os.path.join(scratch.path, "dev.log")
    log = open(log_path, "wb")
    started = time.monotonic()
    # Pods Running as soon as the simulator sees them: the suite polls its request pods once a
    # second, so the default 1 s delay costs up to a second per pod.
    process = subprocess.Popen([binary, "dev", "--clusters", "2", "--data-dir", data_dir,
                                "--pod-ready-delay", "0s"],
                               stdout=subprocess.PIPE, stderr=log)
    failed = True
    try:
        buffer = b""
        deadline = time.monotonic() + 30 * e2e_server.SLOW
        while b"kubeconfig" not in buffer and time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], 0.5)
            if ready:
                chunk = os.read(process.stdout.fileno(), 4096)
                if not chunk:
                    break
                buffer += chunk
        checks.check("slicewright dev --clusters 2 is up", b"kubeconfig" in buffer, buffer)
        dev_json = os.path.join(data_dir, "dev.json")
        checks.check("dev.json is written", wait_until(10, lambda: os.path.exists(dev_json)))
        with open(dev_json) as f:
            contexts = [c["context"] for c in json.load(f)["clusters"]]
        print("dev up in %.1f s; members %s" % (time.monotonic() - started, contexts), flush=True)

        suite_started = time.monotonic()
        # The suite's own deadline (-ginkgo.timeout), well inside ctest's 600 s, so that a run
        # that hangs still writes its report and the runner says which spec hung.
        runner = subprocess.run(
            [sys.executable, run_conformance.__file__, "--kubeconfig",
             os.path.join(data_dir, "kubeconfig"), "--contexts", ",".join(contexts),
             "--report-dir", report_dir, "--timeout", str(SUITE_TIMEOUT)],
            stdin=subprocess.DEVNULL, timeout=SUITE_TIMEOUT + 180)
        print("suite ran in %.1f s" % (time.monotonic() - suite_started), flush=True)
        checks.eq("the runner: every counted spec passed (exit 0)", runner.returncode, 0)
        if publish and runner.returncode == 0:
            os.makedirs(publish, exist_ok=True)
            for source, target in (("report.html", "slicewright-dev.html"),
                                   ("report.yaml", "slicewright-dev.yaml")):
                shutil.copyfile(os.path.join(report_dir, source), os.path.join(publish, target))
            print("published %s/slicewright-dev.{html,yaml}" % publish, flush=True)

        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=20 * e2e_server.SLOW)
        except subprocess.TimeoutExpired:
            code = None
        checks.eq("SIGTERM: exits 0", code, 0)
        print("total %.1f s" % (time.monotonic() - started), flush=True)
        failed = checks.finish() != 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
        if failed:
            with open(log_path, "rb") as f:
                print(f.read().decode(errors="replace")[-4000:])
        scratch.cleanup(failed)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
