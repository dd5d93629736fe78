"""The multi-GPU figures: several GPUs driven from one process, each measured in the same run.

    python bench/multi_device.py [--json out.json]    # on a machine with two or more GPUs
    python bench/multi_device.py --dry-run            # anywhere: tiny sizes, CPU backend

1. launch: microseconds per launch of an empty kernel on device 0 and on the last device, from
   one process that has used both (10,000 launches then a synchronization per loop; rounds
   interleaved, the order reversed every other round). The ratio (last / 0, the median of the
   per-round ratios) is the extra launch cost of a device other than the first.
2. haversine mesh: examples/multi_gpu.py's run() (a band of rows per device, one thread each,
   the bands copied to one host array): device 0 alone against every device.
3. n-body: 65,536 and 262,144 bodies, the suite's n-body kernel (bench/workloads.py's NBODY, tiles of 256
   bodies in shared memory) with the bodies whose accelerations a launch computes given as a band
   of rows; device 0 computes all rows against every device a band each (the positions copied
   to every device once, the launches issued from one thread, then every device synchronized).
   65,536 bodies are 256 blocks of 256 threads: about two per SM of one H100/H200, one per SM
   when split in two, so the split also halves each SM's occupancy; 262,144 bodies keep both
   GPUs full.

Figures 2 and 3 are medians of rounds interleaved with their one-device twin; the speed-up is
the median of per-round ratios. Results are checked against NumPy. With one device the
comparisons still run (device 0 against itself) and the report says how many devices it saw.
"""
import argparse
import json
import os
import platform
import re
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, HERE)

import workloads  # noqa: E402
from run import interleave_rounds, timed_loop, warm_up  # noqa: E402

FULL = dict(launch_iters=10000, launch_rounds=15, mesh=(8000, 8000), mesh_rounds=7,
            bodies=(65536, 262144), nbody_rounds=9, nbody_inner=3)
DRY = dict(launch_iters=20, launch_rounds=2, mesh=(40, 30), mesh_rounds=2, bodies=(512, 1024),
           nbody_rounds=2, nbody_inner=1)

# NBODY's kernel with the bodies it computes (`mine`, a band of `pos`'s rows) apart from the
# bodies it sums over (`pos`, all of them), made from NBODY's own source, so that the split
# measures the suite's kernel, not another one.
NBODY_BAND = re.sub(r"pos\[i, ([012])\]", r"mine[i, \1]",
                    workloads.NBODY.replace("def nbody(pos, acc):",
                                            "def nbody_band(mine, pos, acc):"))
assert NBODY_BAND.count("mine[i, ") == 3 and "def nbody_band(" in NBODY_BAND


def summary(figures, a, b):
    """Medians of `a` and `b`'s figures, and the median of per-round ratios a / b."""
    ratios = [x / y for x, y in zip(figures[a], figures[b]) if y > 0]
    return {a: statistics.median(figures[a]), b: statistics.median(figures[b]),
            "ratio": statistics.median(ratios) if ratios else None,
            "rounds": {a: figures[a], b: figures[b]}}


def launch_figures(cuda, cfg):
    """Per-launch µs of an empty kernel on device 0 and on the last device, interleaved."""
    empty = workloads.build(workloads.EMPTY, cuda, "empty")
    last = len(cuda.gpus) - 1
    kernel = empty[1, 32]

    def on(dev):
        def run():
            with cuda.gpus[dev]:
                return timed_loop(kernel, (), cfg["launch_iters"], cuda.synchronize)
        return run

    for dev in (0, last):
        with cuda.gpus[dev]:
            warm_up(kernel, (), cuda.synchronize)  # loads the kernel on the device
    runs = {"device_0_us": on(0), "last_device_us": on(last)}
    for run in runs.values():
        run()
    figures, _ = interleave_rounds(runs, cfg["launch_rounds"])
    out = summary(figures, "last_device_us", "device_0_us")
    out["last_device"] = last
    return out


def mesh_figures(cuda, cfg):
    """ms of examples/multi_gpu.py's mesh on device 0 alone and on every device."""
    import multi_gpu

    ny, nx = cfg["mesh"]
    devices = list(range(len(cuda.gpus)))
    expected = multi_gpu.reference(ny, nx)
    for devs in (devices, [0]):  # compiles, and loads the kernels on every device
        np.testing.assert_allclose(multi_gpu.run(ny, nx, devs), expected, rtol=1e-9, atol=1e-9)

    def timed(devs):
        def run():
            t0 = time.perf_counter()
            multi_gpu.run(ny, nx, devs)
            return (time.perf_counter() - t0) * 1e3
        return run

    figures, _ = interleave_rounds({"one_device_ms": timed([0]),
                                    "every_device_ms": timed(devices)}, cfg["mesh_rounds"])
    out = summary(figures, "one_device_ms", "every_device_ms")
    out["speed_up"] = out.pop("ratio")
    out["mesh"] = [ny, nx]
    return out


