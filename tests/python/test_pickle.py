"""Pickling kernels, device functions, configured launches, ufuncs and cuda.reduce objects, and
running ptxjit kernels in `multiprocessing` workers started with 'spawn' (CPU backend; the same
code runs on a GPU, where each worker opens its own CUDA context)."""
import multiprocessing as mp
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from ptxjit import cuda, guvectorize, vectorize


@cuda.jit(device=True)
def plus_one(a):
    return a + 1


@cuda.jit
def module_kernel(arr):
    arr[0] = plus_one(arr[0])


@vectorize(["float64(float64)"], target="cuda")
def module_ufunc(x):
    return x * 3


def check_call(kernel):
    """numba-cuda's test_serialize.check_call: the kernel and twice-pickled copies agree, and a
    configured launch keeps its configuration."""
    arr = np.array([100])
    kernel[1, 1](arr)
    expected = arr.copy()
    k1 = pickle.loads(pickle.dumps(kernel))
    arr1 = np.array([100])
    k1[1, 1](arr1)
    np.testing.assert_equal(arr1, expected)
    k2 = pickle.loads(pickle.dumps(k1))
    arr2 = np.array([100])
    k2[1, 1](arr2)
    np.testing.assert_equal(arr2, expected)
    cfg = pickle.loads(pickle.dumps(k2[5, 8]))
    assert cfg.griddim == (5, 1, 1) and cfg.blockdim == (8, 1, 1)
    return k2


def test_module_level_objects_pickle_by_reference(cpu):
    assert pickle.loads(pickle.dumps(module_kernel)) is module_kernel
    assert pickle.loads(pickle.dumps(plus_one)) is plus_one
    assert pickle.loads(pickle.dumps(module_ufunc)) is module_ufunc
    check_call(module_kernel)


def test_local_kernel_with_a_local_device_function(cpu):
    @cuda.jit(device=True)
    def inner(a):
        return a + 1

    @cuda.jit
    def foo(arr):
        arr[0] = inner(arr[0])

    again = check_call(foo)
    assert again is not foo and again.py_func is not foo.py_func
    assert again.__name__ == "foo"


def test_eager_signatures_and_options_travel(cpu):
    @cuda.jit("void(intp[:])", fastmath=True)
    def foo(arr):
        arr[0] = arr[0] * 2

    check_call(foo)
    again = pickle.loads(pickle.dumps(foo))
    assert again._ptxjit_options["fastmath"] is True
    assert [str(s) for s in again.signatures] == [str(s) for s in foo.signatures]
    with pytest.raises(TypeError, match="No matching definition"):
        again[1, 1](np.zeros(1, dtype=np.float32))


def test_globals_closures_defaults_and_self_references(cpu):
    scale = 3.0

    @cuda.jit(device=True)
    def cube(n):
        return n * n * n

    @cuda.jit
    def uses_all(out, k=2):
        out[0] = np.float64(cube(2)) * scale + k  # np: a module global; cube, scale: closure

    again = pickle.loads(pickle.dumps(uses_all))
    out = np.zeros(1)
    again[1, 1](out)
    assert out[0] == 8 * 3.0 + 2

    # A function naming itself (through its closure) is bound to the rebuilt object, not
    # pickled inside itself.
    @cuda.jit(device=True)
    def selfish(n):
        return selfish if n < 0 else n

    copy = pickle.loads(pickle.dumps(selfish))
    cells = [c.cell_contents for c in copy.py_func.__closure__]
    assert cells == [copy] and copy is not selfish


def test_ufuncs_pickle(cpu):
    @vectorize(["intp(intp)", "float64(float64)"], target="cuda")
    def cuda_vect(x):
        return x * 2

    ary = np.arange(10, dtype=np.intp)
    expected = cuda_vect(ary)
    v1 = pickle.loads(pickle.dumps(cuda_vect))
    np.testing.assert_equal(v1(ary), expected)
    v2 = pickle.loads(pickle.dumps(v1))
    np.testing.assert_equal(v2(ary.astype(np.float64)), expected.astype(np.float64))

    @guvectorize(["void(float64[:], float64[:])"], "(n)->()", target="cuda")
    def total(x, out):
        s = 0.0
        for v in x:
            s += v
        out[0] = s

    g = pickle.loads(pickle.dumps(total))
    np.testing.assert_equal(g(np.ones((3, 4))), np.full(3, 4.0))

    @vectorize
    def lazy(x):
        return x + 1

    np.testing.assert_equal(pickle.loads(pickle.dumps(lazy))(np.arange(3)), np.arange(1, 4))


