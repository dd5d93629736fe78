"""A/B of two ptxjit builds on the GPU machine: bench/run.py's launch, vectorize, warm-compile,
ufunc-at-scale and cached-first-call figures, timed in alternating fresh processes, one build
then the other, so that the machine's drift falls on both alike.

    python scripts/ab.py ROOT_A ROOT_B [--rounds 6] [--sets launch,compile] [--cpu N]
                         [--json out.json] [--dry-run]

Each ROOT is a checkout built by ./setup.sh (its .venv imports its ptxjit). The timing code is
this checkout's (bench/run.py's launch_loop, worker_ufunc_scale and cache scripts over
bench/workloads.py's kernels), so both builds are measured the same way. --sets picks what a
round measures (default launch,compile; `all` for every set):
  launch   the four launch loops' three bench/run.py cases without the bare peer (empty, 16
           arrays, 16 scalars) and the vectorize add on 1,000 float32, with an array and a scalar
  compile  warm compiles of saxpy and Mandelbrot (a fresh function object each, median of 15)
  ufunc    bench/run.py's ufuncs at scale: the add of 2^26 float32, the haversine on four 1M
           float64 host arrays (host copies included), add.reduce, the rowdot gufunc and the
           to_device + copy_to_host round trip of 2^24 float32
  cache    the cache=True first call of a kernel and of a ufunc in fresh processes whose disk
           cache (one per build, filled before the rounds) holds them
Every figure is in µs. Prints per metric the median of the rounds' figures for A and B and their
ratio B/A, the median of the per-round ratios (each round times A and B back to back), and
writes every figure as JSON. --cpu N pins every worker to CPU N: launch timings of unpinned
processes are bimodal (a process lands on a fast or a slow core and stays there), which makes
the medians of a few rounds differ by 10% between two runs of the same builds. --dry-run runs
every set on the CPU backend with tiny sizes (bench/run.py's DRY), to check the plumbing; its
figures mean nothing.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(HERE), "bench")
SETS = ("launch", "compile", "ufunc", "cache")

# argv: the bench directory, then a JSON object {"sets": [...], "dry": bool}. Prints one JSON
# object (metric -> µs) as its last line.
WORKER = r'''
import sys
sys.path.insert(0, sys.argv[1])
import json
import time
import numpy as np
import run as bench
import workloads as w
from ptxjit import cuda, vectorize

opts = json.loads(sys.argv[2])
sizes = bench.DRY if opts["dry"] else bench.FULL
it, reps, sync = sizes["launch_iters"], sizes["launch_reps"], cuda.synchronize
res = {}
if "launch" in opts["sets"]:
    empty = w.build(w.EMPTY, cuda, "empty")
    res["launch_empty"] = bench.launch_loop(empty[1, 1], (), it, reps, sync)
    arrays = w.build(w.many_args_source("arrays"), cuda, "many")
    arrs = [cuda.to_device(np.full(256, i + 1, np.float32)) for i in range(16)]
    res["launch_16_arrays"] = bench.launch_loop(arrays[1, 1], arrs, it, reps, sync)
    scalars = w.build(w.many_args_source("scalars"), cuda, "many")
    res["launch_16_scalars"] = bench.launch_loop(scalars[1, 1],
                                                 [float(i) + 0.5 for i in range(16)], it, reps,
                                                 sync)

    @vectorize(["float32(float32, float32)"], target="cuda")
    def add(a, b):
        return a + b

    a = cuda.to_device(np.linspace(1.0, 2.0, 1000, dtype=np.float32))
    b = cuda.to_device(np.linspace(-1.0, 3.0, 1000, dtype=np.float32))
    vit = sizes["vec_iters"]
    res["vectorize_add_f32_1000"] = bench.launch_loop(lambda: add(a, b), (), vit, reps, sync)
    res["vectorize_add_f32_1000_scalar"] = bench.launch_loop(lambda: add(a, 2.0), (), vit, reps,
                                                             sync)
if "compile" in opts["sets"]:
    # warm compiles as bench/run.py times them (a fresh function object each time)
    creps = 3 if opts["dry"] else 15
    cuda.jit(w.SAXPY_SIG)(w.build(w.SAXPY, cuda, "saxpy").py_func)

    def compile_us(source, name, sig):
        ts = []
        for _ in range(creps):
            fn = w.build(source, cuda, name).py_func
            t0 = time.perf_counter()
            cuda.jit(sig)(fn)
            ts.append((time.perf_counter() - t0) * 1e6)
        return sorted(ts)[len(ts) // 2]

    res["compile_warm_saxpy"] = compile_us(w.SAXPY, "saxpy", w.SAXPY_SIG)
    res["compile_warm_mandelbrot"] = compile_us(w.MANDELBROT, "mandel_kernel", w.MANDELBROT_SIG)
if "ufunc" in opts["sets"]:
    for name, ms in bench.worker_ufunc_scale("ptxjit", sizes).items():
        res[name] = ms * 1e3
print(json.dumps(res))
'''


def python_of(root):
    """The interpreter of checkout `root` (its .venv, made by ./setup.sh)."""
    py = os.path.join(root, ".venv", "bin", "python")
    if not os.path.exists(py):
        sys.exit(f"ab.py: {py} is missing: build {root} with ./setup.sh first")
    return py


def worker_env(dry):
    env = dict(os.environ)
    if dry:
        env["PTXJIT_TARGET"] = "cpu"
    else:
        env.setdefault("PTXJIT_TARGET", "cuda")
    return env


def run_json(cmd, env, cpu=None, cwd=None):
    """Runs `cmd`; the JSON object its stdout's last line holds. Exits naming the command and
    the last line of its stderr if it fails."""
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600,
                         preexec_fn=pin, cwd=cwd)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        sys.exit(f"ab.py: {cmd[0]} failed: {last}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_module():
    """bench/run.py, imported once (it needs NumPy, as the workers do)."""
    if BENCH not in sys.path:
        sys.path.insert(0, BENCH)
    import run

    return run


class CacheRuns:
    """The cache set for one build: bench/run.py's CACHE_SCRIPT and UFUNC_CACHE_SCRIPT in a
    directory of their own with a disk cache of its own, filled by one run of each, then timed
    in fresh processes. Each timed run must hit the cache (the kernel's hit count; the ufunc's
    count of the cache's files, unchanged since the filling)."""

    def __init__(self, root, env, cpu, workdir):
        bench = bench_module()
        self.python, self.cpu = python_of(root), cpu
        self.dir = workdir
        self.env = dict(env, PTXJIT_CACHE_DIR=os.path.join(workdir, "cache"))
        prelude = bench.PRELUDE["ptxjit"]
        self.scripts = {
            "cache_warm_first_call": bench.CACHE_SCRIPT.format(prelude=prelude),
            "cache_warm_first_ufunc_call": bench.UFUNC_CACHE_SCRIPT.format(
                prelude=prelude, vectorize=bench.VECTORIZE_IMPORT["ptxjit"]),
        }
        for name, text in self.scripts.items():
            with open(os.path.join(workdir, name + ".py"), "w") as f:
                f.write(text)
        self._run("cache_warm_first_call")  # fills the cache with the kernel, then the ufunc
        self.files = self._run("cache_warm_first_ufunc_call")["files"]  # the cache's files
        if not self.files:
            sys.exit(f"ab.py: the cached ufunc left no file in {self.env['PTXJIT_CACHE_DIR']}")

    def _run(self, name):
        return run_json([self.python, os.path.join(self.dir, name + ".py")], self.env, self.cpu,
                        cwd=self.dir)

    def measure(self):
        kernel = self._run("cache_warm_first_call")
        if kernel["hits"] == 0:
            sys.exit(f"ab.py: {self.python}: the cached kernel missed its warm cache")
        ufunc = self._run("cache_warm_first_ufunc_call")
        if ufunc["files"] != self.files:
            sys.exit(f"ab.py: {self.python}: the cached ufunc missed its warm cache "
                     f"(cache files {self.files}, then {ufunc['files']})")
        return {"cache_warm_first_call": kernel["first_call_ms"] * 1e3,
                "cache_warm_first_ufunc_call": ufunc["first_call_ms"] * 1e3}


def parse_sets(text):
    sets = list(SETS) if text == "all" else [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in sets if s not in SETS]
    if unknown or not sets:
        raise argparse.ArgumentTypeError(
            f"unknown set(s) {', '.join(unknown) or '(none)'}: choose from {', '.join(SETS)} "
            "or all")
    return sets


def table(runs, header):
    lines = [header, "", "| metric | A | B | B/A | median of round B/A | A rounds | B rounds |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for m in runs["a"][0]:
        fa = [x[m] for x in runs["a"]]
        fb = [x[m] for x in runs["b"]]
        ma, mb = statistics.median(fa), statistics.median(fb)
        paired = statistics.median(b / a for a, b in zip(fa, fb))
        lines.append(f"| {m} | {ma:.3g} | {mb:.3g} | {mb / ma:.3f} | {paired:.3f} | "
                     f"{' '.join(f'{v:.3g}' for v in fa)} | {' '.join(f'{v:.3g}' for v in fb)} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--sets", type=parse_sets, default=["launch", "compile"],
                    help=f"comma-separated, of {', '.join(SETS)}; or all")
    ap.add_argument("--cpu", type=int, help="pin the workers to this CPU")
    ap.add_argument("--json")
    ap.add_argument("--dry-run", action="store_true",
                    help="the CPU backend and tiny sizes: checks the plumbing only")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    roots = {"a": os.path.abspath(args.a), "b": os.path.abspath(args.b)}
    env = worker_env(args.dry_run)
    worker_sets = [s for s in args.sets if s != "cache"]
    opts = json.dumps({"sets": worker_sets, "dry": args.dry_run})
    workdir = tempfile.mkdtemp(prefix="ab-")
    try:
        cache = {}
        if "cache" in args.sets:
            for side, root in roots.items():
                os.makedirs(os.path.join(workdir, side))
                cache[side] = CacheRuns(root, env, args.cpu, os.path.join(workdir, side))
        runs = {"a": [], "b": []}
        for r in range(args.rounds):
            for side in (("a", "b") if r % 2 == 0 else ("b", "a")):
                figs = {}
                if worker_sets:
                    figs.update(run_json([python_of(roots[side]), "-c", WORKER, BENCH, opts], env,
                                         args.cpu))
                if side in cache:
                    figs.update(cache[side].measure())
                runs[side].append(figs)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    pinned = f", pinned to CPU {args.cpu}" if args.cpu is not None else ""
    dry = "; DRY RUN (CPU backend, tiny sizes): the figures mean nothing" if args.dry_run else ""
    print(table(runs, f"A = {args.a}\nB = {args.b}\nsets: {', '.join(args.sets)}\n"
                      f"{args.rounds} rounds, alternating{pinned}; medians (µs){dry}"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"sets": args.sets, "dry_run": args.dry_run, "rounds": runs}, f, indent=1)


if __name__ == "__main__":
    main()
