#!/usr/bin/env python3
"""Differential testing campaign: random programs run on ptxjit and on CPython (issue 19, item 4).

    .venv/bin/python scripts/difftest.py --count 100000 --seed 1 --jobs 2 --out difftest-out
    .venv/bin/python scripts/difftest.py --show 1234        # a program, its reference and its run

Programs come from tests/python/difftest (generate.py, oracle.py, run.py); seed s is the same
program everywhere. Each job is a worker subprocess running its share of the seeds; it reports
each seed before running it, so a worker that dies (a crash: SIGSEGV, abort) or goes silent for
--timeout seconds (a hang) is recorded with the seed in flight, killed and restarted after it.
The backend is PTXJIT_TARGET's (cpu by default; PTXJIT_TARGET=cuda on the GPU machine, where
--no-libm generates programs without math-library calls: libdevice is not the C library).

Every mismatch, error, crash and hang is written to --out as a reproducer (<status>-<seed>.py:
the kernel source, the inputs, the expected and the computed values, the reference source).
Rejections (a clean TypingError/UnsupportedError) are counted and their messages summarised.
The exit status is 1 when any mismatch, error, crash or hang was found.
"""
import argparse
import collections
import json
import os
import select
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAD = ("mismatch", "error", "crash", "hang", "oracle-error")


def _paths():
    for p in (os.path.join(ROOT, "tests", "python"), os.path.join(ROOT, "python")):
        if p not in sys.path:
            sys.path.insert(0, p)


def worker(seeds, ulps, no_libm):
    """Runs the given seeds, one JSON line before ("start") and after (the outcome) each."""
    _paths()
    os.environ.setdefault("PTXJIT_TARGET", "cpu")
    import warnings

    warnings.simplefilter("ignore")
    from difftest.generate import generate
    from difftest.run import check

    out = sys.stdout
    for seed in seeds:
        out.write(json.dumps({"start": seed}) + "\n")
        out.flush()
        program = generate(seed, libm=not no_libm)
        o = check(program, ulps)
        out.write(json.dumps({"seed": seed, "status": o.status, "detail": o.detail[:2000],
                              "expected": repr(o.expected), "got": repr(o.got),
                              "libm": program.uses_libm}) + "\n")
        out.flush()


def reproducer(seed, status, detail, expected="", got="", libm=True):
    _paths()
    from difftest.generate import generate

    p = generate(seed, libm)
    return (f"# difftest seed {seed} ({p.mode}): {status}\n# {detail}\n"
            f"# expected {expected}\n# got      {got}\n"
            f"# run: .venv/bin/python scripts/difftest.py --show {seed}"
            f"{'' if libm else ' --no-libm'}\n"
            f"{p.kernel_source}\n"
            f"import numpy as np\n"
            f"ia = np.array({p.ints!r}, np.int64); fa = np.array({p.floats!r}, np.float64)\n"
            f"ba = np.array({p.bools!r}, np.bool_); ca = np.array({p.complexes!r}, np.complex128)\n"
            f"oi = np.zeros(1, np.int64); of = np.zeros(1); ob = np.zeros(1, np.bool_)\n"
            f"oc = np.zeros(1, np.complex128)\n"
            f"kern[1, 1](ia, fa, ba, ca, oi, of, ob, oc)\n"
            f"print(oi[0], of[0], ob[0], oc[0])\n\n"
            f"# The reference (CPython, the rules as R.* calls of tests/python/difftest/oracle.py):\n"
            + "".join("# " + line + "\n" for line in p.reference_source.splitlines()))


class Job:
    """One worker subprocess and the seeds it still has to run."""

    def __init__(self, seeds, ulps, no_libm):
        self.seeds = seeds  # a range
        self.ulps = ulps
        self.no_libm = no_libm
        self.proc = None
        self.current = None
        self.last = time.monotonic()
        self.buf = b""
        self.start()

    def start(self):
        self.current = None
        self.buf = b""
        if not self.seeds:
            self.proc = None
            return
        args = [sys.executable, os.path.abspath(__file__), "--worker", "--ulps", str(self.ulps),
                "--seeds", f"{self.seeds.start},{self.seeds.stop},{self.seeds.step}"]
        if self.no_libm:
            args.append("--no-libm")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=ROOT)
        self.last = time.monotonic()

    def lines(self):
        data = os.read(self.proc.stdout.fileno(), 65536)
        if not data:
            return None
        self.buf += data
        *complete, self.buf = self.buf.split(b"\n")
        self.last = time.monotonic()
        return [json.loads(x) for x in complete if x.strip()]

    def restart_after(self, seed):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            self.proc.wait()
        self.seeds = range(seed + self.seeds.step, self.seeds.stop, self.seeds.step)
        self.start()


