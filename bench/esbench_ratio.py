#!/usr/bin/env python3
"""Times the upstream EndpointSlice reconciler and `slicewright plan` on the same inputs, in one
run, interleaved, and prints each case's medians, writes and the ratio upstream/ours (issue #31 §2).

Upstream is `esbench` from the oracle directory (k8s.io/endpointslice v0.28.15's Reconciler with a
client that counts writes; its README.md says how it was built). It is unpacked into a cache
directory (never into the repository) and checked against the oracle's SHA256SUMS. The inputs are
the oracle's gen_inputs.py (one Service, N ready pods on 3 nodes in 3 zones) plus our own slices:

  full          no slices: a full build
  kcm_unchanged the slices upstream's first reconcile wrote, in upstream's order (gen_inputs noop)
  kcm_onechange the same, one pod made not ready (gen_inputs change1)
  own_unchanged the slices `slicewright plan` writes for full.json, in its order
                (bench/resync_input.py's own_slices)
  own_onechange the same, with change1's pods

Both programs must make the writes the case calls for (full: one create per 100 pods; unchanged:
none; one change: one update), or the script exits 1. Each round runs every case once per
program, which one goes first alternating by round; a program's figure for a round is the median
of its timed calls (esbench: Reconcile only; plan: select pods, derive, plan, free the plans).
The script prints the median over rounds of those figures, their range, and the ratio of the two
medians of each round (median and range over rounds).

Usage: bench/esbench_ratio.py [--slicewright build/release/src/cli/slicewright]
           [--oracle ../shared/oracle] [--pods 10000] [--rounds 5] [--cases full,kcm_unchanged,...]
Run measurements from a release build, holding the machine's benchmark lock:
  flock /work/bench.lock bench/esbench_ratio.py
"""
import argparse
import hashlib
import json
import lzma
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import resync_input  # noqa: E402  (bench/resync_input.py: our own slices, as plan writes them)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMING = re.compile(r"reconcile: median_ns=(\d+) min_ns=(\d+) runs=(\d+) writes=(\d+)/(\d+)/(\d+)")
CASES = ["full", "kcm_unchanged", "kcm_onechange", "own_unchanged", "own_onechange"]
PROGRAMS = ["upstream", "slicewright"]


def die(message):
    print("esbench_ratio: " + message, file=sys.stderr)
    sys.exit(1)


