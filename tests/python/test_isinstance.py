"""isinstance(v, cls) in kernels and device functions: decided at compile time by v's type, as
Numba decides it (docs/language.md, "isinstance")."""
import numpy as np
import pytest

from ptxjit import cuda, types
from ptxjit.errors import TypingError


@cuda.jit(device=True)
def _first(x):
    if isinstance(x, tuple):
        return x[0]  # does not type for a number: never typed for one
    return x


@cuda.jit(device=True)
def _kind(x):
    if isinstance(x, (np.float32, np.float64)):
        return 1
    elif not isinstance(x, int):
        return 2
    return 3


def test_isinstance_picks_the_path_of_the_arguments_type(backend):
    @cuda.jit
    def k(out):
        out[0] = _first((4.0, 5.0))
        out[1] = _first(6.0)
        out[2] = _kind(np.float32(1))
        out[3] = _kind(True)  # bool is not int64 (Numba's exact types)
        out[4] = _kind(5)  # an int literal is int64, as Numba types it
        out[5] = _kind(np.int16(5))

    out = np.zeros(6)
    k[1, 1](out)
    assert list(out) == [4.0, 6.0, 1.0, 2.0, 3.0, 2.0]


def test_isinstance_values_are_numbas(backend):
    @cuda.jit
    def k(a, out):
        x = a[0]  # float32
        out[0] = isinstance(x, float)  # float is float64
        out[1] = isinstance(x, np.float32)
        out[2] = isinstance(x, types.float32)
        out[3] = isinstance(1.5, float)
        out[4] = isinstance(1j, complex)
        out[5] = isinstance(a, tuple)
        out[6] = isinstance((x, 1), tuple)
        out[7] = isinstance(x, (int, np.float32))
        out[8] = isinstance(True, bool)
        out[9] = isinstance(x, types.bfloat16)

    out = np.full(10, -1.0)
    k[1, 1](np.ones(1, np.float32), out)
    assert list(out) == [0, 1, 1, 1, 1, 0, 1, 1, 1, 0]


def test_isinstance_of_a_variable_in_a_generic_device_function(backend):
    @cuda.jit(device=True)
    def halve(x):
        if isinstance(x, int):
            return x // 2
        return x / 2

    @cuda.jit
    def k(out):
        out[0] = halve(7)
        out[1] = halve(7.0)

    out = np.zeros(2)
    k[1, 1](out)
    assert list(out) == [3.0, 3.5]


def test_unsupported_classes_and_values_are_typing_errors():
    @cuda.jit
    def of_list(out):
        out[0] = isinstance(out[0], list)

    @cuda.jit
    def of_value(out):
        out[0] = isinstance(out[0], 3)

    @cuda.jit
    def of_record(r, out):
        out[0] = isinstance(r[0], float)

    with pytest.raises(TypingError, match=r"isinstance\(\) does not support the class list"):
        of_list[1, 1](np.zeros(1))
    with pytest.raises(TypingError, match=r"must be a class or a tuple of classes"):
        of_value[1, 1](np.zeros(1))
    rec = np.zeros(1, dtype=[("a", np.float64)])
    with pytest.raises(TypingError, match=r"does not support values of type"):
        of_record[1, 1](rec, np.zeros(1))


def test_isinstance_compiles_to_a_constant_in_ptx():
    def f(x, out):
        if isinstance(x, float):
            out[0] = x
        else:
            out[0] = 0.0

    ptx64, _ = cuda.compile_ptx(f, (types.float64, types.float64[::1]))
    ptx32, _ = cuda.compile_ptx(f, (types.float32, types.float64[::1]))
    # float64: x is stored; float32: only the constant 0.0 (x is never converted or branched on)
    assert "st.global.f64" in ptx64 and "setp" not in ptx64
    assert "st.global.f64" not in ptx32 and "cvt.f64.f32" not in ptx32 and "setp" not in ptx32
