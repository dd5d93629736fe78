"""Mutated code objects through ptxjit, a bounded sample (issue 19, item 3).

tests/python/codefuzz mutates the code objects of test kernels (co_code, operands, jump
targets, EXTENDED_ARG chains, constants, names, stack size, flags, the exception and line
tables); no mutation may crash or hang the process or give an internal compiler error. The
sample runs in a subprocess (scripts/codefuzz.py), so that a crash fails the test instead of
killing pytest; the long campaign is the same script (docs/reliability.md). The findings of
the campaigns so far are the tests below it.
"""
import json
import os
import random
import subprocess
import sys
import types

import numpy as np
import pytest

from ptxjit import cuda, errors

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_mutations_stay_within_what_cpython_accepts():
    """The mutator never makes a code object that crashes CPython itself (an instruction whose
    inline caches run past the end, an instrumentation opcode): reading it back is safe."""
    from codefuzz import mutate
    from codefuzz.kernels import corpus

    kinds = set()
    for case in corpus():
        for seed in range(40):
            try:
                code, what = mutate.mutate(case.func.__code__, random.Random(seed))
            except mutate.Skip:
                continue
            kinds.update(w.split(":")[0] for w in what)
            code.co_code, list(code.co_positions()), list(code.co_lines())
            ins = mutate.instructions(code.co_code)
            assert not ins or ins[-1].unit + 1 + ins[-1].ncache <= len(code.co_code) // 2
            assert not set(code.co_code[::2]) & mutate.FORBIDDEN
    assert {"byte", "opcode", "oparg", "big_oparg", "extended_chain", "jump", "const", "names",
            "stacksize", "exceptiontable", "linetable"} <= kinds


def test_extended_arg_operands_reach_past_a_byte():
    from codefuzz import mutate

    def f(x, y, z):
        return (x, y, z)

    cc = f.__code__.co_code
    ins = mutate.instructions(cc)
    k = next(i for i, x in enumerate(ins) if mutate.dis.opname[x.op] == "BUILD_TUPLE")
    new = mutate._with_arg(cc, ins, k, 0x12345)
    again = mutate.instructions(new)
    assert mutate._effective_arg(new, again, k) == 0x12345


def test_mutated_code_objects_give_clean_errors(cpu, subprocess_env, tmp_path):
    """800 mutations, compiled without launching (a mutated jump can make a loop that never
    ends): no crash, no hang, no internal compiler error, no other exception."""
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "codefuzz.py"),
                        "--count", "800", "--seed", "20261127", "--no-launch", "--timeout", "60",
                        "--progress", "1000", "--out", str(out)],
                       env=subprocess_env, capture_output=True, text=True, timeout=110)
    summary = json.loads((out / "summary.json").read_text())
    assert r.returncode == 0, json.dumps(summary["found"], indent=1)[:3000] + r.stderr[-2000:]
    counts = summary["counts"]
    assert summary["executions"] == 800
    assert counts.get("clean", 0) >= 400 and counts.get("ok", 0) >= 40, counts
    assert summary["cases"] >= 40  # the sample reaches most of the corpus


def _replay_tool():
    build = os.environ.get("BUILD_DIR", "build")
    path = os.path.join(ROOT, build, "tests", "cpp", "frontend_replay")
    return path if os.access(path, os.X_OK) else None


def _interpreters():
    """This interpreter and the pyenv ones of the other versions the frontend decodes."""
    found = {f"{sys.version_info[0]}.{sys.version_info[1]}": sys.executable}
    root = os.path.expanduser("~/.pyenv/versions")
    for v in sorted(os.listdir(root)) if os.path.isdir(root) else ():
        exe = os.path.join(root, v, "bin", "python")
        minor = ".".join(v.split(".")[:2])
        if minor in ("3.11", "3.12", "3.13") and minor not in found and os.access(exe, os.X_OK):
            found[minor] = exe
    return found


