#!/usr/bin/python3
"""The conformance runner (run_conformance.py) against a stand-in for the suite binary: a script
packed and checksummed as ../shared/conformance packs the real one, which writes the reports a
scenario asks for. Checks the unpacking (checksum, cache reuse, a corrupt cache replaced), the
flags the suite gets, and the verdict: every counted spec must pass in both reports, the excluded
spec is not counted, a spec skipped at run time or missing from report.yaml fails, the count must
be the expected one, and a suite that writes no report is a setup failure (exit 2).
Needs no cluster and no real suite; about a second.

Usage: /usr/bin/python3 run_conformance_test.py
"""

import hashlib
import io
import json
import lzma
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

import run_conformance  # noqa: E402
from e2e_server import Checks  # noqa: E402

checks = Checks("run_conformance_test")

EXCLUDED = run_conformance.NOT_COUNTED[0]

# The stand-in suite: writes the Ginkgo JSON report, report.yaml and its argv as FAKE_SCENARIO
# (a JSON file) says, then exits with its code.
FAKE_SUITE = r'''#!/usr/bin/python3
import json, os, sys
scenario = json.load(open(os.environ["FAKE_SCENARIO"]))
json.dump(sys.argv[1:], open("argv.json", "w"))
json_report = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("-ginkgo.json-report="))
if scenario.get("write_reports", True):
    json.dump([{"SuiteSucceeded": scenario["exit"] == 0, "SpecReports": scenario["specs"]}],
              open(json_report, "w"))
    with open("report.yaml", "w") as f:
        f.write(scenario["yaml"])
        f.write("suitefailure: \"\"\n")
    open("report.html", "w").write("<html></html>")
print("fake suite ran")
sys.exit(scenario["exit"])
'''


def spec(text, state="passed", labels=("Required",), message="", container=""):
    report = {"LeafNodeType": "It", "LeafNodeText": text, "ContainerHierarchyTexts": [container],
              "LeafNodeLabels": list(labels), "ContainerHierarchyLabels": [[]], "State": state,
              "RunTime": 1500000000}
    if message:
        report["Failure"] = {"Message": message,
                             "FailureNodeLocation": {"FileName": "x.go", "LineNumber": 7}}
    return report


def yaml_for(specs, overrides=None):
    """report.yaml's groups for the specs that ran (as the suite writes it: desc trimmed);
    overrides: {desc: (passed, message)}."""
    overrides = overrides or {}
    out = io.StringIO()
    out.write("groups:\n    - name: Required\n      tests:\n")
    for s in specs:
        desc = " ".join(s["ContainerHierarchyTexts"] + [s["LeafNodeText"]]).strip()
        if s["State"] == "skipped" and "Failure" not in s:
            passed, skipped = False, True
        else:
            passed, skipped = s["State"] == "passed", s["State"] == "skipped"
        passed, message = overrides.get(desc, (passed, ""))
        out.write("        - desc: %s\n          passed: %s\n          failed: %s\n"
                  "          skipped: %s\n          conformant: true\n          message: %s\n" %
                  (json.dumps(desc), str(passed).lower(), str(not passed and not skipped).lower(),
                   str(skipped).lower(), json.dumps(message)))
    return out.getvalue()


def passing_specs(count=16):
    specs = [spec("spec number %02d should pass" % i) for i in range(count)]
    specs.append(spec("should be inaccessible",
                      container="Connectivity to a service that is not exported"))
    specs.append(spec("needs a data plane", state="skipped", labels=("Optional", "DNS")))
    return specs


class Suite:
    """A suite folder holding the stand-in, packed and checksummed."""

    def __init__(self, root, corrupt_sum=False):
        self.dir = os.path.join(root, "suite")
        os.makedirs(self.dir)
        data = FAKE_SUITE.encode()
        with lzma.open(os.path.join(self.dir, "mcs-conformance.test.xz"), "wb") as f:
            f.write(data)
        digest = hashlib.sha256(data).hexdigest()
        if corrupt_sum:
            digest = "0" * 64
        with open(os.path.join(self.dir, "SHA256SUMS"), "w") as f:
            f.write("%s  mcs-conformance.test\n" % digest)
        self.digest = digest


