"""Half-ported programs: numba-cuda objects among a kernel's globals (python/ptxjit/_numba_bridge.py).

numba is not installed where CI runs, so these tests put stand-ins for numba's modules into
sys.modules (restored afterwards): the bridge knows numba's objects only by their modules."""
import sys
import types as pytypes

import numpy as np
import pytest

from ptxjit import cuda
from ptxjit import errors
from ptxjit.cuda import random as ptx_random


def _numba_module(monkeypatch, name, **attrs):
    mod = pytypes.ModuleType(name)
    for k, v in attrs.items():
        setattr(mod, k, v)
    monkeypatch.setitem(sys.modules, name, mod)
    return mod


def _numba_function(module, name):
    """A function that, like numba-cuda's, lives in `module` (its body is never run)."""
    def f(*args):
        raise AssertionError("numba's function was called instead of ptxjit's")

    f.__module__ = module
    f.__name__ = f.__qualname__ = name
    return f


class CPUDispatcher:
    """Looks like numba's dispatcher of an @njit function: numba's module, a py_func."""

    def __init__(self, py_func):
        self.py_func = py_func


CPUDispatcher.__module__ = "numba.core.registry"


def test_numba_cuda_random_functions_are_ptxjits(backend, monkeypatch):
    numba_uniform = _numba_function("numba.cuda.random", "xoroshiro128p_uniform_float32")
    _numba_module(monkeypatch, "numba")
    _numba_module(monkeypatch, "numba.cuda.random",
                  xoroshiro128p_uniform_float32=numba_uniform)

    def make(draw):
        @cuda.jit
        def k(states, out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = draw(states, i)
        return k

    n = 64
    got = cuda.device_array(n, dtype=np.float32)
    make(numba_uniform)[1, n](ptx_random.create_xoroshiro128p_states(n, seed=7), got)
    want = cuda.device_array(n, dtype=np.float32)
    make(ptx_random.xoroshiro128p_uniform_float32)[1, n](
        ptx_random.create_xoroshiro128p_states(n, seed=7), want)
    np.testing.assert_array_equal(got.copy_to_host(), want.copy_to_host())
    assert 0.0 <= got.copy_to_host().min() and got.copy_to_host().max() <= 1.0


def test_found_by_identity_whatever_the_import_path(backend, monkeypatch):
    # numba re-exports cuda.grid from numba.cuda; the object is found by identity, not by name
    # of the variable the program bound it to.
    numba_grid = _numba_function("numba.cuda.stubs", "grid")
    _numba_module(monkeypatch, "numba")
    _numba_module(monkeypatch, "numba.cuda", grid=numba_grid)
    where = numba_grid

    @cuda.jit
    def k(out):
        i = where(1)
        if i < out.size:
            out[i] = i

    out = np.zeros(40, dtype=np.int64)
    k[2, 32](out)
    np.testing.assert_array_equal(out, np.arange(40))


def test_numba_dispatcher_compiled_from_its_python_function(backend, monkeypatch):
    _numba_module(monkeypatch, "numba")

    def clamp_py(x, lo, hi):
        return min(max(x, lo), hi)

    clamp = CPUDispatcher(clamp_py)

    @cuda.jit
    def k(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = clamp(a[i], 0.0, 1.0)

    a = np.linspace(-1.0, 2.0, 50)
    k[1, 64](a)
    np.testing.assert_array_equal(a, np.clip(np.linspace(-1.0, 2.0, 50), 0.0, 1.0))


def test_unknown_numba_object_is_a_located_error(monkeypatch, cpu):
    _numba_module(monkeypatch, "numba")

    class Gadget:
        pass

    Gadget.__module__ = "numba.core.gadgets"
    gadget = Gadget()

    @cuda.jit
    def k(a):
        a[0] = gadget

    with pytest.raises(errors.TypingError, match="gadget.*Gadget|Gadget.*gadget"):
        k[1, 1](np.zeros(1))


def test_numba_never_imported_by_the_bridge():
    # The bridge reads only modules the program has imported.
    import ptxjit._numba_bridge as bridge

    before = set(sys.modules)
    assert bridge.equivalent(object()) is None
    assert not any(m == "numba" or m.startswith("numba.") for m in set(sys.modules) - before)


def test_numba_vector_type_classes_are_ptxjits(backend, monkeypatch):
    # numba-cuda's vector type constructors (cuda.float32x2, the `user_facing_object` of its
    # vector types) are classes of numba.cuda.stubs, exported by numba.cuda.
    stub = type("float32x2", (), {"__module__": "numba.cuda.stubs"})
    _numba_module(monkeypatch, "numba")
    _numba_module(monkeypatch, "numba.cuda", float32x2=stub)
    vobj = stub

    @cuda.jit
    def k(out):
        v = vobj(np.float32(1.5), np.float32(2.5))
        out[0] = v.x
        out[1] = v.y

    out = np.zeros(2, dtype=np.float32)
    k[1, 1](out)
    np.testing.assert_array_equal(out, [1.5, 2.5])


def test_other_numba_classes_stay_unsupported(cpu, monkeypatch):
    other = type("NotExported", (), {"__module__": "numba.cuda.stubs"})
    _numba_module(monkeypatch, "numba")
    _numba_module(monkeypatch, "numba.cuda")

    @cuda.jit
    def k(out):
        out[0] = other(1)

    with pytest.raises(errors.TypingError, match="other"):
        k[1, 1](np.zeros(1))
