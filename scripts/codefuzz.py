#!/usr/bin/env python3
"""Code-object fuzzing campaign: mutated code objects of test kernels through ptxjit (issue 19,
item 3).

    PTXJIT_TARGET=cpu .venv/bin/python scripts/codefuzz.py --count 100000 --jobs 2 --out cf-out
    .venv/bin/python scripts/codefuzz.py --show 1234      # one seed's mutation and outcome
    ~/.pyenv/versions/3.13.0/bin/python scripts/codefuzz.py --replay build/tests/cpp/frontend_replay \
        --count 100000 --out cf-313                      # another Python version's bytecode

Seed s is one mutation of one corpus kernel (tests/python/codefuzz: kernels.py, mutate.py,
run.py), the same on every machine for one Python version. Each job is a worker subprocess
(python -X faulthandler) running its share of the seeds; tests/python/fuzzpool.py records a
worker that dies on a seed (a crash) or stays silent for --timeout seconds while compiling it
(a hang), then restarts it after that seed. A kernel still running after --launch-timeout
seconds is a mutated loop that never ends ("runaway"), not a finding.

The extension is built for one interpreter. With --replay, the script runs under any of
CPython 3.11-3.13 without it: the sample kernels of tests/fixtures/bytecode/samples.py are
mutated there, serialized as bytecode fixtures and built and typed by the C++ tool
frontend_replay (tests/python/codefuzz/replay.py); its crashes and hangs are findings too.

Findings: an internal compiler error, any other exception escaping ptxjit ("error"), a crash,
a hang in compiling. Each is written to --out as <status>-<seed>.txt (the mutations, the
message, the command that replays it); DIR/summary.json has the counts, the throughput and the
most frequent clean errors. The exit status is 1 when anything was found.
"""
import argparse
import collections
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FINDINGS = ("internal", "error", "crash", "hang")  # statuses that fail a campaign


def _paths():
    for p in (os.path.join(ROOT, "tests", "python"), os.path.join(ROOT, "python")):
        if p not in sys.path:
            sys.path.insert(0, p)


def worker(seeds, launch, replay=None):
    _paths()
    import fuzzpool

    out = fuzzpool.protocol_stream()

    def say(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    if replay:
        from codefuzz.replay import Replayer

        r = Replayer(replay)
        for seed in seeds:
            say({"start": seed})
            m = r.run_seed(seed)
            say({"seed": seed, "target": "kernel", **m, "detail": m["detail"][:3000]})
        r.close()
        return
    os.environ.setdefault("PTXJIT_TARGET", "cpu")
    import warnings

    warnings.simplefilter("ignore")
    from codefuzz.run import run_seed

    for seed in seeds:
        say({"start": seed})
        o = run_seed(seed, lambda name: say({"phase": name}), launch)
        say({"seed": seed, "status": o.status, "detail": o.detail[:3000], "case": o.case,
             "target": o.target, "mutations": list(o.mutations)})


def campaign(args):
    _paths()
    from fuzzpool import Pool

    os.makedirs(args.out, exist_ok=True)

    def argv(seeds):
        return [sys.executable, "-X", "faulthandler", os.path.abspath(__file__), "--worker",
                "--seeds", f"{seeds.start},{seeds.stop},{seeds.step}"] + (
                    ["--no-launch"] if args.no_launch else []) + (
                    ["--replay", args.replay] if args.replay else [])

    env = dict(os.environ)
    env.setdefault("PTXJIT_VERIFY_IR", "1")  # the IR verifier's findings are internal errors
    pool = Pool(argv, range(args.seed, args.seed + args.count), args.jobs, args.timeout,
                {"launch": args.launch_timeout}, cwd=ROOT, env=env)
    counts = collections.Counter()
    clean = collections.Counter()
    per_case = collections.Counter()
    found = []
    t0 = last = time.monotonic()
    done = 0

    def record(seed, status, detail, extra=""):
        found.append({"seed": seed, "status": status, "detail": detail[:500]})
        with open(os.path.join(args.out, f"{status}-{seed}.txt"), "w") as fh:
            fh.write(f"# codefuzz seed {seed}: {status} (Python {sys.version.split()[0]})\n"
                     f"# replay: .venv/bin/python scripts/codefuzz.py --show {seed}\n"
                     f"{extra}{detail}\n")

    for ev in pool.events(args.duration):
        done += 1
        if ev[0] == "result":
            m = ev[1]
            st = m["status"]
            counts[st] += 1
            per_case[m["case"]] += 1
            if st == "clean":
                clean[_message_kind(m["detail"])] += 1
            if st in FINDINGS:
                extra = (f"# case {m['case']}, mutated {m['target']}\n"
                         + "".join(f"# {w}\n" for w in m["mutations"]))
                record(m["seed"], st, m["detail"], extra)
        else:
            kind, seed, phase, detail = ev
            if kind == "hang" and phase == "launch":
                kind = "runaway"  # the mutated kernel loops forever: not the compiler's
            counts[kind] += 1
            if kind in FINDINGS:
                record(seed, kind, f"in phase {phase}: {detail}")
        now = time.monotonic()
        if now - last > args.progress:
            last = now
            print(f"[{now - t0:7.0f} s] {done} executions, {done / (now - t0):.1f}/s: "
                  f"{dict(counts)}", flush=True)
    elapsed = time.monotonic() - t0
    summary = {"executions": done, "seconds": round(elapsed, 1),
               "per_second": round(done / elapsed, 2) if elapsed else 0,
               "python": sys.version.split()[0],
               "target": os.environ.get("PTXJIT_TARGET", "cpu"),
               "seeds": [args.seed, args.seed + args.count - 1], "jobs": args.jobs,
               "launch": not args.no_launch and not args.replay,
               "via": "frontend_replay" if args.replay else "extension",
               "counts": dict(counts), "clean_errors": dict(clean.most_common(40)),
               "cases": len(per_case), "found": found}
    with open(os.path.join(args.out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k != "clean_errors"}, indent=1))
    return 1 if any(counts[f] for f in FINDINGS) else 0


