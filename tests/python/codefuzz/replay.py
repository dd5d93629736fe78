"""Mutated code objects of any supported Python version through the frontend and typing, without
the extension (which is built for one interpreter): the code object is serialized as a bytecode
fixture (tests/fixtures/make_bytecode_fixtures.py's layout) and handed to the C++ tool
frontend_replay (tests/cpp/tools/FrontendReplay.cpp), which builds and types it.

Runs on plain CPython 3.11, 3.12 or 3.13 (the standard library only). The corpus is the
frontend's sample kernels (tests/fixtures/bytecode/samples.py), with argument types chosen by
their parameter names; `Replayer.run_seed(seed)` returns the status the tool answered, or
"crash"/"hang" when it died or stopped answering (it is then restarted).
"""
import json
import os
import random
import select
import subprocess
import sys
import tempfile
import time
import types

from . import mutate

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures")


def _fixture_module():
    sys.path.insert(0, FIXTURES)
    try:
        import make_bytecode_fixtures as m
    finally:
        sys.path.pop(0)
    return m


def sample_corpus():
    """(name, function, argument type strings) of every sample, supported and rejected."""
    m = _fixture_module()
    samples = m.samples
    scalars = {"n": "int64", "start": "int64", "v": "int64", "opt": "int64"}
    two_d = {"index_2d", "tuple_unpack", "augmented"}
    out = []
    for name in samples.SUPPORTED + samples.REJECTED:
        f = getattr(samples, name)
        params = f.__code__.co_varnames[:f.__code__.co_argcount]
        args = [scalars.get(p, "float64[:, :]" if name in two_d and p == "a" or
                            name in two_d and name != "augmented" else "float64[:]")
                for p in params]
        out.append((name, f, args))
    return out


def fixture_of(func):
    """The fixture object of a (possibly malformed) function, as make_bytecode_fixtures writes
    it, without what only the tests of the decoder read (dis, expected rejections)."""
    m = _fixture_module()
    code = func.__code__
    closure = {n: m.encode_global(c.cell_contents)
               for n, c in zip(code.co_freevars, func.__closure__ or ())}
    positions = [[p[0] or 0, p[1] or 0, -1 if p[2] is None else p[2],
                  -1 if p[3] is None else p[3]] for p in code.co_positions()]
    return {
        "version": f"{sys.version_info[0]}.{sys.version_info[1]}",
        "name": code.co_name, "qualname": code.co_qualname,
        "filename": os.path.basename(code.co_filename), "firstLine": code.co_firstlineno,
        "flags": code.co_flags, "argCount": code.co_argcount,
        "posOnlyArgCount": code.co_posonlyargcount, "kwOnlyArgCount": code.co_kwonlyargcount,
        "code": code.co_code.hex(), "exceptionTable": code.co_exceptiontable.hex(),
        "consts": [m.encode_const(c) for c in code.co_consts],
        "defaults": [m.encode_const(c) for c in (func.__defaults__ or ())],
        "names": list(code.co_names), "varnames": list(code.co_varnames),
        "cellvars": list(code.co_cellvars), "freevars": list(code.co_freevars),
        "localsPlusNames": m.locals_plus_names(code), "positions": positions,
        "globals": {n: m.resolve_global(func, n) for n in code.co_names},
        "closure": closure, "dis": [], "expectReject": None, "executedOffsets": None,
    }


def mutated_line(seed, corpus):
    """The tool's input line for `seed` (a sample and a mutation of it), and what was done;
    raises mutate.Skip when no mutation applies."""
    rng = random.Random(seed)
    name, f, args = corpus[rng.randrange(len(corpus))]
    code, what = mutate.mutate(f.__code__, rng)
    func = types.FunctionType(code, f.__globals__, f.__name__, f.__defaults__,
                              mutate.closure_for(code, f.__closure__, rng))
    kind = "device" if rng.random() < 0.25 else "kernel"
    line = json.dumps({"fixture": fixture_of(func), "argTypes": args, "kind": kind},
                      ensure_ascii=True)
    return line, name, what


class Replayer:
    """One frontend_replay process, restarted after a crash or a hang."""

    def __init__(self, tool, timeout=60.0):
        self.tool = tool
        self.timeout = timeout
        self.proc = None
        self.corpus = sample_corpus()

    def _start(self):
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([self.tool], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err)

    def _stop(self):
        """Ends the tool; the tail of what it wrote on stderr."""
        if not self.proc:
            return ""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        self.err.seek(0)
        err = self.err.read().decode(errors="replace")[-2000:]
        self.err.close()
        self.proc = None
        return err

    def run_seed(self, seed):
        """{"status", "detail", "case", "mutations"} for `seed`."""
        try:
            line, name, what = mutated_line(seed, self.corpus)
        except mutate.Skip:
            return {"status": "refused", "detail": "no mutation applies", "case": "",
                    "mutations": []}
        except (ValueError, TypeError) as e:  # FunctionType's own checks
            return {"status": "refused", "detail": str(e), "case": "", "mutations": []}
        if self.proc is None:
            self._start()
        out = {"case": f"samples.{name}", "mutations": list(what)}
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout
        buf = b""
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                err = self._stop()
                return {**out, "status": "hang", "detail": f"no answer for {self.timeout:g} s\n"
                        + err}
            chunk = os.read(fd, 65536)
            if not chunk:
                rc = self.proc.wait()
                err = self._stop()
                return {**out, "status": "crash",
                        "detail": f"frontend_replay exited with status {rc}\n{err}"}
            buf += chunk
        answer = json.loads(buf)
        return {**out, "status": answer["status"], "detail": answer["message"]}

    def close(self):
        self._stop()
