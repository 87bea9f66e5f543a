#!/usr/bin/env python3
"""Draws docs/fleet_scale.svg from docs/fleet_scale.tsv: how each fleet_sim figure grows with the
number of members (issue #31 §1). Standard library only: the SVG is written by hand.

The TSV has one row per run: `members`, `reading` (`all` when every member exports every name,
`one` when each name has one exporter), then the figures of fleet_sim's `summary:` line. A panel per
figure, one line per reading, the target (when there is one) dashed. Usage:

    scripts/fleet_plot.py [docs/fleet_scale.tsv] [docs/fleet_scale.svg]
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


def main():
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
