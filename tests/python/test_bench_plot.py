"""bench/plot.py: bench/run.py's JSON report drawn as an SVG bar chart."""
import importlib.util
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SVG = "{http://www.w3.org/2000/svg}"


def load_plot():
    spec = importlib.util.spec_from_file_location("bench_plot",
                                                  os.path.join(ROOT, "bench", "plot.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def report(**over):
    r = {
        "date": "2026-11-25T19:18:57", "dry_run": False,
        "machine": {"gpu": "NVIDIA H100 80GB HBM3, 580.159.04, 9.0", "cpu": "x86_64"},
        "metrics": [
            {"name": "launch_empty", "unit": "µs", "target": "≤ 1.2× bare cuLaunchKernel",
             "ptxjit": 3.88, "peers": {"numba": 17.5, "bare": 3.44}, "meets_target": True},
            {"name": "first_compile_fresh_process", "unit": "ms", "target": "≤ 150 ms",
             "ptxjit": 131.0, "peers": {"bare": 234.0, "numba": 886.0}, "meets_target": True},
            {"name": "vectorize_add_f32_1000", "unit": "µs", "target": "≤ 8 µs",
             "ptxjit": 4.55, "peers": {"numba": 145.0, "cupy": 12.7, "torch": 9.12},
             "meets_target": True},
            {"name": "saxpy_2^26_f32_kernel", "unit": "ms", "target": "≤ 1.03× CUDA C++",
             "ptxjit": None, "peers": {"cuda_cpp": 0.292}, "meets_target": None},
            {"name": "import", "unit": "ms", "target": "≤ 80 ms", "ptxjit": 95.0, "peers": {},
             "meets_target": False},
        ],
    }
    r.update(over)
    return r


def bars(svg_text):
    """(label, width, tooltip) of each bar, in drawing order."""
    root = ET.fromstring(svg_text)
    out = []
    for rect in root.iter(SVG + "rect"):
        title = rect.find(SVG + "title")
        if title is not None:
            out.append((title.text.split(":")[0], float(rect.get("width")), title.text))
    return out


def test_chart_has_one_bar_per_measured_figure_scaled_per_metric():
    plot = load_plot()
    svg = plot.chart(report())
    b = bars(svg)
    assert [x[0] for x in b] == [
        "ptxjit", "bare cuLaunchKernel", "numba-cuda",                 # launch_empty
        "ptxjit", "CUDA start-up (bare C++)", "numba-cuda",            # first compile
        "ptxjit", "numba-cuda", "CuPy", "PyTorch",                     # vectorize
        "CUDA C++ (nvcc)",                                             # saxpy, ptxjit missing
        "ptxjit",                                                      # import, alone
    ]
    # Each metric's largest figure gets the full length; the others are in proportion.
    full = plot.BAR_MAX
    assert b[2][1] == pytest.approx(full) and b[0][1] == pytest.approx(full * 3.88 / 17.5, abs=0.1)
    assert b[5][1] == pytest.approx(full) and b[3][1] == pytest.approx(full * 131 / 886, abs=0.1)
    assert b[10][1] == pytest.approx(full) and b[11][1] == pytest.approx(full)
    assert "3.88 µs" in b[0][2] and "886 ms" in b[5][2]
    assert "import (ms) — target missed" in svg
    assert "NVIDIA H100" in svg and "DRY RUN" not in svg


def test_dry_run_is_said_and_missing_metrics_are_drawn_as_such():
    plot = load_plot()
    r = report(dry_run=True)
    r["metrics"].append({"name": "cache_warm_first_call", "unit": "ms", "ptxjit": None,
                         "peers": {}, "meets_target": None})
    svg = plot.chart(r)
    assert "DRY RUN" in svg and "not measured" in svg
    ET.fromstring(svg)


def test_command_line_writes_the_svg(tmp_path):
    src = tmp_path / "bench.json"
    src.write_text(json.dumps(report()), encoding="utf-8")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "plot.py"), str(src)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert len(bars((tmp_path / "bench.svg").read_text(encoding="utf-8"))) == 12
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "plot.py"), str(bad)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "not a bench/run.py report" in out.stderr


def test_the_committed_chart_is_the_plot_of_a_report():
    # docs/images/bench.svg is bench/plot.py's output (regenerated from the GPU run's JSON).
    with open(os.path.join(ROOT, "docs", "images", "bench.svg"), encoding="utf-8") as f:
        svg = f.read()
    assert len(bars(svg)) >= 15 and "ptxjit vs numba-cuda" in svg
