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
