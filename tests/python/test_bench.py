"""bench/run.py --dry-run: the benchmark suite's code paths, on the CPU backend, quickly.

Checks the structure of the report (every metric present, ptxjit measured on each, peers
either measured or listed as missing with a reason); it judges no timing.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_dry_run_covers_every_metric(tmp_path, subprocess_env):
    out = tmp_path / "bench.json"
    env = dict(subprocess_env)
    env.pop("PTXJIT_TARGET", None)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run.py"), "--dry-run",
                           "--build-dir", str(tmp_path / "build"), "--json", str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "| metric | unit | ptxjit |" in proc.stdout
    report = json.loads(out.read_text())
    assert report["dry_run"] is True
    names = [m["name"] for m in report["metrics"]]
    assert names == ["launch_empty", "launch_saxpy_args", "launch_16_arrays",
                     "launch_16_scalars", "first_compile_fresh_process", "compile_warm_saxpy",
                     "compile_warm_mandelbrot", "import", "cache_warm_first_call",
                     "saxpy_2^26_f32_kernel", "mandelbrot_4096^2_f64_256it_kernel",
                     "black_scholes_2^24_f32_kernel", "vectorize_add_f32_1000",
                     "vectorize_add_f32_1000_scalar"]
    for m in report["metrics"]:
        if m["ptxjit"] is None:
            # Only an unavailable ptxjit.vectorize may leave a figure out, and it says why.
            assert m["name"].startswith("vectorize"), m
            assert m["missing"].get("ptxjit"), m
        else:
            assert m["ptxjit"] > 0, m
        # No GPU is used in a dry run: every peer is reported missing, with a reason.
        assert not m["peers"], m
        for peer, why in m["missing"].items():
            assert why, (m["name"], peer)
        assert m["meets_target"] is None
    launch = next(m for m in report["metrics"] if m["name"] == "launch_empty")
    assert set(launch["missing"]) == {"bare", "numba"}
    kernel = next(m for m in report["metrics"] if m["name"] == "saxpy_2^26_f32_kernel")
    assert set(kernel["missing"]) == {"cuda_cpp", "numba"}
    vec = next(m for m in report["metrics"] if m["name"] == "vectorize_add_f32_1000")
    assert {"numba", "cupy", "torch"} <= set(vec["missing"])
