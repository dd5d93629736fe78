"""Kernels used from several Python threads, and the lifetime of kernels and their
configurations."""
import gc
import threading
import weakref

import numpy as np

from ptxjit import _core, cuda


def test_concurrent_first_launches_compile_once(backend):
    @cuda.jit
    def k(x, v):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = v

    before = _core.compiled_count()
    arrays = [np.zeros(64) for _ in range(8)]
    errors = []

    def work(idx):
        try:
            for _ in range(20):
                k[2, 32](arrays[idx], float(idx))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, a in enumerate(arrays):
        assert (a == i).all()
    assert _core.compiled_count() == before + 1
    assert len(k.signatures) == 1


def test_kernels_are_freed(cpu):
    refs = []
    for n in range(20):
        ns = {"cuda": cuda}
        exec(f"def f(x):\n    x[0] = {n}\n", ns)
        k = cuda.jit(ns["f"])
        x = np.zeros(1)
        k[1, 1](x)
        assert x[0] == n
        refs.append(weakref.ref(ns["f"]))
        del k, ns
    gc.collect()
    assert sum(r() is not None for r in refs) == 0  # the compiler let go of the functions


def test_launch_configuration_keeps_its_kernel_alive(cpu):
    def make():
        @cuda.jit
        def k(x):
            x[0] = 7

        return k[1, 1]

    cfg = make()
    gc.collect()
    x = np.zeros(1)
    cfg(x)
    assert x[0] == 7
    assert cfg.dispatcher.py_func.__name__ == "k"


def test_keyword_arguments_are_refused(cpu):
    @cuda.jit
    def k(x):
        x[0] = 1

    import pytest

    with pytest.raises(TypeError, match="keyword"):
        k[1, 1](x=np.zeros(1))


STRESS = r'''
import gc, sys, threading, time
import numpy as np
from ptxjit import _core, cuda, vectorize

_core.select_target("cpu")
stop = time.monotonic() + float(sys.argv[1])
errors = []

@cuda.jit(device=True)
def helper(v):
    return v * 2.0

def guarded(work):
    def run(tag):
        try:
            work(tag)
        except Exception as e:
            errors.append((tag, repr(e)))
    return run

@guarded
def decorate(tag):
    n = 0
    while time.monotonic() < stop:
        ns = {"cuda": cuda}
        exec(f"def f{n}(x):\n    x[0] = {n}\n", ns)
        k = cuda.jit(ns[f"f{n}"])
        d = cuda.jit(device=True)(ns[f"f{n}"])
        del k, d, ns
        n += 1
        if n % 50 == 0:
            gc.collect()
            _core.compiled_count()

@guarded
def compile_and_launch(tag):
    n = 0
    while time.monotonic() < stop:
        ns = {"cuda": cuda, "helper": helper}
        exec(f"def g(x, y):\n    i = cuda.grid(1)\n    if i < x.size:\n        x[i] = helper(y) + {n}\n", ns)
        k = cuda.jit(ns["g"])
        x = np.zeros(4)
        k[1, 4](x, 1.5)
        assert x[0] == 3.0 + n, x
        cuda.compile_ptx(ns["g"], "void(float64[:], float64)")
        n += 1

@guarded
def ufuncs(tag):
    n = 0
    while time.monotonic() < stop:
        ns = {}
        exec(f"def h(a, b):\n    return a * b + {n}\n", ns)
        u = vectorize(["float64(float64, float64)"], target="cuda")(ns["h"])
        a = np.arange(8.0)
        assert (u(a, a) == a * a + n).all()
        n += 1

threads = [threading.Thread(target=f, args=(f.__name__ + str(i),))
           for i, f in enumerate([decorate, decorate, compile_and_launch, ufuncs])]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("errors:", errors)
sys.exit(1 if errors else 0)
'''


def test_decorating_compiling_launching_and_ufuncs_at_once(tmp_path, subprocess_env):
    """Threads that decorate functions, compile and launch new kernels, compile PTX and call new
    ufuncs at once, in a fresh process: it neither hangs (the compiler once took the
    interpreter while holding its lock, as decorating threads did the reverse) nor aborts (a
    kernel freed while another thread registered one: "Tried to deallocate unregistered
    instance")."""
    import subprocess
    import sys

    script = tmp_path / "stress.py"
    script.write_text(STRESS)
    for _ in range(3):
        try:
            r = subprocess.run([sys.executable, "-X", "faulthandler", str(script), "2.0"],
                               env=subprocess_env, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired as e:  # pragma: no cover - the deadlock
            raise AssertionError(f"the threads deadlocked:\n{e.stderr}") from None
        assert r.returncode == 0, r.stdout + r.stderr
        assert "errors: []" in r.stdout