def test_reduce_objects_pickle(cpu):
    r = cuda.reduce(lambda a, b: a + b)
    again = pickle.loads(pickle.dumps(r))
    assert again(np.arange(100, dtype=np.float64)) == 4950.0


def test_what_cannot_pickle_says_why(cpu):
    @cuda.jit
    def foo(arr):
        arr[0] += 1

    s = cuda.stream()
    with pytest.raises(pickle.PicklingError, match="configured launch on a stream"):
        pickle.dumps(foo[1, 1, s])
    cfg = foo[5, 8]
    seen = []
    cfg.pre_launch_callbacks.append(lambda kernel, config: seen.append((kernel, config)))
    with pytest.raises(pickle.PicklingError,
                       match="Cannot pickle configured launches with pre-launch callbacks"):
        pickle.dumps(cfg)
    cfg(np.zeros(1))
    assert seen == [(foo, cfg)]


def test_device_arrays_pickle_as_their_host_copy(cpu):
    d = cuda.to_device(np.arange(12.0).reshape(3, 4))
    again = pickle.loads(pickle.dumps(d[:, ::-1]))
    np.testing.assert_equal(again.copy_to_host(), np.arange(12.0).reshape(3, 4)[:, ::-1])


def test_unpickling_in_a_fresh_interpreter_recompiles(cpu, subprocess_env, tmp_path):
    @cuda.jit
    def local(arr, v):
        i = cuda.grid(1)
        if i < arr.size:
            arr[i] = v * i

    path = tmp_path / "k.pkl"
    path.write_bytes(pickle.dumps((local, module_kernel)))
    script = (
        "import pickle, sys, numpy as np\n"
        f"sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
        f"k, m = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "a = np.zeros(4); k[1, 4](a, 2.0); print(a.tolist())\n"
        "b = np.array([5]); m[1, 1](b); print(b.tolist())\n")
    env = dict(subprocess_env, PTXJIT_TARGET="cpu")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["[0.0,", "2.0,", "4.0,", "6.0]", "[6]"]


CACHED_MODULE = """
from ptxjit import cuda

@cuda.jit(cache=True)
def scale(x, out, f):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * f

def make_shift():
    @cuda.jit(cache=True)
    def shift(x, out, s):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] + s
    return shift
"""

# Compiles both kernels (writing their disk-cache entries), then pickles them: `scale` by
# reference, the local `shift` by value.
PICKLER = """
import json, pickle, sys
import numpy as np
from ptxjit import _core
import pickled_cached as m

shift = m.make_shift()
x, out = np.arange(8.0), np.zeros(8)
m.scale[1, 8](x, out, 3.0)
shift[1, 8](x, out, 1.0)
open(sys.argv[1], "wb").write(pickle.dumps((m.scale, shift)))
print(json.dumps(_core.cache_counters()))
"""

UNPICKLER = """
import json, pickle, sys
import numpy as np
from ptxjit import _core

scale, shift = pickle.loads(open(sys.argv[1], "rb").read())
x, a, b = np.arange(8.0), np.zeros(8), np.zeros(8)
scale[1, 8](x, a, 3.0)
shift[1, 8](x, b, 1.0)
print(json.dumps({
    "a": a.tolist(), "b": b.tolist(), "counters": _core.cache_counters(),
    "hits": [sum(k.stats.cache_hits.values()) for k in (scale, shift)],
    "misses": [sum(k.stats.cache_misses.values()) for k in (scale, shift)],
}))
"""


