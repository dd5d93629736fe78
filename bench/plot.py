"""Draws bench/run.py's JSON report as a bar chart: for each metric, ptxjit beside numba-cuda,
CuPy, PyTorch, CUDA C++ (nvcc) and the bare cuLaunchKernel loop, whichever the run measured.

    python bench/plot.py bench.json [-o chart.svg]

Writes an SVG by hand (no plotting package needed). Each metric has its own scale (the units
differ: µs per launch, ms per compile or kernel); lower is better everywhere; each bar is
labelled with its figure, and metrics whose peers are all missing show ptxjit alone. A dry run
(CPU backend, tiny sizes) is drawn too, its title saying that its figures mean nothing.
"""
import argparse
import json
import os
import sys
from xml.sax.saxutils import escape

# The implementations in drawing order, with their labels and colours (ptxjit stands out).
IMPLS = [
    ("ptxjit", "ptxjit", "#e4572e"),
    ("bare", "bare C++", "#4c6a92"),
    ("cuda_cpp", "CUDA C++ (nvcc)", "#29335c"),
    ("numba", "numba-cuda", "#8a9a5b"),
    ("cupy", "CuPy", "#a0a0a0"),
    ("torch", "PyTorch", "#c9a227"),
]

WIDTH = 900
LABEL_W = 250       # the metric and implementation names
BAR_X = LABEL_W + 10
BAR_MAX = WIDTH - BAR_X - 110   # room for the value after the longest bar
BAR_H = 13
GAP = 3
TITLE_H = 20
GROUP_GAP = 12


def fmt(v):
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def bars_of(metric):
    """[(impl, label, colour, value)] of the figures a metric has, in IMPLS order."""
    out = []
    for key, label, colour in IMPLS:
        v = metric.get("ptxjit") if key == "ptxjit" else metric.get("peers", {}).get(key)
        if v is None:
            continue
        if key == "bare":  # the launch loop's reference, else CUDA's own start-up
            label = ("bare cuLaunchKernel" if metric["name"].startswith("launch")
                     else "CUDA start-up (bare C++)")
        out.append((key, label, colour, float(v)))
    return out


def chart(report):
    """The SVG text for a bench/run.py report (the dict its --json writes)."""
    machine = report.get("machine", {})
    title = "ptxjit vs numba-cuda, CuPy, PyTorch and CUDA C++ — lower is better"
    sub = f"{report.get('date', '?')}, {machine.get('gpu') or machine.get('cpu', '?')}"
    if report.get("dry_run"):
        sub += " — DRY RUN (CPU backend, tiny sizes): the figures mean nothing"
    parts, y = [], 56
    for m in report["metrics"]:
        bars = bars_of(m)
        head = f"{m['name']} ({m['unit']})"
        if m.get("meets_target") is False:
            head += " — target missed"
        parts.append(f'<text x="10" y="{y + 14}" class="metric">{escape(head)}</text>')
        target = m.get("target")
        if target:
            parts.append(f'<text x="{WIDTH - 10}" y="{y + 14}" class="target" '
                         f'text-anchor="end">target: {escape(target)}</text>')
        y += TITLE_H
        if not bars:
            parts.append(f'<text x="{BAR_X}" y="{y + 10}" class="value">not measured</text>')
            y += BAR_H + GAP
        top = max((v for *_, v in bars), default=0.0)
        for key, label, colour, v in bars:
            w = 0 if top <= 0 else max(1.0, BAR_MAX * v / top)
            cls = "name strong" if key == "ptxjit" else "name"
            parts.append(f'<text x="{LABEL_W}" y="{y + BAR_H - 3}" class="{cls}" '
                         f'text-anchor="end">{escape(label)}</text>')
            parts.append(f'<rect x="{BAR_X}" y="{y}" width="{w:.1f}" height="{BAR_H}" '
                         f'fill="{colour}"><title>{escape(label)}: {fmt(v)} '
                         f'{escape(m["unit"])}</title></rect>')
            parts.append(f'<text x="{BAR_X + w + 5:.1f}" y="{y + BAR_H - 3}" class="value">'
                         f'{fmt(v)} {escape(m["unit"])}</text>')
            y += BAR_H + GAP
        y += GROUP_GAP
    height = y + 10
    style = ("text{font-family:Helvetica,Arial,sans-serif;fill:#222}"
             ".title{font-size:16px;font-weight:bold}.sub{font-size:12px;fill:#555}"
             ".metric{font-size:12px;font-weight:bold}.target{font-size:11px;fill:#666}"
             ".name{font-size:11px}.strong{font-weight:bold}.value{font-size:11px}")
    return "\n".join(
        [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
         f'viewBox="0 0 {WIDTH} {height}">',
         f"<style>{style}</style>",
         f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
         f'<text x="10" y="22" class="title">{escape(title)}</text>',
         f'<text x="10" y="40" class="sub">{escape(sub)}</text>'] + parts + ["</svg>", ""])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", help="bench/run.py's report (its --json output)")
    ap.add_argument("-o", "--output", help="the SVG to write (default: beside the JSON, .svg)")
    args = ap.parse_args(argv)
    with open(args.json, encoding="utf-8") as f:
        report = json.load(f)
    if not isinstance(report, dict) or not isinstance(report.get("metrics"), list):
        sys.exit(f"{args.json}: not a bench/run.py report (no 'metrics' list)")
    out = args.output or os.path.splitext(args.json)[0] + ".svg"
    with open(out, "w", encoding="utf-8") as f:
        f.write(chart(report))
    print(f"wrote {out}: {len(report['metrics'])} metrics")
    return out


if __name__ == "__main__":
    main()
