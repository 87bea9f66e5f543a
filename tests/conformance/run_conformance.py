#!/usr/bin/python3
"""Runs the upstream Multi-Cluster Services conformance suite (kubernetes-sigs/mcs-api
`conformance/`, built unchanged as a Go test binary: ../shared/conformance/README.md) against any
ClusterSet named by a kubeconfig and its member contexts, and fails unless every counted spec
passed.

What it does:
1. Unpacks SUITE_DIR/mcs-conformance.test.xz into a cache folder (CACHE_DIR/<sha256 prefix>/),
   checked against SUITE_DIR/SHA256SUMS; an unpacked binary whose checksum matches is reused, so
   running again costs nothing. Nothing in the suite is changed.
2. Runs it from REPORT_DIR (the suite writes report.html and report.yaml, the files
   implementations publish, into its working folder) with `-kubeconfig -contexts`, the label
   filter (default `!Connectivity && !DNS`: the specs that exec commands in pods need a data plane),
   the report's `-organization -project -version -url`, and a Ginkgo JSON report
   (REPORT_DIR/ginkgo-report.json). Its output goes to REPORT_DIR/suite.log.
3. Reads the JSON report and report.yaml and prints each spec's name and result. A spec counts
   when the label filter selected it (it ran, or it was skipped at run time, which is a failure),
   unless it is excluded: by default "Connectivity to a service that is not exported should be
   inaccessible", which only execs into a pod and passes without checking anything when exec is
   not served. Exit 0 only when the suite started, every counted spec passed in both reports, and
   (with --expect-counted, default 16) exactly that many specs were counted.

Nothing here assumes `slicewright dev`: point it at any kubeconfig whose contexts are the members
(real kube-apiservers with an MCS implementation included).

Usage:
  run_conformance.py --kubeconfig K --contexts cluster-1,cluster-2 --report-dir D
      [--suite-dir DIR] [--cache-dir DIR] [--label-filter EXPR] [--expect-counted N]
      [--exclude SPEC]... [--organization O] [--project P] [--version V] [--url U]
      [--timeout SECONDS] [-- EXTRA SUITE FLAGS, e.g. -dns-domain example.local]
  run_conformance.py --unpack-only [--suite-dir DIR] [--cache-dir DIR]   (prints the binary's path)
SUITE_DIR defaults to $SW_CONFORMANCE_DIR, else ../shared/conformance beside the source tree;
CACHE_DIR to ${XDG_CACHE_HOME:-~/.cache}/slicewright-conformance.

Exit codes: 0 every counted spec passed; 1 a spec failed, was skipped at run time, or the count
differs; 2 the suite could not be set up or run (missing files, checksum mismatch, no report).
"""

import argparse
import hashlib
import json
import lzma
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
# The suite's folder: $SW_CONFORMANCE_DIR, else ../shared/conformance beside the source tree (as
# scripts/lib.sh finds ../shared/envtest).
DEFAULT_SUITE_DIR = os.environ.get("SW_CONFORMANCE_DIR") or os.path.normpath(
    os.path.join(SOURCE_ROOT, "..", "shared", "conformance"))
BINARY = "mcs-conformance.test"
DEFAULT_LABEL_FILTER = "!Connectivity && !DNS"
# The Required spec that only execs into a pod ("nc" to the Service): without exec it passes
# having checked nothing, so it proves nothing about an implementation without a data plane.
NOT_COUNTED = ("Connectivity to a service that is not exported should be inaccessible",)
DEFAULT_EXPECTED = 16  # of the suite's 27 specs: 17 run under the default filter, less the one above
SETUP_FAILED = 2


class SetupError(Exception):
    """The suite could not be unpacked, run or read: exit 2 with the message."""


