"""collections.namedtuple kernel arguments, as numba-cuda takes them (its NamedTuple /
NamedUniTuple types): fields read by name, and everything a tuple does."""
from collections import namedtuple

import numpy as np
import pytest

from ptxjit import cuda
from ptxjit.errors import UnsupportedError

Point = namedtuple("Point", ("x", "y", "r"))
Pair = namedtuple("Pair", ("x", "y"))
Swapped = namedtuple("Swapped", ("y", "x"))


def test_fields_by_name(backend):
    @cuda.jit
    def f(r1, r2, p, q):
        r1[0] = p.x
        r1[1] = p.y
        r2[0] = p.r
        r1[2] = q.x + q.y
        a, b = q                # still a tuple: unpacking, indexing and len work
        r1[3] = a * 10 + b + q[1] * 100 + len(q) * 1000

    r1 = np.zeros(4, np.int64)
    r2 = np.zeros(1, np.float64)
    f[1, 1](r1, r2, Point(1, 2, 2.236), Pair(3, 4))
    assert list(r1) == [1, 2, 7, 2434] and r2[0] == 2.236
    for sig in f.signatures:
        assert ".visible .entry" in f.inspect_ptx(sig)


def test_classes_and_element_types_specialize(backend):
    @cuda.jit
    def g(out, p):
        out[0] = p.x

    out = np.zeros(1)
    g[1, 1](out, Pair(1, 2))
    assert out[0] == 1
    g[1, 1](out, Pair(1.5, 2))          # Pair(float64, int64): another specialization
    assert out[0] == 1.5
    g[1, 1](out, Swapped(7, 8))         # another class: x is its second field
    assert out[0] == 8
    g[1, 1](out, Pair(1, 2)._replace(x=5))
    assert out[0] == 5
    assert len(g.overloads) == 3


def test_passed_to_device_functions(backend):
    @cuda.jit(device=True)
    def norm2(p):
        return p.x * p.x + p.y * p.y

    @cuda.jit
    def k(out, p):
        out[0] = norm2(p)

    out = np.zeros(1)
    k[1, 1](out, Pair(3.0, 4.0))
    assert out[0] == 25.0


def test_errors(cpu):
    @cuda.jit
    def h(out, p):
        out[0] = p.z

    with pytest.raises(UnsupportedError, match=r"attribute 'z' of Pair\(int64 x 2\)"):
        h[1, 1](np.zeros(1), Pair(1, 2))

    @cuda.jit
    def plain(out, p):
        out[0] = p.x

    with pytest.raises(UnsupportedError, match=r"attribute 'x' of UniTuple\(int64 x 2\)"):
        plain[1, 1](np.zeros(1), (1, 2))


def test_signature_types(cpu):
    from ptxjit import types

    @cuda.jit
    def k(out, p, q):
        out[0] = p.y + q.r

    k[1, 1](np.zeros(1), Pair(1, 2), Point(1, 2, 0.5))
    (_, p, q), = k.signatures
    assert isinstance(p, types.NamedUniTuple) and isinstance(p, types.UniTuple)
    assert str(p) == "Pair(int64 x 2)" and p.fields == ("x", "y")
    assert isinstance(q, types.NamedTuple) and str(q) == "Point(int64, int64, float64)"
    assert q.fields == ("x", "y", "r")
    assert p != types.UniTuple(types.int64, 2)     # the names are part of the type


def _field_sum(p, out):
    out[0] = p.x * 10 + p.y


def test_named_tuple_types_in_eager_signatures(backend):
    from ptxjit import types

    # Numba's constructors with the namedtuple class: the kernel reads the fields by name
    sig = types.void(types.NamedTuple((types.int32, types.float64), Pair), types.float64[:])
    k = cuda.jit(sig)(_field_sum)
    out = np.zeros(1)
    k[1, 1](Pair(np.int32(3), 2.5), out)
    assert out[0] == 32.5 and k.signatures[0][0] == sig.args[0]
    u = cuda.jit(types.void(types.NamedUniTuple(types.int64, 2, Pair), types.float64[:]))
    u(_field_sum)[1, 1](Pair(4, 1), out)
    assert out[0] == 41
    # the same in a signature string (ptxjit's spelling, which the type objects write)
    s = cuda.jit("void(NamedTuple(Pair, (x, y), (int64, int64)), float64[:])")(_field_sum)
    s[1, 1](Pair(2, 7), out)
    assert out[0] == 27 and str(s.signatures[0][0]) == "Pair(int64 x 2)"


def test_named_tuple_signature_errors(cpu):
    from ptxjit.errors import TypingError

    with pytest.raises(TypingError, match="has 2 field names and 1 element types"):
        cuda.jit("void(NamedTuple(Pair, (x, y), (int64,)), float64[:])")(_field_sum)
    with pytest.raises(TypingError, match="expected a class name"):
        cuda.jit("void(NamedTuple((x, y), (int64, int64)), float64[:])")(_field_sum)