@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_mutated_code_objects_of_every_version_give_clean_errors(version, tmp_path):
    """The same through frontend_replay (the frontend and typing without the extension), with
    the bytecode of each Python version that is installed (pyenv's, where present)."""
    tool, exe = _replay_tool(), _interpreters().get(version)
    if not tool or not exe:
        pytest.skip(f"needs build/tests/cpp/frontend_replay and a Python {version}")
    out = tmp_path / "out"
    r = subprocess.run([exe, os.path.join(ROOT, "scripts", "codefuzz.py"), "--replay", tool,
                        "--count", "1500", "--seed", "20261127", "--progress", "1000",
                        "--out", str(out)], capture_output=True, text=True, timeout=110)
    summary = json.loads((out / "summary.json").read_text())
    assert r.returncode == 0, json.dumps(summary["found"], indent=1)[:3000] + r.stderr[-2000:]
    assert summary["executions"] == 1500 and summary["python"].startswith(version)
    assert summary["counts"].get("clean", 0) >= 1000 and summary["counts"].get("ok", 0) >= 50


# ---- findings of the campaigns (docs/reliability.md), each fixed ----

def _replaced(f, **changes):
    return types.FunctionType(f.__code__.replace(**changes), f.__globals__, f.__name__,
                              f.__defaults__, f.__closure__)


def _plain(x, out):
    out[0] = x[0]


@pytest.mark.parametrize("field", ["co_name", "co_filename", "co_varnames", "co_names"])
def test_names_with_lone_surrogates_are_not_a_conversion_error(cpu, field):
    """A code object built with code.replace can name things with lone surrogates, which UTF-8
    cannot encode: the conversion of the snapshot failed with pybind11's "Unable to cast Python
    instance to C++ type". They are written as escapes now."""
    code = _plain.__code__
    value = {"co_name": "k\udcff", "co_filename": "\udcff.py",
             "co_varnames": ("x", "out\udcff"), "co_names": ("\udcff",)}[field]
    k = cuda.jit(_replaced(_plain, **{field: value}))
    x, out = np.array([2.5]), np.zeros(1)
    k[1, 1](x, out)
    assert out[0] == 2.5
    assert code is _plain.__code__


def test_a_surrogate_name_is_escaped_in_messages(cpu):
    def k(out):
        out[0] = missing_value  # noqa: F821

    f = _replaced(k, co_names=("missing\udcff",), co_name="k\udcff")
    with pytest.raises(errors.UndefinedNameError, match=r"name 'missing\\udcff' is not defined"):
        cuda.jit(f)[1, 1](np.zeros(1))


def test_unpacking_into_too_many_targets_is_unsupported(cpu):
    """UNPACK_SEQUENCE beyond the frontend's limit of 65,536 targets (valid Python, or an
    operand made large with EXTENDED_ARG) was an internal compiler error."""
    from codefuzz import mutate

    def k(a, out):
        t = (a[0], a[1])
        p, q = t
        out[0] = p + q

    code = k.__code__
    cc = code.co_code
    ins = mutate.instructions(cc)
    idx = next(i for i, x in enumerate(ins) if mutate.dis.opname[x.op] == "UNPACK_SEQUENCE")
    f = _replaced(k, co_code=mutate._with_arg(cc, ins, idx, 70000))
    with pytest.raises(errors.UnsupportedError,
                       match="unpacking into 70000 targets .more than 65536. is not supported"):
        cuda.jit(f)[1, 1](np.ones(2), np.zeros(1))


def test_what_a_worker_prints_does_not_break_the_pool(tmp_path):
    # A mutated kernel may print (the CPU backend writes to the process's stdout); the pool's
    # JSON lines travel on the worker's original stdout, which protocol_stream() keeps apart.
    import fuzzpool

    here = os.path.dirname(os.path.abspath(__file__))
    script = tmp_path / "worker.py"
    script.write_text(
        "import json, os, sys\n"
        f"sys.path.insert(0, {here!r})\n"
        "import fuzzpool\n"
        "out = fuzzpool.protocol_stream()\n"
        "for seed in range(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])):\n"
        "    out.write(json.dumps({'start': seed}) + '\\n'); out.flush()\n"
        "    print('noise', seed, end='')\n"
        "    sys.stdout.flush()\n"
        "    os.write(1, b'{not json\\n')\n"
        "    out.write(json.dumps({'seed': seed, 'status': 'ok'}) + '\\n'); out.flush()\n")
    pool = fuzzpool.Pool(lambda s: [sys.executable, str(script), str(s.start), str(s.stop),
                                    str(s.step)], range(0, 6), jobs=2, timeout=60)
    results = sorted(m["seed"] for kind, m in pool.events() if kind == "result")
    assert results == list(range(6))