def run(root, suite, scenario, extra=()):
    """Runs the runner; returns (exit code, printed lines, report dir)."""
    scenario_path = os.path.join(root, "scenario.json")
    with open(scenario_path, "w") as f:
        json.dump(scenario, f)
    os.environ["FAKE_SCENARIO"] = scenario_path
    kubeconfig = os.path.join(root, "kubeconfig")
    open(kubeconfig, "w").write("{}")
    report_dir = os.path.join(root, "reports")
    lines = []
    args = run_conformance.parse_args(
        ["--kubeconfig", kubeconfig, "--contexts", "c1,c2", "--report-dir", report_dir,
         "--suite-dir", suite.dir, "--cache-dir", os.path.join(root, "cache"),
         "--version", "v-test", "--timeout", "60"] + list(extra))
    try:
        code = run_conformance.run(args, out=lines.append)
    except run_conformance.SetupError as e:
        lines.append("setup error: %s" % e)
        code = run_conformance.SETUP_FAILED
    return code, lines, report_dir


def scenario(specs, exit_code=0, yaml_overrides=None, **extra):
    ran = [s for s in specs if s["State"] != "skipped" or "Failure" in s]
    result = {"specs": specs, "exit": exit_code, "yaml": yaml_for(ran, yaml_overrides)}
    result.update(extra)
    return result


def test_passing(root):
    suite = Suite(root)
    code, lines, report_dir = run(root, suite, scenario(passing_specs()),
                                  extra=["--", "-dns-domain", "example.local"])
    checks.eq("all counted specs pass: exit 0", code, 0)
    checks.check("the verdict line", "16 of 16 counted specs passed" in "\n".join(lines), lines)
    checks.check("the excluded spec is listed, not counted",
                 any(l.strip().startswith("not counted (passed)") and EXCLUDED in l
                     for l in lines), lines)
    checks.check("a spec the label filter skipped is listed as such",
                 any("skipped (label filter)" in l and "needs a data plane" in l for l in lines))
    checks.check("each counted spec is printed with its result and labels",
                 sum(1 for l in lines if "PASS (1.5 s)" in l and "[Required]" in l) == 16, lines)
    argv = json.load(open(os.path.join(report_dir, "argv.json")))
    flags = {flag: argv[i + 1] for i, flag in enumerate(argv[:-1])
             if flag in ("-kubeconfig", "-contexts", "-organization", "-project", "-version",
                         "-url")}
    checks.eq("the suite gets the kubeconfig and contexts",
              (flags.get("-kubeconfig"), flags.get("-contexts")),
              (os.path.join(root, "kubeconfig"), "c1,c2"))
    checks.eq("the report flags", (flags.get("-organization"), flags.get("-project"),
                                   flags.get("-version"), flags.get("-url")),
              ("slicewright", "slicewright", "v-test", "docs/conformance/README.md"))
    checks.check("the label filter and a JSON report",
                 "-ginkgo.label-filter=!Connectivity && !DNS" in argv and
                 "-ginkgo.json-report=" + os.path.join(report_dir, "ginkgo-report.json") in argv,
                 argv)
    checks.eq("arguments after -- go to the suite", argv[-2:], ["-dns-domain", "example.local"])
    checks.check("reports and log are in the report folder",
                 all(os.path.exists(os.path.join(report_dir, f))
                     for f in ("report.html", "report.yaml", "ginkgo-report.json", "suite.log")))
    checks.check("the suite's output is in suite.log",
                 "fake suite ran" in open(os.path.join(report_dir, "suite.log")).read())

    # Unpacked once: a second run reuses the binary; a corrupted one is unpacked again.
    binary = os.path.join(root, "cache", suite.digest[:16], "mcs-conformance.test")
    before = os.stat(binary)
    code, _, _ = run(root, suite, scenario(passing_specs()))
    after = os.stat(binary)
    checks.check("a second run reuses the unpacked suite",
                 code == 0 and (before.st_ino, before.st_mtime_ns) ==
                 (after.st_ino, after.st_mtime_ns))
    with open(binary, "ab") as f:
        f.write(b"# corrupted\n")
    code, _, _ = run(root, suite, scenario(passing_specs()))
    checks.check("a corrupted cached suite is unpacked again",
                 code == 0 and hashlib.sha256(open(binary, "rb").read()).hexdigest() ==
                 suite.digest)
    checks.eq("--unpack-only prints the binary's path", run_conformance_unpack_only(root, suite),
              binary)