def default_cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "slicewright-conformance")


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_sums(suite_dir):
    """SHA256SUMS as {file name: hex digest}."""
    path = os.path.join(suite_dir, "SHA256SUMS")
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise SetupError("cannot read %s: %s" % (path, e)) from e
    sums = {}
    for line in lines:
        parts = line.split()
        if len(parts) == 2 and re.fullmatch(r"[0-9a-f]{64}", parts[0]):
            sums[parts[1].lstrip("*")] = parts[0]
    return sums


def unpack_suite(suite_dir, cache_dir):
    """The path of the unpacked suite binary, checked against SHA256SUMS; unpacks it into
    cache_dir once (a matching binary already there is reused; a concurrent unpack is harmless:
    each writes a temporary file and renames it into place)."""
    sums = read_sums(suite_dir)
    want = sums.get(BINARY)
    if want is None:
        raise SetupError("%s/SHA256SUMS has no checksum for %s" % (suite_dir, BINARY))
    target_dir = os.path.join(cache_dir, want[:16])
    target = os.path.join(target_dir, BINARY)
    if os.path.isfile(target) and sha256_of(target) == want:
        return target
    packed = os.path.join(suite_dir, BINARY + ".xz")
    if not os.path.isfile(packed):
        raise SetupError("no %s (the conformance suite; see ../shared/conformance/README.md)" %
                         packed)
    if BINARY + ".xz" in sums and sha256_of(packed) != sums[BINARY + ".xz"]:
        raise SetupError("%s does not match its checksum in SHA256SUMS" % packed)
    os.makedirs(target_dir, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=BINARY + ".", dir=target_dir)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, lzma.open(packed, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != want:
            raise SetupError("%s unpacks to a binary with sha256 %s, not %s (SHA256SUMS)" %
                             (packed, digest.hexdigest(), want))
        os.chmod(partial, 0o755)
        os.replace(partial, target)
    except (OSError, lzma.LZMAError) as e:
        raise SetupError("cannot unpack %s into %s: %s" % (packed, target_dir, e)) from e
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


def git_describe():
    try:
        result = subprocess.run(["git", "-C", SOURCE_ROOT, "describe", "--always", "--dirty"],
                                capture_output=True, text=True, timeout=30)
    except OSError:
        return "unknown"
    return result.stdout.strip() if result.returncode == 0 and result.stdout.strip() else "unknown"


def collapse(text):
    return " ".join(text.split())


class Spec:
    """One It of the Ginkgo JSON report."""

    def __init__(self, report):
        containers = report.get("ContainerHierarchyTexts") or []
        # Ginkgo's FullText joins the containers and the leaf with spaces; report.yaml's desc is
        # that, trimmed (empty containers leave double spaces inside).
        self.desc = " ".join(containers + [report.get("LeafNodeText", "")]).strip()
        self.name = collapse(self.desc)
        labels = list(report.get("LeafNodeLabels") or [])
        for level in report.get("ContainerHierarchyLabels") or []:
            labels.extend(level or [])
        self.labels = sorted(set(labels), key=lambda l: (l not in ("Required", "Optional"), l))
        self.state = report.get("State", "")
        failure = report.get("Failure") or {}
        self.message = (failure.get("Message") or "").strip()
        location = failure.get("FailureNodeLocation") or failure.get("Location") or {}
        self.location = ("%s:%s" % (location.get("FileName", ""), location.get("LineNumber", ""))
                         if location.get("FileName") else "")
        self.seconds = (report.get("RunTime") or 0) / 1e9
        # Skipped by the label filter: never started, no failure recorded. Skip() at run time
        # (e.g. "requires at least 2 clusters") records its message.
        self.selected = self.state != "skipped" or bool(self.message)


def load_json_report(path):
    try:
        with open(path) as f:
            suites = json.load(f)
    except (OSError, ValueError) as e:
        raise SetupError("no readable Ginkgo report %s: %s" % (path, e)) from e
    if not suites:
        raise SetupError("the Ginkgo report %s is empty" % path)
    return suites[0]


def load_yaml_report(path):
    """report.yaml as {desc: test entry}, or None when PyYAML is missing."""
    try:
        import yaml  # Debian's python3-yaml, a dependency of python3-kubernetes
    except ImportError:
        return None
    try:
        with open(path) as f:
            data = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        raise SetupError("no readable %s: %s" % (path, e)) from e
    entries = {}
    for group in data.get("groups") or []:
        for test in group.get("tests") or []:
            entries[test.get("desc", "")] = test
    return entries, data.get("suitefailure") or ""


def judge(suite, yaml_entries, excluded, expect_counted, out):
    """Prints every spec and returns True when every counted spec passed."""
    specs = [Spec(r) for r in suite.get("SpecReports") or [] if r.get("LeafNodeType") == "It"]
    for report in suite.get("SpecReports") or []:
        if report.get("LeafNodeType") in ("BeforeSuite", "SynchronizedBeforeSuite") and \
                report.get("State") != "passed":
            message = ((report.get("Failure") or {}).get("Message") or "").strip()
            out("BeforeSuite %s: %s" % (report.get("State"), message.splitlines()[0] if message
                                        else "(no message)"))
    excluded_names = {collapse(e) for e in excluded}
    counted, passed, failures = 0, 0, []
    def line(result, spec):
        out("  %-24s [%s] %s" % (result, ", ".join(spec.labels), spec.name))

    for spec in sorted(specs, key=lambda s: (not s.selected, s.name)):
        if not spec.selected:
            line("skipped (label filter)", spec)
            continue
        yaml_entry = yaml_entries.get(spec.desc) if yaml_entries is not None else None
        ok = spec.state == "passed"
        why = ""
        if ok and yaml_entries is not None:
            if yaml_entry is None:
                ok, why = False, "not in report.yaml"
            elif not (yaml_entry.get("passed") and yaml_entry.get("conformant")):
                ok, why = False, "report.yaml: " + (yaml_entry.get("message") or "not passed")
        if spec.name in excluded_names:
            line("not counted (%s)" % spec.state, spec)
            continue
        counted += 1
        if ok:
            passed += 1
            line("PASS (%.1f s)" % spec.seconds, spec)
            continue
        failures.append(spec)
        line("FAIL (%s)" % spec.state, spec)
        # The suite's own one-line reading of the failure (report.yaml) when it has one, else
        # Gomega's message.
        summary = (yaml_entry or {}).get("message", "").strip().lstrip("-").strip()
        detail = why or summary or spec.message
        for text in detail.splitlines()[:12]:
            out("        " + text)
        if spec.location:
            out("        at " + spec.location)
    out("%d of %d counted specs passed (%d specs ran or were selected; not counted: %s)" %
        (passed, counted, sum(1 for s in specs if s.selected),
         "; ".join(sorted(excluded_names)) or "none"))
    ok = not failures and counted == passed
    if expect_counted and counted != expect_counted:
        out("FAIL: %d specs counted, expected %d (a different suite build, label filter or "
            "number of contexts?)" % (counted, expect_counted))
        ok = False
    if counted == 0:
        out("FAIL: no spec was counted")
        ok = False
    return ok


def run(args, out=print):
    binary = unpack_suite(args.suite_dir, args.cache_dir)
    if args.unpack_only:
        out(binary)
        return 0
    if not args.kubeconfig or not args.contexts:
        raise SetupError("--kubeconfig and --contexts are required")
    if not os.path.isfile(args.kubeconfig):
        raise SetupError("no kubeconfig %s" % args.kubeconfig)
    report_dir = os.path.abspath(args.report_dir)
    os.makedirs(report_dir, exist_ok=True)
    json_report = os.path.join(report_dir, "ginkgo-report.json")
    for stale in ("report.html", "report.yaml", "ginkgo-report.json", "suite.log"):
        if os.path.exists(os.path.join(report_dir, stale)):
            os.unlink(os.path.join(report_dir, stale))
    command = [binary,
               "-kubeconfig", os.path.abspath(args.kubeconfig),
               "-contexts", args.contexts,
               "-ginkgo.label-filter=" + args.label_filter,
               "-ginkgo.v", "-ginkgo.no-color",
               "-ginkgo.json-report=" + json_report,
               "-ginkgo.timeout=%ds" % args.timeout,
               "-organization", args.organization,
               "-project", args.project,
               "-version", args.version or git_describe(),
               "-url", args.url] + list(args.suite_args)
    log_path = os.path.join(report_dir, "suite.log")
    out("running %s (contexts %s, label filter %r); output in %s" %
        (BINARY, args.contexts, args.label_filter, log_path))
    with open(log_path, "wb") as log:
        try:
            result = subprocess.run(command, cwd=report_dir, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, timeout=args.timeout + 120)
        except subprocess.TimeoutExpired as e:
            raise SetupError("the suite did not finish within %d s (see %s)" %
                             (args.timeout + 120, log_path)) from e
    if not os.path.exists(json_report):
        with open(log_path, "rb") as f:
            tail = f.read().decode(errors="replace")[-2000:]
        raise SetupError("the suite (exit %d) wrote no report; the end of its output:\n%s" %
                         (result.returncode, tail))
    suite = load_json_report(json_report)
    yaml_report = load_yaml_report(os.path.join(report_dir, "report.yaml"))
    yaml_entries = None
    if yaml_report is None:
        out("(PyYAML missing: report.yaml not cross-checked)")
    else:
        yaml_entries, suite_failure = yaml_report
        if suite_failure:
            out("report.yaml: suite failure: " + suite_failure)
    ok = judge(suite, yaml_entries, args.exclude, args.expect_counted, out)
    out("suite exit code %d; reports: %s, %s" % (
        result.returncode, os.path.join(report_dir, "report.html"),
        os.path.join(report_dir, "report.yaml")))
    return 0 if ok else 1


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Run the upstream MCS conformance suite against a ClusterSet.",
        epilog="Arguments after -- go to the suite unchanged.")
    parser.add_argument("--kubeconfig", help="kubeconfig holding every member's context")
    parser.add_argument("--contexts", help="comma-separated member contexts (the first exports)")
    parser.add_argument("--report-dir", default=".", help="where the reports and log go")
    parser.add_argument("--suite-dir", default=DEFAULT_SUITE_DIR,
                        help="folder with mcs-conformance.test.xz and SHA256SUMS (default: %s)" %
                        DEFAULT_SUITE_DIR)
    parser.add_argument("--cache-dir", default=default_cache_dir(),
                        help="where the unpacked suite is kept (default: %(default)s)")
    parser.add_argument("--unpack-only", action="store_true",
                        help="unpack (or find) the suite, print its path and exit")
    parser.add_argument("--label-filter", default=DEFAULT_LABEL_FILTER)
    parser.add_argument("--exclude", action="append", default=None, metavar="SPEC",
                        help="a spec (full text) that runs but is not counted (default: %r)" %
                        NOT_COUNTED[0])
    parser.add_argument("--expect-counted", type=int, default=DEFAULT_EXPECTED,
                        help="fail unless this many specs are counted (0: any; default "
                             "%(default)s, for the default filter)")
    parser.add_argument("--organization", default="slicewright")
    parser.add_argument("--project", default="slicewright")
    parser.add_argument("--version", default="", help="default: git describe --always --dirty")
    parser.add_argument("--url", default="docs/conformance/README.md")
    parser.add_argument("--timeout", type=int, default=1200,
                        help="seconds the suite may run (-ginkgo.timeout)")
    parser.add_argument("suite_args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.exclude is None:
        args.exclude = list(NOT_COUNTED)
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args)
    except SetupError as e:
        print("run_conformance: %s" % e, file=sys.stderr, flush=True)
        return SETUP_FAILED


if __name__ == "__main__":
    sys.exit(main())