def nbody_figures(cuda, cfg, n):
    """ms per n-body step of n bodies on device 0 alone and split by rows over every device."""
    ns = {"cuda": cuda, "math": __import__("math"), "np": np}
    exec(NBODY_BAND, ns)
    kernel = ns["nbody_band"]
    pos = workloads.nbody_input(n)
    count = len(cuda.gpus)
    per_device = []  # (device, positions, band of them, accelerations of the band)
    bounds = np.linspace(0, n // 256, count + 1).astype(int) * 256  # whole tiles per band
    for dev in range(count):
        with cuda.gpus[dev]:
            dpos = cuda.to_device(pos)
            lo, hi = int(bounds[dev]), int(bounds[dev + 1])
            per_device.append((dev, dpos, dpos[lo:hi], cuda.device_array((hi - lo, 3),
                                                                          np.float32)))
    whole = (0, per_device[0][1], per_device[0][1], cuda.device_array((n, 3), np.float32))

    def step(parts):
        for dev, dpos, mine, acc in parts:
            if mine.shape[0]:
                with cuda.gpus[dev]:
                    kernel[mine.shape[0] // 256, 256](mine, dpos, acc)
        for dev, *_ in parts:
            with cuda.gpus[dev]:
                cuda.synchronize()

    step([whole])
    step(per_device)
    rows = np.r_[0:min(n, 32), n - min(n, 32):n]
    want = workloads.nbody_reference(pos, rows)
    split = np.concatenate([acc.copy_to_host() for *_, acc in per_device])
    for got in (whole[3].copy_to_host(), split):
        np.testing.assert_allclose(got[rows], want, rtol=2e-3, atol=2e-3 * np.abs(want).max())

    def timed(parts):
        def run():
            t0 = time.perf_counter()
            for _ in range(cfg["nbody_inner"]):
                step(parts)
            return (time.perf_counter() - t0) / cfg["nbody_inner"] * 1e3
        return run

    figures, _ = interleave_rounds({"one_device_ms": timed([whole]),
                                    "every_device_ms": timed(per_device)}, cfg["nbody_rounds"])
    out = summary(figures, "one_device_ms", "every_device_ms")
    out["speed_up"] = out.pop("ratio")
    out["bodies"] = n
    return out


def markdown(report):
    lines = [f"devices: {report['devices']} ({', '.join(report['device_names'])}); "
             f"backend {report['backend']}{' (dry run: figures mean nothing)' if report['dry_run'] else ''}",
             "", "| figure | device 0 | other | ratio |", "| --- | --- | --- | --- |"]
    la = report["launch"]
    lines.append(f"| launch, empty kernel (µs) | {la['device_0_us']:.2f} | "
                 f"device {la['last_device']}: {la['last_device_us']:.2f} | {la['ratio']:.3f} |")
    rows = [(report["mesh"], f"haversine mesh {report['mesh']['mesh']} (ms)")]
    rows += [(f, f"n-body {f['bodies']} bodies, one step (ms)") for f in report["nbody"]]
    for f, what in rows:
        lines.append(f"| {what} | {f['one_device_ms']:.2f} | all {report['devices']}: "
                     f"{f['every_device_ms']:.2f} | speed-up {f['speed_up']:.2f}x |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the report as JSON here")
    ap.add_argument("--dry-run", action="store_true",
                    help="tiny sizes on the CPU backend: checks the code paths, not the speed")
    args = ap.parse_args()
    if args.dry_run:
        os.environ["PTXJIT_TARGET"] = "cpu"
    from ptxjit import cuda

    cfg = DRY if args.dry_run else FULL
    report = {"date": time.strftime("%Y-%m-%dT%H:%M:%S"), "host": platform.node(),
              "dry_run": args.dry_run, "backend": cuda.current_target(),
              "devices": len(cuda.gpus), "device_names": [g.name for g in cuda.gpus]}
    report["launch"] = launch_figures(cuda, cfg)
    report["mesh"] = mesh_figures(cuda, cfg)
    report["nbody"] = [nbody_figures(cuda, cfg, n) for n in cfg["bodies"]]
    print(markdown(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