def _message_kind(detail):
    """A clean error's message with the specifics (offsets, names, numbers) left out."""
    import re

    first = detail.split("\n")[0]
    first = re.sub(r"\(.*?\)", "(...)", first)
    first = re.sub(r"'[^']*'", "'…'", first)
    first = re.sub(r"\d+", "N", first)
    return first[:120]


def show(seed):
    _paths()
    os.environ.setdefault("PTXJIT_TARGET", "cpu")
    from codefuzz.run import build, run_seed

    case, target, kfunc, what = build(seed)
    print(f"case {case.name}, mutated {target}:")
    for w in what:
        print("  " + w)
    import dis

    code = kfunc.__code__ if target == "kernel" else kfunc.__globals__[target].py_func.__code__
    try:
        dis.dis(code)
    except Exception as e:  # noqa: BLE001 - dis cannot always read malformed code
        print(f"(dis failed: {type(e).__name__}: {e})")
    o = run_seed(seed, lambda name: print(f"-- {name}", flush=True))
    print(f"{o.status}: {o.detail}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1, help="the first seed")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds without an answer while compiling: a hang")
    ap.add_argument("--launch-timeout", type=float, default=5.0,
                    help="seconds a mutated kernel may run before it counts as a runaway loop")
    ap.add_argument("--no-launch", action="store_true",
                    help="compile the mutated kernels without launching them")
    ap.add_argument("--replay", metavar="FRONTEND_REPLAY",
                    help="build and type the mutated sample kernels with this frontend_replay "
                    "tool (build/tests/cpp/frontend_replay) instead of the extension: for "
                    "interpreters the extension is not built for (run the script with them)")
    ap.add_argument("--out", default="codefuzz-out")
    ap.add_argument("--duration", type=float, default=0,
                    help="stop after this many seconds (0: run all --count seeds)")
    ap.add_argument("--progress", type=float, default=60.0, help="seconds between progress lines")
    ap.add_argument("--show", type=int, help="print one seed's mutation and run it here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--seeds", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(range(*map(int, args.seeds.split(","))), not args.no_launch, args.replay)
        return 0
    if args.show is not None:
        show(args.show)
        return 0
    return campaign(args)


if __name__ == "__main__":
    sys.exit(main())
