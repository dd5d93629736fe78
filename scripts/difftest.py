#!/usr/bin/env python3
"""Differential testing campaign: random programs run on ptxjit and on CPython (issue 19, item 4).

    .venv/bin/python scripts/difftest.py --count 100000 --seed 1 --jobs 2 --out difftest-out
    .venv/bin/python scripts/difftest.py --show 1234        # a program, its reference and its run

Programs come from tests/python/difftest (generate.py and typed.py, oracle.py, run.py); seed s
of a --family is the same program everywhere. Each job is a worker subprocess running its share
of the seeds (tests/python/fuzzpool.py): a worker that dies on a seed (a crash: SIGSEGV, abort)
or goes silent for --timeout seconds (a hang) is recorded with that seed, killed and restarted
after it.
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
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAD = ("mismatch", "error", "crash", "hang", "oracle-error")


def _paths():
    for p in (os.path.join(ROOT, "tests", "python"), os.path.join(ROOT, "python")):
        if p not in sys.path:
            sys.path.insert(0, p)


def worker(seeds, ulps, no_libm, family):
    """Runs the given seeds, one JSON line before ("start") and after (the outcome) each."""
    _paths()
    os.environ.setdefault("PTXJIT_TARGET", "cpu")
    import warnings

    warnings.simplefilter("ignore")
    from difftest.generate import program as make
    from difftest.run import check

    import fuzzpool

    out = fuzzpool.protocol_stream()
    for seed in seeds:
        out.write(json.dumps({"start": seed}) + "\n")
        out.flush()
        program = make(seed, not no_libm, family)
        o = check(program, ulps)
        out.write(json.dumps({"seed": seed, "status": o.status, "detail": o.detail[:2000],
                              "expected": repr(o.expected), "got": repr(o.got),
                              "libm": program.uses_libm,
                              "family": "typed" if hasattr(program, "types") else "classic"})
                  + "\n")
        out.flush()


def _value(v):
    """Python source for an input value (nan and ±inf included)."""
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return f"float('{v}')"
    return repr(v)


def reproducer(seed, status, detail, expected="", got="", libm=True, family="mixed"):
    _paths()
    from difftest.generate import program as make

    p = make(seed, libm, family)
    head = (f"# difftest seed {seed} ({p.mode}): {status}\n# {detail}\n"
            f"# expected {expected}\n# got      {got}\n"
            f"# run: .venv/bin/python scripts/difftest.py --show {seed} --family {family}"
            f"{'' if libm else ' --no-libm'}\n"
            f"{p.kernel_source}\n"
            f"import numpy as np\n")
    if hasattr(p, "types"):
        n = len(p.types)
        dt = [("np.bool_" if t == "bool" else f"np.{t}") for t in p.types]
        run = ("".join(f"a{i} = np.array([{_value(v)}], {d}); o{i} = np.zeros(1, {d})\n"
                       for i, (v, d) in enumerate(zip(p.inputs, dt))) +
               f"kern[1, 1]({', '.join(f'a{i}' for i in range(n))}, "
               f"{', '.join(f'o{i}' for i in range(n))})\n"
               f"print({', '.join(f'o{i}[0]' for i in range(n))})\n\n")
    else:
        run = (f"ia = np.array({p.ints!r}, np.int64); fa = np.array({p.floats!r}, np.float64)\n"
               f"ba = np.array({p.bools!r}, np.bool_); ca = np.array({p.complexes!r}, np.complex128)\n"
               f"oi = np.zeros(1, np.int64); of = np.zeros(1); ob = np.zeros(1, np.bool_)\n"
               f"oc = np.zeros(1, np.complex128)\n"
               f"kern[1, 1](ia, fa, ba, ca, oi, of, ob, oc)\n"
               f"print(oi[0], of[0], ob[0], oc[0])\n\n")
    return (head + run +
            "# The reference (CPython, the rules as R.* calls of tests/python/difftest/oracle.py):\n"
            + "".join("# " + line + "\n" for line in p.reference_source.splitlines()))


def campaign(args):
    _paths()
    from fuzzpool import Pool

    os.makedirs(args.out, exist_ok=True)

    def argv(seeds):
        a = [sys.executable, "-X", "faulthandler", os.path.abspath(__file__), "--worker",
             "--ulps", str(args.ulps), "--family", args.family,
             "--seeds", f"{seeds.start},{seeds.stop},{seeds.step}"]
        return a + (["--no-libm"] if args.no_libm else [])

    pool = Pool(argv, range(args.seed, args.seed + args.count), args.jobs, args.timeout,
                cwd=ROOT)
    counts = collections.Counter()
    per_family = collections.Counter()
    libm_bad = collections.Counter()
    rejected = collections.Counter()
    found = []
    t0 = last_report = time.monotonic()
    done = 0

    def record(seed, status, detail, expected="", got=""):
        counts[status] += 1
        if status == "rejected" and counts[status] <= 50:  # the first 50, to read
            with open(os.path.join(args.out, f"rejected-{seed}.txt"), "w") as fh:
                fh.write(detail + "\n")
        if status in BAD:
            found.append((seed, status, detail))
            with open(os.path.join(args.out, f"{status}-{seed}.py"), "w") as fh:
                fh.write(reproducer(seed, status, detail, expected, got, not args.no_libm,
                                    args.family))

    for ev in pool.events(args.duration):
        done += 1
        if ev[0] == "result":
            m = ev[1]
            st = m["status"]
            per_family[f"{m.get('family', 'classic')}:{st}"] += 1
            if st == "rejected":
                rejected[m["detail"].split(":")[0] + ": " +
                         m["detail"].split("\n")[0].split(": ")[-1][:80]] += 1
            if st in ("mismatch", "error") and m["libm"]:
                libm_bad[st] += 1
            record(m["seed"], st, m["detail"], m["expected"], m["got"])
        else:
            kind, seed, phase, detail = ev
            record(seed, kind, detail)
        now = time.monotonic()
        if now - last_report > args.progress:
            last_report = now
            print(f"[{now - t0:7.0f} s] {done} programs, {done / (now - t0):.2f}/s: "
                  f"{dict(counts)}", flush=True)
    elapsed = time.monotonic() - t0
    summary = {"programs": done, "seconds": round(elapsed, 1),
               "per_second": round(done / elapsed, 3) if elapsed else 0,
               "counts": dict(counts), "by_family": dict(per_family),
               "bad_with_libm": dict(libm_bad),
               "target": os.environ.get("PTXJIT_TARGET", "cpu"), "family": args.family,
               "seeds": [args.seed, args.seed + args.count - 1], "jobs": args.jobs,
               "rejected": dict(rejected.most_common(20)),
               "found": [{"seed": s, "status": st, "detail": d[:300]} for s, st, d in found]}
    with open(os.path.join(args.out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1)
    print(json.dumps(summary, indent=1))
    return 1 if any(counts[b] for b in BAD) else 0


def show(seed, ulps, libm, family):
    _paths()
    os.environ.setdefault("PTXJIT_TARGET", "cpu")
    from difftest.generate import program as make
    from difftest.run import check

    p = make(seed, libm, family)
    print(p.kernel_source)
    print("# reference\n" + p.reference_source)
    if hasattr(p, "types"):
        print("# inputs", list(zip(p.types, p.inputs)), "fastmath" if p.fastmath else "")
    else:
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
    ap.add_argument("--family", choices=("classic", "typed", "mixed"), default="mixed",
                    help="classic: Python's int/float/bool/complex; typed: NumPy's scalar types, "
                    "NEP 50 literals, float32, fastmath; mixed: odd seeds typed")
    ap.add_argument("--out", default="difftest-out")
    ap.add_argument("--duration", type=float, default=0,
                    help="stop after this many seconds (0: run all --count programs)")
    ap.add_argument("--progress", type=float, default=60.0, help="seconds between progress lines")
    ap.add_argument("--show", type=int, help="print and run one seed's program")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--seeds", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(range(*map(int, args.seeds.split(","))), args.ulps, args.no_libm, args.family)
        return 0
    if args.show is not None:
        show(args.show, args.ulps, not args.no_libm, args.family)
        return 0
    return campaign(args)


if __name__ == "__main__":
    sys.exit(main())
