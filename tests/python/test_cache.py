"""@cuda.jit(cache=True): compiled code kept on disk and loaded by later processes.

Every test runs a small program in fresh interpreters (the cache only matters across
processes) on the backend of the `backend` fixture, and reads what the program prints: its
result, `dispatcher.stats` and the process-wide counters of `_core.cache_counters()`.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

PROGRAM = textwrap.dedent('''
    import json, os, sys
    import numpy as np
    from ptxjit import cuda, _core

    SCALE = float(os.environ.get("SCALE", "2.0"))
    OFFSET = float(os.environ.get("OFFSET", "1.0"))

    @cuda.jit(device=True)
    def shift(v):
        return v + OFFSET

    @cuda.jit(cache=True)
    def scaled(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = shift(x[i] * SCALE)

    @cuda.jit("void(float64[::1], float64[::1])", cache=True)
    def eager(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] - SCALE

    x = np.arange(1, 101, dtype=np.float32)
    out = np.zeros_like(x)
    scaled[4, 32](x, out)
    xd = np.linspace(-1.0, 1.0, 50)
    outd = np.zeros_like(xd)
    eager[2, 32](xd, outd)
    stats = scaled.stats
    print(json.dumps({
        "out": out.tolist(),
        "outd": outd.tolist(),
        "counters": _core.cache_counters(),
        "hits": sum(stats.cache_hits.values()),
        "misses": sum(stats.cache_misses.values()),
        "eager_hits": sum(eager.stats.cache_hits.values()),
        "hit_keys": [str(k) for k in stats.cache_hits],
        "cache_path": stats.cache_path,
    }))
''')


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "cached_kernels.py"
    path.write_text(PROGRAM)
    return path


def run(program, backend, subprocess_env, **env):
    e = dict(subprocess_env)
    e["PTXJIT_TARGET"] = backend
    e.pop("PTXJIT_CACHE_DIR", None)
    e.update({k: str(v) for k, v in env.items()})
    proc = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, env=e,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def expected(scale=2.0, offset=1.0):
    x = np.arange(1, 101, dtype=np.float32)
    xd = np.linspace(-1.0, 1.0, 50)
    return (x * np.float32(scale) + np.float32(offset)).tolist(), (xd - scale).tolist()


def check(result, scale=2.0, offset=1.0):
    out, outd = expected(scale, offset)
    np.testing.assert_allclose(result["out"], out, rtol=1e-6)
    np.testing.assert_allclose(result["outd"], outd, rtol=1e-12)


def entries(directory):
    return sorted(p for p in os.listdir(directory) if p.endswith(".ptxjitc"))


def test_second_process_loads_from_the_cache(program, backend, subprocess_env, tmp_path):
    cache = tmp_path / "cache"
    first = run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache)
    check(first)
    assert (first["hits"], first["misses"]) == (0, 1)
    assert first["counters"]["stores"] == 2  # the lazy and the eager kernel
    assert first["cache_path"] == str(cache)
    assert len(entries(cache)) == 2

    second = run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache)
    check(second)
    assert (second["hits"], second["misses"]) == (1, 0)
    assert second["eager_hits"] == 1
    assert second["counters"]["hits"] == 2
    assert second["counters"]["stores"] == 0
    assert second["hit_keys"] == ["(array(float32, 1d, C), array(float32, 1d, C))"]


def test_changed_global_or_device_function_global_is_a_miss(program, backend, subprocess_env,
                                                               tmp_path):
    cache = tmp_path / "cache"
    run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache)
    # SCALE is a global of both kernels: both miss and compute with the new value.
    changed = run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache, SCALE=3.0)
    check(changed, scale=3.0)
    assert (changed["hits"], changed["misses"]) == (0, 1)
    assert changed["counters"]["hits"] == 0
    # OFFSET is read only by the device function `shift`: the kernel calling it misses, the
    # other one hits.
    shifted = run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache, SCALE=3.0, OFFSET=5)
    check(shifted, scale=3.0, offset=5.0)
    assert (shifted["hits"], shifted["misses"]) == (0, 1)
    assert shifted["eager_hits"] == 1
    # Older entries of the same specialization were replaced, not kept.
    assert len(entries(cache)) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_corrupt_entry_is_recompiled(program, backend, subprocess_env, tmp_path, damage):
    cache = tmp_path / "cache"
    run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache)
    for name in entries(cache):
        path = cache / name
        data = path.read_bytes()
        if damage == "truncate":
            data = data[: len(data) // 2]
        elif damage == "flip":
            data = data[:-20] + bytes([data[-20] ^ 0xFF]) + data[-19:]
        elif damage == "garbage":
            data = b"\x00garbage" * 10
        else:
            data = b""
        path.write_bytes(data)
    again = run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache)
    check(again)
    assert (again["hits"], again["misses"]) == (0, 1)
    assert again["counters"]["rejected"] == 2
    assert again["counters"]["stores"] == 2
    healed = run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache)
    check(healed)
    assert healed["counters"]["hits"] == 2


def test_default_location_is_the_sources_pycache(program, backend, subprocess_env, tmp_path):
    result = run(program, backend, subprocess_env, XDG_CACHE_HOME=tmp_path / "xdg")
    pycache = program.parent / "__pycache__"
    assert result["cache_path"] == str(pycache)
    assert len(entries(pycache)) == 2
    # No compiled code in the per-user directory (where a CUDA process keeps its device record:
    # compiler/DeviceRecord.h).
    user = tmp_path / "xdg" / "ptxjit"
    assert not user.exists() or not entries(user)
    assert run(program, backend, subprocess_env, XDG_CACHE_HOME=tmp_path / "xdg")["hits"] == 1


def test_unusable_pycache_falls_back_to_the_user_cache(program, backend, subprocess_env,
                                                        tmp_path):
    # A file named __pycache__ where the directory would go (works whoever runs the test).
    (program.parent / "__pycache__").write_text("not a directory")
    result = run(program, backend, subprocess_env, XDG_CACHE_HOME=tmp_path / "xdg")
    assert result["cache_path"] == str(tmp_path / "xdg" / "ptxjit")
    assert len(entries(tmp_path / "xdg" / "ptxjit")) == 2
    assert run(program, backend, subprocess_env, XDG_CACHE_HOME=tmp_path / "xdg")["hits"] == 1


def test_concurrent_processes_share_the_cache(program, backend, subprocess_env, tmp_path):
    cache = tmp_path / "cache"
    e = dict(subprocess_env, PTXJIT_TARGET=backend, PTXJIT_CACHE_DIR=str(cache))
    procs = [subprocess.Popen([sys.executable, str(program)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=e) for _ in range(3)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        check(json.loads(out.strip().splitlines()[-1]))
    assert len(entries(cache)) == 2
    assert not [n for n in os.listdir(cache) if ".tmp." in n]
    assert run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache)["counters"]["hits"] == 2


def test_stats_without_cache(cpu):
    from ptxjit import cuda

    @cuda.jit
    def k(out):
        out[0] = 1.0

    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == 1.0
    s = k.stats
    assert s.cache_path is None
    assert not s.cache_hits and not s.cache_misses


UFUNC_PROGRAM = textwrap.dedent('''
    import json, os
    import numpy as np
    from ptxjit import cuda, vectorize, guvectorize, _core

    OFFSET = float(os.environ.get("OFFSET", "1.0"))

    @vectorize(["float64(float64, float64)"], target="cuda", cache=True)
    def fma1(a, b):
        return a * b + OFFSET

    @guvectorize(["void(float64[:], float64[:])"], "(n)->()", target="cuda", cache=True)
    def total(x, out):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i]
        out[0] = s + OFFSET

    x = np.arange(6.0)
    print(json.dumps({
        "elementwise": fma1(x, x).tolist(),
        "reduce": float(fma1.reduce(x)),
        "gufunc": total(x.reshape(2, 3)).tolist(),
        "counters": _core.cache_counters(),
    }))
''')


def test_ufunc_loops_are_cached_like_kernels(tmp_path, backend, subprocess_env):
    """@vectorize / @guvectorize(cache=True): a second process loads every loop kernel (the
    elementwise loop, the reduction, the gufunc loop) from the disk cache; changed globals make
    new entries."""
    program = tmp_path / "cached_ufuncs.py"
    program.write_text(UFUNC_PROGRAM)
    cache = tmp_path / "cache"
    first = run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache)
    x = np.arange(6.0)
    assert first["elementwise"] == (x * x + 1.0).tolist()
    assert first["gufunc"] == [4.0, 13.0]
    assert first["counters"]["hits"] == 0
    stores = first["counters"]["stores"]
    assert stores >= 3  # one entry per loop kernel
    assert len(entries(cache)) == stores
    second = run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache)
    assert second == dict(first, counters=second["counters"])
    assert second["counters"]["hits"] == stores
    assert second["counters"]["misses"] == 0
    assert second["counters"]["stores"] == 0
    changed = run(program, backend, subprocess_env, PTXJIT_CACHE_DIR=cache, OFFSET=2.0)
    assert changed["elementwise"] == (x * x + 2.0).tolist()
    assert changed["counters"]["hits"] == 0


SIGNED_PROGRAM = textwrap.dedent('''
    import json, os
    import numpy as np
    from ptxjit import cuda

    @cuda.jit(os.environ["HALF_SIG"], device=True)  # only the decorator changes between runs
    def half(v):
        return v * 0.5

    @cuda.jit(cache=True)
    def k(x, out):
        out[0] = half(x[0])

    out = np.zeros(1)
    k[1, 1](np.array([3.0]), out)
    print(json.dumps({"out": out[0], "hits": sum(k.stats.cache_hits.values())}))
''')


def test_a_changed_device_function_signature_is_a_miss(backend, subprocess_env, tmp_path):
    # The decorator's signature is not in the function's code, but it converts the result.
    path = tmp_path / "signed_kernels.py"
    path.write_text(SIGNED_PROGRAM)
    cache = tmp_path / "cache"
    first = run(path, backend, subprocess_env, PTXJIT_CACHE_DIR=cache, HALF_SIG="float64(float64)")
    assert first["out"] == 1.5
    again = run(path, backend, subprocess_env, PTXJIT_CACHE_DIR=cache, HALF_SIG="float64(float64)")
    assert again["hits"] == 1 and again["out"] == 1.5
    truncated = run(path, backend, subprocess_env, PTXJIT_CACHE_DIR=cache, HALF_SIG="int32(float64)")
    assert truncated["hits"] == 0 and truncated["out"] == 1.0
