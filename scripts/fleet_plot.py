#!/usr/bin/env python3
"""Draws docs/fleet_scale.svg from docs/fleet_scale.tsv: how each fleet_sim figure grows with the
number of members (issue #31 §1). Standard library only: the SVG is written by hand.

The TSV has one row per run: `members`, `reading` (`all` when every member exports every name,
`one` when each name has one exporter), then the figures of fleet_sim's `summary:` line. A panel per
figure, one line per reading, the target (when there is one) dashed. Usage:

    scripts/fleet_plot.py [docs/fleet_scale.tsv] [docs/fleet_scale.svg]
    scripts/fleet_plot.py --tsv COMMIT FLEET_SIM_OUTPUT[@COMMIT]... > docs/fleet_scale.tsv

The second form writes the TSV from fleet_sim's stdout files (their `summary:` lines), so the table
is the numbers a run printed, not copied by hand.
"""
import csv
import math
import sys

PANELS = [
    # (column, title, target or None)
    ("agent_peak_rss_mb_max", "member agent peak RSS (MB)", 1024),
    ("broker_rss_mb", "broker RSS (MB)", None),
    ("load_seconds", "fleet load -> all imported in a real member (s)", None),
    ("join_seconds", "join: agent start -> every import Ready (s)", 60),
    ("churn_ready_p99_ms", "endpoint Ready -> real member's MCS slice, p99 (ms)", 1000),
    ("export_visible_p99_ms", "new export -> ServiceImport visible, p99 (ms)", 1000),
]
COLOURS = {"all": "#c0392b", "one": "#2471a3"}
W, H = 330, 230  # one panel
LEFT, RIGHT, TOP, BOTTOM = 58, 14, 30, 38


def read(path):
    with open(path, newline="") as f:
        return [row for row in csv.DictReader(f, delimiter="\t") if row.get("members")]


def nice_max(value):
    if value <= 0:
        return 1
    exponent = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * exponent:
            return step * exponent
    return 10 * exponent


def panel(rows, column, title, target, x0, y0):
    out = [f'<g transform="translate({x0},{y0})">',
           f'<text x="{W / 2}" y="16" text-anchor="middle" font-size="12">{title}</text>']
    points = {}
    for row in rows:
        if row.get(column, "") in ("", "-"):
            continue
        points.setdefault(row["reading"], []).append((int(row["members"]), float(row[column])))
    xs = sorted({m for series in points.values() for m, _ in series}) or [10, 250]
    x_min, x_max = math.log10(min(xs)), math.log10(max(xs) if max(xs) > min(xs) else min(xs) * 10)
    ys = [v for series in points.values() for _, v in series] + ([target] if target else [])
    y_max = nice_max(max(ys) if ys else 1)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(m):
        return LEFT + (math.log10(m) - x_min) / (x_max - x_min) * pw

    def sy(v):
        return TOP + ph - v / y_max * ph

    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
    for i in range(5):
        v = y_max * i / 4
        out.append(f'<text x="{LEFT - 4}" y="{sy(v) + 4}" text-anchor="end" font-size="10">'
                   f'{v:g}</text>')
        out.append(f'<line x1="{LEFT}" x2="{LEFT + pw}" y1="{sy(v)}" y2="{sy(v)}" stroke="#eee"/>')
    for m in xs:
        out.append(f'<text x="{sx(m)}" y="{TOP + ph + 14}" text-anchor="middle" font-size="10">'
                   f'{m}</text>')
    out.append(f'<text x="{LEFT + pw / 2}" y="{H - 6}" text-anchor="middle" font-size="10">'
               'members (log scale)</text>')
    if target and target <= y_max:
        out.append(f'<line x1="{LEFT}" x2="{LEFT + pw}" y1="{sy(target)}" y2="{sy(target)}" '
                   'stroke="#27ae60" stroke-dasharray="5,3"/>')
        out.append(f'<text x="{LEFT + pw - 2}" y="{sy(target) - 3}" text-anchor="end" '
                   f'font-size="9" fill="#27ae60">target {target:g}</text>')
    for reading, series in sorted(points.items()):
        series.sort()
        colour = COLOURS.get(reading, "#555")
        path = " ".join(f"{sx(m):.1f},{sy(v):.1f}" for m, v in series)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for m, v in series:
            out.append(f'<circle cx="{sx(m):.1f}" cy="{sy(v):.1f}" r="3" fill="{colour}"/>')
    out.append("</g>")
    return out