def unpack_esbench(oracle, cache_dir):
    """The esbench binary, unpacked once per checksum into cache_dir and verified."""
    sums = open(os.path.join(oracle, "SHA256SUMS")).read().split()
    want = sums[sums.index("esbench") - 1] if "esbench" in sums else sums[0]
    path = os.path.join(cache_dir, "esbench-" + want[:16])
    if os.path.exists(path) and sha256(path) == want:
        return path
    os.makedirs(cache_dir, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=cache_dir, delete=False) as out:
        with lzma.open(os.path.join(oracle, "esbench.xz")) as packed:
            shutil.copyfileobj(packed, out)
    if sha256(out.name) != want:
        os.unlink(out.name)
        die("esbench.xz unpacks to a binary whose sha256 is not SHA256SUMS' " + want)
    os.chmod(out.name, 0o755)
    os.replace(out.name, path)
    return path


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def make_inputs(oracle, esbench, slicewright, pods, work):
    """Writes the five cases' files into work; returns {case: path}."""
    subprocess.run([sys.executable, os.path.join(oracle, "src", "gen_inputs.py"), "--esbench",
                    esbench, "--out", work, "--pods", str(pods)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    files = {"full": "full.json", "kcm_unchanged": "noop.json", "kcm_onechange": "change1.json"}
    paths = {case: os.path.join(work, name) for case, name in files.items()}
    own = resync_input.own_slices(slicewright, paths["full"], random.Random(1))
    for case, source in [("own_unchanged", "kcm_unchanged"), ("own_onechange", "kcm_onechange")]:
        with open(paths[source]) as f:
            doc = json.load(f)
        doc["items"] = [item for item in doc["items"] if item["kind"] != "EndpointSlice"] + own
        paths[case] = os.path.join(work, case + ".json")
        with open(paths[case], "w") as f:
            json.dump(doc, f)
    return paths


def expected_writes(case, pods):
    if case == "full":
        return (-(-pods // 100), 0, 0)
    return (0, 1, 0) if case.endswith("onechange") else (0, 0, 0)


def run(program, binary, path, repeat):
    """(median_ns, writes) of one timed run of `program` on `path`."""
    if program == "upstream":
        command = [binary, "-f", path, "-repeat", str(repeat)]
    else:
        command = [binary, "plan", "-f", path, "--repeat", str(repeat), "-o", "json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        die("%s failed (exit %d): %s" % (" ".join(command), done.returncode, done.stderr[-2000:]))
    # esbench prints its line on stdout, plan on stderr (stdout has the plan).
    match = TIMING.search(done.stdout if program == "upstream" else done.stderr)
    if not match:
        die("%s printed no timing line" % " ".join(command))
    return int(match.group(1)), tuple(int(match.group(k)) for k in (4, 5, 6))


def milliseconds(ns):
    return "%.3f" % (ns / 1e6)


def spread(values, fmt):
    return "%s-%s" % (fmt(min(values)), fmt(max(values)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slicewright",
                        default=os.path.join(REPO, "build", "release", "src", "cli", "slicewright"))
    parser.add_argument("--oracle", default=os.path.join(REPO, "..", "shared", "oracle"))
    parser.add_argument("--cache-dir", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "slicewright"))
    parser.add_argument("--work-dir", help="where the inputs go (default: a temporary directory)")
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--upstream-repeat", type=int, default=10,
                        help="timed Reconcile calls per esbench run")
    parser.add_argument("--slicewright-repeat", type=int, default=30,
                        help="timed runs per `plan --repeat`")
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    cases = args.cases.split(",")
    for case in cases:
        if case not in CASES:
            die("unknown case %r (known: %s)" % (case, ", ".join(CASES)))
    if not os.path.isdir(args.oracle):
        die("no oracle directory %s" % args.oracle)
    if not os.access(args.slicewright, os.X_OK):
        die("no slicewright binary at %s" % args.slicewright)

    esbench = unpack_esbench(args.oracle, args.cache_dir)
    load_before = open("/proc/loadavg").read().split()[0]
    work = args.work_dir or tempfile.mkdtemp(prefix="esbench_ratio.")
    os.makedirs(work, exist_ok=True)
    try:
        paths = make_inputs(args.oracle, esbench, args.slicewright, args.pods, work)
        binaries = {"upstream": esbench, "slicewright": args.slicewright}
        repeats = {"upstream": args.upstream_repeat, "slicewright": args.slicewright_repeat}
        medians = {(case, program): [] for case in cases for program in PROGRAMS}
        wrong = []
        for r in range(args.rounds):
            order = PROGRAMS if r % 2 == 0 else PROGRAMS[::-1]
            for case in cases:
                for program in order:
                    median, writes = run(program, binaries[program], paths[case], repeats[program])
                    medians[(case, program)].append(median)
                    if writes != expected_writes(case, args.pods):
                        wrong.append("%s on %s wrote %d/%d/%d, expected %d/%d/%d" % (
                            (program, case) + writes + expected_writes(case, args.pods)))
            print("round %d/%d done (load %s)" % (r + 1, args.rounds,
                                                  open("/proc/loadavg").read().split()[0]),
                  file=sys.stderr)
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)

    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "?"
    print("checkout %s, pods=%d, rounds=%d, upstream: esbench -repeat %d, slicewright: %s plan "
          "--repeat %d, load average %s before, %s after" % (
              commit, args.pods, args.rounds, args.upstream_repeat, args.slicewright,
              args.slicewright_repeat, load_before, open("/proc/loadavg").read().split()[0]))
    print("%-14s %-8s %-26s %-26s %s" % ("case", "writes", "upstream ms (range)",
                                        "slicewright ms (range)", "upstream/slicewright (range)"))
    for case in cases:
        up, ours = medians[(case, "upstream")], medians[(case, "slicewright")]
        ratios = [u / o for u, o in zip(up, ours)]
        print("%-14s %-8s %-26s %-26s %s" % (
            case, "%d/%d/%d" % expected_writes(case, args.pods),
            "%s (%s)" % (milliseconds(statistics.median(up)), spread(up, milliseconds)),
            "%s (%s)" % (milliseconds(statistics.median(ours)), spread(ours, milliseconds)),
            "%.1fx (%s)" % (statistics.median(ratios), spread(ratios, lambda x: "%.1f" % x))))
    if wrong:
        for line in sorted(set(wrong)):
            print("esbench_ratio: wrong writes: " + line, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