def run_conformance_unpack_only(root, suite):
    lines = []
    args = run_conformance.parse_args(["--unpack-only", "--suite-dir", suite.dir, "--cache-dir",
                                       os.path.join(root, "cache")])
    run_conformance.run(args, out=lines.append)
    return lines[-1] if lines else None


def test_failures(root):
    suite = Suite(root)
    specs = passing_specs()
    specs[3] = spec("spec number 03 should pass", state="failed",
                    message="Timed out after 20s.\nServiceImport was not found on cluster \"c2\"")
    code, lines, _ = run(root, suite, scenario(specs, exit_code=1))
    text = "\n".join(lines)
    checks.eq("a failed spec: exit 1", code, 1)
    checks.check("the failure is printed with Gomega's message and the location",
                 "FAIL (failed)" in text and "ServiceImport was not found on cluster" in text and
                 "at x.go:7" in text, text)
    checks.check("the verdict counts it", "15 of 16 counted specs passed" in text, text)
    code, lines, _ = run(root, suite, scenario(specs, exit_code=1, yaml_overrides={
        "spec number 03 should pass": (False, " - the suite's summary")}))
    text = "\n".join(lines)
    checks.check("... or with report.yaml's summary of it when there is one",
                 code == 1 and "        the suite's summary" in lines and
                 "Timed out after 20s." not in text, text)

    specs = passing_specs()
    specs[0] = spec("spec number 00 should pass", state="skipped",
                    message="This test requires at least 2 clusters - skipping")
    code, lines, _ = run(root, suite, scenario(specs))
    checks.check("a spec skipped at run time is a failure",
                 code == 1 and "FAIL (skipped)" in "\n".join(lines), lines)

    specs = passing_specs()
    code, lines, _ = run(root, suite, scenario(
        specs, yaml_overrides={"spec number 05 should pass": (False, "")}))
    checks.check("a spec report.yaml does not pass is a failure",
                 code == 1 and "report.yaml" in "\n".join(lines), lines)

    code, lines, _ = run(root, suite, scenario(passing_specs(15)))
    checks.check("fewer counted specs than expected is a failure",
                 code == 1 and "15 specs counted, expected 16" in "\n".join(lines), lines)
    code, lines, _ = run(root, suite, scenario(passing_specs(15)), extra=["--expect-counted", "0"])
    checks.eq("... unless the count is not checked", code, 0)

    specs = passing_specs()
    specs[-2]["State"] = "failed"  # the excluded spec
    specs[-2]["Failure"] = {"Message": "exec failed"}
    code, lines, _ = run(root, suite, scenario(specs, exit_code=1))
    checks.check("the excluded spec failing does not fail the run",
                 code == 0 and any(l.strip().startswith("not counted (failed)") for l in lines),
                 lines)

    code, lines, _ = run(root, suite, scenario([], exit_code=1, write_reports=False))
    checks.check("a suite that writes no report is a setup failure (exit 2) showing its output",
                 code == 2 and "fake suite ran" in "\n".join(lines), lines)


def test_bad_suite(root):
    suite = Suite(root, corrupt_sum=True)
    code, lines, _ = run(root, suite, scenario(passing_specs()))
    checks.check("a checksum mismatch is a setup failure naming the file",
                 code == 2 and "unpacks to a binary with sha256" in "\n".join(lines), lines)
    checks.check("... and leaves nothing in the cache",
                 not os.path.exists(os.path.join(root, "cache", "0" * 16, "mcs-conformance.test")))
    os.unlink(os.path.join(suite.dir, "mcs-conformance.test.xz"))
    code, lines, _ = run(root, suite, scenario(passing_specs()))
    checks.check("a missing suite is a setup failure", code == 2 and "no " in "\n".join(lines),
                 lines)


def main():
    failed = False
    for test in (test_passing, test_failures, test_bad_suite):
        root = tempfile.mkdtemp(prefix="sw-conformance-runner.")
        checks.run(test.__name__, lambda: test(root))
        shutil.rmtree(root, ignore_errors=True)
    failed = checks.finish() != 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