def from_phases(path, lines):
    """The summary's figures from the phase lines of a run that printed none (a failed run from
    before fleet_sim printed a summary on failure): what the finished phases measured."""
    phases = {}
    for line in lines:
        name, _, rest = line.partition(": ")
        if name in ("load", "join", "export", "idle"):
            phases[name] = rest.split()
    if "load" not in phases:
        sys.exit(f"{path}: neither a summary nor a load line (the run failed early?)")
    load = dict(item.split("=", 1) for item in phases["load"] if "=" in item)
    fields = {k: load[k] for k in ("members", "services", "exporters", "endpoints")}
    fields["load_seconds"] = load["seconds_to_all_imported"]
    fields["broker_writes_per_s_load"] = load["broker_writes_per_s"]
    fields["broker_rss_mb"] = load["broker_rss_mb"].split("/")[0]
    rss = [float(item.split("=")[1].split("/")[1]) for words in phases.values() for item in words
           if "_agent_rss_mb=" in item]
    fields["agent_peak_rss_mb_max"] = f"{max(rss):g}"
    if "join" in phases:
        join = dict(item.split("=", 1) for item in phases["join"] if "=" in item)
        fields["join_seconds"] = join["join_seconds_to_every_import_ready"]
    if "export" in phases:
        p99 = [item.split("=")[1] for item in phases["export"] if item.startswith("p99_ms=")]
        fields["export_visible_p99_ms"], fields["export_ready_p99_ms"] = p99[0], p99[1]
    fields["failed"] = "churn" if "idle" in phases else "export"
    return fields


def tsv(commit, outputs):
    rows = []
    for path in outputs:
        path, _, own_commit = path.partition("@")  # OUTPUT@COMMIT: a run of another commit
        with open(path) as f:
            lines = f.read().splitlines()
        summary = [line for line in lines if line.startswith("summary:")]
        if summary:
            fields = dict(item.split("=", 1) for item in summary[-1].split()[1:])
        else:
            fields = from_phases(path, lines)
        fields["reading"] = "one" if fields.get("exporters") == "1" else "all"
        fields["commit"] = own_commit or commit
        rows.append(fields)
    rows.sort(key=lambda r: (r["reading"], int(r["members"])))
    columns = ["members", "reading", "commit"]
    for row in rows:
        columns += [k for k in row if k not in columns]
    print("\t".join(columns))
    for row in rows:
        print("\t".join(row.get(c, "-") for c in columns))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--tsv":
        tsv(sys.argv[2], sys.argv[3:])
        return
    source = sys.argv[1] if len(sys.argv) > 1 else "docs/fleet_scale.tsv"
    target = sys.argv[2] if len(sys.argv) > 2 else "docs/fleet_scale.svg"
    rows = read(source)
    columns = 3
    width, height = columns * W, math.ceil(len(PANELS) / columns) * H + 24
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif">', '<rect width="100%" height="100%" fill="white"/>']
    for i, (column, title, goal) in enumerate(PANELS):
        out += panel(rows, column, title, goal, (i % columns) * W, (i // columns) * H)
    legend_y = height - 8
    out.append(f'<text x="10" y="{legend_y}" font-size="11">fleet_sim ({source}); '
               f'<tspan fill="{COLOURS["all"]}">every member exports every name</tspan>, '
               f'<tspan fill="{COLOURS["one"]}">one exporter per name</tspan>; '
               'dashed: the issue\'s target</text>')
    out.append("</svg>")
    with open(target, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