def test_unpickled_cached_kernels_load_from_the_disk_cache(subprocess_env, tmp_path):
    # A cache=True kernel unpickled in a fresh interpreter whose cache already holds it loads
    # it from there (a hit, nothing compiled or stored), by reference and by value alike.
    import json

    (tmp_path / "pickled_cached.py").write_text(CACHED_MODULE)
    (tmp_path / "pickler.py").write_text(PICKLER)
    (tmp_path / "unpickler.py").write_text(UNPICKLER)
    cache = tmp_path / "cache"
    env = dict(subprocess_env, PTXJIT_TARGET="cpu", PTXJIT_CACHE_DIR=str(cache))
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env["PYTHONPATH"]
    pickled = tmp_path / "kernels.pkl"

    def run(script):
        r = subprocess.run([sys.executable, str(tmp_path / script), str(pickled)],
                           capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    first = run("pickler.py")
    assert first["hits"] == 0 and first["misses"] == 2 and first["stores"] == 2, first
    assert len(list(cache.glob("llvmcache-*"))) == 2
    again = run("unpickler.py")
    assert again["a"] == (np.arange(8.0) * 3).tolist()
    assert again["b"] == (np.arange(8.0) + 1).tolist()
    assert again["hits"] == [1, 1] and again["misses"] == [0, 0], again
    counters = again["counters"]
    assert counters["hits"] == 2 and counters["misses"] == 0 and counters["stores"] == 0, counters
    # Without the entries the same unpickled kernels compile again.
    for entry in cache.glob("llvmcache-*"):
        entry.unlink()
    cold = run("unpickler.py")
    assert cold["a"] == again["a"] and cold["b"] == again["b"]
    assert cold["hits"] == [0, 0] and cold["counters"]["misses"] == 2, cold


# ---- multiprocessing with the spawn start method ------------------------------------------

def run_in_worker(kernel, n, value):
    """Runs `kernel` (pickled to the worker) over n elements; returns (pid, result)."""
    arr = np.zeros(n)
    kernel[1, n](arr, value)
    return os.getpid(), arr


@cuda.jit
def fill(arr, v):
    i = cuda.grid(1)
    if i < arr.size:
        arr[i] = v + i


def test_spawn_pool_runs_kernels_in_each_worker(cpu, monkeypatch):
    monkeypatch.setenv("PTXJIT_TARGET", "cpu")

    @cuda.jit
    def local_fill(arr, v):
        i = cuda.grid(1)
        if i < arr.size:
            arr[i] = v * i

    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        jobs = [(fill, 8, float(k)) for k in range(3)] + [(local_fill, 8, 2.0)]
        results = pool.starmap(run_in_worker, jobs)
    for k in range(3):
        np.testing.assert_equal(results[k][1], np.arange(8) + k)
    np.testing.assert_equal(results[3][1], 2.0 * np.arange(8))
    assert os.getpid() not in {pid for pid, _ in results}


def call_in_worker(ufunc, *args):
    """Calls `ufunc` (pickled to the worker) on `args`; returns (pid, result)."""
    return os.getpid(), ufunc(*args)


def test_spawn_pool_calls_ufuncs_in_each_worker(cpu, monkeypatch):
    monkeypatch.setenv("PTXJIT_TARGET", "cpu")

    @vectorize(["int64(int64, int64)", "float64(float64, float64)"])
    def local_hypot2(a, b):  # pickled by value
        return a * a + b * b

    @guvectorize(["void(float64[:], float64[:])"], "(n)->()", target="cuda")
    def local_total(x, out):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i]
        out[0] = s

    x = np.arange(6.0)
    with mp.get_context("spawn").Pool(2) as pool:
        results = pool.starmap(call_in_worker, [
            (module_ufunc, x),                               # by reference
            (local_hypot2, x, x[::-1]),
            (local_hypot2, np.arange(4), np.int64(2)),
            (local_total, x.reshape(2, 3)),
        ])
    np.testing.assert_equal(results[0][1], x * 3)
    np.testing.assert_equal(results[1][1], x * x + x[::-1] ** 2)
    assert results[2][1].dtype == np.int64
    np.testing.assert_equal(results[2][1], np.arange(4) ** 2 + 4)
    np.testing.assert_equal(results[3][1], [3.0, 12.0])
    assert os.getpid() not in {pid for pid, _ in results}


@pytest.mark.gpu
def test_a_child_forked_after_cuda_started_refuses_it(cuda_target):
    # numba-cuda's test_multiprocessing.test_fork.
    import concurrent.futures

    from ptxjit.errors import CudaDriverError

    # As numba-cuda's test: only current_context() before the fork, so the device may still be
    # opening on ptxjit's background thread when the worker forks (it hung there once).
    cuda.current_context()
    with concurrent.futures.ProcessPoolExecutor(mp_context=mp.get_context("fork")) as exe:
        future = exe.submit(cuda.to_device, np.arange(1))
        with pytest.raises(CudaDriverError, match="CUDA initialized before forking"):
            future.result(timeout=60)


@pytest.mark.gpu
def test_spawn_pool_runs_kernels_on_the_gpu(cuda_target, monkeypatch):
    monkeypatch.setenv("PTXJIT_TARGET", "cuda")
    with mp.get_context("spawn").Pool(2) as pool:
        results = pool.starmap(run_in_worker, [(fill, 16, 1.0), (fill, 16, 2.0)])
    np.testing.assert_equal(results[0][1], np.arange(16) + 1.0)
    np.testing.assert_equal(results[1][1], np.arange(16) + 2.0)