def campaign(args):
    os.makedirs(args.out, exist_ok=True)
    stop = args.seed + args.count
    jobs = [Job(range(args.seed + j, stop, args.jobs), args.ulps, args.no_libm) for j in range(args.jobs)]
    counts = collections.Counter()
    libm_bad = collections.Counter()
    rejected = collections.Counter()
    found = []
    t0 = time.monotonic()
    done = 0
    last_report = t0

    def record(seed, status, detail, expected="", got=""):
        counts[status] += 1
        if status == "rejected" and counts[status] <= 50:  # the first 50, to read
            with open(os.path.join(args.out, f"rejected-{seed}.txt"), "w") as fh:
                fh.write(detail + "\n")
        if status in BAD:
            found.append((seed, status, detail))
            with open(os.path.join(args.out, f"{status}-{seed}.py"), "w") as fh:
                fh.write(reproducer(seed, status, detail, expected, got, not args.no_libm))

    while any(j.proc for j in jobs):
        if args.duration and time.monotonic() - t0 > args.duration:
            for j in jobs:  # out of time: the seeds in flight are not counted
                if j.proc:
                    j.proc.kill()
                    j.proc.wait()
                    j.proc = None
            break
        live = {j.proc.stdout.fileno(): j for j in jobs if j.proc}
        ready, _, _ = select.select(list(live), [], [], 1.0)
        for fd in ready:
            j = live[fd]
            msgs = j.lines()
            if msgs is None:  # the worker exited
                rc = j.proc.wait()
                if j.current is not None:
                    record(j.current, "crash", f"worker exited with status {rc} while running it")
                    done += 1
                    j.restart_after(j.current)
                else:
                    j.proc = None
                continue
            for m in msgs:
                if "start" in m:
                    j.current = m["start"]
                    continue
                j.current = None
                done += 1
                st = m["status"]
                if st == "rejected":
                    rejected[m["detail"].split(":")[0] + ": " +
                             m["detail"].split("\n")[0].split(": ")[-1][:80]] += 1
                if st in ("mismatch", "error") and m["libm"]:
                    libm_bad[st] += 1
                record(m["seed"], st, m["detail"], m["expected"], m["got"])
        now = time.monotonic()
        for j in jobs:
            if j.proc and now - j.last > args.timeout:
                seed = j.current if j.current is not None else (j.seeds[0] if j.seeds else None)
                if seed is not None:
                    record(seed, "hang", f"no answer for {args.timeout} s")
                    done += 1
                j.restart_after(seed)
        if now - last_report > args.progress:
            last_report = now
            print(f"[{now - t0:7.0f} s] {done} programs, {done / (now - t0):.2f}/s: "
                  f"{dict(counts)}", flush=True)
    elapsed = time.monotonic() - t0
    summary = {"programs": done, "seconds": round(elapsed, 1),
               "per_second": round(done / elapsed, 3) if elapsed else 0,
               "counts": dict(counts), "bad_with_libm": dict(libm_bad),
               "target": os.environ.get("PTXJIT_TARGET", "cpu"),
               "seeds": [args.seed, args.seed + args.count - 1], "jobs": args.jobs,
               "rejected": dict(rejected.most_common(20)),
               "found": [{"seed": s, "status": st, "detail": d[:300]} for s, st, d in found]}
    with open(os.path.join(args.out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1)
    print(json.dumps(summary, indent=1))
    return 1 if any(counts[b] for b in BAD) else 0


def show(seed, ulps, libm):
    _paths()
    os.environ.setdefault("PTXJIT_TARGET", "cpu")
    from difftest.generate import generate
    from difftest.run import check

    p = generate(seed, libm)
    print(p.kernel_source)
    print("# reference\n" + p.reference_source)
    print("# inputs", p.ints, p.floats, p.bools, p.complexes)
    print(check(p, ulps))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1, help="the first seed")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds without an answer: a hang")
    ap.add_argument("--ulps", type=int, default=0,
                    help="float differences up to this many ULP count as 'close' (e.g. 8 on CUDA)")
    ap.add_argument("--no-libm", action="store_true",
                    help="generate programs that call no math library function (on CUDA: "
                    "libdevice differs from the C library CPython calls in the last bits)")
    ap.add_argument("--out", default="difftest-out")
    ap.add_argument("--duration", type=float, default=0,
                    help="stop after this many seconds (0: run all --count programs)")
    ap.add_argument("--progress", type=float, default=60.0, help="seconds between progress lines")
    ap.add_argument("--show", type=int, help="print and run one seed's program")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--seeds", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(range(*map(int, args.seeds.split(","))), args.ulps, args.no_libm)
        return 0
    if args.show is not None:
        show(args.show, args.ulps, not args.no_libm)
        return 0
    return campaign(args)


if __name__ == "__main__":
    sys.exit(main())
