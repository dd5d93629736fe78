"""Worker subprocesses for the long fuzzing campaigns (scripts/difftest.py, scripts/codefuzz.py).

A campaign runs its seeds in `jobs` worker processes, each given a range of seeds. A worker
writes one JSON line per event on its stdout:

    {"start": SEED}                 before running a seed
    {"phase": "launch"}             optionally, when the seed enters another phase
    {"seed": SEED, ...}             the seed's result (any other keys)

The pool reads them; a worker that exits while a seed is in flight has crashed on it (a
SIGSEGV, an abort), and one that stays silent longer than the phase's timeout hangs on it.
Either way the seed is reported with its phase and the tail of the worker's stderr (where
`python -X faulthandler` writes the stack), the worker is killed and a new one starts after
that seed, so that one bad seed costs one seed.
"""
import json
import os
import select
import subprocess
import sys
import tempfile
import time


def protocol_stream():
    """For a worker: the stream its JSON lines go to, the process's original stdout kept on a
    descriptor of its own. File descriptor 1 (and sys.stdout) then write to stderr, so that what
    the code under test prints (a kernel's print(), the C library's output) goes to the log the
    pool keeps instead of breaking the lines the pool parses."""
    fd = os.dup(1)
    sys.stdout.flush()
    os.dup2(2, 1)
    return os.fdopen(fd, "w", buffering=1)


class _Job:
    def __init__(self, pool, seeds):
        self.pool = pool
        self.seeds = seeds
        self.proc = None
        self.current = None
        self.phase = None
        self.last = time.monotonic()
        self.buf = b""
        self.err = None
        self.start()

    def start(self):
        self.current, self.phase, self.buf = None, None, b""
        if self.err:
            self.err.close()
        self.err = None
        if not self.seeds:
            self.proc = None
            return
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.pool.argv(self.seeds), stdout=subprocess.PIPE,
                                     stderr=self.err, cwd=self.pool.cwd, env=self.pool.env)
        self.last = time.monotonic()

    def stderr_tail(self, n=3000):
        if not self.err:
            return ""
        self.err.seek(0, os.SEEK_END)
        size = self.err.tell()
        self.err.seek(max(0, size - n))
        return self.err.read().decode(errors="replace")

    def read(self):
        data = os.read(self.proc.stdout.fileno(), 65536)
        if not data:
            return None
        self.buf += data
        *complete, self.buf = self.buf.split(b"\n")
        self.last = time.monotonic()
        return [json.loads(x) for x in complete if x.strip()]

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            self.proc.wait()
            self.proc.stdout.close()

    def restart_after(self, seed):
        self.kill()
        self.seeds = range(seed + self.seeds.step, self.seeds.stop, self.seeds.step)
        self.start()

    def close(self):
        self.kill()
        self.proc = None
        if self.err:
            self.err.close()
            self.err = None


class Pool:
    """Runs `seeds` (a range) in `jobs` workers; `argv(seeds)` is a worker's command line for a
    range of seeds. `timeouts` maps a phase to its hang timeout in seconds (`None`: the phase
    before any "phase" line); phases not in it use `timeout`."""

    def __init__(self, argv, seeds, jobs, timeout, timeouts=None, cwd=None, env=None):
        self.argv = argv
        self.timeout = timeout
        self.timeouts = timeouts or {}
        self.cwd = cwd
        self.env = env
        step = seeds.step * jobs
        self.jobs = [_Job(self, range(seeds.start + j * seeds.step, seeds.stop, step))
                     for j in range(jobs)]

    def events(self, duration=0.0):
        """Yields ("result", message), ("crash", seed, phase, detail) and ("hang", seed, phase,
        detail) until every seed ran or `duration` seconds passed (0: no limit; the seeds in
        flight then are not reported)."""
        t0 = time.monotonic()
        try:
            while any(j.proc for j in self.jobs):
                if duration and time.monotonic() - t0 > duration:
                    return
                live = {j.proc.stdout.fileno(): j for j in self.jobs if j.proc}
                ready, _, _ = select.select(list(live), [], [], 1.0)
                for fd in ready:
                    j = live[fd]
                    msgs = j.read()
                    if msgs is None:  # the worker exited
                        rc = j.proc.wait()
                        if j.current is not None:
                            seed, phase = j.current, j.phase
                            detail = f"worker exited with status {rc}\n{j.stderr_tail()}"
                            j.restart_after(seed)
                            yield ("crash", seed, phase, detail)
                        else:
                            j.close()
                        continue
                    for m in msgs:
                        if "start" in m:
                            j.current, j.phase = m["start"], None
                        elif "phase" in m and "seed" not in m:
                            j.phase = m["phase"]
                        else:
                            j.current, j.phase = None, None
                            yield ("result", m)
                now = time.monotonic()
                for j in self.jobs:
                    limit = self.timeouts.get(j.phase, self.timeout)
                    if j.proc and now - j.last > limit:
                        seed = j.current if j.current is not None else (
                            j.seeds[0] if j.seeds else None)
                        phase = j.phase
                        j.kill()
                        detail = f"no answer for {limit:g} s\n{j.stderr_tail()}"
                        if seed is None:
                            j.close()
                            continue
                        j.restart_after(seed)
                        yield ("hang", seed, phase, detail)
        finally:
            for j in self.jobs:
                j.close()
